#!/bin/sh
# libcgrun under the real torchrun (torch 2.6, via tests/torch26.sh):
# examples/c/cpu_counter.c with a crash injected in rank 1 at step 5 and
# --max-restarts=1 gets its rank from torchrun's environment, talks to
# torch's own agent TCPStore under PrefixStore("/worker/attempt_N"),
# resumes from its checkpoints and ends with the right total.
top=${CGRUN_TOP:?}
b=${CGRUN_BUILD:?}
why=$(sh "$top/tests/torch26.sh" --ensure 2>&1) || { echo "torch 2.6 unavailable: $(echo "$why" | tail -n 1)"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/cgrun-tr26.XXXXXX")
trap 'rm -rf "$T"' EXIT
cc -O2 -Wall -Wextra -Werror -I"$top/include" -o "$T/cpu_counter" \
    "$top/examples/c/cpu_counter.c" "$b/libcgrun.a" || { echo "FAIL: build"; exit 1; }
cd "$T" || exit 1
# Debian's torch 2.6 has no libuv: see libapi_nolibuv/sitecustomize.py.
export USE_LIBUV=0 PYTHONPATH="$top/tests/libcgrun/libapi_nolibuv${PYTHONPATH:+:$PYTHONPATH}"
timeout 180 sh "$top/tests/torch26.sh" -m torch.distributed.run --standalone --nproc-per-node=4 \
    --max-restarts=1 --no-python ./cpu_counter --dir "$T/ckpt" --crash-rank 1 --crash-step 5 \
    >"$T/out" 2>"$T/err"
rc=$?
cat "$T/out"
[ $rc -eq 0 ] || { echo "FAIL: torchrun exit $rc"; tail -n 30 "$T/err"; exit 1; }
grep -q "injected crash at step 5" "$T/err" || { echo "FAIL: no crash injected"; exit 1; }
n=$(grep -c "total=2100 steps=20 resumed_from=4 restarts=1" "$T/out")
[ "$n" -eq 4 ] || { echo "FAIL: $n of 4 ranks resumed from step 4 with total 2100"; exit 1; }
echo "ok: C workers under torchrun 2.6 resumed after a crash with the right total"

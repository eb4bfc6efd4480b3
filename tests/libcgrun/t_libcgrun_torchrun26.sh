#!/bin/sh
# libcgrun under the real torchrun (torch 2.6, via tests/torch26.sh):
# examples/c/cpu_counter.c with a crash injected in rank 1 at step 5 and
# --max-restarts=1 gets its rank from torchrun's environment, talks to
# torch's own agent TCPStore under PrefixStore("/worker/attempt_N"),
# resumes from its checkpoints and ends with the right total.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
top=$TOP
b=$BUILD_DIR
why=$(sh "$top/tests/torch26.sh" --ensure 2>&1) || skip "torch 2.6 unavailable: $(echo "$why" | tail -n 1)"
cc -O2 -Wall -Wextra -Werror -I"$top/include" -o "$T/cpu_counter" \
    "$top/examples/c/cpu_counter.c" "$b/libcgrun.a" || fail "build"
cd "$T" || exit 1
# Debian's torch 2.6 has no libuv: see libapi_nolibuv/sitecustomize.py.
export USE_LIBUV=0 PYTHONPATH="$top/tests/libcgrun/libapi_nolibuv${PYTHONPATH:+:$PYTHONPATH}"
timeout 180 sh "$top/tests/torch26.sh" -m torch.distributed.run --standalone --nproc-per-node=4 \
    --max-restarts=1 --no-python ./cpu_counter --dir "$T/ckpt" --crash-rank 1 --crash-step 5 \
    >"$T/out" 2>"$T/err"
rc=$?
cat "$T/out"
[ $rc -eq 0 ] || { tail -n 30 "$T/err"; fail "torchrun exit $rc"; }
grep -q "injected crash at step 5" "$T/err" || fail "no crash injected"
n=$(grep -c "total=2100 steps=20 resumed_from=4 restarts=1" "$T/out")
[ "$n" -eq 4 ] || fail "$n of 4 ranks resumed from step 4 with total 2100"
echo "ok: C workers under torchrun 2.6 resumed after a crash with the right total"

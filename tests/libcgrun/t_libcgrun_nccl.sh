#!/bin/sh
# libcgrun-nccl on CPU: the library builds against the CUDA/NCCL here; 4
# processes (plain environment, store from cgrun-rdzvd) exchange NCCL
# unique ids through the store and every rank ends with rank 0's id, again
# when the name is reused, and for a given id; without a GPU, creating the
# communicator fails with CUDA's or NCCL's message on every rank, no crash.
top=${CGRUN_TOP:?}
b=${CGRUN_BUILD:?}
rdzvd=${CGRUN_RDZVD:-$b/cgrun-rdzvd}
cuda=${CUDA_HOME:-/usr/local/cuda}
[ -f "$cuda/include/nccl.h" ] || { echo "no $cuda/include/nccl.h: libcgrun-nccl is not built here"; exit 77; }
[ -f "$b/libcgrun-nccl.so.1" ] || { echo "FAIL: nccl.h exists but $b/libcgrun-nccl.so.1 was not built"; exit 1; }
T=$(mktemp -d "${TMPDIR:-/tmp}/cgrun-nccl.XXXXXX")
PIDS=
cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null; done
	for p in $PIDS; do wait "$p" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT

cc -O2 -Wall -Wextra -Werror -I"$top/include" -isystem "$cuda/include" \
    -o "$T/nccl_id" "$top/tests/libcgrun/libapi_nccl_id.c" \
    -L"$b" -lcgrun-nccl -lcgrun -L"$cuda/lib64" -lnccl -lcudart \
    -Wl,-rpath,"$b" -Wl,-rpath,"$cuda/lib64" ||
	{ echo "FAIL: the id exchange program does not build against libcgrun-nccl"; exit 1; }
# The NCCL example builds too (it needs a GPU to run).
cc -O2 -Wall -Wextra -Werror -I"$top/include" -isystem "$cuda/include" \
    -o "$T/nccl_allreduce" "$top/examples/c/nccl_allreduce.c" \
    -L"$b" -lcgrun-nccl -lcgrun -L"$cuda/lib64" -lnccl -lcudart ||
	{ echo "FAIL: examples/c/nccl_allreduce.c does not build"; exit 1; }

[ -x "$rdzvd" ] || { echo "FAIL: $rdzvd not built"; exit 1; }
"$rdzvd" -d --host 127.0.0.1 --port 0 >"$T/rdzvd.out" 2>"$T/rdzvd.log" &
PIDS=$!
i=0
while ! grep -q '^listening on ' "$T/rdzvd.out"; do
	kill -0 $PIDS 2>/dev/null || { echo "FAIL: cgrun-rdzvd exited"; cat "$T/rdzvd.log"; exit 1; }
	[ $i -ge 200 ] && { echo "FAIL: no 'listening on' from cgrun-rdzvd in 10 s"; exit 1; }
	sleep 0.05
	i=$((i + 1))
done
port=$(sed -n 's/^listening on .*:\([0-9][0-9]*\)$/\1/p' "$T/rdzvd.out" | head -n 1)

world=4
pids=
for r in 0 1 2 3; do
	env RANK=$r WORLD_SIZE=$world LOCAL_RANK=$r LOCAL_WORLD_SIZE=$world \
	    MASTER_ADDR=127.0.0.1 MASTER_PORT="$port" TORCHELASTIC_RESTART_COUNT=0 \
	    TORCHELASTIC_USE_AGENT_STORE=True \
	    timeout 60 "$T/nccl_id" >"$T/out.$r" 2>"$T/err.$r" &
	pids="$pids $!"
done
fail=0 r=0
for p in $pids; do
	wait "$p"
	rc=$?
	[ $rc -eq 0 ] || { echo "FAIL: rank $r exit $rc"; cat "$T/err.$r"; fail=1; }
	r=$((r + 1))
done
[ $fail -eq 0 ] || exit 1
cat "$T"/out.*

for what in id1 id2 given; do
	n=$(cat "$T"/out.* | awk -v w=$what '$3 == w { print $4 }' | sort -u | wc -l)
	c=$(cat "$T"/out.* | awk -v w=$what '$3 == w' | wc -l)
	[ "$c" -eq $world ] && [ "$n" -eq 1 ] ||
		{ echo "FAIL: $what: $c lines, $n distinct ids (want $world lines, 1 id)"; exit 1; }
done
id1=$(awk '$3 == "id1" { print $4 }' "$T/out.0")
id2=$(awk '$3 == "id2" { print $4 }' "$T/out.0")
[ "$id1" != "$id2" ] || { echo "FAIL: reusing the name gave the old id"; exit 1; }
case "$id1" in 0000000000000000*) echo "FAIL: id1 looks unset"; exit 1 ;; esac
given=$(awk '$3 == "given" { print $4 }' "$T/out.1")
[ "$given" = "$(printf 'ab%.0s' $(seq 128))" ] || { echo "FAIL: given id not rank 0's"; exit 1; }
echo "ok: 4 ranks agree on the unique id (twice under one name) and on a given id"
[ "$(cat "$T"/out.* | grep -c 'timeout: nccl "never": rank 0 did not publish the unique id within 300 ms')" -eq 3 ] ||
	{ echo "FAIL: ranks 1-3 did not time out on an unpublished id"; exit 1; }
[ "$(cat "$T"/out.* | grep -c 'bad id: nccl "bad": unique id in the store has 5 bytes, not 128')" -eq 3 ] ||
	{ echo "FAIL: ranks 1-3 did not refuse a 5-byte id"; exit 1; }
echo "ok: an unpublished id times out with a message; a wrong-size id is refused"

if ls /dev/nvidia0 >/dev/null 2>&1; then
	echo "a GPU is present: communicator outcome not asserted"
	exit 0
fi
n=$(cat "$T"/out.* | grep -c 'comm error (errno [0-9]*): \(cuda\|nccl\|LOCAL_RANK\)')
[ "$n" -eq $world ] || { echo "FAIL: $n of $world ranks failed with CUDA's or NCCL's text"; exit 1; }
echo "ok: without a GPU every rank's communicator fails with: $(sed -n 's/.*comm error (errno [0-9]*): //p' "$T/out.0")"

#!/bin/sh
# libcgrun-nccl on CPU: the library builds against the CUDA/NCCL here; 4
# processes (plain environment, store from cgrun-rdzvd) exchange NCCL
# unique ids through the store and every rank ends with rank 0's id, again
# when the name is reused, and for a given id; without a GPU, creating the
# communicator fails with CUDA's or NCCL's message on every rank, no crash.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$TOP/tests/interop/lib.sh"
top=$TOP
b=$BUILD_DIR
cuda=${CUDA_HOME:-/usr/local/cuda}
[ -f "$cuda/include/nccl.h" ] || skip "no $cuda/include/nccl.h: libcgrun-nccl is not built here"
[ -f "$b/libcgrun-nccl.so.1" ] || fail "nccl.h exists but $b/libcgrun-nccl.so.1 was not built"

cc -O2 -Wall -Wextra -Werror -I"$top/include" -isystem "$cuda/include" \
    -o "$T/nccl_id" "$top/tests/libcgrun/libapi_nccl_id.c" \
    -L"$b" -lcgrun-nccl -lcgrun -L"$cuda/lib64" -lnccl -lcudart \
    -Wl,-rpath,"$b" -Wl,-rpath,"$cuda/lib64" ||
	fail "the id exchange program does not build against libcgrun-nccl"
# The NCCL example builds too (it needs a GPU to run).
cc -O2 -Wall -Wextra -Werror -I"$top/include" -isystem "$cuda/include" \
    -o "$T/nccl_allreduce" "$top/examples/c/nccl_allreduce.c" \
    -L"$b" -lcgrun-nccl -lcgrun -L"$cuda/lib64" -lnccl -lcudart ||
	fail "examples/c/nccl_allreduce.c does not build"

start_rdzvd
port=$RDZVD_PORT

world=4
pids=
for r in 0 1 2 3; do
	env RANK=$r WORLD_SIZE=$world LOCAL_RANK=$r LOCAL_WORLD_SIZE=$world \
	    MASTER_ADDR=127.0.0.1 MASTER_PORT="$port" TORCHELASTIC_RESTART_COUNT=0 \
	    TORCHELASTIC_USE_AGENT_STORE=True \
	    timeout 60 "$T/nccl_id" >"$T/out.$r" 2>"$T/err.$r" &
	pids="$pids $!"
done
r=0
for p in $pids; do
	wait "$p"
	rc=$?
	[ $rc -eq 0 ] || { fail_later "rank $r exit $rc"; cat "$T/err.$r"; }
	r=$((r + 1))
done
no_failures || exit 1
cat "$T"/out.*

for what in id1 id2 given; do
	n=$(cat "$T"/out.* | awk -v w=$what '$3 == w { print $4 }' | sort -u | wc -l)
	c=$(cat "$T"/out.* | awk -v w=$what '$3 == w' | wc -l)
	[ "$c" -eq $world ] && [ "$n" -eq 1 ] ||
		fail "$what: $c lines, $n distinct ids (want $world lines, 1 id)"
done
id1=$(awk '$3 == "id1" { print $4 }' "$T/out.0")
id2=$(awk '$3 == "id2" { print $4 }' "$T/out.0")
[ "$id1" != "$id2" ] || fail "reusing the name gave the old id"
case "$id1" in 0000000000000000*) fail "id1 looks unset" ;; esac
given=$(awk '$3 == "given" { print $4 }' "$T/out.1")
[ "$given" = "$(printf 'ab%.0s' $(seq 128))" ] || fail "given id not rank 0's"
echo "ok: 4 ranks agree on the unique id (twice under one name) and on a given id"
[ "$(cat "$T"/out.* | grep -c 'timeout: nccl "never": rank 0 did not publish the unique id within 300 ms')" -eq 3 ] ||
	fail "ranks 1-3 did not time out on an unpublished id"
[ "$(cat "$T"/out.* | grep -c 'bad id: nccl "bad": unique id in the store has 5 bytes, not 128')" -eq 3 ] ||
	fail "ranks 1-3 did not refuse a 5-byte id"
echo "ok: an unpublished id times out with a message; a wrong-size id is refused"

if ls /dev/nvidia0 >/dev/null 2>&1; then
	echo "a GPU is present: communicator outcome not asserted"
	exit 0
fi
n=$(cat "$T"/out.* | grep -c 'comm error (errno [0-9]*): \(cuda\|nccl\|LOCAL_RANK\)')
[ "$n" -eq $world ] || fail "$n of $world ranks failed with CUDA's or NCCL's text"
echo "ok: without a GPU every rank's communicator fails with: $(sed -n 's/.*comm error (errno [0-9]*): //p' "$T/out.0")"

#!/bin/sh
# The static backend (torch.distributed.launch style): two agents with
# --node-rank 0 and 1, --master-addr/--master-port; node 0 hosts the
# workers' store there; ranks follow --node-rank; real torch 1.13 store
# clients on both nodes share it (tests/multinode/keys.py).
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$TOP/tests/interop/lib.sh"
. "$TOP/tests/multinode/lib.sh"
need_torch113
port=$(free_port)
for n in 1 0; do
	"$CGRUN" --rdzv-backend=static --nnodes=2 --node-rank=$n --master-addr=127.0.0.1 \
		--master-port="$port" --nproc-per-node=2 --rdzv-id=static \
		--no-python sh -c 'echo "env RANK=$RANK GROUP_RANK=$GROUP_RANK WORLD_SIZE=$WORLD_SIZE MASTER=$MASTER_ADDR:$MASTER_PORT"; exec "$0" "$@"' \
		"$PY113" "$TOP/tests/multinode/keys.py" >"$T/s$n.log" 2>&1 </dev/null &
	echo $! >"$T/s$n.pid"
	track $!
done
expect_exit s0 60 0
expect_exit s1 60 0
for r in 0 1 2 3; do
	g=$((r / 2))
	grep -q "env RANK=$r GROUP_RANK=$g WORLD_SIZE=4 MASTER=127.0.0.1:$port" "$T/s$g.log" ||
		{ cat "$T/s0.log" "$T/s1.log"; fail "rank $r"; }
done
n=$(cat "$T/s0.log" "$T/s1.log" | grep -c "keys ok rank [0-3] job static arrived 4$")
[ "$n" -eq 4 ] || { cat "$T/s0.log" "$T/s1.log"; fail "$n/4 ranks shared node 0's store"; }
echo "ok: static backend, node 0 hosts the store"

#!/bin/sh
# Elasticity with --nnodes=2:3: three agents form round 0; the agent of
# group rank 0 (127.0.0.2) is killed with SIGKILL mid-job; after the
# keep-alive window the two others form a round of 2 (no restart spent);
# a fourth agent then arrives and joins at the next round boundary
# (scale-up, still no restart spent), and the job finishes on 3 nodes
# with group rank 0's store now on 127.0.0.3.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$TOP/tests/interop/lib.sh"
. "$TOP/tests/multinode/lib.sh"
start_rdzvd
export OUT="$T/out"
mkdir -p "$OUT"
envworker "$T/w.sh"
# Workers of the 3-node round before the kill, and of the 2-node round,
# wait (at most 60 s) to be stopped; the final 3-node round exits 0.
cat >"$OUT/hook.sh" <<'EOS'
if [ "$GROUP_WORLD_SIZE" = 2 ] || [ ! -f "$OUT/phase2" ]; then
	i=0
	while [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
	exit 1
fi
EOS
common="--nnodes=2:3 --nproc-per-node=1 --rdzv-id=elastic --max-restarts=0 --rdzv-conf=$FAST_CONF --no-python $T/w.sh"
agent a 127.0.0.2 $common
agent b 127.0.0.3 $common
agent c 127.0.0.4 $common
wait_count "$OUT/env.0.3.*" 3 30 "workers of the first 3-node round"
kill -9 "$(agent_pid a)"
wait_count "$OUT/env.0.2.*" 2 30 "workers of the 2-node round after the kill"
grep -q "MASTER_ADDR=127.0.0.3 " "$OUT/env.0.2.0" ||
	fail "after the kill rank 0 is not 127.0.0.3: $(cat "$OUT/env.0.2.0")"
rm -f "$OUT"/env.0.3.*
touch "$OUT/phase2"
agent d 127.0.0.5 $common
for n in b c d; do expect_exit $n 60 0; done
for r in 0 1 2; do
	f="$OUT/env.0.3.$r"
	[ -f "$f" ] || { ls "$OUT"; fail "rank $r of the final round did not run"; }
	case "$(cat "$f")" in
	*"GROUP_RANK=$r "*"MASTER_ADDR=127.0.0.3 "*"RESTART_COUNT=0 "*) ;;
	*) fail "final round rank $r: $(cat "$f")" ;;
	esac
done
echo "ok: lost group rank 0, went on with 2 nodes, took in a new node"

#!/bin/sh
# Three agents on 127.0.0.2-4 with one cgrun-rdzvd, heterogeneous
# --nproc-per-node (2, 1, 2): every worker gets the right RANK, LOCAL_RANK,
# WORLD_SIZE, GROUP_RANK (sorted by --local-addr), GROUP_WORLD_SIZE,
# LOCAL_WORLD_SIZE, and all of them the same MASTER_ADDR/PORT: group rank
# 0's job store.  Every agent exits 0.
. "$CGRUN_TOP/tests/interop/lib.sh"
. "$CGRUN_TOP/tests/multinode/lib.sh"
start_rdzvd
export OUT="$T/out"
mkdir -p "$OUT"
envworker "$T/w.sh"
common="--nnodes=3 --rdzv-id=basic --rdzv-conf=$FAST_CONF --no-python $T/w.sh"
agent n3 127.0.0.3 --nproc-per-node=1 $common
agent n2 127.0.0.2 --nproc-per-node=2 $common
agent n4 127.0.0.4 --nproc-per-node=2 $common
for n in n2 n3 n4; do expect_exit $n 60 0; done

# rank  group  local  local_world
want="0 0 0 2
1 0 1 2
2 1 0 1
3 2 0 2
4 2 1 2"
ports=
echo "$want" | while read -r r g l lw; do
	f="$OUT/env.0.3.$r"
	[ -f "$f" ] || { echo "FAIL: rank $r did not run"; ls "$OUT"; exit 1; }
	line=$(cat "$f")
	for kv in "RANK=$r " "LOCAL_RANK=$l " "WORLD_SIZE=5 " "GROUP_RANK=$g " \
	    "GROUP_WORLD_SIZE=3 " "LOCAL_WORLD_SIZE=$lw " "MASTER_ADDR=127.0.0.2 " \
	    "RESTART_COUNT=0 " "RUN_ID=basic"; do
		case "$line" in *"$kv"*) ;; *) echo "FAIL: rank $r: no $kv in: $line"; exit 1 ;; esac
	done
done || exit 1
[ "$(ls "$OUT" | wc -l)" -eq 5 ] || { echo "FAIL: want 5 workers, got: $(ls "$OUT")"; exit 1; }
nports=$(sed 's/.*MASTER_PORT=\([0-9]*\).*/\1/' "$OUT"/env.* | sort -u | wc -l)
[ "$nports" -eq 1 ] || { echo "FAIL: workers disagree on MASTER_PORT"; cat "$OUT"/env.*; exit 1; }
echo "ok: 3 nodes, 5 workers, ranks and offsets right"

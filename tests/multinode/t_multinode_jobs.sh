#!/bin/sh
# Two jobs (--rdzv-id one, two) of two nodes each on one cgrun-rdzvd, their
# agents started interleaved: each job forms its own round (group rank 0's
# store: 127.0.0.2 for one, 127.0.0.4 for two) and its workers see only
# their own job's keys (tests/multinode/keys.py, torch 1.13 clients).
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$TOP/tests/interop/lib.sh"
. "$TOP/tests/multinode/lib.sh"
need_torch113
start_rdzvd
k="$TOP/tests/multinode/keys.py"
agent a 127.0.0.2 --nnodes=2 --nproc-per-node=2 --rdzv-id=one --rdzv-conf="$FAST_CONF" --no-python "$PY113" "$k"
agent c 127.0.0.4 --nnodes=2 --nproc-per-node=2 --rdzv-id=two --rdzv-conf="$FAST_CONF" --no-python "$PY113" "$k"
agent b 127.0.0.3 --nnodes=2 --nproc-per-node=2 --rdzv-id=one --rdzv-conf="$FAST_CONF" --no-python "$PY113" "$k"
agent d 127.0.0.5 --nnodes=2 --nproc-per-node=2 --rdzv-id=two --rdzv-conf="$FAST_CONF" --no-python "$PY113" "$k"
for n in a b c d; do expect_exit $n 90 0; done
for j in one two; do
	n=$(cat "$T"/[abcd].log | grep -c "keys ok rank [0-3] job $j arrived 4$")
	[ "$n" -eq 4 ] || { cat "$T"/*.log; fail "job $j: $n/4 ranks saw their own keys"; }
done
echo "ok: two jobs on one daemon kept apart"

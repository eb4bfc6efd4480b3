#!/bin/sh
# A real torch 1.13 gloo job across two cgrun agents (127.0.0.2 and
# 127.0.0.3, 2 workers each) rendezvousing through one cgrun-rdzvd: the
# workers' store is group rank 0's job store; all_reduce, all_gather,
# broadcast and barrier give the right results on all 4 ranks
# (tests/interop/gloo.py).
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$TOP/tests/interop/lib.sh"
. "$TOP/tests/multinode/lib.sh"
need_torch113
start_rdzvd
for n in 2 3; do
	agent n$n 127.0.0.$n --nnodes=2 --nproc-per-node=2 --rdzv-id=gloo113 \
		--rdzv-conf="$FAST_CONF" --no-python "$PY113" "$TOP/tests/interop/gloo.py"
done
for n in 2 3; do expect_exit n$n 120 0; done
ok=$(cat "$T/n2.log" "$T/n3.log" | grep -c ' ok: all_reduce \[10.0, 60.0, 4.0\]')
[ "$ok" -eq 4 ] || { cat "$T/n2.log" "$T/n3.log"; fail "$ok/4 ranks report the right all_reduce"; }
echo "ok: gloo all_reduce across 2 nodes x 2 workers (torch 1.13)"

#!/bin/sh
# No daemon: the endpoint is this machine's address, so the first agent
# to bind it hosts the rendezvous engine in-process (torchrun's is_host),
# the other joins as a client; the host stays until the other has heard
# the job finished.  Both exit 0 with the right ranks.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$TOP/tests/interop/lib.sh"
. "$TOP/tests/multinode/lib.sh"
# A port that was free a moment ago (the agents bind it; no daemon here).
RDZVD_PORT=$(free_port)
export OUT="$T/out"
mkdir -p "$OUT"
envworker "$T/w.sh"
common="--nnodes=2 --nproc-per-node=2 --rdzv-id=ishost --rdzv-conf=$FAST_CONF -v --no-python $T/w.sh"
agent n2 127.0.0.2 $common
agent n3 127.0.0.3 $common
for n in n2 n3; do expect_exit $n 60 0; done
[ "$(grep -l 'c10d: hosting the rendezvous on' "$T/n2.log" "$T/n3.log" | wc -l)" -eq 1 ] ||
	{ cat "$T/n2.log" "$T/n3.log"; fail "want exactly one host"; }
for r in 0 1 2 3; do
	grep -q "WORLD_SIZE=4 .*MASTER_ADDR=127.0.0.2 " "$OUT/env.0.2.$r" 2>/dev/null ||
		fail "rank $r: $(cat "$OUT/env.0.2.$r" 2>&1)"
done
echo "ok: an agent hosted the rendezvous in-process"

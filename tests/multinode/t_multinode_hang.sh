#!/bin/sh
# A hang on the other node: two agents (127.0.0.2: group rank 0, ranks
# 0-1; 127.0.0.3: group rank 1, ranks 2-3) with --hang-timeout=1; rank 3
# stops heartbeating on the first attempt.  Its agent names it (rank hung
# rank=3 ...), the job restarts on both nodes (one restart spent), the
# other node is told which node failed (the daemon does not pass on the
# FAILED text "rank 3 hung: ..."), and both agents exit 0 after attempt 1.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$TOP/tests/interop/lib.sh"
. "$TOP/tests/multinode/lib.sh"
command -v bash >/dev/null || skip "no bash for the workers"
start_rdzvd
cat >"$T/w.sh" <<'EOS'
#!/bin/bash
for i in $(seq 10); do printf 'step\n' >&"$CGRUN_HEARTBEAT_FD"; sleep 0.1; done
echo "rank $RANK attempt $TORCHELASTIC_RESTART_COUNT done"
[ "$TORCHELASTIC_RESTART_COUNT" = 0 ] && [ "$RANK" = 3 ] && exec sleep 1000
exit 0
EOS
chmod +x "$T/w.sh"
common="--nnodes=2 --nproc-per-node=2 --max-restarts=1 --hang-timeout=1 -v --rdzv-id=hang --rdzv-conf=$FAST_CONF --no-python $T/w.sh"
agent h2 127.0.0.2 $common
agent h3 127.0.0.3 $common
expect_exit h3 60 0
expect_exit h2 60 0
grep -q "rank hung rank=3 local_rank=1 idle=1s timeout=1s source=heartbeat section=step" "$T/h3.log" ||
	{ cat "$T/h3.log"; fail "the hung rank's agent did not name it"; }
grep -q "restart requested by the rendezvous: .*workers failed on node 127.0.0.3" "$T/h2.log" ||
	{ cat "$T/h2.log"; fail "the other node was not told which node failed"; }
for r in 0 1; do grep -q "rank $r attempt 1 done" "$T/h2.log" || fail "rank $r not restarted"; done
for r in 2 3; do grep -q "rank $r attempt 1 done" "$T/h3.log" || fail "rank $r not restarted"; done
! grep -q "rank hung" "$T/h2.log" || fail "a hang on the healthy node"
echo "ok: a hang on one node restarts both; the other node learns which node failed"

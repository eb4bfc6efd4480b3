#!/bin/sh
# --exit-barrier-timeout with two agents (127.0.0.2 is group rank 0 and
# hosts the job store; 127.0.0.3 is group rank 1) and one cgrun-rdzvd:
#  - the workers of 127.0.0.3 finish, those of 127.0.0.2 never do: after
#    2 s 127.0.0.3 gives up on the barrier and exits 75 (CGRUN_EXIT_RDZV)
#    with a message naming the option;
#  - the workers of 127.0.0.2 finish, those of 127.0.0.3 take longer than
#    its 1 s barrier timeout: 127.0.0.2 hosts the job store the other
#    node's workers still use, says so and keeps waiting; when they finish
#    both agents exit 0.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$TOP/tests/interop/lib.sh"
. "$TOP/tests/multinode/lib.sh"
start_rdzvd
# A worker that exits at once on node $1's agent, else waits (at most
# 60 s) for $T/release.
cat >"$T/w.sh" <<'EOS'
#!/bin/sh
[ "$GROUP_RANK" = "$QUICK" ] && exit 0
i=0
while [ ! -e "$REL" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
EOS
chmod +x "$T/w.sh"
export REL="$T/release"
common="--nnodes=2 --nproc-per-node=1 --rdzv-conf=$FAST_CONF --no-python $T/w.sh"

# 1. group rank 1 is done, group rank 0 never: rank 1 gives up after 2 s.
export QUICK=1
agent a2 127.0.0.2 --rdzv-id=eb1 $common
agent a3 127.0.0.3 --rdzv-id=eb1 --exit-barrier-timeout=2 $common
wait_count "$T/a3.log" 1 10 "a3 log"
expect_exit a3 30 75
grep -q "exit barrier timed out: this node's workers finished, the other nodes were not done 2 s later (--exit-barrier-timeout)" "$T/a3.log" ||
	{ cat "$T/a3.log"; fail "no exit barrier message:"; }
kill "$(agent_pid a2)"
echo "ok: a node whose workers finished gives up on the barrier after --exit-barrier-timeout (exit 75)"

# 2. group rank 0 is done first and hosts the job store: it keeps waiting.
export QUICK=0
rm -f "$REL"
agent b2 127.0.0.2 --rdzv-id=eb2 --exit-barrier-timeout=1 $common
agent b3 127.0.0.3 --rdzv-id=eb2 $common
i=0
until grep -q "exit barrier: the other nodes are not done after 1 s; this node hosts the job store they still need, so it keeps waiting" "$T/b2.log"; do
	[ $i -ge 300 ] && { stuck_report; fail "no keep-waiting message from the store host"; }
	sleep 0.1
	i=$((i + 1))
done
kill -0 "$(agent_pid b2)" || { cat "$T/b2.log"; fail "the store host exited"; }
touch "$REL"
expect_exit b3 30 0
expect_exit b2 30 0
echo "ok: the node hosting the job store keeps waiting past the timeout, says why, and exits 0 with the others"

#!/bin/sh
# The rendezvous scenario table (tests/rdzv/helper_scenario_table.c: MIN
# and MAX, the last call, spares, scale-up, node loss above and below MIN,
# failures with and without restarts left, a failure while a member is
# disconnected, group ranks by node rank, host and arrival, the join
# timeout, the finish) against the c10d engine through its native
# protocol: every node a real c10d backend (the agent's side), the engine
# served in the same process on 127.0.0.1 as cgrun-rdzvd serves it, each
# node's connection through a relay the scenario can cut and heal
# (tests/rdzv/tool_scenarios.c).  The same table runs against the round
# rule itself (test_decide) and the etcd-v3 backend (t_etcd_scenarios.sh):
# each node must be told the same things on each.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
tool=$BUILD_DIR/tests/rdzv/tool_scenarios
[ -x "$tool" ] || fail "$tool is not built (make tests)"
log=$T/log
timeout 300 "$tool" c10d 2>"$log"
rc=$?
if [ $rc -ne 0 ]; then
	echo "FAIL: tool_scenarios c10d exited $rc; the backends' last words:"
	tail -n 20 "$log"
	exit 1
fi

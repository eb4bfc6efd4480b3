#!/bin/sh
# The rendezvous scenario table (tests/rdzv/helper_scenario_table.c)
# against the etcd-v3 backend on a real 3-member etcd cluster: every node
# a real etcd-v3 backend (its lease, watch, reads and transactions) on
# one loop (tests/rdzv/tool_scenarios.c).  Each node must be told what it
# is told by the c10d engine (t_rdzv_scenarios.sh) and the round rule
# (test_decide).  The scenario of a member whose connection is down is
# c10d's only: etcd keeps a node until its lease expires, it has no
# connections to weigh (the tool says "n/a" for it).
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$CGRUN_TOP/tests/interop/lib.sh"
. "$CGRUN_TOP/tests/etcd/lib.sh"
tool=$BUILD_DIR/tests/rdzv/tool_scenarios
[ -x "$tool" ] || fail "$tool is not built (make tests)"
etcd_up 3
timeout 300 "$tool" etcd-v3 "$ETCD_ENDPOINTS" 2>"$T/log"
rc=$?
if [ $rc -ne 0 ]; then
	echo "FAIL: tool_scenarios etcd-v3 exited $rc; the backends' last words:"
	tail -n 20 "$T/log"
	exit 1
fi

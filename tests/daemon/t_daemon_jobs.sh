#!/bin/sh
# cgrun-rdzvd's job bounds (tests/daemon/abuse_jobs.py): unauthenticated clients
# cannot create jobs beyond max-jobs-per-address and max-jobs while
# healthy agents and TCPStore clients are served; a job whose agents all
# left is forgotten after job-orphan-timeout, not after the 7-day
# keep-alive its JOIN asked for; /status pages, stays valid UTF-8 JSON
# with hostile names, and does not grow with the jobs beyond the page.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$TOP/tests/daemon/lib.sh"
"$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.2", 0))' 2>/dev/null ||
	skip "cannot bind 127.0.0.2"

# run_case CASE [daemon flags...]: a fresh daemon, one case.
run_case() {
	c=$1; shift
	daemon_start "$c" --http-port=0 "$@"
	timeout 50 "$PY" "$CGRUN_TOP/tests/daemon/abuse_jobs.py" "$c" "$port" "$hport" \
	    "$pid" "$tmp/log" || fail "$c"
	daemon_stop "$c"
}

run_case flood --max-jobs=100
run_case orphan --job-orphan-timeout=1000
run_case status --max-jobs-per-address=0
exit 0

#!/bin/sh
# cgrun-rdzvd under pressure (tests/daemon/abuse_pressure.py): 8 clients stalled
# halfway through 60 MiB SETs keep it under 256 MiB RSS (max-input-total:
# readers pause) while a healthy client is served; a request trickled one
# byte at a time is cut off by request-timeout; a value of exactly
# --max-value-size is stored and one byte more refused.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$TOP/tests/daemon/lib.sh"

# run_case CASE [daemon flags...]: a fresh daemon, one case.
run_case() {
	c=$1; shift
	daemon_start "$c" "$@"
	timeout 50 "$PY" "$CGRUN_TOP/tests/daemon/abuse_pressure.py" "$c" "$port" "$pid" \
	    "$tmp/log" || fail "$c"
	daemon_stop "$c"
}

run_case stalled			# the defaults
run_case trickle --request-timeout=2000
run_case maxvalue --max-key-size=1k --max-input=4k --max-value-size=8k
exit 0

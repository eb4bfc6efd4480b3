#!/bin/sh
# cgrun-rdzvd under pressure (tests/abuse_pressure.py): 8 clients stalled
# halfway through 60 MiB SETs keep it under 256 MiB RSS (max-input-total:
# readers pause) while a healthy client is served; a request trickled one
# byte at a time is cut off by request-timeout; a value of exactly
# --max-value-size is stored and one byte more refused.
set -u
: "${CGRUN_TOP:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${CGRUN_RDZVD:=$CGRUN_TOP/build/cgrun-rdzvd}"
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "skip: /usr/bin/python3 not installed"; exit 77; }
[ -x "$CGRUN_RDZVD" ] || { echo "skip: $CGRUN_RDZVD not built"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cgrun-press.XXXXXX") || exit 1
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM
fail() { echo "FAIL: $*"; [ -f "$tmp/log" ] && tail -n 20 "$tmp/log"; exit 1; }

# run_case CASE [daemon flags...]: a fresh daemon, one case, then SIGTERM.
run_case() {
	c=$1; shift
	"$CGRUN_RDZVD" -d --host=127.0.0.1 --port=0 "$@" >"$tmp/out" 2>"$tmp/log" &
	pid=$!
	i=0; port=
	while [ -z "$port" ] && [ $i -lt 100 ]; do
		port=$(sed -n 's/^listening on .*:\([0-9][0-9]*\)$/\1/p' "$tmp/out")
		[ -n "$port" ] || sleep 0.05; i=$((i + 1))
	done
	[ -n "$port" ] || fail "$c: no 'listening on' line"
	timeout 50 "$PY" "$CGRUN_TOP/tests/abuse_pressure.py" "$c" "$port" "$pid" \
	    "$tmp/log" || fail "$c"
	kill -0 "$pid" 2>/dev/null || fail "$c: daemon died"
	kill -TERM "$pid"; wait "$pid"; pid=
}

run_case stalled			# the defaults
run_case trickle --request-timeout=2000
run_case maxvalue --max-key-size=1k --max-input=4k --max-value-size=8k
exit 0

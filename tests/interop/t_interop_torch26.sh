#!/bin/sh
# cgrun-rdzvd against real torch 2.6 clients (Debian trixie's build, via
# tests/torch26.sh): every TCPStore operation 2.6's Python exposes, exact
# results (tests/interop/ops.py).
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$TOP/tests/interop/lib.sh"
need_torch26
start_rdzvd
timeout 120 sh "$TOP/tests/torch26.sh" "$TOP/tests/interop/ops.py" "$RDZVD_PORT" || {
	echo "FAIL: torch 2.6 client vs cgrun-rdzvd; server log:"; tail -n 20 "$T/rdzvd.log"; exit 1; }
kill -0 "$RDZVD_PID" || fail "cgrun-rdzvd died"

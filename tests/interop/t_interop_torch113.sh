#!/bin/sh
# cgrun-rdzvd against real torch 1.13 clients (Debian's python3-torch):
# every TCPStore operation 1.13's Python exposes, exact results
# (tests/interop/ops.py).
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$TOP/tests/interop/lib.sh"
need_torch113
start_rdzvd
timeout 120 "$PY113" "$TOP/tests/interop/ops.py" "$RDZVD_PORT" || {
	echo "FAIL: torch 1.13 client vs cgrun-rdzvd; server log:"; tail -n 20 "$T/rdzvd.log"; exit 1; }
kill -0 "$RDZVD_PID" || fail "cgrun-rdzvd died"

#!/bin/sh
# The libcgrun store client against the cgrun-rdzvd binary: every client
# operation with exact results (tests/interop/store_client.c), while a torch
# 1.13 Python client (the other wire dialect, on the same server) reads what
# C wrote through PrefixStore and answers through one.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$TOP/tests/interop/lib.sh"
need_torch113
build_tool store_client
start_rdzvd
"$PY113" "$TOP/tests/interop/read_c_keys.py" "$RDZVD_PORT" >"$T/py.log" 2>&1 &
py=$!
track $py
timeout 90 "$T/store_client" 127.0.0.1 "$RDZVD_PORT"
rc=$?
wait "$py"
prc=$?
cat "$T/py.log"
[ "$rc" -eq 0 ] || { tail -n 20 "$T/rdzvd.log"; fail "C client exit $rc"; }
[ "$prc" -eq 0 ] || fail "Python reader exit $prc"
kill -0 "$RDZVD_PID" || fail "cgrun-rdzvd died"
echo "PASS: C client vs cgrun-rdzvd, prefixes shared with torch 1.13's PrefixStore"

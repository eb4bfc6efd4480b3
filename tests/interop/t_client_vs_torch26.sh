#!/bin/sh
# The libcgrun store client against torch 2.6's own TCPStore server
# (is_master=True, legacy backend): every client operation with exact
# results (tests/interop/store_client.c), then a torch 2.6 Python client reads
# what C wrote through PrefixStore and answers through one, proving that
# prefixes join the same way on both sides.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$TOP/tests/interop/lib.sh"
need_torch26
build_tool store_client
start_torch_server py26 --until-key done --timeout 120
echo "torch 2.6 server on port $TS_PORT"
py26 "$TOP/tests/interop/read_c_keys.py" "$TS_PORT" >"$T/py.log" 2>&1 &
py=$!
track $py
timeout 90 "$T/store_client" 127.0.0.1 "$TS_PORT"
rc=$?
wait "$py"
prc=$?
cat "$T/py.log"
wait "$TS_PID"
src=$?
[ "$rc" -eq 0 ] || { cat "$T/ts.log"; fail "C client exit $rc"; }
[ "$prc" -eq 0 ] || fail "Python reader exit $prc"
[ "$src" -eq 0 ] || { cat "$T/ts.log"; fail "torch server exit $src"; }
echo "PASS: C client vs torch 2.6 server, prefixes shared with PrefixStore"

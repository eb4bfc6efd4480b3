#!/bin/sh
# An agent that should host the c10d rendezvous (the endpoint is this
# machine) but finds the port taken by something that is not a cgrun
# rendezvous ends at once with an error naming the address, the bind
# error and the ways out, instead of waiting as a client for answers that
# never come (join_timeout, 600 s).  Two unrelated listeners: one that
# never accepts, one that accepts and closes.  (A cgrun rendezvous on the
# port, where being a client is right: t_client_vs_rdzvd, a daemon on the
# agent's endpoint, and t_multinode_ishost, two agents racing to host.)
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
LPID=
on_fail() { [ -f "$T/err" ] && cat "$T/err"; }
export HWLOC_COMPONENTS=-gl,-opencl,-pci,-linuxio CGRUN_NVML_LIBRARY=none

# listen MODE: a python listener on a free port of 127.0.0.1 (MODE idle:
# never accepts; close: accepts and closes); sets PORT and LPID.
listen() {
	rm -f "$T/port"
	/usr/bin/python3 -c '
import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(8)
open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1]))
import os; os.rename(sys.argv[1] + ".tmp", sys.argv[1])
while True:
    if sys.argv[2] == "close":
        s.accept()[0].close()
    else:
        time.sleep(1)
' "$T/port" "$1" &
	LPID=$!
	wait_for 10 "the listener's port in $T/port" test -s "$T/port"
	PORT=$(cat "$T/port")
}

for mode in idle close; do
	listen $mode
	timeout 30 "$CGRUN_BIN" --rdzv-backend=c10d \
	    --rdzv-endpoint=127.0.0.1:$PORT --rdzv-id=taken --nnodes=1 \
	    --nproc-per-node=1 --no-python touch "$T/ran" >"$T/out" 2>"$T/err"
	rc=$?
	[ $rc -ne 124 ] || fail "$mode: still waiting after 30 s"
	[ $rc -eq 75 ] || fail "$mode: exit $rc, want 75 (rendezvous failed)"
	[ ! -e "$T/ran" ] || fail "$mode: the worker ran"
	grep -q "127.0.0.1:$PORT.*Address already in use" "$T/err" ||
		fail "$mode: the error does not name 127.0.0.1:$PORT and the bind error"
	grep -q "not a cgrun rendezvous" "$T/err" ||
		fail "$mode: the error does not say what is wrong"
	grep -q -- "--rdzv-endpoint another port.*cgrun-rdzvd" "$T/err" ||
		fail "$mode: the error does not say what to do"
	kill "$LPID"
	wait "$LPID" 2>/dev/null
	LPID=
done
echo "ok: a port taken by something else is a clear, fast error"

#!/bin/sh
# cgrun-rdzvd under hostile clients: bad lengths, truncated requests,
# unknown opcodes, wrong magic, one byte per write, a client that never
# reads, thousands of idle connections; a healthy client is served
# throughout (tests/hostile/store_adversarial.py).  Also the daemon's command line:
# --help, --version, bad flags, "listening on", SIGTERM, detaching.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
set -u
PY=/usr/bin/python3
[ -x "$PY" ] || skip "/usr/bin/python3 not installed"
[ -x "$CGRUN_RDZVD" ] || skip "$CGRUN_RDZVD not built"

tmp=$T
pid=
on_fail() { [ -f "$tmp/log" ] && tail -n 20 "$tmp/log"; }

# Wait (up to 5 s) for a "listening on" line in file $1; print the port.
wait_port() {
	i=0
	while [ $i -lt 100 ]; do
		p=$(sed -n 's/^listening on .*:\([0-9][0-9]*\)$/\1/p' "$1" 2>/dev/null | head -n 1)
		[ -n "$p" ] && { echo "$p"; return 0; }
		sleep 0.05
		i=$((i + 1))
	done
	return 1
}

# --- command line ---
"$CGRUN_RDZVD" --help >"$tmp/help" 2>&1 || fail "--help exit $?"
for f in --max-key-size --max-value-size --max-keys-per-request \
    --max-connections --max-output --port --host; do
	grep -q -- "$f" "$tmp/help" || fail "--help does not list $f"
done
"$CGRUN_RDZVD" --version | grep -q '^cgrun-rdzvd [0-9]' || fail "--version"
"$CGRUN_RDZVD" --no-such-flag >/dev/null 2>&1
[ $? -eq 2 ] || fail "an unknown flag must exit 2"
"$CGRUN_RDZVD" --max-key-size=abc >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] || fail "a bad limit must exit 2"
grep -q max-key-size "$tmp/err" || fail "bad limit error does not name the flag"
echo "ok command line"

# --- the attacks ---
"$CGRUN_RDZVD" -d -v --host 127.0.0.1 --port 0 --max-output 1M \
    >"$tmp/out" 2>"$tmp/log" &
pid=$!
port=$(wait_port "$tmp/out") || fail "no 'listening on' line"
echo "daemon pid=$pid port=$port"
IDLE_CONNS=${IDLE_CONNS:-10000} timeout 120 "$PY" "$CGRUN_TOP/tests/hostile/store_adversarial.py" \
    "$port" "$tmp/log" || fail "adversarial clients"
kill -0 "$pid" 2>/dev/null || fail "daemon died"
kill -TERM "$pid"
wait "$pid"
rc=$?
pid=
[ $rc -eq 0 ] || fail "SIGTERM: exit $rc, want 0"
echo "ok SIGTERM exit 0"

# --- out of file descriptors: accepting pauses, then resumes ---
(ulimit -n 48 && exec "$CGRUN_RDZVD" -d --host 127.0.0.1 --port 0) \
    >"$tmp/out3" 2>"$tmp/log3" &
pid=$!
port=$(wait_port "$tmp/out3") || fail "EMFILE daemon: no 'listening on' line"
"$PY" - "$port" "$tmp/log3" <<'EOF' || fail "EMFILE survival"
import socket, sys, time
port, log = int(sys.argv[1]), sys.argv[2]
socks = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(80)]
end = time.time() + 5
while "accept paused" not in open(log).read():
    if time.time() > end:
        sys.exit("no 'accept paused' in the log")
    time.sleep(0.02)
for s in socks:
    s.close()
end = time.time() + 5
while True:
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=1)
        s.sendall(b"\x06")
        if len(s.recv(8)) == 8:
            break
    except OSError:
        pass
    if time.time() > end:
        sys.exit("not serving again after descriptors were freed")
    time.sleep(0.05)
print("ok EMFILE: paused, then served again")
EOF
kill -0 "$pid" 2>/dev/null || fail "EMFILE daemon died"
kill -TERM "$pid"
wait "$pid"
rc=$?
pid=
[ $rc -eq 0 ] || fail "EMFILE daemon: SIGTERM exit $rc"

# --- detaching (no -d): the parent returns once listening ---
"$CGRUN_RDZVD" --host 127.0.0.1 --port 0 >"$tmp/out2" 2>"$tmp/log2"
[ $? -eq 0 ] || fail "daemon parent exit status"
port=$(wait_port "$tmp/out2") || fail "detached daemon: no 'listening on' line"
dpid=$("$PY" - "$port" <<'EOF'
import socket, struct, sys, os
port = int(sys.argv[1])
s = socket.create_connection(("127.0.0.1", port), timeout=5)
s.sendall(bytes.fromhex("00cef7853c0d") + struct.pack("<I", 99))
assert s.recv(4) == struct.pack("<I", 99)
# Find the daemon's pid: the process owning the listening socket.
inode = None
with open("/proc/net/tcp") as f:
    for line in f.readlines()[1:]:
        parts = line.split()
        if parts[3] == "0A" and int(parts[1].split(":")[1], 16) == port:
            inode = parts[9]
for p in os.listdir("/proc"):
    if not p.isdigit():
        continue
    try:
        for fd in os.listdir("/proc/%s/fd" % p):
            if os.readlink("/proc/%s/fd/%s" % (p, fd)) == "socket:[%s]" % inode:
                print(p)
                sys.exit(0)
    except OSError:
        pass
EOF
) || fail "detached daemon not serving"
[ -n "$dpid" ] || fail "detached daemon: pid not found"
track "$dpid"
kill -TERM "$dpid"
i=0
while kill -0 "$dpid" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
kill -0 "$dpid" 2>/dev/null && fail "detached daemon ignored SIGTERM"
echo "ok detached daemon"
exit 0

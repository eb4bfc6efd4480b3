#!/bin/sh
# cgrun-rdzvd out of file descriptors (RLIMIT_NOFILE 64): connections
# beyond the limit wait in the listen backlog while accepting is paused,
# clients already connected keep being served, and once descriptors are
# freed the waiting connections are accepted and answered without
# reconnecting.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$TOP/tests/interop/lib.sh"
[ -x "$PY113" ] || skip "$PY113 not installed"
[ -x "$RDZVD" ] || fail "$RDZVD not built"
(ulimit -n 64 && exec "$RDZVD" -d --host 127.0.0.1 --port 0) >"$T/rdzvd.out" 2>"$T/rdzvd.log" &
RDZVD_PID=$!
track $RDZVD_PID
i=0
until grep -q '^listening on ' "$T/rdzvd.out"; do
	kill -0 "$RDZVD_PID" 2>/dev/null || { cat "$T/rdzvd.log"; fail "daemon exited"; }
	[ $i -ge 400 ] && fail "no 'listening on' after 20 s"
	sleep 0.05
	i=$((i + 1))
done
port=$(sed -n 's/^listening on .*:\([0-9][0-9]*\)$/\1/p' "$T/rdzvd.out" | head -n 1)
timeout 60 "$PY113" - "$port" "$T/rdzvd.log" <<'EOF'
import socket, struct, sys, time
port, log = int(sys.argv[1]), sys.argv[2]
def u64(v): return struct.pack("<Q", v)
def B(b): return u64(len(b)) + b
def conn():
    return socket.create_connection(("127.0.0.1", port), timeout=10)
def recv_exact(s, n):
    got = b""
    while len(got) < n:
        b = s.recv(n - len(got))
        if not b:
            sys.exit("FAIL connection closed")
        got += b
    return got
def round_trip(s, i):
    v = b"v%d" % i
    s.sendall(b"\x00" + B(b"/k") + B(v) + b"\x02" + B(b"/k"))
    if recv_exact(s, 8 + len(v))[8:] != v:
        sys.exit("FAIL wrong value")
def wait_log(text, secs):
    end = time.time() + secs
    while text not in open(log, errors="replace").read():
        if time.time() > end:
            sys.exit("FAIL log never said %r" % text)
        time.sleep(0.02)
h = conn()
round_trip(h, 0)
socks = [conn() for _ in range(100)]      # more than 64 descriptors
wait_log("accept paused", 10)
print("ok accepting paused (EMFILE)")
w = conn()                                 # completes in the backlog
w.sendall(b"\x06")                         # 1.13 GETNUMKEYS
for i in range(1, 50):                     # the connected client is served
    round_trip(h, i)
print("ok connected client served while paused")
w.settimeout(0.3)
try:
    early = w.recv(8)
except socket.timeout:
    early = None
if early:
    sys.exit("FAIL a connection beyond the limit was answered while out of descriptors")
for s in socks:
    s.close()
w.settimeout(10)
t0 = time.time()
n = struct.unpack("<q", recv_exact(w, 8))[0]
if n != 1:
    sys.exit("FAIL GETNUMKEYS says %d, want 1" % n)
print("ok the waiting connection was accepted and answered %.2fs after descriptors were freed" % (time.time() - t0))
round_trip(h, 99)
fresh = conn()
round_trip(fresh, 100)
print("ok new connections served again")
EOF
rc=$?
[ $rc -eq 0 ] || { tail -n 20 "$T/rdzvd.log"; fail "EMFILE behaviour (exit $rc)"; }
kill -0 "$RDZVD_PID" 2>/dev/null || fail "daemon died"
echo "ok daemon alive; $(grep -c 'accept paused' "$T/rdzvd.log") 'accept paused' log lines"

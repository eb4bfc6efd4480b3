#!/bin/sh
# Authentication and the TCPStore address list, end to end: cgrun-rdzvd
# with --auth-token-file serves two agents that know the token (a 2-node
# job finishes); an agent with a wrong token, without one, or whose token
# file others can read is refused with a clear message; an agent with a
# token refuses a daemon that has none.  With --tcpstore-allow, a TCPStore
# client (a torch 2.x VALIDATE + PING handshake) from an address
# outside the list is dropped, one inside it is served.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$TOP/tests/interop/lib.sh"
. "$TOP/tests/multinode/lib.sh"
on_fail() { for f in "$T"/*.log; do echo "== $f"; tail -n 8 "$f"; done; }

head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$T/token"
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$T/wrong"
chmod 600 "$T/token" "$T/wrong"
cp "$T/token" "$T/open" && chmod 644 "$T/open"

start_rdzvd --auth-token-file "$T/token" --tcpstore-allow 127.0.0.3/32,::1 --http-port 0
cat >"$T/w.sh" <<'EOS'
#!/bin/sh
echo "rank $RANK of $WORLD_SIZE"
EOS
chmod +x "$T/w.sh"

# A 2-node job whose agents know the token.
for n in 2 3; do
	agent "ok$n" 127.0.0.$n --nnodes=2 --nproc-per-node=1 --rdzv-id=auth-ok \
		--rdzv-conf="$FAST_CONF" --auth-token-file="$T/token" --no-python "$T/w.sh"
done
expect_exit ok2 60 0
expect_exit ok3 60 0
grep -q "rank 1 of 2" "$T/ok3.log" || grep -q "rank 1 of 2" "$T/ok2.log" || fail "no worker of rank 1"

# refused NAME RC TEXT ARGS...: the agent exits RC saying TEXT.
refused() {
	name=$1 rc=$2 text=$3
	shift 3
	agent "$name" 127.0.0.2 --nnodes=1 --nproc-per-node=1 --rdzv-id="auth-$name" \
		--rdzv-conf="$FAST_CONF" "$@" --no-python "$T/w.sh"
	expect_exit "$name" 30 "$rc"
	grep -q "$text" "$T/$name.log" || fail "$name: no \"$text\" in its output"
	if grep -q "rank 0 of" "$T/$name.log"; then fail "$name: a worker ran"; fi
	echo "ok: $name refused: $(grep -m1 "$text" "$T/$name.log")"
}
refused wrong 75 "authentication failed: wrong auth token" --auth-token-file="$T/wrong"
refused none 75 "authentication required" 
refused open 2 "permissions 0644 are too open" --auth-token-file="$T/open"
grep -q "authentication failed (wrong token)" "$T/rdzvd.log" || fail "the daemon did not log the failure"
i=0
until HTTP=$(sed -n 's/^http listening on \(.*\)$/\1/p' "$T/rdzvd.out") && [ -n "$HTTP" ]; do
	[ $i -ge 100 ] && fail "no http listening line"
	sleep 0.1; i=$((i + 1))
done
m=$("$PY113" -c 'import sys, urllib.request; print(urllib.request.urlopen("http://%s/metrics" % sys.argv[1], timeout=10).read().decode())' "$HTTP" |
	sed -n 's/^cgrun_rdzvd_auth_failures_total //p')
[ "$m" = 1 ] || fail "cgrun_rdzvd_auth_failures_total is \"$m\", want 1"

# A daemon without a token: an agent with one does not trust it.
A_PID=$RDZVD_PID A_PORT=$RDZVD_PORT
mv "$T/rdzvd.out" "$T/rdzvd-a.out"
mv "$T/rdzvd.log" "$T/rdzvd-a.log"	# the first daemon goes on writing it
: >"$T/rdzvd.out"
start_rdzvd
refused plain 75 "authentication refused: this server has no --auth-token-file" \
	--auth-token-file="$T/token"
RDZVD_PID=$A_PID RDZVD_PORT=$A_PORT

# tcpstore-allow: 127.0.0.3 (and ::1) may use the store; 127.0.0.2 may not.
# probe SOURCE: a torch 2.x handshake (VALIDATE, PING) from SOURCE.
probe() {
	"$PY113" - "$1" "$RDZVD_PORT" <<'EOP'
import socket, struct, sys
s = socket.socket()
s.settimeout(10)
s.bind((sys.argv[1], 0))
s.connect(("127.0.0.1", int(sys.argv[2])))
# torch 2.x: VALIDATE (op 0) with the magic, then PING (op 13) with a number.
s.sendall(bytes([0]) + struct.pack("<I", 0x3C85F7CE) + bytes([13]) + struct.pack("<I", 77))
try:
    r = s.recv(4)
except ConnectionResetError:
    r = b""
print("served" if r == struct.pack("<I", 77) else "dropped %r" % r)
EOP
}
a=$(probe 127.0.0.3) b=$(probe 127.0.0.2)
[ "$a" = served ] || fail "TCPStore client from 127.0.0.3 (allowed): $a"
case $b in dropped*) ;; *) fail "TCPStore client from 127.0.0.2 (not allowed): $b" ;; esac
grep -q "not in tcpstore-allow" "$T/rdzvd-a.log" || fail "no refusal logged"
echo "ok: tcpstore-allow: 127.0.0.3 $a, 127.0.0.2 $b"

# An agent that hosts the rendezvous in-process (endpoint 127.0.0.1 on a
# free port, no daemon) requires the token too: a node with it joins, one
# with a wrong token is refused (the host waits for a second node).
RDZVD_PORT=$(free_port)
for n in 2 3; do
	agent "h$n" 127.0.0.$n --nnodes=2 --nproc-per-node=1 --rdzv-id=auth-host -v \
		--rdzv-conf="$FAST_CONF" --auth-token-file="$T/token" --no-python "$T/w.sh"
done
expect_exit h2 60 0
expect_exit h3 60 0
[ "$(grep -l 'c10d: hosting the rendezvous on' "$T/h2.log" "$T/h3.log" | wc -l)" -eq 1 ] ||
	fail "want exactly one agent hosting the rendezvous"
agent hostx 127.0.0.2 --nnodes=2 --nproc-per-node=1 --rdzv-id=auth-host2 -v \
	--rdzv-conf="$FAST_CONF" --auth-token-file="$T/token" --no-python "$T/w.sh"
wait_file "$T/hostx.log" "$(agent_pid hostx)" 20 "the hosting agent's log"
i=0
until grep -q 'c10d: hosting the rendezvous on' "$T/hostx.log"; do
	[ $i -ge 200 ] && fail "hostx does not host the rendezvous after 20 s"
	sleep 0.1; i=$((i + 1))
done
refused hostwrong 75 "authentication failed: wrong auth token" --auth-token-file="$T/wrong" --nnodes=2
kill "$(agent_pid hostx)"
echo "ok: an agent hosting the rendezvous requires the token"

#!/bin/sh
# cgrun-rdzvd started by systemd-socket-activate with a datagram socket
# (a wrong .socket unit) refuses it: "not a listening stream socket" and a
# nonzero exit, instead of serving nothing.  Skips, saying why, without
# systemd-socket-activate or when no UDP port can be bound.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
top=$TOP
rdzvd=$RDZVD
py=/usr/bin/python3; [ -x $py ] || py=python3
tool="$py $top/tests/daemon/service_tool.py"
command -v systemd-socket-activate >/dev/null 2>&1 || {
	skip "systemd-socket-activate not installed (Debian package systemd)"; }
tmp=$T
bpid=

# The activator binds by itself: take a port that was free a moment ago,
# and another if the activator cannot bind it.
bound=
for try in 1 2 3; do
	port=$(free_port)
	systemd-socket-activate -d -l 127.0.0.1:"$port" "$rdzvd" >"$tmp/out" 2>"$tmp/err" &
	bpid=$!
	if $tool wait "$tmp/err" 'Listening on' 5 >/dev/null; then
		bound=1; break
	fi
	kill "$bpid" 2>/dev/null; wait "$bpid" 2>/dev/null; bpid=
done
[ -n "$bound" ] || { cat "$tmp/err"; skip "systemd-socket-activate could not bind a UDP port on 127.0.0.1 (3 tries)"; }

# The first datagram makes the activator exec the daemon.
$py -c "import socket,sys; s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM); s.sendto(b'x',('127.0.0.1',int(sys.argv[1])))" "$port"
$tool wait "$tmp/err" 'not a listening stream socket' 5 ||
	{ cat "$tmp/err"; fail "datagram socket accepted"; }
i=0; while kill -0 "$bpid" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
kill -0 "$bpid" 2>/dev/null && fail "daemon still running 5 s after refusing its socket"
wait "$bpid"; rc=$?; bpid=
[ $rc -ne 0 ] || fail "exit 0 with a datagram socket"
echo "ok: datagram socket refused, exit $rc"

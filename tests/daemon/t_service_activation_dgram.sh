#!/bin/sh
# cgrun-rdzvd started by systemd-socket-activate with a datagram socket
# (a wrong .socket unit) refuses it: "not a listening stream socket" and a
# nonzero exit, instead of serving nothing.  Skips, saying why, without
# systemd-socket-activate or when no UDP port can be bound.
top=${CGRUN_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
rdzvd=${CGRUN_RDZVD:-$top/build/cgrun-rdzvd}
py=/usr/bin/python3; [ -x $py ] || py=python3
tool="$py $top/tests/daemon/service_tool.py"
command -v systemd-socket-activate >/dev/null 2>&1 || {
	echo "systemd-socket-activate not installed (Debian package systemd)"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cgrun-dgram.XXXXXX") || exit 1
bpid=
cleanup() { [ -n "$bpid" ] && kill "$bpid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT

# The activator binds by itself: take a port that was free a moment ago,
# and another if the activator cannot bind it.
bound=
for try in 1 2 3; do
	port=$($tool freeport)
	systemd-socket-activate -d -l 127.0.0.1:"$port" "$rdzvd" >"$tmp/out" 2>"$tmp/err" &
	bpid=$!
	if $tool wait "$tmp/err" 'Listening on' 5 >/dev/null; then
		bound=1; break
	fi
	kill "$bpid" 2>/dev/null; wait "$bpid" 2>/dev/null; bpid=
done
[ -n "$bound" ] || { cat "$tmp/err"; echo "systemd-socket-activate could not bind a UDP port on 127.0.0.1 (3 tries)"; exit 77; }

# The first datagram makes the activator exec the daemon.
$py -c "import socket,sys; s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM); s.sendto(b'x',('127.0.0.1',int(sys.argv[1])))" "$port"
$tool wait "$tmp/err" 'not a listening stream socket' 5 ||
	{ cat "$tmp/err"; echo "FAIL: datagram socket accepted"; exit 1; }
i=0; while kill -0 "$bpid" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
kill -0 "$bpid" 2>/dev/null && { echo "FAIL: daemon still running 5 s after refusing its socket"; exit 1; }
wait "$bpid"; rc=$?; bpid=
[ $rc -ne 0 ] || { echo "FAIL: exit 0 with a datagram socket"; exit 1; }
echo "ok: datagram socket refused, exit $rc"

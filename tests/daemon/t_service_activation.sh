#!/bin/sh
# cgrun-rdzvd under systemd's protocols, driven by systemd-socket-activate
# and a test NOTIFY_SOCKET listener: it serves the passed store socket (and
# the passed "http" socket) instead of binding its own, reports READY=1
# once serving, pings the watchdog, and reports STOPPING=1 on SIGTERM.
# (A passed socket of the wrong kind: t_service_activation_dgram.)
top=${CGRUN_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
rdzvd=${CGRUN_RDZVD:-$top/build/cgrun-rdzvd}
py=/usr/bin/python3; [ -x $py ] || py=python3
tool="$py $top/tests/daemon/service_tool.py"
command -v systemd-socket-activate >/dev/null 2>&1 || {
	echo "systemd-socket-activate not installed (Debian package systemd)"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cgrun-act.XXXXXX") || exit 1
pids=
cleanup() { for p in $pids; do kill "$p" 2>/dev/null; done; rm -rf "$tmp"; }
trap cleanup EXIT
fail=0

# A listening socket bound by this script would be the cleanest; the
# activator binds by itself, so take a port that was free a moment ago and
# retry with another if the activator cannot bind it.
start_activated() {	# extra activator args...
	for try in 1 2 3; do
		sport=$($tool freeport); hport=$($tool freeport)
		: >"$tmp/notify.log"
		$tool notify "$tmp/notify.sock" "$tmp/notify.log" 30 &
		npid=$!; pids="$pids $npid"
		$tool wait "$tmp/notify.log" '^listening' 5 >/dev/null || return 1
		systemd-socket-activate -l 127.0.0.1:"$sport" -l 127.0.0.1:"$hport" \
			--fdname=store:http -E NOTIFY_SOCKET="$tmp/notify.sock" "$@" \
			"$rdzvd" -v --port="$nport" >"$tmp/out" 2>"$tmp/err" &
		apid=$!; pids="$pids $apid"
		# The activator execs the daemon (same pid) on the first connection.
		if $tool wait "$tmp/err" 'Listening on' 5 >/dev/null; then
			return 0
		fi
		kill $npid $apid 2>/dev/null; wait $apid 2>/dev/null
		rm -f "$tmp/notify.sock"
	done
	return 1
}

nport=$($tool freeport)	# configured port: must stay unused
start_activated -E WATCHDOG_USEC=200000 || { cat "$tmp/err"; echo "FAIL: activator did not start"; exit 1; }
echo "activator on store=127.0.0.1:$sport http=127.0.0.1:$hport (configured port $nport)"

# The first connection starts the daemon on the passed socket.
out=$($tool store 127.0.0.1 "$sport" 2>&1) || { echo "FAIL: store via passed socket: $out"; cat "$tmp/err"; fail=1; }
echo "$out"
$tool wait "$tmp/notify.log" 'READY=1' 5 || { echo "FAIL: no READY=1"; fail=1; }
grep -q 'adopted listener fd=3 name=store' "$tmp/err" ||
	{ echo "FAIL: the store socket was not adopted"; fail=1; }
grep -q 'socket activation listeners=1' "$tmp/err" ||
	{ echo "FAIL: socket activation not logged"; fail=1; }
if $py -c "import socket,sys; socket.create_connection(('127.0.0.1', int(sys.argv[1])), 1)" "$nport" 2>/dev/null; then
	echo "FAIL: daemon also bound its configured port $nport"; fail=1
else
	echo "ok: configured port $nport not bound (activated sockets only)"
fi
grep -q '^listening on' "$tmp/out" && { echo "FAIL: printed its own listening line"; fail=1; }

# The passed "http" socket serves /metrics.
m=$($tool http "http://127.0.0.1:$hport/metrics")
echo "$m" | grep -q '^cgrun_rdzvd_requests_total{op="set"} 1$' ||
	{ echo "FAIL: /metrics on the passed http socket:"; echo "$m" | head -5; fail=1; }
echo "ok: /metrics served on the passed http socket"

# Watchdog: WATCHDOG_USEC=200000 means a ping at least every 100 ms.
$tool wait "$tmp/notify.log" 'WATCHDOG=1' 5 >/dev/null || { echo "FAIL: no WATCHDOG=1"; fail=1; }
sleep 1	# let pings accumulate for a count (not a synchronisation)
n=$(grep -c 'WATCHDOG=1' "$tmp/notify.log")
[ "$n" -ge 4 ] || { echo "FAIL: only $n watchdog pings in over a second"; fail=1; }
echo "ok: $n watchdog pings"

kill -TERM "$apid"
$tool wait "$tmp/notify.log" 'STOPPING=1' 5 || { echo "FAIL: no STOPPING=1"; fail=1; }
i=0; while kill -0 "$apid" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
kill -0 "$apid" 2>/dev/null && { echo "FAIL: daemon still running 5 s after SIGTERM"; fail=1; }
wait "$apid"; rc=$?
[ $rc -eq 0 ] || { echo "FAIL: exit status $rc after SIGTERM"; fail=1; }
echo "notify messages:"; sed 's/^/  /' "$tmp/notify.log" | grep -v WATCHDOG

[ $fail -eq 0 ] && echo "ok: socket activation, readiness, watchdog and stopping"
exit $fail

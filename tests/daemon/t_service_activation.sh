#!/bin/sh
# cgrun-rdzvd under systemd's protocols, driven by systemd-socket-activate
# and a test NOTIFY_SOCKET listener: it serves the passed store socket (and
# the passed "http" socket) instead of binding its own, reports READY=1
# once serving, pings the watchdog, and reports STOPPING=1 on SIGTERM.
# (A passed socket of the wrong kind: t_service_activation_dgram.)
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
top=$TOP
rdzvd=$RDZVD
py=/usr/bin/python3; [ -x $py ] || py=python3
tool="$py $top/tests/daemon/service_tool.py"
command -v systemd-socket-activate >/dev/null 2>&1 || {
	skip "systemd-socket-activate not installed (Debian package systemd)"; }
tmp=$T

# A listening socket bound by this script would be the cleanest; the
# activator binds by itself, so take a port that was free a moment ago and
# retry with another if the activator cannot bind it.
start_activated() {	# extra activator args...
	for try in 1 2 3; do
		sport=$(free_port); hport=$(free_port)
		: >"$tmp/notify.log"
		$tool notify "$tmp/notify.sock" "$tmp/notify.log" 30 &
		npid=$!; track $npid
		$tool wait "$tmp/notify.log" '^listening' 5 >/dev/null || return 1
		systemd-socket-activate -l 127.0.0.1:"$sport" -l 127.0.0.1:"$hport" \
			--fdname=store:http -E NOTIFY_SOCKET="$tmp/notify.sock" "$@" \
			"$rdzvd" -v --port="$nport" >"$tmp/out" 2>"$tmp/err" &
		apid=$!; track $apid
		# The activator execs the daemon (same pid) on the first connection.
		if $tool wait "$tmp/err" 'Listening on' 5 >/dev/null; then
			return 0
		fi
		kill $npid $apid 2>/dev/null; wait $apid 2>/dev/null
		rm -f "$tmp/notify.sock"
	done
	return 1
}

nport=$(free_port)	# configured port: must stay unused
start_activated -E WATCHDOG_USEC=200000 || { cat "$tmp/err"; fail "activator did not start"; }
echo "activator on store=127.0.0.1:$sport http=127.0.0.1:$hport (configured port $nport)"

# The first connection starts the daemon on the passed socket.
out=$($tool store 127.0.0.1 "$sport" 2>&1) || { fail_later "store via passed socket: $out"; cat "$tmp/err"; }
echo "$out"
$tool wait "$tmp/notify.log" 'READY=1' 5 || fail_later "no READY=1"
grep -q 'adopted listener fd=3 name=store' "$tmp/err" ||
	fail_later "the store socket was not adopted"
grep -q 'socket activation listeners=1' "$tmp/err" ||
	fail_later "socket activation not logged"
if $py -c "import socket,sys; socket.create_connection(('127.0.0.1', int(sys.argv[1])), 1)" "$nport" 2>/dev/null; then
	fail_later "daemon also bound its configured port $nport"
else
	echo "ok: configured port $nport not bound (activated sockets only)"
fi
grep -q '^listening on' "$tmp/out" && fail_later "printed its own listening line"

# The passed "http" socket serves /metrics.
m=$($tool http "http://127.0.0.1:$hport/metrics")
echo "$m" | grep -q '^cgrun_rdzvd_requests_total{op="set"} 1$' ||
	{ fail_later "/metrics on the passed http socket:"; echo "$m" | head -5; }
echo "ok: /metrics served on the passed http socket"

# Watchdog: WATCHDOG_USEC=200000 means a ping at least every 100 ms.
$tool wait "$tmp/notify.log" 'WATCHDOG=1' 5 >/dev/null || fail_later "no WATCHDOG=1"
sleep 1	# let pings accumulate for a count (not a synchronisation)
n=$(grep -c 'WATCHDOG=1' "$tmp/notify.log")
[ "$n" -ge 4 ] || fail_later "only $n watchdog pings in over a second"
echo "ok: $n watchdog pings"

kill -TERM "$apid"
$tool wait "$tmp/notify.log" 'STOPPING=1' 5 || fail_later "no STOPPING=1"
i=0; while kill -0 "$apid" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
kill -0 "$apid" 2>/dev/null && fail_later "daemon still running 5 s after SIGTERM"
wait "$apid"; rc=$?
[ $rc -eq 0 ] || fail_later "exit status $rc after SIGTERM"
echo "notify messages:"; sed 's/^/  /' "$tmp/notify.log" | grep -v WATCHDOG

no_failures && echo "ok: socket activation, readiness, watchdog and stopping"

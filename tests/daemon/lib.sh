# Helpers of the daemon-bounds scripts (tests/daemon/t_daemon_pressure.sh,
# t_daemon_jobs.sh, tests/hostile/t_hostile_unread.sh): one cgrun-rdzvd at
# a time on free loopback ports.  Sourced after tests/lib.sh; sets PY and
# tmp (the test's T).
set -u
PY=/usr/bin/python3
[ -x "$PY" ] || skip "/usr/bin/python3 not installed"
[ -x "$CGRUN_RDZVD" ] || skip "$CGRUN_RDZVD not built"
tmp=$T
pid=
on_fail() { [ -f "$tmp/log" ] && tail -n 20 "$tmp/log"; }

# daemon_start WHAT [FLAGS...]: start cgrun-rdzvd (log in $tmp/log); sets
# pid, port and, with --http-port=0 among FLAGS, hport.  5 s deadline.
daemon_start() {
	what=$1; shift
	rm -f "$tmp/out"	# the child truncates it only once it runs
	"$CGRUN_RDZVD" -d --host=127.0.0.1 --port=0 "$@" >"$tmp/out" 2>"$tmp/log" &
	pid=$!
	case " $* " in *" --http-port=0 "*) want_http=1 ;; *) want_http=0 ;; esac
	wait_for 5 "$what: cgrun-rdzvd's listening lines" daemon_listening
}
daemon_listening() {
	port=$(sed -n 's/^listening on .*:\([0-9][0-9]*\)$/\1/p' "$tmp/out" 2>/dev/null)
	hport=$(sed -n 's/^http listening on .*:\([0-9][0-9]*\)$/\1/p' "$tmp/out" 2>/dev/null)
	[ -n "$port" ] && { [ $want_http -eq 0 ] || [ -n "$hport" ]; }
}

# daemon_stop WHAT: the daemon must still run; SIGINT, wait.
daemon_stop() {
	kill -0 "$pid" 2>/dev/null || fail "$1: daemon died"
	kill -INT "$pid"; wait "$pid"; pid=
}

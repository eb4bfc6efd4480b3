# Helpers of the daemon-bounds scripts (tests/daemon/t_daemon_pressure.sh,
# t_daemon_jobs.sh): one cgrun-rdzvd at a time on free loopback ports, a
# temp dir, cleanup.  Sourced; sets CGRUN_TOP, CGRUN_RDZVD, PY, tmp.
set -u
: "${CGRUN_TOP:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${CGRUN_RDZVD:=$CGRUN_TOP/build/cgrun-rdzvd}"
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "skip: /usr/bin/python3 not installed"; exit 77; }
[ -x "$CGRUN_RDZVD" ] || { echo "skip: $CGRUN_RDZVD not built"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cgrun-daemon.XXXXXX") || exit 1
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM
fail() { echo "FAIL: $*"; [ -f "$tmp/log" ] && tail -n 20 "$tmp/log"; exit 1; }

# daemon_start WHAT [FLAGS...]: start cgrun-rdzvd (log in $tmp/log); sets
# pid, port and, with --http-port=0 among FLAGS, hport.  5 s deadline.
daemon_start() {
	what=$1; shift
	rm -f "$tmp/out"	# the child truncates it only once it runs
	"$CGRUN_RDZVD" -d --host=127.0.0.1 --port=0 "$@" >"$tmp/out" 2>"$tmp/log" &
	pid=$!
	case " $* " in *" --http-port=0 "*) want_http=1 ;; *) want_http=0 ;; esac
	i=0; port= hport=
	while [ $i -lt 100 ]; do
		port=$(sed -n 's/^listening on .*:\([0-9][0-9]*\)$/\1/p' "$tmp/out" 2>/dev/null)
		hport=$(sed -n 's/^http listening on .*:\([0-9][0-9]*\)$/\1/p' "$tmp/out" 2>/dev/null)
		[ -n "$port" ] && { [ $want_http -eq 0 ] || [ -n "$hport" ]; } && return 0
		sleep 0.05; i=$((i + 1))
	done
	fail "$what: no listening lines from cgrun-rdzvd within 5 s"
}

# daemon_stop WHAT: the daemon must still run; SIGINT, wait.
daemon_stop() {
	kill -0 "$pid" 2>/dev/null || fail "$1: daemon died"
	kill -INT "$pid"; wait "$pid"; pid=
}

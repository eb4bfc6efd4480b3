#!/bin/sh
# SIGINT on cgrun-rdzvd with agents connected (a stop that ends the jobs):
# each hears FAIL (reason 4, "cgrun-rdzvd is shutting down"); the daemon
# exits as soon as they hung up, or, when one holds its connection open,
# after shutdown-timeout; a second signal ends the wait at once.  SIGTERM
# (systemctl stop/restart) is a restart: the daemon exits at once and the
# agents hear no FAIL, only the connection closing (tests/daemon/t_daemon_restart.sh
# shows a job surviving it).
top=${CGRUN_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
rdzvd=${CGRUN_RDZVD:-$top/build/cgrun-rdzvd}
py=/usr/bin/python3; [ -x $py ] || py=python3
tool="$py $top/tests/daemon/service_tool.py"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cgrun-stop.XXXXXX") || exit 1
pids=
cleanup() { for p in $pids; do kill "$p" 2>/dev/null; done; rm -rf "$tmp"; }
trap cleanup EXIT
fail=0

# start_daemon NAME TIMEOUT_MS: a daemon on a free port; sets $d and $port.
start_daemon() {
	"$rdzvd" -d -v --host=127.0.0.1 --port=0 --shutdown-timeout="$2" \
		>"$tmp/$1.out" 2>"$tmp/$1.err" &
	d=$!; pids="$pids $d"
	$tool wait "$tmp/$1.out" '^listening on' 5 >/dev/null || { cat "$tmp/$1.err"; exit 1; }
	port=$(sed -n 's/^listening on 127.0.0.1:\([0-9]*\)$/\1/p' "$tmp/$1.out")
}
# gone PID SECS: wait (deadline) for PID to exit; its status in $rc.
gone() {
	i=0; while kill -0 "$1" 2>/dev/null && [ $i -lt $(($2 * 20)) ]; do
		sleep 0.05; i=$((i + 1)); done
	if kill -0 "$1" 2>/dev/null; then rc=timeout; else wait "$1"; rc=$?; fi
}

# 1. Two cooperative agents in two jobs: both told, daemon leaves at once.
start_daemon coop 60000
for j in jobA jobB; do
	$tool agent 127.0.0.1 "$port" $j close >"$tmp/$j" 2>&1 &
	pids="$pids $!"; eval "a_$j=$!"
	$tool wait "$tmp/$j" '^joined' 5 >/dev/null || { echo "FAIL: $j did not join"; fail=1; }
done
kill -INT $d
gone $d 10
[ "$rc" = 0 ] || { echo "FAIL: daemon with cooperative agents: $rc (timeout 60 s)"; fail=1; }
for j in jobA jobB; do
	eval "gone \$a_$j 5"
	grep -qx 'FAIL 4 cgrun-rdzvd is shutting down' "$tmp/$j" ||
		{ echo "FAIL: $j heard: $(cat "$tmp/$j")"; fail=1; }
done
grep -q 'agents_told=2' "$tmp/coop.err" || { echo "FAIL: agents_told=2 not logged"; fail=1; }
grep -q 'still connected' "$tmp/coop.err" && { echo "FAIL: waited for agents that hung up"; fail=1; }
[ $fail -eq 0 ] && echo "ok: 2 agents told, daemon exited once they hung up (not after 60 s)"

# 2. An agent that keeps its connection: the daemon gives up after 500 ms.
start_daemon hold 500
$tool agent 127.0.0.1 "$port" jobH hold >"$tmp/jobH" 2>&1 &
h=$!; pids="$pids $h"
$tool wait "$tmp/jobH" '^joined' 5 >/dev/null || { echo "FAIL: jobH did not join"; fail=1; }
kill -INT $d
gone $d 10
[ "$rc" = 0 ] || { echo "FAIL: daemon with a holding agent: $rc"; fail=1; }
grep -q 'shutdown: 1 agents still connected after 500 ms' "$tmp/hold.err" ||
	{ cat "$tmp/hold.err"; echo "FAIL: no give-up line"; fail=1; }
grep -qx 'FAIL 4 cgrun-rdzvd is shutting down' "$tmp/jobH" || { echo "FAIL: jobH heard: $(cat "$tmp/jobH")"; fail=1; }
[ $fail -eq 0 ] && echo "ok: holding agent told; daemon left after shutdown-timeout"
kill $h 2>/dev/null

# 3. Same with a long timeout: a second SIGTERM ends the wait.
start_daemon twice 600000
$tool agent 127.0.0.1 "$port" jobT hold >"$tmp/jobT" 2>&1 &
h=$!; pids="$pids $h"
$tool wait "$tmp/jobT" '^joined' 5 >/dev/null || { echo "FAIL: jobT did not join"; fail=1; }
kill -INT $d
$tool wait "$tmp/jobT" '^FAIL 4' 5 >/dev/null || { echo "FAIL: jobT not told"; fail=1; }
kill -INT $d
gone $d 10
[ "$rc" = 0 ] && grep -q 'again: exiting now' "$tmp/twice.err" ||
	{ echo "FAIL: second SIGTERM: $rc"; cat "$tmp/twice.err"; fail=1; }
[ $fail -eq 0 ] && echo "ok: second signal exits at once"

# 4. SIGTERM is a restart: no FAIL, the connection closes, the daemon
# leaves at once although shutdown-timeout is long.
start_daemon restart 600000
$tool agent 127.0.0.1 "$port" jobR close >"$tmp/jobR" 2>&1 &
r=$!; pids="$pids $r"
$tool wait "$tmp/jobR" '^joined' 5 >/dev/null || { echo "FAIL: jobR did not join"; fail=1; }
kill -TERM $d
gone $d 2
[ "$rc" = 0 ] || { echo "FAIL: SIGTERM (restart): $rc"; cat "$tmp/restart.err"; fail=1; }
gone $r 5
grep -q '^FAIL' "$tmp/jobR" && { echo "FAIL: jobR heard: $(cat "$tmp/jobR")"; fail=1; }
grep -qx 'closed' "$tmp/jobR" || { echo "FAIL: jobR did not see the connection close: $(cat "$tmp/jobR")"; fail=1; }
grep -q 'exiting for a restart' "$tmp/restart.err" || { echo "FAIL: no restart line"; fail=1; }
[ $fail -eq 0 ] && echo "ok: SIGTERM: agents not failed, connection closed, exit at once"
exit $fail

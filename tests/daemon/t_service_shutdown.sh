#!/bin/sh
# SIGINT on cgrun-rdzvd with agents connected (a stop that ends the jobs):
# each hears FAIL (reason 4, "cgrun-rdzvd is shutting down"); the daemon
# exits as soon as they hung up, or, when one holds its connection open,
# after shutdown-timeout; a second signal ends the wait at once.  SIGTERM
# (systemctl stop/restart) is a restart: the daemon exits at once and the
# agents hear no FAIL, only the connection closing (tests/daemon/t_daemon_restart.sh
# shows a job surviving it).
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
top=$TOP
rdzvd=$RDZVD
py=/usr/bin/python3; [ -x $py ] || py=python3
tool="$py $top/tests/daemon/service_tool.py"
tmp=$T

# start_daemon NAME TIMEOUT_MS: a daemon on a free port; sets $d and $port.
start_daemon() {
	"$rdzvd" -d -v --host=127.0.0.1 --port=0 --shutdown-timeout="$2" \
		>"$tmp/$1.out" 2>"$tmp/$1.err" &
	d=$!; track $d
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
	track $!; eval "a_$j=$!"
	$tool wait "$tmp/$j" '^joined' 5 >/dev/null || fail_later "$j did not join"
done
kill -INT $d
gone $d 10
[ "$rc" = 0 ] || fail_later "daemon with cooperative agents: $rc (timeout 60 s)"
for j in jobA jobB; do
	eval "gone \$a_$j 5"
	grep -qx 'FAIL 4 cgrun-rdzvd is shutting down' "$tmp/$j" ||
		fail_later "$j heard: $(cat "$tmp/$j")"
done
grep -q 'agents_told=2' "$tmp/coop.err" || fail_later "agents_told=2 not logged"
grep -q 'still connected' "$tmp/coop.err" && fail_later "waited for agents that hung up"
no_failures && echo "ok: 2 agents told, daemon exited once they hung up (not after 60 s)"

# 2. An agent that keeps its connection: the daemon gives up after 500 ms.
start_daemon hold 500
$tool agent 127.0.0.1 "$port" jobH hold >"$tmp/jobH" 2>&1 &
h=$!; track $h
$tool wait "$tmp/jobH" '^joined' 5 >/dev/null || fail_later "jobH did not join"
kill -INT $d
gone $d 10
[ "$rc" = 0 ] || fail_later "daemon with a holding agent: $rc"
grep -q 'shutdown: 1 agents still connected after 500 ms' "$tmp/hold.err" ||
	{ cat "$tmp/hold.err"; fail_later "no give-up line"; }
grep -qx 'FAIL 4 cgrun-rdzvd is shutting down' "$tmp/jobH" || fail_later "jobH heard: $(cat "$tmp/jobH")"
no_failures && echo "ok: holding agent told; daemon left after shutdown-timeout"
kill $h 2>/dev/null

# 3. Same with a long timeout: a second SIGTERM ends the wait.
start_daemon twice 600000
$tool agent 127.0.0.1 "$port" jobT hold >"$tmp/jobT" 2>&1 &
h=$!; track $h
$tool wait "$tmp/jobT" '^joined' 5 >/dev/null || fail_later "jobT did not join"
kill -INT $d
$tool wait "$tmp/jobT" '^FAIL 4' 5 >/dev/null || fail_later "jobT not told"
kill -INT $d
gone $d 10
[ "$rc" = 0 ] && grep -q 'again: exiting now' "$tmp/twice.err" ||
	{ fail_later "second SIGTERM: $rc"; cat "$tmp/twice.err"; }
no_failures && echo "ok: second signal exits at once"

# 4. SIGTERM is a restart: no FAIL, the connection closes, the daemon
# leaves at once although shutdown-timeout is long.
start_daemon restart 600000
$tool agent 127.0.0.1 "$port" jobR close >"$tmp/jobR" 2>&1 &
r=$!; track $r
$tool wait "$tmp/jobR" '^joined' 5 >/dev/null || fail_later "jobR did not join"
kill -TERM $d
gone $d 2
[ "$rc" = 0 ] || { fail_later "SIGTERM (restart): $rc"; cat "$tmp/restart.err"; }
gone $r 5
grep -q '^FAIL' "$tmp/jobR" && fail_later "jobR heard: $(cat "$tmp/jobR")"
grep -qx 'closed' "$tmp/jobR" || fail_later "jobR did not see the connection close: $(cat "$tmp/jobR")"
grep -q 'exiting for a restart' "$tmp/restart.err" || fail_later "no restart line"
no_failures && echo "ok: SIGTERM: agents not failed, connection closed, exit at once"

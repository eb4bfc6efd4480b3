#!/bin/sh
# Signals and stopping: TERM/INT/HUP/QUIT are forwarded to every worker's
# process group and stop the job (exit 128 + N); a worker that ignores TERM
# is killed after --shutdown-timeout; grandchildren die with their worker;
# a second SIGINT kills at once; USR1 is forwarded without stopping; and
# after `kill -9` of the agent no worker is alive 1 s later.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
cd "$T" || exit 1
agent=
# cgrun puts each worker in a group of its own: after a kill -9 of cgrun
# only their pids (in ./pids) find them.
at_exit 'xargs -r kill -9 <"$T/pids" 2>/dev/null'
on_fail() { [ -f err ] && sed 's/^/  agent: /' err | tail -20; }
count_ready() { [ "$(cat ready.* 2>/dev/null | wc -l)" -ge "$1" ]; }
agent_gone() { ! kill -0 "$agent" 2>/dev/null; }
pids_dead() {
	for p in $(cat pids 2>/dev/null); do alive "$p" && return 1; done
	return 0
}
# start N ARGS...: run cgrun in the background with N workers of worker.sh.
start() {
	nw=$1; shift
	rm -f ready.* pids got.* out err
	"$CGRUN_BIN" --nproc-per-node="$nw" "$@" ./worker.sh > out 2> err &
	agent=$!
	poll_for 10 count_ready "$nw" || fail "workers did not start"
}
finish() {	# finish WANT-STATUS: wait for the agent, check its status
	poll_for 40 agent_gone || fail "agent still running"
	wait "$agent"; rc=$?; agent=
	[ "$rc" -eq "$1" ] || fail "agent exited $rc, want $1"
}

# worker.sh MODE: writes its pid, then behaves as MODE says.
cat > worker.sh <<'W'
#!/bin/sh
echo $$ >> pids
case "$MODE" in
trap) trap 'echo TERM > got.$LOCAL_RANK; exit 0' TERM
      trap 'echo INT > got.$LOCAL_RANK; exit 0' INT
      trap 'echo HUP > got.$LOCAL_RANK; exit 0' HUP ;;
ignore) trap '' TERM INT ;;
usr1) trap 'echo USR1 > got.$LOCAL_RANK; exit 0' USR1 ;;
grandchild) sleep 300 & echo $! >> pids
      [ "$LOCAL_RANK" = 1 ] && { echo ready > ready.$LOCAL_RANK; while [ "$(cat ready.* | wc -l)" -lt 2 ]; do sleep 0.02; done; exit 5; } ;;
leftover) sleep 300 & echo $! >> pids
      echo ready > ready.$LOCAL_RANK; exit 0 ;;
esac
echo ready > ready.$LOCAL_RANK
while :; do sleep 0.05; done
W
chmod +x worker.sh

# 1. TERM, INT and HUP are forwarded to each worker, the job stops.
for sn in TERM:15 INT:2 HUP:1; do
	s=${sn%:*} n=${sn#*:}
	MODE=trap start 2
	kill -"$s" "$agent"
	finish $((128 + n))
	for lr in 0 1; do
		[ "$(cat got.$lr 2>/dev/null)" = "$s" ] || fail "rank $lr did not get $s"
	done
done
echo "TERM/INT/HUP forwarded, exit 128+N"

# 2. A worker ignoring TERM is killed after the grace period (0.5 s here).
MODE=ignore start 2 --shutdown-timeout=0.5
t0=$(now_ms)
kill -TERM "$agent"
finish 143
dt=$(( $(now_ms) - t0 ))
[ $dt -ge 450 ] || fail "KILL came before the grace period ($dt ms)"
[ $dt -lt 5000 ] || fail "KILL came too late ($dt ms)"
poll_for 2 pids_dead || fail "workers still alive after the grace period"
grep -q 'sending KILL' err || fail "no log line about the KILL"
echo "grace then KILL after $dt ms"

# 3. A second SIGINT kills at once (default grace is 30 s).
MODE=ignore start 2 -v
t0=$(now_ms)
kill -INT "$agent"
poll_for 5 grep -q 'stopping workers sig=INT' err || fail "first SIGINT not seen"
kill -INT "$agent"
finish 130
dt=$(( $(now_ms) - t0 ))
[ $dt -lt 5000 ] || fail "second SIGINT did not kill at once ($dt ms)"
poll_for 2 pids_dead || fail "workers alive after the second SIGINT"
echo "second SIGINT kills at once ($dt ms)"

# 4. Grandchildren die with their worker's group when the job fails.
MODE=grandchild start 2
finish 5
poll_for 2 pids_dead || fail "grandchildren survived: $(cat pids | xargs ps -o pid=,args= -p)"
echo "grandchildren killed"

# 4b. A background child left by a worker that exited 0 does not keep the
# job (it holds the output pipe) nor outlive it.
MODE=leftover start 2
t0=$(now_ms)
finish 0
dt=$(( $(now_ms) - t0 ))
# (the 2 s pipe drain timeout would be the only other way out)
[ $dt -lt 1800 ] || fail "job with leftover children took $dt ms to end"
poll_for 1 pids_dead || fail "leftover children survived the job"
echo "leftover children stopped at the end ($dt ms)"

# 4c. Under nohup (SIGHUP ignored) a hang-up neither stops the job nor
# reaches the workers, which stay immune themselves.
(trap '' HUP; MODE=trap start 2; echo "$agent" > agent.pid; wait "$agent"; echo $? > agent.rc) &
sub=$!
poll_for 10 count_ready 2 || fail "nohup workers did not start"
poll_for 5 test -s agent.pid || fail "no agent pid"
agent=$(cat agent.pid)
kill -HUP "$agent"
for p in $(cat pids); do kill -HUP "$p"; done
kill -TERM "$agent"
wait "$sub"; agent=
[ "$(cat agent.rc)" = 143 ] || fail "nohup job: agent exited $(cat agent.rc), want 143 (TERM)"
[ "$(cat got.0 got.1 | sort -u)" = TERM ] || fail "nohup: workers saw $(cat got.0 got.1)"
echo "nohup: SIGHUP stays ignored"

# 5. USR1 is forwarded and does not stop the job by itself.
MODE=usr1 start 2
kill -USR1 "$agent"
finish 0
[ "$(cat got.0 got.1 2>/dev/null | sort -u)" = USR1 ] || fail "USR1 not forwarded to both"
echo "USR1 forwarded"

# 6. kill -9 of the agent: no worker alive 1 s later (PR_SET_PDEATHSIG).
MODE=ignore start 3
kill -9 "$agent"
wait "$agent" 2>/dev/null; agent=
poll_for 1 pids_dead || fail "workers alive 1 s after kill -9 of the agent: $(cat pids)"
echo "kill -9 of the agent leaves no worker"
echo ok

#!/bin/sh
# Signals under hostile conditions (issue 18 items 5 and 6):
# 1. USR1/USR2 reach each worker's main process only, by default: a helper
#    process of the worker that keeps the default action (a DataLoader
#    worker) survives a Slurm preemption warning; --signal-group sends them
#    to the whole process group (and the helper dies).
# 2. Signals during a stop are forwarded as themselves: TERM then HUP then
#    QUIT reach the workers as TERM, HUP, QUIT (not TERM three times); the
#    exit status stays the first signal's (128 + 15).
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$TOP/tests/hostile/lib.sh"
cd "$T" || exit 1
agent=
count_ready() { [ "$(cat ready.* 2>/dev/null | wc -l)" -ge "$1" ]; }
agent_gone() { ! kill -0 "$agent" 2>/dev/null; }
got_lines() { [ "$(cat got.* 2>/dev/null | wc -l)" -ge "$1" ]; }
start() {
	nw=$1; shift
	rm -f ready.* pids helpers got.* out err
	"$CGRUN_BIN" --nproc-per-node="$nw" "$@" ./worker.sh > out 2> err &
	agent=$!
	poll_for 10 count_ready "$nw" || fail "workers did not start"
}
finish() {
	poll_for 40 agent_gone || fail "agent still running"
	wait "$agent"; rc=$?; agent=
	[ "$rc" -eq "$1" ] || fail "agent exited $rc, want $1"
}

cat > worker.sh <<'W'
#!/bin/sh
echo $$ >> pids
case "$MODE" in
usr1)	sleep 300 & h=$!; echo $h >> helpers
	trap 'sleep 0.2; if kill -0 $h 2>/dev/null; then echo alive; else echo dead; fi > got.$LOCAL_RANK; exit 0' USR1 ;;
stop)	trap 'echo TERM >> got.$LOCAL_RANK' TERM
	trap 'echo HUP >> got.$LOCAL_RANK' HUP
	trap 'echo QUIT >> got.$LOCAL_RANK; exit 0' QUIT ;;
esac
echo ready > ready.$LOCAL_RANK
while :; do sleep 0.05; done
W
chmod +x worker.sh

# 1. USR1 to the main process: the helper with the default action lives.
MODE=usr1 start 2
kill -USR1 "$agent"
finish 0
[ "$(cat got.0 got.1 2>/dev/null | sort -u)" = alive ] || fail "USR1: helpers saw: $(cat got.0 got.1 2>/dev/null) (want alive: USR1 must reach the main process only)"
echo "USR1 reaches the main process only"
MODE=usr1 start 2 --signal-group
kill -USR2 "$agent"	# USR2 kills the trapless main: exit 128+12
finish $((128 + 12))
MODE=usr1 start 2 --signal-group
kill -USR1 "$agent"
finish 0
[ "$(cat got.0 got.1 2>/dev/null | sort -u)" = dead ] || fail "--signal-group: helpers saw: $(cat got.0 got.1 2>/dev/null) (want dead)"
echo "--signal-group: USR1 reaches the whole group"

# 2. TERM, HUP, QUIT during one stop: each forwarded as itself.
MODE=stop start 1 --shutdown-timeout=30
kill -TERM "$agent"
poll_for 10 got_lines 1 || fail "TERM not forwarded"
kill -HUP "$agent"
poll_for 10 got_lines 2 || fail "HUP not forwarded"
kill -QUIT "$agent"
finish $((128 + 15))
[ "$(cat got.0 | tr '\n' ' ')" = "TERM HUP QUIT " ] || fail "stop: the worker saw: $(cat got.0 | tr '\n' ' ') (want TERM HUP QUIT)"
echo "signals during a stop are forwarded as themselves"
echo ok

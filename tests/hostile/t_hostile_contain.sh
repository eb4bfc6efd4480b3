#!/bin/sh
# Containment (issue 18 item 2): what a worker starts outside its process
# group (setsid, ignoring TERM) does not outlive its attempt:
# 1. a setsid child of attempt 0 is dead before attempt 1 starts;
# 2. a setsid child of a worker that exited 0 is dead when cgrun exits;
# 3. after kill -9 of cgrun, its workers' setsid and background children
#    die within 5 s (the cgroup guard; only where cgrun may create a
#    cgroup v2: root or a delegated subtree; elsewhere this part is left
#    out and the test ends as a skip); with the subreaper only, the
#    guard still kills the workers' process groups (background children).
# 1 and 2 run twice: with the cgroup (when possible) and with the
# subreaper fallback (CGRUN_NO_CGROUP=1), each mode named at -v.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$TOP/tests/hostile/lib.sh"
cd "$T" || exit 1
agent=
ready() { [ "$(cat ready.* 2>/dev/null | wc -l)" -ge "$1" ]; }

# A leftover: its own session, TERM ignored, writes its pid to pids.
cat > leftover.sh <<'L'
#!/bin/sh
trap '' TERM
echo $$ >> pids
exec sleep 300
L
cat > worker.sh <<'W'
#!/bin/sh
case "$MODE.$TORCHELASTIC_RESTART_COUNT" in
restart.0)	setsid ./leftover.sh > /dev/null 2>&1 &
	while [ ! -s pids ]; do sleep 0.01; done
	exit 3 ;;
restart.1)	p=$(cat pids)
	if [ -r /proc/$p/status ] && ! grep -q '^State:.*Z' /proc/$p/status; then
		echo alive > seen; else echo dead > seen; fi
	exit 0 ;;
done.*)	setsid ./leftover.sh > /dev/null 2>&1 &
	while [ ! -s pids ]; do sleep 0.01; done
	exit 0 ;;
kill9.*)	setsid ./leftover.sh > /dev/null 2>&1 &
	sleep 300 & echo $! >> pids
	echo ready > ready.$LOCAL_RANK
	while :; do sleep 0.05; done ;;
esac
W
chmod +x worker.sh leftover.sh

# run_mode LABEL: cases 1 and 2 in the current mode.
run_mode() {
	rm -f pids seen
	MODE=restart "$CGRUN_BIN" -v --max-restarts=1 --no-python ./worker.sh \
	    > out 2> err || fail "$1: restart job exit $?"
	[ "$(cat seen)" = dead ] || fail "$1: attempt 0's setsid child still runs during attempt 1"
	grep -q "containment: $1" err || fail "$1: -v does not name the mode"
	rm -f pids
	MODE=done "$CGRUN_BIN" --no-python ./worker.sh > out 2> err ||
	    fail "$1: job exit $?"
	pids_dead || fail "$1: a setsid child outlived the job: $(cat pids)"
	echo "$1: leftovers stopped between attempts and at the end"
}

mode=subreaper
CGRUN_NO_CGROUP=1 run_mode subreaper
"$CGRUN_BIN" -v --no-python true 2> err
if grep -q "containment: cgroup" err; then
	mode=cgroup
	run_mode cgroup
fi

# 3a. kill -9 of cgrun in subreaper mode: the guard kills the workers'
#     process groups (a background child that ignores TERM); a setsid
#     child is out of reach there (cgrun.1), so it is not asserted.
rm -f pids ready.* bg
cat > bgworker.sh <<'B'
#!/bin/sh
sh -c "trap '' TERM; exec sleep 300" & echo $! >> bg
echo ready > ready.$LOCAL_RANK
while :; do sleep 0.05; done
B
chmod +x bgworker.sh
CGRUN_NO_CGROUP=1 "$CGRUN_BIN" --nproc-per-node=2 --no-python ./bgworker.sh \
    > out 2> err &
agent=$!
poll_for 10 ready 2 || fail "subreaper kill9: workers did not start"
kill -9 "$agent"; wait "$agent" 2>/dev/null; agent=
cp bg pids
poll_for 5 pids_dead || fail "subreaper: kill -9 of cgrun: background children alive 5 s later: $(cat bg)"
echo "subreaper: kill -9 of cgrun kills the workers' process groups"

# 3. kill -9 of cgrun (cgroup mode only).
if [ $mode = cgroup ]; then
	rm -f pids ready.*
	MODE=kill9 "$CGRUN_BIN" --nproc-per-node=2 --no-python ./worker.sh \
	    > out 2> err &
	agent=$!
	poll_for 10 ready 2 || fail "kill9: workers did not start"
	poll_for 10 sh -c '[ "$(wc -l < pids)" -ge 4 ]' || fail "kill9: no pids"
	kill -9 "$agent"; wait "$agent" 2>/dev/null; agent=
	poll_for 5 pids_dead || fail "kill -9 of cgrun: alive 5 s later: $(for p in $(cat pids); do alive $p && echo $p; done)"
	echo "cgroup: kill -9 of cgrun leaves nothing behind"
else
	skip_later "no cgroup v2 cgrun may create here: the kill -9 case not run"
fi
echo ok

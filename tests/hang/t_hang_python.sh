#!/bin/sh
# The hang diagnosis with plain Python workers (tests/hang/hang_py.py, no
# torch: runs in seconds): 4 ranks heartbeat through CGRUN_HEARTBEAT_FD;
# rank 2 blocks forever in hang_here() on the first attempt, the others
# wait for it in wait_for_peers().  With --hang-timeout=2 cgrun sets
# PYTHONFAULTHANDLER, SIGABRTs every rank, reads each fault handler dump
# from the rank's stderr pipe, and with --redirects=3 (stderr straight to
# its file, no pipe) from the log file; both times its own lines group
# ranks 0,1,3 in wait_for_peers and name rank 2 in hang_here
# (hang_py.py:N) as the root cause, the stacks file holds every rank's
# dump, nothing is stopped before, and the job restarts once and ends.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$TOP/tests/interop/lib.sh"
. "$TOP/tests/hang/lib.sh"
need_watchdog
PY=$(command -v python3) || skip "no python3"

# py_run NAME CGRUN-ARGS: the job; output in $T/NAME.log.
py_run() {
	name=$1 args=$2
	mkdir -p "$T/$name"
	# shellcheck disable=SC2086
	env -u PYTHONFAULTHANDLER HANG_AT_STEP=10 HANG_RANK=2 timeout 60 "$CGRUN" -v --log-prefix=rank \
		--standalone --nproc-per-node=4 --max-restarts=1 --hang-timeout=2 \
		--log-dir="$T/$name/logs" $args --no-python "$PY" \
		"$TOP/tests/hang/hang_py.py" 20 >"$T/$name.log" 2>&1 </dev/null
	rc=$?
	[ $rc -eq 0 ] || { tail -n 40 "$T/$name.log"; fail "$name: cgrun exited $rc"; }
	grep -q '^cgrun: PYTHONFAULTHANDLER set to 1 ' "$T/$name.log" || fail "$name: PYTHONFAULTHANDLER not set"
	check_diagnosis "$T/$name.log" 0 2 hang_here hang_py.py
	grep -q "^cgrun: hang on node 0: stacks: ranks 0,1,3 in wait_for_peers (hang_py.py:[0-9]*) <- main <- <module>; rank 2 in " "$T/$name.log" ||
		fail "$name: ranks 0,1,3 not grouped in wait_for_peers"
	check_restarted_once "$T/$name.log"
}

py_run pipe ""
for r in 0 1 2 3; do
	grep -q "^\[rank$r\]:rank $r done attempt 1" "$T/pipe.log" || fail "pipe: rank $r did not finish"
done
echo "ok: fault handler dumps read from the stderr pipes, rank 2 named"

py_run file --redirects=3
for r in 0 1 2 3; do
	grep -q "^rank $r done attempt 1" "$T"/file/logs/*/attempt_1/$r/stdout.log ||
		fail "file: rank $r did not finish"
done
stacks=$(sed -n "s/^cgrun: hang on node 0: every rank's stacks: //p" "$T/file.log")
grep -q '^=== rank 2 (local_rank 2, pid [0-9]*), faulthandler ===' "$stacks" || fail "file: no fault handler dump of rank 2"
echo "ok: fault handler dumps read from --redirects log files, rank 2 named"

# No restart left: the report's root cause is rank 2, hung, though every
# rank died of the SIGABRT that dumped its stack before rank 2 was named.
env -u PYTHONFAULTHANDLER HANG_AT_STEP=10 HANG_RANK=2 timeout 60 "$CGRUN" \
	--standalone --nproc-per-node=4 --max-restarts=0 --hang-timeout=2 \
	--no-python "$PY" "$TOP/tests/hang/hang_py.py" 20 >"$T/last.log" 2>&1 </dev/null
rc=$?
[ $rc -eq 134 ] || { tail -n 20 "$T/last.log"; fail "last: cgrun exited $rc, want 134 (SIGABRT)"; }
grep -q '^root cause: rank 2 (local_rank 2, node 0) hung: no progress for 2 s in .*hang_here' "$T/last.log" ||
	{ grep -A6 '^root cause' "$T/last.log"; fail "last: the report's root cause is not the hung rank 2"; }
echo "ok: with no restart left the report names the hung rank 2"

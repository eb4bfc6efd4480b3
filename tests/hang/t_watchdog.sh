#!/bin/sh
# The hang watchdog with real worker processes (cgrun --hang-timeout):
#  - a worker that stops heartbeating (writes to CGRUN_HEARTBEAT_FD from
#    bash) is caught, named (rank, idle, timeout, source, section), and the
#    job restarts once and completes;
#  - without restarts the failure report names the hung rank and why;
#  - --hang-progress=output: a worker that stops printing is caught, even
#    with --redirects (output only to files);
#  - a worker that keeps beating, or keeps printing, is never flagged, nor
#    one slower to start than the hang timeout (the first-progress timeout
#    covers start-up); --hang-first-timeout catches one that never starts;
#  - a C worker linked with libcgrun calling cgrun_heartbeat() (a storm of
#    200000 beats, then a hang) is caught; the agent stays responsive;
#  - bad input: invalid durations (options and site file), an unknown
#    --hang-progress, a regular file or an unwritable path where the
#    FileTimer FIFO should be: usage errors (exit 2) naming the problem,
#    the file left alone; junk, foreign and overlong FileTimer lines are
#    logged and ignored, the job unharmed, the FIFO removed at exit.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
top=$TOP
b=$BUILD_DIR
cd "$T" || exit 1
on_fail() { for f in "$T"/*.out; do echo "== $f"; tail -n 30 "$f"; done; }
command -v bash >/dev/null || skip "no bash for the workers"

# A worker: beats BEATS times every 0.1 s, then (rank HANG, attempt 0)
# blocks; else exits 0.
cat >beat.sh <<'EOF'
#!/bin/bash
for i in $(seq "${BEATS:-5}"); do
	printf 'step\n' >&"$CGRUN_HEARTBEAT_FD" || exit 9
	sleep 0.1
done
echo "rank $RANK attempt $TORCHELASTIC_RESTART_COUNT done"
[ "$TORCHELASTIC_RESTART_COUNT" = 0 ] && [ "$RANK" = "${HANG:-x}" ] && exec sleep 1000
exit 0
EOF
chmod +x beat.sh

# 1. heartbeats stop in rank 1: caught after 1 s, restarted, completes.
HANG=1 timeout 60 "$CGRUN_BIN" -v --nproc-per-node=2 --max-restarts=1 \
    --hang-timeout=1 --no-python ./beat.sh >hb.out 2>&1 || fail "heartbeat hang: exit $?"
grep -q "rank hung rank=1 local_rank=1 idle=1s timeout=1s source=heartbeat section=step" hb.out ||
	fail "no hang line for rank 1"
grep -q "rank 1 attempt 1 done" hb.out && grep -q "rank 0 attempt 1 done" hb.out ||
	fail "no second attempt"
[ "$(grep -c 'rank hung' hb.out)" = 1 ] || fail "more than one hang"
echo "ok: a rank that stops heartbeating is caught and the job restarts"

# 2. no restarts left: the report names the rank and the reason.
HANG=1 timeout 60 "$CGRUN_BIN" --nproc-per-node=2 --hang-timeout=1 \
    --no-python ./beat.sh >rep.out 2>&1
rc=$?
[ $rc = 143 ] || fail "report: exit $rc, want 143 (the hung rank's TERM)"
# (then " in FRAME <- FRAME ...": where its stack was, stacks.c)
grep -Eq "^root cause: rank 1 \(local_rank 1, node 0\) hung: no progress for 1 s( in .*[^ ])?$" rep.out ||
	fail "report does not name the hung rank"
grep -q "^  then: rank 1 .*killed by signal 15 (SIGTERM) after cgrun stopped it" rep.out ||
	fail "report does not say how the hung rank ended"
echo "ok: the failure report names the hung rank and the reason"

# 3. --hang-progress=output: printing stops in rank 0 (no heartbeats).
cat >print.sh <<'EOF'
#!/bin/sh
for i in 1 2 3 4 5 6; do echo "line $i"; sleep 0.2; done
[ "$TORCHELASTIC_RESTART_COUNT" = 0 ] && [ "$RANK" = 0 ] && exec sleep 1000
exit 0
EOF
chmod +x print.sh
for red in "" "--redirects=3"; do
	timeout 60 "$CGRUN_BIN" --nproc-per-node=2 --max-restarts=1 \
	    --hang-timeout=1 --hang-progress=output $red --no-python ./print.sh \
	    >out.out 2>&1 || fail "output hang ($red): exit $?"
	grep -q "rank hung rank=0 local_rank=0 idle=1s timeout=1s source=output" out.out ||
		fail "no output hang line ($red)"
done
echo "ok: --hang-progress=output catches a rank that stops printing (also with --redirects)"

# 4. never flagged: beating 3 s at 10 Hz, printing 1.2 s at 5 Hz, a
#    worker that starts beating only after 2 s (first-progress timeout),
#    Python's os.write() for 2.5 s with first and hang timeouts of 1 s.
BEATS=30 timeout 60 "$CGRUN_BIN" --nproc-per-node=3 --hang-timeout=1 \
    --no-python ./beat.sh >ok1.out 2>&1 || fail "beating workers: exit $?"
timeout 60 "$CGRUN_BIN" --nproc-per-node=2 --hang-timeout=1 \
    --hang-progress=output --no-python sh -c 'for i in 1 2 3 4 5 6; do echo $i; sleep 0.2; done' \
    >ok2.out 2>&1 || fail "printing workers: exit $?"
cat >slow.sh <<'EOF'
#!/bin/bash
sleep 2
for i in 1 2 3 4 5; do printf s >&"$CGRUN_HEARTBEAT_FD"; sleep 0.1; done
EOF
chmod +x slow.sh
timeout 60 "$CGRUN_BIN" --nproc-per-node=2 --hang-timeout=1 --no-python ./slow.sh \
    >ok3.out 2>&1 || fail "slow start: exit $?"
# The documented Python line, with a first timeout shorter than the run.
timeout 60 "$CGRUN_BIN" --nproc-per-node=2 --hang-timeout=1 --hang-first-timeout=1 \
    --no-python python3 -c 'import os, time
for i in range(25):
    os.write(int(os.environ["CGRUN_HEARTBEAT_FD"]), b"step\n")
    time.sleep(0.1)' >ok4.out 2>&1 || fail "python heartbeats: exit $?"
! grep -q "rank hung" ok1.out ok2.out ok3.out ok4.out || fail "a healthy rank was flagged"
echo "ok: ranks that beat or print, or start slowly, are never flagged"

# 5. --hang-first-timeout: a rank that never shows progress.
timeout 60 "$CGRUN_BIN" --nproc-per-node=1 --hang-timeout=1 \
    --hang-first-timeout=2 --no-python sleep 100 >first.out 2>&1
grep -q "rank hung rank=0 local_rank=0 idle=2s timeout=2s source=heartbeat" first.out ||
	fail "first-progress timeout not applied"
grep -q "hung: no progress for 2 s since it started" first.out ||
	fail "report does not say it never started"
echo "ok: --hang-first-timeout catches a rank that never shows progress"

# 6. a C worker with libcgrun: a storm of heartbeats, then a hang.
cat >cbeat.c <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <cgrun/heartbeat.h>
int
main(void)
{
	int i, sent = 0, again = 0, r;
	const char *rc = getenv("TORCHELASTIC_RESTART_COUNT");

	for (i = 0; i < 200000; i++) {
		r = cgrun_heartbeat("storm");
		if (r == 0)
			sent++;
		else if (r == -1)
			again++;
		else
			return 3;	/* no channel: not under the watchdog */
	}
	printf("sent=%d again=%d\n", sent, again);
	fflush(stdout);
	for (i = 0; i < 5; i++) {
		if (cgrun_heartbeat("compute") == 1)
			return 4;
		usleep(100000);
	}
	if (rc != NULL && rc[0] == '0')
		pause();
	return 0;
}
EOF
cc -Wall -Werror -I"$top/include" -o cbeat cbeat.c -L"$b" -lcgrun -Wl,-rpath,"$b" ||
	fail "the libcgrun worker does not build"
[ "$(CGRUN_HEARTBEAT_FD= ./cbeat 2>&1; echo $?)" = 3 ] || fail "cgrun_heartbeat without a channel is not 1"
timeout 60 "$CGRUN_BIN" -v --nproc-per-node=2 --max-restarts=1 --hang-timeout=1 \
    --no-python ./cbeat >c.out 2>&1 || fail "libcgrun worker: exit $?"
grep -q "rank hung rank=[01] local_rank=[01] idle=1s timeout=1s source=heartbeat section=compute" c.out ||
	fail "libcgrun heartbeats: no hang line"
[ "$(grep -c 'sent=' c.out)" = 4 ] || fail "libcgrun worker: not 2 attempts of 2 ranks"
echo "ok: cgrun_heartbeat() from C: a storm costs nothing, a hang is caught"

# 7. bad input.
usage() {	# WANT-IN-MESSAGE ARGS...
	want=$1
	shift
	"$CGRUN_BIN" "$@" --no-python true >bad.out 2>&1
	rc=$?
	[ $rc = 2 ] || fail "$*: exit $rc, want 2"
	grep -qF -- "$want" bad.out || fail "$*: no \"$want\" in: $(cat bad.out)"
}
usage '--hang-timeout: expected a duration (10, 90s, 30m, 1h), got "10x"' --hang-timeout=10x
usage '--hang-timeout: expected a duration' --hang-timeout=-5
usage '--hang-first-timeout: expected a duration' --hang-timeout=1 --hang-first-timeout=1h30m
usage '--hang-first-timeout: must be > 0' --hang-timeout=1 --hang-first-timeout=0
usage '--exit-barrier-timeout: expected a duration' --exit-barrier-timeout=soon
usage '--hang-progress: unknown value "stdout"' --hang-progress=stdout
printf 'hang_timeout = 5 minutes\n' >site.conf
CGRUN_CONFIG=$T/site.conf usage 'site.conf:1: hang_timeout: expected a duration' --nproc-per-node=1
echo "keep me" >regular
TORCHELASTIC_ENABLE_FILE_TIMER=1 TORCHELASTIC_TIMER_FILE=$T/regular \
    usage "exists and is not a FIFO; not replacing it" --nproc-per-node=1
[ "$(cat regular)" = "keep me" ] || fail "the regular file was touched"
TORCHELASTIC_ENABLE_FILE_TIMER=1 TORCHELASTIC_TIMER_FILE=$T/no/such/dir/fifo \
    usage "cannot create the timer FIFO $T/no/such/dir/fifo" --nproc-per-node=1
echo "ok: bad durations, --hang-progress and timer paths are usage errors"

# The site file's hang_timeout applies (single node too).
printf 'hang_timeout = 1s\n' >site.conf
CGRUN_CONFIG=$T/site.conf timeout 60 "$CGRUN_BIN" --nproc-per-node=1 \
    --hang-first-timeout=1 --no-python sleep 100 >site.out 2>&1
grep -q "rank hung rank=0 .*timeout=1s" site.out || fail "site hang_timeout not applied"
echo "ok: hang_timeout from the site file"

# 8. junk on the FileTimer FIFO: logged, ignored; the FIFO goes at exit.
cat >junk.sh <<'EOF'
#!/bin/bash
f=$TORCHELASTIC_TIMER_FILE
[ -p "$f" ] || exit 5
printf 'not json\n{"pid": 1, "scope_id": "x", "expiration_time": 1, "signal": 9}\n' >"$f"
head -c 6000 /dev/zero | tr '\0' 'x' >"$f"; echo >"$f"
for i in $(seq 200); do echo '{"version": 1}'; done >"$f"
now=$(date +%s)
echo "{\"version\": 1, \"pid\": $$, \"scope_id\": \"a\", \"expiration_time\": $((now + 100)), \"signal\": 9}" >"$f"
echo "{\"version\": 1, \"pid\": $$, \"scope_id\": \"a\", \"expiration_time\": -1, \"signal\": 0}" >"$f"
echo "{\"version\": 1, \"pid\": $$, \"scope_id\": \"b\", \"expiration_time\": $now, \"signal\": 0}" >"$f"
sleep 1.5
echo done
EOF
chmod +x junk.sh
mkfifo stale.fifo
TORCHELASTIC_ENABLE_FILE_TIMER=1 TORCHELASTIC_TIMER_FILE=$T/stale.fifo timeout 60 \
    "$CGRUN_BIN" -v --nproc-per-node=1 --no-python ./junk.sh >junk.out 2>&1 ||
	fail "junk FileTimer lines: exit $?"
grep -q 'filetimer: request ignored: not one JSON value: "not json"' junk.out || fail "junk not logged"
grep -q "request from pid=1 ignored: not a worker of this attempt" junk.out || fail "foreign pid not refused"
grep -q "line longer than PIPE_BUF" junk.out || fail "overlong line not refused"
grep -q "more bad requests not logged\|pid is not a positive integer" junk.out || fail "bad requests not logged"
[ "$(grep -c 'request ignored' junk.out)" -le 21 ] || fail "bad-line log not bounded"
grep -q "no signal given; not reaping it" junk.out || fail "signal 0 expiry reaped"
! grep -q "rank hung" junk.out || fail "a released or signal-0 timer hung the rank"
[ -e stale.fifo ] && fail "the FIFO was not removed at exit"
echo "ok: junk FileTimer lines are logged and ignored; the FIFO is removed at exit"
exit 0

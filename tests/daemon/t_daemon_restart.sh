#!/bin/sh
# A graceful restart of cgrun-rdzvd goes unnoticed by a running job: two
# agents run a 2-node job; the daemon gets SIGTERM (what systemctl restart
# sends) and a new one starts on the same port within a second; the agents
# reconnect within their keep-alive window, the job finishes with exit 0,
# and no worker was ever restarted (one start per rank,
# TORCHELASTIC_RESTART_COUNT 0).  Also: SIGTERM exits at once and says
# so; the agents never hear FAIL.  Then the same after a worker failure
# (round 1, restart count 1): the restarted daemon, which numbers rounds
# from 0 again, gives the agents the places they run with, and their
# workers go on.  Then a restart while one node is already DONE (its
# worker exited 0) and the other still runs: the job still finishes.
# Then the restart budget survives a restart: a job with --max-restarts=3
# that spent 2 gets exactly one more (the agents tell the new daemon what
# was spent, SPENT), not 3 more.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$TOP/tests/interop/lib.sh"
. "$TOP/tests/multinode/lib.sh"

start_rdzvd -v
first_pid=$RDZVD_PID
export OUT="$T/out"
mkdir -p "$OUT"
envworker "$T/w.sh"
# Each worker counts its starts, then runs until $OUT/go exists (at most 40 s).
cat >"$OUT/hook.sh" <<'EOS'
echo "$RANK" >>"$OUT/starts"
i=0
while [ ! -f "$OUT/go" ] && [ $i -lt 400 ]; do sleep 0.1; i=$((i + 1)); done
[ -f "$OUT/go" ] || exit 3
exit 0
EOS
common="--nnodes=2 --nproc-per-node=1 --rdzv-id=restart --max-restarts=0 --rdzv-conf=$FAST_CONF --no-python $T/w.sh"
agent a 127.0.0.2 $common
agent b 127.0.0.3 $common
wait_count "$OUT/env.0.2.*" 2 30 "workers of round 0"

kill -TERM "$first_pid"
i=0
while kill -0 "$first_pid" 2>/dev/null; do
	[ $i -ge 20 ] && { stuck_report; fail "cgrun-rdzvd still running 2 s after SIGTERM"; }
	sleep 0.1; i=$((i + 1))
done
wait "$first_pid"
rc=$?
[ $rc -eq 0 ] || fail "cgrun-rdzvd exited $rc on SIGTERM"
restart_rdzvd
echo "ok: SIGTERM exited at once; a new daemon listens on port $RDZVD_PORT"

# Both agents come back (c10d.c logs "connection ... restored").
for n in a b; do
	i=0
	while ! grep -q 'restored' "$T/$n.log"; do
		[ $i -ge 100 ] && { stuck_report; fail "agent $n did not reconnect within 10 s"; }
		sleep 0.1; i=$((i + 1))
	done
done
touch "$OUT/go"
for n in a b; do expect_exit $n 30 0; done
starts=$(wc -l <"$OUT/starts")
[ "$starts" -eq 2 ] || { cat "$OUT/starts"; fail "$starts worker starts, want 2 (a worker was restarted)"; }
ls "$OUT"/env.* | grep -v '/env\.0\.' &&
	fail "a worker ran with TORCHELASTIC_RESTART_COUNT > 0"
grep -l 'FAIL\|shutting down' "$T/a.log" "$T/b.log" &&
	fail "an agent heard the job fail"
grep -q 'exiting for a restart' "$T/rdzvd.1.log" ||
	{ cat "$T/rdzvd.1.log"; fail "no restart line in the daemon's log"; }
echo "ok: the job finished with exit 0 through a daemon restart; 2 worker starts, restart count 0"

# Phase 2: rank 1 fails once (round 1, restart count 1), then a restart.
rm -f "$OUT"/env.* "$OUT/starts" "$OUT/go"
cat >"$OUT/hook.sh" <<'EOS'
echo "$RANK.$TORCHELASTIC_RESTART_COUNT" >>"$OUT/starts"
[ "$TORCHELASTIC_RESTART_COUNT" = 0 ] && [ "$RANK" = 1 ] && exit 1
i=0
while [ ! -f "$OUT/go" ] && [ $i -lt 400 ]; do sleep 0.1; i=$((i + 1)); done
[ -f "$OUT/go" ] || exit 3
exit 0
EOS
common="--nnodes=2 --nproc-per-node=1 --rdzv-id=restart2 --max-restarts=1 --rdzv-conf=$FAST_CONF --no-python $T/w.sh"
agent c 127.0.0.2 $common
agent d 127.0.0.3 $common
wait_count "$OUT/env.1.2.*" 2 30 "workers of round 1 (after the failure)"
before=$(sort "$OUT/starts" | tr '\n' ' ')
second_pid=$RDZVD_PID
kill -TERM "$second_pid"
wait "$second_pid"
restart_rdzvd
for n in c d; do
	wait_log "$T/$n.log" 'workers go on' "agent $n did not resume its round"
done
touch "$OUT/go"
for n in c d; do expect_exit $n 30 0; done
starts=$(sort "$OUT/starts" | tr '\n' ' ')
# Rank 0 of attempt 0 may be stopped before it records its start.
case "$before" in *"0.1 1.0 1.1 ") ;; *) fail "worker starts before the restart: $before" ;; esac
[ "$starts" = "$before" ] ||
	fail "worker starts $starts, were $before before the daemon restart"
ls "$OUT"/env.* | grep -q '/env\.2\.' && fail "a worker ran with restart count 2"
echo "ok: round 1 (restart count 1) went on through a daemon restart; no worker restarted"

# Phase 3: rank 0 is done before the restart, rank 1 still runs.
rm -f "$OUT"/env.* "$OUT/starts" "$OUT/go"
cat >"$OUT/hook.sh" <<'EOS'
echo "$RANK" >>"$OUT/starts"
[ "$RANK" = 0 ] && exit 0
i=0
while [ ! -f "$OUT/go" ] && [ $i -lt 400 ]; do sleep 0.1; i=$((i + 1)); done
[ -f "$OUT/go" ] || exit 3
exit 0
EOS
third_pid=$RDZVD_PID
kill -TERM "$third_pid"
wait "$third_pid"
restart_rdzvd --http-port=0
i=0
while ! hport=$(sed -n 's/^http listening on .*:\([0-9][0-9]*\)$/\1/p' "$T/rdzvd.out") || [ -z "$hport" ]; do
	[ $i -ge 100 ] && fail "no http port"
	sleep 0.05; i=$((i + 1))
done
common="--nnodes=2 --nproc-per-node=1 --rdzv-id=restart3 --max-restarts=0 --rdzv-conf=$FAST_CONF --no-python $T/w.sh"
agent e 127.0.0.2 $common
agent f 127.0.0.3 $common
wait_count "$OUT/env.0.2.*" 2 30 "workers of job restart3"
# Until the daemon has rank 0's node DONE (its /status), at most 20 s.
"$PY113" - "$hport" <<'EOP' || { stuck_report; exit 1; }
import json, sys, time, urllib.request
end = time.time() + 20
while time.time() < end:
    st = json.load(urllib.request.urlopen("http://127.0.0.1:%s/status" % sys.argv[1], timeout=5))
    if any(n["state"] == "DONE" for j in st["jobs"] for n in j["nodes"]):
        sys.exit(0)
    time.sleep(0.1)
sys.exit("FAIL: no node of restart3 DONE within 20 s")
EOP
fourth_pid=$RDZVD_PID
kill -TERM "$fourth_pid"
wait "$fourth_pid"
restart_rdzvd
# The new daemon forms round 0 from the agents' JOINs (their own round 0).
i=0
while ! grep -q 'round=0 decided' "$T/rdzvd.log"; do
	[ $i -ge 100 ] && { stuck_report; fail "no round decided by the new daemon within 10 s"; }
	sleep 0.1; i=$((i + 1))
done
touch "$OUT/go"
for n in e f; do expect_exit $n 30 0; done
[ "$(wc -l <"$OUT/starts")" -eq 2 ] || fail "worker starts: $(cat "$OUT/starts")"
echo "ok: a restart while one node was DONE: the job finished, no worker restarted"

# Phase 4: rank 1 fails at restart counts 0 and 1, then runs (count 2)
# until go, then fails at every count; the daemon restarts during count 2.
rm -f "$OUT"/env.* "$OUT/starts" "$OUT/go"
cat >"$OUT/hook.sh" <<'EOS'
echo "$RANK.$TORCHELASTIC_RESTART_COUNT" >>"$OUT/starts"
if [ "$RANK" = 1 ]; then
	[ "$TORCHELASTIC_RESTART_COUNT" -lt 2 ] && exit 3
	i=0
	while [ ! -f "$OUT/go" ] && [ $i -lt 400 ]; do sleep 0.1; i=$((i + 1)); done
	exit 3
fi
i=0
while [ $i -lt 400 ]; do sleep 0.1; i=$((i + 1)); done
exit 4
EOS
common="--nnodes=2 --nproc-per-node=1 --rdzv-id=restart4 --max-restarts=3 --rdzv-conf=$FAST_CONF --no-python $T/w.sh"
agent g 127.0.0.2 $common
agent h 127.0.0.3 $common
wait_count "$OUT/env.2.2.*" 2 30 "workers of restart count 2"
fifth_pid=$RDZVD_PID
kill -TERM "$fifth_pid"
wait "$fifth_pid"
restart_rdzvd
for n in g h; do
	wait_log "$T/$n.log" 'workers go on' "agent $n did not resume its round"
done
wait_log "$T/rdzvd.log" 'job=restart4 restarts=2/3 carried' \
    'the new daemon did not take restarts=2/3 from the agents'
before=$(sort "$OUT/starts" | tr '\n' ' ')
touch "$OUT/go"
expect_exit h 30 3
expect_exit g 30 75
grep -q "no restarts are left (3/3 spent)" "$T/g.log" ||
	{ tail -n 20 "$T/g.log"; fail "g does not say the budget is spent:"; }
after=$(sort "$OUT/starts" | tr '\n' ' ')
# After the daemon restart only restart count 3 ran (rank 0 of a count
# may be stopped before it records its start).
new=$(sort "$OUT/starts" | uniq -c | awk '$1 > 1 { print $2 }')
[ -z "$new" ] || fail "workers started twice with the same restart count: $new (starts $after)"
case "$after" in *"1.3 ") ;; *) fail "rank 1 did not run with restart count 3: $after" ;; esac
ls "$OUT"/env.* | grep -q '/env\.4\.' && fail "a worker ran with restart count 4 (starts $after)"
echo "ok: max_restarts=3 with 2 spent before a daemon restart: one more, then the job failed (starts before: $before; after: $after)"
exit 0

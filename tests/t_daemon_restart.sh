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
# workers go on.
. "$CGRUN_TOP/tests/interop/lib.sh"
. "$CGRUN_TOP/tests/multinode/lib.sh"
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
	[ $i -ge 20 ] && { echo "FAIL: cgrun-rdzvd still running 2 s after SIGTERM"; stuck_report; exit 1; }
	sleep 0.1; i=$((i + 1))
done
wait "$first_pid"
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: cgrun-rdzvd exited $rc on SIGTERM"; exit 1; }
mv "$T/rdzvd.log" "$T/rdzvd.first.log"
start_rdzvd -v --port="$RDZVD_PORT"
echo "ok: SIGTERM exited at once; a new daemon listens on port $RDZVD_PORT"

# Both agents come back (c10d.c logs "connection ... restored").
for n in a b; do
	i=0
	while ! grep -q 'restored' "$T/$n.log"; do
		[ $i -ge 100 ] && { echo "FAIL: agent $n did not reconnect within 10 s"; stuck_report; exit 1; }
		sleep 0.1; i=$((i + 1))
	done
done
touch "$OUT/go"
for n in a b; do expect_exit $n 30 0; done
starts=$(wc -l <"$OUT/starts")
[ "$starts" -eq 2 ] || { echo "FAIL: $starts worker starts, want 2 (a worker was restarted)"; cat "$OUT/starts"; exit 1; }
ls "$OUT"/env.* | grep -v '/env\.0\.' &&
	{ echo "FAIL: a worker ran with TORCHELASTIC_RESTART_COUNT > 0"; exit 1; }
grep -l 'FAIL\|shutting down' "$T/a.log" "$T/b.log" &&
	{ echo "FAIL: an agent heard the job fail"; exit 1; }
grep -q 'exiting for a restart' "$T/rdzvd.first.log" ||
	{ echo "FAIL: no restart line in the daemon's log"; cat "$T/rdzvd.first.log"; exit 1; }
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
second_pid=$RDZVD_PID
kill -TERM "$second_pid"
wait "$second_pid"
mv "$T/rdzvd.log" "$T/rdzvd.second.log"
start_rdzvd -v --port="$RDZVD_PORT"
for n in c d; do
	i=0
	while ! grep -q 'workers go on' "$T/$n.log"; do
		[ $i -ge 100 ] && { echo "FAIL: agent $n did not resume its round within 10 s"; stuck_report; exit 1; }
		sleep 0.1; i=$((i + 1))
	done
done
touch "$OUT/go"
for n in c d; do expect_exit $n 30 0; done
starts=$(sort "$OUT/starts" | tr '\n' ' ')
[ "$starts" = "0.0 0.1 1.0 1.1 " ] ||
	{ echo "FAIL: worker starts $starts, want 0.0 0.1 1.0 1.1 (none after the daemon restart)"; exit 1; }
echo "ok: round 1 (restart count 1) went on through a daemon restart; no worker restarted"
exit 0

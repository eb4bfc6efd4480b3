#!/bin/sh
# bench/watchdog.sh: the hang watchdog (cgrun --hang-timeout), written to
# bench/results/watchdog.md:
#
#  1. detection latency: 4 ranks heartbeat every 10 ms through libcgrun
#     (bench/watchdog_worker.c); rank 2 stops on attempt 0 and stamps the
#     wall clock of its last beat; attempt 1's ranks stamp their start.
#     latency = first start of attempt 1 - last beat - timeout, i.e. what
#     cgrun adds to the timeout: noticing, stopping the others (TERM, all
#     gone), the next round and the spawn.  Timeouts 1 s and 5 s.
#  2. the watchdog's cost when nothing hangs: 8 ranks heartbeat at 1 kHz
#     each for SECS seconds; the agent's CPU (utime + stime of the cgrun
#     process, /proc/PID/stat, from 1 s after the start to 1 s before the
#     end) per second of wall time, with --hang-timeout=10 and without it
#     (then cgrun_heartbeat() finds no channel and returns 1).
#
# usage: BUILD=build sh bench/watchdog.sh   (after `make`)
# env:   BENCH_RUNS  runs per timeout (default 5)
#        BENCH_SECS  seconds of the cost runs (default 10)
#        BENCH_OUT   result file (default bench/results/watchdog.md)
set -u
cd "$(dirname "$0")/.." || exit 2
TOP=$(pwd)
BUILD=${BUILD:-build}
CGRUN=$TOP/$BUILD/cgrun
W=$TOP/$BUILD/bench/watchdog_worker
RUNS=${BENCH_RUNS:-5}
SECS=${BENCH_SECS:-10}
OUT=${BENCH_OUT:-$TOP/bench/results/watchdog.md}
[ -x "$CGRUN" ] && [ -x "$W" ] || { echo "build first: make" >&2; exit 2; }
T=$(mktemp -d "${TMPDIR:-/tmp}/cgrun-bench-wd.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT
TICK=$(getconf CLK_TCK)
start=$(date +%s)
load0=$(cut -d' ' -f1-3 /proc/loadavg)

# latency TIMEOUT: one run; prints the latency in ms.
latency() {
	"$CGRUN" --standalone --nproc-per-node=4 --max-restarts=1 \
	    --hang-timeout="$1" --no-python "$W" hang 2 50 >"$T/lat.out" 2>&1 ||
		{ echo "run failed:" >&2; cat "$T/lat.out" >&2; exit 1; }
	awk -v to="$1" -F'[=:]' '
	    /hang_at=/ { h = $NF }
	    /start=/ { if (s == "" || $NF < s) s = $NF }
	    END { if (h == "" || s == "") exit 1;
		  printf "%.1f\n", (s - h) / 1e6 - to * 1000 }' "$T/lat.out"
}

# stats: median (min-max) of the numbers on stdin.
stats() {
	sort -n | awk '{ v[NR] = $1 } END {
	    m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
	    printf "%.1f (%.1f–%.1f)", m, v[1], v[NR] }'
}

# cpu ticks (utime + stime) of pid.
ticks() {
	awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"
}

# cost ARGS...: agent CPU ms per wall second; beats line in $T/cost.out.
cost() {
	"$CGRUN" --standalone --nproc-per-node=8 "$@" --no-python "$W" rate 1000 "$SECS" \
	    >"$T/cost.out" 2>&1 &
	pid=$!
	sleep 1
	t0=$(ticks "$pid") w0=$(date +%s.%N)
	sleep $((SECS - 2))
	t1=$(ticks "$pid") w1=$(date +%s.%N)
	wait "$pid" || { echo "cost run failed:" >&2; cat "$T/cost.out" >&2; exit 1; }
	awk -v a="$t0" -v b="$t1" -v x="$w0" -v y="$w1" -v hz="$TICK" \
	    'BEGIN { printf "%.1f\n", (b - a) * 1000 / hz / (y - x) }'
}

for to in 1 5; do
	: >"$T/lat.$to"
	for i in $(seq "$RUNS"); do latency "$to" >>"$T/lat.$to"; done
done
with=$(cost --hang-timeout=10)
beats_with=$(awk -F'beats=' '/beats=/ { split($2, a, " "); n += a[1] } END { print n }' "$T/cost.out")
again_with=$(awk -F'again=' '/again=/ { n += $2 } END { print n }' "$T/cost.out")
without=$(cost)
end=$(date +%s)

cat >"$OUT" <<EOM
# Hang watchdog benchmark

- machine: $(nproc) cores, $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo), Linux $(uname -r)
- date: $(date -u '+%Y-%m-%d %H:%M UTC'), total run time $((end - start)) s
- load average (1/5/15 min) before: $load0, after: $(cut -d' ' -f1-3 /proc/loadavg)
- command: BUILD=$BUILD BENCH_RUNS=$RUNS BENCH_SECS=$SECS sh bench/watchdog.sh
- cgrun $(git rev-parse --short HEAD 2>/dev/null || echo '?'); worker: bench/watchdog_worker.c (libcgrun's cgrun_heartbeat)

## 1. Detection latency

4 ranks heartbeat every 10 ms; rank 2 stops on attempt 0.  Latency = the first start of
attempt 1 − rank 2's last heartbeat − the timeout (wall clock, ms): what cgrun adds to the
timeout (noticing the hang, SIGTERM to every rank, all gone, the next round, the spawn).
Median (min–max) over $RUNS runs.  It includes up to 50 ms from the channel's read pause (see
below): a heartbeat is noticed when read, at most 50 ms late, so a hang is seen late by at
most that, never early.

| --hang-timeout | latency beyond the timeout (ms) |
|---|---|
| 1 s | $(stats <"$T/lat.1") |
| 5 s | $(stats <"$T/lat.5") |

## 2. Cost when nothing hangs

8 ranks heartbeat at 1 kHz each ($SECS s; $beats_with heartbeats sent, $again_with refused with EAGAIN,
in the run with the watchdog).  The agent's CPU time (user + system, /proc/PID/stat) per
second of wall time, measured over the middle $((SECS - 2)) s:

| agent | CPU (ms per s) |
|---|---|
| --hang-timeout=10 (8000 heartbeats/s) | $with |
| no watchdog (cgrun_heartbeat() returns 1) | $without |

The timer work is independent of the heartbeat rate: one libevent timer for all ranks, set to
the earliest deadline and re-armed only when it fires (about once per timeout); a drained
channel (a stream socket per rank) is read again only 50 ms later, so each rank wakes the
agent about 20 times a second whatever its rate, each wake-up one recv() of what queued.
EOM
cat "$OUT"

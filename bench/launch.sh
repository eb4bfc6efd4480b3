#!/bin/sh
# bench/launch.sh: the launcher itself, cgrun against torchrun 2.6 and
# torchrun 1.13 side by side in one run, written to bench/results/launch.md:
#
#  1. launch and exit of N no-op workers: `--standalone --nproc_per_node=N
#     --no_python /bin/true`, median wall time (N = 1, 8, 32);
#  2. crash-to-restart latency with 8 workers: local rank 0 exits 1 on
#     attempt 0 (bench/launch_probe.c stamps the monotonic clock as it
#     exits); latency = that stamp -> the first / the last worker of attempt
#     1 running (their first instruction's stamp);
#  3. the agent's peak RSS: VmHWM of the agent process, sampled every 2 ms
#     from /proc during the crash-restart runs (the whole life of a job with
#     a restart), and wait4's ru_maxrss of the launch runs (agent and its
#     reaped children: an upper bound).
#
# torchrun runs with --monitor_interval 0.1 (2.6's default; 1.13's is 5 s).
# torchrun 1.13 = Debian's python3-torch through bench/torchrun113.py;
# torchrun 2.6 = tests/torch26.sh (downloaded once) with USE_LIBUV=0 and
# bench/nolibuv on PYTHONPATH.  A launcher that is not available is left
# out with the reason.  Timing: bench/launch_timer.c (fork -> reaped).
#
# usage: BUILD=build sh bench/launch.sh     (after `make`; `make bench` runs it)
# env:   BENCH_RUNS        cgrun runs per cell (default 30)
#        BENCH_TORCH_RUNS  torchrun runs per cell (default 5)
#        BENCH_NPROCS      worker counts (default "1 8 32")
#        BENCH_LAUNCHERS   subset of "cgrun torchrun26 torchrun113"
#        BENCH_OUT         result file (default bench/results/launch.md)
set -u
cd "$(dirname "$0")/.." || exit 2
TOP=$(pwd)
BUILD=${BUILD:-build}
CGRUN=$TOP/$BUILD/cgrun
TIMER=$TOP/$BUILD/bench/launch_timer
PROBE=$TOP/$BUILD/bench/launch_probe
RUNS=${BENCH_RUNS:-30}
TRUNS=${BENCH_TORCH_RUNS:-5}
NPROCS=${BENCH_NPROCS:-1 8 32}
LAUNCHERS=${BENCH_LAUNCHERS:-cgrun torchrun26 torchrun113}
OUT=${BENCH_OUT:-$TOP/bench/results/launch.md}
CRASH_N=8
export PROBE_HOLD_MS=100	# attempt 1 lives long enough to be sampled
T=$(mktemp -d "${TMPDIR:-/tmp}/launch-bench.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
trap 'exit 1' INT TERM

for f in "$CGRUN" "$TIMER" "$PROBE"; do
	[ -x "$f" ] || { echo "launch.sh: $f missing: run make BUILD=$BUILD first" >&2; exit 1; }
done
start=$(date +%s)
load0=$(cut -d' ' -f1-3 /proc/loadavg)

# Which launchers run, and why the others do not.
have= missing=
for l in $LAUNCHERS; do
	case $l in
	cgrun) have="$have cgrun" ;;
	torchrun113)
		if /usr/bin/python3 -c 'import torch.distributed.run' >/dev/null 2>&1; then
			have="$have torchrun113"
		else
			missing="$missing- torchrun 1.13: not measured (no torch in /usr/bin/python3; Debian package python3-torch)\n"
		fi ;;
	torchrun26)
		echo "launch.sh: making sure torch 2.6 is there (tests/torch26.sh, a ~210 MB download once)" >&2
		if why=$(sh tests/torch26.sh --ensure 2>&1); then
			have="$have torchrun26"
		else
			missing="$missing- torchrun 2.6: not measured ($(echo "$why" | tail -n 1))\n"
		fi ;;
	*) echo "launch.sh: unknown launcher $l" >&2; exit 2 ;;
	esac
done

# timed NAME RUNS POLL_MS ARGS...: launch_timer over launcher NAME run with
# ARGS (torchrun spellings, which cgrun accepts); prints launch_timer's lines.
timed() {
	name=$1 runs=$2 poll=$3
	shift 3
	case $name in
	cgrun)
		"$TIMER" -n "$runs" -w 1 -p "$poll" -t 120 -- "$CGRUN" "$@" ;;
	torchrun113)
		"$TIMER" -n "$runs" -w 1 -p "$poll" -t 300 -- /usr/bin/python3 \
			"$TOP/bench/torchrun113.py" --monitor_interval 0.1 "$@" ;;
	torchrun26)
		USE_LIBUV=0 PYTHONPATH="$TOP/bench/nolibuv" "$TIMER" -n "$runs" -w 1 \
			-p "$poll" -t 300 -- sh "$TOP/tests/torch26.sh" -m \
			torch.distributed.run --monitor_interval 0.1 "$@" ;;
	esac
}

# field NAME LINE: the value of NAME=... in LINE.
field() { echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"; }

# runs_of NAME: runs per cell for launcher NAME.
runs_of() { if [ "$1" = cgrun ]; then echo "$RUNS"; else echo "$TRUNS"; fi; }

# 1. launch and exit of N no-op workers.
for l in $have; do
	for n in $NPROCS; do
		echo "launch.sh: $l launch+exit N=$n ($(runs_of $l) runs)" >&2
		timed "$l" "$(runs_of $l)" 0 --standalone --nproc_per_node="$n" \
			--no_python /bin/true > "$T/launch.$l.$n"
		tail -n 1 "$T/launch.$l.$n" >&2
	done
done

# 1b. The floor of the moment and cgrun without its workers, N=8: a shell
# starting 8 /bin/true and waiting; cgrun --dry-run (start-up, topology,
# placement plan; no store, no workers).
if echo " $have " | grep -q ' cgrun '; then
	echo "launch.sh: baselines N=8 ($RUNS runs)" >&2
	"$TIMER" -n "$RUNS" -w 1 -- sh -c 'for i in 1 2 3 4 5 6 7 8; do /bin/true & done; wait' \
		> "$T/launch.shell.8"
	"$TIMER" -n "$RUNS" -w 1 -- "$CGRUN" --standalone --nproc_per_node=8 --dry-run \
		--no_python /bin/true > "$T/launch.dryrun.8"
fi

# crash_run NAME I: one crash-restart job of launcher NAME; appends
# "first_ms last_ms vmhwm_kb status" to $T/crash.NAME.
crash_run() {
	d=$T/probe.$1.$2
	mkdir -p "$d"
	line=$(timed "$1" 1 2 --standalone --nproc_per_node=$CRASH_N \
		--max_restarts=1 --no_python "$PROBE" "$d" | tail -n 1)
	if [ "$(field ok "$line")" != 1 ] || [ ! -f "$d/crash" ]; then
		echo "- - - failed" >> "$T/crash.$1"
		return
	fi
	c=$(cat "$d/crash")
	cat "$d"/start.1.* | sort -n | awk -v c="$c" -v n="$CRASH_N" -v h="$(field vmhwm_kb "$line")" '
		NR == 1 { first = $1 } { last = $1; k++ }
		END { if (k != n) print "- - - missing"; else
		      printf "%.3f %.3f %s ok\n", (first - c) / 1e6, (last - c) / 1e6, h }' >> "$T/crash.$1"
}

# 2 and 3. crash-to-restart latency and the agent's peak RSS.
for l in $have; do
	r=$(runs_of $l)
	echo "launch.sh: $l crash-to-restart N=$CRASH_N ($r runs)" >&2
	: > "$T/crash.$l"
	i=0
	while [ $i -lt "$r" ]; do crash_run "$l" $i; i=$((i + 1)); done
	cat "$T/crash.$l" >&2
done

# median COLUMN FILE: median of a column over the lines ending in "ok".
median() {
	awk -v c="$1" '$NF == "ok" { print $c }' "$2" | sort -n | awk '
		{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2];
		else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
# largest COLUMN FILE: the largest value of a column over the "ok" lines.
largest() { awk -v c="$1" '$NF == "ok" { print $c }' "$2" | sort -n | tail -n 1; }
# okcount FILE: "ok/total" of crash runs.
okcount() { echo "$(grep -c ' ok$' "$1")/$(wc -l < "$1" | tr -d ' ')"; }
# cell NAME N KEY: KEY from the summary of a launch cell, or "-".
cell() {
	f=$T/launch.$1.$2
	[ -f "$f" ] || { echo "-"; return; }
	v=$(field "$3" "$(tail -n 1 "$f")")
	echo "${v:--}"
}
# ratio A B: A / B to one decimal, or "-".
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.0f×", a / b; else print "-" }'; }
# label NAME: the launcher's name in tables.
label() { case $1 in cgrun) echo cgrun ;; torchrun26) echo "torchrun 2.6" ;; torchrun113) echo "torchrun 1.13" ;; esac; }

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
v113=$(/usr/bin/python3 -c 'import torch; print(torch.__version__)' 2>/dev/null || echo -)
v26=$(sh tests/torch26.sh -c 'import torch; print(torch.__version__)' 2>/dev/null || echo -)
load1=$(cut -d' ' -f1-3 /proc/loadavg)
mkdir -p "$(dirname "$OUT")"
{
	echo "# Launcher benchmark: cgrun vs torchrun 2.6 and torchrun 1.13"
	echo
	echo "- machine: $(nproc) cores, $cpu, Linux $(uname -r), $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)"
	echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'), total run time $(( $(date +%s) - start )) s"
	echo "- load average (1/5/15 min) before: $load0, after: $load1"
	echo "- command: BUILD=$BUILD BENCH_RUNS=$RUNS BENCH_TORCH_RUNS=$TRUNS sh bench/launch.sh  (make bench)"
	echo "- cgrun $(git rev-parse --short HEAD 2>/dev/null || echo '?'); torch 1.13: $v113 (Debian python3-torch, bench/torchrun113.py); torch 2.6: $v26 (tests/torch26.sh, USE_LIBUV=0, bench/nolibuv)"
	echo "- torchrun runs with --monitor_interval 0.1; every launcher gets the same arguments, torchrun's spelling"
	printf "%b" "$missing"
	echo
	echo "## 1. Launch and exit of N no-op workers"
	echo
	echo "\`LAUNCHER --standalone --nproc_per_node=N --no_python /bin/true\`: wall time from fork to the launcher reaped,"
	echo "median (min–max) in ms over $RUNS runs for cgrun, $TRUNS for torchrun (one warm-up run each)."
	echo
	printf "| N |"; for l in $have; do printf " %s (ms) |" "$(label $l)"; done
	for l in $have; do [ "$l" = cgrun ] || printf " %s ÷ cgrun |" "$(label $l)"; done; echo
	printf "|---|"; for l in $have; do printf "%s" "---|"; done
	for l in $have; do [ "$l" = cgrun ] || printf "%s" "---|"; done; echo
	for n in $NPROCS; do
		printf "| %s |" "$n"
		for l in $have; do
			printf " %s (%s–%s) |" "$(cell $l $n median_ms)" "$(cell $l $n min_ms)" "$(cell $l $n max_ms)"
		done
		for l in $have; do
			[ "$l" = cgrun ] || printf " %s |" "$(ratio "$(cell $l $n median_ms)" "$(cell cgrun $n median_ms)")"
		done
		echo
	done
	echo
	echo "### What the time is made of (N=8)"
	echo
	echo "Median wall and CPU time (user + system of the process and its reaped children, from wait4)."
	echo "The shell row is this machine's floor at the time of the run for starting 8 processes."
	echo
	echo "| command | wall (ms) | CPU (ms) |"
	echo "|---|---|---|"
	echo "| \`sh -c 'for i in 1 .. 8; do /bin/true & done; wait'\` | $(cell shell 8 median_ms) | $(cell shell 8 cpu_ms) |"
	echo "| \`cgrun --standalone --nproc_per_node=8 --dry-run ...\` (start-up, topology, plan) | $(cell dryrun 8 median_ms) | $(cell dryrun 8 cpu_ms) |"
	for l in $have; do
		echo "| $(label $l), 8 no-op workers | $(cell $l 8 median_ms) | $(cell $l 8 cpu_ms) |"
	done
	echo
	echo "## 2. Crash-to-restart latency ($CRASH_N workers)"
	echo
	echo "Local rank 0 exits 1 on attempt 0 (\`--max_restarts=1 --no_python $BUILD/bench/launch_probe DIR\`);"
	echo "from its exit to the first and to the last of the $CRASH_N workers of attempt 1 running. Median ms (runs ok/total)."
	echo
	echo "| launcher | to first worker (ms) | to all $CRASH_N workers (ms) | runs |"
	echo "|---|---|---|---|"
	for l in $have; do
		echo "| $(label $l) | $(median 1 "$T/crash.$l") | $(median 2 "$T/crash.$l") | $(okcount "$T/crash.$l") |"
	done
	echo
	echo "## 3. Agent peak RSS"
	echo
	echo "VmHWM of the agent process over a whole crash-restart job ($CRASH_N workers, largest of the runs, sampled every 2 ms);"
	echo "ru_maxrss from wait4 over the launch runs (median; includes reaped children, so an upper bound)."
	echo
	printf "| launcher | VmHWM, crash-restart (KiB) |"; for n in $NPROCS; do printf " ru_maxrss N=%s (KiB) |" "$n"; done; echo
	printf "|---|---|"; for n in $NPROCS; do printf "%s" "---|"; done; echo
	for l in $have; do
		printf "| %s | %s |" "$(label $l)" "$(largest 3 "$T/crash.$l")"
		for n in $NPROCS; do printf " %s |" "$(cell $l $n maxrss_kb)"; done
		echo
	done
	echo
	echo "## Targets"
	echo
	c8=$(cell cgrun 8 median_ms) t8=$(cell torchrun26 8 median_ms)
	crash=$(median 2 "$T/crash.cgrun" 2>/dev/null) rss=$(largest 3 "$T/crash.cgrun" 2>/dev/null)
	awk -v c8="$c8" -v t8="$t8" -v cr="${crash:--}" -v rss="${rss:--}" 'BEGIN {
		m = "met"; n = "NOT met"
		printf "- launch+exit of 8 workers under 20 ms: %s ms, %s\n", c8, (c8 + 0 > 0 && c8 < 20) ? m : n
		if (t8 + 0 > 0) printf "- at least 100× faster than torchrun 2.6 at N=8: %.0f×, %s\n", t8 / c8, (t8 / c8 >= 100) ? m : n
		printf "- crash-to-restart under 10 ms (all workers of the next attempt running): %s ms, %s\n", cr, (cr + 0 > 0 && cr < 10) ? m : n
		printf "- agent peak RSS under 8 MB: %s KiB, %s\n", rss, (rss + 0 > 0 && rss < 8192) ? m : n
	}'
	echo
	echo "## Notes"
	echo
	echo "- Wall times include waiting for a CPU: read them with the load average above and the"
	echo "  shell row (what starting 8 processes cost at that moment). CPU time barely depends on"
	echo "  load: a launcher whose CPU time for a job exceeds a wall-time target cannot meet it on"
	echo "  this machine even when idle."
	echo "- Crash-to-restart includes noticing the exit: cgrun is woken by SIGCHLD, torchrun polls"
	echo "  every --monitor_interval (0.1 s here). cgrun's VmHWM is the agent process with its"
	echo "  embedded store; torchrun's is its Python agent (the store server is in-process too)."
	echo
	echo "Raw lines (launch_timer summaries; crash runs as first_ms last_ms vmhwm_kb):"
	echo
	echo '```'
	for f in "$T"/launch.* "$T"/crash.*; do
		[ -f "$f" ] || continue
		echo "$(basename "$f"): $(tail -n 1 "$f" | tr '\n' ' ')"
		case $f in *crash.*) sed 's/^/    /' "$f" ;; esac
	done
	echo '```'
} > "$OUT"
cat "$OUT"

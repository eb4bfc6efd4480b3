#!/bin/sh
# bench/early_agents.sh: agents started at the same moment as the agent
# that hosts the c10d rendezvous (the srun case), written to
# bench/results/early_agents.md.  For N = 4 and 16 agents on this machine
# (loopback addresses 127.0.0.2 ..), bench/early_agents.c forks N-1 agents
# with is_host=false and then the host, back to back, and measures the
# time from the first fork to the last of the N workers running (and to
# the last agent exiting).  Agents that find the endpoint not yet
# listening retry (launcher/backend/c10d.c, c10d_backoff).
#
# The floor row: the same N agents each --standalone, no rendezvous
# between them (early_agents -s): what starting N agents costs here.
#
# With BENCH_BASELINE=/path/to/an/older/cgrun the same cells run for it
# too, interleaved run by run with this build's, so a loaded machine
# weighs on both alike.
#
# usage: BUILD=build sh bench/early_agents.sh
# env:   BENCH_RUNS      runs per cell (default 20)
#        BENCH_AGENTS    agent counts (default "4 16")
#        BENCH_BASELINE  another cgrun to compare with (optional)
#        BENCH_OUT       result file (default bench/results/early_agents.md)
set -u
cd "$(dirname "$0")/.." || exit 2
TOP=$(pwd)
BUILD=${BUILD:-build}
CGRUN=$TOP/$BUILD/cgrun
EA=$TOP/$BUILD/bench/early_agents
RUNS=${BENCH_RUNS:-20}
AGENTS=${BENCH_AGENTS:-4 16}
BASE=${BENCH_BASELINE:-}
OUT=${BENCH_OUT:-$TOP/bench/results/early_agents.md}
T=$(mktemp -d "${TMPDIR:-/tmp}/early-bench.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
trap 'exit 1' INT TERM
for f in "$CGRUN" "$EA"; do
	[ -x "$f" ] || { echo "early_agents.sh: $f missing: run make BUILD=$BUILD first" >&2; exit 1; }
done
[ -z "$BASE" ] || [ -x "$BASE" ] || { echo "early_agents.sh: $BASE not executable" >&2; exit 1; }
load0=$(cut -d' ' -f1-3 /proc/loadavg)
start=$(date +%s)
# Ports below the ephemeral range: a port in it may be held by any
# client socket on the machine when the host binds it.
lo=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range)
port=$((lo - 12000 + $$ % 6000))

# One run of N agents of launcher L (cgrun, baseline, or floor); appends
# "running_ms exited_ms" (or "failed") to $T/L.N.
one() {
	bin=$CGRUN s=
	[ "$1" = baseline ] && bin=$BASE
	[ "$1" = floor ] && s=-s
	port=$((port + 1))
	line=$("$EA" $s -n "$2" -r 1 -p "$port" -- "$bin" | grep '^run=')
	case "$line" in *ok=1)
		echo "$line" | sed 's/.*all_running_ms=\([^ ]*\) all_exited_ms=\([^ ]*\).*/\1 \2/' >>"$T/$1.$2" ;;
	*) echo failed >>"$T/$1.$2" ;;
	esac
}

launchers="floor cgrun"
[ -n "$BASE" ] && launchers="floor cgrun baseline"
for n in $AGENTS; do
	echo "early_agents.sh: N=$n, $RUNS runs each of: $launchers" >&2
	i=0
	while [ $i -lt "$RUNS" ]; do
		for l in $launchers; do one "$l" "$n"; done
		i=$((i + 1))
	done
done

# stats FILE COLUMN: "median (min–max) ok/total" of the successful runs.
stats() {
	tot=$(wc -l <"$1")
	grep -v failed "$1" | awk -v c="$2" '{ print $c }' | sort -n | awk -v tot="$tot" '
		{ v[NR] = $1 }
		END { if (NR == 0) { print "– (0/" tot " ok)"; exit }
		      printf "%.1f (%.1f–%.1f) %d/%d\n", v[int((NR + 1) / 2)], v[1], v[NR], NR, tot }'
}

{
	echo "# Agents started with the hosting agent: time until every worker runs"
	echo
	echo "- machine: $(nproc) cores, $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1), Linux $(uname -r)"
	echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'), total run time $(( $(date +%s) - start )) s"
	echo "- load average (1/5/15 min) before: $load0, after: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "- command: BUILD=$BUILD BENCH_RUNS=$RUNS BENCH_AGENTS=\"$AGENTS\"${BASE:+ BENCH_BASELINE=$BASE} sh bench/early_agents.sh"
	echo "- cgrun: $(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet 2>/dev/null || echo '+changes')${BASE:+; baseline: $BASE}"
	echo
	echo "N agents of one c10d job (\`--nnodes=N --nproc-per-node=1\`, loopback addresses) forked back to"
	echo "back, the N-1 others first and the host (\`is_host=true\`) last, so the others find the"
	echo "endpoint not yet listening (bench/early_agents.c).  Time from the first fork to the last"
	echo "worker's first instruction, and to the last agent exited: median (min–max), successful/total runs."
	echo "The floor row: the same N agents (this build), each \`--standalone\`, no rendezvous between them."
	echo "The rows of one N ran interleaved, run by run, so a loaded machine weighs on them alike."
	echo
	echo "| N | launcher | all workers running (ms) | all agents exited (ms) |"
	echo "|---|---|---|---|"
	for n in $AGENTS; do
		for l in $launchers; do
			r=$(stats "$T/$l.$n" 1) e=$(stats "$T/$l.$n" 2)
			echo "| $n | $l | $r | ${e% *} |"
		done
	done
} >"$OUT"
cat "$OUT"

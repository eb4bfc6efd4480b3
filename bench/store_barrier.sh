#!/bin/sh
# bench/store_barrier.sh: the store barrier under two arrival patterns,
# cgrun-rdzvd against torch's own TCPStore servers, written to
# bench/results/store_barrier.md (raw lines: store_barrier.raw).
#
#  burst   bench/loadgen.c's "barrier N" (as in bench/store.sh): one
#          process, N pre-connected sockets, all N ADDs written in one
#          go, then WAIT; the server gets every request at once.
#  torch   real torch TCPStore clients (bench/torch_barrier.py): PROCS
#          processes of N/PROCS clients each (a thread per client, one
#          connection each), pre-connected; on "go" every client runs
#          torch 2.x's _store_based_barrier (ADD 1, ADD 0, SET by the last,
#          WAIT).  Arrivals are spread by the clients' own Python and GIL.
#          Clients of torch 1.13 (Debian) are measured against
#          cgrun-rdzvd and torch 1.13's server, clients of torch 2.6
#          against cgrun-rdzvd and torch 2.6's server (the 2.x handshake).
#
# Time: go -> the last client released (CLOCK_MONOTONIC).  Server CPU:
# utime + stime of the server process from go until every client process
# exited (torch) or the run ended (burst).  Every cell gets a fresh server;
# the cells of one size run interleaved, repetition by repetition, so a
# loaded machine weighs on all of them alike.  torch 2.6's libuv server is
# not measured: Debian builds torch without libuv.
#
# usage: BUILD=build sh bench/store_barrier.sh
#        BENCH_REPORT_ONLY=1 sh bench/store_barrier.sh   (rewrite the .md)
# env:   BENCH_SIZES   client counts (default "256 1024 4096")
#        BENCH_REPEAT  repetitions (default 5)
#        BENCH_PROCS   client processes of the torch pattern (default 16)
#        BENCH_T26_MAX the largest size with torch 2.6's server (default
#                      1024: bench/store.md saw its barrier fail from 4096)
set -u
cd "$(dirname "$0")/.." || exit 2
TOP=$(pwd)
BUILD=${BUILD:-build}
LOADGEN=$TOP/$BUILD/bench/loadgen
RDZVD=$TOP/$BUILD/cgrun-rdzvd
SIZES=${BENCH_SIZES:-256 1024 4096}
REPEAT=${BENCH_REPEAT:-5}
PROCS=${BENCH_PROCS:-16}
T26MAX=${BENCH_T26_MAX:-1024}
RAW=$TOP/bench/results/store_barrier.raw
OUT=$TOP/bench/results/store_barrier.md
T=$(mktemp -d "${TMPDIR:-/tmp}/store-barrier.XXXXXX") || exit 1
SPID=
trap 'stop; rm -rf "$T"' EXIT
trap 'exit 1' INT TERM
ulimit -n "$(ulimit -Hn)" 2>/dev/null
export USE_LIBUV=0

# The two pythons (torch26.sh execs its interpreter, so $! is python).
PY113=/usr/bin/python3
PY26="sh $TOP/tests/torch26.sh"

stop() {
	[ -n "$SPID" ] && kill "$SPID" 2>/dev/null && wait "$SPID" 2>/dev/null
	SPID=
}

# start NAME: a fresh server (cgrun, torch113, torch26); sets SPID, PORT.
start() {
	rm -f "$T/port" "$T/out"
	case $1 in
	cgrun) "$RDZVD" -d --host 127.0.0.1 --port 0 >"$T/out" 2>"$T/server.log" & ;;
	torch113) $PY113 "$TOP/tests/interop/torch_server.py" "$T/port" --timeout 600 >"$T/server.log" 2>&1 & ;;
	torch26) $PY26 "$TOP/tests/interop/torch_server.py" "$T/port" --timeout 600 >"$T/server.log" 2>&1 & ;;
	esac
	SPID=$!
	i=0
	while :; do
		[ "$1" = cgrun ] && PORT=$(sed -n 's/^listening on .*:\([0-9][0-9]*\)$/\1/p' "$T/out" 2>/dev/null)
		[ "$1" = cgrun ] || PORT=$(cat "$T/port" 2>/dev/null)
		[ -n "$PORT" ] && return 0
		kill -0 "$SPID" 2>/dev/null && [ $i -lt 1200 ] || { echo "store_barrier.sh: $1 did not start" >&2; cat "$T/server.log" >&2; return 1; }
		sleep 0.05
		i=$((i + 1))
	done
}

# ticks PID: utime + stime in clock ticks.
ticks() { sed 's/.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'; }

# burst SERVER N: one loadgen barrier; a raw line.
burst() {
	start "$1" || return
	d=v2
	[ "$1" = torch113 ] && d=v1
	line=$(timeout 300 "$LOADGEN" -p "$PORT" -d "$d" -P "$SPID" barrier "$2" 2>"$T/lg.err" | tail -n 1)
	stop
	ms=$(echo "$line" | sed -n 's/.* ms=\([^ ]*\).*/\1/p')
	cpu=$(echo "$line" | sed -n 's/.* cpu_us=\([^ ]*\).*/\1/p')
	echo "pattern=burst client=loadgen server=$1 n=$2 ok=$([ -n "$ms" ] && echo 1 || echo 0) ms=${ms:--} cpu_ms=$(awk -v c="${cpu:--1}" 'BEGIN { printf "%.0f", c / 1000 }')" | tee -a "$RAW"
}

# torch CLIENT SERVER N: one barrier of N real torch clients; a raw line.
torch() {
	start "$2" || return
	rm -f "$T"/res.* "$T/coord"
	per=$(( $3 / PROCS )) procs=$PROCS
	[ "$per" -ge 1 ] || { per=1 procs=$3; }
	pids=
	i=0
	if [ "$1" = 113 ]; then py=$PY113; else py=$PY26; fi
	while [ $i -lt "$procs" ]; do
		$py "$TOP/bench/torch_barrier.py" "$PORT" "$per" $((per * procs)) "$T/res.$i" 2>"$T/c.$i.err" &
		pids="$pids $!"
		i=$((i + 1))
	done
	timeout 900 $py "$TOP/bench/torch_barrier.py" coord "$PORT" $((per * procs)) "$SPID" "$T/coord" 2>"$T/coord.err"
	ok=$?
	for p in $pids; do wait "$p" || ok=1; done
	t1=$(ticks "$SPID")
	stop
	if [ $ok -ne 0 ] || [ ! -s "$T/coord" ]; then
		echo "pattern=torch client=$1 server=$2 n=$3 ok=0 error=\"$(tail -qn 1 "$T"/coord.err "$T"/c.0.err | tr '\n' ' ')\"" | tee -a "$RAW"
		return
	fi
	cat "$T"/res.* | awk -v go="$(cut -d' ' -f1 "$T/coord")" -v c0="$(cut -d' ' -f2 "$T/coord")" \
	    -v c1="$t1" -v hz="$(getconf CLK_TCK)" -v c="$1" -v s="$2" -v n=$((per * procs)) -v p="$procs" '
		{ if ($2 > last) last = $2; if ($1 > lastgo) lastgo = $1 }
		END { printf "pattern=torch client=%s server=%s n=%d procs=%d ok=1 ms=%.1f go_spread_ms=%.1f cpu_ms=%.0f\n",
		      c, s, n, p, (last - go) / 1e6, (lastgo - go) / 1e6, (c1 - c0) * 1000 / hz }' | tee -a "$RAW"
}

# report: store_barrier.md from the raw lines of the latest run.
report() {
	awk '
	/^run / { n = 0; hdr = $0; delete L; next }
	/^pattern=/ { L[++n] = $0 }
	END {
		print "# Store barrier under two arrival patterns: cgrun-rdzvd vs torch'"'"'s TCPStore servers"
		print ""
		print "- " hdr
		print "- machine: '"$(nproc) cores, $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1), Linux $(uname -r)"'"
		print "- command: BUILD=build sh bench/store_barrier.sh (settings in the line above)"
		print ""
		print "Time from go to the last client released, median (min–max) over the repetitions;"
		print "server CPU (utime + stime) median; ok/total.  burst: bench/loadgen.c, one process,"
		print "every request written at once.  torch: real TCPStore clients of the torch named,"
		print "16 processes with a thread per client, each running torch 2.x'"'"'s store-based barrier."
		print "torch 2.6'"'"'s libuv server is not measured (Debian builds torch without libuv)."
		print ""
		print "| pattern | clients | N | server | time (ms) | server CPU (ms) | ok |"
		print "|---|---|---|---|---|---|---|"
		for (i = 1; i <= n; i++) {
			split(L[i], f, " "); delete kv
			for (j in f) { split(f[j], p, "="); kv[p[1]] = p[2] }
			k = kv["pattern"] "|" kv["client"] "|" kv["n"] "|" kv["server"]
			if (!(k in seen)) { seen[k] = 1; order[++no] = k }
			tot[k]++
			if (kv["ok"] == 1) { ok[k]++; ms[k, ok[k]] = kv["ms"]; cpu[k, ok[k]] = kv["cpu_ms"] }
		}
		for (i = 1; i <= no; i++) {
			k = order[i]; m = ok[k] + 0
			split(k, c, "|")
			if (m == 0) { printf "| %s | %s | %s | %s | failed | | 0/%d |\n", c[1], c[2], c[3], c[4], tot[k]; continue }
			for (a = 1; a <= m; a++) { v[a] = ms[k, a] + 0; w[a] = cpu[k, a] + 0 }
			for (a = 1; a <= m; a++) for (b = a + 1; b <= m; b++) {
				if (v[b] < v[a]) { t = v[a]; v[a] = v[b]; v[b] = t }
				if (w[b] < w[a]) { t = w[a]; w[a] = w[b]; w[b] = t } }
			printf "| %s | %s | %s | %s | %.1f (%.1f–%.1f) | %d | %d/%d |\n", c[1], c[2], c[3], c[4],
			    v[int((m + 1) / 2)], v[1], v[m], w[int((m + 1) / 2)], m, tot[k]
		}
	}' "$RAW" >"$OUT"
}
[ -n "${BENCH_REPORT_ONLY:-}" ] && { report; cat "$OUT"; exit 0; }

echo "run date=\"$(date -u '+%Y-%m-%d %H:%M UTC')\" sizes=\"$SIZES\" repeat=$REPEAT procs=$PROCS load=\"$(cut -d' ' -f1-3 /proc/loadavg)\" cgrun=$(git rev-parse --short HEAD)" >>"$RAW"
for n in $SIZES; do
	r=0
	while [ $r -lt "$REPEAT" ]; do
		burst cgrun "$n"; burst torch113 "$n"
		[ "$n" -le "$T26MAX" ] && burst torch26 "$n"
		torch 113 cgrun "$n"; torch 113 torch113 "$n"
		if [ "$n" -le "$T26MAX" ]; then
			torch 26 cgrun "$n"; torch 26 torch26 "$n"
		fi
		r=$((r + 1))
	done
done
echo "store_barrier.sh: load after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
report

#!/bin/sh
# bench/store.sh: cgrun-rdzvd against torch's own TCPStore servers (1.13 from
# Debian's python3-torch, 2.6 from tests/torch26.sh, legacy backend) on
# loopback, measured by bench/loadgen in one run, written as tables to
# bench/results/store.md (raw loadgen lines in bench/results/store.raw).
#
# usage: BUILD=build sh bench/store.sh     (after `make`; `make bench` does both)
# env:   BENCH_SECS   seconds per ops cell (default 1)
#        BENCH_REPEAT times each ops cell is measured (default 1; the
#                     report takes the median)
#        BENCH_SIZES  barrier/storm sizes (default "256 1024 4096 8192 10000")
#        BENCH_SERVERS subset of "cgrun torch113 torch26"
#        BENCH_FLOORS subset of "floor floor-uring" (bench/floor.c, the
#                     least a server can spend per request; ops only)
#        BENCH_PHASES subset of "ops barrier storm idle"
#
# The ops phase runs every server at once and measures them in turn, cell
# by cell, so that a change in the machine's load weighs on all of them
# alike; the other phases give each server a fresh process of its own.
set -u
cd "$(dirname "$0")/.." || exit 2
TOP=$(pwd)
BUILD=${BUILD:-build}
LOADGEN=$TOP/$BUILD/bench/loadgen
RDZVD=$TOP/$BUILD/cgrun-rdzvd
FLOOR=$TOP/$BUILD/bench/floor
SECS=${BENCH_SECS:-1}
REPEAT=${BENCH_REPEAT:-1}
SIZES=${BENCH_SIZES:-256 1024 4096 8192 10000}
SERVERS=${BENCH_SERVERS:-cgrun torch113 torch26}
FLOORS=${BENCH_FLOORS-floor floor-uring}
PHASES=${BENCH_PHASES:-ops barrier storm idle}
OUT=$TOP/bench/results
RAW=$OUT/store.raw
T=$(mktemp -d "${TMPDIR:-/tmp}/store-bench.XXXXXX")
SPID=
RUNNING=

for f in "$LOADGEN" "$RDZVD" "$FLOOR"; do
	[ -x "$f" ] || { echo "store.sh: $f missing: run make BUILD=$BUILD first" >&2; exit 1; }
done
# 10,000 connections on each side, plus the server's own files.
ulimit -n "$(ulimit -Hn)" 2>/dev/null
[ "$(ulimit -n)" -ge 10100 ] 2>/dev/null ||
	echo "store.sh: warning: ulimit -n is $(ulimit -n); the 10,000-connection cells will fail" >&2

# Stop the running servers (started by us, by pid).
stop_server() {
	for p in $SPID $RUNNING; do
		kill "$p" 2>/dev/null && wait "$p" 2>/dev/null
	done
	SPID=
	RUNNING=
}
trap 'stop_server; rm -rf "$T"' EXIT
trap 'exit 1' INT TERM

# Wait (20 s at most) for a port file or a "listening on" line.
wait_port() {
	i=0
	while [ -z "$(sed -n "$2" "$1" 2>/dev/null)" ]; do
		kill -0 "$SPID" 2>/dev/null || { echo "store.sh: server died:" >&2; cat "$T/server.log" >&2; return 1; }
		[ $i -ge 400 ] && { echo "store.sh: no port from the server after 20 s" >&2; return 1; }
		sleep 0.05
		i=$((i + 1))
	done
	PORT=$(sed -n "$2" "$1" | head -n 1)
}

# start_server NAME: a fresh server; sets SPID, PORT, DIALECT.
start_server() {
	mkdir -p "$T"
	rm -f "$T/port" "$T/out"
	case $1 in
	cgrun|floor|floor-uring)
		case $1 in
		cgrun) "$RDZVD" -d --host 127.0.0.1 --port 0 >"$T/out" 2>"$T/server.log" & ;;
		floor) "$FLOOR" >"$T/out" 2>"$T/server.log" & ;;
		floor-uring) "$FLOOR" -u >"$T/out" 2>"$T/server.log" & ;;
		esac
		SPID=$!
		DIALECT=v2
		wait_port "$T/out" 's/^listening on .*:\([0-9][0-9]*\)$/\1/p' ;;
	torch113)
		/usr/bin/python3 "$TOP/tests/interop/torch_server.py" "$T/port" --timeout 600 >"$T/server.log" 2>&1 &
		SPID=$!
		DIALECT=v1
		wait_port "$T/port" 'p' ;;
	torch26)
		# exec chain: sh torch26.sh -> ld.so -> python; $! is that process
		sh "$TOP/tests/torch26.sh" "$TOP/tests/interop/torch_server.py" "$T/port" --timeout 600 >"$T/server.log" 2>&1 &
		SPID=$!
		DIALECT=v2
		wait_port "$T/port" 'p' ;;
	esac
}

# lg NAME ARGS: one loadgen run, its line (or a failure line) into RAW.
lg() {
	name=$1
	shift
	mkdir -p "$T"	# survive a stray clean-up of /tmp during long runs
	line=$(timeout 300 "$LOADGEN" -p "$PORT" -d "$DIALECT" -P "$SPID" "$@" 2>"$T/lg.err" | tail -n 1)
	[ -n "$line" ] || line="mode=$1 failed=1 args=$(echo "$*" | tr ' ' ,) error=\"$(tail -n 1 "$T/lg.err")\""
	echo "server=$name $line" | tee -a "$RAW"
}

have_server() {
	case $1 in
	torch113) /usr/bin/python3 -c 'import torch.distributed' 2>/dev/null ;;
	torch26) sh "$TOP/tests/torch26.sh" --ensure >/dev/null 2>&1 ;;
	floor-uring) ldd "$FLOOR" 2>/dev/null | grep -q liburing ;;	# built without liburing-dev
	*) true ;;
	esac
}

# BENCH_APPEND=1 keeps earlier lines (the report uses the last line of
# each cell); BENCH_REPORT_ONLY=1 only rewrites store.md from store.raw.
[ -n "${BENCH_APPEND:-}" ] || [ -n "${BENCH_REPORT_ONLY:-}" ] || : >"$RAW"
[ -n "${BENCH_REPORT_ONLY:-}" ] && SERVERS= && FLOORS=
start=$(date +%s)
LOAD0=$(cut -d" " -f1-3 /proc/loadavg)
[ -n "$SERVERS$FLOORS" ] && echo "run date=\"$(date -u '+%H:%M UTC')\" servers=\"$(echo $SERVERS $FLOORS)\" phases=\"$PHASES\" sizes=\"$SIZES\" secs=$SECS repeat=$REPEAT load=\"$LOAD0\"" >>"$RAW"
UP=
for s in $SERVERS $FLOORS; do
	if have_server "$s"; then
		UP="$UP $s"
	else
		echo "server=$s unavailable=1" | tee -a "$RAW"
	fi
done

# ops: all servers up at once, measured in turn for each cell.
ops_phase() {
	for s in $UP; do
		start_server "$s" || exit 1
		v=$(echo "$s" | tr - _)
		eval "port_$v=\$PORT pid_$v=\$SPID dialect_$v=\$DIALECT"
		RUNNING="$RUNNING $SPID"
		SPID=
	done
	for op in set get add cas tget; do
		for n in 1 16 256 1024; do
			r=0
			while [ $r -lt "$REPEAT" ]; do
				for s in $UP; do
					v=$(echo "$s" | tr - _)
					eval "PORT=\$port_$v SPID=\$pid_$v DIALECT=\$dialect_$v"
					lg "$s" ops "$op" "$n" "$SECS"
				done
				r=$((r + 1))
			done
		done
	done
	SPID=
	stop_server
}

case " $PHASES " in *" ops "*) [ -n "$UP" ] && ops_phase ;; esac
for s in $UP; do
	case $s in floor*) continue ;; esac	# not a store: ops only
	# Each phase gets a fresh server, so one phase's connections and keys
	# do not weigh on the next.
	for ph in $PHASES; do
		[ "$ph" = ops ] && continue
		start_server "$s" || exit 1
		case $ph in
		barrier|storm)
			for n in $SIZES; do lg "$s" "$ph" "$n"; done ;;
		idle)
			lg "$s" idle 10000 200 ;;
		esac
		stop_server
	done
done
secs=$(( $(date +%s) - start ))

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
t26=$(sh "$TOP/tests/torch26.sh" -c 'import torch; print(torch.__version__)' 2>/dev/null)
t113=$(/usr/bin/python3 -c 'import torch; print(torch.__version__)' 2>/dev/null)
python3 "$TOP/bench/store_report.py" "$RAW" >"$OUT/store.md" <<EOF
machine: $(nproc) cores, $cpu, Linux $(uname -r)
date: $(date -u '+%Y-%m-%d %H:%M UTC'), last invocation ${secs} s
command: BUILD=$BUILD sh bench/store.sh  (make bench; settings of each run below)
servers: cgrun-rdzvd $(git -C "$TOP" rev-parse --short HEAD 2>/dev/null); torch ${t113:-?} (Debian python3-torch); torch ${t26:-?} (Debian trixie via tests/torch26.sh, use_libuv=False)
somaxconn: $(cat /proc/sys/net/core/somaxconn), ulimit -n: $(ulimit -n), load average before: $LOAD0 (other processes share the cores)
EOF
echo "store.sh: wrote $OUT/store.md (${secs} s)"

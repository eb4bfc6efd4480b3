#!/bin/sh
# bench/etcd.sh: what a rendezvous through the etcd-v3 backend costs,
# against cgrun-rdzvd and torchrun's c10d in the same run, written to
# bench/results/etcd.md:
#
#  1. real agents on this machine: K agent processes (K = 2, 8, 32), one
#     worker each (`sh -c 'date +%s%N > FILE'`), --nnodes=K (the round
#     closes at K, no last call), launched back to back by this script:
#     cgrun over etcd-v3 (a 3-member etcd on loopback, tests/etcd/cluster.sh),
#     cgrun over c10d with one cgrun-rdzvd, torchrun 2.6 and torchrun 1.13
#     over c10d (the agent that binds the endpoint first hosts the
#     TCPStore).  Time from launching the first agent, and from launching
#     the last one, to the last worker's timestamp: "all agents started ->
#     all workers running", the same clock for every launcher (torchrun's
#     Python start-up and torch import are part of its agents' start).
#  2. larger K by simulation, same clock for both: bench/etcd_sim (K real
#     etcd-v3 backends in one process on one loop, spawn faked) against the
#     same etcd cluster, and bench/rdzv_sim (K native-protocol clients in
#     one process) against one cgrun-rdzvd: K-1 agents start (join), once
#     each has seen K-1 waiting (its STATUS) the last starts; time from the
#     last start / the first start to every agent holding its round; CPU of
#     the simulator and of the server side (the etcd members, the daemon);
#     etcd's gRPC calls per run from the members' /metrics.
#
# Runs are interleaved (every launcher once per repeat) and repeated;
# tables give the median and (min-max); the load average is noted before
# and after each K.  A launcher that is not available is left out with the
# reason; a failed run counts in "ok" and not in the figures.
#
# usage: BUILD=build sh bench/etcd.sh    (after `make`; `make bench` runs it)
# env:   BENCH_RUNS       repeats per cell (default 3)
#        BENCH_REAL_K     real agent counts (default "2 8 32")
#        BENCH_TORCH_K    those torchrun also runs (default: BENCH_REAL_K)
#        BENCH_TORCH_RUNS repeats of a torchrun cell with K > 8 (default 1:
#                         on 2 cores one torchrun run at K=32 takes minutes)
#        BENCH_SIM_K      simulated counts (default "2 8 32 128 256"; the
#                         etcd backend's limit is 256 nodes, ER_NODES_MAX)
#        BENCH_LAUNCHERS  subset of "etcd rdzvd torchrun26 torchrun113"
#        BENCH_OUT        result file (default bench/results/etcd.md)
set -u
cd "$(dirname "$0")/.." || exit 2
TOP=$(pwd)
BUILD=${BUILD:-build}
RUNS=${BENCH_RUNS:-3}
REAL_K=${BENCH_REAL_K:-2 8 32}
TORCH_K=${BENCH_TORCH_K:-$REAL_K}
TORCH_RUNS=${BENCH_TORCH_RUNS:-1}
SIM_K=${BENCH_SIM_K:-2 8 32 128 256}
LAUNCHERS=${BENCH_LAUNCHERS:-etcd rdzvd torchrun26 torchrun113}
OUT=${BENCH_OUT:-$TOP/bench/results/etcd.md}
AGENT_TIMEOUT=600
T=$(mktemp -d "${TMPDIR:-/tmp}/etcd-bench.XXXXXX") || exit 1
DPID=
cleanup() {
	[ -n "$DPID" ] && kill "$DPID" 2>/dev/null
	sh tests/etcd/cluster.sh down "$T/etcd" >/dev/null 2>&1
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

for f in cgrun cgrun-rdzvd bench/etcd_sim bench/rdzv_sim; do
	[ -x "$BUILD/$f" ] || { echo "etcd.sh: $BUILD/$f missing: run make BUILD=$BUILD first" >&2; exit 1; }
done
if ! sh tests/etcd/cluster.sh up "$T/etcd" 3 >"$T/cluster.out" 2>&1; then
	echo "etcd.sh: no etcd cluster: $(tail -n 1 "$T/cluster.out")"
	exit 77
fi
. "$T/etcd/cluster.env"
EPIDS="$ETCD_PID_1 $ETCD_PID_2 $ETCD_PID_3"
"$BUILD/cgrun-rdzvd" -d --host=127.0.0.1 --port=0 >"$T/d.out" 2>"$T/d.err" &
DPID=$!
i=0
until grep -q '^listening on ' "$T/d.out" 2>/dev/null; do
	[ $i -ge 200 ] && { echo "etcd.sh: cgrun-rdzvd did not start" >&2; exit 1; }
	sleep 0.05; i=$((i + 1))
done
DPORT=$(sed -n 's/^listening on .*:\([0-9]*\)$/\1/p' "$T/d.out" | head -n 1)

# Which launchers run, and why the others do not.
have= missing=
for l in $LAUNCHERS; do
	case $l in
	torchrun113)
		if /usr/bin/python3 -c 'import torch.distributed.run' >/dev/null 2>&1; then
			have="$have $l"
		else
			missing="$missing; torchrun 1.13: /usr/bin/python3 has no torch"
		fi ;;
	torchrun26)
		if sh tests/torch26.sh --ensure >"$T/t26" 2>&1; then
			have="$have $l"
		else
			missing="$missing; torchrun 2.6: $(tail -n 1 "$T/t26")"
		fi ;;
	*) have="$have $l" ;;
	esac
done

load() { cut -d' ' -f1-3 /proc/loadavg; }

# launch L I K DIR: agent I of K of launcher L in the background.
launch() {
	w="date +%s%N > $4/w.$2"
	case $1 in
	etcd) timeout $AGENT_TIMEOUT "$BUILD/cgrun" --nnodes="$3" --nproc-per-node=1 \
		--rdzv-backend=etcd-v3 --rdzv-endpoint="$ETCD_ENDPOINTS" \
		--rdzv-id="$RID" --no-python sh -c "$w" ;;
	rdzvd) timeout $AGENT_TIMEOUT "$BUILD/cgrun" --nnodes="$3" --nproc-per-node=1 \
		--rdzv-backend=c10d --rdzv-endpoint="127.0.0.1:$DPORT" \
		--rdzv-id="$RID" --no-python sh -c "$w" ;;
	torchrun26) USE_LIBUV=0 PYTHONPATH="$TOP/bench/nolibuv" timeout $AGENT_TIMEOUT \
		sh tests/torch26.sh -m torch.distributed.run --nnodes="$3" \
		--nproc-per-node=1 --rdzv-backend=c10d --rdzv-endpoint="127.0.0.1:$TPORT" \
		--rdzv-id="$RID" --monitor-interval=0.1 --no-python sh -c "$w" ;;
	torchrun113) timeout $AGENT_TIMEOUT /usr/bin/python3 bench/torchrun113.py \
		--nnodes="$3" --nproc_per_node=1 --rdzv_backend=c10d \
		--rdzv_endpoint="127.0.0.1:$TPORT" --rdzv_id="$RID" \
		--monitor_interval=0.1 --no_python sh -c "$w" ;;
	esac >"$4/log.$2" 2>&1 </dev/null &
	apids="$apids $!"
}

# real L K R: one run; appends "first_ms last_ms" (or "fail") to $T/real.L.K.
real() {
	out="$T/run.$1.$2.$3"
	mkdir -p "$out"
	RID="eb-$1-$2-$3-$$"
	TPORT=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	apids=
	first=$(date +%s%N)
	i=0
	while [ $i -lt "$2" ]; do launch "$1" $i "$2" "$out"; i=$((i + 1)); done
	last=$(date +%s%N)
	wait $apids
	n=$(ls "$out"/w.* 2>/dev/null | wc -l)
	if [ "$n" != "$2" ]; then
		echo "etcd.sh: $1 K=$2 run $3: $n/$2 workers ran: $(tail -n 2 "$out/log.0" | tr '\n' ' ')" >&2
		echo fail >>"$T/real.$1.$2"
	else
		end=$(cat "$out"/w.* | sort -n | tail -n 1)
		echo "$(( (end - first) / 1000000 )) $(( (end - last) / 1000000 ))" >>"$T/real.$1.$2"
	fi
	rm -rf "$out"
}

# stats FILE COL: "median (min-max)" of column COL over the lines that
# are not "fail" ("-" if none).
stats() {
	grep -v '^fail' "$1" 2>/dev/null | awk -v c="$2" '{ print $c }' | sort -n |
	awk '{ v[NR] = $1 } END {
		if (NR == 0) { print "-"; exit }
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		if (NR == 1) printf "%g\n", m
		else printf "%g (%g-%g)\n", m, v[1], v[NR] }'
}

# ok FILE: "good/all" runs.
ok() {
	echo "$(grep -vc '^fail' "$1")/$(wc -l <"$1")"
}

# rpcs: etcd's gRPC calls so far, summed over the members:
# "Range Txn Put LeaseGrant LeaseKeepAlive Watch".
rpcs() {
	for m in "$ETCD_MEMBER_1" "$ETCD_MEMBER_2" "$ETCD_MEMBER_3"; do
		curl -s --max-time 5 "http://$m/metrics"
	done | awk -F'[{}" ]+' '/^grpc_server_started_total/ {
		for (i = 2; i < NF; i++) if ($i == "grpc_method=") n[$(i + 1)] += $NF }
		END { print n["Range"] + 0, n["Txn"] + 0, n["Put"] + 0,
		    n["LeaseGrant"] + 0, n["LeaseKeepAlive"] + 0, n["Watch"] + 0 }'
}

# sim K R: one etcd_sim run and one rdzv_sim run; rows to $T/esim.K and
# $T/rsim.K ("fail" when one failed), etcd's gRPC calls to $T/rpc.K.
sim() {
	r0=$(rpcs)
	if row=$("$BUILD/bench/etcd_sim" "$ETCD_ENDPOINTS" "$1" $EPIDS 2>"$T/esim.err"); then
		echo "$row" | awk -F'|' '{ print $3, $4, $5, $6, $7, $8 }' >>"$T/esim.$1"
		echo "$r0 $(rpcs)" | awk '{ for (i = 1; i <= 6; i++) printf "%d ", $(i + 6) - $i; print "" }' >>"$T/rpc.$1"
	else
		echo "etcd.sh: etcd_sim K=$1 run $2: $(tail -n 3 "$T/esim.err" | tr '\n' ' ')" >&2
		echo fail >>"$T/esim.$1"
	fi
	if row=$("$BUILD/bench/rdzv_sim" 127.0.0.1 "$DPORT" "$DPID" "$1" 2>"$T/rsim.err" | tail -n 1); then
		echo "$row" | awk -F'|' '{ print $3, $4, $8 }' >>"$T/rsim.$1"
	else
		echo "etcd.sh: rdzv_sim K=$1 run $2: $(tail -n 3 "$T/rsim.err" | tr '\n' ' ')" >&2
		echo fail >>"$T/rsim.$1"
	fi
}

name() {
	case $1 in
	etcd) echo "cgrun, etcd-v3 (3 members)" ;;
	rdzvd) echo "cgrun, c10d + cgrun-rdzvd" ;;
	torchrun26) echo "torchrun 2.6, c10d" ;;
	torchrun113) echo "torchrun 1.13, c10d" ;;
	esac
}

start=$(date +%s)
echo "etcd.sh: real agents, K in $REAL_K, $RUNS runs, launchers:$have" >&2
for k in $REAL_K; do
	echo "$(load)" >"$T/load0.real.$k"
	r=1
	while [ $r -le "$RUNS" ]; do
		for l in $have; do
			case $l in torchrun*)
				[ "$k" -le 8 ] || [ $r -le "$TORCH_RUNS" ] || continue
				case " $TORCH_K " in *" $k "*) ;; *) continue ;; esac ;;
			esac
			real "$l" "$k" "$r"
		done
		r=$((r + 1))
	done
	echo "$(load)" >"$T/load1.real.$k"
	echo "etcd.sh: real K=$k done (load $(load))" >&2
done
echo "etcd.sh: simulated, K in $SIM_K" >&2
for k in $SIM_K; do
	echo "$(load)" >"$T/load0.sim.$k"
	r=1
	while [ $r -le "$RUNS" ]; do sim "$k" "$r"; r=$((r + 1)); done
	echo "$(load)" >"$T/load1.sim.$k"
	echo "etcd.sh: simulated K=$k done (load $(load))" >&2
done
# Every simulated job ended: nothing of cgrun's may be left in etcd.
left=$(ETCDCTL_API=3 etcdctl --endpoints="$ETCD_ENDPOINTS" get --prefix /cgrun/ \
	--keys-only 2>/dev/null | grep -c . || true)

mkdir -p "$(dirname "$OUT")"
{
echo "# etcd-v3 rendezvous benchmark (bench/etcd.sh)"
echo
echo "Generated by \`BUILD=$BUILD sh bench/etcd.sh\` (BENCH_RUNS=$RUNS,"
echo "BENCH_TORCH_RUNS=$TORCH_RUNS (torchrun runs at K > 8), BENCH_REAL_K=\"$REAL_K\", BENCH_TORCH_K=\"$TORCH_K\","
echo "BENCH_SIM_K=\"$SIM_K\")"
echo "at $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(date -u '+%F %H:%M') UTC, $(( $(date +%s) - start )) s;"
echo "$(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GB", $2 / 1048576 }' /proc/meminfo), $(uname -sr);"
echo "etcd $(etcd --version 2>/dev/null | sed -n 's/^etcd Version: //p'), 3 members on loopback (tests/etcd/cluster.sh)."
echo "Medians over the runs, (min-max); \"ok\" counts the runs where every"
echo "worker ran; load average (1, 5, 15 min) before and after each K."
[ -n "$missing" ] && echo "Not run:${missing#;}."
echo
echo "## Real agents: all agents started -> all workers running"
echo
echo "K agent processes on this machine, one worker each, \`--nnodes=K\`, launched"
echo "back to back; ms from launching the first agent / the last agent to the"
echo "last worker's first instruction (its \`date +%s%N\`)."
echo
echo "| K | launcher | first launch -> all workers (ms) | last launch -> all workers (ms) | ok | load before | load after |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for k in $REAL_K; do
	for l in $have; do
		[ -f "$T/real.$l.$k" ] || continue
		echo "| $k | $(name "$l") | $(stats "$T/real.$l.$k" 1) | $(stats "$T/real.$l.$k" 2) | $(ok "$T/real.$l.$k") | $(cat "$T/load0.real.$k") | $(cat "$T/load1.real.$k") |"
	done
done
echo
echo "## Simulated agents: etcd-v3 (bench/etcd_sim) and cgrun-rdzvd (bench/rdzv_sim)"
echo
echo "Same clock for both: K-1 agents start, each sees K-1 waiting, then the"
echo "last starts; ms from the last / the first start to every agent holding"
echo "its round.  etcd_sim's start includes its lease and first connections;"
echo "rdzv_sim connects and says HELLO before the clock.  CPU in ms over first"
echo "start -> all rounds: the simulator (all K agents), the 3 etcd members"
echo "together, the daemon.  etcd calls: gRPC calls the members started during"
echo "the whole run (start, round, finish, leave), summed over members."
echo
echo "| K | etcd: last start -> all rounds (ms) | etcd: first start -> all rounds (ms) | etcd_sim CPU (ms) | etcd members' CPU (ms) | etcd_sim peak RSS (MiB) | done -> all left (ms) | ok | rdzvd: last join -> all ROUNDs (ms) | rdzvd: first join -> all ROUNDs (ms) | daemon CPU (ms) | ok | load before | load after |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for k in $SIM_K; do
	e=$T/esim.$k r=$T/rsim.$k
	echo "| $k | $(stats "$e" 1) | $(stats "$e" 2) | $(stats "$e" 4) | $(stats "$e" 5) | $(stats "$e" 6) | $(stats "$e" 3) | $(ok "$e") | $(stats "$r" 1) | $(stats "$r" 2) | $(stats "$r" 3) | $(ok "$r") | $(cat "$T/load0.sim.$k") | $(cat "$T/load1.sim.$k") |"
done
echo
echo "Keys left under /cgrun/ in etcd after every simulated job ended: $left."
echo
echo "etcd gRPC calls per simulated run (median over runs, all members):"
echo
echo "| K | Range | Txn | Put | LeaseGrant | LeaseKeepAlive | Watch |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for k in $SIM_K; do
	[ -s "$T/rpc.$k" ] || continue
	echo "| $k | $(stats "$T/rpc.$k" 1 | cut -d' ' -f1) | $(stats "$T/rpc.$k" 2 | cut -d' ' -f1) | $(stats "$T/rpc.$k" 3 | cut -d' ' -f1) | $(stats "$T/rpc.$k" 4 | cut -d' ' -f1) | $(stats "$T/rpc.$k" 5 | cut -d' ' -f1) | $(stats "$T/rpc.$k" 6 | cut -d' ' -f1) |"
done
} >"$OUT"
cat "$OUT"

#!/bin/sh
# bench.sh: K real agents on this machine meeting through etcd-v3 (a
# 3-member etcd cluster on loopback), through c10d with one cgrun-rdzvd,
# and through torchrun 1.13's c10d (Debian's python3-torch, one agent
# hosting the TCPStore): milliseconds from launching the first agent, and
# from launching the last one, until every worker has started (one worker
# per agent, --nnodes=K so the round closes at K without a last call).
# usage: BUILD=build sh tests/etcd/bench.sh  (from the top; K from
# BENCH_K, default "2 8 32"; torchrun only for K in TORCH_K, default
# "2 8": its agents are heavy python processes).
set -e
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
BENCH_K=${BENCH_K:-2 8 32}
TORCH_K=${TORCH_K:-2 8}
T=$(mktemp -d "${TMPDIR:-/tmp}/cgrun-etcd-bench.XXXXXX")
DPID=
cleanup() {
	[ -n "$DPID" ] && kill "$DPID" 2>/dev/null
	sh tests/etcd/cluster.sh down "$T/etcd" >/dev/null 2>&1 || true
	rm -rf "$T"
}
trap cleanup EXIT

sh tests/etcd/cluster.sh up "$T/etcd" 3 >/dev/null 2>&1 || { echo "no etcd: $(tail -n 1 "$T/etcd"/* 2>/dev/null)"; exit 77; }
. "$T/etcd/cluster.env"
"$BUILD/cgrun-rdzvd" -d --host=127.0.0.1 --port=0 >"$T/d.out" 2>"$T/d.err" &
DPID=$!
i=0
until grep -q '^listening on ' "$T/d.out" 2>/dev/null; do
	[ $i -ge 200 ] && { echo "cgrun-rdzvd did not start" >&2; exit 1; }
	sleep 0.05; i=$((i + 1))
done
DPORT=$(sed -n 's/^listening on .*:\([0-9]*\)$/\1/p' "$T/d.out" | head -n 1)

# launch KIND I K OUT: agent I of K in the background.
launch() {
	w="date +%s%N > $4/w.$2"
	case $1 in
	etcd) "$BUILD/cgrun" --nnodes="$3" --nproc-per-node=1 --rdzv-backend=etcd-v3 \
		--rdzv-endpoint="$ETCD_ENDPOINTS" --rdzv-id="b$3-$$" --no-python sh -c "$w" ;;
	rdzvd) "$BUILD/cgrun" --nnodes="$3" --nproc-per-node=1 --rdzv-backend=c10d \
		--rdzv-endpoint="127.0.0.1:$DPORT" --rdzv-id="b$3-$$" --no-python sh -c "$w" ;;
	torchrun) /usr/bin/python3 bench/torchrun113.py --nnodes="$3" --nproc_per_node=1 \
		--rdzv_backend=c10d --rdzv_endpoint="127.0.0.1:$TPORT" --rdzv_id="b$3-$$" \
		--monitor_interval=0.1 --no_python sh -c "$w" ;;
	esac >"$4/log.$2" 2>&1 &
}

# run KIND K: prints "first-launch-ms last-launch-ms" to every worker up.
run() {
	out="$T/$1.$2"
	mkdir -p "$out"
	TPORT=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	first=$(date +%s%N)
	i=0
	while [ $i -lt "$2" ]; do launch "$1" $i "$2" "$out"; i=$((i + 1)); done
	last=$(date +%s%N)
	wait
	n=$(ls "$out"/w.* 2>/dev/null | wc -l)
	[ "$n" = "$2" ] || { echo "$1 K=$2: only $n workers ran; $(tail -n 3 "$out/log.0")" >&2; echo "- -"; return; }
	end=$(cat "$out"/w.* | sort -n | tail -n 1)
	echo "$(( (end - first) / 1000000 )) $(( (end - last) / 1000000 ))"
}

echo "| K | etcd-v3 (3 members) | c10d + cgrun-rdzvd | torchrun 1.13 c10d |"
echo "| --- | --- | --- | --- |"
for k in $BENCH_K; do
	e=$(run etcd "$k") r=$(run rdzvd "$k") t="not run"
	case " $TORCH_K " in *" $k "*)
		/usr/bin/python3 -c 'import torch' 2>/dev/null && t=$(run torchrun "$k") ;;
	esac
	echo "| $k | $e | $r | $t |"
done
echo
echo "(ms from launching the first agent / the last agent to the last worker"
echo " started; $(nproc) cores, $(uname -srm), $(date -u +%F))"

#!/bin/sh
# Rendezvous benchmark.
#  1. bench/rdzv_sim against one cgrun-rdzvd: K simulated agents (one
#     process, native protocol, keep-alives), time from the last JOIN to
#     every agent holding its ROUND, and the daemon's memory.
#  2. Side by side, K real agents on this machine: cgrun (c10d, one
#     cgrun-rdzvd) and torchrun 2.6 (c10d, one agent hosting the TCPStore),
#     time from launching the last agent to every worker running, and each
#     agent's peak RSS.
# usage: BUILD=build sh bench/rdzv.sh [SIM-K...]   (run from the top)
set -e
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
SIMK=${*:-16 256 1024 4096 10000}
REALK=${REALK:-2 4 8}
T=$(mktemp -d "${TMPDIR:-/tmp}/cgrun-bench.XXXXXX")
DPID=
cleanup() { [ -n "$DPID" ] && kill "$DPID" 2>/dev/null; [ -n "$KEEP" ] || rm -rf "$T"; }
trap cleanup EXIT

# start_daemon: cgrun-rdzvd on 127.0.0.1, free port; sets DPID, DPORT.
start_daemon() {
	"$BUILD/cgrun-rdzvd" -d --host=127.0.0.1 --port=0 >"$T/d.out" 2>"$T/d.err" &
	DPID=$!
	i=0
	while ! grep -q '^listening on ' "$T/d.out" 2>/dev/null; do
		[ $i -ge 200 ] && { echo "cgrun-rdzvd did not start" >&2; exit 1; }
		sleep 0.05; i=$((i + 1))
	done
	DPORT=$(sed -n 's/^listening on .*:\([0-9]*\)$/\1/p' "$T/d.out" | head -n 1)
}

echo "## Simulated agents (bench/rdzv_sim, one cgrun-rdzvd)"
echo
uname -srm; nproc | sed 's/^/cores: /'; date -u
echo
start_daemon
"$BUILD/bench/rdzv_sim" 127.0.0.1 "$DPORT" "$DPID" $SIMK
kill "$DPID"; wait "$DPID" 2>/dev/null || true; DPID=

# run_agents KIND K: launch K agents, the worker writes its start time;
# prints "ms_from_last_launch max_agent_rss_kib".
run_agents() {
	kind=$1 k=$2 out="$T/$1.$2"
	mkdir -p "$out"
	port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	i=0
	while [ $i -lt "$k" ]; do
		if [ "$kind" = cgrun ]; then
			/usr/bin/time -f %M -o "$out/rss.$i" "$BUILD/cgrun" --nnodes="$k" --nproc-per-node=1 \
				--rdzv-backend=c10d --rdzv-endpoint="127.0.0.1:$DPORT" --rdzv-id="bench$k-$$" \
				--no-python sh -c "date +%s%N > $out/w.$i" >"$out/log.$i" 2>&1 &
		else
			PYTHONPATH="$PWD/bench/nolibuv" /usr/bin/time -f %M -o "$out/rss.$i" sh tests/torch26.sh -m torch.distributed.run --nnodes="$k" \
				--nproc-per-node=1 --rdzv-backend=c10d --rdzv-endpoint="127.0.0.1:$port" \
				--rdzv-id="bench$k-$$" --no-python sh -c "date +%s%N > $out/w.$i" >"$out/log.$i" 2>&1 &
		fi
		i=$((i + 1))
	done
	last=$(date +%s%N)
	wait
	n=$(ls "$out"/w.* 2>/dev/null | wc -l)
	[ "$n" -eq "$k" ] || { echo "$kind K=$k: only $n/$k workers ran" >&2; tail -n 5 "$out"/log.* >&2; echo "- -"; return; }
	end=$(cat "$out"/w.* | sort -n | tail -n 1)
	rss=$(cat "$out"/rss.* | sort -n | tail -n 1)
	echo "$(( (end - last) / 1000000 )) $rss"
}

echo
echo "## Real agents on this machine: last agent launched -> every worker running"
echo
echo "| K agents | cgrun (ms) | cgrun agent peak RSS (KiB) | torchrun 2.6 (ms) | torchrun agent peak RSS (KiB) |"
echo "|---|---|---|---|---|"
start_daemon
have26=1
sh tests/torch26.sh --ensure >/dev/null 2>&1 || have26=0
for k in $REALK; do
	set -- $(run_agents cgrun "$k")
	c_ms=$1 c_rss=$2
	if [ $have26 = 1 ]; then
		set -- $(run_agents torchrun "$k")
		t_ms=$1 t_rss=$2
	else
		t_ms="(torch 2.6 unavailable)" t_rss=-
	fi
	echo "| $k | $c_ms | $c_rss | $t_ms | $t_rss |"
done

#!/bin/sh
# Scale-down on SIGTERM (torchrun #67742): an agent stopped by SIGTERM
# leaves the job (LEAVE) without closing it, so the server takes it out at
# once -- not after the keep-alive window, here 60 s -- and the two other
# nodes of a --nnodes=2:3 job finish in a round of two.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$TOP/tests/interop/lib.sh"
. "$TOP/tests/multinode/lib.sh"
start_rdzvd -v
export OUT="$T/out"
mkdir -p "$OUT"
envworker "$T/w.sh"
cat >"$OUT/hook.sh" <<'EOS'
if [ "$GROUP_WORLD_SIZE" = 3 ]; then
	i=0
	while [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
	exit 1
fi
EOS
common="--nnodes=2:3 --nproc-per-node=1 --rdzv-id=leave --no-python $T/w.sh
--rdzv-conf=keep_alive_interval=20,keep_alive_max_attempt=3,last_call_timeout=1"
agent a 127.0.0.2 $common
agent b 127.0.0.3 $common
agent c 127.0.0.4 $common
wait_count "$OUT/env.0.3.*" 3 30 "workers of the 3-node round"
kill -TERM "$(agent_pid c)"
expect_exit c 30 143
expect_exit a 30 0
expect_exit b 30 0
grep -q "dead: no keep-alive" "$T/rdzvd.log" &&
	fail "the node was declared dead instead of leaving"
[ "$(ls "$OUT"/env.0.2.* | wc -l)" -eq 2 ] || fail "no 2-node round: $(ls "$OUT")"
echo "ok: a SIGTERMed agent left at once; the job went on with 2 nodes"

#!/bin/sh
# c10d agents that start before the agent hosting the rendezvous
# (launcher/backend/c10d_link.c, c10d_backoff): they retry the endpoint after
# 1 ms, then twice as long each time up to 100 ms (with jitter), until
# read_timeout.
# - against an endpoint nobody listens on, with read_timeout=2, an agent
#   makes between 18 and 80 connection attempts (a fixed 200 ms retry
#   made 10 or 11; a fixed 1 ms one would make hundreds), then exits 75
#   naming the endpoint;
# - 4 agents started back to back, the 3 others before the host, all
#   run their worker and exit 0.
# Timing targets are in bench/early_agents.sh.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$TOP/tests/interop/lib.sh"

port=$(free_port)
timeout 20 "$CGRUN" -vv --rdzv-backend=c10d --rdzv-endpoint=127.0.0.1:$port \
    --rdzv-id=early --nnodes=2 --rdzv-conf=is_host=false,read_timeout=2 \
    --no-python true >"$T/nobody" 2>&1
rc=$?
[ $rc -eq 75 ] || fail "unreachable endpoint: exit $rc, want 75: $(tail -n 3 "$T/nobody")"
grep -q "cannot reach the rendezvous endpoint 127.0.0.1:$port" "$T/nobody" ||
	fail "endpoint not named: $(tail -n 2 "$T/nobody")"
n=$(grep -c 'c10d link DOWN -> CONNECTING' "$T/nobody")
[ "$n" -ge 18 ] && [ "$n" -le 80 ] ||
	fail "$n connection attempts in read_timeout=2 s, want 18-80 (backoff from 1 ms to 100 ms)"
echo "ok: $n connection attempts in 2 s, then exit 75"

# Four agents, the host last.
port=$(free_port)
pids=
for i in 0 1 2 3; do
	host=false
	[ $i -eq 3 ] && host=true
	timeout 60 "$CGRUN" --rdzv-backend=c10d --rdzv-endpoint=127.0.0.1:$port \
	    --rdzv-id=early4 --nnodes=4 --nproc-per-node=1 --local-addr=127.0.0.$((2 + i)) \
	    --rdzv-conf=is_host=$host --no-python sh -c ": >$T/ran.\$RANK" \
	    >"$T/a$i.log" 2>&1 &
	pids="$pids $!"
	track $!
done
i=0
for p in $pids; do
	wait "$p" || fail "agent $i exited $?: $(tail -n 3 "$T/a$i.log")"
	i=$((i + 1))
done
for r in 0 1 2 3; do
	[ -e "$T/ran.$r" ] || fail "rank $r did not run"
done
echo "ok: 4 agents started before their host all ran"

#!/bin/sh
# The static backend as torchrun 2.6 runs it, through the real binary:
#  - backend omitted, --rdzv-endpoint=HOST:PORT: HOST:PORT become
#    MASTER_ADDR/MASTER_PORT (over --master-addr/--master-port), node 0's
#    agent serves the workers' store there, TORCHELASTIC_RUN_ID is "none"
#    (or --rdzv-id), on one node and across two agents;
#  - one node with an explicit --master-port: the same, at
#    --master-addr:--master-port;
#  - a bad endpoint (no port, a port that is not a number, 0, out of range,
#    "a:b:c") is a one-line usage error, status 2, no worker started.
# Expected values confirmed with torchrun 2.6 (tests/torch26.sh -m
# torch.distributed.run, its TCPStore created with use_libuv=False):
#   --nnodes=1 --rdzv-endpoint=127.0.0.1:P   MASTER_ADDR=127.0.0.1
#       MASTER_PORT=P TORCHELASTIC_RUN_ID=none USE_AGENT_STORE=True
#   ... --master-addr=10.9.9.9 --master-port=1234: the endpoint wins
#   ... --rdzv-id=abc                        TORCHELASTIC_RUN_ID=abc
#   --nnodes=1 --master-port=P               127.0.0.1:P, run id none
#   127.0.0.1, 127.0.0.1:notaport, :70000, a:b:c: ValueError (exit 1);
#   torchrun accepts port 0 (then no node can reach the store): cgrun
#   refuses it.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
cd "$T" || exit 1
mkdir tmp
# A worker: its view of the job, then whether the store answers there
# (retrying for 10 s, as a TCPStore client does: node 0 may start last),
# then a barrier through files in $T/b (node 0's agent, whose store it is,
# must not finish before every rank got there).
WORKER='echo "E RANK=$RANK GROUP_RANK=$GROUP_RANK WORLD_SIZE=$WORLD_SIZE MASTER=$MASTER_ADDR:$MASTER_PORT RUN_ID=$TORCHELASTIC_RUN_ID AGENT_STORE=$TORCHELASTIC_USE_AGENT_STORE"
exec python3 "$0"'
cat > worker.py <<'EOPY'
import os, socket, sys, time
e = os.environ
for i in range(100):
    try:
        socket.create_connection((e["MASTER_ADDR"], int(e["MASTER_PORT"])), 10).close()
        break
    except ConnectionRefusedError:
        time.sleep(0.1)
else:
    sys.exit("store unreachable")
print("store reachable rank", e["RANK"], flush=True)
d = os.path.join(os.environ["B"], e["TORCHELASTIC_RUN_ID"] + e["MASTER_PORT"])
os.makedirs(d, exist_ok=True)
open(os.path.join(d, e["RANK"]), "w").close()
for i in range(200):
    if len(os.listdir(d)) >= int(e["WORLD_SIZE"]):
        sys.exit(0)
    time.sleep(0.05)
sys.exit("barrier: not every rank came")
EOPY
export B="$T/b"
# Free TCP ports on 127.0.0.1, one a line.
ports=$(python3 -c 'import socket
ss = [socket.socket() for _ in range(3)]
for s in ss: s.bind(("127.0.0.1", 0))
print("\n".join(str(s.getsockname()[1]) for s in ss))')
p1=$(echo "$ports" | sed -n 1p); p2=$(echo "$ports" | sed -n 2p); p3=$(echo "$ports" | sed -n 3p)
run() { env -u PET_MASTER_PORT -u PET_RDZV_ENDPOINT TMPDIR="$T/tmp" \
	timeout 30 "$CGRUN_BIN" --log-prefix=rank "$@" > out 2> err; }

# expect RANK LINE: the worker of RANK printed LINE and reached the store.
expect() {
	grep -q "^\[rank$1\]:E RANK=$1 $2\$" out || fail "rank $1: want '$2'; got: $(cat out err)"
	grep -q "^\[rank$1\]:store reachable rank $1\$" out || fail "rank $1: no store: $(cat out err)"
}

# One node, backend omitted, endpoint given.
run --nnodes=1 --nproc-per-node=2 --rdzv-endpoint=127.0.0.1:"$p1" \
	--master-addr=10.9.9.9 --master-port=1234 --no-python sh -c "$WORKER" "$T/worker.py" ||
	fail "endpoint on one node exited $?: $(cat err)"
for r in 0 1; do
	expect $r "GROUP_RANK=0 WORLD_SIZE=2 MASTER=127.0.0.1:$p1 RUN_ID=none AGENT_STORE=True"
done
run --nnodes=1 --rdzv-endpoint=localhost:"$p1" --rdzv-id=abc --no-python sh -c "$WORKER" "$T/worker.py" ||
	fail "endpoint with --rdzv-id exited $?: $(cat err)"
expect 0 "GROUP_RANK=0 WORLD_SIZE=1 MASTER=localhost:$p1 RUN_ID=abc AGENT_STORE=True"

# One node, explicit --master-port: torchrun's static backend too.
run --nnodes=1 --master-port="$p2" --no-python sh -c "$WORKER" "$T/worker.py" ||
	fail "--master-port on one node exited $?: $(cat err)"
expect 0 "GROUP_RANK=0 WORLD_SIZE=1 MASTER=127.0.0.1:$p2 RUN_ID=none AGENT_STORE=True"

# Two agents, backend omitted: node 0 serves the store at the endpoint.
for n in 1 0; do
	env -u PET_MASTER_PORT TMPDIR="$T/tmp" timeout 30 "$CGRUN_BIN" --log-prefix=rank --nnodes=2 \
		--node-rank=$n --nproc-per-node=2 --rdzv-endpoint=127.0.0.1:"$p3" \
		--no-python sh -c "$WORKER" "$T/worker.py" > "n$n.out" 2> "n$n.err" &
	eval "pid$n=\$!"
done
wait "$pid0" || fail "node 0 exited $?: $(cat n0.err)"
wait "$pid1" || fail "node 1 exited $?: $(cat n1.err)"
cat n0.out n1.out > out
for r in 0 1 2 3; do
	expect $r "GROUP_RANK=$((r / 2)) WORLD_SIZE=4 MASTER=127.0.0.1:$p3 RUN_ID=none AGENT_STORE=True"
done

# Bad endpoints: one line, status 2, no worker.
for ep in 127.0.0.1 127.0.0.1:notaport 127.0.0.1:0 127.0.0.1:70000 a:b:c \
    '[::1]' 127.0.0.1:-5; do
	run --nnodes=1 --rdzv-endpoint="$ep" --no-python sh -c 'echo WORKER RAN'
	rc=$?
	[ $rc -eq 2 ] || fail "--rdzv-endpoint=$ep exited $rc, want 2: $(cat err)"
	head -n 1 err | grep -qF "cgrun: --rdzv-endpoint $ep: " ||
		fail "--rdzv-endpoint=$ep: $(head -n 1 err)"
	[ "$(wc -l < err)" -eq 1 ] || fail "--rdzv-endpoint=$ep: not one line: $(cat err)"
	grep -q 'WORKER RAN' out && fail "--rdzv-endpoint=$ep: a worker ran"
done
echo "ok: static backend: endpoint as MASTER_ADDR:MASTER_PORT (1 and 2 nodes), run id none, --master-port on one node, 7 bad endpoints refused"

#!/bin/sh
# Slurm's environment through the real cgrun, without Slurm: the SLURM_*
# variables srun sets for a step, faked.  A 1-node step of a 3-node
# allocation runs its workers at once (nodes, run id and port from the
# step, -v saying so); two steps of one job run at the same time on the
# same first host without meeting; a 2-node step of a 3-node allocation
# (two agents on 127.0.0.2 and .3) forms one job of 2 nodes; several tasks
# per node are refused with status 2; a taken port is a readable error;
# the batch script's own shell keeps the job's values.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
on_fail() { for f in "$T"/*.log; do [ -f "$f" ] && { echo "== $f"; tail -n 20 "$f"; }; done; }
for v in $(env | sed -n 's/^\(SLURM_[A-Za-z0-9_]*\)=.*/\1/p; s/^\(PET_[A-Za-z0-9_]*\)=.*/\1/p'); do
	unset "$v"
done
unset CGRUN_RDZV_ENDPOINT CGRUN_SLURM CGRUN_SLURM_PORT
export CGRUN_CONFIG=/dev/null
FAST=keep_alive_interval=0.5,keep_alive_max_attempt=6,last_call_timeout=1,join_timeout=30

# A worker that records its environment in $T/env.<run id>.<rank>, after
# $HOLD seconds (so concurrent steps overlap).
cat >"$T/w.sh" <<'EOS'
#!/bin/sh
sleep "${HOLD:-0}"
echo "RANK=$RANK WORLD_SIZE=$WORLD_SIZE GROUP_WORLD_SIZE=$GROUP_WORLD_SIZE RUN_ID=$TORCHELASTIC_RUN_ID" >"$OUTDIR/env.$TORCHELASTIC_RUN_ID.$RANK"
EOS
chmod +x "$T/w.sh"
export OUTDIR="$T"

# The job: a 3-node allocation; its id from this shell's pid, so two runs
# of this test at once get different ports.
JOB=$((100000 + $$ % 50000))
export SLURM_JOB_ID=$JOB SLURM_JOB_NUM_NODES=3 SLURM_NNODES=3
export SLURM_JOB_NODELIST="localhost,fake[2-3]"
port() { echo $((20000 + (16 * JOB + $1) % 9000)); }

# step NAME STEPID NODELIST NNODES NODEID CGRUN-ARGS...: one agent of a
# step in the background, log $T/NAME.log, pid $T/NAME.pid.
step() {
	name=$1 sid=$2 list=$3 nn=$4 nid=$5
	shift 5
	SLURM_STEP_ID=$sid SLURM_STEPID=$sid SLURM_STEP_NODELIST=$list \
	SLURM_STEP_NUM_NODES=$nn SLURM_NNODES=$nn SLURM_NODEID=$nid \
	SLURM_LOCALID=0 SLURM_STEP_TASKS_PER_NODE="1(x$nn)" \
	    timeout 90 "$CGRUN_BIN" -v --rdzv-conf="$FAST" "$@" \
	    >"$T/$name.log" 2>&1 </dev/null &
	echo $! >"$T/$name.pid"
	track $!
}
# wait_step NAME: its exit status.
wait_step() {
	wait "$(cat "$T/$1.pid")"
}

# 1. A 1-node step in a 3-node allocation runs at once.
step one 0 localhost 1 0 --nproc-per-node=2 --no-python "$T/w.sh"
wait_step one || fail "1-node step exited $?"
for r in 0 1; do
	grep -q "WORLD_SIZE=2 GROUP_WORLD_SIZE=1 RUN_ID=$JOB.0" "$T/env.$JOB.0.$r" 2>/dev/null ||
		fail "rank $r of step 0: $(cat "$T/env.$JOB.0.$r" 2>&1)"
done
grep -q "site: nnodes=1 from SLURM_STEP_NUM_NODES" "$T/one.log" &&
grep -q "site: rdzv_endpoint=localhost:$(port 0) from the first host of SLURM_STEP_NODELIST, port 20000 + (16 \* $JOB + 0) mod 9000" "$T/one.log" &&
grep -q "site: rdzv_id=$JOB.0 from SLURM_JOB_ID and SLURM_STEP_ID" "$T/one.log" &&
grep -q "site: rdzv_backend=c10d from" "$T/one.log" ||
	fail "-v does not say where the step's values came from"
echo "ok: 1-node step of a 3-node allocation, values from the step"

# 2. Two steps at once on the same first host (srun --overlap twice).
HOLD=2 step s1 1 localhost 1 0 --nproc-per-node=1 --no-python "$T/w.sh"
HOLD=2 step s2 2 localhost 1 0 --nproc-per-node=1 --no-python "$T/w.sh"
wait_step s1 || fail "step 1 exited $?"
wait_step s2 || fail "step 2 exited $?"
[ -f "$T/env.$JOB.1.0" ] && [ -f "$T/env.$JOB.2.0" ] || fail "a concurrent step did not run"
grep -q "localhost:$(port 1) " "$T/s1.log" && grep -q "localhost:$(port 2) " "$T/s2.log" ||
	fail "concurrent steps not on their own ports"
echo "ok: two concurrent steps, own run ids and ports"

# 3. A 2-node step of the 3-node allocation: 2 nodes, not 3.  127.0.0.2
#    is no interface address here (lo has 127.0.0.1), so torchrun's is_host
#    heuristic cannot see it as this machine: node 0 is told to host.
step n0 3 "127.0.0.[2-3]" 2 0 --nproc-per-node=2 --local-addr=127.0.0.2 \
	--rdzv-conf="$FAST,is_host=1" --no-python "$T/w.sh"
step n1 3 "127.0.0.[2-3]" 2 1 --nproc-per-node=2 --local-addr=127.0.0.3 --no-python "$T/w.sh"
wait_step n0 || fail "node 0 of the 2-node step exited $?"
wait_step n1 || fail "node 1 of the 2-node step exited $?"
for r in 0 1 2 3; do
	grep -q "WORLD_SIZE=4 GROUP_WORLD_SIZE=2 RUN_ID=$JOB.3" "$T/env.$JOB.3.$r" 2>/dev/null ||
		fail "rank $r of the 2-node step: $(cat "$T/env.$JOB.3.$r" 2>&1)"
done
echo "ok: 2-node step of a 3-node allocation"

# 4. Several tasks per node: status 2, for every task, saying why.
for lid in 0 1; do
	SLURM_STEP_ID=4 SLURM_STEP_NODELIST=localhost SLURM_STEP_NUM_NODES=1 \
	SLURM_NODEID=0 SLURM_LOCALID=$lid SLURM_STEP_TASKS_PER_NODE=2 \
	    timeout 20 "$CGRUN_BIN" --nproc-per-node=1 --no-python "$T/w.sh" \
	    >"$T/tpn.log" 2>&1 </dev/null
	rc=$?
	[ "$rc" -eq 2 ] || fail "2 tasks per node, SLURM_LOCALID=$lid: exit $rc, want 2"
	grep -q "cgrun: Slurm started 2 tasks of this step on this node (SLURM_STEP_TASKS_PER_NODE=2, this is SLURM_LOCALID=$lid).*--ntasks-per-node=1" "$T/tpn.log" ||
		fail "2 tasks per node: no clear message"
done
[ ! -f "$T/env.$JOB.4.0" ] || fail "a refused step ran a worker"
echo "ok: several tasks per node refused (exit 2)"

# 5. The step's port taken by another program: exit 2, saying so.
python3 -c '
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
open(sys.argv[1], "w").write(str(s.getsockname()[1])); time.sleep(60)' "$T/busy.port" &
track $!
i=0
while [ ! -s "$T/busy.port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
busy=$(cat "$T/busy.port")
SLURM_STEP_ID=5 SLURM_STEP_NODELIST=localhost SLURM_STEP_NUM_NODES=1 SLURM_NODEID=0 \
CGRUN_SLURM_PORT=$busy timeout 20 "$CGRUN_BIN" --nproc-per-node=1 --no-python "$T/w.sh" \
    >"$T/busy.log" 2>&1 </dev/null
rc=$?
[ "$rc" -eq 2 ] || fail "taken port: exit $rc, want 2"
grep -q "cgrun: rendezvous port $busy on localhost, chosen for Slurm step $JOB.5 (.*CGRUN_SLURM_PORT), is already in use by another program" "$T/busy.log" ||
	fail "taken port: no readable message"
echo "ok: a taken port is a readable error"

# 6. The batch script's own shell: the job's values, as before.
timeout 20 "$CGRUN_BIN" -v --dry-run --nproc-per-node=1 --no-python "$T/w.sh" >"$T/shell.log" 2>&1 ||
	fail "job shell: exit $?"
grep -q "site: nnodes=3 from SLURM_JOB_NUM_NODES" "$T/shell.log" &&
grep -q "site: rdzv_endpoint=localhost:29400 from the first host of SLURM_JOB_NODELIST" "$T/shell.log" ||
	fail "job shell: not the job's values"
echo "ok: the job shell keeps the job's values"

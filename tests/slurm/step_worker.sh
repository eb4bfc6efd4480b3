#!/bin/sh
# A worker of the Slurm cluster tests (tests/slurm/t_slurm_cluster_*.sh), started
# by cgrun inside an srun step.  It records what cgrun gave it in
# $OUT/env.STEP.RANK (with its SLURM_NODEID, CUDA_VISIBLE_DEVICES and
# CPU affinity) and announces itself in $OUT/ready.STEP.RANK.  Then,
# with HOLD=1, it sleeps until it is killed; otherwise it waits (30 s at
# most) until $WANT workers of all steps are ready, so that concurrent
# steps are proven to run at once, writes $OUT/done.STEP.RANK and exits 0.
s=${SLURM_STEP_ID:-x}
f=$OUT/env.$s.$RANK
cpus=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
echo "STEP=$s HOST=$(hostname) RANK=$RANK LOCAL_RANK=$LOCAL_RANK WORLD_SIZE=$WORLD_SIZE GROUP_RANK=$GROUP_RANK GROUP_WORLD_SIZE=$GROUP_WORLD_SIZE MASTER_ADDR=$MASTER_ADDR MASTER_PORT=$MASTER_PORT RUN_ID=$TORCHELASTIC_RUN_ID NODEID=${SLURM_NODEID:-} CVD=${CUDA_VISIBLE_DEVICES:-} CPUS=$cpus" >"$f.tmp"
mv "$f.tmp" "$f"
: >"$OUT/ready.$s.$RANK"
if [ "${HOLD:-0}" = 1 ]; then
	while :; do sleep 1; done
fi
i=0
while [ "$(ls "$OUT"/ready.* | wc -l)" -lt "${WANT:-1}" ] && [ $i -lt 300 ]; do
	sleep 0.1
	i=$((i + 1))
done
echo "ready=$(ls "$OUT"/ready.* | wc -l) after $i ticks" >"$OUT/done.$s.$RANK"
exit 0

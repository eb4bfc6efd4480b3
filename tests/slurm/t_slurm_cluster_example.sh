#!/bin/sh
# On a real Slurm (tests/slurm/cluster.sh) with 4 fake GPUs per node:
# examples/slurm/train.sbatch as a user submits it, from the source tree,
# with only what this 2-CPU machine cannot give overridden on sbatch's
# command line (--cpus-per-task, the output file) and a short run (STEPS,
# CKPT).  The job must complete, with one worker per fake GPU: 2 nodes x 4
# GPUs = a DDP world of 8, every node's agent started its 4 workers, rank
# 0 printed the final weights' digest and the checkpoints were written.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$TOP/tests/slurm/cluster.sh"
PY=/usr/bin/python3
"$PY" -c 'import torch.distributed' >/dev/null 2>&1 ||
	slurm_skip "no torch in $PY (apt-get install python3-torch)"
command -v bash >/dev/null || slurm_skip "no bash (the example is a bash script)"
slurm_need
slurm_gpus 4
slurm_start 2
slurm_fake_nvml

out=$SL_DIR/example.out
export PATH="$(dirname "$CGRUN_BIN"):$PATH" PYTHON_EXEC=$PY CKPT=$SL_DIR/ckpt STEPS=8
cd "$CGRUN_TOP" || exit 1
SL_T0=$(date +%s)
SL_JOB=$(sbatch --parsable --cpus-per-task=2 -o "$out" examples/slurm/train.sbatch) ||
	slurm_fail "sbatch refused examples/slurm/train.sbatch"
slurm_wait_job "$SL_JOB" 120
echo "job $SL_JOB took $(($(date +%s) - SL_T0)) s"
state=$(scontrol show job "$SL_JOB" | sed -n 's/.*JobState=\([A-Z]*\).*/\1/p')
[ "$state" = COMPLETED ] || { tail -n 40 "$out"; slurm_fail "job $SL_JOB ended $state, want COMPLETED"; }
grep -E 'placement nproc|workers started|world_size|final step' "$out"
n=$(grep -c '^cgrun: placement nproc=4 gpus=4 gpu_source=nvml ' "$out")
[ "$n" = 2 ] || slurm_fail "$n agents planned 4 workers on 4 GPUs, want 2"
n=$(grep -c '^cgrun: workers started attempt=0 round=0 nproc=4 world_size=8 ' "$out")
[ "$n" = 2 ] || slurm_fail "$n agents started 4 workers of 8, want 2"
ok=$(sed -n 's/^cgrun: worker exited rank=\([0-9]*\) .* exited with status 0$/\1/p' "$out" |
	sort -n | tr '\n' ' ')
[ "$ok" = "0 1 2 3 4 5 6 7 " ] || slurm_fail "workers that exited 0: $ok, want ranks 0 to 7"
grep -q '^world_size=8 steps=8 ' "$out" || slurm_fail "rank 0 did not see a world of 8 workers"
grep -q '^final step=8 loss=[^ ]* sha256=[0-9a-f]\{64\}$' "$out" || slurm_fail "no final digest from rank 0"
[ -f "$CKPT/ckpt-000005.pt" ] || slurm_fail "no step 5 checkpoint in $CKPT: $(ls "$CKPT")"
[ -f "$CKPT/final.pt" ] || slurm_fail "no final weights in $CKPT"
echo "ok: examples/slurm/train.sbatch completed: 2 nodes x 4 fake GPUs = 8 workers, final digest and checkpoints written"

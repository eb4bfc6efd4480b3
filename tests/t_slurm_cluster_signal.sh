#!/bin/sh
# On a real Slurm (tests/slurm/cluster.sh): a batch job whose step runs
# `srun -N2 cgrun --nproc-per-node=2 tests/slurm/usr1_worker.py`; once the
# 4 workers are up, `scancel --signal=USR1 JOB` (what `sbatch
# --signal=USR1@N` does N seconds before the time limit) must reach the
# main process of every worker, which then checkpoints and exits 0, and
# the step and the job end with 0.  How many SIGUSR1 each worker got and
# whether the child in its process group got one too is printed: Slurm
# (proctrack/linuxproc) signals every process of the step, cgrun forwards
# to each worker's process group, so duplicates are reported, not judged.
: "${CGRUN_BIN:?}" "${CGRUN_TOP:?}"
. "$CGRUN_TOP/tests/slurm/cluster.sh"
PY=/usr/bin/python3
[ -x "$PY" ] || slurm_skip "no $PY"
slurm_need
slurm_start 3

O=$SL_DIR/out
mkdir -p "$O"
cat >"$O/job.sh" <<EOS
#!/bin/sh
export OUT=$O PYTHON_EXEC=$PY
srun -N2 "$CGRUN_BIN" -v --nproc-per-node=2 "$CGRUN_TOP/tests/slurm/usr1_worker.py" >"$O/step.out" 2>&1
echo \$? >"$O/step.rc"
EOS
slurm_submit 2 "$O/job.sh"
job=$SL_JOB
slurm_wait_files "$O/ready.*" 4 60 "workers up"
scancel --signal=USR1 "$job" || slurm_fail "scancel --signal=USR1 $job failed"
slurm_wait_job "$job" 30
echo "job $job took $(($(date +%s) - SL_T0)) s"
grep -E 'signal|USR1' "$O/step.out"
for r in 0 1 2 3; do
	[ -f "$O/ckpt.$r" ] || { tail -n 20 "$O/step.out"; slurm_fail "worker rank $r did not checkpoint on SIGUSR1"; }
	pid=$(sed -n 's/^pid=//p' "$O/ready.$r")
	grep -q "^pid=$pid usr1=[1-9]" "$O/ckpt.$r" ||
		slurm_fail "rank $r: the main process $pid did not get SIGUSR1: $(cat "$O/ckpt.$r")"
	echo "rank $r: $(cat "$O/ckpt.$r")"
done
slurm_step_ok "the step" "$O/step.rc" "$O/step.out"
state=$(scontrol show job "$job" | sed -n 's/.*JobState=\([A-Z]*\).*/\1/p')
[ "$state" = COMPLETED ] || slurm_fail "job $job ended $state, want COMPLETED"
echo "ok: scancel --signal=USR1 reached every worker's main process; all checkpointed, the job COMPLETED"

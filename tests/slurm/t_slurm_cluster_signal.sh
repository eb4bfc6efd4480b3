#!/bin/sh
# On a real Slurm (tests/slurm/cluster.sh): batch jobs whose step runs
# `srun -N2 cgrun --nproc-per-node=2 tests/slurm/usr1_worker.py`.  SIGUSR1
# must reach the main process of every worker, which then checkpoints and
# exits 0, and the step and the job end with 0 (COMPLETED), both ways:
#   1. `scancel --signal=USR1 JOB` once the 4 workers are up;
#   2. `#SBATCH --time=1 --signal=USR1@50`: Slurm itself signals the step
#      50 s before the time limit (slurmctld checks every 30 s or so, so it
#      comes 10 to 40 s after the start).
# How many SIGUSR1 each worker got and whether the child in its process
# group got one too is printed: Slurm (proctrack/linuxproc) signals every
# process of the step, cgrun forwards to each worker's process group, so
# duplicates are reported, not judged.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$TOP/tests/slurm/cluster.sh"
PY=/usr/bin/python3
[ -x "$PY" ] || slurm_skip "no $PY"
slurm_need
slurm_start 3

# submit NAME SBATCH-OPTION...: a 2-node job of the worker in $SL_DIR/NAME.
submit() {
	d=$SL_DIR/$1
	shift
	mkdir -p "$d"
	{
		echo '#!/bin/sh'
		for o in "$@"; do echo "#SBATCH $o"; done
		cat <<-EOS
		export OUT=$d PYTHON_EXEC=$PY
		srun -N2 "$CGRUN_BIN" -v --nproc-per-node=2 "$CGRUN_TOP/tests/slurm/usr1_worker.py" >"$d/step.out" 2>&1
		echo \$? >"$d/step.rc"
		EOS
	} >"$d/job.sh"
	slurm_submit 2 "$d/job.sh"
}

# check NAME: every worker's main process got SIGUSR1 and checkpointed,
# the step exited 0 and the job is COMPLETED.
check() {
	d=$SL_DIR/$1
	slurm_wait_job "$SL_JOB" 30
	echo "$1: job $SL_JOB took $(($(date +%s) - SL_T0)) s"
	grep -E 'signal|USR1' "$d/step.out"
	for r in 0 1 2 3; do
		[ -f "$d/ckpt.$r" ] || { tail -n 20 "$d/step.out"; slurm_fail "$1: worker rank $r did not checkpoint on SIGUSR1"; }
		pid=$(sed -n 's/^pid=//p' "$d/ready.$r")
		grep -q "^pid=$pid usr1=[1-9]" "$d/ckpt.$r" ||
			slurm_fail "$1: rank $r: the main process $pid did not get SIGUSR1: $(cat "$d/ckpt.$r")"
		echo "$1: rank $r: $(cat "$d/ckpt.$r")"
	done
	slurm_step_ok "$1: the step" "$d/step.rc" "$d/step.out"
	state=$(scontrol show job "$SL_JOB" | sed -n 's/.*JobState=\([A-Z]*\).*/\1/p')
	[ "$state" = COMPLETED ] || slurm_fail "$1: job $SL_JOB ended $state, want COMPLETED"
}

submit scancel
slurm_wait_files "$SL_DIR/scancel/ready.*" 4 60 "workers up"
scancel --signal=USR1 "$SL_JOB" || slurm_fail "scancel --signal=USR1 $SL_JOB failed"
check scancel

submit timelimit --time=1 --signal=USR1@50
slurm_wait_files "$SL_DIR/timelimit/ready.*" 4 60 "workers up"
slurm_wait_files "$SL_DIR/timelimit/ckpt.*" 4 55 "checkpoints after --signal=USR1@50"
check timelimit
echo "ok: scancel --signal=USR1 and --signal=USR1@50 reached every worker's main process; all checkpointed, the jobs COMPLETED"

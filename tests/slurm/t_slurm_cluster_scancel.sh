#!/bin/sh
# On a real Slurm (tests/slurm/cluster.sh): cancelling a running
# `srun -N2 cgrun --nproc-per-node=2 ...` leaves no process of the job
# behind, both ways:
#   1. `scancel JOB.STEP` (Slurm kills the step's processes);
#   2. `scancel JOB` (SIGTERM to the batch shell and every step; Slurm would
#      SIGKILL what it still tracks only after KillWait=30 s, so an end
#      within 15 s is cgrun's and its workers' own).
# After 1, within 15 s, no cgrun, worker or slurmstepd of the step is left
# in any node namespace (ip netns pids) or in the process table; after 2,
# nothing at all but the slurmds (the batch shell waits between the steps).
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$TOP/tests/slurm/cluster.sh"
command -v pgrep >/dev/null || slurm_skip "no pgrep (apt-get install procps)"
slurm_need
slurm_start 3

O=$SL_DIR/out
mkdir -p "$O"
# A copy with a name of this run's own, to be looked for in the process table.
W=$O/held_worker_$$.sh
cp "$CGRUN_TOP/tests/slurm/step_worker.sh" "$W"
cat >"$O/job.sh" <<EOS
#!/bin/sh
export HOLD=1
for s in 1 2; do
	mkdir -p "$O/\$s"
	OUT=$O/\$s srun -N2 "$CGRUN_BIN" -v --nproc-per-node=2 --no-python "$W" >"$O/\$s/step.out" 2>&1
	echo \$? >"$O/\$s/step.rc"
	while [ ! -e "$O/go" ]; do sleep 0.2; done
done
EOS

# left PATTERN: the processes in the nodes (but the slurmds) that match.
left() {
	slurm_leftovers | grep -E "$1"
}

# clean WHAT PATTERN: within 15 s no process matching PATTERN is left in the
# nodes and no worker script at all in the process table.
clean() {
	t0=$(date +%s)
	while [ "$(date +%s)" -lt $((t0 + 15)) ]; do
		[ -z "$(left "$2")" ] && ! pgrep -f "held_worker_$$" >/dev/null && break
		sleep 0.2
	done
	left=$(left "$2")
	[ -z "$left" ] || { echo "$left"; slurm_fail "processes left in the node namespaces 15 s after $1"; }
	pgrep -af "held_worker_$$" && slurm_fail "worker processes left 15 s after $1"
	echo "$1: nothing left after $(($(date +%s) - t0)) s"
}

slurm_submit 2 "$O/job.sh"
job=$SL_JOB
slurm_wait_files "$O/1/ready.*" 4 60 "workers of the first step up"
echo "running:"
slurm_leftovers
scancel "$job.0" || slurm_fail "scancel $job.0 failed"
clean "scancel $job.0" "held_worker_$$|^n[0-9]+ [0-9]+ [^ ]*/cgrun( |\$)|\\[$job\\.0\\]"
grep -v placement "$O/1/step.out" | tail -n 4

: >"$O/go"
slurm_wait_files "$O/2/ready.*" 4 60 "workers of the second step up"
scancel "$job" || slurm_fail "scancel $job failed"
clean "scancel $job" .
slurm_wait_job "$job" 20
grep -v placement "$O/2/step.out" | tail -n 6
echo "ok: neither scancel of a running step nor of its job left a process behind"

#!/bin/sh
# On a real Slurm (tests/slurm/cluster.sh): `srun -N2 --ntasks-per-node=2
# cgrun --nproc-per-node=2 ...`, several tasks (agents) per node out of
# habit, must not leave 4 agents fighting over one job: within 30 s the
# step either fails with cgrun saying why (a line naming the tasks per
# node) and no worker ran, or it runs as one agent per node: exactly the
# ranks 0..3 of one world of 4, each once, 2 on n1 and 2 on n2, and no agent
# waiting as a spare.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$TOP/tests/slurm/cluster.sh"
slurm_need
slurm_start 3

O=$SL_DIR/out
mkdir -p "$O"
cat >"$O/job.sh" <<EOS
#!/bin/sh
#SBATCH --ntasks-per-node=2
export OUT=$O
srun -N2 --ntasks-per-node=2 "$CGRUN_BIN" -v --nproc-per-node=2 --no-python \\
	"$CGRUN_TOP/tests/slurm/step_worker.sh" >"$O/step.out" 2>&1
echo \$? >"$O/step.rc"
EOS
slurm_run 2 30 "$O/job.sh"
rc=$(cat "$O/step.rc")
grep -v placement "$O/step.out" | tail -n 12
if [ "$rc" = 0 ]; then
	ranks=$(cat "$O"/env.* | sed 's/.* RANK=\([0-9]*\) .*/\1/' | sort -n | tr '\n' ' ')
	[ "$ranks" = "0 1 2 3 " ] || slurm_fail "the step exited 0 with ranks $ranks, want 0 1 2 3 once each"
	grep -L 'WORLD_SIZE=4 ' "$O"/env.* | grep -q . && slurm_fail "a WORLD_SIZE is not 4"
	hosts=$(sed 's/.* HOST=\([^ ]*\) .*/\1/' "$O"/env.* | sort -u | tr '\n' ' ')
	[ "$hosts" = "n1 n2 " ] || slurm_fail "the workers ran on $hosts, want one agent on each of n1 n2"
	grep 'as a spare' "$O/step.out" && slurm_fail "agents of the step wait as spares of their own job"
	echo "ok: 2 tasks per node ran as one agent per node"
else
	grep -i '^cgrun: .*tasks.*per.node\|^cgrun: .*tasks of this step' "$O/step.out" ||
		slurm_fail "the step exited $rc without cgrun saying that there are several tasks per node"
	ls "$O"/env.* >/dev/null 2>&1 && slurm_fail "the step failed, yet workers ran: $(ls "$O")"
	echo "ok: 2 tasks per node refused with a reason (exit $rc)"
fi

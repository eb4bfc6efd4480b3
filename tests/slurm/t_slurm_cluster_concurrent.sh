#!/bin/sh
# On a real Slurm (tests/slurm/cluster.sh): two steps at once in one 2-node
# allocation, `srun --overlap -N2 cgrun --nproc-per-node=2 ...` twice in the
# background, no rendezvous flag.  Both share the first node, yet each must
# run all 4 of its workers (each worker waits until the other step's are up
# too, so they really run at the same time) and exit 0, and the two steps
# must differ in TORCHELASTIC_RUN_ID and MASTER_PORT.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$TOP/tests/slurm/cluster.sh"
slurm_need
slurm_start 3

O=$SL_DIR/out
mkdir -p "$O"
cat >"$O/job.sh" <<EOS
#!/bin/sh
export OUT=$O WANT=8
for s in a b; do
	srun --overlap -N2 "$CGRUN_BIN" -v --nproc-per-node=2 --no-python \\
		"$CGRUN_TOP/tests/slurm/step_worker.sh" >"$O/\$s.out" 2>&1 &
	echo \$! >"$O/\$s.pid"
done
for s in a b; do
	wait \$(cat "$O/\$s.pid")
	echo \$? >"$O/\$s.rc"
done
EOS
slurm_run 2 60 "$O/job.sh"
for s in a b; do slurm_step_ok "step $s" "$O/$s.rc" "$O/$s.out"; done
cat "$O"/env.*
steps=$(ls "$O"/env.* | sed 's/.*env\.\([^.]*\)\..*/\1/' | sort -u)
[ "$(echo "$steps" | wc -l)" = 2 ] || slurm_fail "workers of $(echo $steps) steps, want 2 steps"
for s in $steps; do
	ranks=$(cat "$O"/env."$s".* | sed 's/.* RANK=\([0-9]*\) .*/\1/' | sort -n | tr '\n' ' ')
	[ "$ranks" = "0 1 2 3 " ] || slurm_fail "step $s ran ranks $ranks, want 0 1 2 3"
	grep -L 'WORLD_SIZE=4 ' "$O"/env."$s".* | grep -q . && slurm_fail "step $s: a WORLD_SIZE is not 4"
	for k in RUN_ID MASTER_PORT; do
		n=$(sed "s/.* $k=\([^ ]*\).*/\1/" "$O"/env."$s".* | sort -u | wc -l)
		[ "$n" = 1 ] || slurm_fail "step $s: $n values of $k among its workers"
	done
	for f in "$O"/done."$s".*; do
		grep -q '^ready=8 ' "$f" || slurm_fail "step $s: a worker did not see the other step running: $(cat "$f")"
	done
done
for k in RUN_ID MASTER_PORT; do
	n=$(sed "s/.* $k=\([^ ]*\).*/\1/" "$O"/env.* | sort -u | wc -l)
	[ "$n" = 2 ] || slurm_fail "the two steps share $k"
done
echo "ok: two concurrent steps, each with its 4 workers, distinct run ids and master ports"

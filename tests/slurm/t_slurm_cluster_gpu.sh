#!/bin/sh
# On a real Slurm (tests/slurm/cluster.sh) whose nodes have 4 fake GPUs
# each (GRES over fake device files, task/affinity binding CPUs): a 2-node
# job with 2 CPUs and 4 GPUs per node runs two steps at once,
#	srun -N2 --ntasks-per-node=1 -c1 --exact --gres=gpu:G \
#	    cgrun --nproc-per-node=gpu --gpu-visibility=own ...
# with G=1 and G=3, so Slurm gives each step its own GPUs
# (CUDA_VISIBLE_DEVICES) and its own CPU (the task's affinity); the
# agents see the GPUs through the fake NVML.  On every node of each step
# cgrun must start exactly G workers, worker LOCAL_RANK k with the k-th
# entry of the step's CUDA_VISIBLE_DEVICES, each bound within the CPUs
# Slurm gave the step.  The nodes are n9 and n10, whose names sort the
# other way round from their SLURM_NODEID: group ranks must still follow
# SLURM_NODEID, and node 0's agent hosts the rendezvous and the store.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$TOP/tests/slurm/cluster.sh"
slurm_need
[ "$(getconf _NPROCESSORS_ONLN)" -ge 2 ] || slurm_skip "needs 2 CPUs (one per step)"
slurm_gpus 4
slurm_start 3 9
slurm_fake_nvml

O=$SL_DIR/out
mkdir -p "$O"
cat >"$O/job.sh" <<EOS
#!/bin/sh
#SBATCH --ntasks-per-node=1 --cpus-per-task=2 --gres=gpu:4
export OUT=$O WANT=8
for g in 1 3; do
	srun -N2 --ntasks-per-node=1 -c1 --exact --gres=gpu:\$g --label sh -c \\
		'echo "CVD=\$CUDA_VISIBLE_DEVICES CPUS=\$(sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status)" \\
			>"\$OUT/step.\$SLURM_STEP_ID.\$SLURM_NODEID" &&
		exec "\$0" "\$@"' "$CGRUN_BIN" -v --nproc-per-node=gpu --gpu-visibility=own \\
		--no-python "$CGRUN_TOP/tests/slurm/step_worker.sh" >"$O/g\$g.out" 2>&1 &
	echo \$! >"$O/g\$g.pid"
done
for g in 1 3; do
	wait \$(cat "$O/g\$g.pid")
	echo \$? >"$O/g\$g.rc"
done
EOS
slurm_run 2 60 "$O/job.sh"
for g in 1 3; do slurm_step_ok "the gpu:$g step" "$O/g$g.rc" "$O/g$g.out"; done
cat "$O"/step.* "$O"/env.*

# within LIST SET: LIST (a CPU list, "0-2,5") is not empty and every CPU of
# it is in SET.
within() {
	[ -n "$1" ] || return 1
	awk -v a="$1" -v b="$2" 'function add(l, s,  n, i, r, x, c) {
		n = split(l, r, ",")
		for (i = 1; i <= n; i++) {
			if (split(r[i], x, "-") == 1) x[2] = x[1]
			for (c = x[1]; c <= x[2]; c++) s[c] = 1
		}
	}
	BEGIN { add(a, A); add(b, B); for (c in A) if (!(c in B)) exit 1 }'
}
# field NAME FILE: the value of NAME= in a worker's record.
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" "$2"; }

for g in 1 3; do
	s=$(sed -n "s/^0: .*rdzv_id=[^.]*\.\([0-9]*\) .*/\1/p" "$O/g$g.out" | head -n 1)
	[ -n "$s" ] || { cat "$O/g$g.out"; slurm_fail "gpu:$g: no step id in the -v log"; }
	for n in 0 1; do
		[ -f "$O/step.$s.$n" ] || slurm_fail "gpu:$g: no record of node $n's step environment"
		set -- $(sed 's/^CVD=\([^ ]*\) CPUS=\(.*\)/\1 \2/' "$O/step.$s.$n")
		cvd=$1 cpus=$2
		[ "$(echo "$cvd" | tr ',' '\n' | grep -c .)" = "$g" ] ||
			slurm_fail "gpu:$g: Slurm set CUDA_VISIBLE_DEVICES=$cvd on node $n"
		w=$(grep -l " NODEID=$n " "$O"/env."$s".* 2>/dev/null)
		[ "$(echo "$w" | grep -c .)" = "$g" ] ||
			slurm_fail "gpu:$g: node $n ran $(echo "$w" | grep -c .) workers, want $g (its gres GPUs)"
		for f in $w; do
			lr=$(field LOCAL_RANK "$f")
			want=$(echo "$cvd" | cut -d, -f$((lr + 1)))
			[ "$(field CVD "$f")" = "$want" ] ||
				slurm_fail "gpu:$g node $n local rank $lr: CUDA_VISIBLE_DEVICES=$(field CVD "$f"), want $want (entry $lr of $cvd)"
			within "$(field CPUS "$f")" "$cpus" ||
				slurm_fail "gpu:$g node $n local rank $lr: bound to CPUs $(field CPUS "$f"), outside the step's $cpus"
			[ "$(field GROUP_RANK "$f")" = "$n" ] ||
				slurm_fail "gpu:$g: SLURM_NODEID $n ($(field HOST "$f")) got GROUP_RANK $(field GROUP_RANK "$f")"
			[ "$(field MASTER_ADDR "$f")" = "$SL_NET.9" ] ||
				slurm_fail "gpu:$g: MASTER_ADDR=$(field MASTER_ADDR "$f"), want n9's $SL_NET.9 (SLURM_NODEID 0)"
		done
	done
	grep -q "^0: .*hosting the rendezvous on n9:" "$O/g$g.out" ||
		slurm_fail "gpu:$g: SLURM_NODEID 0 did not host the rendezvous"
	if grep -q "^1: .*c10d: hosting the rendezvous" "$O/g$g.out"; then
		slurm_fail "gpu:$g: SLURM_NODEID 1 hosts a rendezvous too"
	fi
done
echo "ok: steps of 1 and 3 fake GPUs: as many workers as GPUs, each on its own entry of CUDA_VISIBLE_DEVICES and within the step's CPUs; group ranks follow SLURM_NODEID"

#!/bin/sh
# On the real machine (no GPU): workers started with --cpu-bind read back
# their affinity (sched_getaffinity, via /proc/self/status) and it matches
# the --dry-run plan and their CGRUN_CPUSET; without binding they keep the
# agent's affinity; --nproc-per-node=gpu fails with a clear error.  Also
# the fake NVML on a fake machine: CUDA_VISIBLE_DEVICES per worker with
# --gpu-visibility=own, and the -v start-up log shows the plan.
set -u
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
export CGRUN_NVML_LIBRARY=none
unset CUDA_VISIBLE_DEVICES CUDA_DEVICE_ORDER HWLOC_XMLFILE
out=$T

# Each worker prints: local rank, kernel affinity, planned cpuset.
cat >"$out/w.sh" <<'W'
aff=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
echo "lr=$LOCAL_RANK aff=$aff plan=${CGRUN_CPUSET:-unset} bind=$CGRUN_CPU_BIND"
W

ncpu=$(getconf _NPROCESSORS_ONLN)
[ "$ncpu" -gt 8 ] && ncpu=8		# enough ranks, a bounded test
for mode in cores numa; do
	timeout 60 "$CGRUN_BIN" --nproc-per-node="$ncpu" --cpu-bind=$mode \
	    --dry-run x >"$out/plan" || fail_later "dry-run $mode"
	timeout 60 "$CGRUN_BIN" --nproc-per-node="$ncpu" --cpu-bind=$mode \
	    --no-python sh "$out/w.sh" >"$out/run" 2>"$out/err" ||
	    { fail_later "run $mode: $(cat "$out/err")"; continue; }
	n=$(grep -c 'lr=' "$out/run")
	[ "$n" -eq "$ncpu" ] || fail_later "$mode: $n of $ncpu workers reported"
	lr=0
	while [ "$lr" -lt "$ncpu" ]; do
		want=$(sed -n "s/^local_rank=$lr .* cpus=\([^ ]*\).*/\1/p" "$out/plan")
		line=$(grep "lr=$lr " "$out/run")
		case "$line" in
		*"aff=$want plan=$want bind=$mode") ;;
		*) fail_later "$mode rank $lr: want cpus=$want, got: $line" ;;
		esac
		lr=$((lr + 1))
	done
done

# --cpu-bind=none: the agent's own affinity, no CGRUN_CPUSET.
mine=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
timeout 60 "$CGRUN_BIN" --nproc-per-node=2 --cpu-bind=none --no-python \
    sh "$out/w.sh" >"$out/run" 2>"$out/err" || fail_later "run none"
[ "$(grep -c "aff=$mine plan=unset bind=none" "$out/run")" -eq 2 ] ||
    fail_later "none: $(cat "$out/run")"

# --mem-bind: the workers' memory policy, as the kernel reports it in
# /proc/self/numa_maps (bind:N, prefer..., default).
if [ -r /proc/self/numa_maps ]; then
	for m in bind:bind preferred:prefer none:default; do
		timeout 60 "$CGRUN_BIN" --nproc-per-node=2 --cpu-bind=cores \
		    --mem-bind="${m%%:*}" --no-python sh -c \
		    'echo "pol=$(head -n 1 /proc/self/numa_maps | cut -d" " -f2)"' \
		    >"$out/run" 2>"$out/err" || fail_later "mem-bind ${m%%:*}"
		if grep -q 'binding failed: \(Operation not permitted\|Function not implemented\)' \
		    "$out/err"; then
			skip_later "set_mempolicy refused here: --mem-bind not checked"
			break
		fi
		[ "$(grep -c "pol=${m#*:}" "$out/run")" -eq 2 ] ||
		    fail_later "mem-bind ${m%%:*}: $(cat "$out/run" "$out/err")"
	done
fi

# gpu on a machine without GPUs: a clear error, nothing started.
timeout 30 "$CGRUN_BIN" --nproc-per-node=gpu --no-python sh "$out/w.sh" \
    >"$out/run" 2>"$out/err" && fail_later "gpu succeeded without GPU"
grep -q 'no GPU found' "$out/err" || fail_later "gpu error: $(cat "$out/err")"
grep -q 'lr=' "$out/run" && fail_later "gpu error but workers ran"

# Fake NVML + fake machine: each worker sees only its own GPU.
fake="$CGRUN_BUILD/tests/place/fake_nvml/libnvidia-ml.so.1"
if [ -f "$fake" ]; then
	cat >"$out/g.sh" <<'W'
echo "lr=$LOCAL_RANK cvd=$CUDA_VISIBLE_DEVICES dev=$CGRUN_LOCAL_DEVICE bus=$CGRUN_GPU_BUS_ID numa=$CGRUN_NUMA_NODE"
W
	CGRUN_NVML_LIBRARY=$fake \
	HWLOC_XMLFILE="$CGRUN_TOP/tests/place/topologies/g4dn-2socket-8gpu.xml" \
	    timeout 60 "$CGRUN_BIN" -v --nproc-per-node=gpu \
	    --gpu-visibility=own --no-python sh "$out/g.sh" >"$out/run" \
	    2>"$out/err" || fail_later "nvml run: $(cat "$out/err")"
	grep -q "lr=5 cvd=GPU-fake0000-0000-0000-0000-000000000005 dev=0 bus=0000:e8:00.0 numa=1$" \
	    "$out/run" || fail_later "nvml own: $(cat "$out/run")"
	[ "$(grep -c 'lr=.* dev=0 ' "$out/run")" -eq 8 ] || fail_later "nvml: 8 workers"
	grep -q 'placement nproc=8 gpus=8 gpu_source=nvml' "$out/err" ||
	    fail_later "-v log lacks the plan summary"
	grep -q 'placement local_rank=7 gpu=7 bus_id=0000:f5:00.0 numa=1 ' \
	    "$out/err" || fail_later "-v log lacks rank 7's plan"
	# --virtual-local-rank: LOCAL_RANK=0, one GPU each, set_device(0)
	CGRUN_NVML_LIBRARY=$fake \
	HWLOC_XMLFILE="$CGRUN_TOP/tests/place/topologies/g4dn-2socket-8gpu.xml" \
	    timeout 60 "$CGRUN_BIN" --nproc-per-node=3 --virtual-local-rank \
	    --no-python sh "$out/g.sh" >"$out/run" 2>"$out/err" ||
	    fail_later "virtual-local-rank run: $(cat "$out/err")"
	[ "$(grep -c 'lr=0 cvd=[^,]* dev=0 bus=' "$out/run")" -eq 3 ] ||
	    fail_later "virtual-local-rank: $(cat "$out/run")"
	[ "$(sed -n 's/.* bus=\([^ ]*\) .*/\1/p' "$out/run" | sort -u | wc -l)" \
	    -eq 3 ] || fail_later "virtual-local-rank: GPUs not distinct"
else
	fail_later "fake NVML not built: $fake"
fi

echo "affinity matches the plan for $ncpu workers"

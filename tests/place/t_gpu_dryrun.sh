#!/bin/sh
# cgrun --dry-run on fake machines (HWLOC_XMLFILE = tests/place/topologies/*.xml,
# NVML off): the plan for --nproc-per-node=gpu, two ranks per GPU, fewer
# ranks than GPUs, CUDA_VISIBLE_DEVICES subsets and reorders, uneven GPUs,
# sub-NUMA groups, the CPU-only machine; --dry-run --json; errors.
# Expected bus ids, NUMA nodes and package cpus are the fixtures' facts
# (tests/place/topologies/README.md); the cpus split is whole cores in order.
set -u
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
TOPO=$TOP/tests/place/topologies
export CGRUN_NVML_LIBRARY=none
unset CUDA_VISIBLE_DEVICES CUDA_DEVICE_ORDER
out=$T

# plan MACHINE ARGS...: the dry-run plan (rank lines only) into $out/plan.
plan() {
	m=$1; shift
	HWLOC_XMLFILE="$TOPO/$m.xml" timeout 20 "$CGRUN_BIN" --dry-run "$@" \
	    train.py >"$out/all" 2>"$out/err"
	rc=$?
	grep '^local_rank=' "$out/all" >"$out/plan"
	return $rc
}

# has LINE: the plan has exactly this line.
has() {
	grep -qxF "$1" "$out/plan" || { fail_later "missing: $1"; sed 's/^/    /' "$out/all"; }
}

# nlines N: the plan has N rank lines.
nlines() {
	n=$(wc -l <"$out/plan")
	[ "$n" -eq "$1" ] || fail_later "expected $1 ranks, got $n"
}

# 2 sockets x 4 GPUs, one rank per GPU: 6 cores (12 PUs) each.
plan g4dn-2socket-8gpu --nproc-per-node=gpu || fail_later "g4dn gpu rc=$rc"
nlines 8
has "local_rank=0 gpu=0 bus_id=0000:18:00.0 numa=0 cpus=0-5,48-53"
has "local_rank=3 gpu=3 bus_id=0000:36:00.0 numa=0 cpus=18-23,66-71"
has "local_rank=4 gpu=4 bus_id=0000:e7:00.0 numa=1 cpus=24-29,72-77"
has "local_rank=7 gpu=7 bus_id=0000:f5:00.0 numa=1 cpus=42-47,90-95"
grep -q '^# placement nproc=8 gpus=8 gpu_source=hwloc cpu_bind=gpu' \
    "$out/all" || fail_later "summary line"

# two ranks per GPU: rank r and r+8 on GPU r, 3 cores each.
plan g4dn-2socket-8gpu --nproc-per-node=16 || fail_later "g4dn 16 rc=$rc"
nlines 16
has "local_rank=0 gpu=0 bus_id=0000:18:00.0 numa=0 cpus=0-2,48-50"
has "local_rank=8 gpu=0 bus_id=0000:18:00.0 numa=0 cpus=3-5,51-53"
has "local_rank=15 gpu=7 bus_id=0000:f5:00.0 numa=1 cpus=45-47,93-95"

# fewer ranks than GPUs: GPUs 0 and 1, both on socket 0, halves of it.
plan g4dn-2socket-8gpu --nproc-per-node=2 || fail_later "g4dn 2 rc=$rc"
nlines 2
has "local_rank=0 gpu=0 bus_id=0000:18:00.0 numa=0 cpus=0-11,48-59"
has "local_rank=1 gpu=1 bus_id=0000:19:00.0 numa=0 cpus=12-23,60-71"

# CUDA_VISIBLE_DEVICES subset and reorder: cuda:0 is physical 6.
CUDA_VISIBLE_DEVICES=6,2,7 plan g4dn-2socket-8gpu --nproc-per-node=gpu ||
    fail_later "g4dn cvd rc=$rc"
nlines 3
has "local_rank=0 gpu=0 bus_id=0000:f4:00.0 numa=1 cpus=24-35,72-83"
has "local_rank=1 gpu=1 bus_id=0000:35:00.0 numa=0 cpus=0-23,48-71"
has "local_rank=2 gpu=2 bus_id=0000:f5:00.0 numa=1 cpus=36-47,84-95"

# UUIDs (this capture has hwloc's NVML info, NVIDIAUUID) and prefixes.
CUDA_VISIBLE_DEVICES=GPU-3b0fc29b,GPU-029490c8-a116-638b-7018-1a6b7a9002ef \
    plan g4dn-2socket-8gpu --nproc-per-node=gpu || fail_later "g4dn uuid rc=$rc"
nlines 2
has "local_rank=0 gpu=0 bus_id=0000:e7:00.0 numa=1 cpus=24-47,72-95"
has "local_rank=1 gpu=1 bus_id=0000:18:00.0 numa=0 cpus=0-23,48-71"
# a UUID that cannot be resolved (no UUID known on this machine): error
CUDA_VISIBLE_DEVICES=GPU-3b0fc29b plan xeon-2socket-3gpu-uneven \
    --nproc-per-node=gpu && fail_later "unresolvable UUID accepted"
grep -q 'UUID' "$out/err" || fail_later "unresolvable UUID: $(cat "$out/err")"

# gpu-visibility own: CUDA_VISIBLE_DEVICES per rank in the JSON plan.
CUDA_VISIBLE_DEVICES=6,2 plan g4dn-2socket-8gpu --nproc-per-node=gpu \
    --gpu-visibility=own --json || fail_later "json rc=$rc"
grep -q '"cuda_visible_devices": *"6"' "$out/all" || fail_later "own: no CVD 6"
grep -q '"gpu_visibility": *"own"' "$out/all" || fail_later "own: summary"
if command -v python3 >/dev/null 2>&1; then
	python3 - "$out/all" <<'EOF' || fail_later "JSON plan"
import json, sys
p = json.load(open(sys.argv[1]))
assert p["nproc"] == 2 and p["gpus"] == 2, p
r = p["ranks"]
assert [x["bus_id"] for x in r] == ["0000:f4:00.0", "0000:35:00.0"], r
assert [x["numa"] for x in r] == [[1], [0]], r
assert [x["cuda_visible_devices"] for x in r] == ["6", "2"], r
assert [x["local_device"] for x in r] == [0, 0], r
assert len(r[0]["cpus"]) == 48 and r[0]["cpuset"] == "24-47,72-95", r
EOF
fi

# uneven: 1 GPU on NUMA 0, 2 on NUMA 1; by bus id, not OS device names.
plan xeon-2socket-3gpu-uneven --nproc-per-node=gpu || fail_later "xeon rc=$rc"
nlines 3
has "local_rank=0 gpu=0 bus_id=0000:03:00.0 numa=0 cpus=0-7,16-23"
has "local_rank=1 gpu=1 bus_id=0000:83:00.0 numa=1 cpus=8-11,24-27"
has "local_rank=2 gpu=2 bus_id=0000:84:00.0 numa=1 cpus=12-15,28-31"

# several NUMA nodes per socket, GPUs on some, one on the package itself;
# NVIDIA audio/USB/NVSwitch functions and an AMD GPU are not counted.
plan snc-2socket-4numa-4gpu --nproc-per-node=gpu || fail_later "snc rc=$rc"
nlines 4
has "local_rank=0 gpu=0 bus_id=0000:10:00.0 numa=0 cpus=0-6"
has "local_rank=1 gpu=1 bus_id=0000:20:00.0 numa=1 cpus=7-13"
has "local_rank=2 gpu=2 bus_id=0000:c1:00.0 numa=3 cpus=21-23"
has "local_rank=3 gpu=3 bus_id=0000:c2:00.0 numa=3 cpus=24-27"
plan snc-2socket-4numa-4gpu --nproc-per-node=gpu --numa-binding=socket ||
    fail_later "snc socket rc=$rc"
has "local_rank=3 gpu=3 bus_id=0000:c2:00.0 numa=2-3 cpus=14-27"

# CPU-only: gpu is an error; a number runs unbound by default; cores and
# numa bind; a GPU binding mode is an error.
plan haswell-2socket-4numa-cpuonly --nproc-per-node=gpu &&
    fail_later "cpu-only gpu succeeded"
grep -q 'no GPU found' "$out/err" || fail_later "cpu-only gpu: $(cat "$out/err")"
plan haswell-2socket-4numa-cpuonly --nproc-per-node=2 || fail_later "cpu-only 2"
has "local_rank=0 gpu=none bus_id=none numa=- cpus=unbound"
plan haswell-2socket-4numa-cpuonly --nproc-per-node=4 --cpu-bind=cores ||
    fail_later "cpu-only cores rc=$rc"
has "local_rank=1 gpu=none bus_id=none numa=1 cpus=7-13"
has "local_rank=3 gpu=none bus_id=none numa=3 cpus=21-27"
plan haswell-2socket-4numa-cpuonly --nproc-per-node=2 --cpu-bind=numa ||
    fail_later "cpu-only numa rc=$rc"
has "local_rank=1 gpu=none bus_id=none numa=2 cpus=14-20"
plan haswell-2socket-4numa-cpuonly --nproc-per-node=2 --cpu-bind=gpu &&
    fail_later "cpu-only --cpu-bind=gpu succeeded"
grep -q 'no GPU' "$out/err" || fail_later "cpu-bind=gpu: $(cat "$out/err")"

# bad values name the option
plan g4dn-2socket-8gpu --nproc-per-node=gpu --cpu-bind=sockets &&
    fail_later "bad --cpu-bind accepted"
grep -q -- '--cpu-bind' "$out/err" || fail_later "bad --cpu-bind: $(cat "$out/err")"

echo "dry-run plans ok"

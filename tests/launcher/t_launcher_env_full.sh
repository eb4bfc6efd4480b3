#!/bin/sh
# The whole environment of every worker, in order, compared with a
# checked-in expectation (tests/launcher/worker-env-full.txt): cgrun runs
# under `env -i` with a fixed agent environment, each worker dumps `env -0`
# into its log file, and only what differs from run to run is normalised
# (run id, store port, heartbeat fd number, temporary paths).  The cases
# cover every source of a worker's variables: torchrun's (DESIGN §3.1),
# cgrun's defaults (OMP_NUM_THREADS, PYTHONFAULTHANDLER), the placement
# plan's (CGRUN_*, CUDA_VISIBLE_DEVICES on a fake GPU machine) and the hang
# room's (CGRUN_HEARTBEAT_FD, TORCHELASTIC_TIMER_FILE), with and without
# the user's own values.
#
# CGRUN_ENV_FULL_WRITE=1 rewrites the fixture from this build instead of
# comparing (only when the environment workers get is meant to change).
set -u
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
FIXTURE=$CGRUN_TOP/tests/launcher/worker-env-full.txt
FAKE_NVML=$CGRUN_BUILD/tests/place/fake_nvml/libnvidia-ml.so.1
TOPO=$CGRUN_TOP/tests/place/topologies
[ -f "$FAKE_NVML" ] || fail "fake NVML not built: $FAKE_NVML"

# The sanitizer pass's settings reach cgrun but are not compared.
SAN=
for v in ASAN_OPTIONS LSAN_OPTIONS UBSAN_OPTIONS; do
	eval "val=\${$v-}"
	[ -n "$val" ] && SAN="$SAN $v=$val"
done

# run CASE [VAR=VALUE...] -- [cgrun options...]: one job of no-op workers
# under a fixed agent environment; prints "# case CASE" and then, per local
# rank, "LR NAME=VALUE" for every variable in the order the worker has it.
run() {
	name=$1; shift
	vars=
	while [ "$1" != -- ]; do vars="$vars $1"; shift; done
	shift
	rm -rf "$T/logs"
	# shellcheck disable=SC2086 # word splitting of the fixed lists wanted
	env -i PATH=/usr/bin:/bin HOME="$T" LC_ALL=C AGENT_ONLY=kept \
	    CGRUN_NVML_LIBRARY=none $SAN $vars \
	    timeout 30 "$CGRUN_BIN" --log-dir="$T/logs" --redirects=3 "$@" \
	    --no-python /usr/bin/env -0 >"$T/out" 2>"$T/err" ||
	    fail "case $name: cgrun exited $?: $(cat "$T/err")"
	echo "# case $name"
	for f in "$T"/logs/*/attempt_0/*/stdout.log; do
		[ -f "$f" ] || fail "case $name: no worker log in $T/logs"
		lr=$(basename "$(dirname "$f")")
		tr '\0' '\n' <"$f" | grep -v -E '^(A|L|UB)SAN_OPTIONS=' |
		    sed "s/^/$lr /"
	done
}

# Everything that differs between runs, as placeholders: the run id (a
# uuid4 in standalone jobs), the random suffix of the log directory, the
# store's port, the heartbeat channel's fd number, the temporary, build
# and source directories.
normalise() {
	sed -E -e "s|$T|<T>|g" -e "s|$CGRUN_BUILD|<BUILD>|g" \
	    -e "s|$CGRUN_TOP|<TOP>|g" \
	    -e 's/[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}/<RUN_ID>/g' \
	    -e 's|(/logs/[^/]*_)[A-Za-z0-9]{6}/|\1<RND>/|g' \
	    -e 's/^([0-9]+ MASTER_PORT=)[0-9]+$/\1<PORT>/' \
	    -e 's/^([0-9]+ CGRUN_HEARTBEAT_FD=)[0-9]+$/\1<FD>/'
}

{
	# Two workers on a machine without GPUs: torchrun's variables, the
	# plan's, OMP_NUM_THREADS=1.
	run cpu HWLOC_XMLFILE="$TOPO/haswell-2socket-4numa-cpuonly.xml" -- \
	    --standalone --nproc-per-node=2
	# The user's OMP_NUM_THREADS, NCCL setting and stale torchrun values of
	# an outer launcher; --role, --max-restarts, --rdzv-id,
	# --signals-to-handle, --cpu-bind.
	run user HWLOC_XMLFILE="$TOPO/haswell-2socket-4numa-cpuonly.xml" \
	    OMP_NUM_THREADS=3 TORCH_NCCL_ASYNC_ERROR_HANDLING=0 RANK=99 \
	    MASTER_PORT=1 TORCHELASTIC_USE_AGENT_STORE=False -- \
	    --nproc-per-node=2 --role=trainer --max-restarts=2 --rdzv-id=job7 \
	    --signals-to-handle=SIGTERM,SIGUSR1 --cpu-bind=numa
	# The hang room: heartbeat channel, FileTimer FIFO, PYTHONFAULTHANDLER;
	# one worker: no OMP_NUM_THREADS.
	run hang HWLOC_XMLFILE="$TOPO/haswell-2socket-4numa-cpuonly.xml" \
	    TORCHELASTIC_ENABLE_FILE_TIMER=1 -- \
	    --standalone --nproc-per-node=1 --hang-timeout=1h
	# The user's PYTHONFAULTHANDLER is kept; FileTimer alone.
	run hang_user HWLOC_XMLFILE="$TOPO/haswell-2socket-4numa-cpuonly.xml" \
	    TORCHELASTIC_ENABLE_FILE_TIMER=1 PYTHONFAULTHANDLER=0 -- \
	    --standalone --nproc-per-node=2
	# A GPU machine: each rank's GPU, its cpus and NUMA node; with
	# --gpu-visibility=own its own CUDA_VISIBLE_DEVICES.
	run gpu_own HWLOC_XMLFILE="$TOPO/g4dn-2socket-8gpu.xml" \
	    CGRUN_NVML_LIBRARY="$FAKE_NVML" -- \
	    --standalone --nproc-per-node=2 --gpu-visibility=own
	# --virtual-local-rank under the user's CUDA_VISIBLE_DEVICES.
	run virtual HWLOC_XMLFILE="$TOPO/g4dn-2socket-8gpu.xml" \
	    CGRUN_NVML_LIBRARY="$FAKE_NVML" CUDA_VISIBLE_DEVICES=5,2,7 -- \
	    --standalone --nproc-per-node=2 --virtual-local-rank
} | normalise >"$T/got" || exit 1

if [ "${CGRUN_ENV_FULL_WRITE:-0}" = 1 ]; then
	{
		sed -n '/^#@/p' "$FIXTURE" 2>/dev/null
		cat "$T/got"
	} >"$FIXTURE.new" && mv "$FIXTURE.new" "$FIXTURE"
	echo "wrote $FIXTURE ($(grep -vc '^#' "$FIXTURE") variables)"
	exit 0
fi
grep -v '^#@' "$FIXTURE" >"$T/want"
diff -u "$T/want" "$T/got" ||
	fail "worker environments differ from $FIXTURE (- expected, + got)"
echo "$(grep -c '^# case' "$T/want") cases, $(grep -vc '^#' "$T/want") variables: the same, in the same order"

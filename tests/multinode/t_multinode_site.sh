#!/bin/sh
# Site defaults: "cgrun --nnodes=2 --nproc-per-node=1 script" as typed,
# with the endpoint from the site file (CGRUN_CONFIG) and the run id from
# SLURM_JOB_ID, forms one job (-v says where each value came from);
# CGRUN_RDZV_ENDPOINT and the command line win over the file; without any
# job id the agent refuses with a clear message asking for --rdzv-id.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$TOP/tests/interop/lib.sh"
. "$TOP/tests/multinode/lib.sh"
unset SLURM_JOB_ID SLURM_JOB_NUM_NODES SLURM_NNODES SLURM_JOB_NODELIST \
	SLURM_NODELIST PBS_JOBID LSB_JOBID FLUX_JOB_ID CGRUN_RDZV_ENDPOINT \
	PET_RDZV_ENDPOINT PET_RDZV_ID PET_NNODES PET_RDZV_BACKEND
start_rdzvd
export OUT="$T/out"
mkdir -p "$OUT"
envworker "$T/w.sh"
printf '# cgrun site file\nrdzv_endpoint = "127.0.0.1:%s"\nrdzv_conf = %s\n' "$RDZVD_PORT" "$FAST_CONF" >"$T/cgrun.conf"
export CGRUN_CONFIG="$T/cgrun.conf"

# 1. As typed, under a batch job.
for n in 2 3; do
	SLURM_JOB_ID=4242 "$CGRUN" -v --nnodes=2 --nproc-per-node=1 --local-addr=127.0.0.$n \
		--no-python "$T/w.sh" >"$T/s$n.log" 2>&1 &
	echo $! >"$T/s$n.pid"
done
for n in 2 3; do expect_exit s$n 60 0; done
for r in 0 1; do
	grep -q "WORLD_SIZE=2 .*RUN_ID=4242" "$OUT/env.0.2.$r" 2>/dev/null ||
		{ cat "$T/s2.log"; fail "rank $r: $(cat "$OUT/env.0.2.$r" 2>&1)"; }
done
grep -q "site: rdzv_endpoint=127.0.0.1:$RDZVD_PORT from $T/cgrun.conf:2" "$T/s2.log" &&
grep -q "site: rdzv_id=4242 from SLURM_JOB_ID" "$T/s2.log" &&
grep -q "site: rdzv_backend=c10d from" "$T/s2.log" ||
	{ cat "$T/s2.log"; fail "-v does not say where the values came from:"; }

# 2. No job id anywhere: a usage error naming --rdzv-id.
"$CGRUN" --nnodes=2 --nproc-per-node=1 --no-python "$T/w.sh" >"$T/noid.log" 2>&1 </dev/null
rc=$?
[ "$rc" -eq 2 ] && grep -q -- "needs --rdzv-id" "$T/noid.log" ||
	{ cat "$T/noid.log"; fail "without a job id: exit $rc:"; }

# 3. The environment and the command line win over the file: a file
#    endpoint that nobody serves is never used.
printf 'rdzv_endpoint = 127.0.0.1:1\n' >"$T/cgrun.conf"
rm -f "$OUT"/env.*
CGRUN_RDZV_ENDPOINT=127.0.0.1:$RDZVD_PORT "$CGRUN" -v --nnodes=1 --nproc-per-node=1 \
	--rdzv-id=envwins --no-python "$T/w.sh" >"$T/env.log" 2>&1 </dev/null ||
	{ cat "$T/env.log"; fail "CGRUN_RDZV_ENDPOINT did not win:"; }
grep -q "site: rdzv_endpoint=127.0.0.1:$RDZVD_PORT from CGRUN_RDZV_ENDPOINT" "$T/env.log" ||
	{ cat "$T/env.log"; fail "no source line:"; }
"$CGRUN" -v --nnodes=1 --nproc-per-node=1 --rdzv-backend=c10d \
	--rdzv-endpoint=127.0.0.1:$RDZVD_PORT --rdzv-id=cliwins --no-python "$T/w.sh" >"$T/cli.log" 2>&1 </dev/null ||
	{ cat "$T/cli.log"; fail "the command line did not win:"; }
grep -q "site: rdzv_endpoint" "$T/cli.log" && fail "site overrode the command line"
echo "ok: site file, batch job id, precedence"

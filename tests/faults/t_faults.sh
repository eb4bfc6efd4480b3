#!/bin/sh
# Fault injection in CI, bounded (tests/faults/driver.sh; docs/faults.md
# has the full campaign): 5 DDP runs with a worker SIGKILLed at a random
# moment, 2 agents SIGKILLed (--nnodes=1:2 and --nnodes=2), cgrun-rdzvd
# SIGKILLed and restarted under a running job.  The network partition runs
# in tests/multinode/t_multinode_netns.sh already.  FAULT_RUNS, FAULT_SEED and
# FAULT_SCENARIOS override.  55 s on 2 cores (4 min under heavy load).
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
FAULT_RUNS=${FAULT_RUNS:-5} FAULT_AGENT_RUNS=${FAULT_AGENT_RUNS:-1} \
FAULT_RDZVD_RUNS=${FAULT_RDZVD_RUNS:-1} \
FAULT_SCENARIOS=${FAULT_SCENARIOS:-worker agent rdzvd} \
	timeout 600 sh "$TOP/tests/faults/driver.sh"

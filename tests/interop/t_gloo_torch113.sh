#!/bin/sh
# A real torch 1.13 gloo job of 4 processes whose store is cgrun-rdzvd
# (TORCHELASTIC_USE_AGENT_STORE=True, MASTER_ADDR/MASTER_PORT at it):
# init_process_group('gloo'), all_reduce, all_gather, broadcast, barrier
# with the right results (tests/interop/gloo.py).
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$TOP/tests/interop/lib.sh"
need_torch113
start_rdzvd
gloo_job "$PY113" "$RDZVD_PORT" || { tail -n 20 "$T/rdzvd.log"; fail "gloo job (torch 1.13) on cgrun-rdzvd"; }
kill -0 "$RDZVD_PID" || fail "cgrun-rdzvd died"

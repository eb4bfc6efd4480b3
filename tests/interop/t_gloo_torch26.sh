#!/bin/sh
# A real torch 2.6 gloo job of 4 processes whose store is cgrun-rdzvd
# (TORCHELASTIC_USE_AGENT_STORE=True, MASTER_ADDR/MASTER_PORT at it):
# init_process_group('gloo'), all_reduce, all_gather, broadcast, barrier
# with the right results (tests/interop/gloo.py).  Under heavy load a rank
# used to hang in destroy_process_group until the 120 s timeout: torch 2.6's
# own GIL deadlock in ~ProcessGroupGloo (a gloo worker thread dropping a
# temporary tensor needs the GIL the destroying thread holds while it joins
# it); gdb showed nothing waiting on the store.  gloo.py now keeps every
# tensor a collective used alive until the group is destroyed, as a
# program on torch 2.6 must; its comment has the evidence.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$TOP/tests/interop/lib.sh"
need_torch26
start_rdzvd
gloo_job "sh $TOP/tests/torch26.sh" "$RDZVD_PORT" || { tail -n 20 "$T/rdzvd.log"; fail "gloo job (torch 2.6) on cgrun-rdzvd"; }
kill -0 "$RDZVD_PID" || fail "cgrun-rdzvd died"

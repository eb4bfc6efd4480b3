#!/bin/sh
# Issue 13 with torch 1.13 (Debian's python3, gloo, CPU): a 4-rank DDP job
# whose rank 2 blocks forever before step 12 (tests/hang/hang_train.py) is
# caught (a) through torch's FileTimerClient, every step inside
# expires(after=10), and (b) with no change to the worker by
# --hang-timeout=10 --hang-progress=output.  Each time cgrun's own lines
# name rank 2 as the root cause with its Python frame (hang_here in
# hang_train.py:N), the stacks of every rank are in the log directory,
# nothing is stopped before they were taken, the job restarts once and
# ends with the same weights as an uninterrupted run.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$TOP/tests/interop/lib.sh"
. "$TOP/tests/hang/lib.sh"
need_torch113
need_watchdog
ddp_hang_suite "$PY113" "torch 1.13"

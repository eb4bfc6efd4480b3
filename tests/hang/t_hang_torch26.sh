#!/bin/sh
# tests/hang/t_hang_torch113.sh with torch 2.6 (tests/torch26.sh: Debian
# trixie's python3.13 started through its own dynamic loader, so cgrun
# finds the interpreter by its mapped python binary, not its exe).
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$TOP/tests/interop/lib.sh"
. "$TOP/tests/hang/lib.sh"
need_torch26
need_watchdog
ddp_hang_suite "sh $TOP/tests/torch26.sh" "torch 2.6"

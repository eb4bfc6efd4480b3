#!/bin/sh
# Issue 13 with a native libcgrun worker (tests/hang/hang_worker.c): 4
# ranks meet at a store barrier every step; rank 1 blocks forever in
# hang_here() before step 5 of the first attempt.  With --hang-timeout=2
# --hang-progress=output cgrun takes every rank's native stack (gdb, a
# skip where it is not installed, and /proc with CGRUN_STACK_TOOLS=none),
# names rank 1 in hang_here as the root cause (the others wait in the
# barrier), writes the stacks to the log directory, restarts once, and
# every rank finishes.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$TOP/tests/interop/lib.sh"
. "$TOP/tests/hang/lib.sh"
need_watchdog
command -v cc >/dev/null || skip "no C compiler (cc) to build tests/hang/hang_worker.c"
cc -O1 -g -Wall -Wextra -Werror -I"$TOP/include" -o "$T/hang_worker" \
	"$TOP/tests/hang/hang_worker.c" -L"$BUILD_DIR" -lcgrun -Wl,-rpath,"$BUILD_DIR" ||
	fail "tests/hang/hang_worker.c does not build"

# native_run NAME TOOLS: the job with CGRUN_STACK_TOOLS=TOOLS.
native_run() {
	name=$1
	mkdir -p "$T/$name"
	CGRUN_STACK_TOOLS=$2 HANG_AT_STEP=5 HANG_RANK=1 timeout 120 "$CGRUN" -v --log-prefix=rank \
		--standalone --nproc-per-node=4 --max-restarts=1 --hang-timeout=2 \
		--hang-progress=output --log-dir="$T/$name/logs" --no-python \
		"$T/hang_worker" 10 >"$T/$name.log" 2>&1 </dev/null
	rc=$?
	[ $rc -eq 0 ] || { tail -n 40 "$T/$name.log"; fail "$name: cgrun exited $rc"; }
	grep -q 'rank 1: hanging before step 5' "$T/$name.log" || fail "$name: no hang injected"
	check_restarted_once "$T/$name.log"
	for r in 0 1 2 3; do
		grep -q "^\[rank$r\]:rank $r done steps=10 attempt=1" "$T/$name.log" ||
			fail "$name: rank $r did not finish after the restart"
	done
}

if command -v gdb >/dev/null; then
	native_run gdb gdb
	check_diagnosis "$T/gdb.log" 0 1 hang_here hang_worker.c
	grep -q "^=== rank 0 (local_rank 0, pid [0-9]*), gdb ===" "$(sed -n "s/^cgrun: hang on node 0: every rank's stacks: //p" "$T/gdb.log")" ||
		fail "gdb: rank 0's stack was not taken by gdb"
	grep -q "^cgrun: hang on node 0: stacks: ranks 0,2,3 in .*; rank 1 in " "$T/gdb.log" ||
		fail "gdb: ranks 0,2,3 not grouped apart from rank 1"
	grep -A40 "^=== rank 0 " "$(sed -n "s/^cgrun: hang on node 0: every rank's stacks: //p" "$T/gdb.log")" |
		grep -q 'in cgrun_barrier ' || fail "gdb: rank 0 not seen in cgrun_barrier"
	echo "ok: gdb stacks: rank 1 in hang_here named, ranks 0,2,3 in cgrun_barrier"
else
	skip_later "gdb not installed: only the /proc fallback tested (apt-get install gdb)"
fi

native_run proc none
grep -q "^cgrun: hang on node 0: root cause: rank 1 in " "$T/proc.log" ||
	{ grep '^cgrun: hang' "$T/proc.log"; fail "proc: rank 1 not named"; }
stacks=$(sed -n "s/^cgrun: hang on node 0: every rank's stacks: //p" "$T/proc.log")
grep -q "^=== rank 1 (local_rank 1, pid [0-9]*), /proc ===" "$stacks" || fail "proc: no /proc stack of rank 1"
grep -A8 "^=== rank 1 " "$stacks" | grep -q 'syscall:pause' || fail "proc: rank 1 not seen in pause()"
echo "ok: /proc stacks: rank 1 named ($(grep '^cgrun: hang on node 0: root cause' "$T/proc.log"))"

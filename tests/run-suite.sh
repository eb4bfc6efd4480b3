#!/bin/sh
# Runs every test of the suite and ends with one line "N passed, N failed,
# N skipped".  Unit programs (tests/**/test_*.c, built into $BUILD/tests/)
# are Check suites: each of their test cases counts, a case that printed
# "SKIP program:case: why" as a skip.  Black-box scripts
# (tests/**/t_*.sh) count one each: exit 0 passes, 77 skips (the script
# prints why), anything else fails.
# Usage: BUILD=build sh tests/run-suite.sh [NAME-PATTERN...]  (tests whose
# name contains any of the patterns; all tests without one).  With
# CGRUN_SUITE_COUNTS=FILE the three counts are also appended to FILE.
cd "$(dirname "$0")/.." || exit 2
BUILD=${BUILD:-build}
top=$(pwd)
export CGRUN_TOP="$top"
export CGRUN_BUILD="$top/$BUILD"
export CGRUN_BIN="$top/$BUILD/cgrun" CGRUN_RDZVD="$top/$BUILD/cgrun-rdzvd"
export CK_DEFAULT_TIMEOUT=${CK_DEFAULT_TIMEOUT:-60}
patterns="$*"
pass=0 fail=0 skip=0 failed_names=
# Whether a test name matches one of the patterns (or there are none).
selected() {
	[ -z "$patterns" ] && return 0
	for p in $patterns; do
		case "$1" in *"$p"*) return 0 ;; esac
	done
	return 1
}
log=$(mktemp -d "${TMPDIR:-/tmp}/cgrun-suite.XXXXXX")
suite_start=$(date +%s)

# A Check program per source (tests/AREA/test_NAME.c -> $BUILD/tests/AREA/
# test_NAME): a program left in $BUILD by a source that moved is not run.
for src in $(find tests -name 'test_*.c' ! -path 'tests/fuzz/*' | sort); do
	name=$(basename "$src" .c)
	selected "$name" || continue
	t=$BUILD/${src%.c}
	[ -x "$t" ] || { echo "FAIL $name: $t not built (make tests)"; fail=$((fail + 1)); failed_names="$failed_names $name"; continue; }
	out="$log/$name.out"
	start=$(date +%s)
	timeout 900 "$t" >"$out" 2>&1
	rc=$?
	secs=$(( $(date +%s) - start ))
	cat "$out"
	echo "TIME $name ${secs}s"
	line=$(grep -E '^[0-9]+%: Checks: [0-9]+, Failures: [0-9]+, Errors: [0-9]+' "$out" | tail -n 1)
	if [ -n "$line" ]; then
		n=$(echo "$line" | sed 's/.*Checks: \([0-9]*\),.*/\1/')
		f=$(echo "$line" | sed 's/.*Failures: \([0-9]*\),.*/\1/')
		e=$(echo "$line" | sed 's/.*Errors: \([0-9]*\).*/\1/')
		# A case that could not run printed "SKIP program:case: why"
		# (SKIP_CASE, tests/common/helper_main.h): a skip, not a pass.
		k=$(grep -c '^SKIP [^ ]*: ' "$out")
		pass=$((pass + n - f - e - k)); fail=$((fail + f + e)); skip=$((skip + k))
		[ $((f + e)) -gt 0 ] && failed_names="$failed_names $name"
		[ "$rc" -ne 0 ] && [ $((f + e)) -eq 0 ] && { fail=$((fail + 1)); failed_names="$failed_names $name(rc=$rc)"; }
	else
		echo "$name: no Check summary (exit $rc)"
		fail=$((fail + 1)); failed_names="$failed_names $name"
	fi
done

for t in $(find tests -name 't_*.sh' | sort); do
	[ -f "$t" ] || continue
	name=$(basename "$t" .sh)
	selected "$name" || continue
	out="$log/$name.out"
	start=$(date +%s)
	timeout 1200 sh "$t" >"$out" 2>&1 </dev/null
	rc=$?
	secs=$(( $(date +%s) - start ))
	case $rc in
	0) pass=$((pass + 1)); echo "PASS $name (${secs}s)" ;;
	77) skip=$((skip + 1)); echo "SKIP $name: $(tail -n 1 "$out")" ;;
	*) fail=$((fail + 1)); failed_names="$failed_names $name"
	   echo "FAIL $name (exit $rc, ${secs}s); last lines:"; tail -n 40 "$out" | sed 's/^/    /' ;;
	esac
done

[ -n "$failed_names" ] && echo "failed:$failed_names"
rm -rf "$log"
echo "suite time: $(( $(date +%s) - suite_start ))s"
echo "$pass passed, $fail failed, $skip skipped"
[ -n "$CGRUN_SUITE_COUNTS" ] && echo "$pass $fail $skip" >>"$CGRUN_SUITE_COUNTS"
[ "$fail" -eq 0 ]

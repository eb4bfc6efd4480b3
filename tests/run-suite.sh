#!/bin/sh
# Runs every test of the suite and ends with one line "N passed, N failed,
# N skipped".  Unit programs (tests/**/test_*.c, built into $BUILD/tests/)
# are Check suites: each of their test cases counts, a case that printed
# "SKIP program:case: why" as a skip.  Black-box scripts
# (tests/**/t_*.sh) count one each: exit 0 passes, 77 skips (the script
# prints why), anything else fails.  Every test runs with an empty TMPDIR
# of its own: a test that leaves anything there fails, and so does a suite
# that leaves new files in the source tree (git status).
# Usage: BUILD=build sh tests/run-suite.sh [PATTERN...]  (the tests whose
# name or folder/name contains one of the patterns; all without one).  With
# CGRUN_SUITE_COUNTS=FILE the three counts are also appended to FILE.
cd "$(dirname "$0")/.." || exit 2
BUILD=${BUILD:-build}
top=$(pwd)
export CGRUN_TOP="$top"
export CGRUN_BUILD="$top/$BUILD"
export CGRUN_BIN="$top/$BUILD/cgrun" CGRUN_RDZVD="$top/$BUILD/cgrun-rdzvd"
export CK_DEFAULT_TIMEOUT=${CK_DEFAULT_TIMEOUT:-60}
# Python run by the tests imports modules of the tree: no __pycache__ there.
export PYTHONDONTWRITEBYTECODE=1
patterns="$*"
pass=0 fail=0 skip=0 failed_names=
# selected AREA/NAME: whether the test's name contains one of the
# patterns (or there are none); a pattern with a slash is matched against
# AREA/NAME: SUITE=launcher/ selects the folder tests/launcher/.
selected() {
	[ -z "$patterns" ] && return 0
	for p in $patterns; do
		case "${1##*/}" in *"$p"*) return 0 ;; esac
		case "$1" in *"$p"*/*) ;; *"$p"*) return 0 ;; esac
	done
	return 1
}
log=$(mktemp -d "${TMPDIR:-/tmp}/cgrun-suite.XXXXXX")
chmod 755 "$log"	# a test may run a program as another user
suite_start=$(date +%s)

# fresh_tmp: an empty $log/tmp, the TMPDIR of the next test (1777, as /tmp).
fresh_tmp() {
	chmod -R u+rwx "$log/tmp" 2>/dev/null
	rm -rf "$log/tmp" && mkdir "$log/tmp" && chmod 1777 "$log/tmp"
}

# left_behind NAME: 0 (after saying what) when NAME left files in its TMPDIR.
left_behind() {
	l=$(ls -A "$log/tmp")
	[ -n "$l" ] || return 1
	echo "FAIL $1: left in its TMPDIR: $(echo $l | cut -c1-300)"
}

# tree_files: what git sees untracked or ignored in the tree (nothing
# outside a git work tree).
tree_files() {
	git rev-parse --is-inside-work-tree >/dev/null 2>&1 || return 0
	git status --porcelain --ignored 2>/dev/null | grep -E '^(\?\?|!!) ' | sort
}
tree_files >"$log/tree.before"

# A Check program per source (tests/AREA/test_NAME.c -> $BUILD/tests/AREA/
# test_NAME): a program left in $BUILD by a source that moved is not run.
for src in $(find tests -name 'test_*.c' ! -path 'tests/fuzz/*' | sort); do
	name=$(basename "$src" .c)
	rel=${src#tests/}
	selected "${rel%.c}" || continue
	t=$BUILD/${src%.c}
	[ -x "$t" ] || { echo "FAIL $name: $t not built (make tests)"; fail=$((fail + 1)); failed_names="$failed_names $name"; continue; }
	out="$log/$name.out"
	start=$(date +%s)
	fresh_tmp
	TMPDIR=$log/tmp timeout -k 30 900 "$t" >"$out" 2>&1
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
	left_behind "$name" && { fail=$((fail + 1)); failed_names="$failed_names $name(files)"; }
done

for t in $(find tests -name 't_*.sh' | sort); do
	[ -f "$t" ] || continue
	name=$(basename "$t" .sh)
	rel=${t#tests/}
	selected "${rel%.sh}" || continue
	out="$log/$name.out"
	start=$(date +%s)
	fresh_tmp
	TMPDIR=$log/tmp timeout -k 30 1200 sh "$t" >"$out" 2>&1 </dev/null
	rc=$?
	secs=$(( $(date +%s) - start ))
	left_behind "$name" && rc=1
	case $rc in
	0) pass=$((pass + 1)); echo "PASS $name (${secs}s)" ;;
	77) skip=$((skip + 1)); echo "SKIP $name: $(tail -n 1 "$out")" ;;
	*) fail=$((fail + 1)); failed_names="$failed_names $name"
	   echo "FAIL $name (exit $rc, ${secs}s); last lines:"; tail -n 40 "$out" | sed 's/^/    /' ;;
	esac
done

# What the run left in the source tree.
new=$(tree_files | comm -13 "$log/tree.before" -)
if [ -n "$new" ]; then
	echo "FAIL: the suite left in the source tree:"; echo "$new" | sed 's/^/    /'
	fail=$((fail + 1)); failed_names="$failed_names (source-tree)"
fi
[ -n "$failed_names" ] && echo "failed:$failed_names"
rm -rf "$log"
echo "suite time: $(( $(date +%s) - suite_start ))s"
echo "$pass passed, $fail failed, $skip skipped"
[ -n "$CGRUN_SUITE_COUNTS" ] && echo "$pass $fail $skip" >>"$CGRUN_SUITE_COUNTS"
[ "$fail" -eq 0 ]

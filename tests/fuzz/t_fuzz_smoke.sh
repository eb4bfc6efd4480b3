#!/bin/sh
# Fuzz smoke test: builds every libFuzzer target (tests/fuzz/fuzz_*.c,
# clang with ASan+UBSan) in its own build directory and runs each for a
# few seconds (2) on its seed corpus, regression seeds included.  Any crash,
# leak, hang or contract violation fails.  Skips when clang or libFuzzer
# is missing.  Seconds per target: FUZZ_SMOKE_SECONDS.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
top=$TOP
cd "$top" || exit 1
secs=${FUZZ_SMOKE_SECONDS:-2}
build=$BUILD_DIR/fuzz-smoke	# kept between runs, with the build
command -v clang >/dev/null 2>&1 || skip "clang not installed (apt-get install clang)"
probe=$T
printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }\n' >"$probe/p.c"
clang -fsanitize=fuzzer,address,undefined -o "$probe/p" "$probe/p.c" >"$probe/err" 2>&1 || {
	cat "$probe/err"; skip "clang cannot link libFuzzer (apt-get install libclang-rt-14-dev)"; }
start=$(date +%s)
make -s -j2 BUILD="${build#$top/}" fuzzers >"$probe/build.log" 2>&1 || {
	tail -n 30 "$probe/build.log"; fail "fuzz targets do not build"; }
echo "built the fuzz targets in $(( $(date +%s) - start ))s"
BUILD="${build#$top/}" FUZZ_SECONDS=$secs sh tests/fuzz/run.sh
rc=$?
[ $rc -eq 0 ] || { for l in "$build"/fuzz/work/*/log; do
	grep -q -E 'ERROR: |runtime error' "$l" && { echo "== $l"; grep -A25 -m1 -E 'ERROR: |runtime error' "$l"; }; done; }
exit $rc

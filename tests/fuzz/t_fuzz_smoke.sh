#!/bin/sh
# Fuzz smoke test: builds every libFuzzer target (tests/fuzz/fuzz_*.c,
# clang with ASan+UBSan) in its own build directory and runs each for a
# few seconds (2) on its seed corpus, regression seeds included.  Any crash,
# leak, hang or contract violation fails.  Skips when clang or libFuzzer
# is missing.  Seconds per target: FUZZ_SMOKE_SECONDS.
top=${CGRUN_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$top" || exit 1
secs=${FUZZ_SMOKE_SECONDS:-2}
build=${CGRUN_BUILD:-$top/build}-fuzz-smoke
command -v clang >/dev/null 2>&1 || { echo "clang not installed (apt-get install clang)"; exit 77; }
probe=$(mktemp -d "${TMPDIR:-/tmp}/cgrun-fuzzprobe.XXXXXX")
trap 'rm -rf "$probe"' EXIT
printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }\n' >"$probe/p.c"
clang -fsanitize=fuzzer,address,undefined -o "$probe/p" "$probe/p.c" >"$probe/err" 2>&1 || {
	cat "$probe/err"; echo "clang cannot link libFuzzer (apt-get install libclang-rt-14-dev)"; exit 77; }
start=$(date +%s)
make -s -j2 BUILD="${build#$top/}" fuzzers >"$probe/build.log" 2>&1 || {
	tail -n 30 "$probe/build.log"; echo "FAIL: fuzz targets do not build"; exit 1; }
echo "built the fuzz targets in $(( $(date +%s) - start ))s"
BUILD="${build#$top/}" FUZZ_SECONDS=$secs sh tests/fuzz/run.sh
rc=$?
[ $rc -eq 0 ] || { for l in "$build"/fuzz/work/*/log; do
	grep -q -E 'ERROR: |runtime error' "$l" && { echo "== $l"; grep -A25 -m1 -E 'ERROR: |runtime error' "$l"; }; done; }
exit $rc

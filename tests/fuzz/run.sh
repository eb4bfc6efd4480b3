#!/bin/sh
# Runs every fuzz target ($BUILD/fuzz/fuzz_*) for FUZZ_SECONDS each on a
# copy of its seed corpus (tests/fuzz/corpus/<target>/ is only read), and
# prints one line per target: executions, executions/s, coverage (edges
# reached / edges instrumented in the binary), features, corpus size, and
# the finding if there was one.  A finding's
# input is kept in $BUILD/fuzz/work/<target>/crash-* ; the run goes on
# with the next target and the script exits 1 at the end.
# Usage: BUILD=build FUZZ_SECONDS=60 sh tests/fuzz/run.sh [TARGET...]
cd "$(dirname "$0")/../.." || exit 2
BUILD=${BUILD:-build}
secs=${FUZZ_SECONDS:-60}
dir=$BUILD/fuzz
work=$dir/work
results=$dir/results.txt
mkdir -p "$work"
: >"$results"
targets=$*
[ -n "$targets" ] || targets=$(cd tests/fuzz && ls fuzz_*.c | sed 's/\.c$//')
rc=0
for t in $targets; do
	bin=$dir/$t
	[ -x "$bin" ] || { echo "$t: not built ($bin)"; rc=1; continue; }
	rm -rf "$work/$t" && mkdir -p "$work/$t/corpus"
	cp tests/fuzz/corpus/"$t"/* "$work/$t/corpus/" 2>/dev/null
	# -timeout: one input over 10 s is a hang (a finding); inputs up to
	# 64 KiB (beyond the store's 64 KiB reads, one config file).
	(cd "$work/$t" && ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} \
	    timeout $((secs + 120)) "$OLDPWD/$bin" -max_total_time="$secs" \
	    -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
	    -artifact_prefix=./ corpus >log 2>&1)
	st=$?
	log=$work/$t/log
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	eps=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
	cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -n 1 | cut -d' ' -f2)
	ft=$(grep -oE 'ft: [0-9]+' "$log" | tail -n 1 | cut -d' ' -f2)
	edges=$(sed -n 's/.*Loaded 1 modules *(\([0-9]*\) inline 8-bit counters.*/\1/p' "$log" | head -n 1)
	corp=$(ls "$work/$t/corpus" | wc -l)
	if [ "$st" -eq 0 ]; then
		found=none
	else
		rc=1
		found="EXIT $st: $(grep -m1 -E 'ERROR: |runtime error|SUMMARY' "$log" | cut -c1-160) input: $(ls "$work/$t" | grep -E '^(crash|leak|timeout|oom)-' | head -n 1)"
	fi
	line="$t seconds=$secs execs=${execs:-?} execs/s=${eps:-?} cov=${cov:-?}/${edges:-?} ft=${ft:-?} corpus=$corp finding=$found"
	echo "$line" | tee -a "$results"
done
exit $rc

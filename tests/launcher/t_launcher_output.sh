#!/bin/sh
# Worker output: heavy concurrent output from 8 workers reaches the console
# in whole, prefixed lines with nothing lost (also the last line without a
# newline); --tee, --redirects, --log-dir layout (LOG_DIR/RUN_ID/attempt_N/
# LOCAL_RANK/{stdout,stderr}.log), --local-ranks-filter, --log-prefix and
# TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE, --duplicate-stdout-filters.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
cd "$T" || exit 1
N=20000

# Each worker writes N lines to stdout and N/4 to stderr, lengths 0-700,
# through awk's block buffering (so pipe reads end mid-line), then a last
# line without a newline.
cat > flood.sh <<'W'
#!/bin/sh
awk -v r="$RANK" -v n="$1" 'BEGIN {
	pad = "x"; while (length(pad) < 800) pad = pad pad
	for (i = 0; i < n; i++) {
		printf "L %d %d %s\n", r, i, substr(pad, 1, (i * 37) % 701)
		if (i % 4 == 0)
			printf "E %d %d %s\n", r, i, substr(pad, 1, (i * 11) % 301) > "/dev/stderr"
	}
	printf "tail %d", r
}'
W
chmod +x flood.sh
timeout 60 "$CGRUN_BIN" --log-prefix=rank --nproc-per-node=8 ./flood.sh $N > out 2> err ||
	fail "flood job failed: $(tail -5 err)"
check='
{
	if (match($0, /^\[rank[0-7]\]:/) == 0) { print "no prefix: " substr($0, 1, 80); bad++; next }
	pr = substr($0, 6, 1); rest = substr($0, 9)
	if (rest == "tail " pr) { tails[pr]++; next }
	split(rest, f, " ")
	if (f[1] != kind || f[2] != pr) { print "mixed line: " substr($0, 1, 80); bad++; next }
	want = (kind == "L") ? (f[3] * 37) % 701 : (f[3] * 11) % 301
	if (length(f[4]) != want || f[4] ~ /[^x]/) { print "damaged line: " substr($0, 1, 80); bad++; next }
	if (f[3] != next_seq[pr] + 0) { print "lost or reordered at rank " pr " seq " f[3]; bad++ }
	next_seq[pr] = f[3] + step; seen[pr]++
}
END {
	for (r = 0; r < 8; r++) printf "%d:%d:%d ", r, seen[r], tails[r]
	print ""
	exit bad > 0
}'
res=$(awk -v kind=L -v step=1 "$check" out) || fail "stdout: $res"
want="0:$N:1 1:$N:1 2:$N:1 3:$N:1 4:$N:1 5:$N:1 6:$N:1 7:$N:1 "
[ "$res" = "$want" ] || fail "stdout lines per rank:tail: got '$res', want '$want'"
res=$(grep -v '^cgrun' err | awk -v kind=E -v step=4 "$check") || fail "stderr: $res"
[ "$res" = "0:$((N / 4)):0 1:$((N / 4)):0 2:$((N / 4)):0 3:$((N / 4)):0 4:$((N / 4)):0 5:$((N / 4)):0 6:$((N / 4)):0 7:$((N / 4)):0 " ] ||
	fail "stderr lines per rank: $res"
echo "8 workers x $N lines: whole, prefixed, complete"

# Lines longer than the 64 KiB line buffer are cut into prefixed pieces,
# without losing a byte (also for a last line without a newline).
cat > long.sh <<'W'
#!/bin/sh
awk 'BEGIN { s = "y"; while (length(s) < 150000) s = s s
	printf "%s\n", substr(s, 1, 150000); printf "%s", substr(s, 1, 70000) }'
W
chmod +x long.sh
timeout 20 "$CGRUN_BIN" --log-prefix=rank ./long.sh > out 2> err || fail "long-line job failed"
res=$(awk '{ if (sub(/^\[rank0\]:/, "") != 1 || $0 ~ /[^y]/) bad++; n += length($0) } END { print n + 0, bad + 0 }' out)
[ "$res" = "220000 0" ] || fail "long lines: got '$res' (bytes, bad pieces), want '220000 0'"
echo "long lines cut into prefixed pieces, nothing lost"

# Progress bars: a lone '\r' ends a line too (as Python's universal
# newlines that torchrun's tee reads with), "\r\n" split across writes
# stays one terminator, a last "...\r" at exit ends with a newline.
cat > bar.sh <<'W'
#!/bin/sh
printf '\r 10%%'; sleep 0.02; printf '\r 20%%\n'; printf 'a\r'; sleep 0.02
printf '\nb\n'; printf 'x\r'
W
chmod +x bar.sh
timeout 20 "$CGRUN_BIN" --log-prefix=rank ./bar.sh > out 2> err || fail "progress bar job failed"
printf '[rank0]: 10%%\r[rank0]: 20%%\n[rank0]:a\r\n[rank0]:b\n[rank0]:x\n' > want
cmp -s out want || fail "progress bar output: $(od -c out | head -5)"
echo "progress bars: carriage returns end lines"

# tee stdout, redirect stderr, into --log-dir, run id from --rdzv-id; by
# default (--log-prefix=torchrun) a teed stream is prefixed as torchrun
# 2.6 does it, "[${role_name}${local_rank}]:".
cat > hello.sh <<'W'
#!/bin/sh
echo "out $LOCAL_RANK"
echo "err $LOCAL_RANK" >&2
echo "ERROR-ish $LOCAL_RANK"
W
chmod +x hello.sh
timeout 20 "$CGRUN_BIN" --nproc-per-node=2 --rdzv-id=job1 --log-dir="$T/logs" \
    --tee=1 --redirects=2 ./hello.sh > out 2> err || fail "tee job failed"
D=$(echo "$T"/logs/job1_*/attempt_0)
[ -d "$D" ] || fail "no single LOG_DIR/job1_XXXXXX/attempt_0: $(ls "$T/logs")"
for lr in 0 1; do
	grep -qx "\[default$lr\]:out $lr" out || fail "teed stdout of $lr not on console"
	grep -qx "out $lr" "$D/$lr/stdout.log" || fail "teed stdout of $lr not in $D/$lr/stdout.log"
	grep -qx "err $lr" "$D/$lr/stderr.log" || fail "redirected stderr of $lr not in file"
	grep -q "err $lr" err && fail "redirected stderr of $lr reached the console"
done
echo "tee/redirect/log-dir layout"

# Per-rank maps: rank 0 redirects stdout, rank 1 nothing; filter shows rank 1.
timeout 20 "$CGRUN_BIN" --nproc_per_node 2 --log_dir "$T/logs2" --rdzv_id job2 \
    -r 0:1 --local-ranks-filter=1 ./hello.sh > out 2> err || fail "map job failed"
D=$(echo "$T"/logs2/job2_*/attempt_0)
grep -qx "out 0" "$D/0/stdout.log" || fail "rank 0 stdout not redirected"
[ -e "$D/1/stdout.log" ] && fail "rank 1 stdout redirected"
grep -q ' 0$' out err && fail "filtered rank 0 reached the console"
# Not teed: unprefixed by default, as under torchrun.
grep -qx 'out 1' out || fail "rank 1 stdout missing or prefixed: $(cat out)"
grep -qx 'err 1' err || fail "rank 1 stderr missing or prefixed: $(cat err)"
echo "per-rank redirects and --local-ranks-filter"

# Prefix templates: torchrun's variable for teed streams (only those, as
# torchrun), --log-prefix (every line) wins over it; rank and none.
TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE='[${role_name}/${rank}]:' timeout 20 \
    "$CGRUN_BIN" --nproc-per-node=2 --role=w --tee=1 ./hello.sh > out 2>&1 || fail "prefix job 1"
grep -qx '\[w/1\]:out 1' out || fail "TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE ignored: $(head -2 out)"
grep -qx 'err 1' out || fail "stderr (not teed) prefixed: $(cat out)"
timeout 20 "$CGRUN_BIN" --nproc-per-node=2 --log-prefix=rank ./hello.sh > out 2>&1 &&
	grep -qx '\[rank1\]:err 1' out || fail "--log-prefix=rank: $(cat out)"
timeout 20 "$CGRUN_BIN" --nproc-per-node=2 --log-prefix=none --tee=3 --role=w ./hello.sh > out 2>&1 &&
	grep -qx 'out 1' out && ! grep -q 'w1' out || fail "--log-prefix=none: $(cat out)"
TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE='[${role_name}${local_rank}]:' timeout 20 \
    "$CGRUN_BIN" --nproc-per-node=2 --log-prefix='<${group_rank}/${rank}> $$' ./hello.sh > out 2>&1 ||
	fail "prefix job 2"
grep -qx '<0/1> \$out 1' out || fail "--log-prefix ignored: $(head -2 out)"
echo "prefix templates"

# Duplicate filters: matching stdout lines also in filtered_stdout.log.
timeout 20 "$CGRUN_BIN" --nproc-per-node=2 --rdzv-id=job3 --log-dir="$T/logs3" \
    --duplicate-stdout-filters=ERROR ./hello.sh > out 2>&1 || fail "filter job failed"
f=$(echo "$T"/logs3/job3_*/attempt_0/filtered_stdout.log)
[ "$(sort "$f")" = "$(printf '[default0]:ERROR-ish 0\n[default1]:ERROR-ish 1')" ] ||
	fail "filtered_stdout.log: $(cat "$f")"
grep -qx 'out 0' out || fail "console lost lines with filters on"
echo "duplicate filters"
echo ok

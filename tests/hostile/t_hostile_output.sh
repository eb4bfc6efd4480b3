#!/bin/sh
# Output loss is said (issue 18 item 5): when cgrun's stdout is a pipe
# whose reader is gone (EPIPE) or was closed when cgrun started, the first
# loss is said at once on stderr and the total at the end, naming stdout
# and why; the exit status stays the job's (0 here, cgrun.1 Output); a
# stdout whose reader stops reading holds cgrun at most 10 s; a stdout
# that works says nothing.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
cd "$T" || exit 1
on_fail() { sed 's/^/  cgrun: /' err 2>/dev/null | tail -10; }
job="--nproc-per-node=2 --no-python sh -c"

# The reader goes away before the workers write (EPIPE).
{ "$CGRUN_BIN" $job 'sleep 0.5; seq 3' 2> err; echo $? > rc; } | true
[ "$(cat rc)" = 0 ] || fail "EPIPE: exit $(cat rc), want 0 (the job's)"
grep -q "worker output to stdout is being lost: Broken pipe" err || fail "EPIPE: the loss is not said"
[ "$(grep -c 'is being lost' err)" = 1 ] || fail "EPIPE: said more than once"
grep -q "bytes of worker output could not be written to stdout: Broken pipe" err ||
	fail "EPIPE: no total at the end"
echo "a closed pipe: said once, and the total"

# stdout closed when cgrun starts.
"$CGRUN_BIN" $job 'seq 3' >&- 2> err || fail "closed stdout: exit $?"
grep -q "could not be written to stdout: it was closed when cgrun started" err ||
	fail "closed stdout: the loss is not said"
echo "a closed stdout: said"

# A reader that stops reading (stdout full): cgrun is not stopped by it
# (it stays able to handle signals and keep-alives): it waits 10 s, then
# drops what does not fit, says so, and the job ends with its own status.
rm -f rc
{ "$CGRUN_BIN" $job 'head -c 400000 /dev/zero | tr "\0" x | fold -w 100' \
    2> err; echo $? > rc; } | sleep 60 &
reader=$!
i=0
until [ -s rc ]; do
	[ $i -ge 300 ] && { kill "$reader"; fail "full stdout: cgrun still blocked after 30 s"; }
	sleep 0.1; i=$((i + 1))
done
kill "$reader" 2>/dev/null	# the sleep: $! of a pipeline is its last command
[ "$(cat rc)" = 0 ] || fail "full stdout: exit $(cat rc), want 0"
grep -q "worker output to stdout is being lost: it stayed full for 10 s" err ||
	fail "full stdout: the loss is not said"
echo "a full stdout: cgrun goes on, the loss said"

# A working stdout: no word about losses.
"$CGRUN_BIN" --log-prefix=rank $job 'seq 3' > out 2> err || fail "exit $?"
[ "$(grep -c '^\[rank' out)" = 6 ] || fail "lines lost: $(cat out)"
! grep -q "lost\|could not be written" err || fail "a loss reported on a working stdout"
echo ok

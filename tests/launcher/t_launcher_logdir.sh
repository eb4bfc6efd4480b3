#!/bin/sh
# Log directories (cgrun(1) FILES; launcher/console/logdir.c):
# - a rerun with the same run id and --log-dir gets its own
#   LOG_DIR/RUN_ID_XXXXXX/ (torchrun's <run_id>_<random>/): the first
#   run's logs stay as they were;
# - an unusable --log-dir (a regular file, under /proc, read-only: as
#   root, tried as an unprivileged user) fails at once with exit 73, one line naming the path and the
#   error, and no worker started;
# - an agent that fails to start (a usage error found after the log
#   directory was made) leaves no empty cgrun_XXXXXX in $TMPDIR;
# - a scale-up round (same restart count) writes attempt_0.1/ and keeps
#   the previous round's attempt_0/ logs.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$TOP/tests/interop/lib.sh"
. "$TOP/tests/multinode/lib.sh"

# Reruns: two runs of job "rr", each its own directory, contents kept.
for i in 1 2; do
	timeout 20 "$CGRUN" --rdzv-id=rr --nproc-per-node=2 \
	    --log-dir="$T/logs" --redirects=1 --no-python sh -c "echo run $i" \
	    >"$T/rerun.$i" 2>&1 || fail "run $i exited $?: $(cat "$T/rerun.$i")"
done
n=$(ls -d "$T"/logs/rr_* | wc -l)
[ "$n" -eq 2 ] || fail "$n run directories after two runs: $(ls "$T/logs")"
for d in "$T"/logs/rr_*; do
	case "$(basename "$d")" in rr_[A-Za-z0-9][A-Za-z0-9][A-Za-z0-9][A-Za-z0-9][A-Za-z0-9][A-Za-z0-9]) ;;
	*) fail "run directory not RUN_ID_XXXXXX: $d" ;; esac
done
for i in 1 2; do
	n=$(cat "$T"/logs/rr_*/attempt_0/[01]/stdout.log | grep -cx "run $i")
	[ "$n" -eq 2 ] || fail "run $i: $n of 2 ranks' stdout.log kept"
done

# Unusable --log-dir: at once, exit 73, one line, nothing spawned.
: >"$T/afile"
bad="$T/afile $T/afile/sub /proc /proc/self/cgrun-x $T/ro"
mkdir "$T/ro" && chmod 555 "$T/ro"
# Root may write anywhere: as root, the read-only case runs cgrun as an
# unprivileged user (setpriv, util-linux) who can enter $T.
# A copy of cgrun in $T: the checkout may sit where that user cannot go.
runas=
[ "$(id -u)" = 0 ] && chmod 755 "$T" && cp "$CGRUN" "$T/cgrun" &&
	chmod 755 "$T/cgrun" &&
	runas="setpriv --reuid=65534 --regid=65534 --clear-groups"
for d in $bad; do
	rm -f "$T/spawned"
	u= b=$CGRUN
	[ "$d" = "$T/ro" ] && [ -n "$runas" ] && u=$runas b=$T/cgrun
	timeout 10 $u "$b" --nproc-per-node=2 --log-dir="$d" --redirects=3 \
	    --no-python sh -c ": > $T/spawned" >"$T/bad.out" 2>"$T/bad.err"
	rc=$?
	[ $rc -eq 73 ] || fail "--log-dir $d: exit $rc, want 73: $(cat "$T/bad.err")"
	[ -e "$T/spawned" ] && fail "--log-dir $d: a worker was started"
	[ "$(wc -l <"$T/bad.err")" -eq 1 ] || fail "--log-dir $d: not one line: $(cat "$T/bad.err")"
	grep -q "^cgrun: --log-dir $d: .*: [A-Z][a-z]" "$T/bad.err" ||
		fail "--log-dir $d: path or error not named: $(cat "$T/bad.err")"
done

# A failed start leaves nothing in $TMPDIR.
mkdir "$T/tmp"
TMPDIR=$T/tmp timeout 10 "$CGRUN" --nproc-per-node=1 --nnodes=2 \
    --node-rank=5 --no-python true >"$T/ns.out" 2>&1
rc=$?
[ $rc -eq 2 ] || fail "--node-rank 5 of 2: exit $rc, want 2: $(cat "$T/ns.out")"
[ -z "$(ls -A "$T/tmp")" ] || fail "left in TMPDIR: $(ls -A "$T/tmp")"

# Scale-up: agent a runs alone (round of 1 node), b joins: a's workers
# are restarted with the same restart count; both rounds' logs remain.
start_rdzvd
cat >"$T/w.sh" <<'EOS'
#!/bin/sh
echo "round of $GROUP_WORLD_SIZE restart $TORCHELASTIC_RESTART_COUNT"
[ "$GROUP_WORLD_SIZE" = 2 ] && exit 0
: >"$OUT_DIR/alone"
i=0
while [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
exit 1
EOS
chmod +x "$T/w.sh"
export OUT_DIR="$T"
common="--nnodes=1:2 --nproc-per-node=1 --rdzv-id=su --max-restarts=0 --redirects=1 --rdzv-conf=$FAST_CONF --no-python $T/w.sh"
agent a 127.0.0.2 --log-dir="$T/la" $common
wait_count "$T/alone" 1 30 "agent a's worker in a round of 1"
agent b 127.0.0.3 --log-dir="$T/lb" $common
expect_exit a 60 0
expect_exit b 60 0
grep -qx "round of 1 restart 0" "$T"/la/su_*/attempt_0/0/stdout.log ||
	fail "round 1's log lost: $(ls -R "$T/la")"
grep -qx "round of 2 restart 0" "$T"/la/su_*/attempt_0.1/0/stdout.log ||
	fail "scale-up round's log not in attempt_0.1: $(ls -R "$T/la")"
echo "ok: reruns kept apart, bad --log-dir fails at once (73), TMPDIR clean, scale-up kept attempt_0"

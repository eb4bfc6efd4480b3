#!/bin/sh
# Restarts: any worker failure stops all workers and starts them again with
# TORCHELASTIC_RESTART_COUNT + 1, up to --max-restarts (or PET_MAX_RESTARTS);
# then the job fails with the root cause's status.  Each attempt gets its
# own log directory and a store on the same port (that the store is fresh
# and empty is t_launcher_restart_store's check: it needs torch).
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
cd "$T" || exit 1

# Local rank 1 fails on attempts below $FAILS; rank 0 waits to be stopped.
cat > w.sh <<'W'
#!/bin/sh
echo "attempt $TORCHELASTIC_RESTART_COUNT rank $RANK port $MASTER_PORT" >> "$LOG"
if [ "$TORCHELASTIC_RESTART_COUNT" -lt "$FAILS" ]; then
	[ "$LOCAL_RANK" = 0 ] && exec sleep 30
	# fail once rank 0 has logged this attempt (else it may be stopped
	# before its first line), waiting at most 10 s
	i=0
	until grep -q "^attempt $TORCHELASTIC_RESTART_COUNT rank $((RANK - 1)) " "$LOG" || [ $i -ge 500 ]; do
		sleep 0.02; i=$((i + 1))
	done
	exit 3
fi
W
chmod +x w.sh

# Two failures, two restarts allowed: success on attempt 2.
LOG=$T/log1 FAILS=2 timeout 60 "$CGRUN_BIN" --nproc-per-node=2 --max-restarts=2 \
    --rdzv-id=r1 --log-dir="$T/logs" ./w.sh > out 2> err || fail "job failed: $(cat err)"
[ "$(cut -d' ' -f1-4 log1 | sort)" = "$(printf 'attempt 0 rank 0\nattempt 0 rank 1\nattempt 1 rank 0\nattempt 1 rank 1\nattempt 2 rank 0\nattempt 2 rank 1')" ] ||
	fail "attempts seen: $(cat log1)"
[ "$(cut -d' ' -f6 log1 | sort -u | wc -l)" = 1 ] || fail "store port changed between attempts"
for a in 0 1 2; do
	[ -d "$(echo "$T"/logs/r1_*/attempt_$a/0)" ] && [ -d "$(echo "$T"/logs/r1_*/attempt_$a/1)" ] ||
		fail "missing log dir attempt_$a"
done
echo "restart count 0 -> 2, job succeeded"

# Exhaustion: always failing, one restart allowed (from PET_MAX_RESTARTS).
LOG=$T/log2 FAILS=99 PET_MAX_RESTARTS=1 timeout 60 "$CGRUN_BIN" --nproc-per-node=2 ./w.sh > out 2> err
rc=$?
[ $rc -eq 3 ] || fail "exhausted job exited $rc, want 3"
[ "$(grep -c 'rank 1' log2)" = 2 ] || fail "want exactly 2 attempts: $(cat log2)"
grep -q 'failed on .* after 1 of 1 restarts' err || fail "report: $(cat err)"
grep -q '^root cause: rank 1 .*exited with status 3.*attempt 1)' err || fail "root cause: $(cat err)"
echo "restarts exhausted after 1, exit 3"

# No restarts by default.
LOG=$T/log3 FAILS=99 timeout 60 "$CGRUN_BIN" --nproc-per-node=2 ./w.sh > out 2> err
[ $? -eq 3 ] && [ "$(grep -c 'rank 1' log3)" = 1 ] || fail "default max-restarts is not 0"

echo ok

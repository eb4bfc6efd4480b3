#!/bin/sh
# A real 4-process torch 1.13 gloo job initialises and all-reduces through
# cgrun-rdzvd while the same daemon holds 10,000 idle connections and
# abusive clients keep coming (half-sent requests closed after
# --idle-timeout, a client that never reads dropped past --max-output,
# huge lengths and garbage refused at once): tests/hostile/abuse_10k.py.  After the
# job, every idle connection must still be served and the daemon alive.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$TOP/tests/interop/lib.sh"
need_torch113
NIDLE=${IDLE_CONNS:-10000}
hard=$(ulimit -Hn)
[ "$hard" = unlimited ] || [ "$hard" -ge $((NIDLE + 300)) ] ||
	skip "open-file hard limit $hard is below $((NIDLE + 300)) (needed for $NIDLE idle connections)"
idle_ms=2000
start_rdzvd --idle-timeout=$idle_ms --max-output=1M
echo "cgrun-rdzvd pid $RDZVD_PID port $RDZVD_PORT"
start=$(date +%s)
IDLE_CONNS=$NIDLE timeout 300 "$PY113" "$TOP/tests/hostile/abuse_10k.py" "$RDZVD_PORT" $idle_ms \
	"$T/ready" "$T/stop" >"$T/abuse.log" 2>&1 &
ABUSE=$!
track $ABUSE
i=0
while [ ! -f "$T/ready" ]; do
	kill -0 "$ABUSE" 2>/dev/null || { wait "$ABUSE"; rc=$?; cat "$T/abuse.log";
		[ $rc -eq 77 ] && skip "$(tail -n 1 "$T/abuse.log")"; fail "abusers exited $rc before ready"; }
	[ $i -ge 1200 ] && { cat "$T/abuse.log"; fail "$NIDLE idle connections not open after 60 s"; }
	sleep 0.05
	i=$((i + 1))
done
cat "$T/abuse.log"
conns=$(ls /proc/"$RDZVD_PID"/fd | wc -l)
echo "daemon holds $conns descriptors"
[ "$conns" -ge "$NIDLE" ] || fail "daemon has $conns descriptors, want >= $NIDLE"
t0=$(date +%s)
gloo_job "$PY113" "$RDZVD_PORT" || { tail -n 20 "$T/rdzvd.log"; fail "gloo job under abuse"; }
echo "gloo job done under abuse in $(( $(date +%s) - t0 ))s"
touch "$T/stop"
wait "$ABUSE"
rc=$?
cat "$T/abuse.log" | tail -n +2
[ $rc -eq 0 ] || { tail -n 20 "$T/rdzvd.log"; fail "abusers: exit $rc"; }
kill -0 "$RDZVD_PID" 2>/dev/null || fail "cgrun-rdzvd died"
grep -q 'idle timeout' "$T/rdzvd.log" || fail "no idle timeout logged"
grep -q 'slow reader' "$T/rdzvd.log" || fail "no slow reader logged"
echo "ok in $(( $(date +%s) - start ))s"

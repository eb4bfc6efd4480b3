#!/bin/sh
# A hostile client on the agent's --metrics-port cannot take the job
# down: with a descriptor limit of 128, a client opens 300 connections to
# the port and trickles a byte into each every half second (slowloris)
# while the job crashes and restarts five times (each restart needs new
# pipes).  The agent holds at most HTTP_MAX_CONNS (64) of them, the rest
# wait in the kernel's backlog; every restart starts its workers, and
# once the client leaves, /metrics answers again.  (Before the cap, evhttp
# took every connection, the agent ran out of descriptors and the job
# failed: "cannot start workers: worker 0: Too many open files".)
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$CGRUN_TOP/tests/interop/lib.sh"
. "$CGRUN_TOP/tests/observe/lib.sh"

# The client: N non-blocking connects to PORT, a byte into each one every
# 0.5 s; "ready" once all are issued; ends when $T/stop exists (at most
# 120 s), closing them all.
cat >"$T/hostile.py" <<'EOS'
import errno, os, socket, sys, time
port, n, ready, stop = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
socks = []
for i in range(n):
    s = socket.socket()
    s.setblocking(False)
    if s.connect_ex(("127.0.0.1", port)) not in (0, errno.EINPROGRESS):
        s.close()
        continue
    socks.append(s)
open(ready, "w").write("%d\n" % len(socks))
sent = {}
end = time.monotonic() + 120
while not os.path.exists(stop) and time.monotonic() < end:
    for s in socks:
        try:   # a request line once connected, then one header byte a time
            s.send(b"X" if sent.get(s) else b"GET /metrics HTTP/1.1\r\nX-Slow: ")
            sent[s] = True
        except OSError:
            pass
    time.sleep(0.5)
for s in socks:
    s.close()
EOS

# attempts 0-4: rank 0 exits 3 (attempt 0 once $T/go exists), the others
# wait to be stopped; attempt 5: every rank waits for $T/end, exits 0.
cat >"$T/w.sh" <<EOS
#!/bin/sh
case \$TORCHELASTIC_RESTART_COUNT in
0) while [ ! -f "$T/go" ]; do sleep 0.05; done ;;
[1-4]) ;;
*) while [ ! -f "$T/end" ]; do sleep 0.05; done; exit 0 ;;
esac
[ "\$RANK" = 0 ] && exit 3
exec sleep 60
EOS
chmod +x "$T/w.sh"

(ulimit -n 128 && exec "$CGRUN" -v --standalone --nproc-per-node=4 \
	--max-restarts=5 --shutdown-timeout=5 --metrics-port=0 \
	--event-log="$T/ev.jsonl" --no-python "$T/w.sh") >"$T/job.log" 2>&1 </dev/null &
job=$!
track $job
i=0
until port=$(sed -n 's/^cgrun: metrics listening on 127.0.0.1:\([0-9]*\)$/\1/p' "$T/job.log") && [ -n "$port" ]; do
	kill -0 $job 2>/dev/null || { cat "$T/job.log"; fail "cgrun exited before listening"; }
	[ $i -ge 200 ] && { cat "$T/job.log"; fail "no metrics port after 10 s"; }
	sleep 0.05; i=$((i + 1))
done

"$PY113" "$T/hostile.py" "$port" 300 "$T/ready" "$T/stop" &
track $!
wait_file "$T/ready" $! 30 "the hostile client"
touch "$T/go"

# every restart starts its workers: the last attempt runs
i=0
until grep -q '"event":"attempt_start".*"restart_count":5' "$T/ev.jsonl" 2>/dev/null; do
	kill -0 $job 2>/dev/null || { tail -n 20 "$T/job.log"; fail "the job ended under the hostile client (exit status in the log above)"; }
	[ $i -ge 600 ] && { tail -n 20 "$T/job.log"; fail "no sixth attempt within 60 s"; }
	sleep 0.1; i=$((i + 1))
done
socks=$(ls -l /proc/$job/fd | grep -c 'socket:')
[ "$socks" -le 72 ] || fail "the agent holds $socks sockets under 300 connections (cap 64)"
grep -q 'http: 64 connections open: more wait until one closes' "$T/job.log" ||
	fail "the agent did not say it stopped accepting at 64"
echo "ok: 300 slow connections, descriptor limit 128: 5 restarts, the agent holds $socks sockets"

# the client leaves: /metrics answers again, the job ends well
touch "$T/stop"
i=0
until [ "$($TOOL http "http://127.0.0.1:$port/metrics" 2>/dev/null | head -n 1)" = 200 ]; do
	[ $i -ge 100 ] && fail "/metrics did not answer within 10 s of the client leaving"
	sleep 0.1; i=$((i + 1))
done
scrape "http://127.0.0.1:$port/metrics" "$T/page"
has "$T/page" "$(grep -o 'cgrun_workers_up{[^}]*}' "$T/page") 4"
touch "$T/end"
i=0
while kill -0 $job 2>/dev/null; do
	[ $i -ge 300 ] && fail "cgrun did not exit within 30 s of the end"
	sleep 0.1; i=$((i + 1))
done
wait $job
rc=$?
[ $rc -eq 0 ] || { tail -n 20 "$T/job.log"; fail "cgrun exited $rc"; }
echo "ok: the client gone, /metrics answers (4 workers up); the job exited 0"

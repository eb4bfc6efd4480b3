#!/bin/sh
# The etcd-v3 backend when etcd or nodes fail, on a real 3-member cluster:
#  - SIGKILL of the etcd leader while the agents rendezvous, and again
#    while the job runs, changes nothing the user sees (exit 0, no
#    restart, one round);
#  - an elastic --nnodes=1:2 job survives SIGKILL of one agent: the other
#    goes on alone in a new round, no restart spent; an agent frozen past
#    its lease learns it is out when it thaws (75);
#  - losing quorum (two of three members killed) fails the job on every
#    node with exit 75 and a message naming the keep-alive window, within
#    that window plus a margin; a cluster without quorum from the start
#    fails a new agent within read_timeout;
#  - an unreachable endpoint and an endpoint that is not etcd fail with 75
#    and a clear message within read_timeout.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$TOP/tests/interop/lib.sh"
. "$TOP/tests/multinode/lib.sh"
. "$TOP/tests/etcd/lib.sh"
etcd_up 3
go_workers
c2="--nnodes=2 --nproc-per-node=1 --rdzv-conf=$ETCD_CONF --no-python $T/w.sh"

# Leader killed mid-rendezvous (one agent waits for the other; the
# member comes back), then the new leader killed mid-job: still one
# round, no restart, exit 0.
agent k2 127.0.0.2 --rdzv-id=leader $c2
sleep 1
l=$(etcd_leader) || fail "no etcd leader"
etcd_kill "$l"
echo "killed etcd leader m$l while k2 waited"
agent k3 127.0.0.3 --rdzv-id=leader $c2
wait_count "$OUT/env.0.2.*" 2 30 "workers of the round formed after the leader died"
sh "$TOP/tests/etcd/cluster.sh" restart "$ECL" "$l"
sleep 2
l2=$(etcd_leader) || fail "no etcd leader after m$l came back"
etcd_kill "$l2"
echo "killed etcd leader m$l2 mid-job"
sleep 1
touch "$OUT/go"
one_round k2 k3
[ -z "$(etcd_keys leader)" ] || fail "keys left: $(etcd_keys leader)"
sh "$TOP/tests/etcd/cluster.sh" restart "$ECL" "$l2"
echo "ok: etcd leader killed mid-rendezvous and mid-job"

# A member stopped (SIGSTOP: its sockets stay open, nothing answers) for
# longer than the keep-alive window while the job ends: the agents go
# on through the other members (their watch on it goes quiet; the
# per-keep-alive read sees the end).
rm -f "$OUT"/env.* "$OUT/go"
sleep 1
agent p2 127.0.0.2 --rdzv-id=partition $c2
agent p3 127.0.0.3 --rdzv-id=partition $c2
wait_count "$OUT/env.0.2.*" 2 30 "workers before the partition"
sh "$TOP/tests/etcd/cluster.sh" stop "$ECL" 1
touch "$OUT/go"
one_round p2 p3
sh "$TOP/tests/etcd/cluster.sh" cont "$ECL" 1
echo "ok: a stopped member is survived"

# Elastic 1:2: one agent SIGKILLed mid-job; the other goes on alone in a
# new round once the dead one's lease expires (no restart spent).
rm -f "$OUT"/env.* "$OUT/go"
cat >"$OUT/hook.sh" <<'EOS'
if [ "$GROUP_WORLD_SIZE" = 2 ]; then
	i=0
	while [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
	exit 1
fi
EOS
ce="--nnodes=1:2 --nproc-per-node=1 --max-restarts=0 --rdzv-conf=$ETCD_CONF --no-python $T/w.sh"
agent e2 127.0.0.2 --rdzv-id=elastic $ce
agent e3 127.0.0.3 --rdzv-id=elastic $ce
wait_count "$OUT/env.0.2.*" 2 30 "workers of the 2-node round"
kill -9 "$(agent_pid e3)"
expect_exit e2 30 0
grep -q "GROUP_RANK=0 GROUP_WORLD_SIZE=1 .*RESTART_COUNT=0 " "$OUT/env.0.1.0" ||
	fail "the 1-node round: $(cat "$OUT/env.0.1.0" 2>&1)"
expect_in e2 "was lost"
echo "ok: elastic job survives SIGKILL of one agent"

# An agent frozen (SIGSTOP) past its lease: the other goes on alone; the
# frozen one, thawed, finds its lease gone, stops its workers and exits 75.
rm -f "$OUT"/env.*
agent f2 127.0.0.2 --rdzv-id=frozen $ce
agent f3 127.0.0.3 --rdzv-id=frozen $ce
wait_count "$OUT/env.0.2.*" 2 30 "workers of the 2-node round"
kill -STOP "$(agent_pid f3)"
expect_exit f2 30 0
kill -CONT "$(agent_pid f3)"
expect_exit f3 30 75
grep -q "lost the etcd cluster\|lease .* expired" "$T/f3.log" ||
	{ tail -n 5 "$T/f3.log"; fail "f3 does not say it lost its lease:"; }
tail -n 1 "$T/f3.log"
echo "ok: an agent frozen past its lease is out; the job went on without it"

# Loss of quorum mid-job: two members killed; every agent fails with 75
# within the keep-alive window (3 s) plus a margin, saying why.
rm -f "$OUT"/env.*
cat >"$OUT/hook.sh" <<'EOS'
i=0
while [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
exit 1
EOS
agent q2 127.0.0.2 --rdzv-id=quorum $c2
agent q3 127.0.0.3 --rdzv-id=quorum $c2
wait_count "$OUT/env.0.2.*" 2 30 "workers before the quorum loss"
etcd_kill 1
etcd_kill 2
T0=$(date +%s)
quorum_lost q2 q3 15
echo "ok: loss of quorum fails every node with 75 in $EL s"

# A cluster without quorum from the start (one member of three is left):
# 75 within read_timeout (3 s) plus a margin, whatever etcd does with the
# requests meanwhile.
t0=$(date +%s)
agent nq 127.0.0.2 --rdzv-id=noquorum --rdzv-conf="$ETCD_CONF,read_timeout=3" \
	--nnodes=2 --nproc-per-node=1 --no-python "$T/w.sh"
expect_exit nq 20 75
el=$(($(date +%s) - t0))
[ "$el" -le 6 ] || { cat "$T/nq.log"; fail "no quorum at start took $el s"; }
expect_in nq "cannot reach the etcd cluster within read_timeout (3 s)"
echo "ok: no quorum at start: 75 in $el s"

# Nothing listens at the endpoint / the endpoint is not etcd: 75 within
# read_timeout (2 s) plus a margin, with a clear message.
dead=$(free_port)
t0=$(date +%s)
"$CGRUN" --rdzv-backend=etcd-v3 --rdzv-endpoint="127.0.0.1:$dead" --rdzv-id=x \
	--rdzv-conf=read_timeout=2,request_timeout=0.5 --nnodes=2 --no-python true \
	>"$T/u.log" 2>&1
rc=$?
el=$(($(date +%s) - t0))
[ "$rc" = 75 ] && [ "$el" -le 10 ] || { cat "$T/u.log"; fail "unreachable: exit $rc after $el s"; }
grep -q "cannot reach the etcd cluster within read_timeout (2 s)" "$T/u.log" ||
	{ cat "$T/u.log"; fail "unreachable: unclear message:"; }
python3 -c '
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.send_response(200); self.send_header("Content-Length", "13"); self.end_headers()
        self.wfile.write(b"<html></html>")
    def log_message(self, *a): pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()' >"$T/web.port" 2>/dev/null &
track $!
wait_file "$T/web.port" $! 10 "the web server's port"
"$CGRUN" --rdzv-backend=etcd-v3 --rdzv-endpoint="127.0.0.1:$(cat "$T/web.port")" --rdzv-id=x \
	--rdzv-conf=read_timeout=2,request_timeout=0.5 --nnodes=2 --no-python true \
	>"$T/n.log" 2>&1
rc=$?
[ "$rc" = 75 ] && grep -q "not an etcd v3 gateway answer" "$T/n.log" ||
	{ cat "$T/n.log"; fail "not etcd: exit $rc:"; }
cat "$T/u.log" "$T/n.log"
echo "ok: unreachable and non-etcd endpoints fail with 75"

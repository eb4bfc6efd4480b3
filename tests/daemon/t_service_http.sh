#!/bin/sh
# cgrun-rdzvd's observability port: bound to loopback by default, /metrics
# in Prometheus text format counts what clients did (connections by
# dialect, requests by op, bytes, jobs, rounds, nodes), /status is JSON
# with every job and its nodes (address, last keep-alive); SIGTERM tells a
# waiting agent its job is over, and the agent says so and exits.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
top=$TOP
rdzvd=$RDZVD
cgrun=$CGRUN
py=/usr/bin/python3; [ -x $py ] || py=python3
tool="$py $top/tests/daemon/service_tool.py"
tmp=$T

"$rdzvd" -d -v --host=127.0.0.1 --port=0 --http-port=0 >"$tmp/out" 2>"$tmp/err" &
d=$!; track $d
$tool wait "$tmp/out" '^http listening on' 5 >/dev/null || { cat "$tmp/err"; fail "no http line"; }
port=$(sed -n 's/^listening on 127.0.0.1:\([0-9]*\)$/\1/p' "$tmp/out")
hline=$(grep '^http listening on' "$tmp/out")
case $hline in "http listening on 127.0.0.1:"*) echo "ok: $hline (loopback by default)" ;;
	*) fail_later "default http address: $hline" ;; esac
hport=${hline##*:}
url=http://127.0.0.1:$hport

# Two TCPStore clients (torch 1.13 dialect): 2 SET, 2 GET, 2 ADD.
$tool store 127.0.0.1 "$port" 5 && $tool store 127.0.0.1 "$port" 10 ||
	fail_later "the TCPStore clients"
$tool http "$url/metrics" >"$tmp/m1"
head -n 2 "$tmp/m1" | tail -n 1 | grep -q '^text/plain; version=0.0.4' ||
	fail_later "/metrics content type: $(sed -n 2p "$tmp/m1")"
for l in 'cgrun_rdzvd_requests_total{op="set"} 2' 'cgrun_rdzvd_requests_total{op="get"} 2' \
    'cgrun_rdzvd_requests_total{op="add"} 2' 'cgrun_rdzvd_requests_total{op="wait"} 0' \
    'cgrun_rdzvd_connections_accepted_total 2' 'cgrun_rdzvd_keys 2' \
    'cgrun_rdzvd_connections{dialect="torch_v1"} 0' 'cgrun_rdzvd_jobs{state="JOINING"} 0'; do
	grep -qxF "$l" "$tmp/m1" || fail_later "/metrics lacks: $l"
done
# Request bytes: 2 x (SET 1+8+4+8+5, GET 1+8+4, ADD 1+8+4+8); replies 2 x (8+5 + 8).
grep -qx 'cgrun_rdzvd_received_bytes_total 120' "$tmp/m1" || { fail_later "received bytes:"; grep received_bytes "$tmp/m1"; }
grep -qx 'cgrun_rdzvd_sent_bytes_total 42' "$tmp/m1" || { fail_later "sent bytes:"; grep sent_bytes "$tmp/m1"; }
# Every sample line is "name{labels} value" or "name value", every family typed.
bad=$(sed '1,2d' "$tmp/m1" | grep -v '^# \(HELP\|TYPE\) ' | grep -Evc '^[a-z_]+(\{[a-z_]+="[^"]*"\})? [0-9]+$')
[ "$bad" -eq 0 ] || fail_later "$bad malformed sample lines"
no_failures && echo "ok: /metrics counts the store clients"

# An agent waiting for a second node: /status shows its job and node.
if [ -x "$cgrun" ]; then
	"$cgrun" --nnodes=2 --nproc-per-node=1 --rdzv-backend=c10d \
		--rdzv-endpoint=127.0.0.1:"$port" --rdzv-id=svcjob --max-restarts=0 \
		--rdzv-conf=join_timeout=60 /bin/sleep 60 >"$tmp/agent" 2>&1 &
	a=$!; track $a
	# Poll /status until the node appears (deadline 10 s).
	i=0; while [ $i -lt 200 ]; do
		$tool http "$url/status" >"$tmp/s" 2>/dev/null
		grep -q '"host"' "$tmp/s" && break
		sleep 0.05; i=$((i + 1))
	done
	sed '1,2d' "$tmp/s" >"$tmp/s.json"
	$py - "$tmp/s.json" "$a" <<'PY' || { fail_later "/status:"; cat "$tmp/s.json"; }
import json, sys
st = json.load(open(sys.argv[1]))
jobs = [j for j in st["jobs"] if j["run_id"] == "svcjob"]
assert len(jobs) == 1, "job svcjob not in /status: %r" % st["jobs"]
j = jobs[0]
assert j["state"] == "JOINING" and j["round"] == 0 and j["restarts"] == 0, j
assert j["min_nodes"] == 2 and j["max_nodes"] == 2, j
assert len(j["nodes"]) == 1, j
n = j["nodes"][0]
assert n["state"] == "WAIT" and n["connected"] is True, n
assert n["store_addr"] and 0 < n["store_port"] < 65536, n
assert 0 <= n["last_keepalive_ms_ago"] < 30000, n
assert st["store"]["connections"]["native"] == 1, st["store"]
print("ok: /status shows job svcjob, node %s store %s:%d, last keep-alive %d ms ago"
      % (n["host"], n["store_addr"], n["store_port"], n["last_keepalive_ms_ago"]))
PY
	$tool http "$url/metrics" >"$tmp/m2"
	for l in 'cgrun_rdzvd_jobs{state="JOINING"} 1' 'cgrun_rdzvd_nodes{state="WAIT"} 1' \
	    'cgrun_rdzvd_connections{dialect="native"} 1' 'cgrun_rdzvd_rounds_total 0'; do
		grep -qxF "$l" "$tmp/m2" || fail_later "/metrics with an agent lacks: $l"
	done
	no_failures || { grep -E '^cgrun_rdzvd_(nodes|jobs|conn)' "$tmp/m2"; cat "$tmp/agent"; }
else
	skip_later "$cgrun not built: the part with an agent not run"
	a=
fi

# Other paths and methods; the daemon keeps serving after them.
r=$($tool http "$url/nope" | head -n 1); [ "$r" = 404 ] || fail_later "/nope gave $r"
r=$($py -c "
import http.client, sys
c = http.client.HTTPConnection('127.0.0.1', int(sys.argv[1]), timeout=5)
c.request('POST', '/metrics'); print(c.getresponse().status)" "$hport")
[ "$r" = 405 ] || [ "$r" = 501 ] || fail_later "POST gave $r"
echo "ok: /nope 404, POST $r"
r=$($py -c "
import socket, sys
s = socket.create_connection(('127.0.0.1', int(sys.argv[1])), 5)
s.sendall(b'GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: ' + b'a' * 20000 + b'\r\n\r\n')
print(s.recv(64).split(b' ')[1].decode() if True else '')" "$hport" 2>&1)
case $r in 4*) echo "ok: oversized headers refused ($r)" ;; *) fail_later "oversized headers: $r" ;; esac
$tool store 127.0.0.1 "$port" 15 >/dev/null || fail_later "store after HTTP abuse"

# SIGINT (the stop that ends jobs; SIGTERM is a restart, see
# t_daemon_restart.sh): the agent hears its job is over and exits non-zero
# with why.
kill -INT $d
i=0; while kill -0 $d 2>/dev/null && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
kill -0 $d 2>/dev/null && fail_later "daemon alive 10 s after SIGINT"
wait $d; rc=$?; [ $rc -eq 0 ] || fail_later "daemon exit $rc"
if [ -n "$a" ]; then
	i=0; while kill -0 $a 2>/dev/null && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
	wait $a; arc=$?
	grep -q 'shutting down' "$tmp/agent" && [ $arc -ne 0 ] ||
		{ fail_later "agent exit $arc:"; cat "$tmp/agent"; }
	echo "ok: agent told at SIGINT, exit $arc: $(grep 'shutting down' "$tmp/agent")"
	grep -q 'agents_told=1' "$tmp/err" || fail_later "daemon did not log agents_told=1"
fi

# --http-host chooses another address.
"$rdzvd" -d --host=127.0.0.1 --port=0 --http-port=0 --http-host=127.0.0.2 >"$tmp/out3" 2>&1 &
d3=$!; track $d3
$tool wait "$tmp/out3" '^http listening on 127.0.0.2:' 5 ||
	{ cat "$tmp/out3"; fail_later "--http-host=127.0.0.2 not used"; }
kill -TERM $d3; wait $d3

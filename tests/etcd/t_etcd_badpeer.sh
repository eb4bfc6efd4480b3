#!/bin/sh
# Endpoints that are not etcd, answering in every bad way
# (tests/etcd/fake.py): bytes that are not HTTP, a 3 MiB body, a body
# dripped one byte per 100 ms, no answer at all (the connection held),
# JSON nested 200 deep, a revision that is not a number.  Alone in
# --rdzv-endpoint, each fails the agent with 75 within read_timeout (3 s)
# plus a margin, the last line naming the member and what was wrong;
# listed first before the real members (a 3-member cluster), they cost
# each agent a failed try and the job runs (one round, exit 0).  Behind
# proxies that break every watch (fake.py brokenwatch: a line that is not
# JSON), the job runs on reads alone, each agent names the member that
# broke its watch and watches again at most once per read (about two a
# second with keep_alive_interval=0.5), not in a busy loop.
# t_etcd_faults.sh has the closed port and the HTML page.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$TOP/tests/interop/lib.sh"
. "$TOP/tests/multinode/lib.sh"
. "$TOP/tests/etcd/lib.sh"
python3 "$TOP/tests/etcd/fake.py" garbage huge drip silent deep badjson >"$T/fake.ports" &
track $!
wait_file "$T/fake.ports" $! 10 "the fake endpoints' ports"
until [ "$(wc -l <"$T/fake.ports")" = 6 ]; do sleep 0.05; done
port() {
	sed -n "s/^$1 //p" "$T/fake.ports"
}

# Alone: all six at once, each its own agent.
t0=$(date +%s)
while read -r mode p; do
	"$CGRUN" --rdzv-backend=etcd-v3 --rdzv-endpoint="127.0.0.1:$p" --rdzv-id=bad \
		--rdzv-conf=read_timeout=3,request_timeout=0.5 --nnodes=2 --no-python true \
		>"$T/$mode.log" 2>&1 </dev/null &
	echo $! >"$T/$mode.pid"
	track $!
done <"$T/fake.ports"
# want MODE TEXT: the agent exited 75 and its last line names the member
# and says TEXT.
want() {
	expect_exit "$1" 15 75
	last=$(tail -n 1 "$T/$1.log")
	case $last in
	*"cannot reach the etcd cluster within read_timeout (3 s)"*"http://127.0.0.1:$(port "$1"): $2"*) echo "$1: $last" ;;
	*) fail "$1: unclear last line: $last" ;;
	esac
}
want garbage "Received HTTP/0.9"
want huge "answer longer than 1 MiB"
want drip "Operation timed out after"
want silent "Operation timed out after"
want deep "not an etcd v3 gateway answer (HTTP 200, nesting too deep)"
want badjson "not an etcd v3 gateway answer (HTTP 200, a number field is not a number)"
el=$(($(date +%s) - t0))
[ "$el" -le 8 ] || fail "six bad endpoints took $el s"
echo "ok: six kinds of non-etcd endpoint fail with 75 in $el s, naming the member"

# First in the list, before the real members: the job runs.
etcd_up 3
go_workers
touch "$OUT/go"
c2="--nnodes=2 --nproc-per-node=1 --rdzv-conf=$ETCD_CONF --no-python $T/w.sh"
"$CGRUN" -v --rdzv-backend=etcd-v3 --rdzv-endpoint="127.0.0.1:$(port huge),$ETCD_ENDPOINTS" \
	--local-addr=127.0.0.2 --rdzv-id=mixed $c2 >"$T/m2.log" 2>&1 </dev/null &
echo $! >"$T/m2.pid"
track $!
"$CGRUN" -v --rdzv-backend=etcd-v3 --rdzv-endpoint="127.0.0.1:$(port silent),$ETCD_ENDPOINTS" \
	--local-addr=127.0.0.3 --rdzv-id=mixed $c2 >"$T/m3.log" 2>&1 </dev/null &
echo $! >"$T/m3.pid"
track $!
one_round m2 m3
[ -z "$(etcd_keys mixed)" ] || fail "keys left: $(etcd_keys mixed)"
echo "ok: a non-etcd member first in the list costs one try; the job runs"

# Behind proxies that break every watch: the job runs on reads (3 s of
# it with the workers running, to count the watches meanwhile).
rm -f "$OUT"/env.* "$OUT/go"
python3 "$TOP/tests/etcd/fake.py" "brokenwatch=$ETCD_MEMBER_1" "brokenwatch=$ETCD_MEMBER_2" \
	"brokenwatch=$ETCD_MEMBER_3" >"$T/proxy.ports" &
track $!
wait_file "$T/proxy.ports" $! 10 "the proxies' ports"
until [ "$(wc -l <"$T/proxy.ports")" = 3 ]; do sleep 0.05; done
ETCD_ENDPOINTS=$(sed 's/^brokenwatch /127.0.0.1:/' "$T/proxy.ports" | paste -sd,)
t0=$(date +%s)
agent w2 127.0.0.2 --rdzv-id=brokenwatch $c2
agent w3 127.0.0.3 --rdzv-id=brokenwatch $c2
wait_count "$OUT/env.0.2.*" 2 30 "workers behind the broken watches"
sleep 3
touch "$OUT/go"
one_round w2 w3
el=$(($(date +%s) - t0))
for n in w2 w3; do
	k=$(grep -c "watch on .* ended: http://127.0.0.1:[0-9]*: not an etcd v3 gateway answer" "$T/$n.log")
	echo "$n: $k broken watches in $el s"
	[ "$k" -ge 1 ] && [ "$k" -le $((el * 3 + 10)) ] ||
		{ tail -n 5 "$T/$n.log"; fail "$n watched $k times in $el s"; }
done
echo "ok: broken watches are named and retried once per read; the job ran"

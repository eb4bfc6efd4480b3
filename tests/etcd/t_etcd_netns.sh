#!/bin/sh
# The etcd-v3 backend across a real network partition: as root, the 3
# etcd members each in a network namespace on a veth pair to a bridge of
# this host's (tests/etcd/cluster.sh, CGRUN_ETCD_NETNS=1), the agents on
# this host with every member in their --rdzv-endpoint.  Cutting a
# member's link (no RST, no FIN: its packets vanish):
#  - mid-rendezvous, the member the waiting agent talks to (the first it
#    lists): a second agent, which lists it first too, fails over at once
#    and the round of two forms through the other two members;
#  - mid-job, the leader: the job ends in its one round, exit 0, no
#    restart;
#  - with the default request_timeout (5 s), an agent whose first member
#    is cut gets past it within the connect bound (2 s) and its job forms;
# and after healing, the member is back in the cluster, healthy, and a
# new job on all three members runs.  Two members cut mid-job (no quorum,
# and requests to them hang rather than fail): every agent stops its
# workers and exits 75 naming the keep-alive window, within it plus a
# margin; healed, the cluster is whole again.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$TOP/tests/interop/lib.sh"
. "$TOP/tests/multinode/lib.sh"
. "$TOP/tests/etcd/lib.sh"
export CGRUN_ETCD_NETNS=1
etcd_up 3
go_workers
c2="--nnodes=2 --nproc-per-node=1 --rdzv-conf=$ETCD_CONF --no-python $T/w.sh"

# wait_log NAME TEXT SECS: the agent's log says TEXT within SECS.
wait_log() {
	i=0
	until grep -q -- "$2" "$T/$1.log"; do
		[ $i -ge $(($3 * 10)) ] && { tail -n 20 "$T/$1.log"; fail "$1 never said \"$2\":"; }
		sleep 0.1; i=$((i + 1))
	done
}

# healthy: every member answers with a leader (the cluster whole again).
healthy() {
	i=0
	until $ETCDCTL --endpoints="$ETCD_ENDPOINTS" endpoint health >/dev/null 2>&1; do
		[ $i -ge 150 ] && { echo "FAIL: the cluster is not whole again:";
			$ETCDCTL --endpoints="$ETCD_ENDPOINTS" endpoint health 2>&1; exit 1; }
		sleep 0.1; i=$((i + 1))
	done
}

# Mid-rendezvous: p2 waits through m1 (its first member); m1 is cut; p3,
# listing m1 first as well, joins; the round of two forms.
agent p2 127.0.0.2 --rdzv-id=cutrdzv $c2
wait_log p2 "none -> joining" 20
wait_log p2 "lease .* via http://$ETCD_MEMBER_1" 1
etcd_cut 1
echo "cut m1 ($ETCD_MEMBER_1) while p2 waited"
t0=$(date +%s)
agent p3 127.0.0.3 --rdzv-id=cutrdzv $c2
wait_count "$OUT/env.0.2.*" 2 30 "workers of the round formed without m1"
echo "round of two formed $(($(date +%s) - t0)) s after p3 started"
touch "$OUT/go"
one_round p2 p3
etcd_heal 1
healthy
[ -z "$(etcd_keys cutrdzv)" ] || fail "keys left: $(etcd_keys cutrdzv)"
echo "ok: a member cut mid-rendezvous"

# Mid-job: the leader cut while the workers run; the job ends in its round.
rm -f "$OUT"/env.* "$OUT/go"
agent j2 127.0.0.2 --rdzv-id=cutjob $c2
agent j3 127.0.0.3 --rdzv-id=cutjob $c2
wait_count "$OUT/env.0.2.*" 2 30 "workers before the cut"
l=$(etcd_leader) || fail "no etcd leader"
etcd_cut "$l"
echo "cut the leader m$l mid-job"
sleep 1
touch "$OUT/go"
one_round j2 j3
etcd_heal "$l"
healthy
echo "ok: the leader cut mid-job"

# The default request_timeout (5 s, connect bound 2 s): the first member
# cut before the agents start; they pass it and the job forms.
rm -f "$OUT"/env.* "$OUT/go"
etcd_cut 1
cd="--nnodes=2 --nproc-per-node=1 --rdzv-conf=last_call_timeout=1 --no-python $T/w.sh"
t0=$(date +%s)
agent d2 127.0.0.2 --rdzv-id=cutfirst $cd
agent d3 127.0.0.3 --rdzv-id=cutfirst $cd
wait_count "$OUT/env.0.2.*" 2 30 "workers with the first member cut"
el=$(($(date +%s) - t0))
echo "formed in $el s with the first member cut"
[ "$el" -le 10 ] || { stuck_report; fail "the first member cut stalled the round for $el s"; }
expect_in d2 "lease .* via http://$ETCD_MEMBER_2"
touch "$OUT/go"
one_round d2 d3
etcd_heal 1
healthy
echo "ok: agents whose first member is cut pass it"

# Healed: all three members serve a new job; m1 has every key written
# while it was cut.
rm -f "$OUT"/env.* "$OUT/go"
touch "$OUT/go"
agent h2 127.0.0.2 --rdzv-id=healed --rdzv-endpoint="$ETCD_MEMBER_1" $c2
agent h3 127.0.0.3 --rdzv-id=healed $c2
one_round h2 h3
r1=$($ETCDCTL --endpoints="$ETCD_MEMBER_1" get / -w fields --consistency=s | sed -n 's/^"Revision" : //p')
r2=$($ETCDCTL --endpoints="$ETCD_MEMBER_2" get / -w fields --consistency=s | sed -n 's/^"Revision" : //p')
echo "revisions after healing: m1 $r1, m2 $r2"
[ -n "$r1" ] && [ "$r1" = "$r2" ] || fail "m1 at revision $r1, m2 at $r2"
echo "ok: healed member serves again"

# Quorum lost to a partition mid-job: 75 on every node within the
# keep-alive window (3 s) plus a margin, though requests hang, not fail.
rm -f "$OUT"/env.* "$OUT/go"
agent q2 127.0.0.2 --rdzv-id=cutquorum $c2
agent q3 127.0.0.3 --rdzv-id=cutquorum $c2
wait_count "$OUT/env.0.2.*" 2 30 "workers before the quorum was cut"
etcd_cut 2
etcd_cut 3
T0=$(date +%s)
quorum_lost q2 q3 15
left=$(pgrep -f "$T/w.sh" || true)
[ -z "$left" ] || fail "workers left running: $left"
etcd_heal 2
etcd_heal 3
healthy
echo "ok: quorum cut mid-job: 75 on every node in $EL s; healed"

#!/bin/sh
# A watch whose revision etcd compacted away, end to end on a real
# 3-member cluster: an agent is frozen (SIGSTOP) while megabytes of
# revisions are written under its run's prefix (tests/etcd/flood.py, until
# etcd counts the frozen agent's watcher as slow: more than the buffers
# between etcd and the agent hold), then etcd compacts past them and
# defragments; thawed, the agent reads the backlog, gets etcd's
# "compacted" answer, says so (naming the compaction revision), reads the
# run's keys again, watches from there, and the job goes on: once mid-job
# (the job ends in its one round, exit 0 everywhere) and once
# mid-rendezvous (the frozen agent was the first to wait; the second joins
# meanwhile; the round of two forms and runs).  The agents' leases outlive the freeze
# (keep_alive_interval=1 x 30), so only the watch is at stake.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$TOP/tests/interop/lib.sh"
. "$TOP/tests/multinode/lib.sh"
ETCD_CONF=keep_alive_interval=1,keep_alive_max_attempt=30,last_call_timeout=1,join_timeout=60,read_timeout=10,request_timeout=2
. "$TOP/tests/etcd/lib.sh"
etcd_up 3
go_workers
c2="--nnodes=2 --nproc-per-node=1 --rdzv-conf=$ETCD_CONF --no-python $T/w.sh"
m1=${ETCD_MEMBER_1#*://}

# compact_under RUN: while an agent is frozen, puts of 32 KiB under RUN's
# prefix until etcd counts its watcher as slow (its buffers full: etcd
# stops sending to it), at most 2000 (80 MB of watch events), the junk
# deleted, then the cluster compacted at its newest revision and
# defragmented.
compact_under() {
	rev=$(python3 "$TOP/tests/etcd/flood.py" "$m1" "/cgrun/v1/$1/junk/" 2000 32768 \
		"$(echo "$ETCD_ENDPOINTS" | sed 's|http://||g')") ||
		fail "flood: $rev"
	$ETCDCTL --endpoints="$ETCD_ENDPOINTS" del --prefix "/cgrun/v1/$1/junk/" >/dev/null
	rev=$($ETCDCTL --endpoints="$ETCD_ENDPOINTS" get / -w fields |
		sed -n 's/^"Revision" : //p')
	$ETCDCTL --endpoints="$ETCD_ENDPOINTS" compact --physical "$rev" >/dev/null ||
		fail "etcdctl compact $rev"
	$ETCDCTL --endpoints="$ETCD_ENDPOINTS" defrag >/dev/null ||
		fail "etcdctl defrag"
	echo "compacted at revision $rev"
	COMPACTED=$rev
}

# wait_compacted NAME: the thawed agent reads its backlog and says, within
# 30 s, that etcd compacted its watch's revision away.
wait_compacted() {
	i=0
	until grep -q "revision compacted away (now $COMPACTED)" "$T/$1.log"; do
		[ $i -ge 300 ] && { echo "FAIL: $1 never noticed the compaction at $COMPACTED:";
			tail -n 20 "$T/$1.log"; exit 1; }
		sleep 0.1; i=$((i + 1))
	done
	grep "revision compacted away" "$T/$1.log"
}

# Mid-job: g3 frozen while its worker runs.
agent g2 127.0.0.2 --rdzv-id=compactjob $c2
agent g3 127.0.0.3 --rdzv-id=compactjob $c2
wait_count "$OUT/env.0.2.*" 2 30 "workers of the round"
kill -STOP "$(agent_pid g3)"
compact_under compactjob
kill -CONT "$(agent_pid g3)"
wait_compacted g3
touch "$OUT/go"
one_round g2 g3
[ -z "$(etcd_keys compactjob)" ] || fail "keys left: $(etcd_keys compactjob)"
echo "ok: a watch compacted away mid-job"

# Mid-rendezvous: r2 waits alone for a second node and is frozen; the
# history is compacted away; r3 joins and closes the round of two; r2,
# thawed, learns of the round only through its re-read and starts its
# worker in it.
rm -f "$OUT"/env.* "$OUT/go"
agent r2 127.0.0.2 --rdzv-id=compactrdzv $c2
i=0
until grep -q "none -> joining" "$T/r2.log"; do
	[ $i -ge 200 ] && { tail -n 20 "$T/r2.log"; fail "r2 does not wait:"; }
	sleep 0.1; i=$((i + 1))
done
kill -STOP "$(agent_pid r2)"
compact_under compactrdzv
agent r3 127.0.0.3 --rdzv-id=compactrdzv $c2
wait_count "$OUT/env.0.2.1" 1 30 "r3's worker in the round of two"
kill -CONT "$(agent_pid r2)"
wait_count "$OUT/env.0.2.0" 1 30 "r2's worker after the thaw"
wait_compacted r2
touch "$OUT/go"
one_round r2 r3
grep -q "GROUP_RANK=0 GROUP_WORLD_SIZE=2 " "$OUT/env.0.2.0" ||
	fail "r2's worker: $(cat "$OUT/env.0.2.0")"
[ -z "$(etcd_keys compactrdzv)" ] || fail "keys left: $(etcd_keys compactrdzv)"
echo "ok: a watch compacted away mid-rendezvous"

# Helpers of the etcd scripts (tests/etcd/t_etcd_*.sh): a real 3-member etcd
# cluster on loopback (tests/etcd/cluster.sh; the script skips with the
# harness' reason where etcd cannot run) and cgrun agents on loopback
# addresses 127.0.0.2, ... using it with --rdzv-backend=etcd-v3.  Sourced
# after tests/lib.sh, tests/interop/lib.sh and tests/multinode/lib.sh (T,
# track, skip, envworker, wait_agent, expect_exit, wait_count), whose
# `agent` it replaces.  The cluster is stopped on exit, after the agents.

ECL=$(tmpdir etcd)
ETCDCTL="env ETCDCTL_API=3 etcdctl --command-timeout=3s"
# Fast etcd rendezvous timers: a lost node is seen within 3 s.
ETCD_CONF=${ETCD_CONF:-keep_alive_interval=0.5,keep_alive_max_attempt=6,last_call_timeout=1,join_timeout=60,read_timeout=10,request_timeout=1}

at_exit 'sh "$TOP/tests/etcd/cluster.sh" down "$ECL" >/dev/null 2>&1'

# etcd_up [N]: start the cluster or skip; sets ETCD_ENDPOINTS and friends.
etcd_up() {
	out=$(sh "$TOP/tests/etcd/cluster.sh" up "$ECL" "${1:-3}" 2>&1)
	case $? in
	0) ;;
	77) skip "$(echo "$out" | tail -n 1)" ;;
	*) fail "etcd cluster: $out" ;;
	esac
	. "$ECL/cluster.env"
}

# etcd_kill I: SIGKILL member I; etcd_leader: the leader's number.
etcd_kill() {
	sh "$TOP/tests/etcd/cluster.sh" kill "$ECL" "$1"
}
etcd_leader() {
	sh "$TOP/tests/etcd/cluster.sh" leader "$ECL"
}

# etcd_keys RUN_ID: the keys cgrun holds for a run (empty once it ended).
etcd_keys() {
	tls=
	[ -z "$ETCD_TLS" ] || tls="--cacert $ECL/tls/ca.pem --cert $ECL/tls/client.pem --key $ECL/tls/client.key"
	$ETCDCTL --endpoints="$ETCD_ENDPOINTS" $tls get --prefix --keys-only \
		"/cgrun/v1/$1/" | grep . || true
}

# agent NAME ADDR CGRUN-ARGS...: one agent on the etcd cluster, in the
# background; output in $T/NAME.log, pid in $T/NAME.pid.
agent() {
	name=$1 addr=$2
	shift 2
	"$CGRUN" -v --rdzv-backend=etcd-v3 --rdzv-endpoint="$ETCD_ENDPOINTS" \
		--local-addr="$addr" "$@" >"$T/$name.log" 2>&1 </dev/null &
	echo $! >"$T/$name.pid"
	track $!
}

# expect_in NAME TEXT: the agent's log says TEXT.
expect_in() {
	grep -q -- "$2" "$T/$1.log" ||
		{ tail -n 30 "$T/$1.log"; fail "$1 does not say \"$2\"; its log:"; }
}

# go_workers: $OUT (exported), the env-recording worker $T/w.sh, and a
# hook that makes each worker wait (at most 60 s) for $OUT/go, then exit 0.
go_workers() {
	export OUT="$T/out"
	mkdir -p "$OUT"
	envworker "$T/w.sh"
	cat >"$OUT/hook.sh" <<'EOS'
i=0
while [ ! -f "$OUT/go" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
[ -f "$OUT/go" ] || exit 1
EOS
}

# etcd_cut I / etcd_heal I: member I's link down / up (a cluster made with
# CGRUN_ETCD_NETNS=1: packets to and from it vanish, no RST).
etcd_cut() {
	sh "$TOP/tests/etcd/cluster.sh" cut "$ECL" "$1"
}
etcd_heal() {
	sh "$TOP/tests/etcd/cluster.sh" heal "$ECL" "$1"
}

# one_round NAME NAME: both agents exit 0 and their two workers ran once,
# in attempt 0 (no restart spent).
one_round() {
	expect_exit "$1" 60 0
	expect_exit "$2" 60 0
	[ "$(ls "$OUT"/env.* | wc -l)" = 2 ] || fail "more than one round: $(ls "$OUT")"
	for f in "$OUT"/env.0.2.0 "$OUT"/env.0.2.1; do
		grep -q "RESTART_COUNT=0 " "$f" || fail "$f: $(cat "$f")"
	done
}

# quorum_lost NAME NAME SECS: both agents exit 75 within SECS of $T0 (set
# when the quorum went), each saying it lost the cluster after the 3 s
# keep-alive window of ETCD_CONF; the seconds it took in EL.
quorum_lost() {
	expect_exit "$1" 20 75
	expect_exit "$2" 20 75
	EL=$(($(date +%s) - T0))
	[ "$EL" -le "$3" ] || fail "the lost quorum took $EL s to fail the job"
	expect_in "$1" "lost the etcd cluster: no keep-alive answered for 3 s"
	expect_in "$2" "lost the etcd cluster: no keep-alive answered for 3 s"
}

#!/bin/sh
# The DDP example (examples/ddp/train.py, torch 1.13, gloo) on two agents
# meeting in a real 3-member etcd cluster: in one run the etcd leader is
# SIGKILLed while the workers train and rank 3 then crashes before step 9;
# the job restarts on both nodes through the two remaining members,
# resumes from its checkpoint and ends with final weights identical to an
# uninterrupted run's.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$TOP/tests/interop/lib.sh"
. "$TOP/tests/multinode/lib.sh"
. "$TOP/tests/etcd/lib.sh"
need_torch113
TRAIN=$TOP/examples/ddp/train.py
[ -f "$TRAIN" ] || skip "examples/ddp/train.py is not there"
etcd_up 3

# run NAME [ENV...]: the example on two nodes (in the background).
run() {
	name=$1
	shift
	mkdir -p "$T/$name"
	for n in 2 3; do
		env "$@" "$CGRUN" -v --log-prefix=rank --rdzv-backend=etcd-v3 --rdzv-endpoint="$ETCD_ENDPOINTS" \
			--local-addr=127.0.0.$n --nnodes=2 --nproc-per-node=2 --max-restarts=2 \
			--rdzv-id="ddp-$name" --rdzv-conf="$ETCD_CONF" --no-python "$PY113" "$TRAIN" \
			--steps 16 --ckpt-every 4 --ckpt-dir "$T/$name/ckpt" --out "$T/$name/final.pt" \
			>"$T/$name.n$n.log" 2>&1 </dev/null &
		echo $! >"$T/$name.n$n.pid"
		track $!
	done
}
digest() {
	sed -n 's/^\[rank0\]:final step=[0-9]* loss=[^ ]* sha256=\([0-9a-f]*\)$/\1/p' "$T/$1.n2.log"
}
run plain
expect_exit plain.n2 180 0
expect_exit plain.n3 180 0
run crash CRASH_AT_STEP=9 CRASH_RANK=3
i=0
until grep -q "workers started attempt=0" "$T/crash.n3.log"; do
	[ $i -ge 600 ] && { tail "$T/crash.n3.log"; fail "the crash run did not start"; }
	sleep 0.1; i=$((i + 1))
done
l=$(etcd_leader) || fail "no etcd leader"
etcd_kill "$l"
echo "killed etcd leader m$l while the workers train"
expect_exit crash.n2 180 0
expect_exit crash.n3 180 0
grep -q "injected crash before step 9" "$T/crash.n3.log" || { cat "$T/crash.n3.log"; fail "no crash injected"; }
for n in 2 3; do
	grep -q "workers started attempt=1 " "$T/crash.n$n.log" ||
		{ tail -n 30 "$T/crash.n$n.log"; fail "node $n did not restart its workers"; }
done
a=$(digest plain) b=$(digest crash)
echo "plain sha256=$a"
echo "crash sha256=$b"
[ -n "$a" ] && [ "$a" = "$b" ] || fail "final weights differ (or missing)"
cmp "$T/plain/final.pt" "$T/crash/final.pt" || fail "final weight files differ"
echo "ok: DDP over etcd, leader killed, crash restarted through the quorum left, same weights"

#!/bin/sh
# Issue 13 across two agents (127.0.0.2 and 127.0.0.3, 2 ranks each, one
# cgrun-rdzvd, torch 1.13 gloo DDP): rank 2, on the second node, blocks
# forever before step 12.  The second node's watchdog
# (--hang-timeout=3, output as progress) fires first: its own lines name
# node 1 and rank 2 in hang_here as the root cause (rank 3 waits in
# backward's all-reduce).  Both nodes restart once and the job ends with
# the same weights as an uninterrupted 2-node run.  When the first node
# restarts because the rendezvous asked, its line names node 1's rank 2
# and where it hung.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$TOP/tests/interop/lib.sh"
. "$TOP/tests/multinode/lib.sh"
. "$TOP/tests/hang/lib.sh"
need_torch113
need_watchdog
start_rdzvd

# run NAME [ENV...]: the job on two nodes; logs $T/NAME.n2.log, .n3.log.
run() {
	name=$1
	shift
	mkdir -p "$T/$name"
	for n in 2 3; do
		ht=30
		[ $n -eq 3 ] && ht=3
		env "$@" "$CGRUN" -v --log-prefix=rank --rdzv-backend=c10d --rdzv-endpoint="127.0.0.1:$RDZVD_PORT" \
			--local-addr=127.0.0.$n --nnodes=2 --nproc-per-node=2 --max-restarts=1 \
			--rdzv-id="hang-$name" --rdzv-conf="$FAST_CONF" \
			--hang-timeout=$ht --hang-progress=output --log-dir="$T/$name/logs.n$n" \
			--no-python "$PY113" "$HANG_TRAIN" --steps $HANG_STEPS --ckpt-every 4 \
			--ckpt-dir "$T/$name/ckpt" --out "$T/$name/final.pt" \
			>"$T/$name.n$n.log" 2>&1 </dev/null &
		echo $! >"$T/$name.n$n.pid"
		track $!
	done
	expect_exit "$name.n2" 240 0
	expect_exit "$name.n3" 240 0
}
run plain HANG_PRINT=1
run hang HANG_PRINT=1 HANG_AT_STEP=12 HANG_RANK=2
grep -q 'rank 2: hanging before step 12' "$T/hang.n3.log" || fail "no hang injected on node 1"
check_diagnosis "$T/hang.n3.log" 1 2 hang_here hang_train.py
for n in 2 3; do check_restarted_once "$T/hang.n$n.log"; done
# Node 0 restarts either because the rendezvous asked (node 1 failed
# first: then it names node 1 and its hung rank) or because its own ranks
# lost their peers (gloo errors); which comes first is a race.
if grep -q '^cgrun: restart requested by the rendezvous: ' "$T/hang.n2.log"; then
	grep -q "^cgrun: restart requested by the rendezvous: .*workers failed on node 127\.0\.0\.3[^:]*: rank 2 hung: .*hang_here (hang_train.py:[0-9]*)" "$T/hang.n2.log" ||
		{ grep '^cgrun' "$T/hang.n2.log"; fail "node 0's restart does not name node 1's hung rank 2"; }
fi
echo "node 0 said: $(grep -E '^cgrun: (hang|restart|worker exited)' "$T/hang.n2.log" | head -n 3)"
a=$(digest "$T/plain.n2.log") b=$(digest "$T/hang.n2.log")
echo "plain sha256=$a"
echo "hang  sha256=$b"
[ -n "$a" ] && [ "$a" = "$b" ] || fail "final weights differ (or missing)"
echo "ok: 2-node job, hang of rank 2 on node 1 named by node 1, both restarted, same weights"

#!/bin/sh
# The DDP example (examples/ddp/train.py, torch 1.13, gloo) across two
# agents (127.0.0.2 and 127.0.0.3, 2 workers each) and one cgrun-rdzvd: a
# run where rank 3 (on the second node) crashes before step 9 restarts the
# workers on both nodes, resumes from the checkpoint and ends with final
# weights identical to an uninterrupted 2-node run's.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$TOP/tests/interop/lib.sh"
. "$TOP/tests/multinode/lib.sh"
need_torch113
start_rdzvd
TRAIN=$TOP/examples/ddp/train.py
[ -f "$TRAIN" ] || skip "examples/ddp/train.py is not there"

# run NAME [ENV...]: the example on two nodes; outputs in $T/NAME.
run() {
	name=$1
	shift
	mkdir -p "$T/$name"
	for n in 2 3; do
		env "$@" "$CGRUN" -v --log-prefix=rank --rdzv-backend=c10d --rdzv-endpoint="127.0.0.1:$RDZVD_PORT" \
			--local-addr=127.0.0.$n --nnodes=2 --nproc-per-node=2 --max-restarts=2 \
			--rdzv-id="ddp-$name" --rdzv-conf="$FAST_CONF" --no-python "$PY113" "$TRAIN" \
			--steps 16 --ckpt-every 4 --ckpt-dir "$T/$name/ckpt" --out "$T/$name/final.pt" \
			>"$T/$name.n$n.log" 2>&1 </dev/null &
		echo $! >"$T/$name.n$n.pid"
		track $!
	done
	expect_exit "$name.n2" 120 0
	expect_exit "$name.n3" 120 0
}
digest() {
	sed -n 's/^\[rank0\]:final step=[0-9]* loss=[^ ]* sha256=\([0-9a-f]*\)$/\1/p' "$T/$1.n2.log"
}
run plain
run crash CRASH_AT_STEP=9 CRASH_RANK=3
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
echo "ok: 2-node DDP with a crash on the second node ends with the same weights"

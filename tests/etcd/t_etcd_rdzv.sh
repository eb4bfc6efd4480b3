#!/bin/sh
# --rdzv-backend=etcd-v3 on a real 3-member etcd cluster: two agents and
# then three rendezvous and run their workers with the torchrun
# environment (group ranks by host, rank 0's job store); a worker crash
# restarts the job on every node from one job-wide --max-restarts
# (TORCHELASTIC_RESTART_COUNT agrees); an elastic job takes in a node
# that joins while it runs (scale-up) and parks one beyond MAX as a spare;
# with the budget spent the failing
# node exits with its worker's status and the other with 75; "etcd" and
# "etcd-v2" are the same backend (-v says cgrun speaks v3); and no key is
# left in etcd once a job ended.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$TOP/tests/interop/lib.sh"
. "$TOP/tests/multinode/lib.sh"
. "$TOP/tests/etcd/lib.sh"
etcd_up 3
export OUT="$T/out"
mkdir -p "$OUT"
envworker "$T/w.sh"

# Two agents, two workers each.
c2="--nnodes=2 --nproc-per-node=2 --rdzv-conf=$ETCD_CONF --no-python $T/w.sh"
agent a2 127.0.0.2 --rdzv-id=two $c2
agent a3 127.0.0.3 --rdzv-id=two $c2
expect_exit a2 60 0
expect_exit a3 60 0
for r in 0 1 2 3; do
	f="$OUT/env.0.2.$r"
	[ -f "$f" ] || { ls "$OUT"; fail "rank $r did not run"; }
	g=$((r / 2))
	case "$(cat "$f")" in
	*"WORLD_SIZE=4 GROUP_RANK=$g GROUP_WORLD_SIZE=2 "*"MASTER_ADDR=127.0.0.2 "*"RESTART_COUNT=0 RUN_ID=two") ;;
	*) fail "rank $r: $(cat "$f")" ;;
	esac
done
[ -z "$(etcd_keys two)" ] || fail "keys left: $(etcd_keys two)"
echo "ok: two agents"

# Three agents, under the names etcd and etcd-v2 as well.
rm -f "$OUT"/env.*
c3="--nnodes=3 --nproc-per-node=1 --rdzv-id=three --rdzv-conf=$ETCD_CONF --no-python $T/w.sh"
"$CGRUN" --help >/dev/null 2>&1
agent b4 127.0.0.4 --rdzv-backend=etcd $c3
agent b2 127.0.0.2 --rdzv-backend=etcd-v2 $c3
agent b3 127.0.0.3 $c3
for n in b2 b3 b4; do expect_exit $n 60 0; done
for r in 0 1 2; do
	grep -q "GROUP_RANK=$r GROUP_WORLD_SIZE=3 .*MASTER_ADDR=127.0.0.2 " "$OUT/env.0.3.$r" ||
		fail "3 agents, rank $r: $(cat "$OUT/env.0.3.$r" 2>&1)"
done
expect_in b2 "cgrun speaks etcd's v3 API"
[ -z "$(etcd_keys three)" ] || fail "keys left: $(etcd_keys three)"
echo "ok: three agents"

# Spares and scale-up: --nnodes=1:2, a first agent runs alone after the
# last call; a second joins the running job (a new round of 2, no restart
# spent); a third finds the job full and waits as a spare; when the round
# of 2 ends, they exit 0 and the spare, which never ran a worker, 75.  A
# job of another shape under an id in use is refused.
rm -f "$OUT"/env.*
cat >"$OUT/hook.sh" <<'EOS'
if [ "$GROUP_WORLD_SIZE" = 1 ]; then
	i=0
	while [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
	exit 1
fi
i=0
while [ ! -f "$OUT/go" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
EOS
ce="--nnodes=1:2 --nproc-per-node=1 --rdzv-id=elastic --max-restarts=0 --rdzv-conf=$ETCD_CONF --no-python $T/w.sh"
agent s2 127.0.0.2 $ce
wait_count "$OUT/env.0.1.*" 1 30 "the first agent's round of 1"
agent s3 127.0.0.3 $ce
wait_count "$OUT/env.0.2.*" 2 30 "the round of 2 after the second agent joined"
agent s4 127.0.0.4 $ce
i=0
until grep -q "waits as a spare" "$T/s4.log"; do
	[ $i -ge 100 ] && { cat "$T/s4.log"; fail "s4 is not a spare:"; }
	sleep 0.1; i=$((i + 1))
done
touch "$OUT/go"
for n in s2 s3; do expect_exit $n 30 0; done
expect_exit s4 30 75	# the spare never ran a worker (as with c10d)
expect_in s4 "finished without this node ever running a worker"
# Another shape under the same id is refused at once.
agent x2 127.0.0.2 --rdzv-id=shape --nnodes=1 --rdzv-conf="$ETCD_CONF" --no-python sleep 5
sleep 1
agent x3 127.0.0.3 --rdzv-id=shape --nnodes=2 --rdzv-conf="$ETCD_CONF" --no-python true
expect_exit x3 15 75
expect_in x3 "rendezvous id shape is in use by another job (nnodes 1:1"
expect_exit x2 30 0
grep -q "GROUP_RANK=1 GROUP_WORLD_SIZE=2 .*RESTART_COUNT=0 " "$OUT/env.0.2.1" ||
	fail "scale-up round: $(cat "$OUT/env.0.2.1")"
expect_in s2 "joined"
[ -z "$(ls "$OUT"/env.*.3.* 2>/dev/null)" ] || fail "the spare ran workers"
rm -f "$OUT/go" "$OUT/hook.sh"
echo "ok: scale-up into a running job, a spare beyond max, another shape refused"

# A worker crash restarts the job on both nodes, one budget.
rm -f "$OUT"/env.*
cat >"$OUT/hook.sh" <<'EOS'
if [ "$TORCHELASTIC_RESTART_COUNT" = 0 ]; then
	if [ "$RANK" = 3 ]; then
		i=0
		while [ "$(ls "$OUT"/env.0.2.* | wc -l)" -lt 4 ] && [ $i -lt 300 ]; do
			sleep 0.1; i=$((i + 1))
		done
		exit 3
	fi
	i=0
	while [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
	exit 1
fi
EOS
agent n2 127.0.0.2 --rdzv-id=restart --max-restarts=2 $c2
agent n3 127.0.0.3 --rdzv-id=restart --max-restarts=2 $c2
for n in n2 n3; do expect_exit $n 60 0; done
for r in 0 1 2 3; do
	grep -q "RESTART_COUNT=1 " "$OUT/env.1.2.$r" 2>/dev/null ||
		fail "rank $r in attempt 1: $(cat "$OUT/env.1.2.$r" 2>&1)"
done
[ -z "$(ls "$OUT"/env.2.* 2>/dev/null)" ] || fail "a second restart happened"
echo "ok: restart on all nodes with one budget"

# No restarts left: the failing node exits 3, the other 75, both say why.
rm -f "$OUT"/env.*
agent m2 127.0.0.2 --rdzv-id=nobudget --max-restarts=0 $c2
agent m3 127.0.0.3 --rdzv-id=nobudget --max-restarts=0 $c2
expect_exit m3 30 3
expect_exit m2 30 75
expect_in m2 "no restarts are left (0/0 spent)"
[ -z "$(etcd_keys nobudget)" ] || fail "keys left: $(etcd_keys nobudget)"
echo "ok: spent budget ends every node"

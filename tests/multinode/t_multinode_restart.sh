#!/bin/sh
# A worker crash on one node restarts the workers on every node in a new
# round, from one job-wide --max-restarts budget: TORCHELASTIC_RESTART_COUNT
# agrees everywhere.  With the budget spent, every agent learns it at once:
# the failing node exits with its worker's status, the other with 75.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$TOP/tests/interop/lib.sh"
. "$TOP/tests/multinode/lib.sh"
start_rdzvd
export OUT="$T/out"
mkdir -p "$OUT"
envworker "$T/w.sh"
# Attempt 0: rank 3 crashes once every rank has started, the others wait
# to be stopped.  Later attempts succeed.
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
common="--nnodes=2 --nproc-per-node=2 --rdzv-conf=$FAST_CONF --no-python $T/w.sh"
agent n2 127.0.0.2 --rdzv-id=restart --max-restarts=2 $common
agent n3 127.0.0.3 --rdzv-id=restart --max-restarts=2 $common
for n in n2 n3; do expect_exit $n 60 0; done
for r in 0 1 2 3; do
	f="$OUT/env.1.2.$r"
	[ -f "$f" ] || { ls "$OUT"; fail "rank $r did not run in attempt 1"; }
	grep -q "RESTART_COUNT=1 " "$f" || fail "rank $r: $(cat "$f")"
done
[ -z "$(ls "$OUT"/env.2.* 2>/dev/null)" ] || fail "a second restart happened"

# No restarts left: the whole job stops, each agent says why.
rm -f "$OUT"/env.*
agent m2 127.0.0.2 --rdzv-id=nobudget --max-restarts=0 $common
agent m3 127.0.0.3 --rdzv-id=nobudget --max-restarts=0 $common
expect_exit m3 30 3
expect_exit m2 30 75
grep -q "no restarts are left" "$T/m2.log" ||
	{ cat "$T/m2.log"; fail "m2 does not say why it stopped:"; }
cat "$T/m2.log" "$T/m3.log"
echo "ok: restart on all nodes with one budget; spent budget ends every node"

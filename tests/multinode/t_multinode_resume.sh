#!/bin/sh
# A lost connection is not a lost node: while the workers of a 2-node
# round run, every agent's connection to cgrun-rdzvd is killed (ss -K: an
# RST both ways); the agents reconnect within the keep-alive window, the
# server gives them back their places, and the job finishes in round 0
# with no restart.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$TOP/tests/interop/lib.sh"
. "$TOP/tests/multinode/lib.sh"
[ "$(id -u)" = 0 ] || skip "not root: cannot kill sockets with ss -K"
command -v ss >/dev/null || skip "no ss(8) (iproute2)"
start_rdzvd
export OUT="$T/out"
mkdir -p "$OUT"
envworker "$T/w.sh"
cat >"$OUT/hook.sh" <<'EOS'
i=0
while [ ! -f "$OUT/go" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
[ -f "$OUT/go" ] || exit 1
EOS
common="--nnodes=2 --nproc-per-node=1 --rdzv-id=resume --rdzv-conf=$FAST_CONF -v --no-python $T/w.sh"
agent n2 127.0.0.2 $common
agent n3 127.0.0.3 $common
wait_count "$OUT/env.0.2.*" 2 30 "workers of round 0"
ss -K dst 127.0.0.1 dport = ":$RDZVD_PORT" >"$T/ss.out" 2>&1
grep -q ":$RDZVD_PORT" "$T/ss.out" || skip "ss -K cannot kill sockets here (kernel without SOCK_DESTROY)"
for n in n2 n3; do
	i=0
	until grep -q "connection to 127.0.0.1:$RDZVD_PORT restored" "$T/$n.log"; do
		[ $i -ge 100 ] && { cat "$T/$n.log"; fail "$n did not reconnect:"; }
		sleep 0.1
		i=$((i + 1))
	done
done
touch "$OUT/go"
for n in n2 n3; do expect_exit $n 60 0; done
grep -q "lost the connection" "$T/n2.log" || fail "n2 never lost its connection"
if grep -q "round=1\|attempt=1" "$T/n2.log" "$T/n3.log"; then
	echo "FAIL: the lost connection started a new round:"; cat "$T/n2.log"; exit 1
fi
echo "ok: both agents reconnected and kept their places"

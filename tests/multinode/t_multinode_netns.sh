#!/bin/sh
# As root: three nodes in network namespaces (10.77.N.1..3) joined by veth
# pairs to a bridge in a hub namespace where cgrun-rdzvd listens
# (10.77.N.254).  Cutting node 3's link (its veth down: no FIN, no RST)
# makes the server declare it dead after the keep-alive window; nodes 1
# and 2 form a round of two and finish; node 3's agent notices the dead
# link by itself and exits 75 instead of hanging.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$TOP/tests/interop/lib.sh"
. "$TOP/tests/multinode/lib.sh"
[ "$(id -u)" = 0 ] || skip "not root: cannot create network namespaces"
command -v ip >/dev/null || skip "no ip(8) (iproute2)"
tag=$$
NET=10.77.$((tag % 200 + 20))
HUB=cghub$tag
ip netns add "$HUB" 2>/dev/null || skip "cannot create network namespaces here"
NSS="$HUB"
at_exit 'for ns in $NSS; do ip netns del "$ns" 2>/dev/null; done'
ip -n "$HUB" link add br0 type bridge || skip "no bridge support"
ip -n "$HUB" addr add "$NET.254/24" dev br0
ip -n "$HUB" link set br0 up
ip -n "$HUB" link set lo up
for n in 1 2 3; do
	ns=cgn$n.$tag
	ip netns add "$ns"
	NSS="$NSS $ns"
	ip link add "cgv$n.$tag" netns "$ns" type veth peer name "cgp$n" netns "$HUB" ||
		skip "no veth support"
	ip -n "$HUB" link set "cgp$n" master br0
	ip -n "$HUB" link set "cgp$n" up
	ip -n "$ns" addr add "$NET.$n/24" dev "cgv$n.$tag"
	ip -n "$ns" link set "cgv$n.$tag" up
	ip -n "$ns" link set lo up
done

ip netns exec "$HUB" "$RDZVD" -d --host "$NET.254" --port 0 >"$T/rdzvd.out" 2>"$T/rdzvd.log" &
RDZVD_PID=$!
track $RDZVD_PID
wait_file "$T/rdzvd.out" "$RDZVD_PID" 20 "cgrun-rdzvd listening"
RDZVD_PORT=$(sed -n 's/^listening on .*:\([0-9][0-9]*\)$/\1/p' "$T/rdzvd.out" | head -n 1)

export OUT="$T/out"
mkdir -p "$OUT"
envworker "$T/w.sh"
# The 3-node round waits (at most 60 s) to be stopped; the 2-node one ends.
cat >"$OUT/hook.sh" <<'EOS'
if [ "$GROUP_WORLD_SIZE" = 3 ]; then
	i=0
	while [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
	exit 1
fi
EOS
for n in 1 2 3; do
	ip netns exec "cgn$n.$tag" "$CGRUN" --rdzv-backend=c10d \
		--rdzv-endpoint="$NET.254:$RDZVD_PORT" --local-addr="$NET.$n" \
		--nnodes=2:3 --nproc-per-node=1 --rdzv-id=netns --rdzv-conf="$FAST_CONF" \
		--no-python "$T/w.sh" >"$T/n$n.log" 2>&1 </dev/null &
	echo $! >"$T/n$n.pid"
	track $!
done
wait_count "$OUT/env.0.3.*" 3 30 "workers of the 3-node round"
cut=$(date +%s)
ip -n "cgn3.$tag" link set "cgv3.$tag" down
expect_exit n1 60 0
expect_exit n2 60 0
for r in 0 1; do
	grep -q "GROUP_WORLD_SIZE=2 .*MASTER_ADDR=$NET.1 " "$OUT/env.0.2.$r" 2>/dev/null ||
		fail "rank $r of the 2-node round: $(cat "$OUT/env.0.2.$r" 2>&1)"
done
expect_exit n3 60 75
echo "ok: node 3 cut off, declared dead after $(( $(date +%s) - cut )) s at most; the others went on"

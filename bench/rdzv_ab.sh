#!/bin/sh
# A/B of the rendezvous engine: bench/rdzv_sim against cgrun-rdzvd from
# two builds (say, before and after a change to rendezvous/engine/),
# alternating, ROUNDS times, so that both see the same machine; prints
# rdzv_sim's rows (its last column, the daemon's CPU, is less moved by
# other load than the wall times) and the load before each.
# usage: sh bench/rdzv_ab.sh BUILD_A BUILD_B ROUNDS K [K ...]
#   e.g. mkdir /tmp/a && git archive BASE | tar -x -C /tmp/a &&
#        make -C /tmp/a build/cgrun-rdzvd build/bench/rdzv_sim &&
#        sh bench/rdzv_ab.sh /tmp/a/build build 3 1024 10000
[ $# -ge 4 ] || { echo "usage: sh bench/rdzv_ab.sh BUILD_A BUILD_B ROUNDS K..." >&2; exit 2; }
a=$1 b=$2 n=$3
shift 3
d=$(mktemp -d "${TMPDIR:-/tmp}/cgrun-rdzv-ab.XXXXXX")
P=
trap '[ -n "$P" ] && kill "$P" 2>/dev/null; rm -rf "$d"' EXIT

# one BUILD TAG K...: a fresh daemon of BUILD and rdzv_sim's rows.
one() {
	bd=$1 tag=$2
	shift 2
	out=$d/$tag.$r.out
	"$bd/cgrun-rdzvd" -d --host=127.0.0.1 --port=0 >"$out" 2>"$d/$tag.$r.err" &
	P=$!
	i=0
	while ! grep -q '^listening on ' "$out" 2>/dev/null; do
		[ $i -ge 200 ] && { echo "$bd/cgrun-rdzvd did not start in 10 s" >&2; exit 1; }
		sleep 0.05
		i=$((i + 1))
	done
	port=$(sed -n 's/^listening on .*:\([0-9]*\)$/\1/p' "$out" | head -n 1)
	"$bd/bench/rdzv_sim" 127.0.0.1 "$port" "$P" "$@" | grep '^| [0-9]'
	kill "$P"
	wait "$P" 2>/dev/null
	P=
}

r=0
while [ "$r" -lt "$n" ]; do
	echo "round $r, A ($a), load $(cut -d' ' -f1 /proc/loadavg)"
	one "$a" A "$@"
	echo "round $r, B ($b), load $(cut -d' ' -f1 /proc/loadavg)"
	one "$b" B "$@"
	r=$((r + 1))
done

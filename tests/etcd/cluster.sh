#!/bin/sh
# cluster.sh: a real N-member etcd cluster (Debian 12's etcd-server 3.4) on
# 127.0.0.1 for cgrun's etcd tests.  One process per member, data and logs in
# a directory of the caller's, elections tuned fast, nothing left behind.
#
#   sh tests/etcd/cluster.sh up DIR [N]    start N (default 3) members
#   sh tests/etcd/cluster.sh down DIR      stop them, remove their data
#   . DIR/cluster.env                      ETCD_ENDPOINTS=host:port,...
#                                          ETCD_MEMBER_<i>=host:port
#                                          ETCD_PID_<i>=pid
#   sh tests/etcd/cluster.sh leader DIR    print the leader's member number
#   sh tests/etcd/cluster.sh kill DIR I    SIGKILL member I (for tests)
#   sh tests/etcd/cluster.sh stop DIR I    SIGSTOP it (a partition), cont:
#                                          SIGCONT; restart: start it again
#   sh tests/etcd/cluster.sh cut DIR I     (netns only) take member I's
#                                          link down: a partition where
#                                          packets vanish (no RST, no FIN);
#                                          heal: its link up again
#
# "up" exits 77 (the test suite's "skip") with the reason on its last line
# when etcd is not installed and cannot be, or does not become healthy.
# Client ports: the first free run of N ports from 24379 on (peer ports are
# client + 1000), so several clusters can run side by side.  Elections:
# CGRUN_ETCD_ELECTION_MS (default 300), heartbeat a fifth of it.
# CGRUN_ETCD_TLS=1: clients must speak HTTPS with a client certificate
# (etcd --client-cert-auth); DIR/tls/ holds ca.pem, client.pem and
# client.key for them (made with openssl), ETCD_ENDPOINTS has https://.
set -eu

skip() { echo "SKIP: $*"; exit 77; }
die() { echo "cluster.sh: $*" >&2; exit 1; }

# Is TCP port P free on 127.0.0.1 (nobody listens)?
port_free() {
	! ss -Hltn "sport = :$1" 2>/dev/null | grep -q .
}

# Install etcd-server and etcd-client when missing and we may (root).
ensure_etcd() {
	command -v etcd >/dev/null && command -v etcdctl >/dev/null && return 0
	[ "$(id -u)" = 0 ] || skip "etcd is not installed (apt-get install etcd-server etcd-client)"
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y -qq --no-install-recommends etcd-server etcd-client \
		</dev/null >/dev/null 2>&1 ||
	{ apt-get update -qq </dev/null >/dev/null 2>&1 &&
	  apt-get install -y -qq --no-install-recommends etcd-server \
		etcd-client </dev/null >/dev/null 2>&1; } ||
	skip "etcd-server cannot be installed"
	command -v etcd >/dev/null || skip "etcd-server installed no etcd binary"
}

# A CA, a server certificate for 127.0.0.1 and a client certificate in
# DIR/tls (openssl; nothing is left outside DIR).
make_tls() {
	t=$1/tls
	mkdir -p "$t"
	command -v openssl >/dev/null || skip "no openssl to make test certificates"
	{
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=cgrun-test-ca \
		-keyout "$t/ca.key" -out "$t/ca.pem" &&
	for w in server client; do
		openssl req -newkey rsa:2048 -nodes -subj "/CN=cgrun-$w" \
			-keyout "$t/$w.key" -out "$t/$w.csr" &&
		printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n' >"$t/$w.ext" &&
		openssl x509 -req -in "$t/$w.csr" -CA "$t/ca.pem" -CAkey "$t/ca.key" \
			-CAcreateserial -days 2 -extfile "$t/$w.ext" -out "$t/$w.pem" || return 1
	done
	} >/dev/null 2>&1 || skip "openssl cannot make test certificates"
}

# The first client port B such that B..B+N-1 and their peer ports are free.
pick_base() {
	b=24379
	while [ "$b" -lt 30000 ]; do
		ok=1 i=0
		while [ "$i" -lt "$1" ]; do
			port_free $((b + i)) && port_free $((b + 1000 + i)) || ok=
			i=$((i + 1))
		done
		[ -n "$ok" ] && { echo "$b"; return 0; }
		b=$((b + 10))
	done
	return 1
}

# etcdctl's TLS flags for the cluster in DIR (none without TLS).
ctl_tls() {
	. "$1/cluster.env"
	[ -z "$ETCD_TLS" ] || echo "--cacert $1/tls/ca.pem --cert" \
		"$1/tls/client.pem --key $1/tls/client.key"
}

# Is the whole cluster in DIR answering with a leader?
healthy() {
	. "$1/cluster.env"
	ETCDCTL_API=3 etcdctl --endpoints="$ETCD_ENDPOINTS" --command-timeout=1s \
		$(ctl_tls "$1") endpoint health >/dev/null 2>&1
}

# The bridge cgebrK with the first free K (no route to its subnet, no
# veth of an earlier cluster of that K left: the kernel destroys a deleted
# namespace's veths in its own time); prints K.
make_bridge() {
	for k in $(seq 1 250); do
		ip route show 2>/dev/null | grep -q "^10\.98\.$k\." && continue
		ip -br link 2>/dev/null | grep -q "^cge$k\." && continue
		ip link add "cgebr$k" type bridge 2>/dev/null || continue
		ip addr add "10.98.$k.254/24" dev "cgebr$k" &&
			ip link set "cgebr$k" up && { echo "$k"; return 0; }
		ip link del "cgebr$k"
		return 1
	done
	return 1
}

# Namespaces, veths and the bridge for N members in DIR; skips where the
# kernel or the container does not allow them.
make_netns() {
	[ "$(id -u)" = 0 ] || skip "not root: cannot create network namespaces"
	command -v ip >/dev/null || skip "no ip(8) (iproute2)"
	ip netns add "cgetest$$" 2>/dev/null || skip "ip netns does not work here"
	ip netns del "cgetest$$"
	k=$(make_bridge) || skip "cannot create a bridge (cgebr1..cgebr250)"
	echo "$k" >"$1/bridge"
	i=1
	while [ "$i" -le "$2" ]; do
		ns=cge$k.$i
		{ ip netns add "$ns" && echo "$ns" >>"$1/namespaces" &&
		  ip link add "cge$k.$i" type veth peer name eth0 netns "$ns" &&
		  ip link set "cge$k.$i" master "cgebr$k" up &&
		  ip -n "$ns" addr add "10.98.$k.$i/24" dev eth0 &&
		  ip -n "$ns" link set eth0 up && ip -n "$ns" link set lo up; } ||
			{ rm_netns "$1"; skip "cannot set up namespace $ns (veth)"; }
		i=$((i + 1))
	done
}

# Remove the namespaces, their veths (named as they are: a namespace
# outlives its name while sockets of a killed member still retransmit to
# a cut peer, and its veth with it) and the bridge of DIR.
rm_netns() {
	[ ! -f "$1/namespaces" ] || for ns in $(cat "$1/namespaces"); do
		ip netns del "$ns" 2>/dev/null || true
		ip link del "$ns" 2>/dev/null || true
	done
	[ ! -f "$1/bridge" ] || ip link del "cgebr$(cat "$1/bridge")" 2>/dev/null || true
	rm -f "$1/namespaces" "$1/bridge"
}

# Member I's link down (cut) or up (heal).
link_member() {
	. "$1/cluster.env"
	[ -n "$ETCD_NETNS" ] || die "$3: the cluster in $1 has no namespaces"
	ip -n "cge$ETCD_NETNS.$2" link set eth0 "$3"
}

# Member I's client and peer addresses (host:port) in C and P, and the
# command prefix that runs a process where it lives in NSX.
member_addr() {
	if [ -n "$ETCD_NETNS" ]; then
		C=10.98.$ETCD_NETNS.$1:2379 P=10.98.$ETCD_NETNS.$1:2380
		NSX="ip netns exec cge$ETCD_NETNS.$1"
	else
		C=127.0.0.1:$((ETCD_BASE + $1 - 1)) P=127.0.0.1:$((ETCD_BASE + 999 + $1))
		NSX=
	fi
}

# Start member I of the cluster in DIR (again, after a kill: same data)
# and record its pid in DIR/cluster.env.
start_member() {
	. "$1/cluster.env"
	member_addr "$2"
	tlsargs=
	[ -n "$ETCD_TLS" ] && tlsargs="--cert-file $1/tls/server.pem
		--key-file $1/tls/server.key --trusted-ca-file $1/tls/ca.pem
		--client-cert-auth"
	# etcd reads ETCD_* variables as flags: start it with none.
	$NSX env $(env | sed -n 's/^\(ETCD[A-Z0-9_]*\)=.*/-u \1/p') \
	setsid etcd --name "m$2" --data-dir "$1/m$2.data" \
		--listen-client-urls "$ETCD_SCHEME://$C" \
		--advertise-client-urls "$ETCD_SCHEME://$C" \
		--listen-peer-urls "http://$P" \
		--initial-advertise-peer-urls "http://$P" \
		--initial-cluster "$ETCD_PEERS" --initial-cluster-state new \
		--initial-cluster-token "cgrun-test-$ETCD_BASE" \
		--heartbeat-interval $((ETCD_EL / 5)) --election-timeout "$ETCD_EL" \
		$tlsargs </dev/null >>"$1/m$2.log" 2>&1 &
	sed -i "/^ETCD_MEMBER_$2=/d" "$1/cluster.env"
	echo "ETCD_MEMBER_$2=$C ETCD_PID_$2=$!" >> "$1/cluster.env"
}

up() {
	dir=$1 n=$2
	case $n in '' | *[!0-9]*) die "N must be a number";; esac
	ensure_etcd
	mkdir -p "$dir"
	[ ! -e "$dir/cluster.env" ] || die "$dir holds a cluster: run down first"
	netns=
	if [ -n "${CGRUN_ETCD_NETNS:-}" ]; then
		make_netns "$dir" "$n"
		netns=$(cat "$dir/bridge") base=2379
	else
		base=$(pick_base "$n") || skip "no free ports for $n etcd members"
	fi
	el=${CGRUN_ETCD_ELECTION_MS:-300}
	scheme=http tls=
	if [ -n "${CGRUN_ETCD_TLS:-}" ]; then
		make_tls "$dir"
		scheme=https tls=1
	fi
	peers= eps= i=1
	rm -f "$dir"/m*.log
	ETCD_NETNS=$netns ETCD_BASE=$base
	while [ "$i" -le "$n" ]; do
		member_addr "$i"
		peers="$peers${peers:+,}m$i=http://$P"
		eps="$eps${eps:+,}$scheme://$C"
		i=$((i + 1))
	done
	{
		echo "ETCD_BASE=$base ETCD_EL=$el ETCD_PEERS=$peers ETCD_SCHEME=$scheme ETCD_TLS=$tls ETCD_NETNS=$netns"
		echo "ETCD_ENDPOINTS=$eps ETCD_NMEMBERS=$n"
	} > "$dir/cluster.env"
	i=1
	while [ "$i" -le "$n" ]; do
		start_member "$dir" "$i"
		i=$((i + 1))
	done
	t=0
	until healthy "$dir"; do
		t=$((t + 1))
		if [ "$t" -gt 150 ]; then
			down "$dir"
			skip "etcd cluster not healthy within 15 s"
		fi
		sleep 0.1
	done
	echo "etcd: $n members at $eps" >&2
}

# Member number of the current leader (1..N): its MemberID is the Leader.
leader() {
	. "$1/cluster.env"
	i=1
	while [ "$i" -le "$ETCD_NMEMBERS" ]; do
		eval "m=\$ETCD_MEMBER_$i"
		f=$(ETCDCTL_API=3 etcdctl --endpoints="$ETCD_SCHEME://$m" \
		    --command-timeout=1s $(ctl_tls "$1") endpoint status \
		    -w fields 2>/dev/null) || f=
		id=$(echo "$f" | sed -n 's/^"MemberID" : //p')
		ld=$(echo "$f" | sed -n 's/^"Leader" : //p')
		[ -n "$id" ] && [ "$id" = "$ld" ] && { echo "$i"; return 0; }
		i=$((i + 1))
	done
	return 1
}

# Send SIG to member I (only if that pid is still an etcd); KILL waits
# until it is gone.
signal_member() {
	. "$1/cluster.env"
	eval "p=\${ETCD_PID_$2:-}"
	[ -n "$p" ] || die "no member $2"
	[ "$(ps -o comm= -p "$p" 2>/dev/null)" = etcd ] || return 0
	kill "-$3" "$p"
	[ "$3" = KILL ] || return 0
	while [ "$(ps -o stat= -p "$p" 2>/dev/null | cut -c1)" != "" ] &&
	      [ "$(ps -o stat= -p "$p" | cut -c1)" != Z ]; do
		sleep 0.05
	done
}

# Stop every member (TERM, then KILL after 5 s) and remove the data.
down() {
	dir=$1
	[ -f "$dir/cluster.env" ] || { rm_netns "$dir"; return 0; }
	. "$dir/cluster.env"
	i=1
	while [ "$i" -le "$ETCD_NMEMBERS" ]; do
		eval "p=\$ETCD_PID_$i"
		if [ "$(ps -o comm= -p "$p" 2>/dev/null)" = etcd ]; then
			kill -CONT "$p" 2>/dev/null || true
			kill -TERM "$p" 2>/dev/null || true
			t=0
			while [ "$(ps -o stat= -p "$p" 2>/dev/null | cut -c1)" != "" ] &&
			      [ "$(ps -o stat= -p "$p" | cut -c1)" != Z ] && [ "$t" -lt 50 ]; do
				sleep 0.1; t=$((t + 1))
			done
			kill -KILL "$p" 2>/dev/null || true
		fi
		rm -rf "$dir/m$i.data"
		i=$((i + 1))
	done
	rm_netns "$dir"
	rm -f "$dir/cluster.env"
}

case ${1:-} in
up) [ $# -ge 2 ] || die "usage: $0 up DIR [N]"; up "$2" "${3:-3}";;
down) [ $# = 2 ] || die "usage: $0 down DIR"; down "$2";;
leader) [ $# = 2 ] || die "usage: $0 leader DIR"; leader "$2";;
kill) [ $# = 3 ] || die "usage: $0 kill DIR I"; signal_member "$2" "$3" KILL;;
stop) [ $# = 3 ] || die "usage: $0 stop DIR I"; signal_member "$2" "$3" STOP;;
cont) [ $# = 3 ] || die "usage: $0 cont DIR I"; signal_member "$2" "$3" CONT;;
restart) [ $# = 3 ] || die "usage: $0 restart DIR I"; start_member "$2" "$3";;
cut) [ $# = 3 ] || die "usage: $0 cut DIR I"; link_member "$2" "$3" down;;
heal) [ $# = 3 ] || die "usage: $0 heal DIR I"; link_member "$2" "$3" up;;
*) die "usage: $0 up DIR [N] | down DIR | leader DIR | kill|stop|cont|restart|cut|heal DIR I";;
esac

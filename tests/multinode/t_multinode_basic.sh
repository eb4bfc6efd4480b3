#!/bin/sh
# Three agents on 127.0.0.2-4 with one cgrun-rdzvd, heterogeneous
# --nproc-per-node (2, 1, 2): every worker gets the right RANK, LOCAL_RANK,
# WORLD_SIZE, GROUP_RANK (sorted by --local-addr), GROUP_WORLD_SIZE,
# LOCAL_WORLD_SIZE, and all of them the same MASTER_ADDR/PORT: group rank
# 0's job store.  Every agent exits 0.  Before, malformed native frames
# get an ERROR and do not disturb the daemon.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$TOP/tests/interop/lib.sh"
. "$TOP/tests/multinode/lib.sh"
start_rdzvd
# Bad native clients get an ERROR naming the problem and are closed; the
# daemon goes on serving the job below.
"$PY113" - "$RDZVD_PORT" <<'EOPY' || fail "bad native frames"
import socket, struct, sys
port = int(sys.argv[1])
def reply(payload):
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(10)
    s.sendall(payload)
    data = b""
    while True:
        d = s.recv(4096)
        if not d:
            return data
        data += d
cases = [
    (b"\xff\xff\xff\x7f", b"frame longer than RDZV_FRAME_MAX"),
    (struct.pack("<IBH", 3, 0x80, 99), b"unsupported protocol version"),
    (struct.pack("<IB", 1, 0x82), b"HELLO expected first"),
    (struct.pack("<IBH", 3, 0x80, 1) + struct.pack("<IB", 1, 0x03), b"unknown op"),
]
for payload, want in cases:
    r = reply(b"CGRN" + payload)
    if b"\xc6" not in r or want not in r:
        print("no ERROR %r for %r: %r" % (want, payload, r))
        sys.exit(1)
EOPY
export OUT="$T/out"
mkdir -p "$OUT"
envworker "$T/w.sh"
common="--nnodes=3 --rdzv-id=basic --rdzv-conf=$FAST_CONF --no-python $T/w.sh"
agent n3 127.0.0.3 --nproc-per-node=1 $common
# Alone, it says whom it waits for (one line per change).
i=0
until grep -q "rendezvous basic round 0: 1/3 nodes (min 3, max 3)" "$T/n3.log"; do
	[ $i -ge 200 ] && { cat "$T/n3.log"; fail "no progress line from the first agent:"; }
	sleep 0.05
	i=$((i + 1))
done
agent n2 127.0.0.2 --nproc-per-node=2 $common
agent n4 127.0.0.4 --nproc-per-node=2 $common
for n in n2 n3 n4; do expect_exit $n 60 0; done

# rank  group  local  local_world
want="0 0 0 2
1 0 1 2
2 1 0 1
3 2 0 2
4 2 1 2"
ports=
echo "$want" | while read -r r g l lw; do
	f="$OUT/env.0.3.$r"
	[ -f "$f" ] || { ls "$OUT"; fail "rank $r did not run"; }
	line=$(cat "$f")
	for kv in "RANK=$r " "LOCAL_RANK=$l " "WORLD_SIZE=5 " "GROUP_RANK=$g " \
	    "GROUP_WORLD_SIZE=3 " "LOCAL_WORLD_SIZE=$lw " "MASTER_ADDR=127.0.0.2 " \
	    "RESTART_COUNT=0 " "RUN_ID=basic"; do
		case "$line" in *"$kv"*) ;; *) fail "rank $r: no $kv in: $line" ;; esac
	done
done || exit 1
[ "$(ls "$OUT" | wc -l)" -eq 5 ] || fail "want 5 workers, got: $(ls "$OUT")"
nports=$(sed 's/.*MASTER_PORT=\([0-9]*\).*/\1/' "$OUT"/env.* | sort -u | wc -l)
[ "$nports" -eq 1 ] || { cat "$OUT"/env.*; fail "workers disagree on MASTER_PORT"; }
echo "ok: 3 nodes, 5 workers, ranks and offsets right"

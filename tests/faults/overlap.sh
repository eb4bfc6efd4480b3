#!/bin/sh
# Overlapping faults (issue 24's first schedule), run OVERLAP_RUNS times
# (default 6):
#
#   CGRUN_TOP=. CGRUN_BUILD=build OVERLAP_RUNS=10 sh tests/faults/overlap.sh
#
# A 2-node x 2-rank DDP job (examples/ddp/train.py, gloo, torch 1.13,
# --max-restarts=3) runs through cgrun-rdzvd, agents on 127.0.0.2 and
# 127.0.0.3 (-v).  Rank 1 crashes before step 8 (attempt 0 only); the
# moment node 2's agent prints the crash, the daemon gets SIGTERM and node
# 3's agent SIGSTOP; 1 s later a new daemon starts on the same port; 1 s
# after that node 3 gets SIGCONT.  OVERLAP_BACKEND=hosted: no daemon,
# node 2's agent hosts the rendezvous (c10d's is_host) and is what dies:
# SIGKILL at the crash, the same command started again 1 s later.  A run is correct when both agents exit
# 0 within OVERLAP_BOUND seconds (default 150) with the fault-free run's
# final weights, no rank ever saw TORCHELASTIC_RESTART_COUNT go down, and
# nothing of the run outlives it.  The logs of a wrong run are kept under
# OVERLAP_KEEP (default: none kept).  Last line:
#
#   overlap: backend=B runs=R correct=C hung=H wrong=W
#
# and the script exits 0 only if every run was correct (77: no torch).
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$TOP/tests/interop/lib.sh"
. "$TOP/tests/multinode/lib.sh"
need_torch113
TRAIN=$TOP/examples/ddp/train.py
BOUND=${OVERLAP_BOUND:-150}
BACKEND=${OVERLAP_BACKEND:-rdzvd}
RUNS=0 OK=0 HUNG=0 WRONG=0

# node NAME N LOG [ENV...]: start node N's agent of job NAME, its output
# in LOG (appended), its pid in NAME/nN.pid; env (CRASH_*) for it.
node() {
	name=$1 n=$2 log=$3
	shift 3
	env "$@" "$CGRUN" -v --log-prefix=rank --rdzv-backend=c10d \
		--rdzv-endpoint="127.0.0.1:$RDZVD_PORT" --local-addr=127.0.0.$n \
		--nnodes=2 --nproc-per-node=2 --max-restarts=3 --rdzv-id="ov-$name" \
		--rdzv-conf="$FAST_CONF" --log-dir="$T/$name/logs.n$n" \
		--no-python "$PY113" "$TRAIN" --steps 16 --ckpt-every 4 \
		--ckpt-dir "$T/$name/ckpt" --out "$T/$name/final.pt" \
		>>"$T/$name/$log" 2>&1 </dev/null &
	echo $! >"$T/$name/n$n.pid"
	track $!
}

# job NAME [ENV...]: start the job's two agents (hosted: node 2 first,
# hosting the rendezvous).
job() {
	name=$1
	shift
	mkdir -p "$T/$name"
	node "$name" 2 n2.log "$@"
	[ "$BACKEND" = hosted ] && wait_log "$T/$name/n2.log" \
	    'hosting the rendezvous on' "node 2 of $name hosting" 30
	node "$name" 3 n3.log "$@"
}

# fault NAME: what dies at the crash, and comes back 1 s later (node 3
# stopped meanwhile, 2 s): the daemon (SIGTERM), or the hosting agent
# (SIGKILL).
fault() {
	p2=$(cat "$T/$1/n2.pid") p3=$(cat "$T/$1/n3.pid")
	if [ "$BACKEND" = hosted ]; then
		kill -9 "$p2"
		kill -STOP "$p3"
		wait "$p2" 2>/dev/null
		sleep 1
		echo "overlap: node 2's agent started again" >>"$T/$1/n2.log"
		node "$1" 2 n2.log CRASH_AT_STEP=8 CRASH_RANK=1
	else
		kill -TERM "$RDZVD_PID"
		kill -STOP "$p3"
		wait "$RDZVD_PID"
		mv "$T/rdzvd.log" "$T/rdzvd.$k.log"
		sleep 1
		"$RDZVD" -d -v --host 127.0.0.1 --port "$RDZVD_PORT" >"$T/rdzvd.out" 2>"$T/rdzvd.log" &
		RDZVD_PID=$!
		track $RDZVD_PID
	fi
	sleep 1
	kill -CONT "$p3"
}

# gone PID SECS: 0 once PID has exited, 1 if it still runs after SECS.
gone() {
	gone_pid=$1
	poll_for "$2" exited
}
exited() { ! alive "$gone_pid"; }

# finish NAME: both agents exit 0 within BOUND s (else the stacks of what
# is stuck are kept); sets WHY on failure.
finish() {
	WHY=
	for n in 2 3; do
		p=$(cat "$T/$1/n$n.pid")
		if ! gone "$p" "$BOUND"; then
			WHY="hung: node $n's agent still running after $BOUND s"
			ps -eo pid,ppid,stat,etime,args --forest | grep -F "$T/$1/" \
				| grep -v grep >"$T/$1/ps.txt"
			kill -CONT "$p" 2>/dev/null
			return 1
		fi
		wait "$p"
		rc=$?
		[ $rc = 0 ] || { WHY="node $n's agent exited $rc"; return 1; }
	done
}

# restart_counts NAME: 0 if no node's workers saw their restart count go down.
restart_counts() {
	for n in 2 3; do
		sed -n 's/.*workers started attempt=\([0-9]*\) .*/\1/p' "$T/$1/n$n.log" |
			awk -v n="$n" 'NR > 1 && $1 < last { print "node " n ": restart count " last " then " $1; bad = 1 }
				{ last = $1 } END { exit bad }' || return 1
	done
}

# keep NAME: the logs of a wrong run under OVERLAP_KEEP.
keep() {
	[ -n "$OVERLAP_KEEP" ] || return 0
	mkdir -p "$OVERLAP_KEEP"
	cp -r "$T/$1" "$OVERLAP_KEEP/" 2>/dev/null
	cp "$T"/rdzvd*.log "$OVERLAP_KEEP/$1/" 2>/dev/null
	echo "overlap: logs of $1 kept in $OVERLAP_KEEP/$1"
}

# reap NAME: kill whatever of the run is left (a hung run's agents and
# workers), by pid.
reap() {
	for n in 2 3; do
		p=$(cat "$T/$1/n$n.pid")
		kill -CONT "$p" 2>/dev/null
		kill -9 "$p" 2>/dev/null
	done
	left=$(pgrep -f "$T/$1/ckpt" | tr '\n' ' ')
	[ -n "$left" ] && kill -9 $left
	return 0
}

if [ "$BACKEND" = hosted ]; then
	RDZVD_PORT=$(free_port)
else
	start_rdzvd -v
fi
job plain
finish plain || { tail -n 30 "$T/plain/n2.log"; fail "the fault-free run: $WHY"; }
ref=$(sha256sum <"$T/plain/final.pt")
echo "overlap: fault-free run done"

k=0
while [ $k -lt "${OVERLAP_RUNS:-6}" ]; do
	k=$((k + 1)) RUNS=$((RUNS + 1))
	name=r$k
	job "$name" CRASH_AT_STEP=8 CRASH_RANK=1
	wait_log "$T/$name/n2.log" 'injected crash before step 8' \
	    "the crash of run $k" 120
	fault "$name"
	if ! finish "$name"; then
		case $WHY in hung*) HUNG=$((HUNG + 1)) ;; *) WRONG=$((WRONG + 1)) ;; esac
		echo "overlap: run $k: $WHY"
		keep "$name"
		reap "$name"
		continue
	fi
	if ! why=$(restart_counts "$name"); then
		WRONG=$((WRONG + 1))
		echo "overlap: run $k: $why"
		keep "$name"
		continue
	fi
	if [ "$(sha256sum <"$T/$name/final.pt")" != "$ref" ]; then
		WRONG=$((WRONG + 1))
		echo "overlap: run $k: final weights differ from the fault-free run's"
		keep "$name"
		continue
	fi
	left=$(pgrep -f "$T/$name/ckpt" | tr '\n' ' ')
	if [ -n "$left" ]; then
		WRONG=$((WRONG + 1))
		echo "overlap: run $k: processes $left outlived it"
		kill -9 $left
		continue
	fi
	att=$(grep -c 'workers started attempt=' "$T/$name/n2.log")
	echo "overlap: run $k: correct (node 2 started $att attempts)"
	OK=$((OK + 1))
	rm -rf "$T/$name"
done
echo "overlap: backend=$BACKEND runs=$RUNS correct=$OK hung=$HUNG wrong=$WRONG"
[ "$OK" = "$RUNS" ]

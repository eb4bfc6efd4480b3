#!/bin/sh
# Fault injection driver: SIGKILLs at random moments against 2-node cgrun
# jobs on loopback (127.0.0.2, 127.0.0.3) and one cgrun-rdzvd, and, as
# root, a network partition in namespaces (tests/multinode/t_multinode_netns.sh).
#
#   CGRUN_TOP=. CGRUN_BUILD=build sh tests/faults/driver.sh
#
# Scenarios (FAULT_SCENARIOS, default "worker agent rdzvd netns"):
#   worker  FAULT_RUNS runs (default 10) of examples/ddp/train.py, 2 nodes x
#           2 workers, each with one worker SIGKILLed at a random moment:
#           every run must end with the fault-free run's final weights.
#   agent   FAULT_AGENT_RUNS runs (default 2 per --nnodes kind): one agent
#           SIGKILLed at a random moment while its workers run: none of its
#           workers alive 1 s later; the other node goes on (--nnodes=1:2)
#           or ends cleanly with 75 (--nnodes=2).
#   rdzvd   FAULT_RDZVD_RUNS pairs (default 1): cgrun-rdzvd SIGKILLed and
#           restarted on its port while workers run: workers untouched,
#           agents reconnect, a worker failure then forms the next round;
#           and while a round is being formed: it forms on the new daemon.
#   netns   FAULT_NETNS_RUNS runs (default 1) of the partition test.
# The seed (FAULT_SEED) is printed; the same seed replays the same moments.
# The daemon and the agents share an auth token (--auth-token-file), so
# reconnections authenticate again; FAULT_AUTH=0 runs without.
# Ends with a line "faults: runs=R injected=I correct=C lost=L" and exits
# 0 only if every run finished correctly (77 when nothing could run).
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$TOP/tests/interop/lib.sh"
. "$TOP/tests/multinode/lib.sh"
SCEN=${FAULT_SCENARIOS:-worker agent rdzvd netns}
SEED=${FAULT_SEED:-$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')}
echo "faults: seed=$SEED scenarios=\"$SCEN\" (FAULT_SEED=$SEED replays)"
RUNS=0 INJ=0 OK=0 LOST=0 SKIPPED=
RNG=$SEED
AUTH=
if [ "${FAULT_AUTH:-1}" = 1 ]; then
	head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$T/token"
	chmod 600 "$T/token"
	AUTH=--auth-token-file=$T/token
fi

# rnd N: a number in 0..N-1 in R (awk's generator, seeded by the sequence).
rnd() {
	R=$(awk -v s="$RNG" -v n="$1" 'BEGIN { srand(s); print int(rand() * n) }')
	RNG=$((RNG * 31 % 65521 + 7))
}

# bad WHAT: count a run that did not finish correctly and say why.
bad() {
	echo "faults: FAILED run $RUNS: $*"
	LOST=$((LOST + 1))
}

# workers_of PID: the pids of the agent's worker processes.
workers_of() {
	pgrep -P "$1" 2>/dev/null | tr '\n' ' '
}

# alive_of PIDS: the pids of PIDS still running (not zombies).
alive_of() {
	for p in $1; do
		s=$(awk '{ print $3 }' "/proc/$p/stat" 2>/dev/null)
		[ -n "$s" ] && [ "$s" != Z ] && printf '%s ' "$p"
	done
}

# wait_gone PID SECS: wait for PID to exit; 1 if still running after SECS.
wait_gone() {
	i=0
	while kill -0 "$1" 2>/dev/null; do
		[ "$i" -ge $(($2 * 10)) ] && return 1
		sleep 0.1
		i=$((i + 1))
	done
	return 0
}

# --- worker: the DDP example with a worker SIGKILLed -----------------------

TRAIN=$TOP/examples/ddp/train.py
DDP="--steps 16 --ckpt-every 4"

# ddp_start NAME: start the example's two agents in the background.
ddp_start() {
	mkdir -p "$T/$1"
	for n in 2 3; do
		"$CGRUN" -v --log-prefix=rank --rdzv-backend=c10d --rdzv-endpoint="127.0.0.1:$RDZVD_PORT" \
			--local-addr=127.0.0.$n --nnodes=2 --nproc-per-node=2 --max-restarts=3 \
			--rdzv-id="ddp-$1" --rdzv-conf="$FAST_CONF" $AUTH --no-python "$PY113" "$TRAIN" \
			$DDP --ckpt-dir "$T/$1/ckpt" --out "$T/$1/final.pt" \
			>"$T/$1.n$n.log" 2>&1 </dev/null &
		echo $! >"$T/$1.n$n.pid"
		track $!
	done
}

# ddp_wait NAME: both agents exit 0 within 150 s; 1 otherwise.
ddp_wait() {
	for n in 2 3; do
		p=$(cat "$T/$1.n$n.pid")
		wait_gone "$p" 150 || { kill -9 "$p"; echo "agent n$n of $1 hung"; return 1; }
		wait "$p" || { echo "agent n$n of $1 exited $?"; tail -n 20 "$T/$1.n$n.log"; return 1; }
	done
}

digest() {
	sed -n 's/^\[rank0\]:final step=[0-9]* loss=[^ ]* sha256=\([0-9a-f]*\)$/\1/p' "$T/$1.n2.log" | tail -n 1
}

scen_worker() {
	[ -f "$TRAIN" ] || { SKIPPED="$SKIPPED worker(no examples/ddp/train.py)"; return; }
	"$PY113" -c 'import torch.distributed' 2>/dev/null ||
		{ SKIPPED="$SKIPPED worker(no torch 1.13 in $PY113)"; return; }
	t0=$(date +%s)
	ddp_start plain
	ddp_wait plain || { echo "faults: the fault-free run failed"; LOST=$((LOST + 1)); return; }
	ref=$(digest plain)
	span=$(( ($(date +%s) - t0) * 10 ))
	echo "faults: worker: fault-free run ${span}ds sha256=$ref"
	k=0
	while [ $k -lt "${FAULT_RUNS:-10}" ]; do
		k=$((k + 1)) RUNS=$((RUNS + 1))
		rnd $((span * 4 / 5)); delay=$R
		rnd 4; victim=$R
		ddp_start "w$k"
		sleep "$(awk -v d="$delay" 'BEGIN { print d / 10 }')"
		n=$((2 + victim / 2))
		p=$(cat "$T/w$k.n$n.pid")
		what="none (the job ended first)"
		while kill -0 "$p" 2>/dev/null; do
			# between attempts: the next worker that appears
			w=$(pgrep -P "$p" | sort -n | sed -n "$((victim % 2 + 1))p")
			if [ -n "$w" ] && kill -9 "$w" 2>/dev/null; then
				INJ=$((INJ + 1)) what="pid $w (node $n, local $((victim % 2)))"
				break
			fi
			sleep 0.1
		done
		if ! ddp_wait "w$k"; then
			bad "run w$k: kill at ${delay}ds of $what"
			continue
		fi
		left=$(pgrep -f "$T/w$k/ckpt" | tr '\n' ' ')
		if [ -n "$left" ]; then
			bad "run w$k: processes $left of the job outlived it"
			kill -9 $left
			continue
		fi
		d=$(digest "w$k")
		if [ "$d" != "$ref" ] || ! cmp -s "$T/plain/final.pt" "$T/w$k/final.pt"; then
			bad "run w$k: final weights $d differ (kill at ${delay}ds of $what)"
			continue
		fi
		att=$(grep -c "workers started attempt=" "$T/w$k.n2.log")
		fin=$(grep -c '^\[rank0\]:final step=' "$T/w$k.n2.log")
		echo "faults: worker run $k: SIGKILL at ${delay}ds of $what, attempts=$att, finals=$fin, weights identical"
		OK=$((OK + 1))
		rm -rf "$T/w$k"
	done
}

# --- agent: an agent SIGKILLed ---------------------------------------------

# A worker that runs until $OUT/stop.<round size> exists (60 s at most).
loopworker() {
	cat >"$1" <<'EOS'
#!/bin/sh
echo "$$" >"$OUT/w.$GROUP_WORLD_SIZE.$TORCHELASTIC_RESTART_COUNT.$RANK"
i=0
while [ $i -lt 600 ]; do
	[ -f "$OUT/stop.$GROUP_WORLD_SIZE" ] && exit "$(cat "$OUT/stop.$GROUP_WORLD_SIZE")"
	sleep 0.1
	i=$((i + 1))
done
exit 1
EOS
	chmod +x "$1"
}

# agent_case K NNODES: run K of the agent scenario.
agent_case() {
	RUNS=$((RUNS + 1))
	export OUT="$T/a$1"
	mkdir -p "$OUT"
	for n in 2 3; do
		agent "a$1n$n" 127.0.0.$n --nnodes="$2" --nproc-per-node=2 $AUTH \
			--rdzv-id="agent$1" --rdzv-conf="$FAST_CONF" --no-python "$T/loop.sh"
	done
	wait_count "$OUT/w.2.0.*" 4 60 "workers of the 2-node round"
	echo 0 >"$OUT/stop.1"	# a 1-node round that follows ends at once
	rnd 20; sleep "$(awk -v d="$R" 'BEGIN { print d / 10 }')"
	rnd 2; n=$((2 + R)); o=$((5 - n))
	p=$(agent_pid "a$1n$n")
	ws=$(workers_of "$p")
	kill -9 "$p" || { bad "agent $p gone before the kill"; return; }
	INJ=$((INJ + 1))
	sleep 1
	left=$(alive_of "$ws")
	if [ -n "$left" ]; then
		bad "agent case $1: workers $left of the killed agent alive 1 s later"
		kill -9 $left
		return
	fi
	echo 0 >"$OUT/stop.2"	# were it not stopped, the 2-node round ends too
	q=$(agent_pid "a$1n$o")
	wait_gone "$q" 60 || { bad "agent case $1: node $o hung after its peer's death"; kill -9 "$q"; return; }
	wait "$q"; rc=$?
	case $2 in
	1:2)	want=0 ;;
	*)	want=75 ;;
	esac
	[ "$rc" = "$want" ] || { bad "agent case $1 (--nnodes=$2): node $o exited $rc, want $want"; tail -n 20 "$T/a$1n$o.log"; return; }
	if [ "$2" = 1:2 ] && ! ls "$OUT"/w.1.* >/dev/null 2>&1; then
		bad "agent case $1: node $o ended without a 1-node round"; return
	fi
	echo "faults: agent case $1 (--nnodes=$2): node $n SIGKILLed, workers ($ws) gone within 1 s, node $o exited $rc"
	OK=$((OK + 1))
}

scen_agent() {
	loopworker "$T/loop.sh"
	k=0
	while [ $k -lt "${FAULT_AGENT_RUNS:-2}" ]; do
		k=$((k + 1))
		agent_case "$k" 1:2
		agent_case "${k}b" 2
	done
}

# --- rdzvd: the daemon SIGKILLed and restarted -----------------------------

# rdzvd_restart: SIGKILL cgrun-rdzvd, start it again on the same port.
rdzvd_restart() {
	kill -9 "$RDZVD_PID"
	wait "$RDZVD_PID" 2>/dev/null
	rm -f "$T/rdzvd2.out"
	"$RDZVD" -d --host 127.0.0.1 --port "$RDZVD_PORT" $AUTH >"$T/rdzvd2.out" 2>>"$T/rdzvd.log" &
	RDZVD_PID=$!
	track $RDZVD_PID
	wait_file "$T/rdzvd2.out" "$RDZVD_PID" 20 "cgrun-rdzvd restarted on port $RDZVD_PORT"
}

rdzvd_case() {
	RUNS=$((RUNS + 1))
	export OUT="$T/r$1"
	mkdir -p "$OUT"
	for n in 2 3; do
		agent "r$1n$n" 127.0.0.$n --nnodes=2 --nproc-per-node=2 --max-restarts=1 $AUTH \
			--rdzv-id="rdzvd$1" --rdzv-conf="$FAST_CONF" --no-python "$T/loop.sh"
	done
	wait_count "$OUT/w.2.0.*" 4 60 "workers of the first round"
	before=$(cat "$OUT"/w.2.0.* | sort | tr '\n' ' ')
	rnd 20; sleep "$(awk -v d="$R" 'BEGIN { print d / 10 }')"
	rdzvd_restart
	INJ=$((INJ + 1))
	sleep 2
	now=$(alive_of "$before")
	[ "$now" = "$before" ] || { bad "rdzvd case $1: workers $before, alive after the restart: $now"; return; }
	# A worker fails: the next round must form on the new daemon.
	kill -9 "$(cat "$OUT/w.2.0.3")"
	wait_count "$OUT/w.2.1.*" 4 60 "workers of the round after the daemon's restart"
	echo 0 >"$OUT/stop.2"
	for n in 2 3; do
		q=$(agent_pid "r$1n$n")
		wait_gone "$q" 60 || { bad "rdzvd case $1: node $n hung"; kill -9 "$q"; return; }
		wait "$q"; rc=$?
		[ "$rc" = 0 ] || { bad "rdzvd case $1: node $n exited $rc"; tail -n 20 "$T/r$1n$n.log"; return; }
	done
	for n in 2 3; do
		grep -q "lost the connection to" "$T/r$1n$n.log" &&
			grep -q "connection to .* restored" "$T/r$1n$n.log" ||
			{ bad "rdzvd case $1: node $n did not reconnect"; tail -n 20 "$T/r$1n$n.log"; return; }
	done
	echo "faults: rdzvd case $1: daemon SIGKILLed and restarted, workers ($before) untouched, next round formed, both nodes exited 0"
	OK=$((OK + 1))
}

# The daemon dies while a round is being formed (one node of two waits):
# the waiting agent reconnects, the second node joins the new daemon, the
# round forms and the job ends.
rdzvd_forming_case() {
	RUNS=$((RUNS + 1))
	export OUT="$T/f$1"
	mkdir -p "$OUT"
	echo 0 >"$OUT/stop.2"
	agent "f$1n2" 127.0.0.2 --nnodes=2 --nproc-per-node=1 $AUTH \
		--rdzv-id="forming$1" --rdzv-conf="$FAST_CONF" --no-python "$T/loop.sh"
	i=0
	until grep -q "round 0: 1/2 nodes" "$T/f$1n2.log"; do
		[ $i -ge 300 ] && { bad "forming case $1: node 2 never waited"; return; }
		sleep 0.1; i=$((i + 1))
	done
	rnd 10; sleep "$(awk -v d="$R" 'BEGIN { print d / 10 }')"
	rdzvd_restart
	INJ=$((INJ + 1))
	agent "f$1n3" 127.0.0.3 --nnodes=2 --nproc-per-node=1 $AUTH \
		--rdzv-id="forming$1" --rdzv-conf="$FAST_CONF" --no-python "$T/loop.sh"
	for n in 2 3; do
		q=$(agent_pid "f$1n$n")
		wait_gone "$q" 60 || { bad "forming case $1: node $n hung"; kill -9 "$q"; return; }
		wait "$q"; rc=$?
		[ "$rc" = 0 ] || { bad "forming case $1: node $n exited $rc"; tail -n 20 "$T/f$1n$n.log"; return; }
	done
	[ "$(ls "$OUT"/w.2.0.* 2>/dev/null | wc -l)" = 2 ] ||
		{ bad "forming case $1: the round did not run 2 workers"; return; }
	echo "faults: rdzvd forming case $1: daemon SIGKILLed and restarted while node 2 waited; the round formed on the new daemon"
	OK=$((OK + 1))
}

scen_rdzvd() {
	loopworker "$T/loop.sh"
	k=0
	while [ $k -lt "${FAULT_RDZVD_RUNS:-1}" ]; do
		k=$((k + 1))
		rdzvd_case "$k"
		rdzvd_forming_case "$k"
	done
}

# --- netns: a node cut off ---------------------------------------------------

scen_netns() {
	[ "$(id -u)" = 0 ] || { SKIPPED="$SKIPPED netns(not root)"; return; }
	k=0
	while [ $k -lt "${FAULT_NETNS_RUNS:-1}" ]; do
		k=$((k + 1)) RUNS=$((RUNS + 1))
		t0=$(date +%s)
		out=$(timeout 200 sh "$TOP/tests/multinode/t_multinode_netns.sh" 2>&1); rc=$?
		if [ $rc = 77 ]; then
			RUNS=$((RUNS - 1)) SKIPPED="$SKIPPED netns($(echo "$out" | tail -n 1))"
			return
		fi
		INJ=$((INJ + 1))
		[ $rc = 0 ] || { bad "netns run $k exited $rc: $(echo "$out" | tail -n 5)"; continue; }
		# keep-alive window 3 s (FAST_CONF), then a new round and exits
		secs=$(echo "$out" | sed -n 's/.*declared dead after \([0-9]*\) s.*/\1/p')
		[ -n "$secs" ] && [ "$secs" -le 15 ] ||
			{ bad "netns run $k: partition seen after ${secs:-?} s (over 15)"; continue; }
		echo "faults: netns run $k ($(( $(date +%s) - t0 )) s): $(echo "$out" | tail -n 1)"
		OK=$((OK + 1))
	done
}

start_rdzvd $AUTH
[ -n "$AUTH" ] && echo "faults: daemon and agents authenticate with a shared token"
for s in $SCEN; do
	began=$(date +%s)
	"scen_$s"
	echo "faults: scenario $s took $(( $(date +%s) - began )) s"
done
[ -n "$SKIPPED" ] && echo "faults: skipped:$SKIPPED"
echo "faults: runs=$RUNS injected=$INJ correct=$OK lost=$LOST"
[ "$RUNS" -gt 0 ] || skip "no scenario could run:$SKIPPED"
[ "$LOST" = 0 ] && [ "$OK" = "$RUNS" ]

# Helpers of the multi-node scripts (tests/multinode/t_multinode_*.sh): several cgrun
# agents on loopback addresses 127.0.0.2, 127.0.0.3, ... against one
# cgrun-rdzvd.  Sourced after tests/lib.sh and tests/interop/lib.sh (T,
# track, fail, skip, start_rdzvd, need_torch*).  Every wait has a deadline and says what it
# waited for.

# Short rendezvous timers so deaths and rounds are seen within seconds.
FAST_CONF=${FAST_CONF:-keep_alive_interval=0.5,keep_alive_max_attempt=6,last_call_timeout=1,join_timeout=60,close_timeout=5}

# agent NAME ADDR CGRUN-ARGS...: start one agent in the background, its
# output in $T/NAME.log, its pid in $T/NAME.pid.
agent() {
	name=$1 addr=$2
	shift 2
	"$CGRUN" --rdzv-backend=c10d --rdzv-endpoint="127.0.0.1:$RDZVD_PORT" \
		--local-addr="$addr" "$@" >"$T/$name.log" 2>&1 </dev/null &
	echo $! >"$T/$name.pid"
	track $!
}

# agent_pid NAME
agent_pid() {
	cat "$T/$1.pid"
}

# stuck_report: after a wait ran out, what every agent and the daemon said
# and the processes still alive, so a hang can be told from a slow exit.
stuck_report() {
	for f in "$T"/*.log; do
		[ -f "$f" ] || continue
		echo "== $(basename "$f"):"
		tail -n 30 "$f"
	done
	echo "== processes:"
	ps -eo pid,ppid,stat,wchan:24,etime,args --forest 2>/dev/null |
		grep -E '[c]grun|[p]ython|[t]orch26' | cut -c1-200
}

# wait_agent NAME SECS: wait for the agent to exit; its status in AGENT_RC.
wait_agent() {
	wa_pid=$(agent_pid "$1")
	poll_for "$2" agent_exited ||
		{ stuck_report; fail "agent $1 still running after $2 s (the logs above)"; }
	wait "$wa_pid"
	AGENT_RC=$?
}
agent_exited() { ! alive "$wa_pid"; }

# expect_exit NAME SECS RC: the agent exits with RC within SECS.
expect_exit() {
	wait_agent "$1" "$2"
	[ "$AGENT_RC" -eq "$3" ] ||
		{ tail -n 40 "$T/$1.log"; fail "agent $1 exited $AGENT_RC, want $3 (its log above)"; }
}

# wait_count GLOB N SECS WHAT: wait until N files match GLOB.
wait_count() {
	wc_glob=$1 wc_n=$2
	poll_for "$3" counted ||
		{ stuck_report; fail "$4: $(ls $1 2>/dev/null | wc -l)/$2 after $3 s"; }
}
counted() { [ "$(ls $wc_glob 2>/dev/null | wc -l)" -ge "$wc_n" ]; }

# restart_rdzvd [FLAGS...]: a new daemon on $RDZVD_PORT (the old one's log
# kept as rdzvd.N.log); waits (5 s) for its whole "listening on" line.
n_restarts=0
restart_rdzvd() {
	n_restarts=$((n_restarts + 1))
	mv "$T/rdzvd.log" "$T/rdzvd.$n_restarts.log"
	rm -f "$T/rdzvd.out"	# the child truncates it only once it runs
	"$RDZVD" -d -v --host 127.0.0.1 --port "$RDZVD_PORT" "$@" \
	    >"$T/rdzvd.out" 2>"$T/rdzvd.log" &
	RDZVD_PID=$!
	track $RDZVD_PID
	poll_for 5 rdzvd_back ||
		{ cat "$T/rdzvd.log"; fail "no new daemon on port $RDZVD_PORT"; }
}
rdzvd_back() {
	grep -q "^listening on 127.0.0.1:$RDZVD_PORT\$" "$T/rdzvd.out" 2>/dev/null
}

# wait_log FILE PATTERN WHAT [SECS]: until FILE has PATTERN, at most SECS
# (10) seconds.
wait_log() {
	wl_file=$1 wl_pattern=$2
	poll_for "${4:-10}" logged ||
		{ stuck_report; fail "$3 within ${4:-10} s"; }
}
logged() { grep -q "$wl_pattern" "$wl_file" 2>/dev/null; }

# envworker FILE: a worker script that records its environment in
# $OUT/env.<attempt>.<rank> and runs the optional $OUT/hook.sh.
envworker() {
	cat >"$1" <<'EOS'
#!/bin/sh
f=$OUT/env.$TORCHELASTIC_RESTART_COUNT.$GROUP_WORLD_SIZE.$RANK
echo "RANK=$RANK LOCAL_RANK=$LOCAL_RANK WORLD_SIZE=$WORLD_SIZE GROUP_RANK=$GROUP_RANK GROUP_WORLD_SIZE=$GROUP_WORLD_SIZE LOCAL_WORLD_SIZE=$LOCAL_WORLD_SIZE MASTER_ADDR=$MASTER_ADDR MASTER_PORT=$MASTER_PORT RESTART_COUNT=$TORCHELASTIC_RESTART_COUNT RUN_ID=$TORCHELASTIC_RUN_ID" >"$f.tmp"
mv "$f.tmp" "$f"
[ -f "$OUT/hook.sh" ] && . "$OUT/hook.sh"
exit 0
EOS
	chmod +x "$1"
}

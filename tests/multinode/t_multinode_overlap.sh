#!/bin/sh
# Overlapping faults across a restart of the rendezvous (issue 24): two
# agents (127.0.0.2: rank 0, 127.0.0.3: rank 1) of a --max-restarts=3
# job, workers that record each start's TORCHELASTIC_RESTART_COUNT and
# run until told.  Every overlap is driven by events (log lines, files,
# a zombie), not by sleeps:
#
#  1. node 3's agent SIGSTOPped, cgrun-rdzvd SIGTERMed, rank 1 fails
#     meanwhile; a new daemon first hears node 2 (its workers running),
#     then node 3 comes back with its failure (the schedule that hung);
#  2. the same, node 2 stopped: node 3 (failed) comes back first;
#  3. node 3's rank fails, the daemon asks node 2 to restart, and
#     restarts while node 2's worker is still stopping;
#  4. no daemon: node 2 hosts the rendezvous, is SIGKILLed and started
#     again, node 3's worker of the old round still running.
#
# In 1 to 3 both nodes must run restart count 0, then 1 (the failure
# spends exactly one restart, no count repeats or goes back), in 4 node
# 3's old worker is stopped and the new round runs on both; each job ends
# with exit 0 once its workers are told to finish.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$TOP/tests/interop/lib.sh"
. "$TOP/tests/multinode/lib.sh"
export OUT="$T/out"
mkdir -p "$OUT"

# The worker: $OUT/<run id>/starts.<rank> gets each start's restart
# count; crash.<rank> makes it exit 1 once; linger.<rank> makes a TERM
# wait for release; go ends it with 0.
cat >"$T/w.sh" <<'EOS'
#!/bin/sh
d=$OUT/$TORCHELASTIC_RUN_ID
echo "$TORCHELASTIC_RESTART_COUNT" >>"$d/starts.$RANK"
echo $$ >"$d/pid.$RANK"
[ -f "$d/linger.$RANK" ] && trap 'i=0
	while [ ! -f "$d/release" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
	exit 143' TERM
i=0
while [ $i -lt 600 ]; do
	[ -f "$d/go" ] && exit 0
	if [ -f "$d/crash.$RANK" ] && [ ! -f "$d/crashed.$RANK" ]; then
		: >"$d/crashed.$RANK"
		exit 1
	fi
	sleep 0.1 & wait $!
	i=$((i + 1))
done
exit 3
EOS
chmod +x "$T/w.sh"

# job ID A B [FLAGS]: agents A (127.0.0.2) and B (127.0.0.3) of job ID.
job() {
	mkdir -p "$OUT/$1"
	for n in "$2:127.0.0.2" "$3:127.0.0.3"; do
		agent "${n%%:*}" "${n#*:}" -v --nnodes=2 --nproc-per-node=1 \
			--max-restarts=3 --rdzv-id="$1" --rdzv-conf="$FAST_CONF" \
			$4 --no-python "$T/w.sh"
	done
}

# starts ID RANK: the restart counts rank RANK started with, in order.
starts() {
	tr '\n' ' ' <"$OUT/$1/starts.$2" 2>/dev/null
}

# wait_starts ID N: until ranks 0 and 1 each started N times (30 s).
wait_starts() {
	ws_id=$1 ws_n=$2
	poll_for 30 started || { stuck_report; fail "$1: not $2 starts of each rank within 30 s (rank 0: $(starts "$1" 0), rank 1: $(starts "$1" 1))"; }
}
started() {
	[ "$(cat "$OUT/$ws_id/starts.0" 2>/dev/null | wc -l)" -ge "$ws_n" ] &&
	    [ "$(cat "$OUT/$ws_id/starts.1" 2>/dev/null | wc -l)" -ge "$ws_n" ]
}

# finish ID A B WANT: the workers told to end, both agents exit 0, and
# each rank started with the restart counts WANT.
finish() {
	touch "$OUT/$1/go"
	expect_exit "$2" 30 0
	expect_exit "$3" 30 0
	for r in 0 1; do
		[ "$(starts "$1" $r)" = "$4" ] ||
			{ tail -n 20 "$T/$2.log" "$T/$3.log"; fail "$1: rank $r started with restart counts '$(starts "$1" $r)', want '$4' (the logs above)"; }
	done
}

# zombie ID RANK: until the rank's worker has exited (its agent stopped,
# it stays a zombie), 10 s.
zombie() {
	zb_pid=$(cat "$OUT/$1/pid.$2")
	wait_for 10 "$1: rank $2's worker $zb_pid to exit" is_zombie
}
is_zombie() { [ "$(awk '{ print $3 }' "/proc/$zb_pid/stat" 2>/dev/null)" = Z ]; }

# term_rdzvd: SIGTERM the daemon (a graceful restart) and wait for it.
term_rdzvd() {
	kill -TERM "$RDZVD_PID"
	wait "$RDZVD_PID"
}

start_rdzvd -v

# 1. The failed node comes back after the other already waits.
job ov1 a1 b1
wait_starts ov1 1
kill -STOP "$(agent_pid b1)"
term_rdzvd
touch "$OUT/ov1/crash.1"
zombie ov1 1
restart_rdzvd
wait_log "$T/rdzvd.log" "job=ov1 created" "node 2 back on the new daemon"
kill -CONT "$(agent_pid b1)"
wait_starts ov1 2
finish ov1 a1 b1 "0 1 "
echo "ok: 1. daemon restart, node 3 stopped and its rank failed meanwhile: one restart, both ran count 0 then 1"

# 2. The failed node comes back first.
job ov2 a2 b2
wait_starts ov2 1
kill -STOP "$(agent_pid a2)"
term_rdzvd
touch "$OUT/ov2/crash.1"
wait_log "$T/b2.log" "worker exited rank=1" "node 3 saw its rank fail"
restart_rdzvd
wait_log "$T/rdzvd.log" "job=ov2 created" "node 3 back on the new daemon"
kill -CONT "$(agent_pid a2)"
wait_starts ov2 2
finish ov2 a2 b2 "0 1 "
echo "ok: 2. daemon restart, the failed node back first: one restart, both ran count 0 then 1"

# 3. The daemon restarts while node 2 stops its worker for the restart.
mkdir -p "$OUT/ov3"
touch "$OUT/ov3/linger.0"
job ov3 a3 b3
wait_starts ov3 1
touch "$OUT/ov3/crash.1"
wait_log "$T/a3.log" "restart requested by the rendezvous" "node 2 asked to restart"
term_rdzvd
restart_rdzvd
wait_log "$T/rdzvd.log" "job=ov3 created" "a node back on the new daemon"
for n in a3 b3; do
	wait_log "$T/$n.log" "connection to .* restored" "$n back on the new daemon"
done
touch "$OUT/ov3/release"
wait_starts ov3 2
finish ov3 a3 b3 "0 1 "
echo "ok: 3. daemon restart while node 2 stopped for a restart: both ran count 0 then 1"

# 4. No daemon: node 2 hosts the rendezvous, dies, and is started again.
term_rdzvd
RDZVD_PORT=$(free_port)
mkdir -p "$OUT/ov4"
agent a4 127.0.0.2 -v --nnodes=2 --nproc-per-node=1 --max-restarts=3 \
	--rdzv-id=ov4 --rdzv-conf="$FAST_CONF" --no-python "$T/w.sh"
wait_log "$T/a4.log" "hosting the rendezvous on" "node 2 hosting"
agent b4 127.0.0.3 -v --nnodes=2 --nproc-per-node=1 --max-restarts=3 \
	--rdzv-id=ov4 --rdzv-conf="$FAST_CONF" --no-python "$T/w.sh"
wait_starts ov4 1
old=$(cat "$OUT/ov4/pid.1")
kill -9 "$(agent_pid a4)"
wait "$(agent_pid a4)" 2>/dev/null
agent a4b 127.0.0.2 -v --nnodes=2 --nproc-per-node=1 --max-restarts=3 \
	--rdzv-id=ov4 --rdzv-conf="$FAST_CONF" --no-python "$T/w.sh"
wait_starts ov4 2
alive "$old" && { stuck_report; fail "4. node 3's worker $old of the old round still runs"; }
finish ov4 a4b b4 "0 0 "
echo "ok: 4. the hosting agent restarted: node 3's old worker stopped, the new round ran on both"

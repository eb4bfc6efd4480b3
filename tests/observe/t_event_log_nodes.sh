#!/bin/sh
# The event log of a lost node: two agents (127.0.0.2 and .3) of a job of
# --nnodes=1:2 through cgrun-rdzvd, each with --event-log; their workers
# run until stopped while the round has two nodes.  The agent on .3 is
# killed with SIGKILL; after its missed keep-alives the rendezvous asks the
# survivor for a round of one node (no restart spent), whose worker exits
# 0.  The survivor's log has the documented sequence (docs/event-log.md),
# the killed agent's ends where it was killed with every line whole, and
# both are valid under docs/event-log.schema.json.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$CGRUN_TOP/tests/interop/lib.sh"
. "$CGRUN_TOP/tests/multinode/lib.sh"
SCHEMA=$TOP/docs/event-log.schema.json
"$PY113" -c 'import jsonschema' 2>/dev/null ||
	skip "python3-jsonschema not installed (apt-get install python3-jsonschema)"
start_rdzvd

cat >"$T/w.sh" <<'EOS'
#!/bin/sh
[ "$GROUP_WORLD_SIZE" = 1 ] && exit 0
exec sleep 60
EOS
chmod +x "$T/w.sh"
# last_call_timeout=10: the first round waits for both agents.
conf=keep_alive_interval=0.5,keep_alive_max_attempt=6,last_call_timeout=10,join_timeout=60,close_timeout=5
common="--nnodes=1:2 --nproc-per-node=1 --rdzv-id=lost --max-restarts=0 --rdzv-conf=$conf --no-python $T/w.sh"
agent a 127.0.0.2 --event-log="$T/a.jsonl" $common
agent b 127.0.0.3 --event-log="$T/b.jsonl" $common

# wait_rec FILE TEXT SECS WHAT: until FILE has a line with TEXT.
wait_rec() {
	i=0
	until grep -q "$2" "$1" 2>/dev/null; do
		[ "$i" -ge $(($3 * 10)) ] && { echo "FAIL: $4 after $3 s"; stuck_report; exit 1; }
		sleep 0.1
		i=$((i + 1))
	done
}
wait_rec "$T/a.jsonl" '"event":"attempt_start"' 30 "no attempt on 127.0.0.2"
wait_rec "$T/b.jsonl" '"event":"attempt_start"' 30 "no attempt on 127.0.0.3"
kill -9 "$(agent_pid b)"
expect_exit a 60 0

"$PY113" "$TOP/tests/observe/evlog_check.py" "$SCHEMA" "$T/a.jsonl" \
	'agent_start round attempt_start stop:restart exit end:stopped restart:membership round attempt_start exit end:succeeded outcome:success' --print ||
	{ cat "$T/a.jsonl"; exit 1; }
"$PY113" "$TOP/tests/observe/evlog_check.py" "$SCHEMA" "$T/b.jsonl" \
	'agent_start round attempt_start' --partial --print || { cat "$T/b.jsonl"; exit 1; }
"$PY113" - "$T/a.jsonl" <<'PY' || exit 1
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
rounds = [r for r in recs if r["event"] == "round"]
assert [r["nodes"] for r in rounds] == [2, 1], rounds
assert [r["world_size"] for r in rounds] == [2, 1], rounds
assert all(r["restart_count"] == 0 for r in rounds), rounds
stop = [r for r in recs if r["event"] == "stop"][0]
assert stop["reason"] == "restart" and stop["why"], stop
rs = [r for r in recs if r["event"] == "restart"][0]
assert rs["reason"] == "membership" and rs["restarts_left"] == 0, rs
ex = [r for r in recs if r["event"] == "worker_exit"][0]
assert ex["after_stop"] and not ex["root_cause"] and ex["signal"] == "SIGTERM", ex
assert recs[0]["backend"] == "c10d" and recs[0]["nnodes_max"] == 2, recs[0]
assert all(r["node"] == "127.0.0.2" and r["run_id"] == "lost" for r in recs)
print("ok: the survivor's rounds had %s nodes; stopped for: %s" % ([r["nodes"] for r in rounds], stop["why"]))
PY

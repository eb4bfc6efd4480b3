#!/bin/sh
# The job's event log (--event-log, docs/event-log.md) of real runs, each
# line checked against docs/event-log.schema.json and the run's documented
# sequence (tests/observe/evlog_check.py), the schema shown to refuse
# each record changed (a member left out or added): a success, a crash with no
# restart left, a crash and a restart, a hang (stacks, then a restart), a
# stop by SIGTERM; then fd:N, torchrun's --event-log-handler=console, a
# $run_id template, the site file's keys, and the errors: a directory that
# does not exist, a malformed fd:N, a closed fd, an unknown handler, an
# unknown $variable in the path, a FIFO with no reader (refused, not
# waited for).  (Node loss:
# t_event_log_nodes.sh.)
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$CGRUN_TOP/tests/interop/lib.sh"
CGRUN=${CGRUN_BIN:-$BUILD_DIR/cgrun}
SCHEMA=$TOP/docs/event-log.schema.json
"$PY113" -c 'import jsonschema' 2>/dev/null ||
	skip "python3-jsonschema not installed (apt-get install python3-jsonschema)"

# A worker: on restart count 0, rank CRASH_RANK (if set) exits CRASH_CODE
# at once and the others sleep SLEEP seconds (if set, until stopped);
# every rank exits 0 otherwise.
cat >"$T/w.sh" <<'EOS'
#!/bin/sh
if [ "$TORCHELASTIC_RESTART_COUNT" = 0 ]; then
	[ "$RANK" = "$CRASH_RANK" ] && exit "${CRASH_CODE:-3}"
	[ -n "$SLEEP" ] && exec sleep "$SLEEP"
fi
exit 0
EOS
chmod +x "$T/w.sh"

# run NAME RC CGRUN-ARGS...: cgrun with --event-log=$T/NAME.jsonl must exit
# RC within 60 s; its output in $T/NAME.out.
run() {
	name=$1 want=$2
	shift 2
	timeout 60 "$CGRUN" --event-log="$T/$name.jsonl" "$@" >"$T/$name.out" 2>&1 </dev/null
	rc=$?
	[ "$rc" -eq "$want" ] || { tail -n 20 "$T/$name.out"; fail "$name: cgrun exited $rc, want $want"; }
}

# seq NAME PATTERN: the log is valid and its records match PATTERN.
seq_is() {
	"$PY113" "$TOP/tests/observe/evlog_check.py" "$SCHEMA" "$T/$1.jsonl" "$2" ||
		{ cat "$T/$1.jsonl"; exit 1; }
	echo "ok: $1: $("$PY113" "$TOP/tests/observe/evlog_check.py" "$SCHEMA" "$T/$1.jsonl" "$2" --print)"
}

# rec NAME KIND EXPR: EXPR (Python, over the record r) holds for every
# record of KIND, and there is one.
rec() {
	"$PY113" - "$T/$1.jsonl" "$2" "$3" <<'PY' || exit 1
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
rs = [r for r in recs if r["event"] == sys.argv[2]]
assert rs, "FAIL: no %s record in %s" % (sys.argv[2], sys.argv[1])
for r in rs:
    assert eval(sys.argv[3], {"r": r, "recs": recs}), "FAIL: %s: %s: %r" % (sys.argv[1], sys.argv[3], r)
PY
}

common="--standalone --nproc-per-node=2 --no-python"

run success 0 $common "$T/w.sh"
seq_is success 'agent_start round attempt_start exit exit end:succeeded outcome:success'
rec success outcome 'r["exit_status"] == 0 and r["root_cause"] is None and r["events_dropped"] == 0'
rec success round 'r["nodes"] == 1 and r["world_size"] == 2 and r["attempt"] == 1'
rec success attempt_start '[w["rank"] for w in r["workers"]] == [0, 1]'
rec success agent_start 'r["backend"] == "standalone" and r["nproc"] == 2 and r["attempt"] == 0'

CRASH_RANK=1 CRASH_CODE=7 SLEEP=30 run crash 7 $common --max-restarts=0 "$T/w.sh"
seq_is crash 'agent_start round attempt_start exit! stop:failure exit end:failed outcome:failure'
rec crash outcome 'r["exit_status"] == 7 and r["root_cause"]["rank"] == 1 and r["root_cause"]["exit_code"] == 7'
rec crash worker_exit 'r["root_cause"] == (r["rank"] == 1) and r["after_stop"] == (r["rank"] == 0)'
rec crash worker_exit 'r["rank"] == 1 or r["signal"] == "SIGTERM"'
rec crash stop 'r["why"] == "rank 1 exited with status 7" and r["signal"] == "SIGTERM"'

CRASH_RANK=1 SLEEP=30 run restart 0 $common --max-restarts=1 "$T/w.sh"
seq_is restart 'agent_start round attempt_start exit! stop:failure exit end:failed restart:failure round attempt_start exit exit end:succeeded outcome:success'
rec restart restart 'r["restart_count"] == 1 and r["restarts_left"] == 0 and r["attempt"] == 2'
rec restart attempt_end '(r["outcome"] == "failed") == (r["attempt"] == 1)'
# attempt (rounds received) against the log directories (restart count)
rec restart attempt_start 'r["log_dir"].endswith("/attempt_%d" % r["restart_count"]) and r["restart_count"] == r["attempt"] - 1'

# A hang: rank 2 of 4 blocks on the first attempt (tests/hang/hang_py.py).
PY=$(command -v python3) || skip "no python3"
(
	unset PYTHONFAULTHANDLER
	HANG_AT_STEP=10 HANG_RANK=2 run hang 0 --standalone --nproc-per-node=4 \
		--max-restarts=1 --hang-timeout=2 --metrics-file="$T/hang.prom" \
		--no-python "$PY" "$TOP/tests/hang/hang_py.py" 20
) || exit 1
seq_is hang 'agent_start round attempt_start hang (exit )*stacks stop:failure (exit!? )*end:failed restart:failure round attempt_start (exit ){3}exit end:succeeded outcome:success'
rec hang hang 'r["rank"] == 2 and r["timeout_seconds"] == 2 and r["source"] == "heartbeat"'
rec hang stacks 'r["culprit_rank"] == 2 and "hang_here" in r["where"] and r["stacks_file"].endswith("/stacks.txt")'
rec hang attempt_end 'r["attempt"] == 2 or (r["root_cause"]["rank"] == 2 and r["root_cause"]["hung"].startswith("hung: no progress"))'
grep -q '^cgrun_hangs_detected_total{run_id="[^"]*"} 1$' "$T/hang.prom" ||
	{ grep hangs "$T/hang.prom"; fail "hang: the metrics do not count the hang"; }
stacks=$("$PY113" -c 'import json, sys; print([json.loads(l) for l in open(sys.argv[1]) if "\"stacks\"" in l][0]["stacks_file"])' "$T/hang.jsonl")
grep -q '^=== rank 2 ' "$stacks" || fail "hang: the stacks file $stacks lacks rank 2"

# A stop by SIGTERM while the workers run.
SLEEP=30 "$CGRUN" --event-log="$T/signal.jsonl" $common "$T/w.sh" >"$T/signal.out" 2>&1 </dev/null &
p=$!
track $p
i=0
until grep -q attempt_start "$T/signal.jsonl" 2>/dev/null; do
	[ $i -ge 200 ] && fail "signal: no attempt_start record after 10 s"
	sleep 0.05; i=$((i + 1))
done
kill -TERM $p
wait $p
rc=$?
[ $rc -eq 143 ] || fail "signal: cgrun exited $rc, want 143"
seq_is signal 'agent_start round attempt_start stop:signal exit exit end:stopped outcome:signal'
rec signal outcome 'r["exit_status"] == 143 and r["why"] == "stopped by SIGTERM"'

# The schema is a check: each record of these runs (every kind) changed
# (a member left out, one added, an unknown kind) is refused.
cat "$T/success.jsonl" "$T/crash.jsonl" "$T/restart.jsonl" "$T/hang.jsonl" \
	"$T/signal.jsonl" >"$T/all.jsonl"
"$PY113" "$TOP/tests/observe/evlog_check.py" "$SCHEMA" "$T/all.jsonl" --rejects || exit 1

# fd:N on a pipe of one page whose reader reads nothing until cgrun has
# exited: the job is not held up, cgrun waits 2 s at the end, and what it
# could not write is counted the same on stderr, in the outcome and in
# the last metrics file; the reader then finds whole records only.
"$PY113" - "$CGRUN" "$T/stall.prom" $common --nproc-per-node=16 "$T/w.sh" <<'PY' || exit 1
import fcntl, json, os, re, subprocess, sys, time
r, w = os.pipe()
fcntl.fcntl(w, 1031, 4096)              # F_SETPIPE_SZ: one page
cmd = [sys.argv[1], "--event-log=fd:%d" % w, "--metrics-file=" + sys.argv[2]] + sys.argv[3:]
t0 = time.monotonic()
p = subprocess.run(cmd, pass_fds=(w,), stdin=subprocess.DEVNULL,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=60)
secs = time.monotonic() - t0
os.close(w)
err = p.stderr.decode()
assert p.returncode == 0, "FAIL: stalled reader: cgrun exited %d: %s" % (p.returncode, err)
m = re.search(r"(\d+) records dropped", err)
assert m, "FAIL: stalled reader: no count of dropped records on stderr: %s" % err
said = int(m.group(1))
prom = open(sys.argv[2]).read()
m = re.search(r"^cgrun_event_log_dropped_total\{[^}]*\} (\d+)$", prom, re.M)
assert m and int(m.group(1)) == said, \
    "FAIL: stalled reader: stderr says %d dropped, the last metrics file %s" % (said, m and m.group(0))
data = b""
while True:
    b = os.read(r, 65536)
    if not b:
        break
    data += b
lines = data.decode().split("\n")
assert lines[-1] == "", "FAIL: stalled reader: the last record is cut: %r" % lines[-1][-80:]
recs = [json.loads(l) for l in lines[:-1]]
assert recs[0]["event"] == "agent_start" and recs[-1]["seq"] + said >= 20, recs[-1]
print("ok: a stalled reader: job done in %.1f s, %d records written, %d dropped (stderr = metrics file)" % (secs, len(recs), said))
PY

# fd:N, and torchrun's console handler (stderr); --event-log wins over it.
timeout 60 "$CGRUN" --event-log=fd:3 $common "$T/w.sh" 3>"$T/fd.jsonl" >/dev/null 2>&1 ||
	fail "fd:3: cgrun failed"
seq_is fd 'agent_start round attempt_start exit exit end:succeeded outcome:success'
timeout 60 "$CGRUN" --event-log-handler=console $common "$T/w.sh" 2>"$T/console.err" >/dev/null ||
	fail "console handler: cgrun failed"
grep '^{"schema":1,' "$T/console.err" >"$T/console.jsonl"
seq_is console 'agent_start round attempt_start exit exit end:succeeded outcome:success'
run both 0 --event-log-handler=console $common "$T/w.sh"
grep -q '"schema"' "$T/both.out" && fail "--event-log with the console handler: records on stderr too"
seq_is both 'agent_start round attempt_start exit exit end:succeeded outcome:success'

# A $run_id template: the file is named after the run's id.
timeout 60 "$CGRUN" --event-log="$T/ev-\$run_id.jsonl" $common "$T/w.sh" >/dev/null 2>&1 ||
	fail "template: cgrun failed"
f=$(ls "$T"/ev-*.jsonl)
id=$("$PY113" -c 'import json, sys; print(json.loads(open(sys.argv[1]).readline())["run_id"])' "$f")
[ "$f" = "$T/ev-$id.jsonl" ] || fail "template: $f is not named after run id $id"
echo "ok: fd:3, the console handler, a \$run_id template ($(basename "$f"))"

# The site file's event_log and metrics_file (templates); an explicit
# --event-log-handler keeps the site's event log off.
mkdir -p "$T/site"
printf '%s\n' "event_log = $T/site/ev-\$run_id.jsonl" \
	"metrics_file = \"$T/site/m-\$run_id.prom\"" >"$T/site.conf"
CGRUN_CONFIG=$T/site.conf timeout 60 "$CGRUN" $common "$T/w.sh" >/dev/null 2>&1 ||
	fail "site file: cgrun failed"
f=$(ls "$T"/site/ev-*.jsonl) || fail "site file: no event log in $T/site"
id=$("$PY113" -c 'import json, sys; print(json.loads(open(sys.argv[1]).readline())["run_id"])' "$f")
grep -qx "cgrun_exit_status{run_id=\"$id\"} 0" "$T/site/m-$id.prom" ||
	fail "site file: no metrics file m-$id.prom with the exit status"
rm -f "$T"/site/*
CGRUN_CONFIG=$T/site.conf timeout 60 "$CGRUN" --event-log-handler=null $common "$T/w.sh" >/dev/null 2>&1 ||
	fail "site file with the null handler: cgrun failed"
ls "$T"/site/ev-*.jsonl >/dev/null 2>&1 && fail "--event-log-handler=null: the site's event log was written"
echo "ok: the site file's event_log and metrics_file; --event-log-handler=null keeps the log off"

# says NAME RC PATTERN CMD...: CMD (cgrun, within 60 s) exits RC and its
# output (in $T/NAME.out) has a line matching PATTERN (grep).
says() {
	says_name=$1 says_rc=$2 says_pat=$3
	shift 3
	timeout 60 "$@" >"$T/$says_name.out" 2>&1 </dev/null
	rc=$?
	[ $rc -eq "$says_rc" ] && grep -q -- "$says_pat" "$T/$says_name.out" ||
		{ cat "$T/$says_name.out"; fail "$says_name: exit $rc, want $says_rc saying: $says_pat"; }
}

# The site's sinks where this user cannot write (here: no such directory)
# are warned about, naming the site file's line, and the job runs; a
# malformed event_log there is a usage error naming its line.  The same
# paths on the command line are refused (exit 73, below).
printf '%s\n' "# site" "event_log = $T/none/ev.jsonl" \
	"metrics_file = $T/none/m.prom" >"$T/site2.conf"
says site2 0 "site2.conf:2: event_log: --event-log $T/none/ev.jsonl: No such file or directory; the job goes on without it" \
	env CGRUN_CONFIG="$T/site2.conf" "$CGRUN" $common "$T/w.sh"
grep -q "site2.conf:3: metrics_file: --metrics-file $T/none/m.prom: .*; the job goes on without it" "$T/site2.out" ||
	{ cat "$T/site2.out"; fail "site2: no warning naming the metrics_file line"; }
printf '%s\n' "event_log = fd:x" >"$T/site3.conf"
says site3 2 'site3.conf:1: event_log: expected a file or fd:N, got "fd:x"' \
	env CGRUN_CONFIG="$T/site3.conf" "$CGRUN" $common "$T/w.sh"
echo "ok: the site's sinks that cannot be written are warned about, the job runs; a malformed one is a usage error"

# Errors: said at once, naming what was wrong.
says nodir 73 "no/such/dir/ev.jsonl: No such file or directory" \
	"$CGRUN" --event-log="$T/no/such/dir/ev.jsonl" $common "$T/w.sh"
says fdx 2 'event-log: expected a file or fd:N, got "fd:x"' \
	"$CGRUN" --event-log=fd:x $common "$T/w.sh"
# fd:N not open when cgrun starts, N a number cgrun's own descriptors take
# later (its event loop, the loop's signal pipe, the job store, ...):
# refused, never written into them.
for n in 3 4 5 6 7 8 9; do
	says fd$n 73 "file descriptor $n is not open" \
		"$CGRUN" --event-log=fd:$n $common "$T/w.sh" \
		3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&-
done
says handler 2 'event-log-handler: unknown value "bogus"' \
	"$CGRUN" --event-log-handler=bogus $common "$T/w.sh"
# a variable cgrun does not replace (a typo: every job would share one
# file named after it), on the command line and in the site file
says runid 2 'event-log: no variable $runid in ".*" (there are $run_id, $node and $pid; $$ is a $)' \
	"$CGRUN" --event-log="$T/ev-\$runid.jsonl" $common "$T/w.sh"
printf '%s\n' "metrics_file = $T/\${job}.prom" >"$T/site4.conf"
says site4 2 'site4.conf:1: metrics_file: no variable $job in' \
	env CGRUN_CONFIG="$T/site4.conf" "$CGRUN" $common "$T/w.sh"
ls "$T"/ev-*runid* "$T"/*job* >/dev/null 2>&1 && fail "a file named after an unknown variable was made"
# a FIFO without a reader (exit 124: it waited for one)
mkfifo "$T/fifo"
says fifo 73 'fifo: a FIFO with no reader' \
	"$CGRUN" --event-log="$T/fifo" $common "$T/w.sh"
echo "ok: a missing directory (73), fd:x (2), a closed fd (73, fd 3-9: none written into cgrun's own), an unknown handler (2), an unknown \$variable (2), a FIFO without a reader (73)"

#!/bin/sh
# The failure report: root cause first (rank, status or signal, time, pid,
# attempt), the message and traceback from the worker's error file in
# PyTorch's @record format, its log file, then the other failures; the
# root cause's error file copied to the agent's own TORCHELASTIC_ERROR_FILE
# with errorCode set (as torchrun does for schedulers).  A real @record
# failure from torch is t_launcher_report_record's.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
cd "$T" || exit 1

# Rank 1 writes an @record-style error file and exits 7; ranks 0 and 2
# wait and are stopped by cgrun.
cat > w.sh <<'W'
#!/bin/sh
case $LOCAL_RANK in
1) cat > "$TORCHELASTIC_ERROR_FILE" <<'J'
{"message": {"message": "ValueError: boom from rank 1", "extraInfo": {"py_callstack": "Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\nValueError: boom from rank 1\n", "timestamp": "1795305373"}}}
J
   echo "about to fail" >&2
   exit 7 ;;
*) exec sleep 30 ;;
esac
W
chmod +x w.sh
TORCHELASTIC_ERROR_FILE=$T/agent-error.json timeout 30 "$CGRUN_BIN" --nproc-per-node=3 \
    --rdzv-id=rep --log-dir="$T/logs" --tee=2 ./w.sh > out 2> err
rc=$?
[ $rc -eq 7 ] || fail "exit status $rc, want 7"
sed -n '/failed on/,$p' err > report
sed 's/^/  | /' report
line1=$(sed -n 1p report) line2=$(sed -n 2p report)
case "$line1" in "cgrun: ./w.sh failed on "*" after 0 of 0 restarts") ;; *) fail "headline: $line1" ;; esac
echo "$line2" | grep -Eq '^root cause: rank 1 \(local_rank 1, node 0\) exited with status 7 at 20[0-9-]+ [0-9:.]+ UTC \(pid [0-9]+, attempt 0\)$' ||
	fail "root cause line: $line2"
grep -qx '  message: ValueError: boom from rank 1' report || fail "no message"
grep -qx '      File "train.py", line 3, in <module>' report || fail "no traceback"
D=$(echo "$T"/logs/rep_*/attempt_0)
[ -d "$D" ] || fail "no single LOG_DIR/rep_XXXXXX/attempt_0: $(ls "$T/logs")"
grep -qx "  error file: $D/1/error.json" report || fail "no error file path"
grep -qx "  log: $D/1/stderr.log" report || fail "no log path"
grep -q '^other failures:' report || fail "no other failures"
grep -Eq '^  rank [02] .*after cgrun stopped it' report || fail "stopped ranks not listed"
# The agent's error file: the root cause's, with errorCode.
/usr/bin/python3 - "$T/agent-error.json" <<'P' || fail "agent error file: $(cat "$T/agent-error.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["message"]["message"] == "ValueError: boom from rank 1", d
assert d["message"]["errorCode"] == 7, d
P
echo "report from an error file"

# A worker without an error file: signal and no message lines.
printf '#!/bin/sh\nkill -SEGV $$\n' > segv.sh
chmod +x segv.sh
(ulimit -c 0; timeout 30 "$CGRUN_BIN" --nproc-per-node=1 ./segv.sh > out 2> err)
rc=$?
[ $rc -eq 139 ] || fail "segv: status $rc, want 139"
grep -q '^root cause: rank 0 .*killed by signal 11 (SIGSEGV)' err || fail "segv report: $(cat err)"
grep -q 'message:' err && fail "message without an error file"
echo "report for a signal"

echo ok

#!/bin/sh
# cgrun-rdzvd and the cgrun agent under valgrind memcheck (leak check on,
# --error-exitcode) through a representative flow: every TCPStore
# operation from torch 1.13 clients (tests/interop/ops.py), a two-node
# rendezvous round of two agents, and a standalone run whose worker fails
# once and is restarted.  Every process must exit as it should, with no
# memcheck error and no definite or indirect leak.  Third-party leaks
# (none of ours) are suppressed by tests/memcheck/valgrind.supp.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$TOP/tests/interop/lib.sh"
command -v valgrind >/dev/null 2>&1 || skip "valgrind not installed (apt-get install valgrind)"
need_torch113
[ -x "$CGRUN" ] && [ -x "$RDZVD" ] || fail "$CGRUN or $RDZVD not built"
ldd "$RDZVD" | grep -q -E 'lib(asan|ubsan|tsan)' &&
	skip "$RDZVD is a sanitizer build (valgrind cannot run it; the sanitizers check it)"
VG="valgrind --tool=memcheck --error-exitcode=99 --leak-check=full
 --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect
 --suppressions=$TOP/tests/memcheck/valgrind.supp --log-file=$T/vg.%p.log"
CONF=keep_alive_interval=1,keep_alive_max_attempt=20,last_call_timeout=1,join_timeout=120,close_timeout=10
start=$(date +%s)

# show_vg: print every memcheck log that reports an error or a leak; 1 if any.
show_vg() {
	bad=0
	for l in "$T"/vg.*.log; do
		if grep -q -E 'ERROR SUMMARY: [1-9]|definitely lost: [1-9]|indirectly lost: [1-9]' "$l"; then
			bad=1
			echo "== $l"
			cat "$l"
		fi
	done
	return $bad
}

# The daemon.
$VG "$RDZVD" -d --host 127.0.0.1 --port 0 >"$T/rdzvd.out" 2>"$T/rdzvd.log" &
RDZVD_PID=$!
track $RDZVD_PID
i=0
until grep -q '^listening on ' "$T/rdzvd.out"; do
	kill -0 "$RDZVD_PID" 2>/dev/null || { cat "$T/rdzvd.log" "$T"/vg.*.log; fail "daemon exited"; }
	[ $i -ge 1200 ] && fail "no 'listening on' from the daemon under valgrind after 60 s"
	sleep 0.05
	i=$((i + 1))
done
RDZVD_PORT=$(sed -n 's/^listening on .*:\([0-9][0-9]*\)$/\1/p' "$T/rdzvd.out" | head -n 1)
echo "daemon under valgrind on port $RDZVD_PORT ($(( $(date +%s) - start ))s)"

# Store operations from torch clients.
timeout 300 "$PY113" "$TOP/tests/interop/ops.py" "$RDZVD_PORT" >"$T/ops.log" 2>&1 ||
	{ tail -n 20 "$T/ops.log"; fail "torch store operations"; }
echo "ok torch store operations: $(tail -n 1 "$T/ops.log") ($(( $(date +%s) - start ))s)"

# A two-node round: two agents under valgrind, two workers each.
cat >"$T/w.sh" <<'EOS'
#!/bin/sh
echo "$RANK $WORLD_SIZE $GROUP_RANK" >"$OUT/rank.$RANK"
EOS
chmod +x "$T/w.sh"
export OUT="$T/out"
mkdir -p "$OUT"
for n in 2 3; do
	$VG "$CGRUN" --rdzv-backend=c10d --rdzv-endpoint="127.0.0.1:$RDZVD_PORT" \
		--local-addr=127.0.0.$n --nnodes=2 --nproc-per-node=2 --rdzv-id=vg \
		--rdzv-conf=$CONF --no-python "$T/w.sh" >"$T/agent$n.log" 2>&1 </dev/null &
	eval "A$n=\$!"
	track $!
done
for n in 2 3; do
	eval "p=\$A$n"
	timeout 300 sh -c "while kill -0 $p 2>/dev/null; do sleep 0.2; done"
	wait "$p"
	rc=$?
	[ $rc -eq 0 ] || { tail -n 20 "$T/agent$n.log"; show_vg; fail "agent 127.0.0.$n exited $rc (99: memcheck errors)"; }
done
[ "$(cat "$OUT"/rank.* | sort | tr '\n' ' ')" = "0 4 0 1 4 0 2 4 1 3 4 1 " ] ||
	{ cat "$OUT"/rank.*; fail "ranks of the two-node round"; }
echo "ok two-node round: 4 workers with the right ranks ($(( $(date +%s) - start ))s)"

# Standalone (in-process store), rank 1 fails in the first attempt.
$VG "$CGRUN" --standalone --nproc-per-node=2 --max-restarts=1 --no-python sh -c \
	'echo "$TORCHELASTIC_RESTART_COUNT" >"$OUT/attempt.$RANK"; [ "$TORCHELASTIC_RESTART_COUNT$RANK" != 01 ]' \
	>"$T/standalone.log" 2>&1 </dev/null
rc=$?
[ $rc -eq 0 ] || { tail -n 20 "$T/standalone.log"; show_vg; fail "standalone run exited $rc (99: memcheck errors)"; }
[ "$(cat "$OUT/attempt.1")" = 1 ] || fail "no restart after the failure"
echo "ok standalone run with a restart ($(( $(date +%s) - start ))s)"

kill -TERM "$RDZVD_PID"
wait "$RDZVD_PID"
rc=$?
[ $rc -eq 0 ] || { tail -n 30 "$T/rdzvd.log"; show_vg; fail "daemon exited $rc after SIGTERM (99: memcheck errors)"; }
show_vg || fail "memcheck reports"
echo "ok $(grep -l 'ERROR SUMMARY: 0 errors' "$T"/vg.*.log | wc -l) processes clean under memcheck in $(( $(date +%s) - start ))s"

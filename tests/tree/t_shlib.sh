#!/bin/sh
# tests/lib.sh keeps its promises: fail, fail_later, skip and skip_later
# (the reason is the last line even when the clean-up talks), a failure
# wins over a skip_later, wait_for's timeout names
# what it waited for, at_exit runs last-registered first, and at exit no
# process the test started is left: spawned groups, untracked children,
# a child ignoring SIGTERM (SIGKILL after the grace period), a tracked
# group whose leader is gone, and on SIGTERM to the test itself; the
# test's T (its TMPDIR) is removed.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
cd "$T" || exit 1
OUT=$T/out
export OUT
mkdir -p "$OUT"

# The inner test: starts processes of every kind, records their pids and
# its T in $OUT, then does what $1 says.
cat >inner.sh <<'EOF'
. "$CGRUN_TOP/tests/lib.sh"
lib_grace_ms=300
echo "$T" >"$OUT/T"
echo x >"$TMPDIR/file"
spawn sh -c 'sleep 300 & echo $! >"$OUT/grandchild"; wait'
echo $! >"$OUT/spawned"
sleep 300 &
echo $! >"$OUT/untracked"
sh -c 'trap "" TERM; echo ready >"$OUT/deaf.ready"; exec sleep 300' &
echo $! >"$OUT/deaf"
track $!
setsid sh -c 'sleep 300 & echo $! >"$OUT/orphan"; exit 0' &
track $!
on_fail() { echo "on_fail ran"; }
at_exit 'echo at_exit first'
at_exit 'echo at_exit second'
wait_for 10 "the processes to start" sh -c '[ -s "$OUT/grandchild" ] && [ -s "$OUT/orphan" ] && [ -s "$OUT/deaf.ready" ]'
case $1 in
fail) fail "boom" ;;
skip) skip "nothing to run on" ;;
later) fail_later "soft"; echo "went on" ;;
part) skip_later "no gdb here"; echo "went on" ;;
partfail) skip_later "no gdb here"; fail_later "soft" ;;
wait) poll_for 0.2 false && echo "poll_for lied"; wait_for 0.3 "the moon" false ;;
term) sleep 300 & echo waiting >"$OUT/term.ready"; wait ;;
port) p=$(free_port); python3 -c 'import socket, sys; socket.socket().bind(("127.0.0.1", int(sys.argv[1])))' "$p" && echo "port $p free" ;;
esac
echo "end"
EOF

# run CASE RC: the inner test exits RC; its output in $T/CASE.out.
run() {
	rm -f "$OUT"/*
	sh inner.sh "$1" >"$T/$1.out" 2>&1
	rc=$?
	[ "$rc" = "$2" ] || { cat "$T/$1.out"; fail "$1: the inner test exited $rc, want $2"; }
	left
}

# left: every process the inner test started is gone, and its T.
left() {
	for f in spawned grandchild untracked deaf orphan; do
		p=$(cat "$OUT/$f")
		! alive "$p" || fail "$f process $p outlived the test"
	done
	[ ! -e "$(cat "$OUT/T")" ] || fail "the inner test's T $(cat "$OUT/T") is still there"
}

# says CASE TEXT: the output of CASE has the line TEXT.
says() {
	grep -qx -- "$2" "$T/$1.out" || { cat "$T/$1.out"; fail "$1: no line \"$2\""; }
}

run fail 1
says fail "FAIL: boom"
says fail "on_fail ran"
[ "$(grep at_exit fail.out | tr '\n' ' ')" = "at_exit second at_exit first " ] ||
	fail "at_exit order: $(grep at_exit fail.out)"
echo "ok: fail: exit 1, on_fail, at_exit in reverse, nothing left"

run skip 77
[ "$(tail -n 1 skip.out)" = "nothing to run on" ] || fail "skip: last line '$(tail -n 1 skip.out)'"
echo "ok: skip: exit 77, the reason last"

run later 1
says later "FAIL: soft"
says later "went on"
says later "end"
echo "ok: fail_later: went on, exit 1"

run part 77
says part "went on"
[ "$(tail -n 1 part.out)" = "no gdb here" ] || fail "skip_later: last line '$(tail -n 1 part.out)'"
run partfail 1
echo "ok: skip_later: went on, exit 77 with the reason last; 1 after a failure"

run wait 1
says wait "FAIL: timed out after 0.3 s waiting for the moon"
! grep -q "poll_for lied" wait.out || fail "poll_for 0.2 false returned 0"
echo "ok: wait_for: names what it waited for"

run port 0
grep -Eq '^port [0-9]+ free$' port.out || { cat port.out; fail "free_port"; }
echo "ok: free_port: $(grep '^port' port.out)"

# SIGTERM to the test itself: it exits 143, its clean-up done.
rm -f "$OUT"/*
sh inner.sh term >"$T/term.out" 2>&1 &
inner=$!
wait_for 10 "the inner test to start" test -s "$OUT/term.ready"
kill -TERM "$inner"
inner_gone() { ! alive "$inner"; }
wait_for 10 "the inner test to end on SIGTERM" inner_gone
wait "$inner"
rc=$?
[ "$rc" = 143 ] || { cat term.out; fail "term: exited $rc, want 143"; }
left
echo "ok: SIGTERM: exit 143, nothing left"

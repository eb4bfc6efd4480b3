#!/bin/sh
# Fail fast with the right exit code (issue 18 item 5): a program that
# cannot run exits 127 (not found) or 126 (cannot run) once, with a line
# naming it, without spawning a single rank and without spending restarts;
# a c10d endpoint that can never work is refused at once with 2.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
cd "$T" || exit 1
RUNAS= BIN=$CGRUN_BIN
hold=
on_fail() { sed 's/^/  cgrun: /' err 2>/dev/null | tail -10; }
# The interpreter records every call: a missing script must never reach it.
cat > py.sh <<'P'
#!/bin/sh
echo "$@" >> "$(dirname "$0")/calls"
exec python3 "$@"
P
chmod +x py.sh
# expect STATUS WORDS... -- ARGS: cgrun ARGS exits STATUS, stderr names WORDS.
expect() {
	want=$1; shift; words=
	while [ "$1" != -- ]; do words="$words $1"; shift; done; shift
	rm -f calls
	PYTHON_EXEC="$T/py.sh" timeout 60 $RUNAS "$BIN" --log-prefix=rank --nproc-per-node=2 \
	    --max-restarts=3 "$@" > out 2> err
	rc=$?
	[ "$rc" = "$want" ] || fail "cgrun $*: exit $rc, want $want"
	for w in $words; do
		grep -q -- "$w" err || fail "cgrun $*: stderr does not name '$w'"
	done
	[ ! -e calls ] || fail "cgrun $*: the interpreter ran $(wc -l < calls) times"
	! grep -q '^\[rank' out err || fail "cgrun $*: a rank ran"
}
expect 127 missing.py "No such file" -- missing.py
expect 127 nodir/x.py -- nodir/x.py
echo 'print(1)' > secret.py; chmod 000 secret.py
# Root reads anything: as root, this case runs cgrun as an unprivileged
# user (setpriv, util-linux), who can enter $T but not read secret.py.
# A copy of cgrun in $T: the checkout may sit where that user cannot go.
RUNAS=
if [ "$(id -u)" = 0 ]; then
	chmod 755 "$T"
	cp "$CGRUN_BIN" "$T/cgrun" && chmod 755 "$T/cgrun" && BIN=$T/cgrun
	RUNAS="setpriv --reuid=65534 --regid=65534 --clear-groups"
fi
expect 126 secret.py -- secret.py
RUNAS= BIN=$CGRUN_BIN
echo '#!/bin/sh' > notexec; chmod 644 notexec
expect 126 notexec "Permission denied" -- --no-python ./notexec
expect 127 nosuchprog "No such file" -- --no-python nosuchprog
rm -f calls
echo 'print(1)' > ok.py
PYTHON_EXEC=/nonexistent/python timeout 60 "$CGRUN_BIN" --nproc-per-node=2 \
    --max-restarts=3 ok.py > out 2> err
rc=$?
[ "$rc" = 127 ] || fail "missing PYTHON_EXEC: exit $rc, want 127"
grep -q "/nonexistent/python" err || fail "missing PYTHON_EXEC not named"
echo "a program that cannot run: 126/127 once, no rank spawned"
# The working case still runs through the recording interpreter.
rm -f calls
PYTHON_EXEC="$T/py.sh" timeout 60 "$CGRUN_BIN" --nproc-per-node=2 ok.py \
    > out 2> err || fail "ok.py: exit $?"
[ "$(wc -l < calls)" = 2 ] || fail "ok.py: the interpreter ran $(wc -l < calls 2>/dev/null) times, want 2"
# Endpoints that can never work: exit 2 at once, the endpoint named.
for ep in 127.0.0.1:0 a:b:c ::1:32100 '[notv6]:29400'; do
	rm -f calls
	timeout 20 "$CGRUN_BIN" --nnodes=2 --rdzv-id=hostile --rdzv-backend=c10d \
	    --rdzv-endpoint="$ep" ok.py > out 2> err
	rc=$?
	[ "$rc" = 2 ] || fail "--rdzv-endpoint=$ep: exit $rc, want 2"
	grep -qF -- "$ep" err || fail "--rdzv-endpoint=$ep: not named"
done
echo "impossible c10d endpoints refused with 2"

# An unreachable endpoint (refused, or a connect that hangs) with
# is_host=false: said at once when retrying, given up within join_timeout
# (or read_timeout, the shorter), the endpoint and the timeout named.
# unreachable EP CONF WANT-MS: exit 75 within WANT-MS + 1.5 s.
unreachable() {
	t0=$(date +%s%N)
	timeout 100 "$CGRUN_BIN" --nnodes=2 --rdzv-id=hostile \
	    --rdzv-backend=c10d --rdzv-endpoint="$1" \
	    --rdzv-conf="is_host=false,$2" ok.py > out 2> err
	rc=$? ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	[ "$rc" = 75 ] || fail "unreachable $1 ($2): exit $rc, want 75"
	[ "$ms" -lt $(($3 + 1500)) ] || fail "unreachable $1 ($2): took $ms ms, want about $3"
	grep -q "cannot reach the rendezvous endpoint $1 within" err ||
	    fail "unreachable $1: the endpoint is not named"
}
free_port > free.port
free=$(cat free.port)
unreachable "127.0.0.1:$free" join_timeout=2 2000
grep -q "retrying, giving up if not connected within 2.0 s (join_timeout)" err ||
	fail "refused endpoint: no line saying it retries and for how long"
unreachable "127.0.0.1:$free" read_timeout=1.5 1500
grep -q "(read_timeout)" err || fail "refused endpoint: read_timeout not named"
python3 "$TOP/tests/hostile/full_backlog.py" > full.port &
hold=$!
wait_for 5 "the backlog server's port" test -s full.port
unreachable "127.0.0.1:$(cat full.port)" join_timeout=2 2000
kill "$hold"; hold=
echo "unreachable endpoints: said at once, given up within the timeout"
echo ok

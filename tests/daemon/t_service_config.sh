#!/bin/sh
# cgrun-rdzvd's configuration: `-n` accepts the shipped example and names
# the file, line and key of each error (exit 1; bad flags exit 2); a file's
# host/port are used and flags win over them.
top=${CGRUN_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
rdzvd=${CGRUN_RDZVD:-$top/build/cgrun-rdzvd}
py=/usr/bin/python3; [ -x $py ] || py=python3
tool="$py $top/tests/daemon/service_tool.py"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cgrun-conf.XXXXXX") || exit 1
pids=
cleanup() { for p in $pids; do kill "$p" 2>/dev/null; done; rm -rf "$tmp"; }
trap cleanup EXIT
fail=0

out=$("$rdzvd" -n -f "$top/rendezvous/rdzvd.conf.example" 2>&1); rc=$?
[ $rc -eq 0 ] && [ "$out" = "cgrun-rdzvd: configuration OK" ] ||
	{ echo "FAIL: example: exit $rc: $out"; fail=1; }

# expect_bad TEXT EXPECTED-MESSAGE: -n must exit 1 with exactly that message.
expect_bad() {
	printf '%b' "$1" >"$tmp/bad.conf"
	out=$("$rdzvd" -n --config="$tmp/bad.conf" 2>&1); rc=$?
	want="cgrun-rdzvd: $tmp/bad.conf: $2"
	if [ $rc -ne 1 ] || [ "$out" != "$want" ]; then
		echo "FAIL: $(printf '%b' "$1" | head -c 60 | tr '\n' '|'): exit $rc"
		echo "  got:  $out"; echo "  want: $want"; fail=1
	else
		echo "ok: $2"
	fi
}
expect_bad 'port = 29400\nmax-conections = 10\n' 'line 2: unknown key "max-conections"'
expect_bad '# comment\n\nport 29400\n' 'line 3: expected "key = value"'
expect_bad 'port = 99999\n' 'line 1: port: 99999 is outside 0..65535'
expect_bad 'max-value-size = lots\n' 'line 1: max-value-size: "lots" is not a size (N, Nk, NM or NG)'
expect_bad 'log-level = chatty\n' 'line 1: log-level: "chatty" is not warn, info or debug'
expect_bad 'http-host = "127.0.0.1\n' 'line 1: unterminated quote'
expect_bad 'host =\n' 'line 1: host: empty value'

# Cross-key errors are found after flags too.
printf 'max-key-size = 1M\n' >"$tmp/x.conf"
out=$("$rdzvd" -n -f "$tmp/x.conf" --max-input=64k 2>&1); rc=$?
[ $rc -eq 1 ] && echo "$out" | grep -q 'max-input (65536) must be at least max-key-size' ||
	{ echo "FAIL: cross-key check: exit $rc: $out"; fail=1; }
out=$("$rdzvd" -n -f "$tmp/missing.conf" 2>&1); rc=$?
[ $rc -eq 1 ] && echo "$out" | grep -q 'missing.conf: No such file' ||
	{ echo "FAIL: missing -f file: exit $rc: $out"; fail=1; }
out=$("$rdzvd" -n --port=abc 2>&1); rc=$?
[ $rc -eq 2 ] && [ "$out" = 'cgrun-rdzvd: --port: "abc" is not a number' ] ||
	{ echo "FAIL: bad flag: exit $rc: $out"; fail=1; }
out=$("$rdzvd" -n --no-such-flag 2>&1); rc=$?
[ $rc -eq 2 ] || { echo "FAIL: unknown flag: exit $rc"; fail=1; }

# -n -v prints the effective configuration: the file, then flags on top.
printf 'host = 127.0.0.2\nport = 1234\nhttp-port = 9100\n' >"$tmp/eff.conf"
"$rdzvd" -n -v -f "$tmp/eff.conf" --port=4321 >"$tmp/eff.out" 2>&1
for l in 'host = 127.0.0.2' 'port = 4321' 'http-port = 9100' 'max-connections = 65536'; do
	grep -qx "$l" "$tmp/eff.out" || { echo "FAIL: effective config lacks \"$l\""; cat "$tmp/eff.out"; fail=1; }
done

# The daemon uses the file: two addresses, an ephemeral port; then a
# --host flag replaces the file's addresses.
printf 'host = 127.0.0.1\nhost = 127.0.0.2\nport = 0\n' >"$tmp/run.conf"
"$rdzvd" -d -f "$tmp/run.conf" >"$tmp/run.out" 2>&1 &
p=$!; pids="$pids $p"
$tool wait "$tmp/run.out" 'listening on 127.0.0.2:' 5 >/dev/null || { echo "FAIL: file hosts not used"; cat "$tmp/run.out"; fail=1; }
grep -q 'listening on 127.0.0.1:' "$tmp/run.out" || { echo "FAIL: first file host not used"; fail=1; }
port=$(sed -n 's/^listening on 127.0.0.2:\([0-9]*\)$/\1/p' "$tmp/run.out")
[ -n "$port" ] && $tool store 127.0.0.2 "$port" || { echo "FAIL: store on 127.0.0.2"; fail=1; }
kill -TERM $p; wait $p; rc=$?
[ $rc -eq 0 ] || { echo "FAIL: exit $rc after SIGTERM"; fail=1; }
"$rdzvd" -d -f "$tmp/run.conf" --host=127.0.0.3 >"$tmp/run2.out" 2>&1 &
p=$!; pids="$pids $p"
$tool wait "$tmp/run2.out" 'listening on' 5 >/dev/null
grep -q 'listening on 127.0.0.3:' "$tmp/run2.out" && ! grep -q '127.0.0.[12]' "$tmp/run2.out" ||
	{ echo "FAIL: --host did not replace the file's hosts"; cat "$tmp/run2.out"; fail=1; }
kill -TERM $p; wait $p
# Standard error as "the journal" (JOURNAL_STREAM names it): levels go
# along.  Where journald's socket exists the lines go to it instead.
if [ ! -S /run/systemd/journal/socket ]; then
	: >"$tmp/journal"
	JOURNAL_STREAM=$(stat -c '%d:%i' "$tmp/journal") "$rdzvd" -d -v \
		--host=127.0.0.1 --port=0 >"$tmp/j.out" 2>>"$tmp/journal" &
	p=$!; pids="$pids $p"
	$tool wait "$tmp/journal" '^<6>listening host=127.0.0.1 port=[0-9]+$' 5 ||
		{ echo "FAIL: no <6> info line:"; cat "$tmp/journal"; fail=1; }
	kill -TERM $p; wait $p
	grep -q '^<6>signal=15: exiting' "$tmp/journal" || { echo "FAIL: no <6> exit line"; fail=1; }
	: >"$tmp/journal2"
	JOURNAL_STREAM=$(stat -c '%d:%i' "$tmp/journal2") "$rdzvd" -d \
		--host=256.0.0.1 --port=0 >/dev/null 2>>"$tmp/journal2"
	grep -q '^<4>listen: ' "$tmp/journal2" || { echo "FAIL: no <4> fatal line:"; cat "$tmp/journal2"; fail=1; }
	echo "ok: journal priorities on standard error: $(head -n 1 "$tmp/journal")"
fi
[ $fail -eq 0 ] && echo "ok: configuration file, -n, flags over file"
exit $fail

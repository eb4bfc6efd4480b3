#!/bin/sh
# cgrun-rdzvd's configuration: `-n` accepts the shipped example and names
# the file, line and key of each error (exit 1; bad flags exit 2); a file's
# host/port are used and flags win over them.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
top=$TOP
rdzvd=$RDZVD
py=/usr/bin/python3; [ -x $py ] || py=python3
tool="$py $top/tests/daemon/service_tool.py"
tmp=$T

out=$("$rdzvd" -n -f "$top/rendezvous/rdzvd.conf.example" 2>&1); rc=$?
[ $rc -eq 0 ] && [ "$out" = "cgrun-rdzvd: configuration OK" ] ||
	fail_later "example: exit $rc: $out"

# expect_bad TEXT EXPECTED-MESSAGE: -n must exit 1 with exactly that message.
expect_bad() {
	printf '%b' "$1" >"$tmp/bad.conf"
	out=$("$rdzvd" -n --config="$tmp/bad.conf" 2>&1); rc=$?
	want="cgrun-rdzvd: $tmp/bad.conf: $2"
	if [ $rc -ne 1 ] || [ "$out" != "$want" ]; then
		fail_later "$(printf '%b' "$1" | head -c 60 | tr '\n' '|'): exit $rc"
		echo "  got:  $out"; echo "  want: $want"
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
	fail_later "cross-key check: exit $rc: $out"
out=$("$rdzvd" -n -f "$tmp/missing.conf" 2>&1); rc=$?
[ $rc -eq 1 ] && echo "$out" | grep -q 'missing.conf: No such file' ||
	fail_later "missing -f file: exit $rc: $out"
out=$("$rdzvd" -n --port=abc 2>&1); rc=$?
[ $rc -eq 2 ] && [ "$out" = 'cgrun-rdzvd: --port: "abc" is not a number' ] ||
	fail_later "bad flag: exit $rc: $out"
out=$("$rdzvd" -n --no-such-flag 2>&1); rc=$?
[ $rc -eq 2 ] || fail_later "unknown flag: exit $rc"

# -n -v prints the effective configuration: the file, then flags on top.
printf 'host = 127.0.0.2\nport = 1234\nhttp-port = 9100\n' >"$tmp/eff.conf"
"$rdzvd" -n -v -f "$tmp/eff.conf" --port=4321 >"$tmp/eff.out" 2>&1
for l in 'host = 127.0.0.2' 'port = 4321' 'http-port = 9100' 'max-connections = 65536'; do
	grep -qx "$l" "$tmp/eff.out" || { fail_later "effective config lacks \"$l\""; cat "$tmp/eff.out"; }
done

# The daemon uses the file: two addresses, an ephemeral port; then a
# --host flag replaces the file's addresses.
printf 'host = 127.0.0.1\nhost = 127.0.0.2\nport = 0\n' >"$tmp/run.conf"
"$rdzvd" -d -f "$tmp/run.conf" >"$tmp/run.out" 2>&1 &
p=$!; track $p
$tool wait "$tmp/run.out" 'listening on 127.0.0.2:' 5 >/dev/null || { fail_later "file hosts not used"; cat "$tmp/run.out"; }
grep -q 'listening on 127.0.0.1:' "$tmp/run.out" || fail_later "first file host not used"
port=$(sed -n 's/^listening on 127.0.0.2:\([0-9]*\)$/\1/p' "$tmp/run.out")
[ -n "$port" ] && $tool store 127.0.0.2 "$port" || fail_later "store on 127.0.0.2"
kill -TERM $p; wait $p; rc=$?
[ $rc -eq 0 ] || fail_later "exit $rc after SIGTERM"
"$rdzvd" -d -f "$tmp/run.conf" --host=127.0.0.3 >"$tmp/run2.out" 2>&1 &
p=$!; track $p
$tool wait "$tmp/run2.out" 'listening on' 5 >/dev/null
grep -q 'listening on 127.0.0.3:' "$tmp/run2.out" && ! grep -q '127.0.0.[12]' "$tmp/run2.out" ||
	{ fail_later "--host did not replace the file's hosts"; cat "$tmp/run2.out"; }
kill -TERM $p; wait $p
# Standard error as "the journal" (JOURNAL_STREAM names it): levels go
# along.  Where journald's socket exists the lines go to it instead.
if [ ! -S /run/systemd/journal/socket ]; then
	: >"$tmp/journal"
	JOURNAL_STREAM=$(stat -c '%d:%i' "$tmp/journal") "$rdzvd" -d -v \
		--host=127.0.0.1 --port=0 >"$tmp/j.out" 2>>"$tmp/journal" &
	p=$!; track $p
	$tool wait "$tmp/journal" '^<6>listening host=127.0.0.1 port=[0-9]+$' 5 ||
		{ fail_later "no <6> info line:"; cat "$tmp/journal"; }
	kill -TERM $p; wait $p
	grep -q '^<6>signal=15: exiting' "$tmp/journal" || fail_later "no <6> exit line"
	: >"$tmp/journal2"
	JOURNAL_STREAM=$(stat -c '%d:%i' "$tmp/journal2") "$rdzvd" -d \
		--host=256.0.0.1 --port=0 >/dev/null 2>>"$tmp/journal2"
	grep -q '^<4>listen: ' "$tmp/journal2" || { fail_later "no <4> fatal line:"; cat "$tmp/journal2"; }
	echo "ok: journal priorities on standard error: $(head -n 1 "$tmp/journal")"
fi
no_failures && echo "ok: configuration file, -n, flags over file"

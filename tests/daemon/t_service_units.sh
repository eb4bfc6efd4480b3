#!/bin/sh
# The systemd units of cgrun-rdzvd: `systemd-analyze verify` finds nothing
# to say about them, and `systemd-analyze security --offline=true` rates
# the service's exposure at 2.0 or lower.
top=${CGRUN_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
units=$top/rendezvous/systemd
command -v systemd-analyze >/dev/null 2>&1 || {
	echo "systemd-analyze not installed (Debian package systemd)"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cgrun-units.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0

# verify checks that ExecStart= is executable: point it at a binary that
# exists here, keep everything else as installed.
bin=${CGRUN_RDZVD:-/bin/true}
[ -x "$bin" ] || bin=/bin/true
sed "s|^ExecStart=/usr/sbin/cgrun-rdzvd|ExecStart=$bin|" \
	"$units/cgrun-rdzvd.service" >"$tmp/cgrun-rdzvd.service"
cp "$units/cgrun-rdzvd.socket" "$tmp/"
grep -q "^ExecStart=$bin " "$tmp/cgrun-rdzvd.service" || {
	echo "FAIL: ExecStart=/usr/sbin/cgrun-rdzvd not found in the unit"; fail=1; }
(cd "$tmp" && systemd-analyze verify --man=no cgrun-rdzvd.service \
	cgrun-rdzvd.socket) >"$tmp/verify.out" 2>&1
rc=$?
cat "$tmp/verify.out"
if [ $rc -ne 0 ] || [ -s "$tmp/verify.out" ]; then
	echo "FAIL: systemd-analyze verify (exit $rc) is not silent"; fail=1
else
	echo "ok: systemd-analyze verify is silent on both units"
fi

# Exposure: the last line reads "Overall exposure level for X: 1.1 OK".
(cd "$tmp" && systemd-analyze security --offline=true --no-pager \
	"$units/cgrun-rdzvd.service") >"$tmp/sec.out" 2>&1
grep -v '^✓' "$tmp/sec.out"
level=$(sed -n 's/.*Overall exposure level for cgrun-rdzvd.service: \([0-9.]*\).*/\1/p' "$tmp/sec.out")
if [ -z "$level" ]; then
	echo "FAIL: no exposure level reported"; fail=1
elif awk -v l="$level" 'BEGIN { exit !(l <= 2.0) }'; then
	echo "ok: exposure level $level (target 2.0 or lower)"
else
	echo "FAIL: exposure level $level is above 2.0"; fail=1
fi

# What the daemon relies on, which a tidy-up could silently drop.
for kv in Type=notify DynamicUser=yes NoNewPrivileges=yes \
    ProtectSystem=strict 'RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX'; do
	grep -qx "$kv" "$units/cgrun-rdzvd.service" ||
		{ echo "FAIL: cgrun-rdzvd.service lacks $kv"; fail=1; }
done
grep -q '^ListenStream=' "$units/cgrun-rdzvd.socket" ||
	{ echo "FAIL: cgrun-rdzvd.socket has no ListenStream="; fail=1; }
exit $fail

#!/bin/sh
# The systemd units of cgrun-rdzvd: `systemd-analyze verify` finds nothing
# to say about them, and `systemd-analyze security --offline=true` rates
# the service's exposure at 2.0 or lower.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
top=$TOP
units=$top/rendezvous/systemd
command -v systemd-analyze >/dev/null 2>&1 || {
	skip "systemd-analyze not installed (Debian package systemd)"; }
tmp=$T

# verify checks that ExecStart= is executable: point it at a binary that
# exists here, keep everything else as installed.
bin=${CGRUN_RDZVD:-/bin/true}
[ -x "$bin" ] || bin=/bin/true
sed "s|^ExecStart=/usr/sbin/cgrun-rdzvd|ExecStart=$bin|" \
	"$units/cgrun-rdzvd.service" >"$tmp/cgrun-rdzvd.service"
cp "$units/cgrun-rdzvd.socket" "$tmp/"
grep -q "^ExecStart=$bin " "$tmp/cgrun-rdzvd.service" || {
	fail_later "ExecStart=/usr/sbin/cgrun-rdzvd not found in the unit"; }
(cd "$tmp" && systemd-analyze verify --man=no cgrun-rdzvd.service \
	cgrun-rdzvd.socket) >"$tmp/verify.out" 2>&1
rc=$?
cat "$tmp/verify.out"
if [ $rc -ne 0 ] || [ -s "$tmp/verify.out" ]; then
	fail_later "systemd-analyze verify (exit $rc) is not silent"
else
	echo "ok: systemd-analyze verify is silent on both units"
fi

# Exposure: the last line reads "Overall exposure level for X: 1.1 OK".
(cd "$tmp" && systemd-analyze security --offline=true --no-pager \
	"$units/cgrun-rdzvd.service") >"$tmp/sec.out" 2>&1
grep -v '^✓' "$tmp/sec.out"
level=$(sed -n 's/.*Overall exposure level for cgrun-rdzvd.service: \([0-9.]*\).*/\1/p' "$tmp/sec.out")
if [ -z "$level" ]; then
	fail_later "no exposure level reported"
elif awk -v l="$level" 'BEGIN { exit !(l <= 2.0) }'; then
	echo "ok: exposure level $level (target 2.0 or lower)"
else
	fail_later "exposure level $level is above 2.0"
fi

# What the daemon relies on, which a tidy-up could silently drop.
for kv in Type=notify DynamicUser=yes NoNewPrivileges=yes \
    ProtectSystem=strict 'RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX'; do
	grep -qx "$kv" "$units/cgrun-rdzvd.service" ||
		fail_later "cgrun-rdzvd.service lacks $kv"
done
grep -q '^ListenStream=' "$units/cgrun-rdzvd.socket" ||
	fail_later "cgrun-rdzvd.socket has no ListenStream="

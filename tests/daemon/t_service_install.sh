#!/bin/sh
# A staged `make install DESTDIR=...` holds the binaries, libraries,
# headers, cgrun.pc, man pages, systemd units (with paths following the
# prefix) and the configuration file; a program built only against the
# staged headers and cgrun.pc links and runs; the staged daemon accepts
# the staged configuration.
top=${CGRUN_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${CGRUN_BUILD:-$top/build}
command -v pkg-config >/dev/null 2>&1 || { echo "pkg-config not installed"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cgrun-install.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
root=$tmp/root
fail=0

make -s -C "$top" BUILD="$build" DESTDIR="$root" install >"$tmp/install.out" 2>&1 || {
	cat "$tmp/install.out"; echo "FAIL: make install"; exit 1; }
p=$root/usr/local
for f in bin/cgrun sbin/cgrun-rdzvd lib/libcgrun.so.1 lib/libcgrun.so \
    lib/libcgrun.a include/cgrun/cgrun.h lib/pkgconfig/cgrun.pc \
    lib/systemd/system/cgrun-rdzvd.service \
    lib/systemd/system/cgrun-rdzvd.socket; do
	[ -e "$p/$f" ] || { echo "FAIL: $p/$f not installed"; fail=1; }
done
# Every page of man/ (t_service_man checks that the three exist).
for m in "$top"/man/*.[1-9]; do
	[ -f "$m" ] || continue
	f=share/man/man${m##*.}/$(basename "$m")
	[ -f "$p/$f" ] || { echo "FAIL: $p/$f not installed"; fail=1; }
done
# Every public header.
for h in "$top"/include/cgrun/*.h; do
	[ -f "$p/include/cgrun/$(basename "$h")" ] || { echo "FAIL: $(basename "$h") not installed"; fail=1; }
done
[ -f "$root/etc/cgrun/rdzvd.conf" ] || { echo "FAIL: /etc/cgrun/rdzvd.conf not installed"; fail=1; }
# bash completion where bash-completion looks under the prefix (its .pc's
# completionsdir for share/), the same file for both programs; the
# event log's schema.
for f in share/bash-completion/completions/cgrun \
    share/bash-completion/completions/cgrun-rdzvd share/cgrun/event-log.schema.json; do
	[ -f "$p/$f" ] || { echo "FAIL: $p/$f not installed"; fail=1; }
done
cmp -s "$top/completion/cgrun.bash" "$p/share/bash-completion/completions/cgrun-rdzvd" ||
	{ echo "FAIL: the installed cgrun-rdzvd completion is not completion/cgrun.bash"; fail=1; }
[ -L "$p/lib/libcgrun.so" ] || { echo "FAIL: libcgrun.so is not a symlink"; fail=1; }
for x in bin/cgrun sbin/cgrun-rdzvd; do
	[ -x "$p/$x" ] || { echo "FAIL: $x not executable"; fail=1; }
done
# Only public headers: nothing internal (wire.h, store server, log.h).
for h in "$p"/include/cgrun/*.h; do
	case $(basename "$h") in wire.h|log.h|kv.h|rdzv*.h|config.h)
		echo "FAIL: internal header $(basename "$h") installed"; fail=1 ;;
	esac
done
# The units name the prefix's binary and the configuration directory.
grep -qx 'ExecStart=/usr/local/sbin/cgrun-rdzvd --config=/etc/cgrun/rdzvd.conf' \
	"$p/lib/systemd/system/cgrun-rdzvd.service" ||
	{ echo "FAIL: installed unit's ExecStart:"; grep ExecStart "$p/lib/systemd/system/cgrun-rdzvd.service"; fail=1; }
# A second install keeps an administrator's configuration.
echo "port = 29999" >"$root/etc/cgrun/rdzvd.conf"
make -s -C "$top" BUILD="$build" DESTDIR="$root" install >/dev/null 2>&1
grep -qx 'port = 29999' "$root/etc/cgrun/rdzvd.conf" ||
	{ echo "FAIL: make install overwrote /etc/cgrun/rdzvd.conf"; fail=1; }
make -s -C "$top" BUILD="$build" DESTDIR="$root" install >/dev/null 2>&1
cp "$top/rendezvous/rdzvd.conf.example" "$root/etc/cgrun/rdzvd.conf"

# The staged daemon checks the staged configuration.
out=$("$p/sbin/cgrun-rdzvd" -n --config="$root/etc/cgrun/rdzvd.conf" 2>&1)
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: cgrun-rdzvd -n on the installed rdzvd.conf exit $rc: $out"; fail=1; }

# A consumer that sees only the staged tree.
cat >"$tmp/consumer.c" <<'C'
#include <stdio.h>
#include <string.h>
#include <cgrun/cgrun.h>
int
main(void)
{
	printf("libcgrun %s\n", cgrun_version());
	return strcmp(cgrun_version(), "") == 0;
}
C
export PKG_CONFIG_SYSROOT_DIR="$root" PKG_CONFIG_LIBDIR="$p/lib/pkgconfig" PKG_CONFIG_PATH=
flags=$(pkg-config --cflags --libs cgrun) ||
	{ echo "FAIL: pkg-config cgrun in the staged tree"; exit 1; }
echo "pkg-config: $flags"
case $flags in *"$root"/usr/local/include*) ;; *)
	echo "FAIL: cflags do not point into the staged tree"; fail=1 ;; esac
# shellcheck disable=SC2086
cc -o "$tmp/consumer" "$tmp/consumer.c" $flags 2>&1 ||
	{ echo "FAIL: consumer does not build"; exit 1; }
out=$(LD_LIBRARY_PATH="$p/lib" "$tmp/consumer") ||
	{ echo "FAIL: consumer does not run: $out"; exit 1; }
echo "consumer: $out"
LD_LIBRARY_PATH="$p/lib" ldd "$tmp/consumer" | grep -q "libcgrun.so.1 => $p/lib/libcgrun.so.1" ||
	{ echo "FAIL: consumer did not use the staged libcgrun.so.1"; fail=1; }
[ $fail -eq 0 ] && echo "ok: staged install complete, consumer built and ran"
exit $fail

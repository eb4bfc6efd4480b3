#!/bin/sh
# A staged `make install DESTDIR=...` holds the binaries, libraries,
# headers, cgrun.pc, man pages, systemd units (with paths following the
# prefix) and the configuration file; a program built only against the
# staged headers and cgrun.pc links and runs; the staged daemon accepts
# the staged configuration.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
top=$TOP
build=$BUILD_DIR
command -v pkg-config >/dev/null 2>&1 || skip "pkg-config not installed"
tmp=$T
root=$tmp/root

make -s -C "$top" BUILD="$build" DESTDIR="$root" install >"$tmp/install.out" 2>&1 || {
	cat "$tmp/install.out"; fail "make install"; }
p=$root/usr/local
for f in bin/cgrun sbin/cgrun-rdzvd lib/libcgrun.so.1 lib/libcgrun.so \
    lib/libcgrun.a include/cgrun/cgrun.h lib/pkgconfig/cgrun.pc \
    lib/systemd/system/cgrun-rdzvd.service \
    lib/systemd/system/cgrun-rdzvd.socket; do
	[ -e "$p/$f" ] || fail_later "$p/$f not installed"
done
# Every page of man/ (t_service_man checks that the three exist).
for m in "$top"/man/*.[1-9]; do
	[ -f "$m" ] || continue
	f=share/man/man${m##*.}/$(basename "$m")
	[ -f "$p/$f" ] || fail_later "$p/$f not installed"
done
# Every public header.
for h in "$top"/include/cgrun/*.h; do
	[ -f "$p/include/cgrun/$(basename "$h")" ] || fail_later "$(basename "$h") not installed"
done
[ -f "$root/etc/cgrun/rdzvd.conf" ] || fail_later "/etc/cgrun/rdzvd.conf not installed"
# bash completion where bash-completion looks under the prefix (its .pc's
# completionsdir for share/), the same file for both programs; the
# event log's schema.
for f in share/bash-completion/completions/cgrun \
    share/bash-completion/completions/cgrun-rdzvd share/cgrun/event-log.schema.json; do
	[ -f "$p/$f" ] || fail_later "$p/$f not installed"
done
cmp -s "$top/completion/cgrun.bash" "$p/share/bash-completion/completions/cgrun-rdzvd" ||
	fail_later "the installed cgrun-rdzvd completion is not completion/cgrun.bash"
[ -L "$p/lib/libcgrun.so" ] || fail_later "libcgrun.so is not a symlink"
for x in bin/cgrun sbin/cgrun-rdzvd; do
	[ -x "$p/$x" ] || fail_later "$x not executable"
done
# Only public headers: nothing internal (wire.h, store server, log.h).
for h in "$p"/include/cgrun/*.h; do
	case $(basename "$h") in wire.h|log.h|kv.h|rdzv*.h|config.h)
		fail_later "internal header $(basename "$h") installed" ;;
	esac
done
# The units name the prefix's binary and the configuration directory.
grep -qx 'ExecStart=/usr/local/sbin/cgrun-rdzvd --config=/etc/cgrun/rdzvd.conf' \
	"$p/lib/systemd/system/cgrun-rdzvd.service" ||
	{ fail_later "installed unit's ExecStart:"; grep ExecStart "$p/lib/systemd/system/cgrun-rdzvd.service"; }
# A second install keeps an administrator's configuration.
echo "port = 29999" >"$root/etc/cgrun/rdzvd.conf"
make -s -C "$top" BUILD="$build" DESTDIR="$root" install >/dev/null 2>&1
grep -qx 'port = 29999' "$root/etc/cgrun/rdzvd.conf" ||
	fail_later "make install overwrote /etc/cgrun/rdzvd.conf"
make -s -C "$top" BUILD="$build" DESTDIR="$root" install >/dev/null 2>&1
cp "$top/rendezvous/rdzvd.conf.example" "$root/etc/cgrun/rdzvd.conf"

# The staged daemon checks the staged configuration.
out=$("$p/sbin/cgrun-rdzvd" -n --config="$root/etc/cgrun/rdzvd.conf" 2>&1)
rc=$?
[ $rc -eq 0 ] || fail_later "cgrun-rdzvd -n on the installed rdzvd.conf exit $rc: $out"

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
	fail "pkg-config cgrun in the staged tree"
echo "pkg-config: $flags"
case $flags in *"$root"/usr/local/include*) ;; *)
	fail_later "cflags do not point into the staged tree" ;; esac
# shellcheck disable=SC2086
cc -o "$tmp/consumer" "$tmp/consumer.c" $flags 2>&1 ||
	fail "consumer does not build"
out=$(LD_LIBRARY_PATH="$p/lib" "$tmp/consumer") ||
	fail "consumer does not run: $out"
echo "consumer: $out"
LD_LIBRARY_PATH="$p/lib" ldd "$tmp/consumer" | grep -q "libcgrun.so.1 => $p/lib/libcgrun.so.1" ||
	fail_later "consumer did not use the staged libcgrun.so.1"
no_failures && echo "ok: staged install complete, consumer built and ran"

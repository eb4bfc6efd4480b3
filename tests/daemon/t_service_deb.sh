#!/bin/sh
# `dpkg-buildpackage -us -uc -b` builds the four packages (cgrun,
# cgrun-rdzvd, libcgrun1, libcgrun-dev) from a copy of the source tree;
# they install into a fresh root with dpkg --root (maintainer scripts run
# chrooted there), put their files where the man pages say, run, and
# remove and purge cleanly.  Debian's packaging tools are needed; without
# root the fresh-root part falls back to dpkg-deb -x.
top=${CGRUN_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
for t in dpkg-buildpackage dh dpkg-checkbuilddeps; do
	command -v $t >/dev/null 2>&1 || {
		echo "$t not installed (Debian packages dpkg-dev, debhelper)"; exit 77; }
done
(cd "$top" && dpkg-checkbuilddeps) 2>&1 || {
	echo "build dependencies of debian/control are missing"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cgrun-deb.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
src=$tmp/src
mkdir -p "$src"

# The tree as it is (committed or not), without build directories.
if git -C "$top" rev-parse --git-dir >/dev/null 2>&1; then
	(cd "$top" && git ls-files -z --cached --others --exclude-standard) |
		grep -zv '^build' | (cd "$top" && tar --null -T - -cf -) |
		tar -C "$src" -xf -
else
	(cd "$top" && tar --exclude='./build*' --exclude=./.git -cf - .) |
		tar -C "$src" -xf -
fi

start=$(date +%s)
(cd "$src" && DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)" \
	dpkg-buildpackage -us -uc -b) >"$tmp/build.log" 2>&1
rc=$?
echo "dpkg-buildpackage: exit $rc in $(( $(date +%s) - start )) s"
[ $rc -eq 0 ] || { tail -n 40 "$tmp/build.log"; echo "FAIL: dpkg-buildpackage"; exit 1; }
grep -E '^dpkg-deb: building package' "$tmp/build.log"
debs=
for p in cgrun cgrun-rdzvd libcgrun1 libcgrun-dev; do
	d=$(ls "$tmp"/${p}_*.deb 2>/dev/null | head -n 1)
	[ -n "$d" ] || { echo "FAIL: no $p package"; fail=1; continue; }
	debs="$debs $d"
done
[ $fail -eq 0 ] || exit 1

# What each package must hold.
check_has() {	# package path...
	pkg=$1; shift
	list=$(dpkg-deb -c "$tmp"/${pkg}_*.deb | awk '{print $6}' | sed 's|^\.||')
	for f in "$@"; do
		echo "$list" | grep -qx "$f" || { echo "FAIL: $pkg lacks $f"; fail=1; }
	done
}
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
check_has cgrun /usr/bin/cgrun /usr/share/man/man1/cgrun.1.gz \
	/usr/share/bash-completion/completions/cgrun \
	/usr/share/cgrun/event-log.schema.json
check_has cgrun-rdzvd /usr/sbin/cgrun-rdzvd /etc/cgrun/rdzvd.conf \
	/usr/share/bash-completion/completions/cgrun-rdzvd \
	/lib/systemd/system/cgrun-rdzvd.service \
	/lib/systemd/system/cgrun-rdzvd.socket /usr/share/man/man8/cgrun-rdzvd.8.gz
check_has libcgrun1 /usr/lib/$ma/libcgrun.so.1
check_has libcgrun-dev /usr/include/cgrun/cgrun.h /usr/lib/$ma/libcgrun.so \
	/usr/lib/$ma/libcgrun.a /usr/lib/$ma/pkgconfig/cgrun.pc \
	/usr/share/man/man3/libcgrun.3.gz
dpkg-deb -f "$tmp"/cgrun-rdzvd_*.deb Depends
mkdir -p "$tmp/ctl"
dpkg-deb -e "$tmp"/cgrun-rdzvd_*.deb "$tmp/ctl"
grep -qx /etc/cgrun/rdzvd.conf "$tmp/ctl/conffiles" ||
	{ echo "FAIL: /etc/cgrun/rdzvd.conf is not a conffile"; fail=1; }
for u in cgrun-rdzvd.service cgrun-rdzvd.socket; do
	grep -q "deb-systemd-helper enable '$u'" "$tmp/ctl/postinst" ||
		{ echo "FAIL: postinst does not enable $u"; fail=1; }
done
grep -q "deb-systemd-invoke \$_dh_action 'cgrun-rdzvd.service' 'cgrun-rdzvd.socket'" \
	"$tmp/ctl/postinst" || { echo "FAIL: postinst does not start the units"; fail=1; }
[ "$(dpkg-deb -f "$tmp"/libcgrun1_*.deb Multi-Arch)" = same ] ||
	{ echo "FAIL: libcgrun1 is not Multi-Arch: same"; fail=1; }

# A fresh root: an empty dpkg database and a shell for the chrooted
# maintainer scripts (no systemd inside: they enable nothing there).
root=$tmp/root
if [ "$(id -u)" = 0 ] && mkdir -p "$root/bin" "$root/dev" "$root/var/lib/dpkg/info" \
    "$root/var/lib/dpkg/updates" "$root/var/lib/dpkg/triggers" &&
    cp -L /bin/sh "$root/bin/sh"; then
	: >"$root/var/lib/dpkg/status"; : >"$root/var/lib/dpkg/available"
	for l in $(ldd /bin/sh | grep -o '/[^ ]*'); do
		mkdir -p "$root$(dirname "$l")" && cp -L "$l" "$root$l"
	done
	mknod "$root/dev/null" c 1 3 2>/dev/null || : >"$root/dev/null"
	# shellcheck disable=SC2086
	dpkg --root="$root" --force-depends -i $debs >"$tmp/dpkg.log" 2>&1 ||
		{ cat "$tmp/dpkg.log"; echo "FAIL: dpkg --root -i"; fail=1; }
	n=$(dpkg --root="$root" -l 'cgrun*' 'libcgrun*' | grep -c '^ii ')
	[ "$n" -eq 4 ] || { dpkg --root="$root" -l; echo "FAIL: $n of 4 packages installed"; fail=1; }
	echo "ok: 4 packages installed into a fresh root with dpkg --root"
	fresh=1
else
	echo "note: not root: unpacking with dpkg-deb -x instead of dpkg --root"
	for d in $debs; do dpkg-deb -x "$d" "$root"; done
	fresh=0
fi

# The binaries and the library run from there.
lib=$root/usr/lib/$ma
LD_LIBRARY_PATH=$lib "$root/usr/sbin/cgrun-rdzvd" --version || { echo "FAIL: cgrun-rdzvd --version"; fail=1; }
LD_LIBRARY_PATH=$lib "$root/usr/bin/cgrun" --version || { echo "FAIL: cgrun --version"; fail=1; }
LD_LIBRARY_PATH=$lib "$root/usr/sbin/cgrun-rdzvd" -n --config="$root/etc/cgrun/rdzvd.conf" ||
	{ echo "FAIL: the packaged rdzvd.conf does not pass -n"; fail=1; }
printf '#include <cgrun/cgrun.h>\n#include <stdio.h>\nint main(void){puts(cgrun_version());return 0;}\n' >"$tmp/c.c"
flags=$(PKG_CONFIG_SYSROOT_DIR=$root PKG_CONFIG_LIBDIR=$lib/pkgconfig pkg-config --cflags --libs cgrun)
# shellcheck disable=SC2086
cc -o "$tmp/c" "$tmp/c.c" $flags && v=$(LD_LIBRARY_PATH=$lib "$tmp/c") ||
	{ echo "FAIL: consumer of libcgrun-dev"; fail=1; }
echo "consumer built against libcgrun-dev prints: $v"

# Every path the man pages' FILES sections name (under /etc, /usr, /lib)
# is in a package.
for m in "$top"/man/*.[1-9]; do
	[ -f "$m" ] || continue
	for f in $(sed -n '/^\.Sh FILES/,/^\.Sh /p' "$m" | sed -n 's/^\.It Pa \(\/[^ ]*\).*/\1/p'); do
		case $f in /etc/*|/usr/*|/lib/*) ;; *) continue ;; esac
		case $f in *cgrun.conf) continue ;; esac	# site file the admin writes
		if [ -e "$root$f" ]; then echo "ok: $(basename "$m") FILES $f"
		else echo "FAIL: $(basename "$m") names $f, no package has it"; fail=1; fi
	done
done

# Remove keeps the configuration; purge removes it; nothing is left.
if [ $fresh = 1 ]; then
	dpkg --root="$root" -r cgrun cgrun-rdzvd libcgrun-dev libcgrun1 >>"$tmp/dpkg.log" 2>&1 ||
		{ cat "$tmp/dpkg.log"; echo "FAIL: dpkg -r"; fail=1; }
	[ -f "$root/etc/cgrun/rdzvd.conf" ] || { echo "FAIL: remove deleted the conffile"; fail=1; }
	[ -e "$root/usr/sbin/cgrun-rdzvd" ] && { echo "FAIL: remove left the daemon"; fail=1; }
	dpkg --root="$root" -P cgrun cgrun-rdzvd libcgrun-dev libcgrun1 >>"$tmp/dpkg.log" 2>&1 ||
		{ cat "$tmp/dpkg.log"; echo "FAIL: dpkg -P"; fail=1; }
	left=$(cd "$root" && find etc usr lib/systemd -type f 2>/dev/null)
	[ -z "$left" ] || { echo "FAIL: left after purge: $left"; fail=1; }
	[ $fail -eq 0 ] && echo "ok: removed and purged, nothing left"
fi
exit $fail

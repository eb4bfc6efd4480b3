#!/bin/sh
# `dpkg-buildpackage -us -uc -b` builds the four packages (cgrun,
# cgrun-rdzvd, libcgrun1, libcgrun-dev) from a copy of the source tree;
# they install into a fresh root with dpkg --root (maintainer scripts run
# chrooted there), put their files where the man pages say, run, and
# remove and purge cleanly.  Debian's packaging tools are needed; without
# root the packages are only unpacked (dpkg-deb -x) and the test, having
# left a part out, ends as a skip.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
top=$TOP
for t in dpkg-buildpackage dh dpkg-checkbuilddeps; do
	command -v $t >/dev/null 2>&1 || {
		skip "$t not installed (Debian packages dpkg-dev, debhelper)"; }
done
(cd "$top" && dpkg-checkbuilddeps) 2>&1 || {
	skip "build dependencies of debian/control are missing"; }
tmp=$T
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
[ $rc -eq 0 ] || { tail -n 40 "$tmp/build.log"; fail "dpkg-buildpackage"; }
grep -E '^dpkg-deb: building package' "$tmp/build.log"
debs=
for p in cgrun cgrun-rdzvd libcgrun1 libcgrun-dev; do
	d=$(ls "$tmp"/${p}_*.deb 2>/dev/null | head -n 1)
	[ -n "$d" ] || { fail_later "no $p package"; continue; }
	debs="$debs $d"
done
no_failures || exit 1

# What each package must hold.
check_has() {	# package path...
	pkg=$1; shift
	list=$(dpkg-deb -c "$tmp"/${pkg}_*.deb | awk '{print $6}' | sed 's|^\.||')
	for f in "$@"; do
		echo "$list" | grep -qx "$f" || fail_later "$pkg lacks $f"
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
	fail_later "/etc/cgrun/rdzvd.conf is not a conffile"
for u in cgrun-rdzvd.service cgrun-rdzvd.socket; do
	grep -q "deb-systemd-helper enable '$u'" "$tmp/ctl/postinst" ||
		fail_later "postinst does not enable $u"
done
grep -q "deb-systemd-invoke \$_dh_action 'cgrun-rdzvd.service' 'cgrun-rdzvd.socket'" \
	"$tmp/ctl/postinst" || fail_later "postinst does not start the units"
[ "$(dpkg-deb -f "$tmp"/libcgrun1_*.deb Multi-Arch)" = same ] ||
	fail_later "libcgrun1 is not Multi-Arch: same"

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
		{ cat "$tmp/dpkg.log"; fail_later "dpkg --root -i"; }
	n=$(dpkg --root="$root" -l 'cgrun*' 'libcgrun*' | grep -c '^ii ')
	[ "$n" -eq 4 ] || { dpkg --root="$root" -l; fail_later "$n of 4 packages installed"; }
	echo "ok: 4 packages installed into a fresh root with dpkg --root"
	fresh=1
else
	skip_later "not root: the packages unpacked with dpkg-deb -x, not installed with dpkg --root (maintainer scripts not run)"
	for d in $debs; do dpkg-deb -x "$d" "$root"; done
	fresh=0
fi

# The binaries and the library run from there.
lib=$root/usr/lib/$ma
LD_LIBRARY_PATH=$lib "$root/usr/sbin/cgrun-rdzvd" --version || fail_later "cgrun-rdzvd --version"
LD_LIBRARY_PATH=$lib "$root/usr/bin/cgrun" --version || fail_later "cgrun --version"
LD_LIBRARY_PATH=$lib "$root/usr/sbin/cgrun-rdzvd" -n --config="$root/etc/cgrun/rdzvd.conf" ||
	fail_later "the packaged rdzvd.conf does not pass -n"
printf '#include <cgrun/cgrun.h>\n#include <stdio.h>\nint main(void){puts(cgrun_version());return 0;}\n' >"$tmp/c.c"
flags=$(PKG_CONFIG_SYSROOT_DIR=$root PKG_CONFIG_LIBDIR=$lib/pkgconfig pkg-config --cflags --libs cgrun)
# shellcheck disable=SC2086
cc -o "$tmp/c" "$tmp/c.c" $flags && v=$(LD_LIBRARY_PATH=$lib "$tmp/c") ||
	fail_later "consumer of libcgrun-dev"
echo "consumer built against libcgrun-dev prints: $v"

# Every path the man pages' FILES sections name (under /etc, /usr, /lib)
# is in a package.
for m in "$top"/man/*.[1-9]; do
	[ -f "$m" ] || continue
	for f in $(sed -n '/^\.Sh FILES/,/^\.Sh /p' "$m" | sed -n 's/^\.It Pa \(\/[^ ]*\).*/\1/p'); do
		case $f in /etc/*|/usr/*|/lib/*) ;; *) continue ;; esac
		case $f in *cgrun.conf) continue ;; esac	# site file the admin writes
		if [ -e "$root$f" ]; then echo "ok: $(basename "$m") FILES $f"
		else fail_later "$(basename "$m") names $f, no package has it"; fi
	done
done

# Remove keeps the configuration; purge removes it; nothing is left.
if [ $fresh = 1 ]; then
	dpkg --root="$root" -r cgrun cgrun-rdzvd libcgrun-dev libcgrun1 >>"$tmp/dpkg.log" 2>&1 ||
		{ cat "$tmp/dpkg.log"; fail_later "dpkg -r"; }
	[ -f "$root/etc/cgrun/rdzvd.conf" ] || fail_later "remove deleted the conffile"
	[ -e "$root/usr/sbin/cgrun-rdzvd" ] && fail_later "remove left the daemon"
	dpkg --root="$root" -P cgrun cgrun-rdzvd libcgrun-dev libcgrun1 >>"$tmp/dpkg.log" 2>&1 ||
		{ cat "$tmp/dpkg.log"; fail_later "dpkg -P"; }
	left=$(cd "$root" && find etc usr lib/systemd -type f 2>/dev/null)
	[ -z "$left" ] || fail_later "left after purge: $left"
	no_failures && echo "ok: removed and purged, nothing left"
fi

#!/bin/sh
# An installed libcgrun is usable on its own: `make install DESTDIR=...
# PREFIX=/usr` into a staging root, then the C examples are built from a
# copy outside the source tree with nothing but the installed headers,
# pkg-config (PKG_CONFIG_SYSROOT_DIR pointing at the root) and the shared
# library, and the CPU example runs under the installed cgrun.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
top=$TOP
b=$BUILD_DIR
cuda=${CUDA_HOME:-/usr/local/cuda}
command -v pkg-config >/dev/null 2>&1 || skip "pkg-config missing (apt-get install pkg-config)"
root=$T/root
rel=${b#"$top"/}

make -s -C "$top" BUILD="$rel" install DESTDIR="$root" PREFIX=/usr >"$T/install.log" 2>&1 ||
	{ tail -n 30 "$T/install.log"; fail "make install"; }
for f in usr/lib/libcgrun.so.1 usr/lib/libcgrun.so usr/lib/pkgconfig/cgrun.pc \
    usr/include/cgrun/cgrun.h usr/include/cgrun/rank.h usr/include/cgrun/store.h \
    usr/include/cgrun/barrier.h usr/include/cgrun/checkpoint.h \
    usr/share/man/man3/libcgrun.3 usr/bin/cgrun \
    usr/share/bash-completion/completions/cgrun \
    usr/share/bash-completion/completions/cgrun-rdzvd \
    usr/share/cgrun/event-log.schema.json; do
	[ -e "$root/$f" ] || fail "$f not installed"
done

# The consumer: a copy of examples/c, away from the source tree.
mkdir "$T/src"
cp "$top"/examples/c/Makefile "$top"/examples/c/*.c "$T/src/"
export PKG_CONFIG_PATH= PKG_CONFIG_LIBDIR="$root/usr/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$root"
if [ -f "$root/usr/lib/pkgconfig/cgrun-nccl.pc" ]; then
	# CUDA is not part of the staging root: make it visible inside.
	mkdir -p "$root$(dirname "$cuda")"
	ln -s "$(readlink -f "$cuda")" "$root$cuda"
	want="cpu_counter nccl_allreduce"
else
	want=cpu_counter
fi
echo "pkg-config cgrun: $(pkg-config --cflags --libs cgrun)"
make -C "$T/src" CFLAGS="-O2 -Wall -Wextra -Werror" >"$T/build.log" 2>&1 ||
	{ cat "$T/build.log"; fail "examples do not build against the installed library"; }
cat "$T/build.log"
for p in $want; do
	[ -x "$T/src/$p" ] || fail "$p not built"
done
pkg-config --cflags cgrun | grep -q -- "-I$root/usr/include" ||
	fail "pkg-config does not point at the installed headers"
objdump -p "$T/src/cpu_counter" | grep -q 'NEEDED *libcgrun.so.1' ||
	fail "cpu_counter does not link libcgrun.so.1"
export LD_LIBRARY_PATH="$root/usr/lib"
ldd "$T/src/cpu_counter" | grep -q "libcgrun.so.1 => $root/usr/lib/libcgrun.so.1" ||
	{ ldd "$T/src/cpu_counter"; fail "libcgrun.so.1 does not resolve to the installed copy"; }
echo "ok: built $want from installed headers, pkg-config and libcgrun.so.1"

# Run it: 2 ranks, 5 steps: total = 15 * 3.
cd "$T/src" || exit 1
timeout 60 "$root/usr/bin/cgrun" --standalone --nproc-per-node=2 --no-python ./cpu_counter \
    --dir "$T/ckpt" --steps 5 >"$T/run.out" 2>&1
rc=$?
cat "$T/run.out"
[ $rc -eq 0 ] || fail "installed cgrun + consumer exit $rc"
[ "$(grep -c 'total=45 steps=5' "$T/run.out")" -eq 2 ] || fail "wrong totals"
echo "ok: the installed consumer ran under the installed cgrun"

#!/bin/sh
# An installed libcgrun is usable on its own: `make install DESTDIR=...
# PREFIX=/usr` into a staging root, then the C examples are built from a
# copy outside the source tree with nothing but the installed headers,
# pkg-config (PKG_CONFIG_SYSROOT_DIR pointing at the root) and the shared
# library, and the CPU example runs under the installed cgrun.
top=${CGRUN_TOP:?}
b=${CGRUN_BUILD:?}
cuda=${CUDA_HOME:-/usr/local/cuda}
command -v pkg-config >/dev/null 2>&1 || { echo "pkg-config missing (apt-get install pkg-config)"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/cgrun-inst.XXXXXX")
trap 'rm -rf "$T"' EXIT
root=$T/root
rel=${b#"$top"/}

make -s -C "$top" BUILD="$rel" install DESTDIR="$root" PREFIX=/usr >"$T/install.log" 2>&1 ||
	{ echo "FAIL: make install"; tail -n 30 "$T/install.log"; exit 1; }
for f in usr/lib/libcgrun.so.1 usr/lib/libcgrun.so usr/lib/pkgconfig/cgrun.pc \
    usr/include/cgrun/cgrun.h usr/include/cgrun/rank.h usr/include/cgrun/store.h \
    usr/include/cgrun/barrier.h usr/include/cgrun/checkpoint.h \
    usr/share/man/man3/libcgrun.3 usr/bin/cgrun \
    usr/share/bash-completion/completions/cgrun \
    usr/share/bash-completion/completions/cgrun-rdzvd \
    usr/share/cgrun/event-log.schema.json; do
	[ -e "$root/$f" ] || { echo "FAIL: $f not installed"; exit 1; }
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
	{ echo "FAIL: examples do not build against the installed library"; cat "$T/build.log"; exit 1; }
cat "$T/build.log"
for p in $want; do
	[ -x "$T/src/$p" ] || { echo "FAIL: $p not built"; exit 1; }
done
pkg-config --cflags cgrun | grep -q -- "-I$root/usr/include" ||
	{ echo "FAIL: pkg-config does not point at the installed headers"; exit 1; }
objdump -p "$T/src/cpu_counter" | grep -q 'NEEDED *libcgrun.so.1' ||
	{ echo "FAIL: cpu_counter does not link libcgrun.so.1"; exit 1; }
export LD_LIBRARY_PATH="$root/usr/lib"
ldd "$T/src/cpu_counter" | grep -q "libcgrun.so.1 => $root/usr/lib/libcgrun.so.1" ||
	{ echo "FAIL: libcgrun.so.1 does not resolve to the installed copy"; ldd "$T/src/cpu_counter"; exit 1; }
echo "ok: built $want from installed headers, pkg-config and libcgrun.so.1"

# Run it: 2 ranks, 5 steps: total = 15 * 3.
cd "$T/src" || exit 1
timeout 60 "$root/usr/bin/cgrun" --standalone --nproc-per-node=2 --no-python ./cpu_counter \
    --dir "$T/ckpt" --steps 5 >"$T/run.out" 2>&1
rc=$?
cat "$T/run.out"
[ $rc -eq 0 ] || { echo "FAIL: installed cgrun + consumer exit $rc"; exit 1; }
[ "$(grep -c 'total=45 steps=5' "$T/run.out")" -eq 2 ] || { echo "FAIL: wrong totals"; exit 1; }
echo "ok: the installed consumer ran under the installed cgrun"

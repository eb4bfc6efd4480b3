#!/bin/sh
# libcgrun's public surface: every include/cgrun/*.h compiles on its own
# (twice in a row: include guards) as C99, C11, C++11 and C++17 with strict
# warnings; a C++ program links against libcgrun.so (extern "C"); the
# shared libraries export only cgrun_* symbols, carry versioned sonames,
# and every exported function is documented in man/libcgrun.3.
top=${CGRUN_TOP:?}
b=${CGRUN_BUILD:?}
cuda=${CUDA_HOME:-/usr/local/cuda}
T=$(mktemp -d "${TMPDIR:-/tmp}/cgrun-hdr.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail=0
command -v c++ >/dev/null 2>&1 || { echo "no C++ compiler (apt-get install g++)"; exit 77; }

for h in "$top"/include/cgrun/*.h; do
	n=$(basename "$h")
	extra=
	if [ "$n" = nccl.h ]; then
		[ -f "$cuda/include/nccl.h" ] || { echo "skipped nccl.h: no $cuda/include/nccl.h"; continue; }
		extra="-isystem $cuda/include"
	fi
	printf '#include <cgrun/%s>\n#include <cgrun/%s>\nint main(void) { return 0; }\n' "$n" "$n" >"$T/h.c"
	cp "$T/h.c" "$T/h.cc"
	for std in c99 c11; do
		# shellcheck disable=SC2086
		cc -std=$std -Wall -Wextra -Werror -pedantic -Wstrict-prototypes -Wmissing-prototypes \
		    -I"$top/include" $extra -c "$T/h.c" -o "$T/h.o" ||
			{ echo "FAIL: $n does not compile alone as $std"; fail=1; }
	done
	for std in c++11 c++17; do
		# shellcheck disable=SC2086
		c++ -std=$std -Wall -Wextra -Werror -pedantic -I"$top/include" $extra -c "$T/h.cc" -o "$T/h.o" ||
			{ echo "FAIL: $n does not compile alone as $std"; fail=1; }
	done
	echo "ok: $n compiles alone (c99 c11 c++11 c++17)"
done

# C++ calls every part of the library through the installed-style headers.
cat >"$T/use.cc" <<'EOC'
#include <cgrun/cgrun.h>
#include <cgrun/rank.h>
#include <cgrun/store.h>
#include <cgrun/barrier.h>
#include <cgrun/checkpoint.h>
#include <cerrno>
#include <cstdio>
#include <cstring>
int main() {
	char err[CGRUN_ERRLEN] = "";
	const char *env[] = { "RANK=0", nullptr };
	if (cgrun_rank_new(env, err) != nullptr || std::strstr(err, "WORLD_SIZE") == nullptr)
		return 1;
	if (cgrun_barrier(nullptr, "x", 0, 1, 10, err) != -1 || errno != EINVAL)
		return 2;
	if (cgrun_ckpt_new("", "x", 1, err) != nullptr)
		return 3;
	cgrun_store_free(nullptr);
	std::printf("libcgrun %s from C++\n", cgrun_version());
	return 0;
}
EOC
if c++ -std=c++11 -Wall -Werror -I"$top/include" "$T/use.cc" -o "$T/use" -L"$b" -lcgrun -Wl,-rpath,"$b"; then
	"$T/use" || { echo "FAIL: C++ program exit $?"; fail=1; }
else
	echo "FAIL: C++ program does not build against libcgrun.so"; fail=1
fi

# Exports, sonames, and the man page.
check_lib() {	# FILE SONAME
	[ -f "$1" ] || { echo "FAIL: $1 not built"; fail=1; return; }
	so=$(objdump -p "$1" | awk '$1 == "SONAME" { print $2 }')
	[ "$so" = "$2" ] || { echo "FAIL: $(basename "$1") soname '$so', want $2"; fail=1; }
	syms=$(nm -D --defined-only "$1" | awk '{ print $3 }')
	bad=$(echo "$syms" | grep -v '^cgrun_' | grep -v '^$')
	[ -z "$bad" ] || { echo "FAIL: $(basename "$1") exports non-cgrun symbols:" $bad; fail=1; }
	for s in $syms; do
		grep -Eq "^\.(Fn|Fo) $s( |\$)" "$top/man/libcgrun.3" ||
			{ echo "FAIL: $s is not documented in man/libcgrun.3"; fail=1; }
	done
	echo "ok: $(basename "$1"): soname $so, $(echo "$syms" | wc -l) cgrun_* symbols, all documented"
}
check_lib "$b/libcgrun.so.1" libcgrun.so.1
if [ -f "$cuda/include/nccl.h" ]; then
	check_lib "$b/libcgrun-nccl.so.1" libcgrun-nccl.so.1
else
	echo "libcgrun-nccl not checked: no $cuda/include/nccl.h"
fi
exit $fail

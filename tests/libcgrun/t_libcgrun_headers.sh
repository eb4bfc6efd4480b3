#!/bin/sh
# libcgrun's public surface: every include/cgrun/*.h compiles on its own
# (twice in a row: include guards) as C99, C11, C++11 and C++17 with strict
# warnings; a C++ program links against libcgrun.so (extern "C"); the
# shared library exports only cgrun_* symbols, carries a versioned soname,
# and every exported function is documented in man/libcgrun.3.  nccl.h and
# libcgrun-nccl (they need CUDA) are t_libcgrun_headers_nccl's.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
top=$TOP
b=$BUILD_DIR
command -v c++ >/dev/null 2>&1 || skip "no C++ compiler (apt-get install g++)"
. "$top/tests/libcgrun/lib.sh"

for h in "$top"/include/cgrun/*.h; do
	n=$(basename "$h")
	[ "$n" = nccl.h ] && continue	# needs CUDA: t_libcgrun_headers_nccl
	header_alone "$n"
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
	"$T/use" || fail_later "C++ program exit $?"
else
	fail_later "C++ program does not build against libcgrun.so"
fi

# Exports, sonames, and the man page (libcgrun-nccl's:
# t_libcgrun_headers_nccl).
check_lib "$b/libcgrun.so.1" libcgrun.so.1

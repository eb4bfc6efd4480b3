#!/bin/sh
# libcgrun-nccl's public surface: include/cgrun/nccl.h compiles on its own
# (twice: include guard) as C99, C11, C++11 and C++17 with strict warnings
# against CUDA's nccl.h, and libcgrun-nccl.so exports only documented
# cgrun_* symbols under a versioned soname; its functions refuse NULL
# handles and pointers with EINVAL, no crash.  Skips, saying why, where
# CUDA_HOME (default /usr/local/cuda) has no nccl.h.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
top=$TOP
b=$BUILD_DIR
cuda=${CUDA_HOME:-/usr/local/cuda}
command -v c++ >/dev/null 2>&1 || skip "no C++ compiler (apt-get install g++)"
[ -f "$cuda/include/nccl.h" ] && [ -f "$cuda/include/cuda_runtime.h" ] ||
	skip "no $cuda/include/nccl.h and cuda_runtime.h (CUDA toolkit and NCCL): libcgrun-nccl is not built"
. "$top/tests/libcgrun/lib.sh"
header_alone nccl.h "-isystem $cuda/include"
check_lib "$b/libcgrun-nccl.so.1" libcgrun-nccl.so.1

# Argument checks that come before any CUDA or NCCL call.
cat >"$T/args.c" <<'EOC'
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <cgrun/nccl.h>
#include <cgrun/rank.h>
#define BAD(e) do { errno = 0; if ((e) != -1 || errno != EINVAL) { \
	printf("FAIL: %s: not -1 with EINVAL (errno %d)\n", #e, errno); fails++; } } while (0)
int main(void) {
	const char *env[] = { "RANK=0", "WORLD_SIZE=1", "LOCAL_RANK=0", "LOCAL_WORLD_SIZE=1",
	    "MASTER_ADDR=127.0.0.1", "MASTER_PORT=1", NULL };
	char err[CGRUN_ERRLEN];
	struct cgrun_rank *r = cgrun_rank_new(env, err);
	ncclUniqueId id;
	ncclComm_t comm;
	int dev, fails = 0;
	memset(&id, 0, sizeof(id));
	BAD(cgrun_nccl_device(NULL, &dev, err));
	BAD(cgrun_nccl_device(r, NULL, err));
	BAD(cgrun_nccl_id_exchange(NULL, "x", 0, &id, 10, err));
	BAD(cgrun_nccl_unique_id(NULL, "x", 1, &id, 10, err));
	BAD(cgrun_nccl_unique_id(NULL, "x", 1, NULL, 10, NULL));
	BAD(cgrun_nccl_comm_new(NULL, r, "x", 10, &comm, err));
	BAD(cgrun_nccl_comm_new(NULL, NULL, "x", 10, NULL, NULL));
	cgrun_rank_free(r);
	printf("%d argument checks failed\n", fails);
	return fails != 0;
}
EOC
if cc -Wall -Wextra -Werror -I"$top/include" -isystem "$cuda/include" -o "$T/args" "$T/args.c" \
    -L"$b" -lcgrun-nccl -lcgrun -L"$cuda/lib64" -lnccl -lcudart -Wl,-rpath,"$b" -Wl,-rpath,"$cuda/lib64"; then
	"$T/args" || fail_later "argument checks of libcgrun-nccl"
else
	fail_later "the argument check program does not build against libcgrun-nccl"
fi

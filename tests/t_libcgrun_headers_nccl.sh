#!/bin/sh
# libcgrun-nccl's public surface: include/cgrun/nccl.h compiles on its own
# (twice: include guard) as C99, C11, C++11 and C++17 with strict warnings
# against CUDA's nccl.h, and libcgrun-nccl.so exports only documented
# cgrun_* symbols under a versioned soname.  Skips, saying why, where
# CUDA_HOME (default /usr/local/cuda) has no nccl.h.
top=${CGRUN_TOP:?}
b=${CGRUN_BUILD:?}
cuda=${CUDA_HOME:-/usr/local/cuda}
command -v c++ >/dev/null 2>&1 || { echo "no C++ compiler (apt-get install g++)"; exit 77; }
[ -f "$cuda/include/nccl.h" ] && [ -f "$cuda/include/cuda_runtime.h" ] ||
	{ echo "no $cuda/include/nccl.h and cuda_runtime.h (CUDA toolkit and NCCL): libcgrun-nccl is not built"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/cgrun-hdr.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail=0
. "$top/tests/helper_libcgrun.sh"
header_alone nccl.h "-isystem $cuda/include"
check_lib "$b/libcgrun-nccl.so.1" libcgrun-nccl.so.1
exit $fail

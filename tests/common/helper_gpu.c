/*
 * helper_gpu.c: fixture and fake-NVML paths for the GPU and placement
 * suites.
 */
#include <check.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "helper_gpu.h"

/* Path of a fixture topology. */
const char *
gpu_fixture(const char *name)
{
	static char path[PATH_MAX];
	const char *top = getenv("CGRUN_TOP");

	snprintf(path, sizeof(path), "%s/tests/place/topologies/%s.xml",
	    top != NULL ? top : ".", name);
	ck_assert_msg(access(path, R_OK) == 0, "fixture %s missing", path);
	return path;
}

/* Path of the fake NVML built next to this program. */
const char *
gpu_fake_nvml(void)
{
	static char path[PATH_MAX];
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	ck_assert_int_gt(n, 0);
	exe[n] = '\0';
	snprintf(path, sizeof(path), "%s/fake_nvml/libnvidia-ml.so.1",
	    dirname(exe));
	ck_assert_msg(access(path, R_OK) == 0, "%s missing (make tests)",
	    path);
	return path;
}

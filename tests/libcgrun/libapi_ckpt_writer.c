/*
 * libapi_ckpt_writer.c: helper of tests/libcgrun/t_libcgrun_ckpt_crash.sh.
 *   libapi_ckpt_writer DIR save N   resume from the newest checkpoint of
 *                                   set "w" (keep 2) and save N more steps
 *   libapi_ckpt_writer DIR verify   check every file of the set and the
 *                                   newest payload; print the newest step
 * The payload of step s is s-dependent (64 KiB to 512 KiB), so a file
 * holding a mix of two saves, or a short one, is detected.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cgrun/checkpoint.h>

#define MAXWORDS (8 * 8192)

static uint64_t buf[MAXWORDS];

/* Fill buf with step's payload; its length in bytes. */
static size_t
pattern(uint64_t step)
{
	size_t n = (step % 8 + 1) * 8192, i;

	for (i = 0; i < n; i++)
		buf[i] = step * 0x9E3779B97F4A7C15ull ^ i;
	return n * sizeof(buf[0]);
}

/* Every step file present must be complete; print the newest step. */
static int
verify(struct cgrun_ckpt *c)
{
	char err[CGRUN_ERRLEN], path[4096];
	uint64_t step = 0, s, got;
	void *data;
	size_t len;
	int rc;

	rc = cgrun_ckpt_load(c, CGRUN_CKPT_NEWEST, &step, &data, &len, err);
	if (rc == -1) {
		fprintf(stderr, "load: %s\n", err);
		return 1;
	}
	if (rc == 1) {
		if (len != pattern(step) || memcmp(data, buf, len) != 0) {
			fprintf(stderr, "step %llu: wrong payload\n",
			    (unsigned long long)step);
			return 1;
		}
		free(data);
	}
	for (s = 1; s <= step + 1; s++) {
		if (cgrun_ckpt_path(c, s, path, sizeof(path)) == -1 ||
		    access(path, F_OK) == -1)
			continue;
		if (cgrun_ckpt_newest(c, s, &got, err) != 1 || got != s) {
			fprintf(stderr, "step %llu: torn file %s\n",
			    (unsigned long long)s, path);
			return 1;
		}
	}
	printf("%llu\n", (unsigned long long)step);
	return 0;
}

int
main(int argc, char **argv)
{
	char err[CGRUN_ERRLEN];
	struct cgrun_ckpt *c;
	uint64_t step = 0;
	long i, n;

	if (argc < 3 || (c = cgrun_ckpt_new(argv[1], "w", 2, err)) == NULL) {
		fprintf(stderr, "usage: libapi_ckpt_writer DIR save N | "
		    "verify\n");
		return 2;
	}
	if (strcmp(argv[2], "verify") == 0)
		return verify(c);
	if (strcmp(argv[2], "save") != 0 || argc != 4)
		return 2;
	if (cgrun_ckpt_newest(c, CGRUN_CKPT_NEWEST, &step, err) == -1) {
		fprintf(stderr, "newest: %s\n", err);
		return 1;
	}
	n = strtol(argv[3], NULL, 10);
	for (i = 0; i < n; i++) {
		step++;
		if (cgrun_ckpt_save(c, step, buf, pattern(step), err) == -1) {
			fprintf(stderr, "save: %s\n", err);
			return 1;
		}
	}
	cgrun_ckpt_free(c);
	return 0;
}

/*
 * fuzz_rank.c: libFuzzer target for the worker environment parser
 * (worker-lib/rank.c, cgrun_rank_new over an explicit envp: a pure,
 * bounded function of its strings).  The input is the environment, its
 * entries separated by NUL bytes (at most 64).  Checked beyond crashes,
 * leaks and UB: a failure is EINVAL with a message; a success has ranks
 * below their sizes and a port in 1..65535, every accessor returns what
 * its variable says (first entry of a name wins; plain decimal digits) or
 * its documented default, and the store prefix is "/worker/attempt_N".
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgrun/rank.h"

#define FR_MAX_ENV	64

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Abort (a finding) unless cond holds. */
static void
fr_assert(int cond)
{
	if (!cond)
		abort();
}

/* The value of the first entry of name in env, or NULL. */
static const char *
fr_get(char *const *env, const char *name)
{
	size_t n = strlen(name);

	for (; *env != NULL; env++)
		if (strncmp(*env, name, n) == 0 && (*env)[n] == '=')
			return *env + n + 1;
	return NULL;
}

/* An integer variable's value, or def when it is unset. */
static long long
fr_int(char *const *env, const char *name, long long def)
{
	const char *s = fr_get(env, name);
	const char *p;

	if (s == NULL)
		return def;
	for (p = s; *p != '\0'; p++)
		fr_assert(*p >= '0' && *p <= '9');	/* accepted: digits only */
	fr_assert(p > s);
	return strtoll(s, NULL, 10);
}

/* A string variable's value, or def when it is unset. */
static const char *
fr_str(char *const *env, const char *name, const char *def)
{
	const char *s = fr_get(env, name);

	return s != NULL ? s : def;
}

/* Every accessor of a parsed environment against the variables. */
static void
fr_check(const struct cgrun_rank *r, char *const *env)
{
	int rank = cgrun_rank_rank(r), world = cgrun_rank_world_size(r);
	int lws = cgrun_rank_local_world_size(r);
	char want[64], got[64];

	fr_assert(rank == fr_int(env, "RANK", -2) && rank < world);
	fr_assert(world == fr_int(env, "WORLD_SIZE", -2));
	fr_assert(lws == fr_int(env, "LOCAL_WORLD_SIZE", -2) && lws <= world);
	fr_assert(cgrun_rank_local_rank(r) == fr_int(env, "LOCAL_RANK", -2) &&
	    cgrun_rank_local_rank(r) < lws);
	fr_assert(cgrun_rank_group_rank(r) == fr_int(env, "GROUP_RANK",
	    rank / lws) && cgrun_rank_group_rank(r) <
	    cgrun_rank_group_world_size(r));
	fr_assert(cgrun_rank_group_world_size(r) == fr_int(env,
	    "GROUP_WORLD_SIZE", (world + lws - 1) / lws));
	fr_assert(cgrun_rank_role_rank(r) == fr_int(env, "ROLE_RANK", rank) &&
	    cgrun_rank_role_rank(r) < cgrun_rank_role_world_size(r));
	fr_assert(cgrun_rank_role_world_size(r) == fr_int(env,
	    "ROLE_WORLD_SIZE", world));
	fr_assert(cgrun_rank_restart_count(r) == fr_int(env,
	    "TORCHELASTIC_RESTART_COUNT", 0));
	fr_assert(cgrun_rank_max_restarts(r) == fr_int(env,
	    "TORCHELASTIC_MAX_RESTARTS", 0));
	fr_assert(cgrun_rank_master_port(r) == fr_int(env, "MASTER_PORT", -2) &&
	    cgrun_rank_master_port(r) >= 1 && cgrun_rank_master_port(r) <= 65535);
	fr_assert(strcmp(cgrun_rank_master_addr(r), fr_str(env, "MASTER_ADDR",
	    "")) == 0 && cgrun_rank_master_addr(r)[0] != '\0');
	fr_assert(strcmp(cgrun_rank_role_name(r), fr_str(env, "ROLE_NAME",
	    "default")) == 0);
	fr_assert(strcmp(cgrun_rank_run_id(r), fr_str(env,
	    "TORCHELASTIC_RUN_ID", "")) == 0);
	snprintf(want, sizeof(want), "/worker/attempt_%d",
	    cgrun_rank_restart_count(r));
	fr_assert(cgrun_rank_store_prefix(r, got, strlen(want) + 1) == 0 &&
	    strcmp(got, want) == 0);
	fr_assert(cgrun_rank_store_prefix(r, got, strlen(want)) == -1);
}

/* libFuzzer entry: NUL-separated "NAME=value" entries. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *copy, *env[FR_MAX_ENV + 1], err[CGRUN_ERRLEN];
	struct cgrun_rank *r;
	size_t i, start = 0;
	int n = 0;

	if ((copy = malloc(size + 1)) == NULL)
		return 0;
	memcpy(copy, data, size);
	copy[size] = '\0';
	for (i = 0; i <= size && n < FR_MAX_ENV; i++)
		if (copy[i] == '\0') {
			env[n++] = copy + start;
			start = i + 1;
		}
	env[n] = NULL;
	err[0] = '\0';
	errno = 0;
	r = cgrun_rank_new((const char *const *)env, err);
	if (r == NULL) {
		fr_assert(errno == EINVAL && err[0] != '\0' &&
		    memchr(err, '\0', sizeof(err)) != NULL);
	} else {
		fr_check(r, env);
		cgrun_rank_free(r);
	}
	free(copy);
	return 0;
}

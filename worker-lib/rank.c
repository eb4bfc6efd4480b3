/*
 * rank.c: rank information from the worker environment (torchrun's
 * variables) and the connection to this attempt's job store.
 */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgrun/rank.h"
#include "cgrun/store.h"
#include "util.h"

extern char **environ;

#define RANK_MAX_NAME	256	/* ROLE_NAME, TORCHELASTIC_RUN_ID */
#define RANK_MAX_ADDR	1025	/* MASTER_ADDR (host name or address) */
#define RANK_MAX_WORLD	(1 << 24)

struct cgrun_rank {
	int	rank, world_size, local_rank, local_world_size;
	int	group_rank, group_world_size, role_rank, role_world_size;
	int	restart_count, max_restarts, master_port;
	int	use_agent_store;	/* -1 unset, 0 "False"/other, 1 "True" */
	char	role_name[RANK_MAX_NAME];
	char	run_id[RANK_MAX_NAME];
	char	master_addr[RANK_MAX_ADDR];
};

/* One integer variable: where it goes, its range, whether it must exist. */
struct rank_var {
	const char	*name;
	size_t		 off;
	int		 min, max;
	int		 required;
};

#define RV(n, f, lo, hi, req) { n, offsetof(struct cgrun_rank, f), lo, hi, req }
static const struct rank_var rank_vars[] = {
	RV("RANK", rank, 0, RANK_MAX_WORLD - 1, 1),
	RV("WORLD_SIZE", world_size, 1, RANK_MAX_WORLD, 1),
	RV("LOCAL_RANK", local_rank, 0, RANK_MAX_WORLD - 1, 1),
	RV("LOCAL_WORLD_SIZE", local_world_size, 1, RANK_MAX_WORLD, 1),
	RV("MASTER_PORT", master_port, 1, 65535, 1),
	RV("GROUP_RANK", group_rank, 0, RANK_MAX_WORLD - 1, 0),
	RV("GROUP_WORLD_SIZE", group_world_size, 1, RANK_MAX_WORLD, 0),
	RV("ROLE_RANK", role_rank, 0, RANK_MAX_WORLD - 1, 0),
	RV("ROLE_WORLD_SIZE", role_world_size, 1, RANK_MAX_WORLD, 0),
	RV("TORCHELASTIC_RESTART_COUNT", restart_count, 0, INT_MAX, 0),
	RV("TORCHELASTIC_MAX_RESTARTS", max_restarts, 0, INT_MAX, 0),
};
#undef RV

/* The value of name in envp, or NULL. */
static const char *
rank_getenv(const char *const *envp, const char *name)
{
	size_t n = strlen(name);

	for (; *envp != NULL; envp++)
		if (strncmp(*envp, name, n) == 0 && (*envp)[n] == '=')
			return *envp + n + 1;
	return NULL;
}

/*
 * Parse s as a plain decimal integer in [min, max]: digits only, no sign,
 * space or suffix.  0, or -1 if malformed or out of range.
 */
static int
rank_parse_int(const char *s, int min, int max, int *out)
{
	long long v = 0;

	if (*s == '\0' || strlen(s) > 18)
		return -1;
	for (; *s != '\0'; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (*s - '0');
	}
	if (v < min || v > max)
		return -1;
	*out = (int)v;
	return 0;
}

/* Read every integer variable of the table; -1 with a message on error. */
static int
rank_read_ints(struct cgrun_rank *r, const char *const *envp, char *err)
{
	const struct rank_var *v;
	const char *s;
	size_t i;

	for (i = 0; i < sizeof(rank_vars) / sizeof(rank_vars[0]); i++) {
		v = &rank_vars[i];
		s = rank_getenv(envp, v->name);
		if (s == NULL) {
			if (!v->required)
				continue;
			cgrun_seterr(err, "%s is not set (is this process started "
			    "by cgrun or torchrun?)", v->name);
			return -1;
		}
		if (rank_parse_int(s, v->min, v->max,
		    (int *)(void *)((char *)r + v->off)) == -1) {
			cgrun_seterr(err, "%s=\"%.40s\" is not an integer in "
			    "[%d, %d]", v->name, s, v->min, v->max);
			return -1;
		}
	}
	return 0;
}

/* Copy string variable name (default def) into buf; -1 if too long. */
static int
rank_read_str(const char *const *envp, const char *name, const char *def,
    char *buf, size_t len, char *err)
{
	const char *s = rank_getenv(envp, name);

	if (s == NULL)
		s = def;
	if (s == NULL) {
		cgrun_seterr(err, "%s is not set (is this process started by "
		    "cgrun or torchrun?)", name);
		return -1;
	}
	if (strlen(s) >= len) {
		cgrun_seterr(err, "%s is longer than %zu bytes", name, len - 1);
		return -1;
	}
	memcpy(buf, s, strlen(s) + 1);
	return 0;
}

/* Read the string variables; -1 with a message on error. */
static int
rank_read_strs(struct cgrun_rank *r, const char *const *envp, char *err)
{
	const char *s;

	if (rank_read_str(envp, "MASTER_ADDR", NULL, r->master_addr,
	    sizeof(r->master_addr), err) == -1 ||
	    rank_read_str(envp, "ROLE_NAME", "default", r->role_name,
	    sizeof(r->role_name), err) == -1 ||
	    rank_read_str(envp, "TORCHELASTIC_RUN_ID", "", r->run_id,
	    sizeof(r->run_id), err) == -1)
		return -1;
	if (r->master_addr[0] == '\0') {
		cgrun_seterr(err, "MASTER_ADDR is empty");
		return -1;
	}
	s = rank_getenv(envp, "TORCHELASTIC_USE_AGENT_STORE");
	r->use_agent_store = s == NULL ? -1 : strcmp(s, "True") == 0;
	return 0;
}

/* Check that the ranks fit their sizes; -1 with a message if not. */
static int
rank_validate(const struct cgrun_rank *r, char *err)
{
	if (r->rank >= r->world_size)
		cgrun_seterr(err, "RANK=%d is not below WORLD_SIZE=%d", r->rank,
		    r->world_size);
	else if (r->local_rank >= r->local_world_size)
		cgrun_seterr(err, "LOCAL_RANK=%d is not below LOCAL_WORLD_SIZE=%d",
		    r->local_rank, r->local_world_size);
	else if (r->local_world_size > r->world_size)
		cgrun_seterr(err, "LOCAL_WORLD_SIZE=%d is above WORLD_SIZE=%d",
		    r->local_world_size, r->world_size);
	else if (r->group_rank >= r->group_world_size)
		cgrun_seterr(err, "GROUP_RANK=%d is not below GROUP_WORLD_SIZE=%d",
		    r->group_rank, r->group_world_size);
	else if (r->role_rank >= r->role_world_size)
		cgrun_seterr(err, "ROLE_RANK=%d is not below ROLE_WORLD_SIZE=%d",
		    r->role_rank, r->role_world_size);
	else
		return 0;
	return -1;
}

/* Defaults of the optional variables that depend on the required ones. */
static void
rank_defaults(struct cgrun_rank *r)
{
	r->group_rank = r->group_world_size = -1;
	r->role_rank = r->role_world_size = -1;
}

/* Fill the defaults left at -1 once the required values are known. */
static void
rank_fill(struct cgrun_rank *r)
{
	if (r->group_rank == -1)
		r->group_rank = r->rank / r->local_world_size;
	if (r->group_world_size == -1)
		r->group_world_size = (r->world_size + r->local_world_size - 1) /
		    r->local_world_size;
	if (r->role_rank == -1)
		r->role_rank = r->rank;
	if (r->role_world_size == -1)
		r->role_world_size = r->world_size;
}

/* An empty environment (environ is NULL after clearenv()). */
static const char *const rank_no_env[] = { NULL };

/* Read the worker environment from envp (NULL: this process's). */
CGRUN_EXPORT struct cgrun_rank *
cgrun_rank_new(const char *const *envp, char *err)
{
	struct cgrun_rank *r;

	if (envp == NULL)
		envp = (const char *const *)environ;
	if (envp == NULL)	/* after clearenv(): an empty environment */
		envp = rank_no_env;
	if ((r = calloc(1, sizeof(*r))) == NULL) {
		cgrun_seterr(err, "out of memory");
		return NULL;
	}
	rank_defaults(r);
	if (rank_read_ints(r, envp, err) == -1 ||
	    rank_read_strs(r, envp, err) == -1) {
		free(r);
		errno = EINVAL;
		return NULL;
	}
	rank_fill(r);
	if (rank_validate(r, err) == -1) {
		free(r);
		errno = EINVAL;
		return NULL;
	}
	return r;
}

/* A getter's answer for a NULL handle: -1 with errno EINVAL. */
static int
rank_bad_int(void)
{
	errno = EINVAL;
	return -1;
}

/* A string getter's answer for a NULL handle: NULL with errno EINVAL. */
static const char *
rank_bad_str(void)
{
	errno = EINVAL;
	return NULL;
}

/* Release rank information; NULL is a no-op. */
CGRUN_EXPORT void
cgrun_rank_free(struct cgrun_rank *r)
{
	free(r);
}

/* RANK. */
CGRUN_EXPORT int
cgrun_rank_rank(const struct cgrun_rank *r)
{
	return r != NULL ? r->rank : rank_bad_int();
}

/* WORLD_SIZE. */
CGRUN_EXPORT int
cgrun_rank_world_size(const struct cgrun_rank *r)
{
	return r != NULL ? r->world_size : rank_bad_int();
}

/* LOCAL_RANK. */
CGRUN_EXPORT int
cgrun_rank_local_rank(const struct cgrun_rank *r)
{
	return r != NULL ? r->local_rank : rank_bad_int();
}

/* LOCAL_WORLD_SIZE. */
CGRUN_EXPORT int
cgrun_rank_local_world_size(const struct cgrun_rank *r)
{
	return r != NULL ? r->local_world_size : rank_bad_int();
}

/* GROUP_RANK. */
CGRUN_EXPORT int
cgrun_rank_group_rank(const struct cgrun_rank *r)
{
	return r != NULL ? r->group_rank : rank_bad_int();
}

/* GROUP_WORLD_SIZE. */
CGRUN_EXPORT int
cgrun_rank_group_world_size(const struct cgrun_rank *r)
{
	return r != NULL ? r->group_world_size : rank_bad_int();
}

/* ROLE_RANK. */
CGRUN_EXPORT int
cgrun_rank_role_rank(const struct cgrun_rank *r)
{
	return r != NULL ? r->role_rank : rank_bad_int();
}

/* ROLE_WORLD_SIZE. */
CGRUN_EXPORT int
cgrun_rank_role_world_size(const struct cgrun_rank *r)
{
	return r != NULL ? r->role_world_size : rank_bad_int();
}

/* ROLE_NAME. */
CGRUN_EXPORT const char *
cgrun_rank_role_name(const struct cgrun_rank *r)
{
	return r != NULL ? r->role_name : rank_bad_str();
}

/* TORCHELASTIC_RESTART_COUNT. */
CGRUN_EXPORT int
cgrun_rank_restart_count(const struct cgrun_rank *r)
{
	return r != NULL ? r->restart_count : rank_bad_int();
}

/* TORCHELASTIC_MAX_RESTARTS. */
CGRUN_EXPORT int
cgrun_rank_max_restarts(const struct cgrun_rank *r)
{
	return r != NULL ? r->max_restarts : rank_bad_int();
}

/* TORCHELASTIC_RUN_ID. */
CGRUN_EXPORT const char *
cgrun_rank_run_id(const struct cgrun_rank *r)
{
	return r != NULL ? r->run_id : rank_bad_str();
}

/* MASTER_ADDR. */
CGRUN_EXPORT const char *
cgrun_rank_master_addr(const struct cgrun_rank *r)
{
	return r != NULL ? r->master_addr : rank_bad_str();
}

/* MASTER_PORT. */
CGRUN_EXPORT int
cgrun_rank_master_port(const struct cgrun_rank *r)
{
	return r != NULL ? r->master_port : rank_bad_int();
}

/* Write "/worker/attempt_N" into buf. */
CGRUN_EXPORT int
cgrun_rank_store_prefix(const struct cgrun_rank *r, char *buf, size_t len)
{
	int n;

	if (r == NULL || buf == NULL) {
		errno = EINVAL;
		return -1;
	}
	n = snprintf(buf, len, "/worker/attempt_%d", r->restart_count);
	if (n < 0 || (size_t)n >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

/* Connect to the job store and return a handle with the attempt prefix. */
CGRUN_EXPORT struct cgrun_store *
cgrun_rank_store_connect(const struct cgrun_rank *r, int timeout_ms,
    char *err)
{
	struct cgrun_store *base, *s;
	char prefix[64];

	if (r == NULL) {
		cgrun_seterr(err, "store connect: no rank information (NULL)");
		errno = EINVAL;
		return NULL;
	}
	if (r->use_agent_store == 0) {
		cgrun_seterr(err, "TORCHELASTIC_USE_AGENT_STORE is not \"True\": "
		    "no agent store to connect to (rank 0 would have to host "
		    "one; libcgrun does not)");
		errno = EPROTONOSUPPORT;
		return NULL;
	}
	if (cgrun_rank_store_prefix(r, prefix, sizeof(prefix)) == -1)
		return NULL;
	base = cgrun_store_connect(r->master_addr, r->master_port, timeout_ms,
	    err);
	if (base == NULL)
		return NULL;
	s = cgrun_store_prefixed(base, prefix);
	cgrun_store_free(base);
	if (s == NULL)
		cgrun_seterr(err, "out of memory");
	return s;
}

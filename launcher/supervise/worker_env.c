/*
 * worker_env.c: build each worker's environment from the agent's own, the
 * round, and the placement plan.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "options.h"
#include "placement.h"
#include "round.h"
#include "worker_env.h"

extern char **environ;

struct envv {
	char	**v;
	size_t	  n, cap;
};

/* Set name=value in e, replacing an existing entry; 0 or -1. */
static int
envv_set(struct envv *e, const char *name, const char *value)
{
	size_t i, nl = strlen(name);
	char *s, **nv;

	if (asprintf(&s, "%s=%s", name, value) == -1)
		return -1;
	for (i = 0; i < e->n; i++)
		if (strncmp(e->v[i], name, nl) == 0 && e->v[i][nl] == '=') {
			free(e->v[i]);
			e->v[i] = s;
			return 0;
		}
	if (e->n + 2 > e->cap) {
		e->cap = e->cap ? e->cap * 2 : 64;
		if ((nv = realloc(e->v, e->cap * sizeof(*nv))) == NULL) {
			free(s);
			return -1;
		}
		e->v = nv;
	}
	e->v[e->n++] = s;
	e->v[e->n] = NULL;
	return 0;
}

/* Set an integer variable. */
static int
envv_seti(struct envv *e, const char *name, long v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%ld", v);
	return envv_set(e, name, buf);
}

/* plan_env's callback. */
static int
envv_plan_cb(void *arg, const char *name, const char *value)
{
	return envv_set(arg, name, value);
}

/* Copy the agent's environment (environ is NULL after clearenv(), or
 * in a process whose environment was emptied that way: none to copy). */
static int
envv_inherit(struct envv *e)
{
	static char *none[] = { NULL };
	char **from = environ != NULL ? environ : none;
	char **p, *s, **nv;
	size_t n = 0;

	for (p = from; *p != NULL; p++)
		n++;
	e->cap = n + 40;
	if ((e->v = calloc(e->cap, sizeof(*nv))) == NULL)
		return -1;
	for (p = from; *p != NULL; p++) {
		if (strchr(*p, '=') == NULL)
			continue;
		if ((s = strdup(*p)) == NULL)
			return -1;
		e->v[e->n++] = s;
	}
	e->v[e->n] = NULL;
	return 0;
}

/* With --virtual-local-rank: the rank sees only its GPU (if it has one). */
static int
envv_virtual_gpu(struct envv *e, const struct plan *plan, int lr)
{
	const char *tok;

	if (plan == NULL || (tok = plan_gpu_token(plan, lr)) == NULL)
		return 0;
	return envv_set(e, "CUDA_VISIBLE_DEVICES", tok);
}

/* The torchrun variables for local rank lr of round r. */
static int
envv_torchrun(struct envv *e, const struct cgrun_options *o,
    const struct round_info *r, int lr, const char *error_file)
{
	const char *nccl = getenv("TORCH_NCCL_ASYNC_ERROR_HANDLING");
	int rank = r->rank_base + lr;

	if (envv_seti(e, "LOCAL_RANK", o->virtual_local_rank ? 0 : lr) ||
	    envv_seti(e, "RANK", rank) ||
	    envv_seti(e, "GROUP_RANK", r->group_rank) ||
	    envv_seti(e, "ROLE_RANK", rank) ||
	    envv_set(e, "ROLE_NAME", o->role ? o->role : "default") ||
	    envv_seti(e, "LOCAL_WORLD_SIZE", r->local_world_size) ||
	    envv_seti(e, "WORLD_SIZE", r->world_size) ||
	    envv_seti(e, "GROUP_WORLD_SIZE", r->group_world_size) ||
	    envv_seti(e, "ROLE_WORLD_SIZE", r->world_size) ||
	    envv_set(e, "MASTER_ADDR", r->master_addr) ||
	    envv_seti(e, "MASTER_PORT", r->master_port) ||
	    envv_seti(e, "TORCHELASTIC_RESTART_COUNT", r->restart_count) ||
	    envv_seti(e, "TORCHELASTIC_MAX_RESTARTS", o->max_restarts) ||
	    envv_set(e, "TORCHELASTIC_RUN_ID", r->run_id) ||
	    envv_set(e, "TORCHELASTIC_USE_AGENT_STORE", "True") ||
	    envv_set(e, "TORCHELASTIC_ERROR_FILE", error_file) ||
	    envv_set(e, "TORCH_NCCL_ASYNC_ERROR_HANDLING", nccl ? nccl : "1"))
		return -1;
	if (o->signals_to_handle != NULL && envv_set(e,
	    "TORCHELASTIC_SIGNALS_TO_HANDLE", o->signals_to_handle))
		return -1;
	return 0;
}

/* Build the environment of local rank lr; NULL with errno on failure. */
char **
worker_env_build(const struct cgrun_options *o, const struct round_info *r,
    int lr, const char *error_file, const struct plan *plan)
{
	struct envv e = { NULL, 0, 0 };

	if (envv_inherit(&e) == -1 ||
	    envv_torchrun(&e, o, r, lr, error_file) == -1 ||
	    (plan != NULL && plan_env(plan, lr, envv_plan_cb, &e) != 0) ||
	    (o->virtual_local_rank && envv_virtual_gpu(&e, plan, lr) == -1)) {
		worker_env_free(e.v);
		errno = ENOMEM;
		return NULL;
	}
	return e.v;
}

/* Set name=value in an environment from worker_env_build(); 0 or -1. */
int
worker_env_put(char ***envp, const char *name, const char *value)
{
	struct envv e = { *envp, 0, 0 };

	while (e.v[e.n] != NULL)
		e.n++;
	e.cap = e.n + 1;	/* full: envv_set grows it */
	if (envv_set(&e, name, value) == -1)
		return -1;
	*envp = e.v;
	return 0;
}

/* Free an environment from worker_env_build(). */
void
worker_env_free(char **env)
{
	char **p;

	if (env == NULL)
		return;
	for (p = env; *p != NULL; p++)
		free(*p);
	free(env);
}

/* As torchrun: OMP_NUM_THREADS=1 in the agent when several workers share it. */
void
worker_env_agent_defaults(int nproc)
{
	if (nproc > 1 && getenv("OMP_NUM_THREADS") == NULL) {
		setenv("OMP_NUM_THREADS", "1", 1);
		log_info("OMP_NUM_THREADS set to 1 for each worker (%d workers "
		    "on this node); set it yourself to tune", nproc);
	}
}

/*
 * With a hang watchdog (--hang-timeout, or torch's FileTimer through
 * TORCHELASTIC_ENABLE_FILE_TIMER=1): PYTHONFAULTHANDLER=1 in the agent
 * for every worker, unless the user set it, so that the SIGABRT of the
 * hang diagnosis (stacks.c) makes a Python rank dump every thread.
 */
void
worker_env_faulthandler(int hang_watchdog)
{
	const char *ft = getenv("TORCHELASTIC_ENABLE_FILE_TIMER");

	if (!hang_watchdog && (ft == NULL || strcmp(ft, "1") != 0))
		return;
	if (getenv("PYTHONFAULTHANDLER") != NULL)
		return;
	setenv("PYTHONFAULTHANDLER", "1", 1);
	log_info("PYTHONFAULTHANDLER set to 1 for each worker: a hang's "
	    "diagnosis makes Python ranks dump their stacks");
}

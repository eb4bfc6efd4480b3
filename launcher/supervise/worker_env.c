/*
 * worker_env.c: WHERE A RANK'S ENVIRONMENT IS BUILT (worker_env.h): every
 * variable a worker gets, named here, from the agent's own environment,
 * the options, the round, and what the placement and hang rooms describe.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "options.h"
#include "plan.h"
#include "round.h"
#include "watchdog.h"
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

/* Whether every worker gets OMP_NUM_THREADS=1: several, and unset. */
static int
envv_omp_default(int nproc)
{
	return nproc > 1 && getenv("OMP_NUM_THREADS") == NULL;
}

/* Whether every worker gets PYTHONFAULTHANDLER=1: a watchdog, and unset. */
static int
envv_faulthandler_default(int hang_watchdog)
{
	return hang_watchdog && getenv("PYTHONFAULTHANDLER") == NULL;
}

/*
 * cgrun's defaults (as torchrun: OMP_NUM_THREADS=1 when several workers
 * share the node; PYTHONFAULTHANDLER=1 so that the SIGABRT of a hang's
 * diagnosis makes a Python rank dump every thread), unless the agent's
 * environment has them.
 */
static int
envv_defaults(struct envv *e, const struct worker_env_in *in)
{
	if (envv_omp_default(in->round->local_world_size) &&
	    envv_set(e, "OMP_NUM_THREADS", "1") == -1)
		return -1;
	if (in->hang != NULL &&
	    envv_faulthandler_default(in->hang->python_stacks) &&
	    envv_set(e, "PYTHONFAULTHANDLER", "1") == -1)
		return -1;
	return 0;
}

/* The torchrun variables of the rank. */
static int
envv_torchrun(struct envv *e, const struct worker_env_in *in)
{
	const struct cgrun_options *o = in->opts;
	const struct round_info *r = in->round;
	const char *nccl = getenv("TORCH_NCCL_ASYNC_ERROR_HANDLING");
	int lr = in->lr, rank = r->rank_base + lr;

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
	    envv_set(e, "TORCHELASTIC_ERROR_FILE", in->error_file) ||
	    envv_set(e, "TORCH_NCCL_ASYNC_ERROR_HANDLING", nccl ? nccl : "1"))
		return -1;
	if (o->signals_to_handle != NULL && envv_set(e,
	    "TORCHELASTIC_SIGNALS_TO_HANDLE", o->signals_to_handle))
		return -1;
	return 0;
}

/* The placement plan's variables of the rank (place/plan.h). */
static int
envv_place(struct envv *e, const struct plan_rank_env *p)
{
	if (envv_set(e, "CGRUN_CPU_BIND", p->cpu_bind) ||
	    envv_set(e, "CGRUN_MEM_BIND", p->mem_bind))
		return -1;
	if (p->gpu >= 0 && (envv_seti(e, "CGRUN_GPU", p->gpu) ||
	    envv_set(e, "CGRUN_GPU_BUS_ID", p->gpu_busid) ||
	    (p->gpu_uuid != NULL &&
	    envv_set(e, "CGRUN_GPU_UUID", p->gpu_uuid)) ||
	    envv_seti(e, "CGRUN_LOCAL_DEVICE", p->local_device) ||
	    (p->visible != NULL &&
	    envv_set(e, "CUDA_VISIBLE_DEVICES", p->visible))))
		return -1;
	if (p->numa[0] != '\0' && envv_set(e, "CGRUN_NUMA_NODE", p->numa))
		return -1;
	if (p->cpus[0] != '\0' && envv_set(e, "CGRUN_CPUSET", p->cpus))
		return -1;
	return 0;
}

/* The hang room's variables of the rank (hang/watchdog.h). */
static int
envv_hang(struct envv *e, const struct watchdog_rank_env *h)
{
	if (h->heartbeat_fd >= 0 &&
	    envv_seti(e, "CGRUN_HEARTBEAT_FD", h->heartbeat_fd) == -1)
		return -1;
	if (h->timer_file != NULL &&
	    envv_set(e, "TORCHELASTIC_TIMER_FILE", h->timer_file) == -1)
		return -1;
	return 0;
}

/* Every variable cgrun sets for the rank, in order, into e; 0 or -1. */
static int
envv_rank(struct envv *e, const struct worker_env_in *in)
{
	if (envv_defaults(e, in) == -1 || envv_torchrun(e, in) == -1)
		return -1;
	if (in->place != NULL && envv_place(e, in->place) == -1)
		return -1;
	if (in->hang != NULL && envv_hang(e, in->hang) == -1)
		return -1;
	return 0;
}

/* An empty environment (a lone NULL) to set variables in; 0 or -1. */
static int
envv_empty(struct envv *e)
{
	e->cap = 64;
	e->n = 0;
	if ((e->v = calloc(e->cap, sizeof(*e->v))) == NULL)
		return -1;
	return 0;
}

/* The rank's variables over the agent's environment, or over none. */
static char **
envv_make(const struct worker_env_in *in, int inherit)
{
	struct envv e = { NULL, 0, 0 };

	if ((inherit ? envv_inherit(&e) : envv_empty(&e)) == -1 ||
	    envv_rank(&e, in) == -1) {
		worker_env_free(e.v);
		errno = ENOMEM;
		return NULL;
	}
	return e.v;
}

/* Only the rank's own variables; NULL with errno. */
char **
worker_env_rank(const struct worker_env_in *in)
{
	return envv_make(in, 0);
}

/* The agent's environment with the rank's on top; NULL with errno. */
char **
worker_env_build(const struct worker_env_in *in)
{
	return envv_make(in, 1);
}

/* Free an environment from worker_env_rank() or worker_env_build(). */
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

/* Log the defaults every worker of this agent gets, once, at -v. */
void
worker_env_explain(int nproc, int hang_watchdog)
{
	if (envv_omp_default(nproc))
		log_info("OMP_NUM_THREADS set to 1 for each worker (%d workers "
		    "on this node); set it yourself to tune", nproc);
	if (envv_faulthandler_default(hang_watchdog))
		log_info("PYTHONFAULTHANDLER set to 1 for each worker: a "
		    "hang's diagnosis makes Python ranks dump their stacks");
}

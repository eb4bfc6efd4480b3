/*
 * worker_env.h: WHERE A RANK'S ENVIRONMENT IS BUILT.  Every variable a
 * worker gets is named in worker_env.c, and nowhere else; the rooms that
 * know the values describe them as data:
 *
 *   torchrun 2.x's (DESIGN §3.1), from the options and the round:
 *     LOCAL_RANK RANK GROUP_RANK ROLE_RANK ROLE_NAME LOCAL_WORLD_SIZE
 *     WORLD_SIZE GROUP_WORLD_SIZE ROLE_WORLD_SIZE MASTER_ADDR MASTER_PORT
 *     TORCHELASTIC_{RESTART_COUNT,MAX_RESTARTS,RUN_ID,USE_AGENT_STORE,
 *     ERROR_FILE} TORCH_NCCL_ASYNC_ERROR_HANDLING, and
 *     TORCHELASTIC_SIGNALS_TO_HANDLE with --signals-to-handle;
 *   defaults, unless the agent's environment has them: OMP_NUM_THREADS=1
 *     with several local workers (as torchrun), PYTHONFAULTHANDLER=1 with
 *     a hang watchdog;
 *   the placement plan's (struct plan_rank_env, place/plan.h): CGRUN_CPU_BIND
 *     CGRUN_MEM_BIND CGRUN_GPU CGRUN_GPU_BUS_ID CGRUN_GPU_UUID
 *     CGRUN_LOCAL_DEVICE CUDA_VISIBLE_DEVICES CGRUN_NUMA_NODE CGRUN_CPUSET;
 *   the hang room's (struct watchdog_rank_env, hang/watchdog.h):
 *     CGRUN_HEARTBEAT_FD TORCHELASTIC_TIMER_FILE.
 *
 * Built in the agent (never in the child, never by changing the agent's
 * own environment), as a NULL-terminated array of "NAME=VALUE" strings.
 */
#ifndef CGRUN_WORKER_ENV_H
#define CGRUN_WORKER_ENV_H

struct cgrun_options;
struct plan_rank_env;
struct round_info;
struct watchdog_rank_env;

/* Everything one rank's environment is made of (owned by the caller). */
struct worker_env_in {
	const struct cgrun_options	*opts;
	const struct round_info		*round;
	int				 lr;		/* local rank */
	const char			*error_file;
	const struct plan_rank_env	*place;		/* or NULL */
	const struct watchdog_rank_env	*hang;	/* or NULL */
};

/*
 * Only what cgrun sets for the rank, in order, on top of the agent's
 * environment (which a process that already has it, e.g. a pre-started
 * interpreter, applies by name).  NULL with errno (ENOMEM).
 */
char  **worker_env_rank(const struct worker_env_in *);
/*
 * The agent's environment with the rank's variables on top (an existing
 * name keeps its place, a new one is appended): a worker's whole envp.
 * NULL with errno (ENOMEM).
 */
char  **worker_env_build(const struct worker_env_in *);
/* Free what worker_env_rank() or worker_env_build() returned; NULL ok. */
void	worker_env_free(char **);

/*
 * Say once, at -v, which defaults every worker of this agent gets
 * (OMP_NUM_THREADS with nproc > 1, PYTHONFAULTHANDLER with a watchdog).
 */
void	worker_env_explain(int nproc, int hang_watchdog);

#endif

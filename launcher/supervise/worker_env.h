/*
 * worker_env.h: the environment of one worker, torchrun 2.x variable for
 * variable (DESIGN §3.1): the agent's environment, then LOCAL_RANK, RANK,
 * GROUP_RANK, ROLE_RANK, ROLE_NAME, LOCAL_WORLD_SIZE, WORLD_SIZE,
 * GROUP_WORLD_SIZE, ROLE_WORLD_SIZE, MASTER_ADDR, MASTER_PORT,
 * TORCHELASTIC_{RESTART_COUNT,MAX_RESTARTS,RUN_ID,USE_AGENT_STORE,
 * ERROR_FILE}, TORCH_NCCL_ASYNC_ERROR_HANDLING, and the placement plan's
 * CGRUN_* variables.
 */
#ifndef CGRUN_WORKER_ENV_H
#define CGRUN_WORKER_ENV_H

struct cgrun_options;
struct round_info;
struct plan;

/* A NULL-terminated envp for local rank lr, or NULL (errno set). */
char  **worker_env_build(const struct cgrun_options *, const struct round_info *,
	    int lr, const char *error_file, const struct plan *);
void	worker_env_free(char **);
/*
 * Set name=value in such an environment (replacing it): the hang
 * watchdog's CGRUN_HEARTBEAT_FD and TORCHELASTIC_TIMER_FILE (watchdog.h).
 * 0, or -1 (ENOMEM; *envp is unchanged and still valid).
 */
int	worker_env_put(char ***envp, const char *name, const char *value);

/* In the agent, before any worker: OMP_NUM_THREADS=1 when nproc > 1. */
void	worker_env_agent_defaults(int nproc);
/* With a hang watchdog: PYTHONFAULTHANDLER=1 unless the user set it. */
void	worker_env_faulthandler(int hang_watchdog);

#endif

/*
 * test_worker_env.c: each worker's environment (launcher worker_env.c)
 * holds exactly what DESIGN.md §3.1 lists, torchrun 2.x variable for
 * variable, on top of the agent's own environment: every variable with
 * its value, nothing twice, the agent's stale values replaced, the
 * OMP_NUM_THREADS rule (1 when several local workers and the user did not
 * set it); the placement plan's and the hang room's descriptions written
 * as their variables; the rank's own variables alone (worker_env_rank)
 * laid over the agent's environment give the whole one; and the agent's
 * own environment is never changed.  Each case runs in its own process
 * (Check's fork mode), so clearing and setting the environment stays
 * inside it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "helper_main.h"
#include "options.h"
#include "plan.h"
#include "round.h"
#include "watchdog.h"
#include "worker_env.h"

/* DESIGN.md §3.1: the variables every worker gets, in that order. */
static const char *const design_vars[] = {
	"LOCAL_RANK", "RANK", "GROUP_RANK", "ROLE_RANK", "ROLE_NAME",
	"LOCAL_WORLD_SIZE", "WORLD_SIZE", "GROUP_WORLD_SIZE",
	"ROLE_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
	"TORCHELASTIC_RESTART_COUNT", "TORCHELASTIC_MAX_RESTARTS",
	"TORCHELASTIC_RUN_ID", "TORCHELASTIC_USE_AGENT_STORE",
	"TORCHELASTIC_ERROR_FILE", "TORCH_NCCL_ASYNC_ERROR_HANDLING",
};
#define NDESIGN	(sizeof(design_vars) / sizeof(design_vars[0]))
/* The fixture's node has 4 local workers: OMP_NUM_THREADS=1 too. */
#define NOMP	1

#define ERROR_FILE	"/logs/job7/attempt_2/1/error.json"

static struct cgrun_options opts;
static struct round_info rnd;
static struct worker_env_in in;
static char role[] = "trainer", sigs[] = "SIGTERM,SIGUSR1";

/* An agent environment of two variables, options and round of node 1. */
static void
setup(void)
{
	ck_assert_int_eq(clearenv(), 0);
	setenv("PATH", "/usr/bin:/bin", 1);
	setenv("AGENT_ONLY", "kept", 1);
	memset(&opts, 0, sizeof(opts));
	opts.max_restarts = 3;
	memset(&rnd, 0, sizeof(rnd));
	rnd.round = 4;
	rnd.group_rank = 1;
	rnd.group_world_size = 2;
	rnd.rank_base = 4;
	rnd.world_size = 8;
	rnd.local_world_size = 4;
	snprintf(rnd.master_addr, sizeof(rnd.master_addr), "10.0.0.1");
	rnd.master_port = 29500;
	rnd.restart_count = 2;
	snprintf(rnd.run_id, sizeof(rnd.run_id), "job7");
	memset(&in, 0, sizeof(in));
	in.opts = &opts;
	in.round = &rnd;
	in.error_file = ERROR_FILE;
}

/* Local rank lr's environment with the fixture's options and round. */
static char **
build(int lr)
{
	char **env;

	in.lr = lr;
	ck_assert_ptr_nonnull(env = worker_env_build(&in));
	return env;
}

/* Number of entries in env. */
static int
env_count(char **env)
{
	int n = 0;

	while (env[n] != NULL)
		n++;
	return n;
}

/* The value of name in env (asserting it appears exactly once), or NULL. */
static const char *
env_get(char **env, const char *name)
{
	const char *found = NULL;
	size_t n = strlen(name);

	for (; *env != NULL; env++)
		if (strncmp(*env, name, n) == 0 && (*env)[n] == '=') {
			ck_assert_msg(found == NULL, "%s set twice", name);
			found = *env + n + 1;
		}
	return found;
}

/* Assert name=want in env. */
static void
expect(char **env, const char *name, const char *want)
{
	const char *v = env_get(env, name);

	ck_assert_msg(v != NULL, "%s missing", name);
	ck_assert_msg(strcmp(v, want) == 0, "%s=%s, want %s", name, v, want);
}

/*
 * Every §3.1 variable with its value, plus the agent's two and
 * OMP_NUM_THREADS: nothing else.
 */
START_TEST(exactly_the_torchrun_variables)
{
	char **env = build(1);
	size_t i;

	expect(env, "LOCAL_RANK", "1");
	expect(env, "RANK", "5");
	expect(env, "GROUP_RANK", "1");
	expect(env, "ROLE_RANK", "5");
	expect(env, "ROLE_NAME", "default");
	expect(env, "LOCAL_WORLD_SIZE", "4");
	expect(env, "WORLD_SIZE", "8");
	expect(env, "GROUP_WORLD_SIZE", "2");
	expect(env, "ROLE_WORLD_SIZE", "8");
	expect(env, "MASTER_ADDR", "10.0.0.1");
	expect(env, "MASTER_PORT", "29500");
	expect(env, "TORCHELASTIC_RESTART_COUNT", "2");
	expect(env, "TORCHELASTIC_MAX_RESTARTS", "3");
	expect(env, "TORCHELASTIC_RUN_ID", "job7");
	expect(env, "TORCHELASTIC_USE_AGENT_STORE", "True");
	expect(env, "TORCHELASTIC_ERROR_FILE", ERROR_FILE);
	expect(env, "TORCH_NCCL_ASYNC_ERROR_HANDLING", "1");
	expect(env, "PATH", "/usr/bin:/bin");
	expect(env, "AGENT_ONLY", "kept");
	expect(env, "OMP_NUM_THREADS", "1");
	for (i = 0; i < NDESIGN; i++)
		ck_assert_ptr_nonnull(env_get(env, design_vars[i]));
	ck_assert_int_eq(env_count(env), (int)NDESIGN + NOMP + 2);
	ck_assert_ptr_null(env_get(env, "TORCHELASTIC_SIGNALS_TO_HANDLE"));
	ck_assert_ptr_null(env_get(env, "PYTHONFAULTHANDLER"));
	worker_env_free(env);
}
END_TEST

/* Each local rank gets its own ranks; the rest is the same. */
START_TEST(ranks_per_local_rank)
{
	char **e0 = build(0), **e3 = build(3);

	expect(e0, "LOCAL_RANK", "0");
	expect(e0, "RANK", "4");
	expect(e0, "ROLE_RANK", "4");
	expect(e3, "LOCAL_RANK", "3");
	expect(e3, "RANK", "7");
	expect(e3, "ROLE_RANK", "7");
	expect(e3, "GROUP_RANK", "1");
	ck_assert_int_eq(env_count(e0), env_count(e3));
	worker_env_free(e0);
	worker_env_free(e3);
}
END_TEST

/* Values the agent inherited (an outer torchrun's) are replaced, once. */
START_TEST(agent_values_replaced)
{
	char **env;

	setenv("RANK", "99", 1);
	setenv("WORLD_SIZE", "1", 1);
	setenv("MASTER_PORT", "1", 1);
	setenv("TORCHELASTIC_USE_AGENT_STORE", "False", 1);
	env = build(2);
	expect(env, "RANK", "6");
	expect(env, "WORLD_SIZE", "8");
	expect(env, "MASTER_PORT", "29500");
	expect(env, "TORCHELASTIC_USE_AGENT_STORE", "True");
	ck_assert_int_eq(env_count(env), (int)NDESIGN + NOMP + 2);
	worker_env_free(env);
}
END_TEST

/* The user's TORCH_NCCL_ASYNC_ERROR_HANDLING and --role are kept. */
START_TEST(user_choices_kept)
{
	char **env;

	setenv("TORCH_NCCL_ASYNC_ERROR_HANDLING", "0", 1);
	opts.role = role;
	env = build(0);
	expect(env, "TORCH_NCCL_ASYNC_ERROR_HANDLING", "0");
	expect(env, "ROLE_NAME", "trainer");
	ck_assert_int_eq(env_count(env), (int)NDESIGN + NOMP + 2);
	worker_env_free(env);
}
END_TEST

/* --virtual-local-rank: every worker sees LOCAL_RANK 0, RANK unchanged. */
START_TEST(virtual_local_rank)
{
	char **env;

	opts.virtual_local_rank = 1;
	env = build(3);
	expect(env, "LOCAL_RANK", "0");
	expect(env, "RANK", "7");
	worker_env_free(env);
}
END_TEST

/* --signals-to-handle adds TORCHELASTIC_SIGNALS_TO_HANDLE, as torchrun. */
START_TEST(signals_to_handle)
{
	char **env;

	opts.signals_to_handle = sigs;
	env = build(0);
	expect(env, "TORCHELASTIC_SIGNALS_TO_HANDLE", "SIGTERM,SIGUSR1");
	ck_assert_int_eq(env_count(env), (int)NDESIGN + NOMP + 3);
	worker_env_free(env);
}
END_TEST

/*
 * OMP_NUM_THREADS=1 with several local workers, unless the user set it;
 * never in the agent's own environment.
 */
START_TEST(omp_num_threads_rule)
{
	char **env;

	rnd.local_world_size = 1;
	env = build(0);
	ck_assert_ptr_null(env_get(env, "OMP_NUM_THREADS"));
	ck_assert_int_eq(env_count(env), (int)NDESIGN + 2);
	worker_env_free(env);

	rnd.local_world_size = 4;
	env = build(1);
	expect(env, "OMP_NUM_THREADS", "1");
	ck_assert_int_eq(env_count(env), (int)NDESIGN + 3);
	ck_assert_ptr_null(getenv("OMP_NUM_THREADS"));
	worker_env_free(env);

	setenv("OMP_NUM_THREADS", "8", 1);
	env = build(1);
	expect(env, "OMP_NUM_THREADS", "8");
	ck_assert_int_eq(env_count(env), (int)NDESIGN + 3);
	worker_env_free(env);
}
END_TEST

/*
 * The plan's description of a rank, written as its variables: with a GPU
 * seen alone (gpu-visibility own), and without a GPU or cpus.
 */
START_TEST(placement_variables)
{
	struct plan_rank_env pe;
	char **env;

	memset(&pe, 0, sizeof(pe));
	pe.cpu_bind = "gpu";
	pe.mem_bind = "preferred";
	pe.gpu = 5;
	pe.gpu_busid = "0000:e8:00.0";
	pe.gpu_uuid = "GPU-5";
	pe.local_device = 0;
	pe.visible = "GPU-5";
	snprintf(pe.numa, sizeof(pe.numa), "1");
	snprintf(pe.cpus, sizeof(pe.cpus), "24-35,72-83");
	setenv("CUDA_VISIBLE_DEVICES", "0,5", 1);
	in.place = &pe;
	env = build(1);
	expect(env, "CGRUN_CPU_BIND", "gpu");
	expect(env, "CGRUN_MEM_BIND", "preferred");
	expect(env, "CGRUN_GPU", "5");
	expect(env, "CGRUN_GPU_BUS_ID", "0000:e8:00.0");
	expect(env, "CGRUN_GPU_UUID", "GPU-5");
	expect(env, "CGRUN_LOCAL_DEVICE", "0");
	expect(env, "CUDA_VISIBLE_DEVICES", "GPU-5");
	expect(env, "CGRUN_NUMA_NODE", "1");
	expect(env, "CGRUN_CPUSET", "24-35,72-83");
	/* the agent's CUDA_VISIBLE_DEVICES replaced, not added */
	ck_assert_int_eq(env_count(env), (int)NDESIGN + NOMP + 3 + 8);
	ck_assert_str_eq(getenv("CUDA_VISIBLE_DEVICES"), "0,5");
	worker_env_free(env);

	memset(&pe, 0, sizeof(pe));
	pe.cpu_bind = "none";
	pe.mem_bind = "none";
	pe.gpu = -1;
	env = build(1);
	expect(env, "CGRUN_CPU_BIND", "none");
	expect(env, "CGRUN_MEM_BIND", "none");
	expect(env, "CUDA_VISIBLE_DEVICES", "0,5");
	ck_assert_ptr_null(env_get(env, "CGRUN_GPU"));
	ck_assert_ptr_null(env_get(env, "CGRUN_CPUSET"));
	ck_assert_ptr_null(env_get(env, "CGRUN_NUMA_NODE"));
	ck_assert_int_eq(env_count(env), (int)NDESIGN + NOMP + 3 + 2);
	worker_env_free(env);
}
END_TEST

/*
 * The hang room's description: the heartbeat fd, torch's FileTimer FIFO,
 * and PYTHONFAULTHANDLER=1 for the diagnosis unless the user set it; no
 * watchdog, none of them.
 */
START_TEST(hang_variables)
{
	struct watchdog_rank_env h = { 7, "/logs/timer.fifo", 1 };
	char **env;

	in.hang = &h;
	env = build(0);
	expect(env, "CGRUN_HEARTBEAT_FD", "7");
	expect(env, "TORCHELASTIC_TIMER_FILE", "/logs/timer.fifo");
	expect(env, "PYTHONFAULTHANDLER", "1");
	ck_assert_int_eq(env_count(env), (int)NDESIGN + NOMP + 2 + 3);
	ck_assert_ptr_null(getenv("PYTHONFAULTHANDLER"));
	worker_env_free(env);

	setenv("PYTHONFAULTHANDLER", "0", 1);
	h.heartbeat_fd = -1;	/* FileTimer alone */
	env = build(0);
	expect(env, "PYTHONFAULTHANDLER", "0");
	ck_assert_ptr_null(env_get(env, "CGRUN_HEARTBEAT_FD"));
	ck_assert_int_eq(env_count(env), (int)NDESIGN + NOMP + 3 + 1);
	worker_env_free(env);

	unsetenv("PYTHONFAULTHANDLER");
	watchdog_rank_env(NULL, 0, &h);		/* no watchdog */
	ck_assert_int_eq(h.heartbeat_fd, -1);
	ck_assert_ptr_null(h.timer_file);
	env = build(0);
	ck_assert_ptr_null(env_get(env, "PYTHONFAULTHANDLER"));
	ck_assert_int_eq(env_count(env), (int)NDESIGN + NOMP + 2);
	worker_env_free(env);
}
END_TEST

/* The value of "NAME=VALUE"'s name in env, or NULL (a prefix compare). */
static char **
env_slot(char **env, const char *entry)
{
	size_t n = strcspn(entry, "=");

	for (; *env != NULL; env++)
		if (strncmp(*env, entry, n + 1) == 0)
			return env;
	return NULL;
}

/*
 * worker_env_rank: only what cgrun sets (no agent variable it does not
 * replace), and laid over the agent's environment by name, entry by
 * entry, it gives exactly worker_env_build's environment, in its order
 * (what a pre-started interpreter needs).
 */
START_TEST(rank_only_over_agent_is_whole)
{
	struct watchdog_rank_env h = { 9, "/t/timer.fifo", 1 };
	struct plan_rank_env pe;
	extern char **environ;
	char **own, **whole, **over, **p, **slot;
	int n = 0, i;

	memset(&pe, 0, sizeof(pe));
	pe.cpu_bind = "cores";
	pe.mem_bind = "bind";
	pe.gpu = -1;
	snprintf(pe.cpus, sizeof(pe.cpus), "3");
	setenv("RANK", "99", 1);		/* an outer launcher's */
	in.place = &pe;
	in.hang = &h;
	in.lr = 2;
	ck_assert_ptr_nonnull(own = worker_env_rank(&in));
	ck_assert_ptr_nonnull(whole = worker_env_build(&in));
	ck_assert_ptr_null(env_get(own, "AGENT_ONLY"));
	ck_assert_ptr_null(env_get(own, "PATH"));
	expect(own, "RANK", "6");
	ck_assert_int_eq(env_count(own), (int)NDESIGN + NOMP + 1 + 3 + 2);

	/* the agent's environment, then each of own's by name */
	over = calloc((size_t)env_count(environ) + (size_t)env_count(own) + 1,
	    sizeof(*over));
	ck_assert_ptr_nonnull(over);
	for (p = environ; *p != NULL; p++)
		over[n++] = *p;
	for (p = own; *p != NULL; p++)
		if ((slot = env_slot(over, *p)) != NULL)
			*slot = *p;
		else
			over[n++] = *p;
	ck_assert_int_eq(n, env_count(whole));
	for (i = 0; i < n; i++)
		ck_assert_str_eq(over[i], whole[i]);
	free(over);
	worker_env_free(own);
	worker_env_free(whole);
}
END_TEST

/*
 * An empty agent environment (cgrun started by `env -i`): only the §3.1
 * variables and OMP_NUM_THREADS.  (environ == NULL, as clearenv() leaves
 * it: environ_null.)
 */
START_TEST(empty_agent_environment)
{
	char **env;

	ck_assert_int_eq(clearenv(), 0);
	setenv("GONE", "x", 1);
	unsetenv("GONE");
	env = build(0);
	ck_assert_int_eq(env_count(env), (int)NDESIGN + NOMP);
	worker_env_free(env);
	worker_env_free(NULL);
}
END_TEST

/* environ NULL (clearenv(), and nothing set since): an empty agent
 * environment, only cgrun's variables, not a crash. */
START_TEST(environ_null)
{
	extern char **environ;
	char **env;

	ck_assert_int_eq(clearenv(), 0);
	ck_assert_ptr_null(environ);
	env = build(0);
	ck_assert_ptr_nonnull(env);
	ck_assert_int_eq(env_count(env), (int)NDESIGN + NOMP);
	worker_env_free(env);
}
END_TEST

/* The suite. */
Suite *
test_suite(void)
{
	Suite *s = suite_create("worker_env");
	TCase *tc = tcase_create("env");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, exactly_the_torchrun_variables);
	tcase_add_test(tc, ranks_per_local_rank);
	tcase_add_test(tc, agent_values_replaced);
	tcase_add_test(tc, user_choices_kept);
	tcase_add_test(tc, virtual_local_rank);
	tcase_add_test(tc, signals_to_handle);
	tcase_add_test(tc, omp_num_threads_rule);
	tcase_add_test(tc, placement_variables);
	tcase_add_test(tc, hang_variables);
	tcase_add_test(tc, rank_only_over_agent_is_whole);
	tcase_add_test(tc, empty_agent_environment);
	tcase_add_test(tc, environ_null);
	suite_add_tcase(s, tc);
	return s;
}

/*
 * test_worker_env.c: each worker's environment (launcher worker_env.c)
 * holds exactly what DESIGN.md §3.1 lists, torchrun 2.x variable for
 * variable, on top of the agent's own environment: every variable with
 * its value, nothing twice, the agent's stale values replaced, and the
 * OMP_NUM_THREADS rule (1 when several local workers and the user did not
 * set it).  Each case runs in its own process (Check's fork mode), so
 * clearing and setting the environment stays inside it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "helper_main.h"
#include "options.h"
#include "round.h"
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

#define ERROR_FILE	"/logs/job7/attempt_2/1/error.json"

static struct cgrun_options opts;
static struct round_info rnd;
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
}

/* Local rank lr's environment with the fixture's options and round. */
static char **
build(int lr)
{
	char **env = worker_env_build(&opts, &rnd, lr, ERROR_FILE, NULL);

	ck_assert_ptr_nonnull(env);
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

/* Every §3.1 variable with its value, plus the agent's two: nothing else. */
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
	for (i = 0; i < NDESIGN; i++)
		ck_assert_ptr_nonnull(env_get(env, design_vars[i]));
	ck_assert_int_eq(env_count(env), (int)NDESIGN + 2);
	ck_assert_ptr_null(env_get(env, "OMP_NUM_THREADS"));
	ck_assert_ptr_null(env_get(env, "TORCHELASTIC_SIGNALS_TO_HANDLE"));
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
	ck_assert_int_eq(env_count(env), (int)NDESIGN + 2);
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
	ck_assert_int_eq(env_count(env), (int)NDESIGN + 2);
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
	ck_assert_int_eq(env_count(env), (int)NDESIGN + 3);
	worker_env_free(env);
}
END_TEST

/* OMP_NUM_THREADS=1 with several local workers, unless the user set it. */
START_TEST(omp_num_threads_rule)
{
	char **env;

	worker_env_agent_defaults(1);
	ck_assert_ptr_null(getenv("OMP_NUM_THREADS"));
	env = build(0);
	ck_assert_ptr_null(env_get(env, "OMP_NUM_THREADS"));
	worker_env_free(env);

	worker_env_agent_defaults(4);
	ck_assert_str_eq(getenv("OMP_NUM_THREADS"), "1");
	env = build(1);
	expect(env, "OMP_NUM_THREADS", "1");
	ck_assert_int_eq(env_count(env), (int)NDESIGN + 3);
	worker_env_free(env);

	setenv("OMP_NUM_THREADS", "8", 1);
	worker_env_agent_defaults(4);
	env = build(1);
	expect(env, "OMP_NUM_THREADS", "8");
	worker_env_free(env);
}
END_TEST

/*
 * An empty agent environment (cgrun started by `env -i`): only the §3.1
 * variables.  (environ == NULL, as clearenv() leaves it: environ_null.)
 */
START_TEST(empty_agent_environment)
{
	char **env;

	ck_assert_int_eq(clearenv(), 0);
	setenv("GONE", "x", 1);
	unsetenv("GONE");
	env = build(0);
	ck_assert_int_eq(env_count(env), (int)NDESIGN);
	worker_env_free(env);
	worker_env_free(NULL);
}
END_TEST

/* environ NULL (clearenv(), and nothing set since): an empty agent
 * environment, only the §3.1 variables, not a crash. */
START_TEST(environ_null)
{
	extern char **environ;
	char **env;

	ck_assert_int_eq(clearenv(), 0);
	ck_assert_ptr_null(environ);
	env = build(0);
	ck_assert_ptr_nonnull(env);
	ck_assert_int_eq(env_count(env), (int)NDESIGN);
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
	tcase_add_test(tc, empty_agent_environment);
	tcase_add_test(tc, environ_null);
	suite_add_tcase(s, tc);
	return s;
}

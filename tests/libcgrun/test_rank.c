/*
 * test_rank.c: rank information from the worker environment and the
 * attempt's store connection (libcgrun rank.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <check.h>

#include "cgrun/cgrun.h"
#include "cgrun/rank.h"
#include "cgrun/store.h"
#include "helper_libapi.h"
#include "helper_main.h"

#define MAXENV 32

/* A test environment: a copy of the full torchrun set plus edits. */
struct env {
	char	*v[MAXENV + 1];
	char	 buf[2 * MAXENV][128];	/* never reused */
	int	 n, nbuf;
};

/* Set NAME=value in e (replacing), or remove NAME if value is NULL. */
static void
env_set(struct env *e, const char *name, const char *value)
{
	size_t len = strlen(name);
	int i;

	for (i = 0; i < e->n; i++)
		if (strncmp(e->v[i], name, len) == 0 && e->v[i][len] == '=')
			break;
	if (value == NULL) {
		if (i < e->n) {
			memmove(&e->v[i], &e->v[i + 1],
			    (size_t)(e->n - i) * sizeof(e->v[0]));
			e->n--;
		}
		return;
	}
	ck_assert_int_lt(e->nbuf, 2 * MAXENV);
	if (i == e->n) {
		ck_assert_int_lt(e->n, MAXENV);
		e->n++;
		e->v[e->n] = NULL;
	}
	snprintf(e->buf[e->nbuf], sizeof(e->buf[0]), "%s=%s", name, value);
	e->v[i] = e->buf[e->nbuf++];
}

/* The environment torchrun gives rank 5 of 8 (2 nodes of 4). */
static void
env_full(struct env *e)
{
	memset(e, 0, sizeof(*e));
	env_set(e, "RANK", "5");
	env_set(e, "WORLD_SIZE", "8");
	env_set(e, "LOCAL_RANK", "1");
	env_set(e, "LOCAL_WORLD_SIZE", "4");
	env_set(e, "GROUP_RANK", "1");
	env_set(e, "GROUP_WORLD_SIZE", "2");
	env_set(e, "ROLE_RANK", "5");
	env_set(e, "ROLE_WORLD_SIZE", "8");
	env_set(e, "ROLE_NAME", "trainer");
	env_set(e, "MASTER_ADDR", "node0.example");
	env_set(e, "MASTER_PORT", "29500");
	env_set(e, "TORCHELASTIC_RESTART_COUNT", "2");
	env_set(e, "TORCHELASTIC_MAX_RESTARTS", "3");
	env_set(e, "TORCHELASTIC_RUN_ID", "job42");
	env_set(e, "TORCHELASTIC_USE_AGENT_STORE", "True");
	env_set(e, "PATH", "/usr/bin");
}

/* Expect cgrun_rank_new to fail on e with EINVAL and err containing s. */
static void
expect_fail(struct env *e, const char *s)
{
	char err[CGRUN_ERRLEN] = "";
	struct cgrun_rank *r;

	errno = 0;
	r = cgrun_rank_new((const char *const *)e->v, err);
	ck_assert_ptr_null(r);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_msg(strstr(err, s) != NULL, "err \"%s\" lacks \"%s\"", err,
	    s);
}

START_TEST(full_environment)
{
	char err[CGRUN_ERRLEN] = "", prefix[64];
	struct cgrun_rank *r;
	struct env e;

	env_full(&e);
	r = cgrun_rank_new((const char *const *)e.v, err);
	ck_assert_msg(r != NULL, "%s", err);
	ck_assert_int_eq(cgrun_rank_rank(r), 5);
	ck_assert_int_eq(cgrun_rank_world_size(r), 8);
	ck_assert_int_eq(cgrun_rank_local_rank(r), 1);
	ck_assert_int_eq(cgrun_rank_local_world_size(r), 4);
	ck_assert_int_eq(cgrun_rank_group_rank(r), 1);
	ck_assert_int_eq(cgrun_rank_group_world_size(r), 2);
	ck_assert_int_eq(cgrun_rank_role_rank(r), 5);
	ck_assert_int_eq(cgrun_rank_role_world_size(r), 8);
	ck_assert_str_eq(cgrun_rank_role_name(r), "trainer");
	ck_assert_str_eq(cgrun_rank_master_addr(r), "node0.example");
	ck_assert_int_eq(cgrun_rank_master_port(r), 29500);
	ck_assert_int_eq(cgrun_rank_restart_count(r), 2);
	ck_assert_int_eq(cgrun_rank_max_restarts(r), 3);
	ck_assert_str_eq(cgrun_rank_run_id(r), "job42");
	ck_assert_int_eq(cgrun_rank_store_prefix(r, prefix, sizeof(prefix)),
	    0);
	ck_assert_str_eq(prefix, "/worker/attempt_2");
	errno = 0;
	ck_assert_int_eq(cgrun_rank_store_prefix(r, prefix, 10), -1);
	ck_assert_int_eq(errno, ENAMETOOLONG);
	cgrun_rank_free(r);
	cgrun_rank_free(NULL);
}
END_TEST

START_TEST(defaults_of_optional_variables)
{
	static const char *const opt[] = { "GROUP_RANK", "GROUP_WORLD_SIZE",
	    "ROLE_RANK", "ROLE_WORLD_SIZE", "ROLE_NAME",
	    "TORCHELASTIC_RESTART_COUNT", "TORCHELASTIC_MAX_RESTARTS",
	    "TORCHELASTIC_RUN_ID", "TORCHELASTIC_USE_AGENT_STORE" };
	char err[CGRUN_ERRLEN] = "";
	struct cgrun_rank *r;
	struct env e;
	size_t i;

	env_full(&e);
	for (i = 0; i < sizeof(opt) / sizeof(opt[0]); i++)
		env_set(&e, opt[i], NULL);
	env_set(&e, "WORLD_SIZE", "10");	/* 3 nodes: 4 + 4 + 2 */
	r = cgrun_rank_new((const char *const *)e.v, err);
	ck_assert_msg(r != NULL, "%s", err);
	ck_assert_int_eq(cgrun_rank_group_rank(r), 1);
	ck_assert_int_eq(cgrun_rank_group_world_size(r), 3);
	ck_assert_int_eq(cgrun_rank_role_rank(r), 5);
	ck_assert_int_eq(cgrun_rank_role_world_size(r), 10);
	ck_assert_str_eq(cgrun_rank_role_name(r), "default");
	ck_assert_int_eq(cgrun_rank_restart_count(r), 0);
	ck_assert_int_eq(cgrun_rank_max_restarts(r), 0);
	ck_assert_str_eq(cgrun_rank_run_id(r), "");
	cgrun_rank_free(r);
}
END_TEST

START_TEST(each_missing_required_variable_is_named)
{
	static const char *const req[] = { "RANK", "WORLD_SIZE", "LOCAL_RANK",
	    "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT" };
	char want[64];
	struct env e;
	size_t i;

	for (i = 0; i < sizeof(req) / sizeof(req[0]); i++) {
		env_full(&e);
		env_set(&e, req[i], NULL);
		snprintf(want, sizeof(want), "%s is not set", req[i]);
		expect_fail(&e, want);
	}
	memset(&e, 0, sizeof(e));	/* an empty environment */
	expect_fail(&e, "RANK is not set");
}
END_TEST

START_TEST(malformed_numbers_are_named)
{
	static const char *const bad[] = { "", "abc", "-1", "+1", " 1", "1 ",
	    "1x", "0x10", "1.0", "99999999999999999999", "16777216" };
	char want[128];
	struct env e;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		env_full(&e);
		env_set(&e, "RANK", bad[i]);
		snprintf(want, sizeof(want), "RANK=\"%s\" is not an integer",
		    bad[i]);
		expect_fail(&e, want);
	}
	env_full(&e);
	env_set(&e, "MASTER_PORT", "0");
	expect_fail(&e, "MASTER_PORT=\"0\" is not an integer in [1, 65535]");
	env_set(&e, "MASTER_PORT", "65536");
	expect_fail(&e, "MASTER_PORT=\"65536\"");
	env_full(&e);
	env_set(&e, "WORLD_SIZE", "0");
	expect_fail(&e, "WORLD_SIZE=\"0\"");
	env_full(&e);
	env_set(&e, "TORCHELASTIC_RESTART_COUNT", "two");
	expect_fail(&e, "TORCHELASTIC_RESTART_COUNT=\"two\"");
	env_full(&e);
	env_set(&e, "GROUP_RANK", "x");
	expect_fail(&e, "GROUP_RANK=\"x\"");
	env_full(&e);
	env_set(&e, "MASTER_ADDR", "");
	expect_fail(&e, "MASTER_ADDR is empty");
}
END_TEST

START_TEST(inconsistent_sets_are_named)
{
	struct env e;

	env_full(&e);
	env_set(&e, "RANK", "8");
	expect_fail(&e, "RANK=8 is not below WORLD_SIZE=8");
	env_full(&e);
	env_set(&e, "LOCAL_RANK", "4");
	expect_fail(&e, "LOCAL_RANK=4 is not below LOCAL_WORLD_SIZE=4");
	env_full(&e);
	env_set(&e, "LOCAL_WORLD_SIZE", "9");
	env_set(&e, "WORLD_SIZE", "8");
	expect_fail(&e, "LOCAL_WORLD_SIZE=9 is above WORLD_SIZE=8");
	env_full(&e);
	env_set(&e, "GROUP_RANK", "2");
	expect_fail(&e, "GROUP_RANK=2 is not below GROUP_WORLD_SIZE=2");
	env_full(&e);
	env_set(&e, "ROLE_RANK", "9");
	expect_fail(&e, "ROLE_RANK=9 is not below ROLE_WORLD_SIZE=8");
}
END_TEST

START_TEST(process_environment_and_null_err)
{
	struct cgrun_rank *r;

	setenv("RANK", "0", 1);
	setenv("WORLD_SIZE", "1", 1);
	setenv("LOCAL_RANK", "0", 1);
	setenv("LOCAL_WORLD_SIZE", "1", 1);
	setenv("MASTER_ADDR", "127.0.0.1", 1);
	setenv("MASTER_PORT", "1234", 1);
	r = cgrun_rank_new(NULL, NULL);
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(cgrun_rank_master_port(r), 1234);
	cgrun_rank_free(r);
	unsetenv("MASTER_PORT");
	errno = 0;
	ck_assert_ptr_null(cgrun_rank_new(NULL, NULL));
	ck_assert_int_eq(errno, EINVAL);
}
END_TEST

/* A rank handle for rank 0 of 1 talking to 127.0.0.1:port, attempt n. */
static struct cgrun_rank *
rank_for(struct env *e, int port, const char *attempt)
{
	char p[16], err[CGRUN_ERRLEN] = "";
	struct cgrun_rank *r;

	env_full(e);
	snprintf(p, sizeof(p), "%d", port);
	env_set(e, "MASTER_ADDR", "127.0.0.1");
	env_set(e, "MASTER_PORT", p);
	env_set(e, "TORCHELASTIC_RESTART_COUNT", attempt);
	r = cgrun_rank_new((const char *const *)e->v, err);
	ck_assert_msg(r != NULL, "%s", err);
	return r;
}

START_TEST(store_keys_live_under_the_attempt_prefix)
{
	struct libapi_server srv;
	struct cgrun_store *s, *raw, *s1;
	struct cgrun_rank *r, *r1;
	char err[CGRUN_ERRLEN] = "";
	const char *k[1];
	void *val = NULL;
	size_t len = 0;
	struct env e;

	ck_assert_int_eq(libapi_server_start(&srv), 0);
	r = rank_for(&e, srv.port, "2");
	s = cgrun_rank_store_connect(r, 5000, err);
	ck_assert_msg(s != NULL, "%s", err);
	ck_assert_str_eq(cgrun_store_prefix(s), "/worker/attempt_2");
	ck_assert_int_eq(cgrun_store_set(s, "hello", "world", 5), 0);
	/* The same key as torch's PrefixStore("/worker/attempt_2", store). */
	raw = cgrun_store_connect("127.0.0.1", srv.port, 5000, err);
	ck_assert_msg(raw != NULL, "%s", err);
	ck_assert_int_eq(cgrun_store_get(raw, "/worker/attempt_2/hello", &val,
	    &len), 0);
	ck_assert_uint_eq(len, 5);
	ck_assert_int_eq(memcmp(val, "world", 5), 0);
	free(val);
	/* The next attempt does not see it. */
	r1 = rank_for(&e, srv.port, "3");
	s1 = cgrun_rank_store_connect(r1, 5000, err);
	ck_assert_msg(s1 != NULL, "%s", err);
	k[0] = "hello";
	ck_assert_int_eq(cgrun_store_check(s1, k, 1), 0);
	ck_assert_int_eq(cgrun_store_check(s, k, 1), 1);
	cgrun_store_free(s);
	cgrun_store_free(s1);
	cgrun_store_free(raw);
	cgrun_rank_free(r);
	cgrun_rank_free(r1);
	libapi_server_stop(&srv);
}
END_TEST

START_TEST(store_connect_failures)
{
	struct libapi_server srv;
	char err[CGRUN_ERRLEN] = "";
	struct cgrun_rank *r;
	struct timespec t0, t1;
	struct env e;
	double secs;
	int port;

	/* A port where nothing listens (the server's, after it is gone). */
	ck_assert_int_eq(libapi_server_start(&srv), 0);
	port = srv.port;
	libapi_server_stop(&srv);
	r = rank_for(&e, port, "0");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ck_assert_ptr_null(cgrun_rank_store_connect(r, 300, err));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	ck_assert_msg(secs < 5.0, "connect took %.1f s with a 300 ms timeout",
	    secs);
	ck_assert_msg(err[0] != '\0', "no message");
	cgrun_rank_free(r);

	/* No agent store: refuse clearly instead of hanging. */
	env_full(&e);
	env_set(&e, "TORCHELASTIC_USE_AGENT_STORE", "False");
	r = cgrun_rank_new((const char *const *)e.v, err);
	ck_assert_ptr_nonnull(r);
	errno = 0;
	ck_assert_ptr_null(cgrun_rank_store_connect(r, 300, err));
	ck_assert_int_eq(errno, EPROTONOSUPPORT);
	ck_assert_msg(strstr(err, "TORCHELASTIC_USE_AGENT_STORE") != NULL,
	    "%s", err);
	cgrun_rank_free(r);
}
END_TEST

/* The suite. */
Suite *
test_suite(void)
{
	Suite *s = suite_create("rank");
	TCase *tc = tcase_create("env");

	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, full_environment);
	tcase_add_test(tc, defaults_of_optional_variables);
	tcase_add_test(tc, each_missing_required_variable_is_named);
	tcase_add_test(tc, malformed_numbers_are_named);
	tcase_add_test(tc, inconsistent_sets_are_named);
	tcase_add_test(tc, process_environment_and_null_err);
	suite_add_tcase(s, tc);
	tc = tcase_create("store");
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, store_keys_live_under_the_attempt_prefix);
	tcase_add_test(tc, store_connect_failures);
	suite_add_tcase(s, tc);
	return s;
}

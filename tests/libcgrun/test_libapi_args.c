/*
 * test_libapi_args.c: every public libcgrun function called with NULLs and
 * out-of-range arguments returns the documented failure (-1 or NULL with
 * errno EINVAL, or the getter's documented value) instead of crashing.
 * Check runs each case in its own process, so a segfault is an error.
 */
#include <sys/uio.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "cgrun/barrier.h"
#include "cgrun/cgrun.h"
#include "cgrun/checkpoint.h"
#include "cgrun/rank.h"
#include "cgrun/store.h"
#include "helper_libapi.h"
#include "helper_main.h"

/* A complete torchrun environment for rank 1 of 2. */
static const char *const good_env[] = {
	"RANK=1", "WORLD_SIZE=2", "LOCAL_RANK=1", "LOCAL_WORLD_SIZE=2",
	"MASTER_ADDR=127.0.0.1", "MASTER_PORT=29500",
	"TORCHELASTIC_USE_AGENT_STORE=True", NULL
};

/* Assert an int result of -1 with errno EINVAL. */
#define ASSERT_EINVAL(expr) do {					\
	errno = 0;							\
	ck_assert_int_eq((expr), -1);					\
	ck_assert_int_eq(errno, EINVAL);				\
} while (0)

/* Assert a pointer result of NULL with errno EINVAL. */
#define ASSERT_EINVAL_NULL(expr) do {					\
	errno = 0;							\
	ck_assert_ptr_null((expr));					\
	ck_assert_int_eq(errno, EINVAL);				\
} while (0)

/* After clearenv() environ is NULL: an empty environment, not a crash. */
START_TEST(rank_new_without_environ)
{
	char err[CGRUN_ERRLEN] = "";

	ck_assert_int_eq(clearenv(), 0);
	ASSERT_EINVAL_NULL(cgrun_rank_new(NULL, err));
	ck_assert_msg(strstr(err, "RANK is not set") != NULL, "err: %s", err);
	ASSERT_EINVAL_NULL(cgrun_rank_new(NULL, NULL));
}
END_TEST

/* Every rank getter with a NULL handle: -1 (strings NULL) and EINVAL. */
START_TEST(rank_getters_null)
{
	int (*const ints[])(const struct cgrun_rank *) = {
		cgrun_rank_rank, cgrun_rank_world_size, cgrun_rank_local_rank,
		cgrun_rank_local_world_size, cgrun_rank_group_rank,
		cgrun_rank_group_world_size, cgrun_rank_role_rank,
		cgrun_rank_role_world_size, cgrun_rank_restart_count,
		cgrun_rank_max_restarts, cgrun_rank_master_port,
	};
	const char *(*const strs[])(const struct cgrun_rank *) = {
		cgrun_rank_role_name, cgrun_rank_run_id, cgrun_rank_master_addr,
	};
	size_t i;

	for (i = 0; i < sizeof(ints) / sizeof(ints[0]); i++)
		ASSERT_EINVAL(ints[i](NULL));
	for (i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
		ASSERT_EINVAL_NULL(strs[i](NULL));
	cgrun_rank_free(NULL);
}
END_TEST

/* The store prefix and connection of a NULL handle or into a NULL buffer. */
START_TEST(rank_store_args)
{
	char buf[64], err[CGRUN_ERRLEN] = "";
	struct cgrun_rank *r = cgrun_rank_new(good_env, err);

	ck_assert_msg(r != NULL, "%s", err);
	ASSERT_EINVAL(cgrun_rank_store_prefix(NULL, buf, sizeof(buf)));
	ASSERT_EINVAL(cgrun_rank_store_prefix(r, NULL, 10));
	errno = 0;
	ck_assert_int_eq(cgrun_rank_store_prefix(r, buf, 4), -1);
	ck_assert_int_eq(errno, ENAMETOOLONG);
	ASSERT_EINVAL_NULL(cgrun_rank_store_connect(NULL, 100, err));
	ck_assert_msg(strstr(err, "NULL") != NULL, "err: %s", err);
	ASSERT_EINVAL_NULL(cgrun_rank_store_connect(NULL, 100, NULL));
	/* a valid handle with a bad timeout: the store's own EINVAL */
	ASSERT_EINVAL_NULL(cgrun_rank_store_connect(r, 0, err));
	ck_assert_int_eq(cgrun_rank_rank(r), 1);
	cgrun_rank_free(r);
}
END_TEST

/* A fresh checkpoint directory under /tmp; its path is in dir. */
static struct cgrun_ckpt *
ckpt_fixture(char *dir, size_t len)
{
	char err[CGRUN_ERRLEN] = "";
	struct cgrun_ckpt *c;

	snprintf(dir, len, "/tmp/cgrun-args.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	c = cgrun_ckpt_new(dir, "r0", 2, err);
	ck_assert_msg(c != NULL, "%s", err);
	return c;
}

/* Number of entries other than . and .. in dir. */
static int
dir_entries(const char *dir)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
			n++;
	closedir(d);
	return n;
}

/* Free the set and remove its directory with every file in it. */
static void
ckpt_cleanup(struct cgrun_ckpt *c, const char *dir)
{
	char path[512];
	struct dirent *de;
	DIR *d;

	cgrun_ckpt_free(c);
	if ((d = opendir(dir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (de->d_name[0] != '.' || strlen(de->d_name) > 2)
			unlink(path);
	}
	closedir(d);
	rmdir(dir);
}

/* cgrun_ckpt_new with each argument wrong. */
START_TEST(ckpt_new_args)
{
	char err[CGRUN_ERRLEN];

	ASSERT_EINVAL_NULL(cgrun_ckpt_new(NULL, "r0", 1, err));
	ASSERT_EINVAL_NULL(cgrun_ckpt_new("", "r0", 1, err));
	ASSERT_EINVAL_NULL(cgrun_ckpt_new("/tmp", NULL, 1, err));
	ASSERT_EINVAL_NULL(cgrun_ckpt_new("/tmp", "", 1, err));
	ASSERT_EINVAL_NULL(cgrun_ckpt_new("/tmp", ".hidden", 1, err));
	ASSERT_EINVAL_NULL(cgrun_ckpt_new("/tmp", "a/b", 1, err));
	ASSERT_EINVAL_NULL(cgrun_ckpt_new("/tmp", "r0", 0, NULL));
	ASSERT_EINVAL_NULL(cgrun_ckpt_new("/tmp", "r0", -3, err));
	cgrun_ckpt_free(NULL);
}
END_TEST

/* Saves with a NULL handle or NULL data fail and write nothing. */
START_TEST(ckpt_save_args)
{
	char dir[64], err[CGRUN_ERRLEN] = "";
	struct cgrun_ckpt *c = ckpt_fixture(dir, sizeof(dir));
	char ab[] = "ab";
	struct iovec iov[2] = { { ab, 2 }, { NULL, 5 } };

	ASSERT_EINVAL(cgrun_ckpt_save(NULL, 1, "x", 1, err));
	ck_assert_msg(strstr(err, "NULL") != NULL, "err: %s", err);
	ASSERT_EINVAL(cgrun_ckpt_save(c, 1, NULL, 10, err));
	ASSERT_EINVAL(cgrun_ckpt_save(c, 1, NULL, 10, NULL));
	ASSERT_EINVAL(cgrun_ckpt_savev(NULL, 1, iov, 1, err));
	ASSERT_EINVAL(cgrun_ckpt_savev(c, 1, NULL, 1, err));
	ASSERT_EINVAL(cgrun_ckpt_savev(c, 1, iov, -1, err));
	ASSERT_EINVAL(cgrun_ckpt_savev(c, 1, iov, 2, err));
	ck_assert_int_eq(dir_entries(dir), 0);
	/* no data and no length is an empty checkpoint, not an error */
	ck_assert_int_eq(cgrun_ckpt_save(c, 2, NULL, 0, err), 0);
	ck_assert_int_eq(cgrun_ckpt_savev(c, 3, NULL, 0, err), 0);
	ck_assert_int_eq(dir_entries(dir), 2);
	ckpt_cleanup(c, dir);
}
END_TEST

/* Lookups and loads with a NULL handle or NULL result pointers. */
START_TEST(ckpt_load_args)
{
	char dir[64], buf[256], err[CGRUN_ERRLEN] = "";
	struct cgrun_ckpt *c = ckpt_fixture(dir, sizeof(dir));
	uint64_t step = 0;
	void *data = NULL;
	size_t len = 0;

	ck_assert_int_eq(cgrun_ckpt_save(c, 7, "seven", 5, err), 0);
	ASSERT_EINVAL(cgrun_ckpt_newest(NULL, CGRUN_CKPT_NEWEST, &step, err));
	ASSERT_EINVAL(cgrun_ckpt_newest(c, CGRUN_CKPT_NEWEST, NULL, err));
	ASSERT_EINVAL(cgrun_ckpt_load(NULL, CGRUN_CKPT_NEWEST, &step, &data,
	    &len, err));
	ASSERT_EINVAL(cgrun_ckpt_load(c, CGRUN_CKPT_NEWEST, NULL, &data, &len,
	    err));
	ASSERT_EINVAL(cgrun_ckpt_load(c, CGRUN_CKPT_NEWEST, &step, NULL, &len,
	    err));
	ASSERT_EINVAL(cgrun_ckpt_load(c, CGRUN_CKPT_NEWEST, &step, &data, NULL,
	    NULL));
	ck_assert_ptr_null(data);
	ASSERT_EINVAL(cgrun_ckpt_path(NULL, 7, buf, sizeof(buf)));
	ASSERT_EINVAL(cgrun_ckpt_path(c, 7, NULL, 100));
	errno = 0;
	ck_assert_int_eq(cgrun_ckpt_path(c, 7, buf, 4), -1);
	ck_assert_int_eq(errno, ENAMETOOLONG);
	/* the set is intact after the refused calls */
	ck_assert_int_eq(cgrun_ckpt_load(c, CGRUN_CKPT_NEWEST, &step, &data,
	    &len, err), 1);
	ck_assert_int_eq(step, 7);
	ck_assert_mem_eq(data, "seven", 6);
	free(data);
	ckpt_cleanup(c, dir);
}
END_TEST

/* Every store function with a NULL handle. */
START_TEST(store_null_handle)
{
	const char *keys[1] = { "k" };
	const void *vals[1] = { "v" };
	size_t lens[1] = { 1 }, len;
	void *val, *mv[1];
	int64_t n;

	ASSERT_EINVAL_NULL(cgrun_store_connect(NULL, 29500, 100, NULL));
	ASSERT_EINVAL_NULL(cgrun_store_connect("127.0.0.1", 0, 100, NULL));
	ASSERT_EINVAL_NULL(cgrun_store_connect("127.0.0.1", 65536, 100, NULL));
	ASSERT_EINVAL_NULL(cgrun_store_connect("127.0.0.1", 29500, 0, NULL));
	cgrun_store_free(NULL);
	ASSERT_EINVAL(cgrun_store_set_prefix(NULL, "p"));
	ASSERT_EINVAL_NULL(cgrun_store_prefixed(NULL, "p"));
	ASSERT_EINVAL_NULL(cgrun_store_prefix(NULL));
	ASSERT_EINVAL(cgrun_store_set_timeout(NULL, 100));
	ASSERT_EINVAL(cgrun_store_timeout(NULL));
	/* the message is read after a failure: it leaves errno alone */
	errno = ETIMEDOUT;
	ck_assert_ptr_nonnull(cgrun_store_errmsg(NULL));
	ck_assert_int_eq(errno, ETIMEDOUT);
	ASSERT_EINVAL(cgrun_store_set(NULL, "k", "v", 1));
	ASSERT_EINVAL(cgrun_store_get(NULL, "k", &val, &len));
	ASSERT_EINVAL(cgrun_store_add(NULL, "k", 1, &n));
	ASSERT_EINVAL(cgrun_store_compare_set(NULL, "k", "", 0, "v", 1, NULL,
	    NULL));
	ASSERT_EINVAL(cgrun_store_check(NULL, keys, 1));
	ASSERT_EINVAL(cgrun_store_wait(NULL, keys, 1, 10));
	ASSERT_EINVAL(cgrun_store_delete(NULL, "k"));
	ASSERT_EINVAL(cgrun_store_num_keys(NULL, &n));
	ASSERT_EINVAL(cgrun_store_append(NULL, "k", "v", 1));
	ASSERT_EINVAL(cgrun_store_multi_get(NULL, keys, 1, mv, lens));
	ASSERT_EINVAL(cgrun_store_multi_set(NULL, keys, vals, lens, 1));
	ASSERT_EINVAL(cgrun_barrier(NULL, "b", 0, 1, 10, NULL));
}
END_TEST

static struct libapi_server srv;
static struct cgrun_store *st;

/* Start a store server and connect to it. */
static void
setup(void)
{
	char err[CGRUN_ERRLEN] = "";

	ck_assert_int_eq(libapi_server_start(&srv), 0);
	st = cgrun_store_connect("127.0.0.1", srv.port, 5000, err);
	ck_assert_msg(st != NULL, "%s", err);
}

/* Disconnect and stop the server. */
static void
teardown(void)
{
	cgrun_store_free(st);
	libapi_server_stop(&srv);
}

/* Bad keys, values and result pointers on a live connection. */
START_TEST(store_bad_args)
{
	const char *keys[2] = { "k", NULL }, *one[1] = { "k" };
	const void *vals[2] = { "v", NULL };
	size_t lens[2] = { 1, 3 }, len;
	void *val, *mv[1];

	ASSERT_EINVAL(cgrun_store_set(st, NULL, "v", 1));
	ASSERT_EINVAL(cgrun_store_set(st, "k", NULL, 5));
	ASSERT_EINVAL(cgrun_store_get(st, "k", NULL, &len));
	ASSERT_EINVAL(cgrun_store_get(st, "k", &val, NULL));
	ASSERT_EINVAL(cgrun_store_get(st, NULL, &val, &len));
	ASSERT_EINVAL(cgrun_store_add(st, NULL, 1, NULL));
	ASSERT_EINVAL(cgrun_store_compare_set(st, "k", NULL, 3, "v", 1, NULL,
	    NULL));
	ASSERT_EINVAL(cgrun_store_compare_set(st, "k", "", 0, NULL, 1, NULL,
	    NULL));
	ASSERT_EINVAL(cgrun_store_check(st, NULL, 2));
	ASSERT_EINVAL(cgrun_store_check(st, keys, 2));
	ASSERT_EINVAL(cgrun_store_wait(st, NULL, 1, 10));
	ASSERT_EINVAL(cgrun_store_delete(st, NULL));
	ASSERT_EINVAL(cgrun_store_num_keys(st, NULL));
	ASSERT_EINVAL(cgrun_store_append(st, NULL, "v", 1));
	ASSERT_EINVAL(cgrun_store_append(st, "k", NULL, 1));
	ASSERT_EINVAL(cgrun_store_multi_get(st, one, 1, NULL, lens));
	ASSERT_EINVAL(cgrun_store_multi_get(st, one, 1, mv, NULL));
	ASSERT_EINVAL(cgrun_store_multi_set(st, one, NULL, lens, 1));
	ASSERT_EINVAL(cgrun_store_multi_set(st, keys, vals, lens, 2));
	ASSERT_EINVAL(cgrun_store_set_timeout(st, 0));
	/* a valid handle: its values, errno untouched (no prefix is no error) */
	errno = 0;
	ck_assert_int_gt(cgrun_store_timeout(st), 0);
	ck_assert_ptr_null(cgrun_store_prefix(st));
	ck_assert_int_eq(errno, 0);
	ASSERT_EINVAL_NULL(cgrun_store_prefixed(st, NULL));
	/* argument errors leave the connection usable */
	ck_assert_int_eq(cgrun_store_set(st, "k", "v", 1), 0);
	ck_assert_int_eq(cgrun_store_get(st, "k", &val, &len), 0);
	ck_assert_uint_eq(len, 1);
	ck_assert_mem_eq(val, "v", 2);
	free(val);
}
END_TEST

/* cgrun_barrier with each argument out of its range. */
START_TEST(barrier_bad_args)
{
	char name[CGRUN_BARRIER_MAX_NAME + 2], err[CGRUN_ERRLEN] = "";

	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	ASSERT_EINVAL(cgrun_barrier(st, NULL, 0, 1, 10, err));
	ck_assert_msg(strstr(err, "bad arguments") != NULL, "err: %s", err);
	ASSERT_EINVAL(cgrun_barrier(st, "", 0, 1, 10, err));
	ASSERT_EINVAL(cgrun_barrier(st, "a/b", 0, 1, 10, err));
	ASSERT_EINVAL(cgrun_barrier(st, name, 0, 1, 10, err));
	ASSERT_EINVAL(cgrun_barrier(st, "b", 0, 0, 10, err));
	ASSERT_EINVAL(cgrun_barrier(st, "b", -1, 2, 10, err));
	ASSERT_EINVAL(cgrun_barrier(st, "b", 2, 2, 10, NULL));
	/* the longest name is fine, and one rank passes at once */
	name[CGRUN_BARRIER_MAX_NAME] = '\0';
	ck_assert_int_eq(cgrun_barrier(st, name, 0, 1, 1000, err), 0);
}
END_TEST

/* The version string matches the header's numbers. */
START_TEST(version_string)
{
	char want[32];

	snprintf(want, sizeof(want), "%d.%d.%d", CGRUN_VERSION_MAJOR,
	    CGRUN_VERSION_MINOR, CGRUN_VERSION_PATCH);
	ck_assert_str_eq(cgrun_version(), want);
}
END_TEST

/* The suite: argument checks without a server, then with one. */
Suite *
test_suite(void)
{
	Suite *s = suite_create("libapi_args");
	TCase *tc = tcase_create("no_server"), *live;

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, rank_new_without_environ);
	tcase_add_test(tc, rank_getters_null);
	tcase_add_test(tc, rank_store_args);
	tcase_add_test(tc, ckpt_new_args);
	tcase_add_test(tc, ckpt_save_args);
	tcase_add_test(tc, ckpt_load_args);
	tcase_add_test(tc, store_null_handle);
	tcase_add_test(tc, version_string);
	suite_add_tcase(s, tc);
	live = tcase_create("live_store");
	tcase_set_timeout(live, 30);
	tcase_add_checked_fixture(live, setup, teardown);
	tcase_add_test(live, store_bad_args);
	tcase_add_test(live, barrier_bad_args);
	suite_add_tcase(s, live);
	return s;
}

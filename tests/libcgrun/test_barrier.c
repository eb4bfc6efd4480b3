/*
 * test_barrier.c: the store barrier (libcgrun barrier.c) across processes:
 * reuse with slow ranks, timeouts naming the missing ranks, restarts
 * (attempt prefixes), cleanup of old rounds, store failures; the
 * "arrived" marker's parser (barrier_marker.h) on its own.
 */
#include <sys/wait.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <check.h>

#include "barrier_marker.h"
#include "cgrun/barrier.h"
#include "cgrun/cgrun.h"
#include "cgrun/store.h"
#include "helper_libapi.h"
#include "helper_main.h"

static struct libapi_server srv;

/* A store server per test. */
static void
setup(void)
{
	ck_assert_int_eq(libapi_server_start(&srv), 0);
}

/* Stop the test's server. */
static void
teardown(void)
{
	libapi_server_stop(&srv);
}

/* A client of the test's server with prefix (NULL: none). */
static struct cgrun_store *
client(const char *prefix)
{
	char err[CGRUN_ERRLEN] = "";
	struct cgrun_store *s;

	s = cgrun_store_connect("127.0.0.1", srv.port, 10000, err);
	if (s == NULL) {
		fprintf(stderr, "connect: %s\n", err);
		return NULL;
	}
	if (prefix != NULL && cgrun_store_set_prefix(s, prefix) == -1) {
		cgrun_store_free(s);
		return NULL;
	}
	return s;
}

/* Milliseconds on the monotonic clock. */
static long long
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Sleep ms milliseconds (to make a rank slow, not to wait for anything). */
static void
slow_down(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Wait for n children; the number that exited 0. */
static int
reap(pid_t *pids, int n)
{
	int i, st, ok = 0;

	for (i = 0; i < n; i++)
		if (waitpid(pids[i], &st, 0) == pids[i] && WIFEXITED(st) &&
		    WEXITSTATUS(st) == 0)
			ok++;
	return ok;
}

#define ROUNDS 40
#define WORLD 4

/*
 * One rank: before round i add 1 to "entered/i"; after round i every rank
 * must see WORLD there (nobody left early).  Rank 3 is slow.
 */
static int
reuse_rank(int rank)
{
	char err[CGRUN_ERRLEN], key[32];
	struct cgrun_store *s = client("/worker/attempt_0");
	int64_t v;
	int i;

	if (s == NULL)
		return 1;
	srand((unsigned)(getpid() * 31 + rank));
	for (i = 0; i < ROUNDS; i++) {
		snprintf(key, sizeof(key), "entered/%d", i);
		if (cgrun_store_add(s, key, 1, NULL) == -1)
			return 2;
		if (rank == 3 || rand() % 4 == 0)
			slow_down(rand() % 3);
		if (cgrun_barrier(s, "step", rank, WORLD, 10000, err) == -1) {
			fprintf(stderr, "rank %d round %d: %s\n", rank, i, err);
			return 3;
		}
		if (cgrun_store_add(s, key, 0, &v) == -1 || v != WORLD) {
			fprintf(stderr, "rank %d left round %d with %lld of "
			    "%d in\n", rank, i, (long long)v, WORLD);
			return 4;
		}
	}
	cgrun_store_free(s);
	return 0;
}

START_TEST(reused_by_four_processes_with_slow_ranks)
{
	pid_t pids[WORLD];
	int64_t nkeys = -1;
	struct cgrun_store *s;
	int r;

	for (r = 0; r < WORLD; r++) {
		if ((pids[r] = fork()) == 0)
			_exit(reuse_rank(r));
		ck_assert_int_gt(pids[r], 0);
	}
	ck_assert_int_eq(reap(pids, WORLD), WORLD);
	/* Old rounds were deleted: WORLD seq keys + the last round's 3,
	 * plus the test's own ROUNDS "entered" counters. */
	ck_assert_ptr_nonnull(s = client(NULL));
	ck_assert_int_eq(cgrun_store_num_keys(s, &nkeys), 0);
	ck_assert_int_eq(nkeys, WORLD + 3 + ROUNDS);
	cgrun_store_free(s);
}
END_TEST

START_TEST(timeout_names_the_missing_ranks)
{
	char err[CGRUN_ERRLEN] = "";
	struct cgrun_store *a, *c;
	long long t0, ms;
	pid_t pid;
	int st;

	/* Ranks 0 and 2 of 5 arrive; 1, 3 and 4 never do. */
	if ((pid = fork()) == 0) {
		c = client(NULL);
		_exit(c == NULL || cgrun_barrier(c, "b", 2, 5, 3000, NULL) !=
		    -1 || errno != ETIMEDOUT);
	}
	ck_assert_ptr_nonnull(a = client(NULL));
	t0 = now_ms();
	errno = 0;
	ck_assert_int_eq(cgrun_barrier(a, "b", 0, 5, 700, err), -1);
	ms = now_ms() - t0;
	ck_assert_int_eq(errno, ETIMEDOUT);
	ck_assert_msg(ms >= 650 && ms < 3000, "timed out after %lld ms", ms);
	ck_assert_msg(strstr(err, "never arrived: 1, 3, 4") != NULL, "%s",
	    err);
	ck_assert_msg(strstr(err, "2 of 5 ranks arrived") != NULL, "%s", err);
	ck_assert_msg(strstr(err, "\"b\"") != NULL, "%s", err);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	/* The connection stays usable after the timeout. */
	ck_assert_int_eq(cgrun_store_set(a, "after", "1", 1), 0);
	cgrun_store_free(a);
}
END_TEST

START_TEST(long_missing_lists_are_cut)
{
	char err[CGRUN_ERRLEN] = "";
	struct cgrun_store *a;

	ck_assert_ptr_nonnull(a = client(NULL));
	ck_assert_int_eq(cgrun_barrier(a, "big", 500, 1000, 200, err), -1);
	ck_assert_int_eq(errno, ETIMEDOUT);
	ck_assert_msg(strstr(err, "1 of 1000 ranks arrived") != NULL, "%s",
	    err);
	ck_assert_msg(strstr(err, "never arrived: 0, 1, 2") != NULL, "%s",
	    err);
	ck_assert_msg(strstr(err, "more)") != NULL, "%s", err);
	cgrun_store_free(a);
}
END_TEST

START_TEST(a_restart_never_sees_the_old_attempt)
{
	char err[CGRUN_ERRLEN] = "";
	struct cgrun_store *old, *a0;
	pid_t pid;
	int st;

	/* Attempt 0: rank 1 arrived, then the job failed. */
	ck_assert_ptr_nonnull(old = client("/worker/attempt_0"));
	ck_assert_int_eq(cgrun_barrier(old, "sync", 1, 2, 100, err), -1);
	ck_assert_int_eq(errno, ETIMEDOUT);
	cgrun_store_free(old);
	/* Attempt 1: rank 0 alone must not pass on rank 1's old arrival. */
	ck_assert_ptr_nonnull(a0 = client("/worker/attempt_1"));
	ck_assert_int_eq(cgrun_barrier(a0, "sync", 0, 2, 300, err), -1);
	ck_assert_int_eq(errno, ETIMEDOUT);
	ck_assert_msg(strstr(err, "never arrived: 1") != NULL, "%s", err);
	cgrun_store_free(a0);
	/* Attempt 2 (fresh prefix): both ranks pass, three times. */
	if ((pid = fork()) == 0) {
		struct cgrun_store *b = client("/worker/attempt_2");
		int i, rc = b == NULL;

		for (i = 0; i < 3 && rc == 0; i++)
			rc = cgrun_barrier(b, "sync", 1, 2, 5000, NULL);
		_exit(rc != 0);
	}
	ck_assert_ptr_nonnull(a0 = client("/worker/attempt_2"));
	ck_assert_int_eq(cgrun_barrier(a0, "sync", 0, 2, 5000, err), 0);
	ck_assert_int_eq(cgrun_barrier(a0, "sync", 0, 2, 5000, err), 0);
	ck_assert_int_eq(cgrun_barrier(a0, "sync", 0, 2, 5000, err), 0);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	cgrun_store_free(a0);
}
END_TEST

START_TEST(single_rank_and_bad_arguments)
{
	char err[CGRUN_ERRLEN] = "";
	struct cgrun_store *a;
	int i;

	ck_assert_ptr_nonnull(a = client(NULL));
	for (i = 0; i < 5; i++)
		ck_assert_msg(cgrun_barrier(a, "solo", 0, 1, 1000, err) == 0,
		    "%s", err);
	ck_assert_int_eq(cgrun_barrier(a, "x", 2, 2, 100, err), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(cgrun_barrier(a, "x", -1, 2, 100, err), -1);
	ck_assert_int_eq(cgrun_barrier(a, "x", 0, 0, 100, err), -1);
	ck_assert_int_eq(cgrun_barrier(a, "", 0, 1, 100, err), -1);
	ck_assert_int_eq(cgrun_barrier(a, "a/b", 0, 1, 100, err), -1);
	ck_assert_int_eq(cgrun_barrier(NULL, "x", 0, 1, 100, err), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_msg(strstr(err, "bad arguments") != NULL, "%s", err);
	/* Ranks that disagree on world_size: said so. */
	ck_assert_int_eq(cgrun_barrier(a, "dup", 1, 2, 100, err), -1);
	ck_assert_int_eq(errno, ETIMEDOUT);
	ck_assert_int_eq(cgrun_barrier(a, "dup", 0, 1, 100, err), -1);
	ck_assert_int_eq(errno, EPROTO);
	ck_assert_msg(strstr(err, "disagree") != NULL, "%s", err);
	ck_assert_int_eq(cgrun_store_set_prefix(a, NULL), 0);
	cgrun_store_free(a);
}
END_TEST

START_TEST(store_failure_while_waiting)
{
	char err[CGRUN_ERRLEN] = "";
	struct cgrun_store *a;
	long long t0, ms;

	ck_assert_ptr_nonnull(a = client(NULL));
	ck_assert_int_eq(cgrun_store_set_timeout(a, 500), 0);
	/* The server dies while rank 0 waits for rank 1. */
	if (fork() == 0) {
		slow_down(200);
		kill(srv.pid, SIGKILL);
		_exit(0);
	}
	t0 = now_ms();
	errno = 0;
	ck_assert_int_eq(cgrun_barrier(a, "lost", 0, 2, 20000, err), -1);
	ms = now_ms() - t0;
	ck_assert_int_ne(errno, 0);
	ck_assert_msg(ms < 10000, "noticed after %lld ms", ms);
	ck_assert_msg(strstr(err, "barrier \"lost\"") != NULL, "%s", err);
	/* Later calls fail at once, with the store's text. */
	errno = 0;
	ck_assert_int_eq(cgrun_barrier(a, "lost", 0, 2, 1000, err), -1);
	ck_assert_int_ne(errno, ETIMEDOUT);
	cgrun_store_free(a);
}
END_TEST

/* The marker: ranks ended by ',' count; junk, repeats and big ones not. */
START_TEST(marker_parsing)
{
	const char *text = "3,0,7,x9,,7,99999999999999999999,10,-2,12";
	char seen[10] = { 0 }, buf[64];

	ck_assert_int_eq(barrier_mark(text, strlen(text), seen, 10), 5);
	ck_assert_mem_eq(seen, "\1\0\1\1\0\0\0\1\0\1", 10);
	ck_assert_int_eq(barrier_mark(text, 2, seen, 10), 0);	/* "3," again */
	barrier_missing(seen, 10, buf, sizeof(buf));
	ck_assert_str_eq(buf, "1, 4, 5, 6, 8");
	memset(seen, 1, sizeof(seen));
	barrier_missing(seen, 10, buf, sizeof(buf));
	ck_assert_str_eq(buf, "");
}
END_TEST

/* A missing list longer than its buffer ends with the count left out. */
START_TEST(marker_missing_cut)
{
	char seen[1000] = { 0 }, buf[48];

	barrier_missing(seen, 1000, buf, sizeof(buf));
	ck_assert_str_eq(buf, "0, 1, 2, 3 (and 996 more)");
}
END_TEST

/* The suite. */
Suite *
test_suite(void)
{
	Suite *s = suite_create("barrier");
	TCase *tc = tcase_create("barrier");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, reused_by_four_processes_with_slow_ranks);
	tcase_add_test(tc, timeout_names_the_missing_ranks);
	tcase_add_test(tc, long_missing_lists_are_cut);
	tcase_add_test(tc, a_restart_never_sees_the_old_attempt);
	tcase_add_test(tc, single_rank_and_bad_arguments);
	tcase_add_test(tc, store_failure_while_waiting);
	suite_add_tcase(s, tc);
	tc = tcase_create("marker");
	tcase_set_timeout(tc, 10);
	tcase_add_test(tc, marker_parsing);
	tcase_add_test(tc, marker_missing_cut);
	suite_add_tcase(s, tc);
	return s;
}

/*
 * test_checkpoint.c: crash-safe checkpoints (libcgrun checkpoint.c):
 * round trips, retention, torn and corrupt files, stale temporary files,
 * and a writer killed at random points many times.
 */
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <check.h>

#include "cgrun/checkpoint.h"
#include "ckpt_format.h"
#include "helper_main.h"

static char dir[256];

/* A fresh temporary directory per test. */
static void
setup(void)
{
	snprintf(dir, sizeof(dir), "%s/cgrun-ckpt.XXXXXX",
	    getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

/* Remove the directory and everything in it. */
static void
teardown(void)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
}

/* Number of entries in dir whose name starts with prefix. */
static int
count_files(const char *prefix)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d)) != NULL)
		if (strncmp(de->d_name, prefix, strlen(prefix)) == 0)
			n++;
	closedir(d);
	return n;
}

/* Open the set "rank0" keeping keep files. */
static struct cgrun_ckpt *
open_set(const char *name, int keep)
{
	char err[CGRUN_ERRLEN] = "";
	struct cgrun_ckpt *c = cgrun_ckpt_new(dir, name, keep, err);

	ck_assert_msg(c != NULL, "%s", err);
	return c;
}

/* Save a short text as step. */
static void
save_text(struct cgrun_ckpt *c, uint64_t step, const char *text)
{
	char err[CGRUN_ERRLEN] = "";

	ck_assert_msg(cgrun_ckpt_save(c, step, text, strlen(text), err) == 0,
	    "%s", err);
}

/* Load the newest step <= max and expect want_step with text want. */
static void
expect_load(struct cgrun_ckpt *c, uint64_t max, uint64_t want_step,
    const char *want)
{
	char err[CGRUN_ERRLEN] = "";
	uint64_t step = 0;
	void *data = NULL;
	size_t len = 0;

	ck_assert_msg(cgrun_ckpt_load(c, max, &step, &data, &len, err) == 1,
	    "load: %s", err);
	ck_assert_uint_eq(step, want_step);
	ck_assert_uint_eq(len, strlen(want));
	ck_assert_str_eq((char *)data, want);	/* NUL after the payload */
	free(data);
}

/* Overwrite one byte of step's file at off (negative: from the end). */
static void
poke(struct cgrun_ckpt *c, uint64_t step, long off)
{
	char path[512];
	unsigned char b;
	int fd;

	ck_assert_int_eq(cgrun_ckpt_path(c, step, path, sizeof(path)), 0);
	ck_assert_int_ne(fd = open(path, O_RDWR), -1);
	ck_assert_int_ne(lseek(fd, off, off < 0 ? SEEK_END : SEEK_SET), -1);
	ck_assert_int_eq(read(fd, &b, 1), 1);
	b ^= 0x5a;
	ck_assert_int_ne(lseek(fd, -1, SEEK_CUR), -1);
	ck_assert_int_eq(write(fd, &b, 1), 1);
	close(fd);
}

START_TEST(round_trip_and_newest)
{
	char err[CGRUN_ERRLEN] = "";
	struct cgrun_ckpt *c = open_set("rank0", 5);
	uint64_t step = 99;
	void *data = NULL;
	size_t len = 9;

	ck_assert_int_eq(cgrun_ckpt_load(c, CGRUN_CKPT_NEWEST, &step, &data,
	    &len, err), 0);
	ck_assert_int_eq(cgrun_ckpt_newest(c, CGRUN_CKPT_NEWEST, &step, err),
	    0);
	save_text(c, 10, "ten");
	save_text(c, 2, "two");
	save_text(c, 300, "three hundred");
	expect_load(c, CGRUN_CKPT_NEWEST, 300, "three hundred");
	expect_load(c, 299, 10, "ten");
	expect_load(c, 9, 2, "two");
	ck_assert_int_eq(cgrun_ckpt_load(c, 1, &step, &data, &len, err), 0);
	ck_assert_int_eq(cgrun_ckpt_newest(c, 100, &step, err), 1);
	ck_assert_uint_eq(step, 10);
	errno = 0;
	ck_assert_int_eq(cgrun_ckpt_path(c, 1, err, 8), -1);
	ck_assert_int_eq(errno, ENAMETOOLONG);
	save_text(c, 10, "ten again");	/* a re-save replaces */
	expect_load(c, 10, 10, "ten again");
	cgrun_ckpt_free(c);
	cgrun_ckpt_free(NULL);
	c = open_set("rank0", 5);	/* a new handle finds them */
	expect_load(c, CGRUN_CKPT_NEWEST, 300, "three hundred");
	cgrun_ckpt_free(c);
}
END_TEST

START_TEST(empty_and_vectored_payloads)
{
	char err[CGRUN_ERRLEN] = "", big[100000], head[] = "head:",
	    tail[] = ":tail";
	struct cgrun_ckpt *c = open_set("v", 3);
	struct iovec iov[3];
	uint64_t step;
	void *data;
	size_t len, i;

	ck_assert_int_eq(cgrun_ckpt_save(c, 1, NULL, 0, err), 0);
	expect_load(c, CGRUN_CKPT_NEWEST, 1, "");
	for (i = 0; i < sizeof(big); i++)
		big[i] = (char)(i * 7);
	iov[0].iov_base = head;
	iov[0].iov_len = 5;
	iov[1].iov_base = big;
	iov[1].iov_len = sizeof(big);
	iov[2].iov_base = tail;
	iov[2].iov_len = 5;
	ck_assert_int_eq(cgrun_ckpt_savev(c, 2, iov, 3, err), 0);
	ck_assert_int_eq(cgrun_ckpt_load(c, CGRUN_CKPT_NEWEST, &step, &data,
	    &len, err), 1);
	ck_assert_uint_eq(step, 2);
	ck_assert_uint_eq(len, sizeof(big) + 10);
	ck_assert_int_eq(memcmp(data, "head:", 5), 0);
	ck_assert_int_eq(memcmp((char *)data + 5, big, sizeof(big)), 0);
	ck_assert_int_eq(memcmp((char *)data + 5 + sizeof(big), ":tail", 5), 0);
	free(data);
	ck_assert_int_eq(cgrun_ckpt_savev(c, 3, NULL, 2, err), -1);
	ck_assert_int_eq(errno, EINVAL);
	cgrun_ckpt_free(c);
}
END_TEST

START_TEST(keeps_the_newest_k)
{
	struct cgrun_ckpt *c = open_set("rank1", 3), *other;
	char path[512];
	uint64_t s;

	other = open_set("rank10", 1);	/* a prefix-sharing neighbour */
	save_text(other, 1, "neighbour");
	for (s = 1; s <= 10; s++)
		save_text(c, s, "x");
	ck_assert_int_eq(count_files("rank1-"), 3);
	ck_assert_int_eq(cgrun_ckpt_path(c, 8, path, sizeof(path)), 0);
	ck_assert_int_eq(access(path, F_OK), 0);
	ck_assert_int_eq(cgrun_ckpt_path(c, 7, path, sizeof(path)), 0);
	ck_assert_int_eq(access(path, F_OK), -1);
	/* The neighbour's files are not ours to prune, nor to load. */
	ck_assert_int_eq(count_files("rank10-"), 1);
	expect_load(other, CGRUN_CKPT_NEWEST, 1, "neighbour");
	expect_load(c, CGRUN_CKPT_NEWEST, 10, "x");
	/* A rollback: the step just saved stays beside the newer 8-10. */
	save_text(c, 5, "five");
	ck_assert_int_eq(count_files("rank1-"), 4);
	expect_load(c, 5, 5, "five");
	save_text(c, 6, "six");	/* now 5 goes */
	ck_assert_int_eq(count_files("rank1-"), 4);
	expect_load(c, 7, 6, "six");
	ck_assert_int_eq(cgrun_ckpt_path(c, 5, path, sizeof(path)), 0);
	ck_assert_int_eq(access(path, F_OK), -1);
	cgrun_ckpt_free(c);
	cgrun_ckpt_free(other);
}
END_TEST

START_TEST(torn_or_corrupt_files_are_skipped)
{
	struct cgrun_ckpt *c = open_set("r", 10);
	char path[512], err[CGRUN_ERRLEN];
	uint64_t step;
	int fd;

	save_text(c, 1, "one");
	save_text(c, 2, "two");
	save_text(c, 3, "three");
	save_text(c, 4, "four");
	save_text(c, 5, "five");
	/* 5: truncated inside the payload (a torn copy). */
	ck_assert_int_eq(cgrun_ckpt_path(c, 5, path, sizeof(path)), 0);
	ck_assert_int_eq(truncate(path, 64 + 2), 0);
	expect_load(c, CGRUN_CKPT_NEWEST, 4, "four");
	/* 4: a flipped payload byte. */
	poke(c, 4, -1);
	expect_load(c, CGRUN_CKPT_NEWEST, 3, "three");
	/* 3: a flipped header byte (the step). */
	poke(c, 3, 16);
	expect_load(c, CGRUN_CKPT_NEWEST, 2, "two");
	/* 2: trailing garbage. */
	ck_assert_int_eq(cgrun_ckpt_path(c, 2, path, sizeof(path)), 0);
	ck_assert_int_ne(fd = open(path, O_WRONLY | O_APPEND), -1);
	ck_assert_int_eq(write(fd, "zz", 2), 2);
	close(fd);
	expect_load(c, CGRUN_CKPT_NEWEST, 1, "one");
	ck_assert_int_eq(cgrun_ckpt_newest(c, CGRUN_CKPT_NEWEST, &step, err),
	    1);
	ck_assert_uint_eq(step, 1);
	/* 1: empty file: nothing complete is left. */
	ck_assert_int_eq(cgrun_ckpt_path(c, 1, path, sizeof(path)), 0);
	ck_assert_int_eq(truncate(path, 0), 0);
	ck_assert_int_eq(cgrun_ckpt_newest(c, CGRUN_CKPT_NEWEST, &step, err),
	    0);
	/* A file renamed to another step's name is not that step. */
	save_text(c, 7, "seven");
	{
		char p8[512];

		ck_assert_int_eq(cgrun_ckpt_path(c, 8, p8, sizeof(p8)), 0);
		ck_assert_int_eq(cgrun_ckpt_path(c, 7, path, sizeof(path)), 0);
		ck_assert_int_eq(link(path, p8), 0);
	}
	expect_load(c, CGRUN_CKPT_NEWEST, 7, "seven");
	cgrun_ckpt_free(c);
}
END_TEST

START_TEST(stale_temporary_files_are_removed)
{
	struct cgrun_ckpt *c = open_set("t", 2);
	char host[256] = "", name[600];
	pid_t dead;
	int fd;

	if (gethostname(host, sizeof(host) - 1) == -1 || host[0] == '\0')
		strcpy(host, "localhost");
	/* A pid that surely is dead: a reaped child. */
	if ((dead = fork()) == 0)
		_exit(0);
	ck_assert_int_gt(dead, 0);
	ck_assert_int_eq(waitpid(dead, NULL, 0), dead);
	snprintf(name, sizeof(name), "%s/.t.tmp.%ld.5.%s", dir, (long)dead,
	    host);
	ck_assert_int_ne(fd = open(name, O_WRONLY | O_CREAT, 0644), -1);
	close(fd);
	/* A live writer's (our own parent's) temporary stays. */
	snprintf(name, sizeof(name), "%s/.t.tmp.%ld.6.%s", dir,
	    (long)getppid(), host);
	ck_assert_int_ne(fd = open(name, O_WRONLY | O_CREAT, 0644), -1);
	close(fd);
	ck_assert_int_eq(count_files(".t.tmp."), 2);
	save_text(c, 1, "one");
	ck_assert_int_eq(count_files(".t.tmp."), 1);
	ck_assert_int_eq(access(name, F_OK), 0);
	expect_load(c, CGRUN_CKPT_NEWEST, 1, "one");
	cgrun_ckpt_free(c);
}
END_TEST

START_TEST(bad_arguments)
{
	char err[CGRUN_ERRLEN] = "", path[600];

	errno = 0;
	ck_assert_ptr_null(cgrun_ckpt_new(dir, "", 1, err));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_null(cgrun_ckpt_new(dir, ".hidden", 1, err));
	ck_assert_ptr_null(cgrun_ckpt_new(dir, "a/b", 1, err));
	ck_assert_ptr_null(cgrun_ckpt_new(dir, "ok", 0, err));
	ck_assert_ptr_null(cgrun_ckpt_new(NULL, "ok", 1, err));
	ck_assert_ptr_null(cgrun_ckpt_new("", "ok", 1, err));
	ck_assert_msg(strstr(err, "bad arguments") != NULL, "%s", err);
	/* A directory that cannot be created names itself. */
	snprintf(path, sizeof(path), "%s/missing/deeper", dir);
	ck_assert_ptr_null(cgrun_ckpt_new(path, "ok", 1, err));
	ck_assert_msg(strstr(err, path) != NULL, "%s", err);
	/* A missing last level is created. */
	snprintf(path, sizeof(path), "%s/new", dir);
	{
		struct cgrun_ckpt *c = cgrun_ckpt_new(path, "ok", 1, err);

		ck_assert_msg(c != NULL, "%s", err);
		cgrun_ckpt_free(c);
	}
}
END_TEST

/* The payload of step: 64 KiB .. 1 MiB of words derived from the step. */
static size_t
pattern(uint64_t step, uint64_t *buf, size_t max_words)
{
	size_t n = ((step * 2654435761u) % 16 + 1) * 8192, i;

	if (n > max_words)
		n = max_words;
	for (i = 0; i < n; i++)
		buf[i] = step * 0x9E3779B97F4A7C15ull ^ i;
	return n * sizeof(*buf);
}

/* Writer child: resume from the newest checkpoint and save for ever. */
static void __attribute__((noreturn))
writer(uint64_t *buf, size_t max_words)
{
	char err[CGRUN_ERRLEN];
	struct cgrun_ckpt *c = cgrun_ckpt_new(dir, "w", 3, err);
	uint64_t step = 0;

	if (c == NULL || cgrun_ckpt_newest(c, CGRUN_CKPT_NEWEST, &step, err)
	    == -1)
		_exit(2);
	for (;;) {
		step++;
		if (cgrun_ckpt_save(c, step, buf, pattern(step, buf,
		    max_words), err) == -1)
			_exit(3);
	}
}

/* Every final file of the set must be complete, the newest must match. */
static uint64_t
verify_set(uint64_t *buf, size_t max_words, uint64_t last)
{
	char err[CGRUN_ERRLEN] = "";
	struct cgrun_ckpt *c = open_set("w", 3);
	uint64_t step = 0, s2, got;
	void *data = NULL;
	size_t len = 0;
	int rc;

	rc = cgrun_ckpt_load(c, CGRUN_CKPT_NEWEST, &step, &data, &len, err);
	ck_assert_msg(rc >= 0, "%s", err);
	if (rc == 1) {
		ck_assert_uint_eq(len, pattern(step, buf, max_words));
		ck_assert_msg(memcmp(data, buf, len) == 0,
		    "step %llu: payload differs", (unsigned long long)step);
		free(data);
	}
	ck_assert_msg(step >= last, "newest went back from %llu to %llu",
	    (unsigned long long)last, (unsigned long long)step);
	/* The file of every step still present validates. */
	for (s2 = step; s2 > 0 && s2 + 3 > step; s2--) {
		char path[512];

		ck_assert_int_eq(cgrun_ckpt_path(c, s2, path, sizeof(path)), 0);
		if (access(path, F_OK) == -1)
			continue;
		ck_assert_int_eq(cgrun_ckpt_newest(c, s2, &got, err), 1);
		ck_assert_msg(got == s2, "step %llu's file is torn",
		    (unsigned long long)s2);
	}
	cgrun_ckpt_free(c);
	return step;
}

/*
 * Microseconds a kill may wait: 1.5 times what one save of the largest
 * payload takes on this file system (fsync speed varies a lot), at least
 * 12 ms, at most 200 ms, so kills land before, in and after saves.
 */
static long
kill_window_us(uint64_t *buf, size_t max_words)
{
	char err[CGRUN_ERRLEN];
	struct cgrun_ckpt *c = open_set("calibrate", 1);
	struct timespec t0, t1;
	long us;
	int i;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 1; i <= 3; i++)
		ck_assert_msg(cgrun_ckpt_save(c, (uint64_t)i, buf,
		    pattern(15, buf, max_words), err) == 0, "%s", err);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	cgrun_ckpt_free(c);
	us = ((t1.tv_sec - t0.tv_sec) * 1000000L +
	    (t1.tv_nsec - t0.tv_nsec) / 1000) / 2;	/* 1.5 saves */
	return us < 12000 ? 12000 : us > 200000 ? 200000 : us;
}

START_TEST(writer_killed_at_random_points)
{
	size_t max_words = 16 * 8192;
	uint64_t *buf = malloc(max_words * sizeof(*buf)), last = 0;
	struct timespec ts;
	int i, killed = 0;
	long window;
	pid_t pid;

	ck_assert_ptr_nonnull(buf);
	window = kill_window_us(buf, max_words);
	srand((unsigned)getpid());
	for (i = 0; i < 100; i++) {
		if ((pid = fork()) == 0)
			writer(buf, max_words);
		ck_assert_int_gt(pid, 0);
		ts.tv_sec = 0;
		ts.tv_nsec = (rand() % window) * 1000L;
		nanosleep(&ts, NULL);
		if (kill(pid, SIGKILL) == 0)
			killed++;
		ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
		last = verify_set(buf, max_words, last);
	}
	ck_assert_int_gt(killed, 60);
	ck_assert_msg(last > 0, "no save ever completed in 100 runs");
	fprintf(stderr, "writer killed %d times within %ld ms, reached step "
	    "%llu\n", killed, window / 1000, (unsigned long long)last);
	free(buf);
}
END_TEST

/* The highest steps (20 digits up to UINT64_MAX) are found and loaded. */
START_TEST(highest_steps)
{
	struct cgrun_ckpt *c = open_set("top", 3);

	save_text(c, UINT64_MAX - 1, "below");
	save_text(c, UINT64_MAX, "max");
	expect_load(c, CGRUN_CKPT_NEWEST, UINT64_MAX, "max");
	expect_load(c, UINT64_MAX - 1, UINT64_MAX - 1, "below");
	cgrun_ckpt_free(c);
}
END_TEST

/*
 * A valid header that claims more payload than its file holds (1 TiB) is
 * skipped like a torn file, without allocating what it claims.
 */
START_TEST(claimed_length_beyond_the_file)
{
	struct cgrun_ckpt *c = open_set("big", 3);
	struct ckpt_hdr h = { 2, (uint64_t)1 << 40, 0 };
	unsigned char hdr[CKPT_HDRLEN];
	char path[512], err[CGRUN_ERRLEN] = "";
	uint64_t step = 0;
	int fd;

	save_text(c, 1, "one");
	h.crc = ckpt_crc(0, "xyz", 3);
	ckpt_hdr_encode(hdr, &h);
	ck_assert_int_eq(cgrun_ckpt_path(c, 2, path, sizeof(path)), 0);
	ck_assert_int_ne(fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644), -1);
	ck_assert_int_eq(write(fd, hdr, sizeof(hdr)), (ssize_t)sizeof(hdr));
	ck_assert_int_eq(write(fd, "xyz", 3), 3);
	close(fd);
	expect_load(c, CGRUN_CKPT_NEWEST, 1, "one");
	ck_assert_msg(cgrun_ckpt_newest(c, CGRUN_CKPT_NEWEST, &step, err) == 1,
	    "%s", err);
	ck_assert_uint_eq(step, 1);
	cgrun_ckpt_free(c);
}
END_TEST

/* The suite. */
Suite *
test_suite(void)
{
	Suite *s = suite_create("checkpoint");
	TCase *tc = tcase_create("files");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, round_trip_and_newest);
	tcase_add_test(tc, empty_and_vectored_payloads);
	tcase_add_test(tc, keeps_the_newest_k);
	tcase_add_test(tc, torn_or_corrupt_files_are_skipped);
	tcase_add_test(tc, stale_temporary_files_are_removed);
	tcase_add_test(tc, bad_arguments);
	tcase_add_test(tc, highest_steps);
	tcase_add_test(tc, claimed_length_beyond_the_file);
	suite_add_tcase(s, tc);
	tc = tcase_create("crash");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, writer_killed_at_random_points);
	suite_add_tcase(s, tc);
	return s;
}

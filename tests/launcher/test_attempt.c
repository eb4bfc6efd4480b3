/*
 * test_attempt.c: signalling one process of a rank through the attempt
 * (launcher/supervise/attempt.c, worker.c), the path the hang room's own
 * stop takes (a FileTimer's signal to the process that asked for it):
 * the rank's main process and a child in its process group are reached,
 * a process of another rank, of nobody's (this test itself) or a main
 * process already reaped is refused with ESRCH.  Signal 0 probes without
 * harm: a wrong "sent" shows as 0 instead of -1.
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "attempt.h"
#include "helper_main.h"
#include "logdir.h"
#include "options.h"
#include "round.h"
#include "spawn.h"

#define WAIT_SECS	20	/* for a worker's pid file, or its exit */

static struct cgrun_options opts;
static struct spawn_cmd cmd;
static struct logdir ld;
static struct round_info ri;
static struct event_base *base;
static char dir[] = "/tmp/cgrun-test-attempt.XXXXXX";

/* Before the case (in the runner): the directory its workers write in. */
static void
setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

/*
 * After the case, passed or not (in the runner): kill what its workers
 * may have left running (their process groups), remove the directory.
 */
static void
teardown(void)
{
	char path[PATH_MAX], cmdline[PATH_MAX + 16];
	long pid;
	FILE *f;
	int lr;

	for (lr = 0; lr < 2; lr++) {
		snprintf(path, sizeof(path), "%s/main.%d", dir, lr);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		if (fscanf(f, "%ld", &pid) == 1 && pid > 1)
			killpg((pid_t)pid, SIGKILL);
		fclose(f);
	}
	snprintf(cmdline, sizeof(cmdline), "rm -rf '%s'", dir);
	if (system(cmdline) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
}

/* on_failed and on_all_gone: nothing to decide here. */
static void
failed_cb(void *arg, const char *why)
{
}

static void
gone_cb(void *arg)
{
}

/* The pid written to DIR/NAME.LR by a worker, waiting for it (bounded). */
static pid_t
pid_file(const char *name, int lr)
{
	char path[PATH_MAX];
	long v = 0;
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "%s/%s.%d", dir, name, lr);
	for (i = 0; i < WAIT_SECS * 100; i++) {
		if ((f = fopen(path, "r")) != NULL) {
			if (fscanf(f, "%ld\n", &v) != 1 || !feof(f))
				v = 0;	/* still being written */
			fclose(f);
			if (v > 0)
				return (pid_t)v;
		}
		usleep(10000);
	}
	ck_abort_msg("no %s pid from local rank %d after %d s", name, lr,
	    WAIT_SECS);
	return -1;
}

/* Reap pid (a worker's main process) within WAIT_SECS; its status. */
static int
reap(pid_t pid)
{
	int i, status;

	for (i = 0; i < WAIT_SECS * 100; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return status;
		usleep(10000);
	}
	ck_abort_msg("worker pid %d not gone after %d s", (int)pid, WAIT_SECS);
	return -1;
}

/*
 * Two workers running DIR/w.sh: each writes its pid, starts a child
 * sleeping in its group, writes the child's pid, and exits with its status.
 */
static struct attempt *
start(void)
{
	static char cgrun[] = "cgrun", nproc[] = "--nproc-per-node=2",
	    nopy[] = "--no-python", sh[] = "sh", script[PATH_MAX];
	char *argv[] = { cgrun, nproc, nopy, sh, script, NULL };
	struct attempt_conf c;
	struct attempt *at;
	char err[512];
	FILE *f;

	snprintf(script, sizeof(script), "%s/w.sh", dir);
	ck_assert_ptr_nonnull(f = fopen(script, "w"));
	fprintf(f, "echo $$ > %s/main.$LOCAL_RANK\n"
	    "sleep 60 & echo $! > %s/child.$LOCAL_RANK\nwait $!\n", dir, dir);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(options_parse(&opts, 5, argv, err, sizeof(err)),
	    OPTIONS_OK);
	ck_assert_int_eq(spawn_cmd_build(&cmd, &opts, err, sizeof(err)), 0);
	ck_assert_int_eq(logdir_open(&ld, dir, err, sizeof(err)), 0);
	ck_assert_ptr_nonnull(base = event_base_new());
	memset(&ri, 0, sizeof(ri));
	ri.group_world_size = 1;
	ri.world_size = ri.local_world_size = 2;
	snprintf(ri.master_addr, sizeof(ri.master_addr), "127.0.0.1");
	ri.master_port = 1;
	snprintf(ri.run_id, sizeof(ri.run_id), "attempt-test");
	memset(&c, 0, sizeof(c));
	c.base = base;
	c.opts = &opts;
	c.round = &ri;
	c.cmd = &cmd;
	c.logdir = &ld;
	c.nproc = 2;
	c.on_failed = failed_cb;
	c.on_all_gone = gone_cb;
	ck_assert_ptr_nonnull(at = attempt_new(&c));
	ck_assert_msg(attempt_start(at, err, sizeof(err)) == 0, "start: %s",
	    err);
	return at;
}

/* Each rank's own processes are reached; nobody else's are. */
START_TEST(signal_rank_member)
{
	struct attempt *at = start();
	pid_t main0 = pid_file("main", 0), child0 = pid_file("child", 0);
	pid_t main1 = pid_file("main", 1), child1 = pid_file("child", 1);
	int status;

	ck_assert_int_eq(attempt_signal_rank(at, 0, main0, 0), 0);
	ck_assert_int_eq(attempt_signal_rank(at, 0, child0, 0), 0);
	ck_assert_int_eq(attempt_signal_rank(at, 1, child1, 0), 0);
	/* another rank's, nobody's, no such rank */
	errno = 0;
	ck_assert_int_eq(attempt_signal_rank(at, 0, child1, 0), -1);
	ck_assert_int_eq(errno, ESRCH);
	ck_assert_int_eq(attempt_signal_rank(at, 1, main0, 0), -1);
	ck_assert_int_eq(attempt_signal_rank(at, 0, getpid(), 0), -1);
	ck_assert_int_eq(attempt_signal_rank(at, 0, 1, 0), -1);
	ck_assert_int_eq(attempt_signal_rank(at, 2, main0, 0), -1);
	ck_assert_int_eq(attempt_signal_rank(at, -1, main0, 0), -1);
	ck_assert_int_eq(attempt_signal_rank(at, 0, 0, 0), -1);

	/* a child of rank 0 killed: rank 0's shell exits with its status */
	ck_assert_int_eq(attempt_signal_rank(at, 0, child0, SIGKILL), 0);
	status = reap(main0);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 128 + SIGKILL);
	ck_assert_int_eq(attempt_reaped(at, main0, status), 1);
	/* reaped, its group empty: refused */
	ck_assert_int_eq(attempt_signal_rank(at, 0, main0, 0), -1);
	ck_assert_int_eq(attempt_signal_rank(at, 0, child0, 0), -1);

	attempt_free(at);	/* KILLs rank 1's group */
	status = reap(main1);
	ck_assert(WIFSIGNALED(status));
	event_base_free(base);
	spawn_cmd_free(&cmd);
	options_free(&opts);
}
END_TEST

/* The suite. */
Suite *
test_suite(void)
{
	Suite *s = suite_create("attempt");
	TCase *tc = tcase_create("signal");

	tcase_set_timeout(tc, 60);
	tcase_add_unchecked_fixture(tc, setup, teardown);
	tcase_add_test(tc, signal_rank_member);
	suite_add_tcase(s, tc);
	return s;
}

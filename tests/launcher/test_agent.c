/*
 * test_agent.c: the agent's state x event table (launcher/supervise/
 * agent.c) driven end to end on a real event loop with real tiny worker
 * processes (/bin/true, /bin/false, sleep) and a FAKE rendezvous backend
 * given to agent_new_with_backend().  The fake records every call the agent
 * makes (start, workers_failed, workers_stopped, workers_done, free) and
 * delivers rounds, restarts, failures and "finished" on the next loop turn,
 * as backend.h requires, following a per-test script.
 *
 * Cases: success; a failure with no restart left; failures that restart;
 * a backend restart while workers run; a new round while they run, and
 * while they stop for a restart (stopped, then that round started); a
 * backend failure while they run;
 * SIGTERM while they run; workers ignoring TERM (grace, then KILL); a
 * worker gone only once its pipes hit EOF, or at the drain timeout when a
 * grandchild in another session holds them; every table cell filled.
 */
#include <check.h>
#include <glob.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "agent.h"
#include "backend.h"
#include "exitcodes.h"
#include "options.h"
#include "round.h"
#include "helper_main.h"

#define MAX_ROUNDS 8

/* What the fake does: after a round, on workers_stopped. */
enum fake_do {
	F_NOTHING,
	F_ROUND,	/* deliver the next round */
	F_RESTART,	/* cb->restart: stop the workers for a new round */
	F_FAIL,		/* cb->fail(script.fail_status) */
	F_FINISHED,	/* cb->finished */
	F_SIGNAL,	/* raise(SIGTERM) in the test process (the agent's) */
	F_RESTART_ROUND	/* cb->restart, then the next round at once */
};

/* The test's script for the fake backend. */
static struct {
	int		restarts;		/* rounds given on workers_failed */
	enum fake_do	after[MAX_ROUNDS];	/* AFTER_MS after round i */
	enum fake_do	on_stopped;		/* on workers_stopped */
	int		fail_status;		/* for F_FAIL */
	int		count_rounds;		/* restart_count = round */
} script;

#define AFTER_MS 200

/* What the agent called, and what the fake delivered. */
static struct {
	int	start, failed, stopped, done, freed, rounds;
	char	why[256];
} calls;

struct fake {
	struct backend		 b;	/* first: the agent sees this */
	struct event		*now;	/* deferred delivery (next turn) */
	struct event		*later;	/* script.after[] timer */
	enum fake_do		 next;
	int			 next_status;
	struct round_info	 ri;
};

static void fake_defer(struct fake *, enum fake_do, int);

/* Do what: deliver a callback (never inside an ops call). */
static void
fake_deliver(struct fake *f, enum fake_do what, int status)
{
	struct timeval tv = { 0, AFTER_MS * 1000 };

	switch (what) {
	case F_ROUND:
		f->ri.round = (unsigned)calls.rounds;
		if (script.count_rounds)
			f->ri.restart_count = calls.rounds;
		if (calls.rounds < MAX_ROUNDS &&
		    script.after[calls.rounds] != F_NOTHING)
			evtimer_add(f->later, &tv);
		calls.rounds++;
		f->b.cb.round(f->b.cb.arg, &f->ri);
		break;
	case F_RESTART:
		f->b.cb.restart(f->b.cb.arg, "fake restart");
		break;
	case F_FAIL:
		(f->b.cb.fail)(f->b.cb.arg, status, "fake failure"); /* check.h: fail() */
		break;
	case F_FINISHED:
		f->b.cb.finished(f->b.cb.arg);
		break;
	case F_SIGNAL:
		raise(SIGTERM);
		break;
	case F_RESTART_ROUND:
		f->b.cb.restart(f->b.cb.arg, "fake restart");
		fake_defer(f, F_ROUND, 0);
		break;
	case F_NOTHING:
		break;
	}
}

/* The next-turn event: deliver what an ops call asked for. */
static void
fake_now_cb(evutil_socket_t fd, short what, void *arg)
{
	struct fake *f = arg;

	fake_deliver(f, f->next, f->next_status);
}

/* The script's action AFTER_MS after the latest round. */
static void
fake_later_cb(evutil_socket_t fd, short what, void *arg)
{
	fake_deliver(arg, script.after[calls.rounds - 1], script.fail_status);
}

/* Ask for a delivery on the next loop turn. */
static void
fake_defer(struct fake *f, enum fake_do what, int status)
{
	f->next = what;
	f->next_status = status;
	event_active(f->now, EV_TIMEOUT, 0);
}

/* ops->start: the first round. */
static int
fake_start(struct backend *b, char *err, size_t errlen)
{
	calls.start++;
	fake_defer((struct fake *)b, F_ROUND, 0);
	return 0;
}

/* ops->workers_failed: a restart while the script has some, else fail. */
static void
fake_workers_failed(struct backend *b, const char *why)
{
	struct fake *f = (struct fake *)b;

	calls.failed++;
	snprintf(calls.why, sizeof(calls.why), "%s", why);
	if (f->ri.restart_count < script.restarts) {
		f->ri.restart_count++;
		fake_defer(f, F_ROUND, 0);
	} else
		fake_defer(f, F_FAIL, -1);
}

/* ops->workers_stopped: what the script says. */
static void
fake_workers_stopped(struct backend *b)
{
	calls.stopped++;
	fake_defer((struct fake *)b, script.on_stopped, script.fail_status);
}

/* ops->workers_done: every node is done. */
static void
fake_workers_done(struct backend *b)
{
	calls.done++;
	fake_defer((struct fake *)b, F_FINISHED, 0);
}

/* ops->free. */
static void
fake_free(struct backend *b)
{
	struct fake *f = (struct fake *)b;

	calls.freed++;
	event_free(f->now);
	event_free(f->later);
	free(f);
}

static const struct backend_ops fake_ops = {
	"fake", fake_start, fake_workers_failed, fake_workers_stopped,
	fake_workers_done, fake_free
};

/* The fake's constructor (a backend_new_fn). */
static struct backend *
fake_new(struct event_base *base, const struct backend_config *cfg,
    const struct backend_cb *cb, char *err, size_t errlen)
{
	struct fake *f = calloc(1, sizeof(*f));

	ck_assert_ptr_nonnull(f);
	f->b.ops = &fake_ops;
	f->b.cb = *cb;
	f->b.base = base;
	f->now = event_new(base, -1, 0, fake_now_cb, f);
	f->later = evtimer_new(base, fake_later_cb, f);
	f->ri.group_world_size = 1;
	f->ri.world_size = f->ri.local_world_size = cfg->nproc;
	f->ri.master_port = cfg->store_port;
	snprintf(f->ri.master_addr, sizeof(f->ri.master_addr), "%s",
	    cfg->store_host);
	snprintf(f->ri.run_id, sizeof(f->ri.run_id), "fake");
	return &f->b;
}

/* Seconds on the monotonic clock. */
static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Run cgrun's agent with these options and the fake; its exit status. */
static int
run_agent(const char *const *args, double *secs)
{
	static char *argv[32];
	struct cgrun_options o;
	struct event_base *base;
	struct agent *a;
	char err[512];
	int argc, status, nproc;
	double t0 = now_s();

	for (argc = 0; args[argc] != NULL && argc < 31; argc++)
		argv[argc] = (char *)(uintptr_t)args[argc];
	argv[argc] = NULL;
	ck_assert_int_eq(options_parse(&o, argc, argv, err, sizeof(err)),
	    OPTIONS_OK);
	nproc = atoi(o.nproc_per_node);
	ck_assert_ptr_nonnull(base = event_base_new());
	a = agent_new_with_backend(base, &o, nproc, NULL, fake_new, &status,
	    err, sizeof(err));
	ck_assert_msg(a != NULL, "agent_new_with_backend: %s", err);
	status = agent_run(a);
	agent_free(a);
	event_base_free(base);
	options_free(&o);
	if (secs != NULL)
		*secs = now_s() - t0;
	return status;
}

static void
setup(void)
{
	memset(&script, 0, sizeof(script));
	memset(&calls, 0, sizeof(calls));
}

START_TEST(table_full)
{
	ck_assert_int_eq(agent_table_holes(), 0);
}
END_TEST

/* RDZV -round-> RUNNING -succeeded-> DONE -finished-> EXIT 0. */
START_TEST(success)
{
	const char *args[] = { "cgrun", "--nproc-per-node=2", "--no-python",
		"/bin/true", NULL };

	ck_assert_int_eq(run_agent(args, NULL), CGRUN_EXIT_OK);
	ck_assert_int_eq(calls.start, 1);
	ck_assert_int_eq(calls.rounds, 1);
	ck_assert_int_eq(calls.done, 1);
	ck_assert_int_eq(calls.failed, 0);
	ck_assert_int_eq(calls.stopped, 0);
	ck_assert_int_eq(calls.freed, 1);
}
END_TEST

/* A failure with no restart left: workers_failed, then the worker's code. */
START_TEST(failure)
{
	const char *args[] = { "cgrun", "--nproc-per-node=2", "--no-python",
		"/bin/false", NULL };

	ck_assert_int_eq(run_agent(args, NULL), 1);
	ck_assert_int_eq(calls.failed, 1);
	ck_assert_int_eq(calls.rounds, 1);
	ck_assert_int_eq(calls.done, 0);
	ck_assert_ptr_nonnull(strstr(calls.why, "exited with status 1"));
	ck_assert_int_eq(strncmp(calls.why, "rank ", 5), 0);
}
END_TEST

/* Each failure asks the backend; its new rounds start new attempts. */
START_TEST(failure_restarts)
{
	const char *args[] = { "cgrun", "--nproc-per-node=1", "--no-python",
		"/bin/false", NULL };

	script.restarts = 2;
	ck_assert_int_eq(run_agent(args, NULL), 1);
	ck_assert_int_eq(calls.failed, 3);
	ck_assert_int_eq(calls.rounds, 3);
	ck_assert_int_eq(calls.stopped, 0);
}
END_TEST

/* Backend restart while running: stop (TERM), workers_stopped, new round. */
START_TEST(backend_restart)
{
	const char *args[] = { "cgrun", "--nproc-per-node=2", "--no-python",
		"sleep", "30", NULL };
	double secs;

	script.after[0] = F_RESTART;
	script.on_stopped = F_ROUND;
	script.after[1] = F_FAIL;
	script.fail_status = CGRUN_EXIT_RDZV;
	ck_assert_int_eq(run_agent(args, &secs), CGRUN_EXIT_RDZV);
	ck_assert_int_eq(calls.stopped, 1);
	ck_assert_int_eq(calls.rounds, 2);
	ck_assert_int_eq(calls.failed, 0);	/* no restart spent */
	ck_assert_msg(secs < 10, "took %.1fs", secs);
}
END_TEST

/* A worker that records its attempt (TORCHELASTIC_RESTART_COUNT) in
 * $D/started.N; in attempt 0 it runs until stopped, taking 0.5 s after
 * TERM; in later attempts it exits 0 at once. */
#define ATTEMPT_WORKER "c=$TORCHELASTIC_RESTART_COUNT; " \
	"echo x >\"$D/started.$c\"; [ \"$c\" -gt 0 ] && exit 0; " \
	"trap 'sleep 0.5; exit 0' TERM; sleep 30 & wait"

/* Whether DIR/started.n exists. */
static int
attempt_started(const char *dir, int n)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/started.%d", dir, n);
	return access(path, F_OK) == 0;
}

/* The fake gives round 1 AFTER_MS into round 0 (what: F_ROUND, or
 * F_RESTART_ROUND); nproc ATTEMPT_WORKERs: round 1's must have run and
 * the job succeeded, the backend hearing neither a failure nor "stopped"
 * (the round is already there). */
static void
round_during(enum fake_do what, const char *nproc)
{
	char dir[] = "/tmp/test_agent_XXXXXX", cmd[64];
	const char *args[] = { "cgrun", nproc, "--no-python", "sh", "-c",
		ATTEMPT_WORKER, NULL };

	ck_assert_ptr_nonnull(mkdtemp(dir));
	setenv("D", dir, 1);
	script.count_rounds = 1;
	script.after[0] = what;
	ck_assert_int_eq(run_agent(args, NULL), CGRUN_EXIT_OK);
	ck_assert_int_eq(calls.rounds, 2);
	ck_assert_msg(attempt_started(dir, 1), "round 1's workers never ran");
	ck_assert_int_eq(calls.failed, 0);
	ck_assert_int_eq(calls.stopped, 0);
	ck_assert_int_eq(calls.done, 1);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

/* A round comes while the workers of the last one run (a restarted
 * rendezvous server formed it): they are stopped, the new round starts. */
START_TEST(round_while_running)
{
	round_during(F_ROUND, "--nproc-per-node=2");
}
END_TEST

/* A round comes while the workers stop for a restart (the backend's new
 * round was decided before they were gone): once gone, that round
 * starts. */
START_TEST(round_while_stopping)
{
	round_during(F_RESTART_ROUND, "--nproc-per-node=1");
}
END_TEST

/* Backend failure while running: stop the workers, exit with its status. */
START_TEST(backend_fail)
{
	const char *args[] = { "cgrun", "--nproc-per-node=2", "--no-python",
		"sleep", "30", NULL };
	double secs;

	script.after[0] = F_FAIL;
	script.fail_status = CGRUN_EXIT_RDZV;
	ck_assert_int_eq(run_agent(args, &secs), CGRUN_EXIT_RDZV);
	ck_assert_int_eq(calls.failed, 0);
	ck_assert_int_eq(calls.stopped, 0);
	ck_assert_msg(secs < 10, "took %.1fs", secs);
}
END_TEST

/* SIGTERM while running: forwarded, workers gone, exit 128 + 15. */
START_TEST(signal_running)
{
	const char *args[] = { "cgrun", "--nproc-per-node=2", "--no-python",
		"sleep", "30", NULL };
	double secs;

	script.after[0] = F_SIGNAL;
	ck_assert_int_eq(run_agent(args, &secs), 128 + SIGTERM);
	ck_assert_int_eq(calls.failed, 0);
	ck_assert_int_eq(calls.stopped, 0);
	ck_assert_int_eq(calls.done, 0);
	ck_assert_msg(secs < 10, "took %.1fs", secs);
}
END_TEST

/* Workers ignoring TERM: KILL after --shutdown-timeout, then exit. */
START_TEST(grace_kill)
{
	const char *args[] = { "cgrun", "--nproc-per-node=1", "--no-python",
		"--shutdown-timeout=0.3", "sh", "-c",
		"trap '' TERM; sleep 30; sleep 30", NULL };
	double secs;

	script.after[0] = F_SIGNAL;
	ck_assert_int_eq(run_agent(args, &secs), 128 + SIGTERM);
	ck_assert_msg(secs >= 0.3 && secs < 10, "took %.1fs", secs);
}
END_TEST

/* Whether file holds the line. */
static int
file_has_line(const char *path, const char *want)
{
	char line[256];
	FILE *fp = fopen(path, "r");
	int found = 0;

	if (fp == NULL)
		return 0;
	while (!found && fgets(line, sizeof(line), fp) != NULL)
		found = strcmp(line, want) == 0;
	fclose(fp);
	return found;
}

/*
 * A worker is gone only when reaped AND its pipes are at EOF: a background
 * child (ignoring the TERM sent to leftovers) still writes to the pipe
 * after the worker exited, and its line reaches the log.
 */
START_TEST(pipes_held)
{
	char dir[] = "/tmp/test_agent_XXXXXX", opt[64], path[128];
	glob_t g;
	const char *args[] = { "cgrun", "--nproc-per-node=1", "--no-python",
		"--tee=1", opt, "sh", "-c",
		"trap '' TERM; (sleep 0.5; echo late) & echo first", NULL };
	double secs;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(opt, sizeof(opt), "--log-dir=%s", dir);
	ck_assert_int_eq(run_agent(args, &secs), CGRUN_EXIT_OK);
	snprintf(path, sizeof(path), "%s/fake_*/attempt_0/0/stdout.log", dir);
	ck_assert_int_eq(glob(path, 0, NULL, &g), 0);
	ck_assert_uint_eq(g.gl_pathc, 1);
	snprintf(path, sizeof(path), "%s", g.gl_pathv[0]);
	globfree(&g);
	ck_assert_msg(file_has_line(path, "first\n"), "no first line");
	ck_assert_msg(file_has_line(path, "late\n"), "last line lost");
	ck_assert_msg(secs >= 0.5, "took %.1fs", secs);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(path), 0);
}
END_TEST

/*
 * A grandchild in another session holds the pipe after the worker exited
 * and ignores the TERM sent to leftovers (contain.c finds it outside the
 * worker's group): the worker is gone once the drain timeout (2 s) closes
 * the pipe, not later, and the leftover is then killed.  (The worker
 * waits 0.3 s so the grandchild has set its TERM handler.)
 */
START_TEST(drain_timeout)
{
	const char *args[] = { "cgrun", "--nproc-per-node=1", "--no-python",
		"sh", "-c", "setsid sh -c \"trap '' TERM; sleep 6\" & "
		"sleep 0.3; echo x", NULL };
	double secs;

	ck_assert_int_eq(run_agent(args, &secs), CGRUN_EXIT_OK);
	ck_assert_msg(secs >= 1.5 && secs < 5, "took %.1fs", secs);
}
END_TEST

/* The agent's suite. */
Suite *
test_suite(void)
{
	Suite *s = suite_create("agent");
	TCase *tc = tcase_create("agent");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, table_full);
	tcase_add_test(tc, success);
	tcase_add_test(tc, failure);
	tcase_add_test(tc, failure_restarts);
	tcase_add_test(tc, backend_restart);
	tcase_add_test(tc, round_while_running);
	tcase_add_test(tc, round_while_stopping);
	tcase_add_test(tc, backend_fail);
	tcase_add_test(tc, signal_running);
	tcase_add_test(tc, grace_kill);
	tcase_add_test(tc, pipes_held);
	tcase_add_test(tc, drain_timeout);
	suite_add_tcase(s, tc);
	return s;
}

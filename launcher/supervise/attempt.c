/*
 * attempt.c: the workers of one attempt (attempt.h): its log directory and
 * filter files, every worker started in local rank order, child exits
 * routed to their worker, the gone count, and the failure records.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "attempt.h"
#include "contain.h"
#include "log.h"
#include "logdir.h"
#include "options.h"
#include "report.h"
#include "round.h"
#include "stacks.h"
#include "worker.h"

struct attempt {
	struct attempt_conf	 c;
	struct worker_job	 job;
	struct worker		**w;
	int			 nw, ngone;
	int			 stopping;	/* cgrun stopped the workers */
	int			 diagnosing;	/* attempt_stacks() was called */
	char			 dir[PATH_MAX];	/* BASE/RUN_ID/attempt_N */
	struct report_failure	*fail;
	int			 nfail;
	char			 why[512];	/* the first failure */
	int			 hung_lr;	/* the hung rank, or -1 */
	char			 hung_why[192];
};

/* Milliseconds since the epoch. */
static long long
now_ms(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return (long long)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

/* worker's on_gone: count; the last one tells the owner. */
static void
attempt_gone_cb(void *arg)
{
	struct attempt *at = arg;

	if (++at->ngone == at->nw)
		at->c.on_all_gone(at->c.arg);
}

/* A new attempt with nproc NEW workers. */
struct attempt *
attempt_new(const struct attempt_conf *c)
{
	struct attempt *at;

	if ((at = calloc(1, sizeof(*at))) == NULL)
		return NULL;
	at->c = *c;
	at->job.base = c->base;
	at->job.opts = c->opts;
	at->job.round = c->round;
	at->job.plan = c->plan;
	at->job.cmd = c->cmd;
	at->job.hup_ignored = c->hup_ignored;
	at->job.cgroup_procs = contain_procs(c->contain);
	at->job.wd = c->wd;
	at->hung_lr = -1;
	at->job.filter_out = at->job.filter_err = -1;
	at->job.on_gone = attempt_gone_cb;
	at->job.arg = at;
	if ((at->w = calloc((size_t)c->nproc, sizeof(*at->w))) == NULL)
		goto fail;
	for (at->nw = 0; at->nw < c->nproc; at->nw++)
		if ((at->w[at->nw] = worker_new(&at->job, at->nw)) == NULL)
			goto fail;
	return at;
fail:
	attempt_free(at);
	return NULL;
}

/* Open the attempt's filtered_*.log files when duplicate filters are set. */
static void
attempt_open_filters(struct attempt *at, const char *dir)
{
	char path[PATH_MAX];

	if (at->c.opts->dup_stdout_filters != NULL)
		at->job.filter_out = logdir_file(dir, "filtered_stdout.log",
		    path, sizeof(path));
	if (at->c.opts->dup_stderr_filters != NULL)
		at->job.filter_err = logdir_file(dir, "filtered_stderr.log",
		    path, sizeof(path));
}

/* Every worker that will not start is gone (after a start failure). */
static void
attempt_skip_rest(struct attempt *at)
{
	int i;

	for (i = 0; i < at->nw; i++)
		worker_skip(at->w[i]);
}

/* Start every worker of the round; -1 with err set on failure. */
int
attempt_start(struct attempt *at, char *err, size_t errlen)
{
	const struct round_info *ri = at->c.round;
	char dir[PATH_MAX];
	int i;

	if (logdir_attempt(at->c.logdir, ri->run_id, ri->restart_count, dir,
	    sizeof(dir), err, errlen) == -1) {
		attempt_skip_rest(at);
		return -1;
	}
	attempt_open_filters(at, dir);
	snprintf(at->dir, sizeof(at->dir), "%s", dir);
	for (i = 0; i < at->nw; i++) {
		if (worker_start(at->w[i], dir, err, errlen) == -1) {
			attempt_skip_rest(at);
			return -1;
		}
		contain_track(at->c.contain, worker_pid(at->w[i]));
	}
	log_info("workers started attempt=%d round=%u nproc=%d world_size=%d "
	    "rank_base=%d master=%s:%d", ri->restart_count, ri->round, at->nw,
	    ri->world_size, ri->rank_base, ri->master_addr, ri->master_port);
	return 0;
}

/* Kill what is not reaped, free the workers and the filter files. */
void
attempt_free(struct attempt *at)
{
	int i;

	if (at == NULL)
		return;
	for (i = 0; at->w != NULL && i < at->nw; i++)
		worker_free(at->w[i]);
	free(at->w);
	if (at->job.filter_out >= 0)
		close(at->job.filter_out);
	if (at->job.filter_err >= 0)
		close(at->job.filter_err);
	free(at->fail);
	free(at);
}

/* The hung rank's record f says why and moves to the front (root cause). */
static void
attempt_hung_first(struct attempt *at, struct report_failure *f)
{
	struct report_failure tmp;

	snprintf(f->hung, sizeof(f->hung), "%s", at->hung_why);
	if (f == &at->fail[0])
		return;
	tmp = *f;
	memmove(&at->fail[1], &at->fail[0], (size_t)(f - at->fail) *
	    sizeof(*f));
	at->fail[0] = tmp;
}

/*
 * Record a failed worker for the report; the record (NULL when out of
 * memory), and in *first whether the owner is to hear of the attempt's
 * first failure (on_failed).
 */
static struct report_failure *
attempt_record_failure(struct attempt *at, struct worker *w, int *first)
{
	struct report_failure *f, *nf;
	char how[128];

	*first = 0;
	nf = realloc(at->fail, (size_t)(at->nfail + 1) * sizeof(*nf));
	if (nf == NULL)
		return NULL;
	at->fail = nf;
	f = &at->fail[at->nfail++];
	memset(f, 0, sizeof(*f));
	worker_failure(w, f);
	f->group_rank = at->c.round->group_rank;
	f->when_ms = now_ms();
	f->after_stop = at->stopping;
	f->attempt = at->c.round->restart_count;
	if (f->local_rank == at->hung_lr) {
		attempt_hung_first(at, f);
		f = &at->fail[0];
	}
	if (at->nfail > 1 || at->hung_lr >= 0)
		return f;
	report_describe(how, sizeof(how), f->status);
	snprintf(at->why, sizeof(at->why), "rank %d %s", f->rank, how);
	/* a SIGABRT'd rank is part of the diagnosis */
	*first = !at->diagnosing;
	return f;
}

/*
 * Tell the owner how w ended: rec is its failure record, or NULL when it
 * succeeded.  It is the root cause here when it is the first record and
 * failed before cgrun stopped the workers, or hung.
 */
static void
attempt_tell_exit(struct attempt *at, struct worker *w,
    const struct report_failure *rec)
{
	struct report_failure f;

	if (at->c.on_worker_exit == NULL)
		return;
	if (rec == NULL) {
		memset(&f, 0, sizeof(f));
		worker_failure(w, &f);
		f.group_rank = at->c.round->group_rank;
		f.when_ms = now_ms();
		f.after_stop = at->stopping;
		f.attempt = at->c.round->restart_count;
		rec = &f;
	}
	at->c.on_worker_exit(at->c.arg, rec, rec == &at->fail[0] &&
	    (!rec->after_stop || rec->hung[0] != '\0'));
}

/* Whether every started worker has been reaped. */
static int
attempt_all_reaped(const struct attempt *at)
{
	int i;

	for (i = 0; i < at->nw; i++)
		if (worker_unreaped(at->w[i]))
			return 0;
	return 1;
}

/* Route a reaped child to its worker: log, record, wait for its pipes. */
int
attempt_reaped(struct attempt *at, pid_t pid, int status)
{
	const struct report_failure *rec;
	struct worker *w = NULL;
	int i, first;

	for (i = 0; at != NULL && i < at->nw && w == NULL; i++)
		if (worker_pid(at->w[i]) == pid && worker_unreaped(at->w[i]))
			w = at->w[i];
	if (w == NULL)
		return 0;
	worker_reaped(w, status);
	if (status != 0 || (at->hung_lr >= 0 && w == at->w[at->hung_lr])) {
		rec = attempt_record_failure(at, w, &first);
		attempt_tell_exit(at, w, rec);	/* the exit, then the stop */
		if (first)
			at->c.on_failed(at->c.arg, at->why);
	} else
		attempt_tell_exit(at, w, NULL);
	/* leftovers (a background grandchild, also outside the group: a
	 * setsid daemon) hold the pipes open; contain.c finds them */
	if (worker_state(w) == WORKER_EXITED && attempt_all_reaped(at)) {
		attempt_signal(at, SIGTERM);
		contain_signal(at->c.contain, SIGTERM);
	}
	return 1;
}

/* killpg every worker's group. */
void
attempt_signal(struct attempt *at, int sig)
{
	int i;

	for (i = 0; at != NULL && i < at->nw; i++)
		worker_signal(at->w[i], sig);
}

/* Send sig to every worker's main process (not its group). */
void
attempt_signal_main(struct attempt *at, int sig)
{
	int i;

	for (i = 0; at != NULL && i < at->nw; i++)
		worker_signal_main(at->w[i], sig);
}

/* Send sig to pid, a process of local rank lr's worker; 0 or -1 (errno). */
int
attempt_signal_rank(struct attempt *at, int lr, pid_t pid, int sig)
{
	if (at == NULL || lr < 0 || lr >= at->nw) {
		errno = ESRCH;
		return -1;
	}
	return worker_signal_member(at->w[lr], pid, sig);
}

/* Failures from now on happen after cgrun stopped the workers. */
void
attempt_stopping(struct attempt *at)
{
	if (at != NULL)
		at->stopping = 1;
}

/*
 * Workers still not gone some seconds after SIGKILL (stuck in the kernel,
 * or a grandchild in another group holding a pipe): stop waiting for them,
 * so the job can end or restart (torchrun issue #185414).
 */
void
attempt_abandon(struct attempt *at, int kill_wait_secs)
{
	int i;

	for (i = 0; at != NULL && i < at->nw; i++)
		worker_abandon(at->w[i], kill_wait_secs);
}

/*
 * Local rank lr is hung: root cause of this attempt, with the reason.  Its
 * exit may be recorded already (a Python rank dies of the SIGABRT that
 * dumped its stack): that record moves first.
 */
void
attempt_hung(struct attempt *at, int lr, const char *why)
{
	int i;

	if (at == NULL || lr < 0 || lr >= at->nw || at->hung_lr >= 0)
		return;
	at->hung_lr = lr;
	snprintf(at->hung_why, sizeof(at->hung_why), "%s", why);
	snprintf(at->why, sizeof(at->why), "rank %d %s",
	    worker_rank(at->w[lr]), why);
	for (i = 0; i < at->nfail; i++)
		if (at->fail[i].local_rank == lr) {
			attempt_hung_first(at, &at->fail[i]);
			break;
		}
}

/* The attempt's log directory, or "" before it was made. */
const char *
attempt_dir(const struct attempt *at)
{
	return at != NULL ? at->dir : "";
}

/* The pid of local rank lr's worker, or 0 when it never started. */
pid_t
attempt_pid(const struct attempt *at, int lr)
{
	pid_t pid;

	if (at == NULL || lr < 0 || lr >= at->nw)
		return 0;
	pid = worker_pid(at->w[lr]);
	return pid > 0 ? pid : 0;
}

/* Whether every worker is gone (an attempt with no workers is). */
int
attempt_all_gone(const struct attempt *at)
{
	return at == NULL || at->ngone >= at->nw;
}

/*
 * Take the stacks of every running worker (stacks.h), the rank the
 * detector named flagged; from now on worker exits are part of the
 * diagnosis: recorded "after cgrun stopped it", never on_failed.
 */
struct stacks *
attempt_stacks(struct attempt *at, int flagged, int timeout_ms,
    void (*done)(void *, const char *), void *arg)
{
	struct stacks_target *t;
	struct stacks *s;
	int i, n = 0;

	if ((t = calloc((size_t)at->nw + 1, sizeof(*t))) == NULL)
		return NULL;
	for (i = 0; i < at->nw; i++) {
		if (worker_state(at->w[i]) != WORKER_RUNNING)
			continue;
		t[n].pid = worker_pid(at->w[i]);
		t[n].rank = worker_rank(at->w[i]);
		t[n].local_rank = i;
		t[n].node = at->c.round->group_rank;
		t[n].w = at->w[i];
		t[n].flagged = t[n].rank == flagged;
		n++;
	}
	at->diagnosing = at->stopping = 1;
	s = stacks_collect(at->c.base, t, n, at->dir[0] ? at->dir : NULL,
	    timeout_ms, done, arg);
	free(t);
	return s;
}

/* The failures of the attempt, root cause first. */
const struct report_failure *
attempt_failures(const struct attempt *at, int *n)
{
	*n = at != NULL ? at->nfail : 0;
	return at != NULL ? at->fail : NULL;
}

/* How the first failure ended, or "" when none failed. */
const char *
attempt_why(const struct attempt *at)
{
	return at != NULL ? at->why : "";
}

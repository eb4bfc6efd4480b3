/*
 * agent.c: the per-node agent.  One libevent loop sees child exits
 * (SIGCHLD, reaped with waitpid(-1, WNOHANG) until none is left), worker
 * output, forwarded signals, timers and the rendezvous backend's callbacks.
 *
 * The supervisor is a state machine driven only through agent_event(),
 * which looks the action up in agent_actions[state][event]; actions change
 * state only through agent_enter(), which logs "old -> new".
 *
 * A worker is gone only when it was reaped AND both its pipes hit EOF (or
 * a drain timeout passed after the exit: a grandchild may hold a pipe), so
 * its last lines are never lost.  Stopping a group sends the signal to each
 * worker's process group (grandchildren too), waits --shutdown-timeout, then
 * sends SIGKILL to the groups.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <event2/event.h>

#include "agent.h"
#include "backend.h"
#include "exitcodes.h"
#include "log.h"
#include "options.h"
#include "output.h"
#include "placement.h"
#include "report.h"
#include "spawn.h"
#include "store.h"
#include "template.h"
#include "worker_env.h"

#define AGENT_DRAIN_SECS	2	/* pipe EOF wait after a worker's exit */
#define AGENT_KILL_WAIT_SECS	10	/* exit wait after SIGKILL (D state) */
#define AGENT_HOST_MAX		256

enum agent_state {
	S_RDZV,		/* waiting for a round from the backend */
	S_RUNNING,	/* workers running */
	S_STOPPING,	/* workers signalled, waiting for them to be gone */
	S_DONE,		/* all workers exited 0; waiting for the backend */
	S_EXIT,		/* the loop ends */
	S_NSTATES
};

enum agent_ev {
	E_ROUND,	/* backend: a round is ready */
	E_FAILED,	/* a worker failed (first failure of the attempt) */
	E_SUCCEEDED,	/* every worker gone, all exited 0 */
	E_GONE,		/* every worker gone (after a stop) */
	E_SIGSTOP,	/* TERM, INT, HUP, QUIT (or another handled signal) */
	E_SIGKILL,	/* second INT: kill at once */
	E_GRACE,	/* shutdown timeout expired */
	E_BK_RESTART,	/* backend: stop the workers for a new round */
	E_BK_FAIL,	/* backend: the job cannot go on */
	E_BK_FINISHED,	/* backend: every node done */
	E_NEVENTS
};

static const char *const state_names[] = { "rendezvous", "running",
	"stopping", "done", "exit" };
static const char *const event_names[] = { "round", "failed", "succeeded",
	"gone", "signal", "kill", "grace", "restart", "fail", "finished" };

enum stop_reason { R_NONE, R_FAILURE, R_RESTART, R_SIGNAL, R_BKFAIL };

struct agent;

struct worker {
	struct agent	*a;
	int		 lr, rank;
	pid_t		 pid;
	int		 exec_fd;
	int		 reaped, status, gone;
	struct output	*out, *err;
	struct event	*drain;
	char		 dir[PATH_MAX];
	char		 error_file[PATH_MAX];
	char		 stderr_log[PATH_MAX];
};

struct agent {
	struct event_base	*base;
	const struct cgrun_options *o;
	const struct plan	*plan;
	int			 nproc;
	struct backend		*bk;
	struct store		*store;
	char			 store_host[AGENT_HOST_MAX];
	int			 store_port;
	struct spawn_cmd	 cmd;
	enum agent_state	 state;
	enum stop_reason	 reason;
	struct round_info	 round;
	struct worker		*w;
	int			 nw, ngone;
	struct report_failure	*fail;
	int			 nfail;
	int			 filter_out, filter_err;
	struct event		*sigev[33];
	int			 nsigev;
	struct event		*chld, *grace, *kick;
	int			 stop_sig, nsigint;
	int			 killed;	/* SIGKILL sent this attempt */
	int			 hup_ignored;	/* started under nohup */
	int			 exit_status;
	char			 why[512];
	int			 bk_status;
	char			 log_base[PATH_MAX];
	int			 log_base_tmp;
	char			 host[AGENT_HOST_MAX];
};

typedef void (*agent_action)(struct agent *);
static void agent_event(struct agent *, enum agent_ev);

/* Milliseconds since the epoch. */
static long long
now_ms(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return (long long)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

/* The one place the state changes. */
static void
agent_enter(struct agent *a, enum agent_state s)
{
	log_debug("agent state %s -> %s", state_names[a->state],
	    state_names[s]);
	a->state = s;
	if (s == S_EXIT)
		event_base_loopbreak(a->base);
}

/* End the job with status. */
static void
agent_exit(struct agent *a, int status)
{
	a->exit_status = status;
	agent_enter(a, S_EXIT);
}

/* snprintf that reports truncation: 0, or -1 with ENAMETOOLONG. */
static int __attribute__((format(printf, 3, 4)))
pathf(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

/* mkdir -p. */
static int
mkdirs(const char *path)
{
	char buf[PATH_MAX], *p;

	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	for (p = buf + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) == -1 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(buf, 0755) == -1 && errno != EEXIST)
		return -1;
	return 0;
}

/* Send sig to the process group of every worker of the attempt. */
static void
agent_signal_all(struct agent *a, int sig)
{
	int i;

	for (i = 0; i < a->nw; i++)
		if (a->w[i].pid > 0 && killpg(a->w[i].pid, sig) == -1 &&
		    errno != ESRCH)
			log_warn("killpg pid=%d sig=%d", (int)a->w[i].pid, sig);
}

/* Free the attempt's workers (all gone). */
static void
agent_free_workers(struct agent *a)
{
	int i;

	for (i = 0; i < a->nw; i++) {
		output_free(a->w[i].out);
		output_free(a->w[i].err);
		if (a->w[i].drain != NULL)
			event_free(a->w[i].drain);
		if (a->w[i].exec_fd >= 0)
			close(a->w[i].exec_fd);
	}
	free(a->w);
	a->w = NULL;
	a->nw = a->ngone = 0;
	if (a->filter_out >= 0)
		close(a->filter_out);
	if (a->filter_err >= 0)
		close(a->filter_err);
	a->filter_out = a->filter_err = -1;
}

/* Next loop turn: dispatch E_SUCCEEDED/E_GONE if every worker is gone. */
static void
agent_kick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct agent *a = arg;

	if (a->nw == 0 || a->ngone < a->nw)
		return;
	if (a->state == S_RUNNING && a->nfail == 0)
		agent_event(a, E_SUCCEEDED);
	else if (a->state == S_STOPPING || a->state == S_RUNNING)
		agent_event(a, E_GONE);
}

/* Mark w gone if it was reaped and its pipes are closed. */
static void
worker_check_gone(struct worker *w)
{
	if (w->gone || !w->reaped || !output_eof(w->out) ||
	    !output_eof(w->err))
		return;
	w->gone = 1;
	if (++w->a->ngone == w->a->nw)
		event_active(w->a->kick, EV_TIMEOUT, 0);
}

/* output's on_eof. */
static void
worker_eof_cb(void *arg)
{
	worker_check_gone(arg);
}

/* The drain timeout after an exit: close pipes a grandchild still holds. */
static void
worker_drain_cb(evutil_socket_t fd, short what, void *arg)
{
	struct worker *w = arg;

	log_debug("worker output still open after exit rank=%d; closing",
	    w->rank);
	output_drain(w->out);
	output_drain(w->err);
	worker_check_gone(w);
}

/* Record a failed worker for the report. */
static void
agent_record_failure(struct agent *a, struct worker *w, int exec_errno)
{
	struct report_failure *f, *nf;

	nf = realloc(a->fail, (size_t)(a->nfail + 1) * sizeof(*nf));
	if (nf == NULL)
		return;
	a->fail = nf;
	f = &a->fail[a->nfail++];
	memset(f, 0, sizeof(*f));
	f->rank = w->rank;
	f->local_rank = w->lr;
	f->group_rank = a->round.group_rank;
	f->pid = w->pid;
	f->status = w->status;
	f->exec_errno = exec_errno;
	f->when_ms = now_ms();
	f->after_stop = a->state != S_RUNNING;
	f->attempt = a->round.restart_count;
	snprintf(f->error_file, sizeof(f->error_file), "%s", w->error_file);
	snprintf(f->log_file, sizeof(f->log_file), "%s", w->stderr_log);
}

/* Whether every worker of the attempt has been reaped. */
static int
agent_all_reaped(const struct agent *a)
{
	int i;

	for (i = 0; i < a->nw; i++)
		if (!a->w[i].reaped && a->w[i].pid > 0)
			return 0;
	return 1;
}

/* A worker was reaped: record, react, wait for its pipes. */
static void
worker_reaped(struct agent *a, struct worker *w, int status)
{
	char how[128];
	int e;

	w->reaped = 1;
	w->status = status;
	e = spawn_exec_errno(w->exec_fd);
	w->exec_fd = -1;
	report_describe(how, sizeof(how), status);
	log_info("worker exited rank=%d local_rank=%d pid=%d %s", w->rank,
	    w->lr, (int)w->pid, how);
	if (status != 0) {
		agent_record_failure(a, w, e);
		if (a->state == S_RUNNING && a->nfail == 1) {
			snprintf(a->why, sizeof(a->why), "rank %d %s", w->rank,
			    how);
			agent_event(a, E_FAILED);
		}
	}
	worker_check_gone(w);
	if (!w->gone && agent_all_reaped(a))
		agent_signal_all(a, SIGTERM);	/* leftovers hold the pipes */
	if (!w->gone) {
		struct timeval tv = { AGENT_DRAIN_SECS, 0 };

		w->drain = evtimer_new(a->base, worker_drain_cb, w);
		if (w->drain != NULL)
			evtimer_add(w->drain, &tv);
	}
}

/* SIGCHLD: reap every exited child; unknown ones are reparented orphans. */
static void
agent_sigchld_cb(evutil_socket_t sig, short what, void *arg)
{
	struct agent *a = arg;
	pid_t pid;
	int status, i;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		for (i = 0; i < a->nw; i++)
			if (a->w[i].pid == pid && !a->w[i].reaped) {
				worker_reaped(a, &a->w[i], status);
				break;
			}
	}
}

/* Open a log file of a worker (truncated); -1 with errno. */
static int
open_log(const char *dir, const char *name, char *path, size_t len)
{
	if (pathf(path, len, "%s/%s", dir, name) == -1)
		return -1;
	return open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
}

/* The console prefix of a worker, from --log-prefix or torchrun's env. */
static void
worker_prefix(struct agent *a, struct worker *w, char *buf, size_t len)
{
	const char *tmpl = a->o->log_prefix;
	char rank[16], lr[16], gr[16];
	struct template_var v[4];

	if (tmpl == NULL)
		tmpl = getenv("TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE");
	if (tmpl == NULL)
		tmpl = "[rank${rank}]:";
	snprintf(rank, sizeof(rank), "%d", w->rank);
	snprintf(lr, sizeof(lr), "%d", w->lr);
	snprintf(gr, sizeof(gr), "%d", a->round.group_rank);
	v[0].name = "rank", v[0].value = rank;
	v[1].name = "local_rank", v[1].value = lr;
	v[2].name = "role_name", v[2].value = a->o->role ? a->o->role :
	    "default";
	v[3].name = "group_rank", v[3].value = gr;
	template_expand(tmpl, v, 4, buf, len);
}

/*
 * Set up one stream (1 = stdout, 2 = stderr) of a worker: returns the fd
 * the child gets, and starts an output reader when a pipe is needed.
 * --redirects alone: the file itself; --tee: pipe + file; filtered out of
 * the console and no file: /dev/null.
 */
static int
worker_stream(struct agent *a, struct worker *w, int s, char *prefix)
{
	const struct cgrun_options *o = a->o;
	int red = options_std_for(&o->redirects, w->lr) & s;
	int tee = options_std_for(&o->tee, w->lr) & s;
	int shown = options_rank_shown(o, w->lr);
	const char *filters = s == 1 ? o->dup_stdout_filters :
	    o->dup_stderr_filters;
	char path[PATH_MAX];
	struct output_conf c;
	int file = -1, p[2];
	struct output *out;

	if ((red || tee) && (file = open_log(w->dir, s == 1 ? "stdout.log" :
	    "stderr.log", path, sizeof(path))) == -1)
		return -1;
	if (s == 2 && file >= 0)
		snprintf(w->stderr_log, sizeof(w->stderr_log), "%s", path);
	if (filters == NULL && red && !tee)
		return file;
	if (filters == NULL && !shown && file == -1)
		return open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (pipe2(p, O_CLOEXEC) == -1) {
		if (file >= 0)
			close(file);
		return -1;
	}
	memset(&c, 0, sizeof(c));
	c.console_fd = (shown && !(red && !tee)) ? s : -1;
	c.prefix = prefix;
	c.file_fd = file;
	c.filter_fd = s == 1 ? a->filter_out : a->filter_err;
	c.filters = filters;
	c.on_eof = worker_eof_cb;
	c.arg = w;
	if ((out = output_new(a->base, p[0], &c)) == NULL) {
		close(p[0]);
		close(p[1]);
		if (file >= 0)
			close(file);
		return -1;
	}
	if (s == 1)
		w->out = out;
	else
		w->err = out;
	return p[1];
}

/* Prepare and start one worker; 0, or -1 with err set. */
static int
worker_start(struct agent *a, struct worker *w, const char *attempt_dir,
    char *err, size_t errlen)
{
	struct spawn_req req;
	char prefix[OUTPUT_PREFIX_MAX];
	char **env;
	int fd1, fd2;

	if (pathf(w->dir, sizeof(w->dir), "%s/%d", attempt_dir, w->lr) ==
	    -1 || pathf(w->error_file, sizeof(w->error_file), "%s/error.json",
	    w->dir) == -1 || (mkdir(w->dir, 0755) == -1 && errno != EEXIST)) {
		snprintf(err, errlen, "log directory %.200s: %s", attempt_dir,
		    strerror(errno));
		return -1;
	}
	unlink(w->error_file);
	worker_prefix(a, w, prefix, sizeof(prefix));
	fd1 = worker_stream(a, w, 1, prefix);
	fd2 = fd1 == -1 ? -1 : worker_stream(a, w, 2, prefix);
	env = worker_env_build(a->o, &a->round, w->lr, w->error_file, a->plan);
	memset(&req, 0, sizeof(req));
	req.cmd = &a->cmd;
	req.local_rank = w->lr;
	req.envp = env;
	req.out_fd = fd1;
	req.err_fd = fd2;
	req.plan = a->plan;
	req.hup_ignored = a->hup_ignored;
	if (fd1 == -1 || fd2 == -1 || env == NULL)
		snprintf(err, errlen, "worker %d: %s", w->lr, strerror(errno));
	else
		w->pid = spawn_worker(&req, &w->exec_fd, err, errlen);
	worker_env_free(env);
	if (fd1 >= 0)
		close(fd1);
	if (fd2 >= 0)
		close(fd2);
	return w->pid > 0 ? 0 : -1;
}

/* Open the attempt's filtered_*.log files when duplicate filters are set. */
static void
agent_open_filters(struct agent *a, const char *dir)
{
	char path[PATH_MAX];

	if (a->o->dup_stdout_filters != NULL)
		a->filter_out = open_log(dir, "filtered_stdout.log", path,
		    sizeof(path));
	if (a->o->dup_stderr_filters != NULL)
		a->filter_err = open_log(dir, "filtered_stderr.log", path,
		    sizeof(path));
}

/* Start every worker of the round; -1 with err set on failure. */
static int
agent_spawn_all(struct agent *a, char *err, size_t errlen)
{
	char dir[PATH_MAX];
	int i;

	free(a->fail);
	a->fail = NULL;
	a->nfail = 0;
	if (pathf(dir, sizeof(dir), "%s/%s/attempt_%d", a->log_base,
	    a->round.run_id, a->round.restart_count) == -1) {
		snprintf(err, errlen, "log directory name too long");
		return -1;
	}
	if ((a->w = calloc((size_t)a->nproc, sizeof(*a->w))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	a->nw = a->nproc;
	if (mkdirs(dir) == -1) {
		snprintf(err, errlen, "log directory %.200s: %s", dir,
		    strerror(errno));
		return -1;
	}
	agent_open_filters(a, dir);
	for (i = 0; i < a->nw; i++) {
		a->w[i].a = a;
		a->w[i].lr = i;
		a->w[i].rank = a->round.rank_base + i;
		a->w[i].exec_fd = -1;
	}
	for (i = 0; i < a->nw; i++)
		if (worker_start(a, &a->w[i], dir, err, errlen) == -1) {
			for (; i < a->nw; i++)
				a->w[i].gone = 1, a->ngone++;
			return -1;
		}
	log_info("workers started attempt=%d round=%u nproc=%d world_size=%d "
	    "rank_base=%d master=%s:%d", a->round.restart_count,
	    a->round.round, a->nw, a->round.world_size, a->round.rank_base,
	    a->round.master_addr, a->round.master_port);
	return 0;
}

/* Begin stopping: signal every group, arm the grace timer. */
static void
agent_stop(struct agent *a, enum stop_reason r, int sig)
{
	struct timeval tv;
	double t = a->o->shutdown_timeout;

	if (a->reason != R_SIGNAL)
		a->reason = r;
	log_info("stopping workers sig=%s grace=%.1fs", options_signame(sig),
	    t);
	agent_signal_all(a, sig);
	if (a->state != S_STOPPING) {
		tv.tv_sec = (time_t)t;
		tv.tv_usec = (suseconds_t)((t - (double)tv.tv_sec) * 1e6);
		evtimer_add(a->grace, &tv);
		agent_enter(a, S_STOPPING);
	}
	event_active(a->kick, EV_TIMEOUT, 0);
}

/* RDZV/DONE + round: spawn the new attempt. */
static void
act_spawn(struct agent *a)
{
	char err[512];

	a->reason = R_NONE;
	a->killed = 0;
	agent_free_workers(a);
	agent_enter(a, S_RUNNING);
	if (agent_spawn_all(a, err, sizeof(err)) == -1) {
		log_warnx("cannot start workers: %s", err);
		a->bk_status = CGRUN_EXIT_INTERNAL;
		snprintf(a->why, sizeof(a->why), "%s", err);
		agent_stop(a, R_BKFAIL, SIGKILL);
	}
}

/* RUNNING + failed: stop the rest, then tell the backend. */
static void
act_stop_failure(struct agent *a)
{
	agent_stop(a, R_FAILURE, SIGTERM);
}

/* RUNNING + succeeded: the exit barrier (backend). */
static void
act_done(struct agent *a)
{
	agent_enter(a, S_DONE);
	a->bk->ops->workers_done(a->bk);
}

/* RUNNING/STOPPING + signal: forward it, stop, exit afterwards. */
static void
act_stop_signal(struct agent *a)
{
	agent_stop(a, R_SIGNAL, a->stop_sig);
	a->reason = R_SIGNAL;
}

/* KILL every group now (second INT, grace expired). */
static void
act_kill(struct agent *a)
{
	struct timeval tv = { AGENT_KILL_WAIT_SECS, 0 };

	if (a->state == S_RUNNING)
		agent_stop(a, R_SIGNAL, SIGKILL);
	log_info("killing workers");
	agent_signal_all(a, SIGKILL);
	a->killed = 1;
	evtimer_del(a->grace);
	evtimer_add(a->grace, &tv);
}

/*
 * Workers still not gone AGENT_KILL_WAIT_SECS after SIGKILL (stuck in the
 * kernel, or a grandchild in another group holding a pipe): stop waiting
 * for them, so the job can end or restart (torchrun issue #185414).
 */
static void
agent_abandon(struct agent *a)
{
	struct worker *w;
	int i;

	for (i = 0; i < a->nw; i++) {
		w = &a->w[i];
		if (w->gone)
			continue;
		log_warnx("worker not gone %ds after KILL rank=%d pid=%d "
		    "reaped=%d; not waiting for it", AGENT_KILL_WAIT_SECS,
		    w->rank, (int)w->pid, w->reaped);
		output_drain(w->out);
		output_drain(w->err);
		w->gone = 1;
		a->ngone++;
	}
	event_active(a->kick, EV_TIMEOUT, 0);
}

/* RDZV/DONE + signal: nothing runs; exit. */
static void
act_exit_signal(struct agent *a)
{
	agent_exit(a, 128 + (a->stop_sig ? a->stop_sig : SIGINT));
}

/* RUNNING + backend restart: stop workers, then rejoin. */
static void
act_stop_restart(struct agent *a)
{
	agent_stop(a, R_RESTART, SIGTERM);
}

/* RDZV/DONE + backend restart: nothing runs; rejoin at once. */
static void
act_rejoin(struct agent *a)
{
	agent_enter(a, S_RDZV);
	a->bk->ops->workers_stopped(a->bk);
}

/* RUNNING/STOPPING + backend fail: stop workers, then exit. */
static void
act_stop_bkfail(struct agent *a)
{
	agent_stop(a, R_BKFAIL, SIGTERM);
}

/* RDZV/DONE + backend fail: exit with its status. */
static void
act_exit_bkfail(struct agent *a)
{
	agent_exit(a, a->bk_status >= 0 ? a->bk_status : (a->nfail > 0 ?
	    report_exit_status(&a->fail[0]) : CGRUN_EXIT_INTERNAL));
}

/* DONE + finished: success. */
static void
act_finished(struct agent *a)
{
	agent_exit(a, CGRUN_EXIT_OK);
}

/* STOPPING + gone: what comes next depends on why we stopped. */
static void
act_gone(struct agent *a)
{
	evtimer_del(a->grace);
	switch (a->reason) {
	case R_FAILURE:
		agent_enter(a, S_RDZV);
		a->bk->ops->workers_failed(a->bk, a->why);
		break;
	case R_RESTART:
		act_rejoin(a);
		break;
	case R_SIGNAL:
		act_exit_signal(a);
		break;
	default:
		act_exit_bkfail(a);
		break;
	}
}

/* The supervisor: what every event does in every state (NULL: ignored). */
static const agent_action agent_actions[S_NSTATES][E_NEVENTS] = {
	[S_RDZV] = {
		[E_ROUND] = act_spawn,
		[E_SIGSTOP] = act_exit_signal,
		[E_SIGKILL] = act_exit_signal,
		[E_BK_RESTART] = NULL,		/* already rejoining */
		[E_BK_FAIL] = act_exit_bkfail,
		[E_BK_FINISHED] = act_finished,
	},
	[S_RUNNING] = {
		[E_FAILED] = act_stop_failure,
		[E_SUCCEEDED] = act_done,
		[E_GONE] = act_stop_failure,
		[E_SIGSTOP] = act_stop_signal,
		[E_SIGKILL] = act_kill,
		[E_BK_RESTART] = act_stop_restart,
		[E_BK_FAIL] = act_stop_bkfail,
	},
	[S_STOPPING] = {
		[E_GONE] = act_gone,
		[E_SIGSTOP] = act_stop_signal,
		[E_SIGKILL] = act_kill,
		[E_GRACE] = act_kill,
		[E_BK_FAIL] = act_stop_bkfail,
	},
	[S_DONE] = {
		[E_ROUND] = act_spawn,
		[E_SIGSTOP] = act_exit_signal,
		[E_SIGKILL] = act_exit_signal,
		[E_BK_RESTART] = act_rejoin,
		[E_BK_FAIL] = act_exit_bkfail,
		[E_BK_FINISHED] = act_finished,
	},
	[S_EXIT] = { NULL },
};

/* Dispatch one event through the table. */
static void
agent_event(struct agent *a, enum agent_ev e)
{
	agent_action fn = agent_actions[a->state][e];

	log_debug("agent event %s in %s%s", event_names[e],
	    state_names[a->state], fn ? "" : " (ignored)");
	if (fn != NULL)
		fn(a);
}

/* Grace timer. */
static void
agent_grace_cb(evutil_socket_t fd, short what, void *arg)
{
	struct agent *a = arg;

	if (a->killed) {
		agent_abandon(a);
		return;
	}
	log_warnx("workers still running %.1fs after the stop signal; "
	    "sending KILL", a->o->shutdown_timeout);
	agent_event(arg, E_GRACE);
}

/*
 * A handled signal.  USR1/USR2 are only forwarded (workers decide what to
 * do, e.g. checkpoint before a SLURM preemption); the others are forwarded
 * and stop the job; a second SIGINT kills at once.
 */
static void
agent_signal_cb(evutil_socket_t fd, short what, void *arg)
{
	struct agent *a = arg;
	int sig = (int)fd;

	log_info("signal received sig=%s state=%s", options_signame(sig),
	    state_names[a->state]);
	if (sig == SIGUSR1 || sig == SIGUSR2) {
		if (a->state == S_RUNNING)
			agent_signal_all(a, sig);
		return;
	}
	if (sig == SIGINT && a->nsigint++ > 0) {
		agent_event(a, E_SIGKILL);
		return;
	}
	if (a->stop_sig == 0)
		a->stop_sig = sig;
	agent_event(a, E_SIGSTOP);
}

/* Backend callback: a round is ready (E_ROUND). */
static void
bk_round(void *arg, const struct round_info *ri)
{
	struct agent *a = arg;

	a->round = *ri;
	agent_event(a, E_ROUND);
}

/* Backend callback: stop the workers for a new round (E_BK_RESTART). */
static void
bk_restart(void *arg, const char *why)
{
	log_info("restart requested by the rendezvous: %s", why);
	agent_event(arg, E_BK_RESTART);
}

/* Backend callback: the job cannot go on (E_BK_FAIL). */
static void
bk_fail(void *arg, int status, const char *why)
{
	struct agent *a = arg;

	a->bk_status = status;
	if (status >= 0)
		snprintf(a->why, sizeof(a->why), "%s", why);
	agent_event(a, E_BK_FAIL);
}

/* Backend callback: every node is done (E_BK_FINISHED). */
static void
bk_finished(void *arg)
{
	agent_event(arg, E_BK_FINISHED);
}

/*
 * Where the job store listens and what workers are told: standalone binds
 * 127.0.0.1 and says "localhost" (torchrun 2.6's MASTER_ADDR); one node
 * with an explicit --master-port listens at --master-addr:--master-port;
 * multi-node listens at --local-addr (or everywhere) and advertises
 * --local-addr or the host name.
 */
static int
agent_open_store(struct agent *a, char *err, size_t errlen)
{
	const struct cgrun_options *o = a->o;
	struct store_limits lim;
	const char *bind_host = "127.0.0.1", *adv = "localhost";
	int port = 0;

	if (options_multinode(o)) {
		bind_host = o->local_addr ? o->local_addr : "0.0.0.0";
		adv = o->local_addr ? o->local_addr : a->host;
	} else if (!o->standalone && o->explicit_master_port) {
		bind_host = adv = o->master_addr ? o->master_addr : "127.0.0.1";
		port = o->master_port;
	}
	store_limits_default(&lim);
	if ((a->store = store_new(a->base, &lim)) == NULL) {
		snprintf(err, errlen, "cannot create the job store");
		return -1;
	}
	if (store_listen(a->store, bind_host, port, &a->store_port, err,
	    errlen) == -1)
		return -1;
	snprintf(a->store_host, sizeof(a->store_host), "%s", adv);
	log_debug("job store listening host=%s port=%d", bind_host,
	    a->store_port);
	return 0;
}

/* Create the rendezvous backend the options ask for (backend.c). */
static int
agent_open_backend(struct agent *a, char *err, size_t errlen)
{
	struct backend_config cfg;
	struct backend_cb cb;

	memset(&cfg, 0, sizeof(cfg));
	cfg.opts = a->o;
	cfg.nproc = a->nproc;
	cfg.jobstore = a->store;
	cfg.store_host = a->store_host;
	cfg.store_port = a->store_port;
	cb.round = bk_round;
	cb.restart = bk_restart;
	cb.fail = bk_fail;
	cb.finished = bk_finished;
	cb.arg = a;
	a->bk = backend_new(a->base, &cfg, &cb, err, errlen);
	return a->bk ? 0 : -1;
}

/* The log directory: --log-dir, or a fresh temporary one. */
static int
agent_log_base(struct agent *a, char *err, size_t errlen)
{
	const char *tmp = getenv("TMPDIR");

	if (a->o->log_dir != NULL) {
		snprintf(a->log_base, sizeof(a->log_base), "%s", a->o->log_dir);
		if (mkdirs(a->log_base) == 0)
			return 0;
		snprintf(err, errlen, "--log-dir %s: %s", a->o->log_dir,
		    strerror(errno));
		return -1;
	}
	snprintf(a->log_base, sizeof(a->log_base), "%s/cgrun_XXXXXX",
	    tmp && *tmp ? tmp : "/tmp");
	if (mkdtemp(a->log_base) == NULL) {
		snprintf(err, errlen, "cannot create a log directory in %s: "
		    "%s", tmp && *tmp ? tmp : "/tmp", strerror(errno));
		return -1;
	}
	a->log_base_tmp = 1;
	return 0;
}

/*
 * Install the signal events: SIGCHLD and every forwarded signal, except a
 * SIGHUP that was ignored when cgrun started (nohup).
 */
static int
agent_signals(struct agent *a)
{
	struct sigaction old;
	int i;

	signal(SIGPIPE, SIG_IGN);
	a->chld = evsignal_new(a->base, SIGCHLD, agent_sigchld_cb, a);
	if (a->chld == NULL || evsignal_add(a->chld, NULL) == -1)
		return -1;
	sigaction(SIGHUP, NULL, &old);
	a->hup_ignored = old.sa_handler == SIG_IGN;
	for (i = 0; a->o->signals[i] != 0 && a->nsigev < 32; i++) {
		/* nohup: a hang-up is neither ours nor the workers' business
		 * (torchrun forwards it and kills the job, issue #76894) */
		if (a->o->signals[i] == SIGHUP && a->hup_ignored)
			continue;
		a->sigev[a->nsigev] = evsignal_new(a->base, a->o->signals[i],
		    agent_signal_cb, a);
		if (a->sigev[a->nsigev] == NULL ||
		    evsignal_add(a->sigev[a->nsigev], NULL) == -1)
			return -1;
		a->nsigev++;
	}
	return 0;
}

/* Build an agent: log dir, command, job store, backend, signal events. */
struct agent *
agent_new(struct event_base *base, const struct cgrun_options *o, int nproc,
    const struct plan *plan, int *status, char *err, size_t errlen)
{
	struct agent *a;

	if ((a = calloc(1, sizeof(*a))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	a->base = base;
	a->o = o;
	a->plan = plan;
	a->nproc = nproc;
	a->filter_out = a->filter_err = -1;
	a->bk_status = -1;
	if (gethostname(a->host, sizeof(a->host)) == -1)
		snprintf(a->host, sizeof(a->host), "localhost");
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	a->grace = evtimer_new(base, agent_grace_cb, a);
	a->kick = event_new(base, -1, 0, agent_kick_cb, a);
	if (a->grace == NULL || a->kick == NULL || agent_signals(a) == -1) {
		snprintf(err, errlen, "cannot set up the event loop");
		goto fail;
	}
	*status = CGRUN_EXIT_INTERNAL;
	if (spawn_cmd_build(&a->cmd, o, err, errlen) == -1 ||
	    agent_log_base(a, err, errlen) == -1)
		goto fail;
	*status = CGRUN_EXIT_RDZV;
	if (agent_open_store(a, err, errlen) == -1)
		goto fail;
	*status = CGRUN_EXIT_USAGE;
	if (agent_open_backend(a, err, errlen) == -1)
		goto fail;
	*status = CGRUN_EXIT_OK;
	return a;
fail:
	agent_free(a);
	return NULL;
}

/* nftw callback: remove empty directories (others stay). */
static int
rmdir_empty(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	if (flag == FTW_DP)
		rmdir(path);
	return 0;
}

/* After the job: the report, the agent's error file, the exit line. */
static void
agent_finish(struct agent *a)
{
	const char *ef = getenv("TORCHELASTIC_ERROR_FILE");
	struct report r;

	fflush(stdout);
	if (a->exit_status == 0)
		return;
	if (a->reason == R_SIGNAL || (a->stop_sig != 0 &&
	    a->state == S_EXIT && a->exit_status == 128 + a->stop_sig)) {
		log_warnx("stopped by SIG%s; exit status %d",
		    options_signame(a->stop_sig ? a->stop_sig : SIGINT),
		    a->exit_status);
		return;
	}
	if (a->bk_status >= 0 || a->nfail == 0) {
		log_warnx("job failed: %s", a->why);
		return;
	}
	memset(&r, 0, sizeof(r));
	r.name = spawn_cmd_name(&a->cmd);
	r.program = a->cmd.path ? a->cmd.path : a->cmd.argv[0];
	r.host = a->host;
	r.restarts = a->round.restart_count;
	r.max_restarts = a->o->max_restarts;
	r.f = a->fail;
	r.n = a->nfail;
	report_print(stderr, &r);
	if (ef != NULL && *ef != '\0' &&
	    report_copy_error_file(&a->fail[0], ef) == 0)
		log_info("root cause error file copied to %s", ef);
}

/* Run the job; returns cgrun's exit status. */
int
agent_run(struct agent *a)
{
	char err[512];

	a->state = S_RDZV;
	if (a->bk->ops->start(a->bk, err, sizeof(err)) == -1) {
		log_warnx("rendezvous: %s", err);
		return CGRUN_EXIT_RDZV;
	}
	while (a->state != S_EXIT)
		if (event_base_loop(a->base, EVLOOP_ONCE) == -1) {
			log_warnx("event loop failed");
			a->exit_status = CGRUN_EXIT_INTERNAL;
			break;
		}
	/* Whatever is left in the workers' process groups (a background
	 * child of a worker that exited 0) does not outlive the job. */
	agent_signal_all(a, SIGKILL);
	agent_finish(a);
	if (a->log_base_tmp)
		nftw(a->log_base, rmdir_empty, 16, FTW_DEPTH | FTW_PHYS);
	return a->exit_status;
}

/* Free the agent: workers (killed if any is left), backend, store. */
void
agent_free(struct agent *a)
{
	int i;

	if (a == NULL)
		return;
	for (i = 0; i < a->nw; i++)
		if (!a->w[i].reaped && a->w[i].pid > 0)
			killpg(a->w[i].pid, SIGKILL);
	agent_free_workers(a);
	if (a->bk != NULL)
		a->bk->ops->free(a->bk);
	if (a->store != NULL)
		store_free(a->store);
	for (i = 0; i < a->nsigev; i++)
		event_free(a->sigev[i]);
	if (a->chld != NULL)
		event_free(a->chld);
	if (a->grace != NULL)
		event_free(a->grace);
	if (a->kick != NULL)
		event_free(a->kick);
	spawn_cmd_free(&a->cmd);
	free(a->fail);
	free(a);
}

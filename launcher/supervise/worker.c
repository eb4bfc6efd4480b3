/*
 * worker.c: one worker process and its output streams (worker.h): the
 * state NEW -> RUNNING -> EXITED -> GONE, changed only in worker_enter();
 * starting it (log directory, console prefix, --redirects/--tee streams,
 * environment, spawn), reaping it, and draining pipes a grandchild holds.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "errbuf.h"
#include "log.h"
#include "logdir.h"
#include "options.h"
#include "output.h"
#include "plan.h"
#include "prefix.h"
#include "report.h"
#include "round.h"
#include "spawn.h"
#include "tty.h"
#include "watchdog.h"
#include "worker.h"
#include "worker_env.h"

struct worker {
	const struct worker_job	*job;
	enum worker_state	 state;
	int			 lr, rank;
	pid_t			 pid;
	int			 exec_fd;	/* spawn_exec_errno(), or -1 */
	int			 exec_errno;
	int			 ptys;		/* streams (1|2) on a pty */
	int			 status;	/* wait status once reaped */
	struct output		*out, *err;
	struct event		*drain;
	char			 dir[PATH_MAX];
	char			 error_file[PATH_MAX];
	char			 stderr_log[PATH_MAX];
};

static const char *const worker_state_names[] = { "new", "running",
	"exited", "gone", "abandoned" };

_Static_assert(sizeof(worker_state_names) / sizeof(worker_state_names[0]) ==
    WORKER__STATES, "worker_state_names does not match enum worker_state");

/* The name of a state, for logs. */
const char *
worker_state_name(enum worker_state s)
{
	return worker_state_names[s];
}

/*
 * The one place a worker's state changes.  Entering GONE (or ABANDONED)
 * tells the owner; GONE after ABANDONED does not: it was counted already.
 */
static void
worker_enter(struct worker *w, enum worker_state s)
{
	enum worker_state old = w->state;

	log_debug("worker state rank=%d %s -> %s", w->rank,
	    worker_state_names[old], worker_state_names[s]);
	w->state = s;
	if (((s == WORKER_GONE && old != WORKER_ABANDONED) ||
	    s == WORKER_ABANDONED) && w->job->on_gone != NULL)
		w->job->on_gone(w->job->arg);
}

/* A NEW worker for local rank lr. */
struct worker *
worker_new(const struct worker_job *job, int lr)
{
	struct worker *w;

	if ((w = calloc(1, sizeof(*w))) == NULL)
		return NULL;
	w->job = job;
	w->state = WORKER_NEW;
	w->lr = lr;
	w->rank = job->round->rank_base + lr;
	w->exec_fd = -1;
	return w;
}

/* Kill a worker not yet reaped, then free it and its streams. */
void
worker_free(struct worker *w)
{
	if (w == NULL)
		return;
	if (worker_unreaped(w))
		worker_signal(w, SIGKILL);
	output_free(w->out);
	output_free(w->err);
	if (w->drain != NULL)
		event_free(w->drain);
	if (w->exec_fd >= 0)
		close(w->exec_fd);
	free(w);
}

/* GONE once reaped (EXITED) and both pipes are at EOF. */
static void
worker_check_gone(struct worker *w)
{
	if (w->state != WORKER_EXITED || !output_eof(w->out) ||
	    !output_eof(w->err))
		return;
	worker_enter(w, WORKER_GONE);
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

/* The console and filter-file prefixes of stream s (prefix.h). */
static void
worker_prefix(struct worker *w, int s, char *console, char *filter)
{
	const struct cgrun_options *o = w->job->opts;
	struct prefix_ids id;

	id.rank = w->rank;
	id.local_rank = w->lr;
	id.group_rank = w->job->round->group_rank;
	prefix_for(o, &id, options_std_for(&o->tee, w->lr) & s, console,
	    OUTPUT_PREFIX_MAX, filter, OUTPUT_PREFIX_MAX);
}

/* output's on_lines: a sign of progress with --hang-progress=output. */
static void
worker_lines_cb(void *arg)
{
	struct worker *w = arg;

	watchdog_output(w->job->wd, w->lr);
}

/* Whether the watchdog needs to see this worker's output lines. */
static int
worker_watch_output(const struct worker *w)
{
	const char *p = w->job->opts->hang_progress;

	return w->job->wd != NULL && p != NULL && strcmp(p, "output") == 0;
}

/* Start reading pipe fd rfd of stream s into w->out or w->err; -1 if not. */
static int
worker_reader(struct worker *w, int s, int rfd, int file, int console,
    int pty)
{
	const struct cgrun_options *o = w->job->opts;
	char prefix[OUTPUT_PREFIX_MAX], fprefix[OUTPUT_PREFIX_MAX];
	struct output_conf c;
	struct output *out;

	worker_prefix(w, s, prefix, fprefix);
	memset(&c, 0, sizeof(c));
	c.console_fd = console ? s : -1;
	c.prefix = prefix;
	c.filter_prefix = fprefix;
	c.file_fd = file;
	c.filter_fd = s == 1 ? w->job->filter_out : w->job->filter_err;
	c.filters = s == 1 ? o->dup_stdout_filters : o->dup_stderr_filters;
	c.on_eof = worker_eof_cb;
	c.on_lines = worker_watch_output(w) ? worker_lines_cb : NULL;
	c.arg = w;
	c.pty = pty;
	c.eager = console && tty_stdin_owner(w->lr);
	if ((out = output_new(w->job->base, rfd, &c)) == NULL)
		return -1;
	if (pty)
		tty_pty_track(rfd, s, console ? strlen(prefix) : 0);
	if (s == 1)
		w->out = out;
	else
		w->err = out;
	return 0;
}

/*
 * Set up one stream (1 = stdout, 2 = stderr) of a worker: returns the fd
 * the child gets, and starts an output reader when a pipe is needed.
 * --redirects alone: the file itself; --tee: pipe + file; filtered out of
 * the console and no file: /dev/null.  A pipe is a pseudo-terminal when
 * tty.c says so (a console on a terminal).
 */
static int
worker_stream(struct worker *w, int s)
{
	const struct cgrun_options *o = w->job->opts;
	int red = options_std_for(&o->redirects, w->lr) & s;
	int tee = options_std_for(&o->tee, w->lr) & s;
	int shown = options_rank_shown(o, w->lr);
	int watch = worker_watch_output(w);	/* needs a pipe */
	const char *filters = s == 1 ? o->dup_stdout_filters :
	    o->dup_stderr_filters;
	char path[PATH_MAX];
	int file = -1, p[2];

	if ((red || tee) && (file = logdir_file(w->dir, s == 1 ?
	    "stdout.log" : "stderr.log", path, sizeof(path))) == -1)
		return -1;
	if (s == 2 && file >= 0)
		snprintf(w->stderr_log, sizeof(w->stderr_log), "%s", path);
	if (filters == NULL && red && !tee && !watch)
		return file;
	if (filters == NULL && !shown && file == -1 && !watch)
		return open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (tty_pty_wanted(s, shown && !(red && !tee), tee) &&
	    tty_pty_open(p) == 0)
		w->ptys |= s;
	else if (pipe2(p, O_CLOEXEC) == -1) {
		if (file >= 0)
			close(file);
		return -1;
	}
	if (worker_reader(w, s, p[0], file, shown && !(red && !tee),
	    w->ptys & s) == -1) {
		close(p[0]);
		close(p[1]);
		if (file >= 0)
			close(file);
		return -1;
	}
	return p[1];
}

/*
 * The worker's environment (worker_env.c) from what the placement plan
 * and the hang room describe for its rank; NULL with errno.
 */
static char **
worker_env(struct worker *w, struct watchdog_rank_env *hang)
{
	const struct worker_job *job = w->job;
	struct plan_rank_env place;
	struct worker_env_in in;

	memset(&in, 0, sizeof(in));
	in.opts = job->opts;
	in.round = job->round;
	in.lr = w->lr;
	in.error_file = w->error_file;
	watchdog_rank_env(job->wd, w->lr, hang);
	in.hang = hang;
	if (job->plan != NULL) {
		if (plan_rank_env(job->plan, w->lr, &place) == -1)
			return NULL;
		in.place = &place;
	}
	return worker_env_build(&in);
}

/* Fork and exec with the child's fds 1 and 2; the pid, or -1 with err. */
static pid_t
worker_spawn(struct worker *w, int fd1, int fd2, char *err, size_t errlen)
{
	const struct worker_job *job = w->job;
	struct watchdog_rank_env hang;
	struct spawn_req req;
	char **env;
	pid_t pid = -1;

	env = worker_env(w, &hang);
	memset(&req, 0, sizeof(req));
	req.cmd = job->cmd;
	req.local_rank = w->lr;
	req.envp = env;
	req.out_fd = fd1;
	req.err_fd = fd2;
	req.plan = job->plan;
	req.hup_ignored = job->hup_ignored;
	req.cgroup_procs = job->cgroup_procs;
	req.stdin_null = tty_stdin_null(w->lr);
	req.ctty = w->ptys & 1 ? 1 : w->ptys & 2 ? 2 : 0;
	req.keep_fd = hang.heartbeat_fd;
	if (fd1 == -1 || fd2 == -1 || env == NULL)
		errbuf_set(err, errlen, "worker %d: "
		    "%s", w->lr, strerror(errno));
	else
		pid = spawn_worker(&req, &w->exec_fd, err, errlen);
	worker_env_free(env);
	if (pid > 0)
		watchdog_started(job->wd, w->lr, pid);
	return pid;
}

/* Prepare and start one worker; 0 (RUNNING), or -1 (GONE) with err set. */
int
worker_start(struct worker *w, const char *attempt_dir, char *err,
    size_t errlen)
{
	int fd1, fd2;

	if (logdir_rank(attempt_dir, w->lr, w->dir, sizeof(w->dir)) == -1 ||
	    logdir_path(w->error_file, sizeof(w->error_file),
	    "%s/error.json", w->dir) == -1) {
		errbuf_set(err, errlen, "log directory %.200s: %s", attempt_dir,
		    strerror(errno));
		worker_enter(w, WORKER_GONE);
		return -1;
	}
	unlink(w->error_file);
	fd1 = worker_stream(w, 1);
	fd2 = fd1 == -1 ? -1 : worker_stream(w, 2);
	w->pid = worker_spawn(w, fd1, fd2, err, errlen);
	if (fd1 >= 0)
		close(fd1);
	if (fd2 >= 0)
		close(fd2);
	worker_enter(w, w->pid > 0 ? WORKER_RUNNING : WORKER_GONE);
	return w->pid > 0 ? 0 : -1;
}

/* Reaped: record the status, log the exit, wait for the pipes' EOF. */
void
worker_reaped(struct worker *w, int status)
{
	struct timeval tv = { WORKER_DRAIN_SECS, 0 };
	char how[128];

	w->status = status;
	w->exec_errno = spawn_exec_errno(w->exec_fd);
	w->exec_fd = -1;
	if (tty_stdin_owner(w->lr))	/* its pdb may have left raw modes */
		tty_restore_modes();
	report_describe(how, sizeof(how), status);
	log_info("worker exited rank=%d local_rank=%d pid=%d %s", w->rank,
	    w->lr, (int)w->pid, how);
	if (w->state == WORKER_ABANDONED ||
	    (output_eof(w->out) && output_eof(w->err))) {
		worker_enter(w, WORKER_GONE);
		return;
	}
	worker_enter(w, WORKER_EXITED);
	w->drain = evtimer_new(w->job->base, worker_drain_cb, w);
	if (w->drain != NULL)
		evtimer_add(w->drain, &tv);
}

/* Stuck after SIGKILL (D state, or a grandchild holds a pipe): give up. */
void
worker_abandon(struct worker *w, int kill_wait_secs)
{
	if (w->state == WORKER_GONE || w->state == WORKER_ABANDONED)
		return;
	log_warnx("worker not gone %ds after KILL rank=%d pid=%d "
	    "reaped=%d; not waiting for it", kill_wait_secs, w->rank,
	    (int)w->pid, w->state == WORKER_EXITED);
	output_drain(w->out);
	output_drain(w->err);
	worker_enter(w, w->state == WORKER_EXITED ? WORKER_GONE :
	    WORKER_ABANDONED);
}

/* A worker that will never start is GONE. */
void
worker_skip(struct worker *w)
{
	if (w->state == WORKER_NEW)
		worker_enter(w, WORKER_GONE);
}

/*
 * killpg, ignoring a group already empty.  No group yet while a worker
 * just forked has not called setsid() (spawn.c): then its pid.
 */
void
worker_signal(const struct worker *w, int sig)
{
	if (w->pid <= 0 || killpg(w->pid, sig) == 0)
		return;
	if (errno == ESRCH && worker_unreaped(w))
		kill(w->pid, sig);
	else if (errno != ESRCH)
		log_warn("killpg pid=%d sig=%d", (int)w->pid, sig);
}

/* kill the worker's main process only, while it is not reaped. */
void
worker_signal_main(const struct worker *w, int sig)
{
	if (w->pid > 0 && worker_unreaped(w) && kill(w->pid, sig) == -1 &&
	    errno != ESRCH)
		log_warn("kill pid=%d sig=%d", (int)w->pid, sig);
}

/*
 * kill one process of the worker: its main one while not reaped, or one
 * in its process group (a group id is not reused while the group has a
 * member).  Any other pid may be someone else's by now.  0, or -1 with
 * errno (ESRCH: no such process in the worker).
 */
int
worker_signal_member(const struct worker *w, pid_t pid, int sig)
{
	if (w->pid <= 0 || pid <= 0 || !((pid == w->pid &&
	    worker_unreaped(w)) || getpgid(pid) == w->pid)) {
		errno = ESRCH;
		return -1;
	}
	return kill(pid, sig);
}

/* Tap the worker's stderr lines (output_tap); -1 when it has no pipe. */
int
worker_tap(struct worker *w, void (*fn)(void *, const char *, size_t),
    void *arg)
{
	if (w->err == NULL || (fn != NULL && output_eof(w->err)))
		return -1;
	output_tap(w->err, fn, arg);
	return 0;
}

/* The worker's state. */
enum worker_state
worker_state(const struct worker *w)
{
	return w->state;
}

/* Started and not reaped yet. */
int
worker_unreaped(const struct worker *w)
{
	return w->state == WORKER_RUNNING || w->state == WORKER_ABANDONED;
}

/* The worker's pid (its process group), or 0 before it started. */
pid_t
worker_pid(const struct worker *w)
{
	return w->pid;
}

/* The worker's global rank. */
int
worker_rank(const struct worker *w)
{
	return w->rank;
}

/* The wait status of a reaped worker. */
int
worker_status(const struct worker *w)
{
	return w->status;
}

/* What the failure report needs to know about this worker. */
void
worker_failure(const struct worker *w, struct report_failure *f)
{
	f->rank = w->rank;
	f->local_rank = w->lr;
	f->pid = w->pid;
	f->status = w->status;
	f->exec_errno = w->exec_errno;
	snprintf(f->error_file, sizeof(f->error_file), "%s", w->error_file);
	snprintf(f->log_file, sizeof(f->log_file), "%s", w->stderr_log);
}

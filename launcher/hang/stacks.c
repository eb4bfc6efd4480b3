/*
 * stacks.c: the hang diagnosis (stacks.h).  Each rank is a small state
 * machine, changed only in stacks_rank_enter() (logged at debug level):
 *
 *   WAIT --dump ended / helper output at EOF / /proc read--> DONE
 *   WAIT --timeout_ms passed-------------------------------> DONE (cut)
 *
 * A fault handler dump has ended when its stream hits EOF, when the
 * "Extension modules:" line that ends it arrived, or when the process is
 * dead (a zombie) and STACKS_SETTLE_MS passed (a grandchild may hold the
 * pipe open; what the rank wrote is in the pipe and read by then).  When
 * every rank is DONE the summary is made, stacks.txt written, the report
 * lines printed, and done() called from the next loop turn.
 */
#include <sys/stat.h>
#include <sys/syscall.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "log.h"
#include "report.h"
#include "stackdump.h"
#include "stackgroup.h"
#include "stackprobe.h"
#include "stacks.h"
#include "worker.h"

#define STACKS_RAW_MAX		(256 * 1024)	/* raw dump bytes kept per rank */
#define STACKS_TICK_MS		50		/* how often deaths are checked */
#define STACKS_SETTLE_MS	300	/* dead rank: wait for its last lines */
#define STACKS_MISSING_MAX	96

enum stacks_rstate { R_WAIT, R_DONE };

struct stacks_rank {
	struct stacks		*s;
	struct stacks_target	 t;
	enum stacks_rstate	 state;
	enum stackprobe_way	 way;
	struct stackdump	*d;
	char			 missing[STACKS_MISSING_MAX];
	int			 tapped;
	int			 dead_ms;	/* time since found dead, or -1 */
	pid_t			 helper;	/* or -1 */
	int			 helper_fd;	/* its pidfd, or -1 */
	int			 hfd;		/* helper's output, or -1 */
	struct event		*hev;
	char			*raw;		/* what the dump said, as is */
	size_t			 rawlen;
	char			*logfile;	/* stderr's file when no pipe */
	off_t			 logoff;	/* its size before the SIGABRT */
};

struct stacks {
	struct event_base	*base;
	struct stacks_rank	*r;
	int			 n, ndone;
	int			 timeout_ms, elapsed_ms;
	struct event		*tick, *finish;
	void			(*done)(void *, const char *);
	void			*arg;
	int			 culprit, finished;
	char			 path[PATH_MAX], dir[PATH_MAX];
	char			 summary[STACKS_SUMMARY_MAX];
	char			 where[512];	/* the culprit's place */
};

/* Keep raw dump text for stacks.txt (cut at STACKS_RAW_MAX). */
static void
stacks_raw(struct stacks_rank *r, const char *p, size_t len)
{
	if (r->raw == NULL && (r->raw = malloc(STACKS_RAW_MAX)) == NULL)
		return;
	if (len > STACKS_RAW_MAX - r->rawlen)
		len = STACKS_RAW_MAX - r->rawlen;
	memcpy(r->raw + r->rawlen, p, len);
	r->rawlen += len;
}

/* Stop the rank's helper and tap. */
static void
stacks_rank_release(struct stacks_rank *r)
{
	if (r->tapped && r->t.w != NULL)
		worker_tap(r->t.w, NULL, NULL);
	r->tapped = 0;
	if (r->hev != NULL)
		event_free(r->hev);
	r->hev = NULL;
	if (r->hfd >= 0)
		close(r->hfd);
	r->hfd = -1;
	/*
	 * The agent's waitpid(-1) reaps the helper, so its pid may already
	 * name another process: signal it through its pidfd only.
	 */
	if (r->helper_fd >= 0) {
		syscall(SYS_pidfd_send_signal, r->helper_fd, SIGKILL, NULL, 0);
		close(r->helper_fd);
	}
	r->helper_fd = -1;
	r->helper = -1;
}

static void stacks_finish(struct stacks *);

/* The one place a rank's state changes: WAIT -> DONE. */
static void
stacks_rank_enter(struct stacks_rank *r, enum stacks_rstate st,
    const char *missing)
{
	if (r->state == st)
		return;
	log_debug("stacks rank=%d way=%s wait -> done threads=%d%s%s",
	    r->t.rank, stackprobe_name(r->way), r->d->nthreads,
	    missing ? " missing=" : "", missing ? missing : "");
	r->state = st;
	if (missing != NULL && r->d->nthreads == 0)
		snprintf(r->missing, sizeof(r->missing), "%s", missing);
	stacks_rank_release(r);
	if (++r->s->ndone == r->s->n)
		stacks_finish(r->s);
}

/* The tap on a rank's stderr: fault handler lines, then EOF. */
static void
stacks_tap_cb(void *arg, const char *line, size_t len)
{
	struct stacks_rank *r = arg;

	if (r->state != R_WAIT)
		return;
	if (line == NULL) {
		stacks_rank_enter(r, R_DONE, "stderr closed before a dump");
		return;
	}
	if (stackdump_line(r->d, line, len))
		stacks_raw(r, line, len);
	if (r->d->ended)
		stacks_rank_enter(r, R_DONE, NULL);
}

static void stacks_start_proc(struct stacks_rank *);

/* A helper's output: keep it; at EOF parse it all. */
static void
stacks_helper_cb(evutil_socket_t fd, short what, void *arg)
{
	struct stacks_rank *r = arg;
	char buf[8192];
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0)
		stacks_raw(r, buf, (size_t)n);
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (r->raw != NULL)
		stackdump_text(r->d, r->raw, r->rawlen);
	if (r->d->nthreads == 0 && r->way != STACKPROBE_PYSPY) {
		/* gdb may not attach (ptrace scope, no CAP_SYS_PTRACE) */
		log_info("stacks rank=%d: %s printed no stack; reading /proc",
		    r->t.rank, stackprobe_name(r->way));
		stacks_rank_release(r);
		stacks_start_proc(r);
		return;
	}
	stacks_rank_enter(r, R_DONE, "the tool printed no stack");
}

/*
 * A rank whose stderr goes straight to its log file (--redirects without
 * --tee): note the file's size; the dump is read from there once the
 * rank is dead.  0, or -1 when there is no such file.
 */
static int
stacks_logfile(struct stacks_rank *r)
{
	struct report_failure *f;
	struct stat st;

	if ((f = calloc(1, sizeof(*f))) == NULL)
		return -1;
	worker_failure(r->t.w, f);
	if (f->log_file[0] != '\0' && stat(f->log_file, &st) == 0)
		r->logfile = strdup(f->log_file);
	if (r->logfile != NULL)
		r->logoff = st.st_size;
	free(f);
	return r->logfile != NULL ? 0 : -1;
}

/* The dump a dead rank wrote to its log file after logoff. */
static void
stacks_read_logfile(struct stacks_rank *r)
{
	char buf[8192];
	ssize_t n;
	int fd;

	if ((fd = open(r->logfile, O_RDONLY | O_CLOEXEC)) == -1)
		return;
	if (lseek(fd, r->logoff, SEEK_SET) == r->logoff)
		while (r->rawlen < STACKS_RAW_MAX &&
		    (n = read(fd, buf, sizeof(buf))) > 0)
			stacks_raw(r, buf, (size_t)n);
	close(fd);
	if (r->raw != NULL)
		stackdump_text(r->d, r->raw, r->rawlen);
}

/* SIGABRT for the fault handler, its dump read from the tapped stderr. */
static void
stacks_start_faulthandler(struct stacks_rank *r)
{
	if (r->t.w != NULL && worker_tap(r->t.w, stacks_tap_cb, r) == 0)
		r->tapped = 1;
	else if (r->t.w == NULL || stacks_logfile(r) == -1) {
		stacks_rank_enter(r, R_DONE, "stderr not read by cgrun");
		return;
	}
	if (kill(r->t.pid, SIGABRT) == -1)
		stacks_rank_enter(r, R_DONE, "already gone");
}

/* Start the helper tool; its output read on the loop. */
static void
stacks_start_helper(struct stacks_rank *r, const char *tool)
{
	r->helper = stackprobe_spawn(r->way, tool, r->t.pid, &r->hfd);
	if (r->helper == -1) {
		stacks_rank_enter(r, R_DONE, "the tool could not start");
		return;
	}
	/* not reaped yet: the agent's loop has not run since the fork */
	r->helper_fd = (int)syscall(SYS_pidfd_open, r->helper, 0);
	r->hev = event_new(r->s->base, r->hfd, EV_READ | EV_PERSIST,
	    stacks_helper_cb, r);
	if (r->hev == NULL || event_add(r->hev, NULL) == -1)
		stacks_rank_enter(r, R_DONE, "out of memory");
}

/* /proc, read at once (cheap, never blocks on the process). */
static void
stacks_start_proc(struct stacks_rank *r)
{
	if (r->raw == NULL && (r->raw = malloc(STACKS_RAW_MAX)) == NULL) {
		stacks_rank_enter(r, R_DONE, "out of memory");
		return;
	}
	r->way = STACKPROBE_PROC;
	stackdump_init(r->d);
	r->d->fmt = STACKDUMP_PROC;
	if (r->rawlen > STACKS_RAW_MAX / 2)
		r->rawlen = STACKS_RAW_MAX / 2;	/* the tool's words, cut */
	if (r->rawlen > 0)
		r->raw[r->rawlen++] = '\n';
	r->rawlen += stackprobe_proc(r->t.pid, r->raw + r->rawlen,
	    STACKS_RAW_MAX - r->rawlen);
	stackdump_text(r->d, r->raw, r->rawlen);
	stacks_rank_enter(r, R_DONE, "/proc unreadable");
}

/* Start taking one rank's stack. */
static void
stacks_start(struct stacks_rank *r, const struct stackprobe_tools *tools)
{
	const char *tool;

	r->way = stackprobe_choose(tools, r->t.pid, &tool);
	log_info("taking stacks rank=%d pid=%d way=%s", r->t.rank,
	    (int)r->t.pid, stackprobe_name(r->way));
	if (r->way == STACKPROBE_FAULTHANDLER)
		stacks_start_faulthandler(r);
	else if (r->way == STACKPROBE_PROC)
		stacks_start_proc(r);
	else
		stacks_start_helper(r, tool);
}

/* Every tick: dead fault handler ranks settle; the deadline cuts all. */
static void
stacks_tick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct stacks *s = arg;
	struct stacks_rank *r;
	int i;

	s->elapsed_ms += STACKS_TICK_MS;
	for (i = 0; i < s->n && !s->finished; i++) {
		r = &s->r[i];
		if (r->state != R_WAIT)
			continue;
		if (s->elapsed_ms >= s->timeout_ms) {
			stacks_rank_enter(r, R_DONE, "timed out");
			continue;
		}
		if (r->way != STACKPROBE_FAULTHANDLER)
			continue;
		if (r->dead_ms < 0 && stackprobe_dead(r->t.pid))
			r->dead_ms = 0;
		else if (r->dead_ms >= 0)
			r->dead_ms += STACKS_TICK_MS;
		if (r->dead_ms >= 0 && r->logfile != NULL)
			stacks_read_logfile(r);		/* all written */
		if ((r->dead_ms >= 0 && r->logfile != NULL) ||
		    r->dead_ms >= STACKS_SETTLE_MS)
			stacks_rank_enter(r, R_DONE, "died without a dump "
			    "(fault handler off?)");
	}
}

/* One rank's section of stacks.txt. */
static void
stacks_write_rank(FILE *fp, const struct stacks_rank *r)
{
	fprintf(fp, "\n=== rank %d (local_rank %d, pid %d), %s ===\n",
	    r->t.rank, r->t.local_rank, (int)r->t.pid,
	    stackprobe_name(r->way));
	if (r->d->nthreads == 0)
		fprintf(fp, "no stack: %s\n", r->missing[0] ? r->missing :
		    "nothing arrived");
	if (r->rawlen > 0)
		fprintf(fp, "%.*s%s", (int)r->rawlen, r->raw,
		    r->raw[r->rawlen - 1] == '\n' ? "" : "\n");
}

/* Write dir/stacks.txt: the summary, then every rank's dump as is. */
static void
stacks_write(struct stacks *s)
{
	FILE *fp;
	int i;

	if (s->dir[0] == '\0' || snprintf(s->path, sizeof(s->path),
	    "%s/stacks.txt", s->dir) >= (int)sizeof(s->path)) {
		s->path[0] = '\0';
		return;
	}
	if ((fp = fopen(s->path, "we")) == NULL) {
		log_warn("stacks: %s", s->path);
		s->path[0] = '\0';
		return;
	}
	fprintf(fp, "hang diagnosis: %s\n", s->summary);
	if (s->culprit >= 0)
		fprintf(fp, "culprit: rank %d\n", s->culprit);
	for (i = 0; i < s->n; i++)
		stacks_write_rank(fp, &s->r[i]);
	if (fclose(fp) != 0)
		log_warn("stacks: %s", s->path);
}

/* Every rank done: group, write, print; done() on the next loop turn. */
static void
stacks_finish(struct stacks *s)
{
	struct stackgroup_rank *g = NULL;
	char *where = s->where;
	int i, waiting = 0;

	if (s->finished)
		return;
	s->finished = 1;
	event_del(s->tick);
	if (s->n > 0 && (g = calloc((size_t)s->n, sizeof(*g))) != NULL) {
		for (i = 0; i < s->n; i++) {
			g[i].rank = s->r[i].t.rank;
			g[i].pid = s->r[i].t.pid;
			g[i].d = s->r[i].d;
			g[i].missing = s->r[i].missing[0] ? s->r[i].missing :
			    NULL;
			g[i].flagged = s->r[i].t.flagged;
		}
		s->culprit = stackgroup_summary(g, s->n, s->summary,
		    sizeof(s->summary));
		for (i = 0; i < s->n; i++) {
			if (g[i].rank == s->culprit)
				stackgroup_where(&g[i], where, sizeof(s->where));
			waiting += stackgroup_in_collective(&g[i]);
		}
		free(g);
	}
	stacks_write(s);
	report_hang(stderr, s->n > 0 ? s->r[0].t.node : 0, s->summary,
	    s->culprit, where, s->n > 0 && waiting == s->n, s->path);
	event_active(s->finish, EV_TIMEOUT, 1);
}

/* The next loop turn after finishing: tell the caller. */
static void
stacks_finish_cb(evutil_socket_t fd, short what, void *arg)
{
	struct stacks *s = arg;

	s->done(s->arg, s->summary);
}

/* Set up the rank slots; -1 when out of memory. */
static int
stacks_ranks(struct stacks *s, const struct stacks_target *t, int n)
{
	if ((s->r = calloc((size_t)n, sizeof(*s->r))) == NULL)
		return -1;
	for (s->n = 0; s->n < n; s->n++) {
		s->r[s->n].s = s;
		s->r[s->n].t = t[s->n];
		s->r[s->n].helper = -1;
		s->r[s->n].helper_fd = -1;
		s->r[s->n].hfd = -1;
		s->r[s->n].dead_ms = -1;
		if ((s->r[s->n].d = malloc(sizeof(struct stackdump))) == NULL)
			return -1;
		stackdump_init(s->r[s->n].d);
	}
	return 0;
}

/* Start the collection. */
struct stacks *
stacks_collect(struct event_base *base, const struct stacks_target *t,
    int n, const char *dir, int timeout_ms,
    void (*done)(void *, const char *), void *arg)
{
	struct timeval tv = { 0, STACKS_TICK_MS * 1000 };
	struct stackprobe_tools tools;
	struct stacks *s;
	int i;

	if ((s = calloc(1, sizeof(*s))) == NULL)
		return NULL;
	s->base = base;
	s->done = done;
	s->arg = arg;
	s->culprit = -1;
	s->timeout_ms = timeout_ms > 0 ? timeout_ms : STACKS_TIMEOUT_MS;
	snprintf(s->dir, sizeof(s->dir), "%s", dir ? dir : "");
	s->tick = event_new(base, -1, EV_PERSIST, stacks_tick_cb, s);
	s->finish = event_new(base, -1, 0, stacks_finish_cb, s);
	if (s->tick == NULL || s->finish == NULL ||
	    stacks_ranks(s, t, n > 0 ? n : 0) == -1 ||
	    event_add(s->tick, &tv) == -1) {
		stacks_free(s);
		errno = ENOMEM;
		return NULL;
	}
	log_warnx("hang: taking the stacks of %d rank%s before stopping them",
	    n, n == 1 ? "" : "s");
	stackprobe_tools(&tools);
	for (i = 0; i < s->n; i++)
		stacks_start(&s->r[i], &tools);
	if (s->n == 0) {
		snprintf(s->summary, sizeof(s->summary), "no rank running");
		stacks_finish(s);
	}
	return s;
}

/* Cancel and free. */
void
stacks_free(struct stacks *s)
{
	int i;

	if (s == NULL)
		return;
	for (i = 0; s->r != NULL && i < s->n; i++) {
		stacks_rank_release(&s->r[i]);
		free(s->r[i].d);
		free(s->r[i].raw);
		free(s->r[i].logfile);
	}
	free(s->r);
	if (s->tick != NULL)
		event_free(s->tick);
	if (s->finish != NULL)
		event_free(s->finish);
	free(s);
}

/* The summary, "" before done. */
const char *
stacks_summary(const struct stacks *s)
{
	return s->finished ? s->summary : "";
}

/* The stacks file, or "". */
const char *
stacks_path(const struct stacks *s)
{
	return s->path;
}

/* Where the culprit is ("wait <- hang_here (x.py:3) <- main"), or "". */
const char *
stacks_where(const struct stacks *s)
{
	return s->finished ? s->where : "";
}

/* The rank blamed, or -1. */
int
stacks_culprit(const struct stacks *s)
{
	return s->finished ? s->culprit : -1;
}

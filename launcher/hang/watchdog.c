/*
 * watchdog.c: WHERE A HANG IS DETECTED (watchdog.h).  Per rank: the time of
 * its last sign of progress and where it came from; one heartbeat channel
 * (a socketpair of datagrams: the worker's end non-blocking, so a stuck
 * agent never blocks a worker, which then sees EAGAIN); one timer for all
 * ranks at the earliest deadline.  torch's FileTimer (filetimer.c) reports
 * activity and expiries here.
 */
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "errbuf.h"
#include "filetimer.h"
#include "log.h"
#include "monotime.h"
#include "watchdog.h"

enum wd_src { SRC_NONE, SRC_HEARTBEAT, SRC_OUTPUT, SRC_FILETIMER,
	SRC__COUNT };

static const char *const src_names[] = { "none", "heartbeat", "output",
	"filetimer" };

_Static_assert(sizeof(src_names) / sizeof(src_names[0]) == SRC__COUNT,
    "src_names does not match enum wd_src");

struct wd_rank {
	struct watchdog	*wd;
	int		 lr;
	pid_t		 pid;
	int		 active;	/* running in this attempt */
	int		 seen;		/* a first sign came */
	double		 since;		/* start, or the last sign */
	enum wd_src	 src;
	int		 fd, child_fd;	/* heartbeat channel ends */
	struct event	*ev;
	int		 paused;	/* ev off until the resume timer */
	int		 eof;		/* the worker's end is closed */
	char		 section[WATCHDOG_SECTION_MAX + 1];
};

struct watchdog {
	struct watchdog_conf	 c;
	struct filetimer	*ft;
	struct event		*tev;
	struct event		*resume;	/* re-enables paused channels */
	struct wd_rank		*r;
	int			 n;
	int			 fired;	/* on_hung called this attempt */
};

/* The timeout that applies to a rank now. */
static double
wd_limit(const struct watchdog *wd, const struct wd_rank *r)
{
	return r->seen ? wd->c.hang_timeout : wd->c.first_timeout;
}

static void wd_arm(struct watchdog *);

/*
 * A sign of progress of rank r.  The first one moves its deadline from
 * the first-progress timeout to the (usually shorter) hang timeout: the
 * one re-arm of the timer per rank and attempt; later signs only move
 * the time, and the timer finds the new deadline when it fires.
 */
static void
wd_progress(struct wd_rank *r, enum wd_src src)
{
	int first = !r->seen;

	r->since = monotime_s();
	r->seen = 1;
	r->src = src;
	if (first)
		wd_arm(r->wd);
}

/* Tell the owner, once per attempt. */
static void
wd_hung(struct watchdog *wd, struct watchdog_hang *h)
{
	if (wd->fired)
		return;
	wd->fired = 1;
	evtimer_del(wd->tev);
	wd->c.on_hung(wd->c.arg, h);
}

/* Arm the one timer at the earliest deadline of the active ranks. */
static void
wd_arm(struct watchdog *wd)
{
	struct timeval tv;
	double min = INFINITY, now = monotime_s(), d;
	int i;

	if (wd->c.hang_timeout <= 0 || wd->fired)
		return;
	for (i = 0; i < wd->n; i++)
		if (wd->r[i].active &&
		    wd->r[i].since + wd_limit(wd, &wd->r[i]) < min)
			min = wd->r[i].since + wd_limit(wd, &wd->r[i]);
	if (isinf(min)) {
		evtimer_del(wd->tev);
		return;
	}
	d = min - now < 0 ? 0 : min - now;
	tv.tv_sec = (time_t)d;
	tv.tv_usec = (suseconds_t)((d - (double)tv.tv_sec) * 1e6) + 1000;
	evtimer_add(wd->tev, &tv);
}

/*
 * The timer: the most overdue rank past its limit is hung; if none is,
 * sleep until the next deadline (signs that came in the meantime moved
 * the deadlines: nothing was re-armed when they came).
 */
static void
wd_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct watchdog *wd = arg;
	struct watchdog_hang h;
	double now = monotime_s(), over, worst = 0;
	struct wd_rank *r, *hung = NULL;
	int i;

	for (i = 0; i < wd->n; i++) {
		r = &wd->r[i];
		over = now - r->since - wd_limit(wd, r);
		if (r->active && over >= 0 && (hung == NULL || over > worst)) {
			hung = r;
			worst = over;
		}
	}
	if (hung == NULL) {
		wd_arm(wd);
		return;
	}
	memset(&h, 0, sizeof(h));
	h.lr = hung->lr;
	h.idle = now - hung->since;
	h.timeout = wd_limit(wd, hung);
	h.source = src_names[hung->seen ? hung->src : (wd->c.progress_output ?
	    SRC_OUTPUT : SRC_HEARTBEAT)];
	snprintf(h.section, sizeof(h.section), "%s", hung->section);
	snprintf(h.why, sizeof(h.why), "hung: no progress for %.0f s%s",
	    h.idle, hung->seen ? "" : " since it started");
	wd_hung(wd, &h);
}

/*
 * Keep a printable copy of the section of the last complete line in
 * p[0..n) ("step\n"); text without a newline counts as progress only.
 */
static void
wd_section(struct wd_rank *r, const char *p, size_t n)
{
	const char *b;
	size_t i;

	while (n > 0 && p[n - 1] != '\n')
		n--;		/* a partial line: its section is not known */
	while (n > 0 && (p[n - 1] == '\n' || p[n - 1] == '\r'))
		n--;
	if (n == 0)
		return;
	b = memrchr(p, '\n', n);
	b = b != NULL ? b + 1 : p;
	n -= (size_t)(b - p);
	if (n > WATCHDOG_SECTION_MAX)
		n = WATCHDOG_SECTION_MAX;
	for (i = 0; i < n; i++)
		r->section[i] = b[i] >= 0x20 && b[i] < 0x7f ? b[i] : '?';
	r->section[n] = '\0';
}

/* The pause after a drained channel: WATCHDOG_QUIET_MS, at most 1/10 of
 * the hang timeout. */
static struct timeval
wd_quiet(const struct watchdog *wd)
{
	double q = WATCHDOG_QUIET_MS / 1000.0;
	struct timeval tv;

	if (wd->c.hang_timeout / 10 < q)
		q = wd->c.hang_timeout / 10;
	tv.tv_sec = (time_t)q;
	tv.tv_usec = (suseconds_t)((q - (double)tv.tv_sec) * 1e6);
	return tv;
}

/*
 * Heartbeats arrived: a bounded batch of reads per loop turn, then one
 * clock read.  Once the channel is drained it is not watched for
 * WATCHDOG_QUIET_MS (beats queue in the socket meanwhile): a rank beating
 * at 1 kHz wakes the agent about 20 times a second, not 1000, and the time
 * of its last progress is known to within that pause, far below any
 * timeout.  At EOF (every copy of the worker's end closed) the channel is
 * no longer watched.
 */
static void
wd_beat_cb(evutil_socket_t fd, short what, void *arg)
{
	struct wd_rank *r = arg;
	struct watchdog *wd = r->wd;
	struct timeval tv;
	char buf[WATCHDOG_READ_MAX];
	ssize_t n = -1, got = 0;
	int i;

	for (i = 0; i < WATCHDOG_BEATS_PER_READ; i++) {
		if ((n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT)) <= 0)
			break;
		got = n;
	}
	if (got > 0) {
		wd_section(r, buf, (size_t)got);
		if (r->active)
			wd_progress(r, SRC_HEARTBEAT);
	}
	if (n > 0)
		return;		/* more queued: the next loop turn */
	event_del(r->ev);
	if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
		r->eof = 1;
		return;
	}
	r->paused = 1;
	if (!evtimer_pending(wd->resume, NULL)) {
		tv = wd_quiet(wd);
		evtimer_add(wd->resume, &tv);
	}
}

/* The resume timer: watch every paused channel again. */
static void
wd_resume_cb(evutil_socket_t fd, short what, void *arg)
{
	struct watchdog *wd = arg;
	int i;

	for (i = 0; i < wd->n; i++)
		if (wd->r[i].paused && !wd->r[i].eof && wd->r[i].ev != NULL) {
			wd->r[i].paused = 0;
			event_add(wd->r[i].ev, NULL);
		}
}

/* The current rank that owns pid (itself, or in its process group). */
static int
wd_owner_cb(void *arg, pid_t pid)
{
	struct watchdog *wd = arg;
	pid_t pg = getpgid(pid);
	int i;

	for (i = 0; i < wd->n; i++)
		if (wd->r[i].active && wd->r[i].pid > 0 &&
		    (wd->r[i].pid == pid || wd->r[i].pid == pg))
			return i;
	return -1;
}

/* FileTimer activity of rank lr. */
static void
wd_ft_activity_cb(void *arg, int lr)
{
	struct watchdog *wd = arg;

	if (lr >= 0 && lr < wd->n && wd->r[lr].active)
		wd_progress(&wd->r[lr], SRC_FILETIMER);
}

/* A FileTimer of rank lr expired with a signal: it is hung. */
static void
wd_ft_expired_cb(void *arg, int lr, pid_t pid, int sig, const char *scope,
    double timeout, double waited)
{
	struct watchdog *wd = arg;
	struct watchdog_hang h;

	if (lr < 0 || lr >= wd->n || !wd->r[lr].active)
		return;
	memset(&h, 0, sizeof(h));
	h.lr = lr;
	h.idle = waited;
	h.timeout = timeout;
	h.source = src_names[SRC_FILETIMER];
	h.kill_pid = pid;
	h.kill_sig = sig;
	snprintf(h.section, sizeof(h.section), "%s", scope);
	snprintf(h.why, sizeof(h.why), "hung: FileTimer %.120s expired "
	    "after %.0f s", scope, timeout);
	wd_hung(wd, &h);
}

/* A watchdog with the FileTimer FIFO if asked for. */
struct watchdog *
watchdog_new(const struct watchdog_conf *c, char *err, size_t errlen)
{
	struct filetimer_conf fc = { wd_owner_cb, wd_ft_activity_cb,
		wd_ft_expired_cb, NULL };
	struct watchdog *wd;

	if ((wd = calloc(1, sizeof(*wd))) == NULL ||
	    (wd->tev = evtimer_new(c->base, wd_timer_cb, wd)) == NULL ||
	    (wd->resume = evtimer_new(c->base, wd_resume_cb, wd)) == NULL) {
		if (wd != NULL && wd->tev != NULL)
			event_free(wd->tev);
		free(wd);
		errbuf_set(err, errlen, "out of memory");
		return NULL;
	}
	wd->c = *c;
	fc.arg = wd;
	if (c->filetimer && (wd->ft = filetimer_new(c->base, c->timer_path,
	    c->dir, &fc, err, errlen)) == NULL) {
		watchdog_free(wd);
		return NULL;
	}
	if (c->hang_timeout > 0)
		log_info("watchdog hang_timeout=%.1fs first_timeout=%.1fs "
		    "progress=%s", c->hang_timeout, c->first_timeout,
		    c->progress_output ? "output,heartbeat" : "heartbeat");
	return wd;
}

/* Close rank r's channel and event. */
static void
wd_close(struct wd_rank *r)
{
	if (r->ev != NULL)
		event_free(r->ev);
	if (r->fd >= 0)
		close(r->fd);
	if (r->child_fd >= 0)
		close(r->child_fd);
	r->ev = NULL;
	r->fd = r->child_fd = -1;
	r->active = 0;
}

/* The attempt ended: stop watching, drop its FileTimer timers. */
void
watchdog_end(struct watchdog *wd)
{
	int i;

	if (wd == NULL)
		return;
	for (i = 0; i < wd->n; i++)
		wd_close(&wd->r[i]);
	free(wd->r);
	wd->r = NULL;
	wd->n = 0;
	evtimer_del(wd->tev);
	evtimer_del(wd->resume);
	filetimer_clear(wd->ft);
}

/* Free everything; the FIFO is removed. */
void
watchdog_free(struct watchdog *wd)
{
	if (wd == NULL)
		return;
	watchdog_end(wd);
	filetimer_free(wd->ft);
	if (wd->tev != NULL)
		event_free(wd->tev);
	if (wd->resume != NULL)
		event_free(wd->resume);
	free(wd);
}

/* Rank r's heartbeat channel: our end watched, the worker's non-blocking. */
static int
wd_channel(struct watchdog *wd, struct wd_rank *r)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1)
		return -1;
	r->fd = sv[0];
	r->child_fd = sv[1];
	if (fcntl(sv[0], F_SETFL, O_NONBLOCK) == -1 ||
	    fcntl(sv[1], F_SETFL, O_NONBLOCK) == -1 ||
	    (r->ev = event_new(wd->c.base, sv[0], EV_READ | EV_PERSIST,
	    wd_beat_cb, r)) == NULL || event_add(r->ev, NULL) == -1)
		return -1;
	return 0;
}

/* A new attempt: one channel per rank when the progress watchdog is on. */
int
watchdog_begin(struct watchdog *wd, int nproc, char *err, size_t errlen)
{
	int i;

	watchdog_end(wd);
	wd->fired = 0;
	if ((wd->r = calloc((size_t)nproc, sizeof(*wd->r))) == NULL) {
		errbuf_set(err, errlen, "out of memory");
		return -1;
	}
	wd->n = nproc;
	for (i = 0; i < nproc; i++) {
		wd->r[i].wd = wd;
		wd->r[i].lr = i;
		wd->r[i].fd = wd->r[i].child_fd = -1;
	}
	for (i = 0; wd->c.hang_timeout > 0 && i < nproc; i++)
		if (wd_channel(wd, &wd->r[i]) == -1) {
			errbuf_set(err, errlen, "heartbeat channel: %s",
			    strerror(errno));
			return -1;
		}
	return 0;
}

/* The fd lr inherits, or -1. */
int
watchdog_child_fd(const struct watchdog *wd, int lr)
{
	if (wd == NULL || lr < 0 || lr >= wd->n)
		return -1;
	return wd->r[lr].child_fd;
}

/* TORCHELASTIC_TIMER_FILE for the workers, or NULL. */
const char *
watchdog_timer_file(const struct watchdog *wd)
{
	return wd != NULL && wd->ft != NULL ? filetimer_path(wd->ft) : NULL;
}

/* What local rank lr gets from the hang room (nothing without a watchdog). */
void
watchdog_rank_env(const struct watchdog *wd, int lr,
    struct watchdog_rank_env *e)
{
	e->heartbeat_fd = watchdog_child_fd(wd, lr);
	e->timer_file = watchdog_timer_file(wd);
	e->python_stacks = wd != NULL;
}

/* lr runs as pid: start its clock (the first timeout), close its end. */
void
watchdog_started(struct watchdog *wd, int lr, pid_t pid)
{
	struct wd_rank *r;

	if (wd == NULL || lr < 0 || lr >= wd->n)
		return;
	r = &wd->r[lr];
	if (r->child_fd >= 0)
		close(r->child_fd);
	r->child_fd = -1;
	r->pid = pid;
	r->active = 1;
	r->seen = 0;
	r->src = SRC_NONE;
	r->since = monotime_s();
	wd_arm(wd);
}

/* Seconds since running local rank lr's last sign (or start); -1: none. */
int
watchdog_idle(const struct watchdog *wd, int lr, double *idle)
{
	if (wd == NULL || lr < 0 || lr >= wd->n || !wd->r[lr].active)
		return -1;
	*idle = monotime_s() - wd->r[lr].since;
	return 0;
}

/* A line of lr's output. */
void
watchdog_output(struct watchdog *wd, int lr)
{
	if (wd != NULL && wd->c.progress_output && lr >= 0 && lr < wd->n &&
	    wd->r[lr].active)
		wd_progress(&wd->r[lr], SRC_OUTPUT);
}

/* A reaped rank is no longer watched. */
void
watchdog_reaped(struct watchdog *wd, pid_t pid)
{
	int i;

	for (i = 0; wd != NULL && i < wd->n; i++)
		if (wd->r[i].pid == pid)
			wd->r[i].active = 0;
}

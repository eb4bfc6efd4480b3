/*
 * filetimer.c: torch's FileTimer server (filetimer.h): the FIFO, its line
 * reader on the agent's loop, the bounded parser of one request, and the
 * timers with one libevent timer set to the earliest expiry.
 *
 * Why a write end of our own: a FIFO's reader sees EOF (and libevent a
 * read event that never stops firing) whenever no writer has it open;
 * torch's clients open, write one line and close.  Holding a writer keeps
 * the read end quiet between clients.
 *
 * Bounded work per loop turn: at most FILETIMER_LINES_PER_READ lines are
 * handled per read event (the rest waits for the next turn, the FIFO's
 * own buffer throttles the writers, who never block: torch opens with
 * O_NONBLOCK); timers are capped at FILETIMER_TIMERS_MAX; malformed lines
 * are logged (escaped, cut) at most FILETIMER_BAD_LOGS times a minute.
 */
#include <sys/stat.h>
#include <sys/time.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <json-c/json.h>

#include "errbuf.h"
#include "filetimer.h"
#include "log.h"

#define FILETIMER_JSON_DEPTH	4	/* nesting accepted in a request */
#define FILETIMER_BAD_LOGS	20	/* bad-line warnings per minute */
#define FILETIMER_READ_CHUNK	4096

struct ft_timer {
	pid_t	pid;
	int	lr;
	int	sig;
	double	expiration;
	double	set_at;		/* when the request came (wall clock) */
	char	scope[FILETIMER_SCOPE_MAX + 1];
};

struct filetimer {
	struct filetimer_conf	 c;
	struct event_base	*base;
	char			 path[PATH_MAX];
	dev_t			 dev;		/* the FIFO we made */
	ino_t			 ino;
	int			 rfd, wfd;
	struct event		*rev, *tev;
	char			 line[FILETIMER_LINE_MAX + 1];
	size_t			 len;
	int			 skipping;	/* inside an overlong line */
	struct ft_timer		*t;
	int			 nt;
	time_t			 bad_window;	/* start of the log window */
	int			 nbad;
};

/* Wall-clock seconds (torch's expiration_time is time.time()). */
static double
ft_now(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

/* An integer member of o within [min, max]; 0, or -1. */
static int
ft_int(struct json_object *o, const char *key, long min, long max, long *v)
{
	struct json_object *m;
	int64_t n;

	if (!json_object_object_get_ex(o, key, &m) ||
	    !json_object_is_type(m, json_type_int))
		return -1;
	errno = 0;
	n = json_object_get_int64(m);
	if (errno != 0 || n < min || n > max)
		return -1;
	*v = (long)n;
	return 0;
}

/* The members of a parsed request object; FILETIMER_OK or an error. */
static enum filetimer_parse_result
ft_members(struct json_object *o, struct filetimer_req *r, char *err,
    size_t errlen)
{
	struct json_object *m;
	long v;

	if (json_object_object_get_ex(o, "version", &m) &&
	    (ft_int(o, "version", 1, 1, &r->version) == -1)) {
		errbuf_set(err, errlen, "version is not 1");
		return FILETIMER_ERROR;
	}
	if (ft_int(o, "pid", 1, INT_MAX, &v) == -1) {
		errbuf_set(err, errlen, "pid is not a positive integer");
		return FILETIMER_ERROR;
	}
	r->pid = (pid_t)v;
	if (ft_int(o, "signal", INT_MIN, INT_MAX, &v) == -1) {
		errbuf_set(err, errlen, "signal is not an integer");
		return FILETIMER_ERROR;
	}
	r->signal = (int)v;
	if (!json_object_object_get_ex(o, "expiration_time", &m) ||
	    !(json_object_is_type(m, json_type_double) ||
	    json_object_is_type(m, json_type_int)) ||
	    !isfinite(r->expiration = json_object_get_double(m))) {
		errbuf_set(err, errlen, "expiration_time is not a number");
		return FILETIMER_ERROR;
	}
	if (!json_object_object_get_ex(o, "scope_id", &m) ||
	    !json_object_is_type(m, json_type_string)) {
		errbuf_set(err, errlen, "scope_id is not a string");
		return FILETIMER_ERROR;
	}
	snprintf(r->scope, sizeof(r->scope), "%.*s", FILETIMER_SCOPE_MAX,
	    json_object_get_string(m));
	return FILETIMER_OK;
}

/* Parse one request line (see filetimer.h for the contract). */
enum filetimer_parse_result
filetimer_parse(const char *line, size_t len, struct filetimer_req *r,
    char *err, size_t errlen)
{
	struct json_tokener *tok;
	struct json_object *o;
	enum filetimer_parse_result res = FILETIMER_ERROR;
	size_t end;

	memset(r, 0, sizeof(*r));
	r->version = 1;
	if (len > FILETIMER_LINE_MAX) {
		errbuf_set(err, errlen, "line longer than %d bytes",
		    FILETIMER_LINE_MAX);
		return FILETIMER_ERROR;
	}
	if ((tok = json_tokener_new_ex(FILETIMER_JSON_DEPTH)) == NULL) {
		errbuf_set(err, errlen, "out of memory");
		return FILETIMER_ERROR;
	}
	o = json_tokener_parse_ex(tok, line, (int)len);
	end = json_tokener_get_parse_end(tok);
	while (end < len && (line[end] == ' ' || line[end] == '\t' ||
	    line[end] == '\r'))
		end++;
	if (o == NULL || json_tokener_get_error(tok) != json_tokener_success ||
	    end != len)
		errbuf_set(err, errlen, "not one JSON value");
	else if (!json_object_is_type(o, json_type_object))
		errbuf_set(err, errlen, "not a JSON object");
	else
		res = ft_members(o, r, err, errlen);
	json_object_put(o);
	json_tokener_free(tok);
	return res;
}

/* Log a rejected line, escaped and cut, within the per-minute budget. */
static void
ft_bad(struct filetimer *ft, const char *line, size_t len, const char *why)
{
	char esc[160];
	time_t now = time(NULL);

	if (now - ft->bad_window >= 60) {
		if (ft->nbad > FILETIMER_BAD_LOGS)
			log_warnx("filetimer: %d more bad requests not logged",
			    ft->nbad - FILETIMER_BAD_LOGS);
		ft->bad_window = now;
		ft->nbad = 0;
	}
	if (ft->nbad++ >= FILETIMER_BAD_LOGS)
		return;
	log_warnx("filetimer: request ignored: %s: \"%s\"", why,
	    log_escape(esc, sizeof(esc), line, len));
}

/* Re-arm the one timer at the earliest expiry (or disarm it). */
static void
ft_arm(struct filetimer *ft)
{
	struct timeval tv;
	double min = INFINITY, d;
	int i;

	for (i = 0; i < ft->nt; i++)
		if (ft->t[i].expiration < min)
			min = ft->t[i].expiration;
	if (isinf(min)) {
		evtimer_del(ft->tev);
		return;
	}
	d = min - ft_now();
	if (d < 0)
		d = 0;
	if (d > 1e8)
		d = 1e8;
	tv.tv_sec = (time_t)d;
	tv.tv_usec = (suseconds_t)((d - (double)tv.tv_sec) * 1e6) + 1;
	evtimer_add(ft->tev, &tv);
}

/* The timer (pid, scope), or -1. */
static int
ft_find(const struct filetimer *ft, pid_t pid, const char *scope)
{
	int i;

	for (i = 0; i < ft->nt; i++)
		if (ft->t[i].pid == pid && strcmp(ft->t[i].scope, scope) == 0)
			return i;
	return -1;
}

/* Remove timer i (order does not matter). */
static void
ft_remove(struct filetimer *ft, int i)
{
	ft->t[i] = ft->t[--ft->nt];
}

/* Apply a valid request of local rank lr: set, replace or release. */
static void
ft_apply(struct filetimer *ft, const struct filetimer_req *r, int lr)
{
	int i = ft_find(ft, r->pid, r->scope);

	if (r->expiration < 0) {
		if (i >= 0)
			ft_remove(ft, i);
		log_debug("filetimer release pid=%d scope=%s", (int)r->pid,
		    r->scope);
		return;
	}
	if (i < 0 && ft->nt >= FILETIMER_TIMERS_MAX) {
		log_warnx("filetimer: %d timers already; request ignored "
		    "pid=%d", FILETIMER_TIMERS_MAX, (int)r->pid);
		return;
	}
	if (i < 0)
		i = ft->nt++;
	ft->t[i].pid = r->pid;
	ft->t[i].lr = lr;
	ft->t[i].sig = r->signal;
	ft->t[i].expiration = r->expiration;
	ft->t[i].set_at = ft_now();
	snprintf(ft->t[i].scope, sizeof(ft->t[i].scope), "%s", r->scope);
	log_debug("filetimer set pid=%d rank=%d scope=%s in=%.3fs sig=%d",
	    (int)r->pid, lr, r->scope, r->expiration - ft_now(), r->signal);
}

/* One complete line from the FIFO. */
static void
ft_line(struct filetimer *ft, const char *line, size_t len)
{
	struct filetimer_req r;
	char err[128];
	int lr;

	if (filetimer_parse(line, len, &r, err, sizeof(err)) != FILETIMER_OK) {
		ft_bad(ft, line, len, err);
		return;
	}
	if ((lr = ft->c.owner(ft->c.arg, r.pid)) < 0) {
		log_warnx("filetimer: request from pid=%d ignored: not a "
		    "worker of this attempt (nor in a worker's process group)",
		    (int)r.pid);
		return;
	}
	ft_apply(ft, &r, lr);
	ft->c.activity(ft->c.arg, lr);
}

/* Split bytes into lines; an overlong line is dropped up to its "\n". */
static void
ft_feed(struct filetimer *ft, const char *p, size_t n)
{
	const char *nl;
	size_t k;

	while (n > 0) {
		nl = memchr(p, '\n', n);
		k = nl ? (size_t)(nl - p) : n;
		if (!ft->skipping && ft->len + k > FILETIMER_LINE_MAX) {
			ft_bad(ft, ft->line, ft->len, "line longer than "
			    "PIPE_BUF (4096 bytes)");
			ft->skipping = 1;
			ft->len = 0;
		}
		if (!ft->skipping) {
			memcpy(ft->line + ft->len, p, k);
			ft->len += k;
		}
		if (nl != NULL) {
			if (!ft->skipping)
				ft_line(ft, ft->line, ft->len);
			ft->skipping = 0;
			ft->len = 0;
			k++;
		}
		p += k;
		n -= k;
	}
}

/* The FIFO is readable: a bounded batch per loop turn. */
static void
ft_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct filetimer *ft = arg;
	char buf[FILETIMER_READ_CHUNK];
	ssize_t n;
	int i;

	for (i = 0; i < FILETIMER_LINES_PER_READ / 16; i++) {
		n = read(ft->rfd, buf, sizeof(buf));
		if (n <= 0)
			break;
		ft_feed(ft, buf, (size_t)n);
	}
	ft_arm(ft);
}

/*
 * Expired timers, as torch's server: per pid, the earliest expired timer
 * with a signal > 0 names the signal; every expired timer of that pid is
 * dropped.  Expired timers without a signal are dropped too (torch keeps
 * them and logs them again every 0.1 s).
 */
static void
ft_expire_cb(evutil_socket_t fd, short what, void *arg)
{
	struct filetimer *ft = arg;
	double now = ft_now();
	struct ft_timer pick;
	int i, j;

	for (i = 0; i < ft->nt; i++) {
		if (ft->t[i].expiration > now)
			continue;
		pick = ft->t[i];
		pick.sig = 0;
		for (j = ft->nt - 1; j >= 0; j--) {
			if (ft->t[j].pid != pick.pid ||
			    ft->t[j].expiration > now)
				continue;
			if (ft->t[j].sig > 0 && (pick.sig <= 0 ||
			    ft->t[j].expiration < pick.expiration))
				pick = ft->t[j];
			ft_remove(ft, j);
		}
		if (pick.sig <= 0)
			log_info("filetimer expired pid=%d scope=%s: no "
			    "signal given; not reaping it", (int)pick.pid,
			    pick.scope);
		else
			ft->c.expired(ft->c.arg, pick.lr, pick.pid, pick.sig,
			    pick.scope, pick.expiration - pick.set_at,
			    now - pick.set_at);
		i = -1;		/* the array changed: start over */
	}
	ft_arm(ft);
}

/* Make the FIFO at ft->path: replace a FIFO, refuse anything else. */
static int
ft_mkfifo(struct filetimer *ft, char *err, size_t errlen)
{
	struct stat st;

	if (lstat(ft->path, &st) == 0) {
		if (!S_ISFIFO(st.st_mode)) {
			errbuf_set(err, errlen, "TORCHELASTIC_TIMER_FILE %s "
			    "exists and is not a FIFO; not replacing it",
			    ft->path);
			return -1;
		}
		unlink(ft->path);	/* a stale FIFO: torchrun does too */
	}
	if (mkfifo(ft->path, 0600) == -1 || lstat(ft->path, &st) == -1) {
		errbuf_set(err, errlen, "cannot create the timer FIFO %s: %s",
		    ft->path, strerror(errno));
		return -1;
	}
	ft->dev = st.st_dev;
	ft->ino = st.st_ino;
	return 0;
}

/* Open the read end and our own write end, both non-blocking. */
static int
ft_open(struct filetimer *ft, char *err, size_t errlen)
{
	ft->rfd = open(ft->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (ft->rfd >= 0)
		ft->wfd = open(ft->path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	if (ft->rfd < 0 || ft->wfd < 0) {
		errbuf_set(err, errlen, "cannot open the timer FIFO %s: %s",
		    ft->path, strerror(errno));
		return -1;
	}
	ft->rev = event_new(ft->base, ft->rfd, EV_READ | EV_PERSIST,
	    ft_read_cb, ft);
	ft->tev = evtimer_new(ft->base, ft_expire_cb, ft);
	if (ft->rev == NULL || ft->tev == NULL || event_add(ft->rev, NULL)) {
		errbuf_set(err, errlen, "cannot watch the timer FIFO");
		return -1;
	}
	return 0;
}

/* Serve torch's FileTimer requests (see filetimer.h). */
struct filetimer *
filetimer_new(struct event_base *base, const char *path, const char *dir,
    const struct filetimer_conf *c, char *err, size_t errlen)
{
	struct filetimer *ft;
	int n;

	if ((ft = calloc(1, sizeof(*ft))) == NULL ||
	    (ft->t = calloc(FILETIMER_TIMERS_MAX, sizeof(*ft->t))) == NULL) {
		free(ft);
		errbuf_set(err, errlen, "out of memory");
		return NULL;
	}
	ft->c = *c;
	ft->base = base;
	ft->rfd = ft->wfd = -1;
	if (path != NULL && *path != '\0')
		n = snprintf(ft->path, sizeof(ft->path), "%s", path);
	else
		n = snprintf(ft->path, sizeof(ft->path), "%s/timer.fifo", dir);
	if (n < 0 || (size_t)n >= sizeof(ft->path)) {
		errbuf_set(err, errlen, "timer FIFO path too long");
		free(ft->t);
		free(ft);
		return NULL;
	}
	if (ft_mkfifo(ft, err, errlen) == -1) {
		ft->ino = 0;
		filetimer_free(ft);
		return NULL;
	}
	if (ft_open(ft, err, errlen) == -1) {
		filetimer_free(ft);
		return NULL;
	}
	log_info("filetimer serving %s", ft->path);
	return ft;
}

/* The FIFO's path. */
const char *
filetimer_path(const struct filetimer *ft)
{
	return ft->path;
}

/* The attempt ended: its timers go. */
void
filetimer_clear(struct filetimer *ft)
{
	if (ft == NULL)
		return;
	ft->nt = 0;
	evtimer_del(ft->tev);
}

/* Stop, remove our FIFO (only if it is still the one we made), free. */
void
filetimer_free(struct filetimer *ft)
{
	struct stat st;

	if (ft == NULL)
		return;
	if (ft->rev != NULL)
		event_free(ft->rev);
	if (ft->tev != NULL)
		event_free(ft->tev);
	if (ft->rfd >= 0)
		close(ft->rfd);
	if (ft->wfd >= 0)
		close(ft->wfd);
	if (ft->ino != 0 && lstat(ft->path, &st) == 0 && st.st_dev == ft->dev &&
	    st.st_ino == ft->ino)
		unlink(ft->path);
	free(ft->t);
	free(ft);
}

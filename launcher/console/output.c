/*
 * output.c: worker pipes to whole, prefixed lines.
 *
 * The agent is single-threaded and every line is written with one write()
 * of "prefix + line" (a batch of whole lines per read), so lines of
 * different workers never mix mid-line on the console.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "log.h"
#include "output.h"
#include "tty.h"

#define OUTPUT_FILTERS_MAX	32	/* --duplicate-*-filters entries */
#define OUTPUT_STUCK_MS		10000	/* wait for room in a full sink */
#define OUTPUT_PIPE_CHUNK	4096	/* one pipe page: fits once POLLOUT */

/* The eager stream whose console line is unfinished, or NULL. */
static struct output *output_open;

struct output {
	struct event	*ev;
	int		 fd;
	int		 eof;
	int		 console_fd, file_fd, filter_fd;
	char		 prefix[OUTPUT_PREFIX_MAX];
	size_t		 prefixlen;
	char		 fprefix[OUTPUT_PREFIX_MAX];	/* filter file's */
	size_t		 fprefixlen;
	void		(*tap)(void *, const char *, size_t);	/* or NULL */
	void		*tap_arg;
	char		*filters[OUTPUT_FILTERS_MAX];
	int		 nfilters;
	struct event	*eager;		/* shows a partial line when quiet */
	int		 pty;
	void		(*on_eof)(void *);
	void		(*on_lines)(void *);
	void		*arg;
	size_t		 len;
	char		 buf[OUTPUT_LINE_MAX + 1];	/* + room for a '\n' */
};

/*
 * Worker output that could not be written, per sink: cgrun's stdout, its
 * stderr, and log files.  The first loss of each is said at once (one
 * line on stderr); output_report_losses() sums them up at the end.  The
 * exit status stays the job's (cgrun.1, Output).
 */
static struct output_loss {
	const char		*name;
	unsigned long long	 bytes;
	int			 err;		/* errno of the first loss */
	int			 closed;	/* closed when cgrun started */
	int			 stuck;		/* full for 10 s: do not wait */
} output_losses[3] = { { "stdout", 0, 0, 0, 0 }, { "stderr", 0, 0, 0, 0 },
	{ "a log file", 0, 0, 0, 0 } };

/* The loss record of fd: 1 stdout, 2 stderr, any other a log file. */
static struct output_loss *
output_loss_of(int fd)
{
	return &output_losses[fd == 1 ? 0 : fd == 2 ? 1 : 2];
}

/* Why a sink loses output, for the lines below. */
static const char *
output_loss_why(const struct output_loss *l)
{
	if (l->closed)
		return "it was closed when cgrun started";
	return l->err == EAGAIN ? "it stayed full for 10 s" : strerror(l->err);
}

/* len bytes for fd are lost (err: why); the first loss is said once. */
static void
output_lost(int fd, int err, size_t len)
{
	struct output_loss *l = output_loss_of(fd);

	if (l->bytes == 0 && l->err == 0) {
		l->err = err;
		log_warnx("worker output to %s is being lost: %s; later output "
		    "to it may be lost too (the total is reported at the end)",
		    l->name, output_loss_why(l));
	}
	l->bytes += len;
}

/* Console fd (1 or 2) was closed when cgrun started (now /dev/null). */
void
output_console_closed(int fd)
{
	output_loss_of(fd)->closed = 1;
}

/* At the end of the job: one line per sink that lost worker output. */
void
output_report_losses(void)
{
	int i;

	for (i = 0; i < 3; i++)
		if (output_losses[i].bytes > 0)
			log_warnx("%llu bytes of worker output could not be "
			    "written to %s: %s", output_losses[i].bytes,
			    output_losses[i].name,
			    output_loss_why(&output_losses[i]));
}

/*
 * Write all of buf to fd; what cannot be written is counted and said
 * (output_lost).  cgrun's console may be a blocking pipe whose reader
 * stopped: a blocking write() there would stop the whole agent (signals,
 * keep-alives), so each piece of at most OUTPUT_PIPE_CHUNK bytes is
 * written only once poll() says there is room (a pipe page), waiting at
 * most OUTPUT_STUCK_MS; a sink stuck that long is not waited for again
 * until a write to it succeeds.
 */
void
output_write_all(int fd, const void *buf, size_t len)
{
	struct output_loss *l = output_loss_of(fd);
	const char *p = buf;
	struct pollfd pfd;
	ssize_t n;
	int r;

	if (fd <= 2 && l->closed) {
		output_lost(fd, EBADF, len);
		return;
	}
	while (len > 0) {
		pfd.fd = fd;
		pfd.events = POLLOUT;
		if ((r = poll(&pfd, 1, l->stuck ? 0 : OUTPUT_STUCK_MS)) == -1 &&
		    errno == EINTR)
			continue;
		if (r == 0) {
			l->stuck = 1;
			output_lost(fd, EAGAIN, len);
			return;
		}
		n = write(fd, p, len < OUTPUT_PIPE_CHUNK ? len :
		    OUTPUT_PIPE_CHUNK);
		if (n > 0) {
			p += n;
			len -= (size_t)n;
			l->stuck = 0;
			continue;
		}
		if (n == -1 && (errno == EINTR || errno == EAGAIN))
			continue;
		/* EPIPE, closed console, disk full */
		output_lost(fd, n == 0 ? EIO : errno, len);
		return;
	}
}

/* Split "a,b,,c" into filters {"a", "b,c"}. */
static void
output_parse_filters(struct output *o, const char *s)
{
	char *cur;
	size_t n;

	while (s != NULL && *s != '\0' && o->nfilters < OUTPUT_FILTERS_MAX) {
		if ((cur = calloc(1, strlen(s) + 1)) == NULL)
			return;
		for (n = 0; *s != '\0'; s++) {
			if (*s == ',' && s[1] == ',') {
				cur[n++] = ',';
				s++;
			} else if (*s == ',') {
				s++;
				break;
			} else
				cur[n++] = *s;
		}
		if (n == 0)
			free(cur);
		else
			o->filters[o->nfilters++] = cur;
	}
}

/* Whether one line (len bytes) matches a duplicate filter. */
static int
output_matches(const struct output *o, const char *line, size_t len)
{
	int i;

	for (i = 0; i < o->nfilters; i++)
		if (memmem(line, len, o->filters[i], strlen(o->filters[i])) !=
		    NULL)
			return 1;
	return 0;
}

/*
 * Length of the line at p (up to end), its terminator included: "\n",
 * "\r\n" or a lone "\r" (a progress bar's update, as Python's universal
 * newlines, which torchrun's tee uses, read it); 0 when p has none.
 */
static size_t
output_line_len(const char *p, const char *end)
{
	const char *q;

	for (q = p; q < end; q++) {
		if (*q == '\n')
			return (size_t)(q - p) + 1;
		if (*q == '\r')
			return (size_t)(q - p) + (q + 1 < end && q[1] == '\n' ? 2 : 1);
	}
	return 0;
}

/* End the console line an eager stream left open, if any. */
static void
output_close_open(void)
{
	if (output_open != NULL)
		output_write_all(output_open->console_fd, "\n", 1);
	output_open = NULL;
}

/*
 * Write buf[0..len), lines each with a terminator (and, on the console of
 * an eager stream, a last partial one), prefixed, to fd in one write.  An
 * empty line ended by a lone '\r' at a line start (tqdm starts every
 * update with one) is skipped: it would only repeat the prefix.  On the
 * console, a line this stream left open continues without a prefix
 * (there a lone '\r' returns to the prefix); one another stream left
 * open is ended first.
 */
static void
output_prefixed(struct output *o, int fd, const char *buf, size_t len,
    int filtered)
{
	static char *scratch;
	static size_t cap;
	const char *p = buf, *end = buf + len;
	const char *pre = filtered ? o->fprefix : o->prefix;
	size_t prelen = filtered ? o->fprefixlen : o->prefixlen;
	size_t need = len + prelen, n = 0, ll, i;
	int cont = !filtered && output_open == o, partial;
	char *ns;

	if (!filtered && output_open != NULL && output_open != o)
		output_close_open();
	for (i = 0; i < len; i++)
		if (buf[i] == '\n' || buf[i] == '\r')
			need += prelen;
	if (need > cap) {
		if ((ns = realloc(scratch, need)) == NULL)
			return;
		scratch = ns;
		cap = need;
	}
	for (; p < end; p += ll) {
		if ((partial = (ll = output_line_len(p, end)) == 0))
			ll = (size_t)(end - p);
		if ((ll == 1 && *p == '\r' && !cont) || (filtered &&
		    (partial || !output_matches(o, p, ll))))
			continue;
		if (!cont) {
			memcpy(scratch + n, pre, prelen);
			n += prelen;
		}
		memcpy(scratch + n, p, ll);
		n += ll;
		cont = partial;
	}
	if (n > 0)
		output_write_all(fd, scratch, n);
	if (!filtered)
		output_open = cont ? o : NULL;
}

/* Show each whole line of buf[0..len) to the tap, if one is set. */
static void
output_tap_lines(const struct output *o, const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len;
	size_t ll;

	for (; o->tap != NULL && p < end && (ll = output_line_len(p, end)) >
	    0; p += ll)
		o->tap(o->tap_arg, p, ll);
}

/* Emit the first len buffered bytes (whole lines) and shift the rest. */
static void
output_emit(struct output *o, size_t len)
{
	if (len == 0)
		return;
	output_tap_lines(o, o->buf, len);
	if (o->console_fd >= 0)
		output_prefixed(o, o->console_fd, o->buf, len, 0);
	if (o->filter_fd >= 0 && o->nfilters > 0)
		output_prefixed(o, o->filter_fd, o->buf, len, 1);
	memmove(o->buf, o->buf + len, o->len - len);
	o->len -= len;
}

/* Emit every complete line; with force also a partial one (+ '\n'). */
static void
output_flush(struct output *o, int force)
{
	char *nl, *cr;
	size_t scan = o->len;

	/* At EOF a last progress update ("...\r") ends its line. */
	if (force && scan >= 2 && o->buf[scan - 1] == '\r' &&
	    o->buf[scan - 2] != '\n' && o->buf[scan - 2] != '\r')
		o->buf[scan - 1] = '\n';
	/* A '\r' at the very end may be the first half of "\r\n": wait. */
	if (scan > 0 && o->buf[scan - 1] == '\r' && !force &&
	    o->len < OUTPUT_LINE_MAX)
		scan--;
	nl = scan ? memrchr(o->buf, '\n', scan) : NULL;
	cr = scan ? memrchr(o->buf, '\r', scan) : NULL;
	if (cr != NULL && (nl == NULL || cr > nl))
		nl = cr;
	if (nl != NULL)
		output_emit(o, (size_t)(nl - o->buf) + 1);
	if (nl != NULL && o->on_lines != NULL)
		o->on_lines(o->arg);
	if (o->len > 0 && (force || o->len == OUTPUT_LINE_MAX)) {
		o->buf[o->len++] = '\n';
		output_emit(o, o->len);
	} else if (o->eager != NULL && o->len > 0) {
		/* maybe a prompt: shown if nothing follows soon (a line
		 * written in pieces stays whole) */
		struct timeval tv = { 0, OUTPUT_EAGER_USEC };

		evtimer_add(o->eager, &tv);
	} else if (o->eager != NULL)
		evtimer_del(o->eager);
}

/* An eager stream was quiet with a partial line: show it (a prompt, or
 * readline's echo), but not a last '\r' that may be half of "\r\n". */
static void
output_eager_cb(evutil_socket_t fd, short what, void *arg)
{
	struct output *o = arg;

	output_emit(o, o->len - (o->len > 0 && o->buf[o->len - 1] == '\r'));
}

/* Read once; returns bytes read, 0 at EOF or error, -1 when none ready. */
static ssize_t
output_read(struct output *o)
{
	ssize_t n;

	do
		n = read(o->fd, o->buf + o->len, OUTPUT_LINE_MAX - o->len);
	while (n == -1 && errno == EINTR);
	if (n == -1 && errno == EAGAIN)
		return -1;
	if (n <= 0)
		return 0;
	if (o->file_fd >= 0)
		output_write_all(o->file_fd, o->buf + o->len, (size_t)n);
	o->len += (size_t)n;
	return n;
}

/* Mark EOF: flush the partial line, close the pipe. */
static void
output_finish(struct output *o)
{
	output_flush(o, 1);
	if (output_open == o)
		output_close_open();
	if (o->eager != NULL)
		evtimer_del(o->eager);
	if (o->pty)
		tty_pty_closed(o->fd);
	o->eof = 1;
	if (o->tap != NULL)
		o->tap(o->tap_arg, NULL, 0);
	if (o->ev != NULL)
		event_del(o->ev);
	close(o->fd);
	o->fd = -1;
}

/* Readable pipe: read a chunk, write whole lines, notice EOF. */
static void
output_cb(evutil_socket_t fd, short what, void *arg)
{
	struct output *o = arg;
	ssize_t n;

	if (o->len == OUTPUT_LINE_MAX)
		output_flush(o, 0);
	n = output_read(o);
	if (n == -1)
		return;
	if (n > 0) {
		output_flush(o, 0);
		return;
	}
	output_finish(o);
	if (o->on_eof != NULL)
		o->on_eof(o->arg);
}

/* Copy a prefix (NULL: none) into an OUTPUT_PREFIX_MAX buffer; its length. */
static size_t
output_copy_prefix(char *dst, const char *src)
{
	size_t n = strlen(src ? src : "");

	if (n >= OUTPUT_PREFIX_MAX)
		n = OUTPUT_PREFIX_MAX - 1;
	memcpy(dst, src ? src : "", n);
	return n;
}

/* Start watching a worker pipe. */
struct output *
output_new(struct event_base *base, int fd, const struct output_conf *c)
{
	struct output *o;

	if ((o = malloc(sizeof(*o))) == NULL)
		return NULL;
	memset(o, 0, offsetof(struct output, buf));
	o->fd = fd;
	o->console_fd = c->console_fd;
	o->file_fd = c->file_fd;
	o->filter_fd = c->filter_fd;
	o->on_eof = c->on_eof;
	o->pty = c->pty;
	if (c->eager && c->console_fd >= 0 &&
	    (o->eager = evtimer_new(base, output_eager_cb, o)) == NULL) {
		free(o);
		errno = ENOMEM;
		return NULL;
	}
	o->on_lines = c->on_lines;
	o->arg = c->arg;
	o->prefixlen = output_copy_prefix(o->prefix, c->prefix);
	o->fprefixlen = output_copy_prefix(o->fprefix, c->filter_prefix ?
	    c->filter_prefix : c->prefix);
	output_parse_filters(o, c->filters);
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	o->ev = event_new(base, fd, EV_READ | EV_PERSIST, output_cb, o);
	if (o->ev == NULL || event_add(o->ev, NULL) == -1) {
		if (o->ev != NULL)
			event_free(o->ev);
		if (o->eager != NULL)
			event_free(o->eager);
		free(o);
		errno = ENOMEM;
		return NULL;
	}
	return o;
}

/* Read whatever is left without waiting, then close (no on_eof call). */
void
output_drain(struct output *o)
{
	if (o == NULL || o->eof)
		return;
	while (output_read(o) > 0)
		output_flush(o, 0);
	output_finish(o);
}

/* Set (or with NULL remove) the line tap; at EOF it gets (NULL, 0). */
void
output_tap(struct output *o, void (*fn)(void *, const char *, size_t),
    void *arg)
{
	o->tap = fn;
	o->tap_arg = arg;
}

/* Whether EOF was seen. */
int
output_eof(const struct output *o)
{
	return o == NULL || o->eof;
}

/* Free a stream (drained first). */
void
output_free(struct output *o)
{
	int i;

	if (o == NULL)
		return;
	output_drain(o);
	if (o->ev != NULL)
		event_free(o->ev);
	if (o->eager != NULL)
		event_free(o->eager);
	if (o->file_fd >= 0)
		close(o->file_fd);
	for (i = 0; i < o->nfilters; i++)
		free(o->filters[i]);
	free(o);
}

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

#include "output.h"

#define OUTPUT_FILTERS_MAX	32	/* --duplicate-*-filters entries */

struct output {
	struct event	*ev;
	int		 fd;
	int		 eof;
	int		 console_fd, file_fd, filter_fd;
	char		 prefix[OUTPUT_PREFIX_MAX];
	size_t		 prefixlen;
	void		(*tap)(void *, const char *, size_t);	/* or NULL */
	void		*tap_arg;
	char		*filters[OUTPUT_FILTERS_MAX];
	int		 nfilters;
	void		(*on_eof)(void *);
	void		(*on_lines)(void *);
	void		*arg;
	size_t		 len;
	char		 buf[OUTPUT_LINE_MAX + 1];	/* + room for a '\n' */
};

/* Write all of buf to fd; waits (bounded) while a pipe is full. */
void
output_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	struct pollfd pfd;
	ssize_t n;

	while (len > 0) {
		n = write(fd, p, len);
		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno == EAGAIN) {
			pfd.fd = fd;
			pfd.events = POLLOUT;
			if (poll(&pfd, 1, 10000) > 0)
				continue;
		}
		return;		/* EPIPE, closed console, or stuck 10 s */
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

/*
 * Write buf[0..len), whole lines (each ends in a terminator), prefixed,
 * to fd in one write.  An empty line ended by a lone '\r' (tqdm starts
 * every update with one) is skipped: it would only repeat the prefix.
 */
static void
output_prefixed(const struct output *o, int fd, const char *buf, size_t len,
    int filtered)
{
	static char *scratch;
	static size_t cap;
	const char *p = buf, *end = buf + len;
	size_t need = len, n = 0, ll, i;
	char *ns;

	for (i = 0; i < len; i++)
		if (buf[i] == '\n' || buf[i] == '\r')
			need += o->prefixlen;
	if (need > cap) {
		if ((ns = realloc(scratch, need)) == NULL)
			return;
		scratch = ns;
		cap = need;
	}
	for (; p < end && (ll = output_line_len(p, end)) > 0; p += ll) {
		if (ll == 1 && *p == '\r')
			continue;
		if (filtered && !output_matches(o, p, ll))
			continue;
		memcpy(scratch + n, o->prefix, o->prefixlen);
		memcpy(scratch + n + o->prefixlen, p, ll);
		n += o->prefixlen + ll;
	}
	if (n > 0)
		output_write_all(fd, scratch, n);
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
	}
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
	o->on_lines = c->on_lines;
	o->arg = c->arg;
	o->prefixlen = strlen(c->prefix ? c->prefix : "");
	if (o->prefixlen >= sizeof(o->prefix))
		o->prefixlen = sizeof(o->prefix) - 1;
	memcpy(o->prefix, c->prefix ? c->prefix : "", o->prefixlen);
	output_parse_filters(o, c->filters);
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	o->ev = event_new(base, fd, EV_READ | EV_PERSIST, output_cb, o);
	if (o->ev == NULL || event_add(o->ev, NULL) == -1) {
		if (o->ev != NULL)
			event_free(o->ev);
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
	if (o->file_fd >= 0)
		close(o->file_fd);
	for (i = 0; i < o->nfilters; i++)
		free(o->filters[i]);
	free(o);
}

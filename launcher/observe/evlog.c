/*
 * evlog.c: the job's event log (evlog.h): records stamped with the common
 * members, one line each, written at once to files and as far as there
 * is room to pipes, sockets and terminals, the rest queued and bounded.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <json-c/json.h>

#include "errbuf.h"
#include "evlog.h"
#include "log.h"
#include "monotime.h"
#include "round.h"
#include "utf8.h"

#define EVLOG_FD_MAX	65535
#define EVLOG_CHUNK	4096	/* PIPE_BUF: a whole write once poll says so */

struct evlog {
	int			 fd;
	int			 own_fd;	/* opened here: closed here */
	int			 polled;	/* pipe, socket, terminal */
	int			 broken;	/* a write failed: errno */
	struct evbuffer		*q;		/* polled: waiting for room */
	struct event		*wev;		/* polled: room again */
	char			 dest[PATH_MAX];
	char			 run_id[ROUND_RUNID_MAX];
	char			 node[256];
	int			 attempt;
	unsigned long long	 seq, dropped;
};

/* Parse an --event-log destination (see evlog.h). */
int
evlog_dest_parse(const char *dest, int *fd)
{
	const char *p;
	long n = 0;

	if (strncmp(dest, "fd:", 3) != 0)
		return 0;
	for (p = dest + 3; *p >= '0' && *p <= '9' && n <= EVLOG_FD_MAX; p++)
		n = n * 10 + (*p - '0');
	if (p == dest + 3 || *p != '\0' || n > EVLOG_FD_MAX)
		return -1;
	*fd = (int)n;
	return 1;
}

/* A JSON string of s made valid UTF-8 (peers' and workers' bytes). */
struct json_object *
evlog_string(const char *s)
{
	struct json_object *o;
	size_t n = UTF8_VALID_SIZE(strlen(s));
	char *buf;

	if ((buf = malloc(n)) == NULL)
		return NULL;
	o = json_object_new_string(utf8_valid(s, buf, n));
	free(buf);
	return o;
}

/* Whether writes to fd can wait for room (pipe, socket, terminal). */
static int
evlog_waits(int fd)
{
	struct stat st;

	if (fstat(fd, &st) == -1)
		return 0;
	return S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) ||
	    (S_ISCHR(st.st_mode) && isatty(fd));
}

/*
 * Open the file dest names, without waiting: a FIFO with no reader would
 * block open() for ever (O_NONBLOCK makes that ENXIO).  What is polled
 * (a FIFO, a terminal) keeps O_NONBLOCK, on a description of its own; a
 * file or another device is written at once and loses it.  -1 with err.
 */
static int
evlog_open_path(struct evlog *l, const char *dest, char *err, size_t errlen)
{
	struct stat st;
	int fl;

	if ((l->fd = open(dest, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC |
	    O_NONBLOCK, 0644)) == -1) {
		if (errno == ENXIO && stat(dest, &st) == 0 &&
		    S_ISFIFO(st.st_mode))
			errbuf_set(err, errlen, "--event-log %s: a FIFO with no "
			    "reader (start its reader first)", dest);
		else
			errbuf_set(err, errlen, "--event-log %s: %s", dest,
			    strerror(errno));
		return -1;
	}
	l->own_fd = 1;
	if (!evlog_waits(l->fd) && (fl = fcntl(l->fd, F_GETFL)) != -1)
		fcntl(l->fd, F_SETFL, fl & ~O_NONBLOCK);
	return 0;
}

/* Check an --event-log destination's fd:N (see evlog.h). */
int
evlog_dest_check(const char *dest, char *err, size_t errlen)
{
	int fd, fl, kind = evlog_dest_parse(dest, &fd);

	if (kind == -1) {
		errbuf_set(err, errlen, "--event-log %s: expected fd:N (N a "
		    "file descriptor, 0-%d) or a file", dest, EVLOG_FD_MAX);
		return -1;
	}
	if (kind == 0)
		return 0;
	if ((fl = fcntl(fd, F_GETFL)) == -1 || (fl & O_ACCMODE) == O_RDONLY) {
		errbuf_set(err, errlen, "--event-log %s: file descriptor %d is "
		    "%s", dest, fd, fl == -1 ? "not open" :
		    "not open for writing");
		return -1;
	}
	return 1;
}

/* The fd to write: fd:N checked open for writing, or the file opened. */
static int
evlog_open_fd(struct evlog *l, const char *dest, char *err, size_t errlen)
{
	switch (evlog_dest_check(dest, err, errlen)) {
	case -1:
		return -1;
	case 1:
		evlog_dest_parse(dest, &l->fd);
		return 0;
	}
	return evlog_open_path(l, dest, err, errlen);
}

/* The records still queued are lost: count them (whole lines). */
static void
evlog_lose_queue(struct evlog *l)
{
	const char *p;
	size_t n;

	if (l->q == NULL)
		return;
	n = evbuffer_get_length(l->q);
	p = (const char *)evbuffer_pullup(l->q, -1);
	for (; p != NULL && n > 0; n--)
		l->dropped += *p++ == '\n';
	evbuffer_drain(l->q, evbuffer_get_length(l->q));
}

/* The writer of the log is broken (the reader went away, disk full). */
static void
evlog_break(struct evlog *l, int err)
{
	if (l->broken)
		return;
	l->broken = err;
	log_warnx("--event-log %s: cannot write: %s; later records are "
	    "dropped", l->dest, strerror(err));
	evlog_lose_queue(l);
}

/*
 * How much of the queue to write at once: the whole records among its
 * first EVLOG_CHUNK bytes, so that a reader that stops never holds half a
 * record and nothing else written to the fd lands inside one; a record
 * longer than EVLOG_CHUNK alone goes in pieces.
 */
static size_t
evlog_chunk(struct evlog *l)
{
	size_t n = evbuffer_get_length(l->q);
	const char *p, *nl;

	if (n <= EVLOG_CHUNK)
		return n;
	if ((p = (const char *)evbuffer_pullup(l->q, EVLOG_CHUNK)) == NULL ||
	    (nl = memrchr(p, '\n', EVLOG_CHUNK)) == NULL)
		return EVLOG_CHUNK;
	return (size_t)(nl - p) + 1;
}

/*
 * Write the queue while the fd has room (poll), waiting at most wait_ms in
 * all; 0 when it is empty, -1 when the fd has no room.
 */
static int
evlog_drain(struct evlog *l, int wait_ms)
{
	int64_t end = monotime_ms() + wait_ms, left = wait_ms;
	struct pollfd pfd;
	int r;

	while (!l->broken && evbuffer_get_length(l->q) > 0) {
		pfd.fd = l->fd;
		pfd.events = POLLOUT;
		if ((r = poll(&pfd, 1, (int)left)) == -1 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		if (evbuffer_write_atmost(l->q, l->fd, evlog_chunk(l)) == -1 &&
		    errno != EINTR && errno != EAGAIN)
			evlog_break(l, errno);
		if (wait_ms > 0 && (left = end - monotime_ms()) < 0)
			left = 0;
	}
	return 0;
}

/* The fd has room again: write on, and wait again if still full. */
static void
evlog_room_cb(evutil_socket_t fd, short what, void *arg)
{
	struct evlog *l = arg;

	if (evlog_drain(l, 0) == 0)
		event_del(l->wev);
}

/*
 * The first done bytes of a record reached a regular file, the rest could
 * not (disk full, quota, file size limit): take them back, so that the
 * log ends with a whole line; not when something was appended after them
 * (a file shared by several agents).
 */
static void
evlog_unwrite(struct evlog *l, size_t done)
{
	struct stat st;
	off_t end;

	if (done == 0 || fstat(l->fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    (end = lseek(l->fd, 0, SEEK_CUR)) == -1 || st.st_size != end ||
	    end < (off_t)done)
		return;
	if (ftruncate(l->fd, end - (off_t)done) == -1)
		log_warn("--event-log %s: cannot take back a half record",
		    l->dest);
}

/* Write all of a record to a file or device at once. */
static void
evlog_write_now(struct evlog *l, const char *p, size_t n)
{
	size_t done = 0;
	ssize_t w;

	while (done < n) {
		if ((w = write(l->fd, p + done, n - done)) == -1 &&
		    errno == EINTR)
			continue;
		if (w <= 0) {
			evlog_break(l, w == 0 ? EIO : errno);
			evlog_unwrite(l, done);
			l->dropped++;
			return;
		}
		done += (size_t)w;
	}
}

/* Queue a record for a pipe, socket or terminal, and write what fits. */
static void
evlog_write_polled(struct evlog *l, const char *p, size_t n)
{
	if (evbuffer_get_length(l->q) + n > EVLOG_QUEUE_MAX) {
		l->dropped++;
		return;
	}
	evbuffer_add(l->q, p, n);
	if (evlog_drain(l, 0) == -1)
		event_add(l->wev, NULL);
}

/* Open the log (see evlog.h). */
struct evlog *
evlog_open(struct event_base *base, const char *dest, const char *run_id,
    const char *node, char *err, size_t errlen)
{
	struct evlog *l;

	if ((l = calloc(1, sizeof(*l))) == NULL) {
		errbuf_set(err, errlen, "out of memory");
		return NULL;
	}
	l->fd = -1;
	snprintf(l->dest, sizeof(l->dest), "%s", dest);
	utf8_valid(run_id, l->run_id, sizeof(l->run_id));
	utf8_valid(node, l->node, sizeof(l->node));
	if (evlog_open_fd(l, dest, err, errlen) == -1)
		goto fail;
	if ((l->polled = evlog_waits(l->fd)) &&
	    ((l->q = evbuffer_new()) == NULL || (l->wev = event_new(base,
	    l->fd, EV_WRITE | EV_PERSIST, evlog_room_cb, l)) == NULL)) {
		errbuf_set(err, errlen, "out of memory");
		goto fail;
	}
	return l;
fail:
	evlog_close(l);
	return NULL;
}

/* The attempt the next records belong to. */
void
evlog_set_attempt(struct evlog *l, int attempt)
{
	if (l != NULL)
		l->attempt = attempt;
}

/* RFC 3339 UTC time with microseconds: "2025-01-31T12:00:00.123456Z". */
static void
evlog_time(char *buf, size_t len)
{
	struct timespec ts;
	struct tm tm;
	size_t n;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, len - n, ".%06ldZ", ts.tv_nsec / 1000);
}

/* A new record with the common members (see evlog.h). */
struct json_object *
evlog_record(struct evlog *l, const char *kind)
{
	struct json_object *o;
	char t[64];

	if (l == NULL || (o = json_object_new_object()) == NULL)
		return NULL;
	evlog_time(t, sizeof(t));
	json_object_object_add(o, "schema", json_object_new_int(EVLOG_SCHEMA));
	json_object_object_add(o, "time", json_object_new_string(t));
	json_object_object_add(o, "seq", json_object_new_uint64(++l->seq));
	json_object_object_add(o, "event", json_object_new_string(kind));
	json_object_object_add(o, "run_id", json_object_new_string(l->run_id));
	json_object_object_add(o, "node", json_object_new_string(l->node));
	json_object_object_add(o, "attempt", json_object_new_int(l->attempt));
	return o;
}

/* Write (or queue, or drop) one record as a line, and release it. */
void
evlog_emit(struct evlog *l, struct json_object *o)
{
	const char *text;
	char *line;
	size_t n;

	if (l == NULL || o == NULL) {
		json_object_put(o);
		return;
	}
	text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE);
	n = text != NULL ? strlen(text) : 0;
	if (l->broken || n == 0 || n >= EVLOG_RECORD_MAX ||
	    (line = malloc(n + 1)) == NULL) {
		l->dropped++;
		json_object_put(o);
		return;
	}
	memcpy(line, text, n);
	line[n] = '\n';
	json_object_put(o);
	if (l->polled)
		evlog_write_polled(l, line, n + 1);
	else
		evlog_write_now(l, line, n + 1);
	free(line);
}

/* Records dropped so far. */
unsigned long long
evlog_dropped(const struct evlog *l)
{
	return l != NULL ? l->dropped : 0;
}

/* Write what is queued (bounded wait); what is left is lost, counted. */
void
evlog_flush(struct evlog *l)
{
	if (l == NULL || l->q == NULL || evbuffer_get_length(l->q) == 0)
		return;
	if (evlog_drain(l, EVLOG_CLOSE_WAIT_MS) == -1) {
		log_warnx("--event-log %s: the reader took nothing for %d ms",
		    l->dest, EVLOG_CLOSE_WAIT_MS);
		evlog_lose_queue(l);
	}
}

/* Write the rest (bounded wait), close, say what was lost. */
void
evlog_close(struct evlog *l)
{
	if (l == NULL)
		return;
	evlog_flush(l);
	if (l->dropped > 0)
		log_warnx("--event-log %s: %llu records dropped (see the gaps "
		    "in seq)", l->dest, l->dropped);
	if (l->wev != NULL)
		event_free(l->wev);
	if (l->q != NULL)
		evbuffer_free(l->q);
	if (l->own_fd && l->fd >= 0)
		close(l->fd);
	free(l);
}

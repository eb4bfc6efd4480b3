/*
 * metrics_file.c: --metrics-file (metrics_file.h): the metrics rendered
 * into a temporary file beside PATH, then renamed over it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "errbuf.h"
#include "log.h"
#include "metrics.h"
#include "metrics_file.h"

struct metrics_file {
	const struct metrics_facts *m;
	char			 path[PATH_MAX];
	char			 tmpl[PATH_MAX];	/* DIR/.NAME.XXXXXX */
	struct event		*flush;		/* next loop turn */
	struct event		*refresh;	/* every REFRESH_SECS */
	int			 failing;	/* the last write failed */
};

/* The temporary name's template: ".NAME.XXXXXX" in PATH's directory. */
static int
metrics_file_template(struct metrics_file *mf)
{
	const char *slash = strrchr(mf->path, '/');
	int n;

	if (slash == NULL)
		n = snprintf(mf->tmpl, sizeof(mf->tmpl), ".%s.XXXXXX", mf->path);
	else
		n = snprintf(mf->tmpl, sizeof(mf->tmpl), "%.*s/.%s.XXXXXX",
		    (int)(slash - mf->path), mf->path, slash + 1);
	return n < 0 || (size_t)n >= sizeof(mf->tmpl) ? -1 : 0;
}

/* Write all of b to fd; 0, or -1 with errno. */
static int
metrics_file_put(int fd, struct evbuffer *b)
{
	while (evbuffer_get_length(b) > 0)
		if (evbuffer_write(b, fd) == -1 && errno != EINTR)
			return -1;
	return 0;
}

/*
 * What path is when it is not a regular file (the rename would replace a
 * device, a FIFO or a link with a file), or NULL: a file, or nothing yet.
 */
static const char *
metrics_file_not_regular(const char *path)
{
	struct stat st;

	if (lstat(path, &st) == -1 || S_ISREG(st.st_mode))
		return NULL;
	return S_ISDIR(st.st_mode) ? "a directory" : S_ISLNK(st.st_mode) ?
	    "a symbolic link" : S_ISFIFO(st.st_mode) ? "a FIFO" :
	    S_ISSOCK(st.st_mode) ? "a socket" : "a device";
}

/* Render into a new temporary file and rename it over path; -1 with err. */
static int
metrics_file_write(struct metrics_file *mf, char *err, size_t errlen)
{
	char tmp[PATH_MAX];
	struct evbuffer *b;
	const char *what;
	int fd, rc = -1, e;

	if ((what = metrics_file_not_regular(mf->path)) != NULL) {
		errbuf_set(err, errlen, "is %s, not a regular file (each write "
		    "renames a new file over it)", what);
		return -1;
	}
	memcpy(tmp, mf->tmpl, sizeof(tmp));
	if ((b = evbuffer_new()) == NULL) {
		errbuf_set(err, errlen, "out of memory");
		return -1;
	}
	metrics_render(mf->m, metrics_now(), b);
	if ((fd = mkostemp(tmp, O_CLOEXEC)) == -1) {
		errbuf_set(err, errlen, "cannot create a file beside it: %s",
		    strerror(errno));
		evbuffer_free(b);
		return -1;
	}
	/* the collector (user prometheus) reads it: mkstemp made it 0600 */
	if (fchmod(fd, 0644) == 0 && metrics_file_put(fd, b) == 0 &&
	    close(fd) == 0) {
		fd = -1;
		if (rename(tmp, mf->path) == 0)
			rc = 0;
	}
	e = errno;
	if (fd >= 0)
		close(fd);
	if (rc == -1) {
		unlink(tmp);
		errbuf_set(err, errlen, "cannot write it: %s", strerror(e));
	}
	evbuffer_free(b);
	return rc;
}

/* Write now; the first failure and the recovery are logged. */
static void
metrics_file_update(struct metrics_file *mf)
{
	char err[256];

	if (metrics_file_write(mf, err, sizeof(err)) == -1) {
		if (!mf->failing)
			log_warnx("--metrics-file %s: %s (trying again at each "
			    "change)", mf->path, err);
		mf->failing = 1;
		return;
	}
	if (mf->failing)
		log_warnx("--metrics-file %s: written again", mf->path);
	mf->failing = 0;
}

/* The loop turn after a change, or the refresh timer: write. */
static void
metrics_file_cb(evutil_socket_t fd, short what, void *arg)
{
	metrics_file_update(arg);
}

/* A writer of path, written once now (see metrics_file.h). */
struct metrics_file *
metrics_file_new(struct event_base *base, const char *path,
    const struct metrics_facts *m, char *err, size_t errlen)
{
	struct timeval tv = { METRICS_FILE_REFRESH_SECS, 0 };
	struct metrics_file *mf;
	char why[256];

	if ((mf = calloc(1, sizeof(*mf))) == NULL) {
		errbuf_set(err, errlen, "out of memory");
		return NULL;
	}
	mf->m = m;
	if (snprintf(mf->path, sizeof(mf->path), "%s", path) >=
	    (int)sizeof(mf->path) || metrics_file_template(mf) == -1) {
		errbuf_set(err, errlen, "--metrics-file: path too long");
		goto fail;
	}
	if (metrics_file_write(mf, why, sizeof(why)) == -1) {
		errbuf_set(err, errlen, "--metrics-file %s: %s", path, why);
		goto fail;
	}
	mf->flush = event_new(base, -1, 0, metrics_file_cb, mf);
	mf->refresh = event_new(base, -1, EV_PERSIST, metrics_file_cb, mf);
	if (mf->flush == NULL || mf->refresh == NULL ||
	    event_add(mf->refresh, &tv) == -1) {
		errbuf_set(err, errlen, "out of memory");
		goto fail;
	}
	return mf;
fail:
	metrics_file_free(mf);
	return NULL;
}

/* Something changed: write once on the next loop turn. */
void
metrics_file_changed(struct metrics_file *mf)
{
	if (mf != NULL && mf->flush != NULL)
		event_active(mf->flush, EV_TIMEOUT, 0);
}

/* The last write, then free. */
void
metrics_file_free(struct metrics_file *mf)
{
	if (mf == NULL)
		return;
	if (mf->flush != NULL) {
		metrics_file_update(mf);
		event_free(mf->flush);
	}
	if (mf->refresh != NULL)
		event_free(mf->refresh);
	free(mf);
}

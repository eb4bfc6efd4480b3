/*
 * service.c: systemd integration of cgrun-rdzvd (see service.h).
 */
#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include <event2/event.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>

#include "errbuf.h"
#include "log.h"
#include "service.h"
#include "store.h"

#define SERVICE_JOURNAL_SOCKET	"/run/systemd/journal/socket"

struct service {
	struct event	*watchdog;	/* persistent timer, or NULL */
};

/* Whether stderr is connected to the journal (JOURNAL_STREAM says so). */
int
service_stderr_is_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (js == NULL || sscanf(js, "%llu:%llu", &dev, &ino) != 2)
		return 0;
	if (fstat(STDERR_FILENO, &st) == -1)
		return 0;
	return (unsigned long long)st.st_dev == dev &&
	    (unsigned long long)st.st_ino == ino;
}

/* The journal priority (LOG_WARNING, ...) of a log.h level. */
int
service_priority(int level)
{
	switch (level) {
	case LOG_LVL_WARN:
		return LOG_WARNING;
	case LOG_LVL_INFO:
		return LOG_INFO;
	default:
		return LOG_DEBUG;
	}
}

/* log.h sink: one journal entry per line, with its priority. */
static void
service_journal_sink(int level, const char *line, void *arg)
{
	(void)arg;
	sd_journal_print(service_priority(level), "%s", line);
}

/* log.h sink: "<N>line" on stderr, which the journal reads as priority N. */
static void
service_prefix_sink(int level, const char *line, void *arg)
{
	(void)arg;
	fprintf(stderr, "<%d>%s\n", service_priority(level), line);
}

/* Route log lines to the journal with their priority; 1 if done, else 0.
 * sd_journal_print() silently drops lines when journald's socket is
 * missing, so without it the priority goes in a "<N>" prefix instead. */
int
service_log_to_journal(void)
{
	if (!service_stderr_is_journal())
		return 0;
	if (access(SERVICE_JOURNAL_SOCKET, W_OK) == 0)
		log_set_sink(service_journal_sink, NULL);
	else
		log_set_sink(service_prefix_sink, NULL);
	return 1;
}

/* Adopt one passed socket: HTTP by name, else the store's. */
static int
service_adopt(struct store *store, int fd, const char *name, int *http_fd,
    char *err, size_t errlen)
{
	char why[256];

	if (sd_is_socket(fd, AF_UNSPEC, SOCK_STREAM, 1) <= 0) {
		errbuf_set(err, errlen, "passed fd %d (%s) is not a listening "
		    "stream socket", fd, name != NULL ? name : "unnamed");
		return -1;
	}
	if (fcntl(fd, F_SETFD, FD_CLOEXEC) == -1) {
		errbuf_set(err, errlen, "fd %d: %s", fd, strerror(errno));
		return -1;
	}
	if (name != NULL && strcmp(name, SERVICE_HTTP_FDNAME) == 0) {
		if (*http_fd != -1) {
			errbuf_set(err, errlen, "more than one socket named %s",
			    SERVICE_HTTP_FDNAME);
			return -1;
		}
		*http_fd = fd;
		return 0;
	}
	if (store_adopt_listener(store, fd, why, sizeof why) == -1) {
		errbuf_set(err, errlen, "passed fd %d: %s", fd, why);
		return -1;
	}
	log_info("adopted listener fd=%d name=%s", fd,
	    name != NULL ? name : "-");
	return 1;
}

/* Adopt the sockets systemd passed; see service.h. */
int
service_listen_fds(struct store *store, int *http_fd, char *err,
    size_t errlen)
{
	char **names = NULL;
	int i, n, r, nstore = 0;

	*http_fd = -1;
	n = sd_listen_fds_with_names(1, &names);
	if (n < 0) {
		errbuf_set(err, errlen, "LISTEN_FDS: %s", strerror(-n));
		return -1;
	}
	for (i = 0; i < n; i++) {
		r = service_adopt(store, SD_LISTEN_FDS_START + i,
		    names != NULL ? names[i] : NULL, http_fd, err, errlen);
		if (r == -1) {
			nstore = -1;
			break;
		}
		nstore += r;
	}
	for (i = 0; names != NULL && names[i] != NULL; i++)
		free(names[i]);
	free(names);
	return nstore;
}

/* Timer: tell the watchdog we are alive. */
static void
service_watchdog_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd, (void)what, (void)arg;
	sd_notify(0, "WATCHDOG=1");
}

/* Watchdog pings on base if WatchdogSec= is set; NULL only on ENOMEM. */
struct service *
service_new(struct event_base *base)
{
	struct service *svc;
	struct timeval tv;
	uint64_t usec = 0;

	if ((svc = calloc(1, sizeof *svc)) == NULL)
		return NULL;
	if (sd_watchdog_enabled(0, &usec) <= 0 || usec == 0)
		return svc;
	svc->watchdog = event_new(base, -1, EV_PERSIST, service_watchdog_cb,
	    NULL);
	if (svc->watchdog == NULL) {
		free(svc);
		return NULL;
	}
	usec /= 2;	/* ping twice per period: one late ping is no death */
	tv.tv_sec = (time_t)(usec / 1000000);
	tv.tv_usec = (suseconds_t)(usec % 1000000);
	event_add(svc->watchdog, &tv);
	sd_notify(0, "WATCHDOG=1");
	log_info("watchdog enabled interval_us=%llu", (unsigned long long)usec);
	return svc;
}

/* Stop the watchdog pings and free. */
void
service_free(struct service *svc)
{
	if (svc == NULL)
		return;
	if (svc->watchdog != NULL)
		event_free(svc->watchdog);
	free(svc);
}

/* Send "PREFIX" + formatted status to the notify socket. */
static void
service_vnotify(const char *prefix, const char *fmt, va_list ap)
{
	char status[512];

	vsnprintf(status, sizeof status, fmt, ap);
	/* A newline would start a new assignment: keep the status one line. */
	status[strcspn(status, "\n")] = '\0';
	if (sd_notifyf(0, "%sSTATUS=%s", prefix, status) < 0)
		log_debug("sd_notify failed");
}

/* Tell systemd we are ready (READY=1) with a status line. */
void
service_ready(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	service_vnotify("READY=1\n", fmt, ap);
	va_end(ap);
}

/* Update the status line shown by systemctl status. */
void
service_status(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	service_vnotify("", fmt, ap);
	va_end(ap);
}

/* Tell systemd we are shutting down (STOPPING=1). */
void
service_stopping(void)
{
	sd_notify(0, "STOPPING=1\nSTATUS=shutting down");
}

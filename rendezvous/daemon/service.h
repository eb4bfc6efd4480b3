/*
 * service.h: cgrun-rdzvd as a systemd service.
 *
 *  - readiness, status and stopping through sd_notify (no-ops without
 *    NOTIFY_SOCKET, so the daemon runs the same by hand);
 *  - socket activation: sockets passed in LISTEN_FDS are adopted by the
 *    store (any name) or the HTTP server (FileDescriptorName=http);
 *  - journal logging with levels when stderr is the journal
 *    (JOURNAL_STREAM matches it), through log_set_sink();
 *  - the watchdog ping, when the unit sets WatchdogSec=.
 */
#ifndef CGRUN_SERVICE_H
#define CGRUN_SERVICE_H

#include <stddef.h>

struct event_base;
struct store;
struct service;

/* Name a passed socket must carry to be taken as the HTTP listener. */
#define SERVICE_HTTP_FDNAME "http"

/* Whether stderr is connected to the journal (JOURNAL_STREAM says so). */
int	service_stderr_is_journal(void);

/* Route log lines to the journal with their priority; 1 if done, else 0. */
int	service_log_to_journal(void);

/* The journal priority (LOG_WARNING, ...) of a log.h level. */
int	service_priority(int level);

/*
 * Adopt the sockets systemd passed (LISTEN_FDS): stream sockets named
 * SERVICE_HTTP_FDNAME go to *http_fd (one at most; -1 if none), every
 * other one is served by the store.  Returns the number of store
 * listeners adopted (0 when not socket-activated), or -1 with err set.
 * The LISTEN_* variables are removed from the environment.
 */
int	service_listen_fds(struct store *, int *http_fd, char *err,
	    size_t errlen);

/* Watchdog pings on base if WatchdogSec= is set; NULL only on ENOMEM. */
struct service *service_new(struct event_base *);
void	service_free(struct service *);

/* Tell systemd we are ready (READY=1) with a status line. */
void	service_ready(const char *fmt, ...)
	    __attribute__((format(printf, 1, 2)));
/* Update the status line shown by systemctl status. */
void	service_status(const char *fmt, ...)
	    __attribute__((format(printf, 1, 2)));
/* Tell systemd we are shutting down (STOPPING=1). */
void	service_stopping(void);

#endif /* CGRUN_SERVICE_H */

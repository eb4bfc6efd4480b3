/*
 * http.h: cgrun-rdzvd's observability server (libevent evhttp).
 *
 *   GET /metrics  Prometheus text format 0.0.4
 *   GET /status   one JSON object (json-c), one page of jobs:
 *                 ?offset=N&limit=N (default 0 and HTTP_STATUS_LIMIT,
 *                 at most HTTP_STATUS_LIMIT_MAX), with the totals; peer
 *                 strings made valid UTF-8 (utf8.h)
 *   GET /         the list of the two
 *
 * Each part of the daemon registers a source that appends its metric lines
 * and adds its members to the status object; http_add_self(),
 * http_add_store() and http_add_rdzv() register the daemon's own lines,
 * the store's and the rendezvous engine's.  cgrun's agent serves its own
 * metrics (launcher/observe/) through the same server, with no others.
 * Bound to loopback by default (config.h http-host); only GET and HEAD
 * are served, with bounded headers and a timeout.
 */
#ifndef CGRUN_HTTP_H
#define CGRUN_HTTP_H

#include <stddef.h>
#include <stdint.h>

struct event_base;
struct evbuffer;
struct json_object;
struct http;
struct store;
struct rdzv;

#define HTTP_MAX_SOURCES	8
#define HTTP_TIMEOUT_SECS	10	/* a request must arrive within this */
#define HTTP_MAX_HEADERS	8192	/* bytes of request headers */
#define HTTP_STATUS_LIMIT	100	/* jobs in a /status page, default */
#define HTTP_STATUS_LIMIT_MAX	1000	/* most jobs a page may ask for */
#define HTTP_STATUS_NODES	64	/* nodes shown per job */

/* Which jobs /status shows: ?offset=N&limit=N. */
struct http_page {
	size_t	offset;
	size_t	limit;
};

/* One part of the daemon that has something to show. */
struct http_source {
	/* Append Prometheus lines ("# HELP", "# TYPE", samples) to out. */
	void	(*metrics)(struct evbuffer *out, void *arg);
	/* Add this part's members to the /status object (one page). */
	void	(*status)(struct json_object *root, const struct http_page *,
		    void *arg);
	void	*arg;
};

/* A server of program name (for GET /) with no source and no listener. */
struct http *http_new(struct event_base *, const char *name);
void	http_free(struct http *);

/* Bind host:port (port 0: ephemeral) and report the bound port. */
int	http_listen(struct http *, const char *host, int port, int *bound,
	    char *err, size_t errlen);
/* Serve an already listening socket (systemd socket activation). */
int	http_adopt(struct http *, int fd, char *err, size_t errlen);

/* Register a source; -1 when HTTP_MAX_SOURCES are registered. */
int	http_add_source(struct http *, const struct http_source *);

/* The daemon's own lines: cgrun_rdzvd_build_info, _start_time_seconds,
 * _http_requests_total. */
int	http_add_self(struct http *);
/* The store's counters: connections by dialect, requests by op, bytes,
 * waiting connections, keys. */
int	http_add_store(struct http *, struct store *);
/* The rendezvous engine: jobs, rounds, nodes, restarts; /status "jobs". */
int	http_add_rdzv(struct http *, struct rdzv *);

/* Append "# HELP name help" and "# TYPE name type" lines. */
void	http_metric_head(struct evbuffer *, const char *name,
	    const char *type, const char *help);

#endif /* CGRUN_HTTP_H */

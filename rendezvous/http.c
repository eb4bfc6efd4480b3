/*
 * http.c: /metrics and /status over libevent's evhttp (see http.h).
 */
#include <sys/socket.h>
#include <sys/types.h>

#include <netinet/in.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/util.h>
#include <json-c/json.h>

#include "http.h"
#include "log.h"

struct http {
	struct event_base	*base;
	struct evhttp		*evh;
	struct http_source	 sources[HTTP_MAX_SOURCES];
	size_t			 nsources;
	time_t			 started;	/* wall clock, for uptime */
	uint64_t		 requests;	/* HTTP requests served */
};

/* Append "# HELP name help" and "# TYPE name type" lines. */
void
http_metric_head(struct evbuffer *out, const char *name, const char *type,
    const char *help)
{
	evbuffer_add_printf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help,
	    name, type);
}

/* Escape a label value (backslash, quote, newline) into dst. */
const char *
http_label_escape(char *dst, size_t dstlen, const char *src)
{
	size_t o = 0;

	if (dstlen == 0)
		return dst;
	for (; *src != '\0' && o + 2 < dstlen; src++) {
		if (*src == '\\' || *src == '"' || *src == '\n') {
			dst[o++] = '\\';
			dst[o++] = *src == '\n' ? 'n' : *src;
		} else
			dst[o++] = *src;
	}
	dst[o] = '\0';
	return dst;
}

/* The daemon's own lines: build info, start time, HTTP requests. */
static void
http_self_metrics(struct http *h, struct evbuffer *out)
{
	http_metric_head(out, "cgrun_rdzvd_build_info", "gauge",
	    "Version of cgrun-rdzvd (always 1).");
	evbuffer_add_printf(out, "cgrun_rdzvd_build_info{version=\"%s\"} 1\n",
	    CGRUN_VERSION);
	http_metric_head(out, "cgrun_rdzvd_start_time_seconds", "gauge",
	    "Start time of the daemon since the Unix epoch.");
	evbuffer_add_printf(out, "cgrun_rdzvd_start_time_seconds %lld\n",
	    (long long)h->started);
	http_metric_head(out, "cgrun_rdzvd_http_requests_total", "counter",
	    "HTTP requests received by the observability server.");
	evbuffer_add_printf(out, "cgrun_rdzvd_http_requests_total %llu\n",
	    (unsigned long long)h->requests);
}

/* GET /metrics: every source's lines after the daemon's own. */
static void
http_metrics(struct http *h, struct evhttp_request *req)
{
	struct evbuffer *out = evbuffer_new();
	size_t i;

	if (out == NULL) {
		evhttp_send_error(req, HTTP_INTERNAL, "out of memory");
		return;
	}
	http_self_metrics(h, out);
	for (i = 0; i < h->nsources; i++)
		if (h->sources[i].metrics != NULL)
			h->sources[i].metrics(out, h->sources[i].arg);
	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "Content-Type", "text/plain; version=0.0.4; charset=utf-8");
	evhttp_send_reply(req, HTTP_OK, "OK", out);
	evbuffer_free(out);
}

/* GET /status: one JSON object built from every source. */
static void
http_status(struct http *h, struct evhttp_request *req)
{
	struct json_object *root = json_object_new_object();
	struct evbuffer *out = evbuffer_new();
	const char *text;
	size_t i;

	if (root == NULL || out == NULL) {
		json_object_put(root);
		if (out != NULL)
			evbuffer_free(out);
		evhttp_send_error(req, HTTP_INTERNAL, "out of memory");
		return;
	}
	json_object_object_add(root, "version",
	    json_object_new_string(CGRUN_VERSION));
	json_object_object_add(root, "pid", json_object_new_int(getpid()));
	json_object_object_add(root, "uptime_seconds",
	    json_object_new_int64((int64_t)(time(NULL) - h->started)));
	for (i = 0; i < h->nsources; i++)
		if (h->sources[i].status != NULL)
			h->sources[i].status(root, h->sources[i].arg);
	text = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY |
	    JSON_C_TO_STRING_NOSLASHESCAPE);
	evbuffer_add_printf(out, "%s\n", text);
	json_object_put(root);
	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "Content-Type", "application/json");
	evhttp_send_reply(req, HTTP_OK, "OK", out);
	evbuffer_free(out);
}

/* GET /: what there is to get. */
static void
http_index(struct evhttp_request *req)
{
	struct evbuffer *out = evbuffer_new();

	if (out == NULL) {
		evhttp_send_error(req, HTTP_INTERNAL, "out of memory");
		return;
	}
	evbuffer_add_printf(out, "cgrun-rdzvd %s\n/metrics\n/status\n",
	    CGRUN_VERSION);
	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "Content-Type", "text/plain; charset=utf-8");
	evhttp_send_reply(req, HTTP_OK, "OK", out);
	evbuffer_free(out);
}

/* Route one request by path; evhttp already refused other methods. */
static void
http_dispatch(struct evhttp_request *req, void *arg)
{
	struct http *h = arg;
	const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
	const char *path = uri != NULL ? evhttp_uri_get_path(uri) : NULL;
	char esc[128];

	h->requests++;
	if (path == NULL || path[0] == '\0')
		path = "/";
	log_debug("http request path=%s",
	    log_escape(esc, sizeof esc, path, strlen(path)));
	if (strcmp(path, "/metrics") == 0)
		http_metrics(h, req);
	else if (strcmp(path, "/status") == 0)
		http_status(h, req);
	else if (strcmp(path, "/") == 0)
		http_index(req);
	else
		evhttp_send_error(req, HTTP_NOTFOUND, "try /metrics or /status");
}

/* A server with no listener yet; NULL on ENOMEM. */
struct http *
http_new(struct event_base *base)
{
	struct http *h;

	if ((h = calloc(1, sizeof *h)) == NULL)
		return NULL;
	h->base = base;
	h->started = time(NULL);
	if ((h->evh = evhttp_new(base)) == NULL) {
		free(h);
		return NULL;
	}
	evhttp_set_allowed_methods(h->evh, EVHTTP_REQ_GET | EVHTTP_REQ_HEAD);
	evhttp_set_timeout(h->evh, HTTP_TIMEOUT_SECS);
	evhttp_set_max_headers_size(h->evh, HTTP_MAX_HEADERS);
	evhttp_set_max_body_size(h->evh, 0);
	evhttp_set_gencb(h->evh, http_dispatch, h);
	return h;
}

/* Close the listeners and every HTTP connection. */
void
http_free(struct http *h)
{
	if (h == NULL)
		return;
	evhttp_free(h->evh);
	free(h);
}

/* The port a listening socket is bound to, or -1. */
static int
http_sock_port(evutil_socket_t fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof ss;

	if (getsockname(fd, (struct sockaddr *)&ss, &len) == -1)
		return -1;
	if (ss.ss_family == AF_INET)
		return ntohs(((struct sockaddr_in *)&ss)->sin_port);
	if (ss.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	return -1;
}

/* Bind host:port (port 0: ephemeral) and report the bound port. */
int
http_listen(struct http *h, const char *host, int port, int *bound,
    char *err, size_t errlen)
{
	struct evhttp_bound_socket *bs;

	bs = evhttp_bind_socket_with_handle(h->evh, host, (uint16_t)port);
	if (bs == NULL) {
		snprintf(err, errlen, "http %s:%d: cannot listen: %s", host,
		    port, strerror(errno != 0 ? errno : EADDRNOTAVAIL));
		return -1;
	}
	if (bound != NULL)
		*bound = http_sock_port(evhttp_bound_socket_get_fd(bs));
	return 0;
}

/* Serve an already listening socket (systemd socket activation). */
int
http_adopt(struct http *h, int fd, char *err, size_t errlen)
{
	if (evutil_make_socket_nonblocking(fd) == -1 ||
	    evhttp_accept_socket_with_handle(h->evh, fd) == NULL) {
		snprintf(err, errlen, "http: cannot serve fd %d", fd);
		return -1;
	}
	return 0;
}

/* Register a source; -1 when HTTP_MAX_SOURCES are registered. */
int
http_add_source(struct http *h, const struct http_source *src)
{
	if (h->nsources == HTTP_MAX_SOURCES) {
		errno = ENOSPC;
		return -1;
	}
	h->sources[h->nsources++] = *src;
	return 0;
}

/*
 * http.c: /metrics and /status over libevent's evhttp (see http.h).
 */
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <netinet/in.h>

#include <errno.h>
#include <netdb.h>
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

#include "errbuf.h"
#include "http.h"
#include "http_conns.h"
#include "log.h"
#include "rdzv.h"
#include "sock.h"
#include "store.h"
#include "utf8.h"
#include "wire.h"

#define HTTP_STR2(x)	#x
#define HTTP_STR(x)	HTTP_STR2(x)

struct http {
	struct event_base	*base;
	char			 name[64];	/* the program, for GET / */
	struct evhttp		*evh;
	struct http_conns	*conns;		/* at most HTTP_MAX_CONNS */
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

/* Append the HELP and TYPE lines of an unlabelled metric and its value. */
static void
http_metric_value(struct evbuffer *out, const char *name, const char *type,
    const char *help, unsigned long long value)
{
	http_metric_head(out, name, type, help);
	evbuffer_add_printf(out, "%s %llu\n", name, value);
}

/* The daemon's own lines: build info, start time, HTTP requests. */
static void
http_self_metrics(struct evbuffer *out, void *arg)
{
	struct http *h = arg;

	http_metric_head(out, "cgrun_rdzvd_build_info", "gauge",
	    "Version of cgrun-rdzvd (always 1).");
	evbuffer_add_printf(out, "cgrun_rdzvd_build_info{version=\"%s\"} 1\n",
	    CGRUN_VERSION);
	http_metric_head(out, "cgrun_rdzvd_start_time_seconds", "gauge",
	    "Start time of the daemon since the Unix epoch.");
	evbuffer_add_printf(out, "cgrun_rdzvd_start_time_seconds %lld\n",
	    (long long)h->started);
	http_metric_value(out, "cgrun_rdzvd_http_requests_total", "counter",
	    "HTTP requests received by the observability server.", h->requests);
}

/* GET /metrics: every source's lines, in the order they were added. */
static void
http_metrics(struct http *h, struct evhttp_request *req)
{
	struct evbuffer *out = evbuffer_new();
	size_t i;

	if (out == NULL) {
		evhttp_send_error(req, HTTP_INTERNAL, "out of memory");
		return;
	}
	for (i = 0; i < h->nsources; i++)
		if (h->sources[i].metrics != NULL)
			h->sources[i].metrics(out, h->sources[i].arg);
	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "Content-Type", "text/plain; version=0.0.4; charset=utf-8");
	evhttp_send_reply(req, HTTP_OK, "OK", out);
	evbuffer_free(out);
}

/* Parse one unsigned query value; -1 when it is not a number <= max. */
static int
http_query_size(const struct evkeyvalq *q, const char *key, size_t max,
    size_t *out)
{
	const char *v = evhttp_find_header(q, key);
	unsigned long long n;
	char *end;

	if (v == NULL)
		return 0;
	if (*v < '0' || *v > '9')
		return -1;
	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno != 0 || *end != '\0' || n > max)
		return -1;
	*out = (size_t)n;
	return 0;
}

/* The page /status asks for (?offset=&limit=); -1 on a bad query. */
static int
http_status_page(struct evhttp_request *req, struct http_page *pg)
{
	const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
	const char *query = uri != NULL ? evhttp_uri_get_query(uri) : NULL;
	struct evkeyvalq q;
	int rc;

	pg->offset = 0;
	pg->limit = HTTP_STATUS_LIMIT;
	if (query == NULL)
		return 0;
	TAILQ_INIT(&q);
	if (evhttp_parse_query_str(query, &q) == -1)
		return -1;
	rc = http_query_size(&q, "offset", SIZE_MAX / 2, &pg->offset) == -1 ||
	    http_query_size(&q, "limit", HTTP_STATUS_LIMIT_MAX,
	    &pg->limit) == -1 ? -1 : 0;
	evhttp_clear_headers(&q);
	return rc;
}

/* GET /status: one JSON object built from every source. */
static void
http_status(struct http *h, struct evhttp_request *req)
{
	struct http_page pg;
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
	if (http_status_page(req, &pg) == -1) {
		json_object_put(root);
		evbuffer_free(out);
		evhttp_send_error(req, HTTP_BADREQUEST, "offset and limit are "
		    "numbers; limit at most " HTTP_STR(HTTP_STATUS_LIMIT_MAX));
		return;
	}
	json_object_object_add(root, "version",
	    json_object_new_string(CGRUN_VERSION));
	json_object_object_add(root, "pid", json_object_new_int(getpid()));
	json_object_object_add(root, "uptime_seconds",
	    json_object_new_int64((int64_t)(time(NULL) - h->started)));
	for (i = 0; i < h->nsources; i++)
		if (h->sources[i].status != NULL)
			h->sources[i].status(root, &pg, h->sources[i].arg);
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
http_index(struct http *h, struct evhttp_request *req)
{
	struct evbuffer *out = evbuffer_new();

	if (out == NULL) {
		evhttp_send_error(req, HTTP_INTERNAL, "out of memory");
		return;
	}
	evbuffer_add_printf(out, "%s %s\n/metrics\n/status\n", h->name,
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
		http_index(h, req);
	else
		evhttp_send_error(req, HTTP_NOTFOUND, "try /metrics or /status");
}

/* A server of program name with no listener yet; NULL on ENOMEM. */
struct http *
http_new(struct event_base *base, const char *name)
{
	struct http *h;

	if ((h = calloc(1, sizeof *h)) == NULL)
		return NULL;
	h->base = base;
	snprintf(h->name, sizeof h->name, "%s", name);
	h->started = time(NULL);
	if ((h->evh = evhttp_new(base)) == NULL) {
		free(h);
		return NULL;
	}
	if ((h->conns = http_conns_new(base, h->evh)) == NULL) {
		evhttp_free(h->evh);
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
	http_conns_free(h->conns);	/* after: the connections are gone */
	free(h);
}

/*
 * Whether host resolves to an address to listen on; -1 with err saying
 * why not (evhttp's own lookup fails with a stale errno and a line of
 * libevent's on stderr).
 */
static int
http_resolve(const char *host, int port, char *err, size_t errlen)
{
	struct addrinfo hints, *ai;
	int rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE;
	if ((rc = getaddrinfo(host, NULL, &hints, &ai)) != 0) {
		errbuf_set(err, errlen, "http %s:%d: cannot resolve %s: %s",
		    host, port, host, rc == EAI_SYSTEM ? strerror(errno) :
		    gai_strerror(rc));
		return -1;
	}
	freeaddrinfo(ai);
	return 0;
}

/* Bind host:port (port 0: ephemeral) and report the bound port. */
int
http_listen(struct http *h, const char *host, int port, int *bound,
    char *err, size_t errlen)
{
	struct evhttp_bound_socket *bs;

	if (http_resolve(host, port, err, errlen) == -1)
		return -1;
	errno = 0;
	bs = evhttp_bind_socket_with_handle(h->evh, host, (uint16_t)port);
	if (bs == NULL) {
		errbuf_set(err, errlen, "http %s:%d: cannot listen: %s", host,
		    port, strerror(errno != 0 ? errno : EADDRNOTAVAIL));
		return -1;
	}
	http_conns_watch(h->conns, bs);
	if (bound != NULL)
		*bound = sock_local_port(evhttp_bound_socket_get_fd(bs));
	return 0;
}

/* Serve an already listening socket (systemd socket activation). */
int
http_adopt(struct http *h, int fd, char *err, size_t errlen)
{
	struct evhttp_bound_socket *bs;

	if (evutil_make_socket_nonblocking(fd) == -1 ||
	    (bs = evhttp_accept_socket_with_handle(h->evh, fd)) == NULL) {
		errbuf_set(err, errlen, "http: cannot serve fd %d", fd);
		return -1;
	}
	http_conns_watch(h->conns, bs);
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

/* The server's own lines: cgrun-rdzvd's build info, start time, requests. */
int
http_add_self(struct http *h)
{
	struct http_source src = { http_self_metrics, NULL, h };

	return http_add_source(h, &src);
}

/* ---- the store's source ---- */

static const char *const http_dialects[4] = { "undecided", "torch_v1",
	"torch_v2", "native" };

/* The metric label of an operation: its name (wire_op_name) in lower case. */
static const char *
http_op_label(enum wire_op op, char *buf, size_t len)
{
	const char *name = wire_op_name(op);
	size_t i;

	for (i = 0; name[i] != '\0' && i + 1 < len; i++)
		buf[i] = name[i] >= 'A' && name[i] <= 'Z' ?
		    (char)(name[i] - 'A' + 'a') : name[i];
	buf[i] = '\0';
	return buf;
}

/* Prometheus lines of the store. */
static void
http_store_metrics(struct evbuffer *out, void *arg)
{
	struct store_stats st;
	char label[32];
	size_t i;

	store_stats(arg, &st);
	http_metric_head(out, "cgrun_rdzvd_connections", "gauge",
	    "Open client connections by protocol dialect.");
	for (i = 0; i < 4; i++)
		evbuffer_add_printf(out, "cgrun_rdzvd_connections{dialect=\"%s\"}"
		    " %zu\n", http_dialects[i], st.conns[i]);
	http_metric_value(out, "cgrun_rdzvd_connections_accepted_total",
	    "counter", "Client connections accepted.", st.accepted);
	http_metric_head(out, "cgrun_rdzvd_requests_total", "counter",
	    "TCPStore requests served, by operation.");
	for (i = 0; i < WOP__COUNT; i++)
		evbuffer_add_printf(out, "cgrun_rdzvd_requests_total{op=\"%s\"} "
		    "%llu\n", http_op_label((enum wire_op)i, label,
		    sizeof(label)), (unsigned long long)st.requests[i]);
	http_metric_value(out, "cgrun_rdzvd_received_bytes_total", "counter",
	    "Bytes received from clients.", st.bytes_in);
	http_metric_value(out, "cgrun_rdzvd_sent_bytes_total", "counter",
	    "Bytes sent to clients.", st.bytes_out);
	http_metric_value(out, "cgrun_rdzvd_waiters", "gauge",
	    "Connections blocked in WAIT.", st.waiting);
	http_metric_value(out, "cgrun_rdzvd_keys", "gauge",
	    "Keys stored.", st.keys);
	http_metric_value(out, "cgrun_rdzvd_input_buffered_bytes", "gauge",
	    "Bytes of half-received requests held, all connections.",
	    st.inbuf);
	http_metric_value(out, "cgrun_rdzvd_connections_paused", "gauge",
	    "Connections not read while max-input-total is full.", st.paused);
	http_metric_value(out, "cgrun_rdzvd_connections_paused_total",
	    "counter", "Times a connection was paused by max-input-total.",
	    st.paused_total);
	http_metric_value(out, "cgrun_rdzvd_output_buffered_bytes", "gauge",
	    "Bytes of replies not sent yet, all connections.", st.outbuf);
	http_metric_value(out, "cgrun_rdzvd_output_paused_total", "counter",
	    "Times a connection was not read for output-high-water.",
	    st.out_paused_total);
	http_metric_value(out, "cgrun_rdzvd_output_dropped_total", "counter",
	    "Connections dropped by max-output-total.", st.out_dropped);
}

/* The "store" member of /status. */
static void
http_store_status(struct json_object *root, const struct http_page *pg,
    void *arg)
{
	struct json_object *o = json_object_new_object(), *c;
	struct store_stats st;
	size_t i;

	if (o == NULL)
		return;
	store_stats(arg, &st);
	c = json_object_new_object();
	for (i = 0; c != NULL && i < 4; i++)
		json_object_object_add(c, http_dialects[i],
		    json_object_new_uint64(st.conns[i]));
	json_object_object_add(o, "connections", c);
	json_object_object_add(o, "waiters", json_object_new_uint64(st.waiting));
	json_object_object_add(o, "keys", json_object_new_uint64(st.keys));
	json_object_object_add(o, "input_buffered_bytes",
	    json_object_new_uint64(st.inbuf));
	json_object_object_add(o, "connections_paused",
	    json_object_new_uint64(st.paused));
	json_object_object_add(root, "store", o);
}

/* The store's counters. */
int
http_add_store(struct http *h, struct store *st)
{
	struct http_source src = { http_store_metrics, http_store_status, st };

	return http_add_source(h, &src);
}

/* ---- the rendezvous engine's source ---- */

/* What a walk over the engine's jobs adds up. */
struct http_rdzv_sum {
	size_t	jobs[RDZV_J__COUNT];
	size_t	nodes[RDZV_N__COUNT];
	size_t	disconnected;
	struct json_object *jobs_json, *nodes_json;	/* /status only */
};

/* A JSON string of peer-given bytes, made valid UTF-8. */
static struct json_object *
http_json_peer_str(const char *s)
{
	char buf[UTF8_VALID_SIZE(RDZV_TEXT_MAX)];

	return json_object_new_string(utf8_valid(s, buf, sizeof buf));
}

/* Walk callback: count one job. */
static void
http_rdzv_sum_job(const struct rdzv_job_view *jv, void *arg)
{
	struct http_rdzv_sum *s = arg;

	s->jobs[jv->info.state]++;
}

/* Walk callback: count one node. */
static void
http_rdzv_sum_node(const struct rdzv_node_view *nv, void *arg)
{
	struct http_rdzv_sum *s = arg;

	s->nodes[nv->state]++;
	s->disconnected += !nv->connected;
}

/* Prometheus lines of the rendezvous engine. */
static void
http_rdzv_metrics(struct evbuffer *out, void *arg)
{
	struct http_rdzv_sum s;
	struct rdzv_stats st;
	int i;

	memset(&s, 0, sizeof s);
	rdzv_walk(arg, http_rdzv_sum_job, http_rdzv_sum_node, &s);
	rdzv_stats(arg, &st);
	http_metric_head(out, "cgrun_rdzvd_jobs", "gauge",
	    "Rendezvous jobs by state.");
	for (i = 0; i < RDZV_J__COUNT; i++)
		evbuffer_add_printf(out, "cgrun_rdzvd_jobs{state=\"%s\"} %zu\n",
		    rdzv_jstate_name(i), s.jobs[i]);
	http_metric_value(out, "cgrun_rdzvd_jobs_created_total", "counter",
	    "Rendezvous jobs created.", st.jobs_created);
	http_metric_value(out, "cgrun_rdzvd_rounds_total", "counter",
	    "Rendezvous rounds decided.", st.rounds);
	http_metric_head(out, "cgrun_rdzvd_nodes", "gauge",
	    "Nodes alive (known to a job), by state.");
	for (i = 0; i < RDZV_N__COUNT; i++)
		evbuffer_add_printf(out, "cgrun_rdzvd_nodes{state=\"%s\"} %zu\n",
		    rdzv_nstate_name(i), s.nodes[i]);
	http_metric_value(out, "cgrun_rdzvd_nodes_disconnected", "gauge",
	    "Nodes whose connection is gone, within their keep-alive window.",
	    s.disconnected);
	http_metric_value(out, "cgrun_rdzvd_nodes_dead_total", "counter",
	    "Nodes declared dead after missed keep-alives.", st.nodes_dead);
	http_metric_value(out, "cgrun_rdzvd_restarts_total", "counter",
	    "Job restarts spent on worker failures.", st.restarts);
	http_metric_value(out, "cgrun_rdzvd_auth_failures_total", "counter",
	    "Native clients refused for a wrong auth token.", st.auth_failures);
	http_metric_value(out, "cgrun_rdzvd_jobs_refused_total", "counter",
	    "JOINs refused by max-jobs or max-jobs-per-address.",
	    st.jobs_refused);
	http_metric_value(out, "cgrun_rdzvd_jobs_orphaned_total", "counter",
	    "Jobs forgotten after job-orphan-timeout with no agent connected.",
	    st.jobs_orphaned);
}

/* Walk callback: one job object in /status "jobs". */
static void
http_rdzv_json_job(const struct rdzv_job_view *jv, void *arg)
{
	struct http_rdzv_sum *s = arg;
	struct json_object *j = json_object_new_object();

	s->nodes_json = NULL;
	if (j == NULL)
		return;
	json_object_object_add(j, "run_id", http_json_peer_str(jv->run_id));
	json_object_object_add(j, "state",
	    json_object_new_string(rdzv_jstate_name(jv->info.state)));
	json_object_object_add(j, "round", json_object_new_int64(jv->info.round));
	json_object_object_add(j, "restarts",
	    json_object_new_int64(jv->info.restarts));
	json_object_object_add(j, "max_restarts",
	    json_object_new_int64(jv->max_restarts));
	json_object_object_add(j, "min_nodes", json_object_new_int64(jv->min_nodes));
	json_object_object_add(j, "max_nodes", json_object_new_int64(jv->max_nodes));
	json_object_object_add(j, "nodes_total",
	    json_object_new_uint64(jv->info.nodes));
	json_object_object_add(j, "nodes_truncated",
	    json_object_new_boolean(jv->info.nodes > HTTP_STATUS_NODES));
	s->nodes_json = json_object_new_array();
	json_object_object_add(j, "nodes", s->nodes_json);
	json_object_array_add(s->jobs_json, j);
}

/* Walk callback: one node object in its job's "nodes". */
static void
http_rdzv_json_node(const struct rdzv_node_view *nv, void *arg)
{
	struct http_rdzv_sum *s = arg;
	struct json_object *n;

	if (s->nodes_json == NULL || (n = json_object_new_object()) == NULL)
		return;
	json_object_object_add(n, "host", http_json_peer_str(nv->host));
	json_object_object_add(n, "pid", json_object_new_int64(nv->pid));
	json_object_object_add(n, "state",
	    json_object_new_string(rdzv_nstate_name(nv->state)));
	json_object_object_add(n, "store_addr", http_json_peer_str(nv->addr));
	json_object_object_add(n, "store_port", json_object_new_int(nv->port));
	json_object_object_add(n, "nproc", json_object_new_int64(nv->nproc));
	json_object_object_add(n, "node_rank", json_object_new_int(nv->node_rank));
	json_object_object_add(n, "connected",
	    json_object_new_boolean(nv->connected));
	json_object_object_add(n, "last_keepalive_ms_ago",
	    json_object_new_uint64(nv->last_seen_ms));
	json_object_array_add(s->nodes_json, n);
}

/* The "jobs" member of /status: one page, with the totals. */
static void
http_rdzv_status(struct json_object *root, const struct http_page *pg,
    void *arg)
{
	struct http_rdzv_sum s;
	size_t total = rdzv_njobs(arg), shown;

	memset(&s, 0, sizeof s);
	if ((s.jobs_json = json_object_new_array()) == NULL)
		return;
	shown = pg->limit == 0 ? 0 : rdzv_walk_page(arg, pg->offset,
	    pg->limit, HTTP_STATUS_NODES, http_rdzv_json_job,
	    http_rdzv_json_node, &s);
	json_object_object_add(root, "jobs_total",
	    json_object_new_uint64(total));
	json_object_object_add(root, "offset",
	    json_object_new_uint64(pg->offset));
	json_object_object_add(root, "limit",
	    json_object_new_uint64(pg->limit));
	json_object_object_add(root, "truncated",
	    json_object_new_boolean(pg->offset + shown < total));
	json_object_object_add(root, "jobs", s.jobs_json);
}

/* The rendezvous engine's jobs, rounds, nodes and restarts. */
int
http_add_rdzv(struct http *h, struct rdzv *r)
{
	struct http_source src = { http_rdzv_metrics, http_rdzv_status, r };

	return http_add_source(h, &src);
}

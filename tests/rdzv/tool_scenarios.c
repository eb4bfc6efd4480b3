/*
 * tool_scenarios.c: the rendezvous scenario table (helper_scenarios.h)
 * against a real backend: each node of a scenario is a real backend
 * (launcher/backend/, made from a real command line as cgrun's agent
 * makes it) on this one event loop; spawning is faked (a round is
 * recorded; a restart is answered with workers_stopped, as an agent does
 * once its workers are down).
 *
 *   c10d      the engine serves in this process (a store on 127.0.0.1
 *             with rdzv_attach, as cgrun-rdzvd runs it), reached through
 *             the native protocol on real sockets; each node connects
 *             through a relay of its own, so a scenario can cut and heal
 *             one node's connection
 *   etcd-v3   the nodes meet on the etcd cluster at ENDPOINTS
 *
 * usage: tool_scenarios c10d | etcd-v3 ENDPOINTS
 * One line per scenario ("ok NAME", "n/a NAME: why", "FAIL NAME: what"),
 * then a count; exit 0 when none failed, 1 otherwise, 2 on usage.
 */
#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "backend.h"
#include "etcd_http.h"
#include "etcd_json.h"
#include "etcd_kv.h"
#include "helper_scenarios.h"
#include "log.h"
#include "options.h"
#include "rdzv.h"
#include "store.h"

#define TS_ARGS		16
#define TS_ARG_LEN	512

struct ts;

/* One node's connection to the engine, through us (c10d). */
struct relay {
	struct ts		*ts;
	struct evconnlistener	*l;
	int			 port;
	struct bufferevent	*agent, *engine;
};

/* One node: its command line, options and backend. */
struct node {
	struct ts		*ts;
	int			 i;
	char			 args[TS_ARGS][TS_ARG_LEN];
	char			*argv[TS_ARGS + 1];
	struct cgrun_options	 o;
	int			 parsed;
	struct backend		*b;
	struct event		*stop;		/* workers "stopped" */
	struct relay		 relay;
};

/* A scenario's run on one backend. */
struct ts {
	const char		*backend;	/* "c10d", "etcd-v3" */
	const char		*endpoints;	/* etcd-v3 */
	struct event_base	*base;
	const struct scenario	*s;
	struct scn_run		*run;
	char			 run_id[96];
	char			 conf[256];
	struct store		*store;		/* c10d: the engine's */
	struct rdzv		*eng;
	int			 port;
	struct etcd_http	*http;		/* etcd-v3: to count keys */
	struct etcd_req		*counting;	/* a read of node keys */
	unsigned		 epoch;		/* actions so far */
	unsigned		 asked_epoch, counted_epoch;
	long			 counted;
	struct node		 n[SCN_NODES];
};

static const char *ts_backend, *ts_endpoints;

/* ---- the relay (c10d) ---- */

/* Close both sides of the relay's connection. */
static void
relay_drop(struct relay *r)
{
	if (r->agent != NULL)
		bufferevent_free(r->agent);
	if (r->engine != NULL)
		bufferevent_free(r->engine);
	r->agent = r->engine = NULL;
}

/* Bytes from one side go to the other. */
static void
relay_read_cb(struct bufferevent *from, void *arg)
{
	struct relay *r = arg;

	evbuffer_add_buffer(bufferevent_get_output(from == r->agent ?
	    r->engine : r->agent), bufferevent_get_input(from));
}

/* The other side got everything: close it too. */
static void
relay_drained_cb(struct bufferevent *to, void *arg)
{
	relay_drop(arg);
}

/* One side closed: the other gets what was sent (a LEAVE), then closes. */
static void
relay_event_cb(struct bufferevent *from, short what, void *arg)
{
	struct relay *r = arg;
	struct bufferevent *to = from == r->agent ? r->engine : r->agent;

	if (!(what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)))
		return;
	if (to == NULL) {
		relay_drop(r);
		return;
	}
	evbuffer_add_buffer(bufferevent_get_output(to),
	    bufferevent_get_input(from));
	bufferevent_free(from);
	if (from == r->agent)
		r->agent = NULL;
	else
		r->engine = NULL;
	if (evbuffer_get_length(bufferevent_get_output(to)) == 0) {
		relay_drop(r);
		return;
	}
	bufferevent_disable(to, EV_READ);
	bufferevent_setcb(to, NULL, relay_drained_cb, relay_event_cb, r);
}

/* The node connected: connect on to the engine. */
static void
relay_accept_cb(struct evconnlistener *l, evutil_socket_t fd,
    struct sockaddr *sa, int len, void *arg)
{
	struct relay *r = arg;
	struct sockaddr_in sin;

	relay_drop(r);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = htons((uint16_t)r->ts->port);
	r->agent = bufferevent_socket_new(r->ts->base, fd,
	    BEV_OPT_CLOSE_ON_FREE);
	r->engine = bufferevent_socket_new(r->ts->base, -1,
	    BEV_OPT_CLOSE_ON_FREE);
	if (r->agent == NULL || r->engine == NULL ||
	    bufferevent_socket_connect(r->engine, (struct sockaddr *)&sin,
	    sizeof(sin)) == -1) {
		if (r->agent == NULL)
			close(fd);
		relay_drop(r);
		return;
	}
	bufferevent_setcb(r->agent, relay_read_cb, NULL, relay_event_cb, r);
	bufferevent_setcb(r->engine, relay_read_cb, NULL, relay_event_cb, r);
	bufferevent_enable(r->agent, EV_READ | EV_WRITE);
	bufferevent_enable(r->engine, EV_READ | EV_WRITE);
}

/* Listen for the node on 127.0.0.1 (port 0: any); -1 on error. */
static int
relay_listen(struct relay *r, int port)
{
	struct sockaddr_in sin;
	socklen_t sl = sizeof(sin);

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = htons((uint16_t)port);
	r->l = evconnlistener_new_bind(r->ts->base, relay_accept_cb, r,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE, 16,
	    (struct sockaddr *)&sin, sizeof(sin));
	if (r->l == NULL || getsockname(evconnlistener_get_fd(r->l),
	    (struct sockaddr *)&sin, &sl) == -1)
		return -1;
	r->port = ntohs(sin.sin_port);
	return 0;
}

/* Cut: the connection closes and nobody listens until healed. */
static void
relay_cut(struct relay *r)
{
	relay_drop(r);
	if (r->l != NULL)
		evconnlistener_free(r->l);
	r->l = NULL;
}

/* ---- the nodes' backends ---- */

/* cb->round. */
static void
ts_round(void *arg, const struct round_info *ri)
{
	struct node *n = arg;

	scn_saw(n->ts->run, n->i, SCN_SAW_ROUND, ri, 0, NULL);
}

/* cb->restart: stop the (fake) workers, on the next loop turn. */
static void
ts_restart(void *arg, const char *why)
{
	struct node *n = arg;

	scn_saw(n->ts->run, n->i, SCN_SAW_RESTART, NULL, 0, why);
	event_active(n->stop, EV_TIMEOUT, 0);
}

/* cb->fail. */
static void
ts_fail(void *arg, int status, const char *why)
{
	struct node *n = arg;

	scn_saw(n->ts->run, n->i, SCN_SAW_FAILED, NULL, status, why);
}

/* cb->finished. */
static void
ts_finished(void *arg)
{
	struct node *n = arg;

	scn_saw(n->ts->run, n->i, SCN_SAW_FINISHED, NULL, 0, NULL);
}

/* The workers are down after a restart. */
static void
ts_stopped_cb(evutil_socket_t fd, short what, void *arg)
{
	struct node *n = arg;

	if (n->b != NULL)
		n->b->ops->workers_stopped(n->b);
}

/* Seconds as --rdzv-conf writes them. */
static const char *
ts_secs(int ms, int dflt, char *buf, size_t len)
{
	snprintf(buf, len, "%g", (ms ? ms : dflt) / 1000.0);
	return buf;
}

/* The --rdzv-conf of the scenario's timers for this backend. */
static void
ts_conf(struct ts *t)
{
	char lc[32], join[32];

	ts_secs(t->s->last_call_ms, 60000, lc, sizeof(lc));
	ts_secs(t->s->join_ms, 120000, join, sizeof(join));
	if (strcmp(t->backend, "c10d") == 0)
		snprintf(t->conf, sizeof(t->conf), "is_host=0,"
		    "keep_alive_interval=1,keep_alive_max_attempt=20,"
		    "last_call_timeout=%s,join_timeout=%s", lc, join);
	else
		snprintf(t->conf, sizeof(t->conf), "keep_alive_interval=0.5,"
		    "keep_alive_max_attempt=6,read_timeout=10,"
		    "request_timeout=1,last_call_timeout=%s,join_timeout=%s",
		    lc, join);
}

/* Node i's command line, as cgrun's; 0, or -1 with err. */
static int
ts_options(struct ts *t, struct node *n, char *err, size_t len)
{
	const struct scn_node *sn = &t->s->nodes[n->i];
	int argc = 0, k;

	snprintf(n->args[argc++], TS_ARG_LEN, "cgrun");
	snprintf(n->args[argc++], TS_ARG_LEN, "--nnodes=%d:%d", t->s->min,
	    t->s->max);
	snprintf(n->args[argc++], TS_ARG_LEN, "--rdzv-backend=%s", t->backend);
	if (strcmp(t->backend, "c10d") == 0)
		snprintf(n->args[argc++], TS_ARG_LEN,
		    "--rdzv-endpoint=127.0.0.1:%d", n->relay.port);
	else
		snprintf(n->args[argc++], TS_ARG_LEN, "--rdzv-endpoint=%s",
		    t->endpoints);
	snprintf(n->args[argc++], TS_ARG_LEN, "--rdzv-id=%s", t->run_id);
	snprintf(n->args[argc++], TS_ARG_LEN, "--local-addr=%s",
	    scn_host(t->s, n->i));
	snprintf(n->args[argc++], TS_ARG_LEN, "--max-restarts=%d",
	    t->s->max_restarts);
	snprintf(n->args[argc++], TS_ARG_LEN, "--rdzv-conf=%s", t->conf);
	snprintf(n->args[argc++], TS_ARG_LEN, "true");
	for (k = 0; k < argc; k++)
		n->argv[k] = n->args[k];
	n->argv[argc] = NULL;
	if (options_parse(&n->o, argc, n->argv, err, len) != OPTIONS_OK)
		return -1;
	n->parsed = 1;
	if (sn->node_rank >= 0) {	/* as under a Slurm step */
		n->o.slurm_step = 1;
		n->o.slurm_node_id = sn->node_rank;
	}
	return 0;
}

/* harness->join: node i's backend is made and started. */
static int
ts_join(void *h, int i, char *err, size_t len)
{
	static const struct backend_cb proto = { ts_round, ts_restart,
	    ts_fail, ts_finished, NULL };
	struct ts *t = h;
	struct node *n = &t->n[i];
	struct backend_config cfg;
	struct backend_cb cb = proto;

	t->epoch++;
	if (strcmp(t->backend, "c10d") == 0 && relay_listen(&n->relay, 0)) {
		snprintf(err, len, "node %s: cannot listen for it",
		    t->s->nodes[i].name);
		return -1;
	}
	if (ts_options(t, n, err, len) == -1)
		return -1;
	memset(&cfg, 0, sizeof(cfg));
	cfg.opts = &n->o;
	cfg.nproc = t->s->nodes[i].nproc;
	cfg.store_host = scn_host(t->s, i);
	cfg.store_port = SCN_STORE_PORT + i;
	cb.arg = n;
	if ((n->b = backend_new(t->base, &cfg, &cb, err, len)) == NULL)
		return -1;
	return n->b->ops->start(n->b, err, len);
}

/* harness->failed. */
static void
ts_failed(void *h, int i, const char *why)
{
	struct ts *t = h;

	t->epoch++;
	t->n[i].b->ops->workers_failed(t->n[i].b, why);
}

/* harness->done. */
static void
ts_done(void *h, int i)
{
	struct ts *t = h;

	t->epoch++;
	t->n[i].b->ops->workers_done(t->n[i].b);
}

/* harness->leave: the backend is freed (LEAVE; the lease revoked). */
static void
ts_leave(void *h, int i)
{
	struct ts *t = h;

	t->epoch++;
	t->n[i].b->ops->free(t->n[i].b);
	t->n[i].b = NULL;
}

/* harness->cut (c10d: its relay). */
static void
ts_cut(void *h, int i)
{
	struct ts *t = h;

	t->epoch++;
	relay_cut(&t->n[i].relay);
}

/* harness->heal: its relay listens again on the same port. */
static void
ts_heal(void *h, int i)
{
	struct ts *t = h;
	struct relay *r = &t->n[i].relay;

	t->epoch++;
	if (relay_listen(r, r->port) == -1)
		fprintf(stderr, "tool_scenarios: cannot listen again on "
		    "127.0.0.1:%d\n", r->port);
}

/* etcd-v3: the count of node keys came. */
static void
ts_counted_cb(void *arg, const struct etcd_reply *r, const char *why)
{
	struct ts *t = arg;

	t->counting = NULL;
	if (r != NULL && r->code == 0) {
		t->counted = (long)r->nkvs;
		t->counted_epoch = t->asked_epoch;
	}
}

/* harness->known: the engine's node count; on etcd, the run's node keys
 * as the last read asked after the last action found them (-1 until one
 * came), and the next read asked. */
static long
ts_known(void *h)
{
	struct ts *t = h;
	struct rdzv_job_info ji;
	char prefix[160];
	long known;

	if (strcmp(t->backend, "c10d") == 0)
		return rdzv_job_info(t->eng, t->run_id, &ji) == 0 ?
		    (long)ji.nodes : 0;
	known = t->counted_epoch == t->epoch ? t->counted : -1;
	if (t->counting == NULL) {
		snprintf(prefix, sizeof(prefix), "/cgrun/v1/%s/nodes/",
		    t->run_id);
		t->asked_epoch = t->epoch;
		t->counting = etcd_range_prefix(t->http, prefix,
		    ts_counted_cb, t);
	}
	return known;
}

struct ts_find {
	const char	*host;
	int		 offline;
};

/* rdzv_walk: is the node of that host disconnected? */
static void
ts_find_node(const struct rdzv_node_view *nv, void *arg)
{
	struct ts_find *f = arg;

	if (strcmp(nv->host, f->host) == 0 && !nv->connected)
		f->offline = 1;
}

/* rdzv_walk: a job (only its nodes matter here). */
static void
ts_find_job(const struct rdzv_job_view *jv, void *arg)
{
}

/* harness->offline: the engine sees node i disconnected. */
static int
ts_offline(void *h, int i)
{
	struct ts *t = h;
	struct ts_find f = { scn_host(t->s, i), 0 };

	rdzv_walk(t->eng, ts_find_job, ts_find_node, &f);
	return f.offline;
}

/* harness->turn: one loop turn, at most 20 ms. */
static void
ts_turn(void *h)
{
	struct ts *t = h;
	struct timeval tv = { 0, 20000 };

	event_base_loopexit(t->base, &tv);
	event_base_dispatch(t->base);
}

/* harness->name_at: "host (pid N)" (c10d), "host-N-xxxxxxxx" (etcd). */
static size_t
ts_name_at(void *h, int i, const char *at)
{
	struct ts *t = h;
	char name[128];
	size_t n;

	if (strcmp(t->backend, "c10d") == 0) {
		snprintf(name, sizeof(name), "%s (pid %d)", scn_host(t->s, i),
		    (int)getpid());
		n = strlen(name);
		return strncmp(at, name, n) == 0 ? n : 0;
	}
	snprintf(name, sizeof(name), "%s-%d-", scn_host(t->s, i),
	    (int)getpid());
	n = strlen(name);
	return strncmp(at, name, n) == 0 && strspn(at + n,
	    "0123456789abcdef") >= 8 ? n + 8 : 0;
}

/* harness->close: every backend leaves, then the engine goes. */
static void
ts_close(void *h)
{
	struct ts *t = h;
	int i;

	for (i = 0; i < SCN_NODES; i++) {
		if (t->n[i].b != NULL)
			t->n[i].b->ops->free(t->n[i].b);
		if (t->n[i].stop != NULL)
			event_free(t->n[i].stop);
		if (t->n[i].parsed)
			options_free(&t->n[i].o);
		relay_cut(&t->n[i].relay);
	}
	if (t->counting != NULL)
		etcd_http_cancel(t->counting);
	if (t->http != NULL)
		etcd_http_free(t->http);
	if (t->eng != NULL)
		rdzv_free(t->eng);
	if (t->store != NULL)
		store_free(t->store);
	event_base_free(t->base);
	free(t);
}

/* The engine in this process, on 127.0.0.1 (c10d); -1 with err. */
static int
ts_engine(struct ts *t, char *err, size_t len)
{
	if ((t->store = store_new(t->base, NULL)) == NULL ||
	    store_listen(t->store, "127.0.0.1", 0, &t->port, err, len) == -1 ||
	    (t->eng = rdzv_attach(t->store, t->base)) == NULL) {
		if (err[0] == '\0')
			snprintf(err, len, "cannot start the engine");
		return -1;
	}
	return 0;
}

/* A client of the etcd cluster, to count node keys; -1 with err. */
static int
ts_etcd(struct ts *t, char *err, size_t len)
{
	struct etcd_http_conf c;

	memset(&c, 0, sizeof(c));
	if (etcd_http_endpoints(t->endpoints, &c, err, len) == -1)
		return -1;
	c.timeout_ms = 2000;
	c.connect_ms = 1000;
	return (t->http = etcd_http_new(t->base, &c, err, len)) != NULL ? 0 :
	    -1;
}

/* harness->open. */
static void *
ts_open(const struct scenario *s, const char *run_id, struct scn_run *run,
    char *err, size_t len)
{
	struct ts *t = calloc(1, sizeof(*t));
	int i, rc;

	if (t == NULL || (t->base = event_base_new()) == NULL) {
		free(t);
		snprintf(err, len, "out of memory");
		return NULL;
	}
	t->backend = ts_backend;
	t->endpoints = ts_endpoints;
	t->s = s;
	t->run = run;
	snprintf(t->run_id, sizeof(t->run_id), "%s", run_id);
	ts_conf(t);
	for (i = 0; i < SCN_NODES; i++) {
		t->n[i].ts = t;
		t->n[i].i = i;
		t->n[i].relay.ts = t;
		t->n[i].stop = evtimer_new(t->base, ts_stopped_cb, &t->n[i]);
	}
	err[0] = '\0';
	rc = strcmp(t->backend, "c10d") == 0 ? ts_engine(t, err, len) :
	    ts_etcd(t, err, len);
	if (rc == -1) {
		ts_close(t);
		return NULL;
	}
	return t;
}

static const struct scn_harness ts_harness_c10d = {
	"c10d", 1, ts_open, ts_join, ts_failed, ts_done, ts_leave, ts_cut,
	ts_heal, ts_known, ts_offline, ts_turn, ts_name_at, ts_close
};

static const struct scn_harness ts_harness_etcd = {
	"etcd-v3", 0, ts_open, ts_join, ts_failed, ts_done, ts_leave, NULL,
	NULL, ts_known, NULL, ts_turn, ts_name_at, ts_close
};

int
main(int argc, char **argv)
{
	const struct scn_harness *h;
	const char *only;
	char err[2048];
	size_t i;
	int rc, failed = 0, ran = 0;

	if (argc == 2 && strcmp(argv[1], "c10d") == 0)
		h = &ts_harness_c10d;
	else if (argc == 3 && strcmp(argv[1], "etcd-v3") == 0)
		h = &ts_harness_etcd;
	else {
		fprintf(stderr, "usage: tool_scenarios c10d | etcd-v3 "
		    "ENDPOINTS\n");
		return 2;
	}
	ts_backend = argv[1];
	only = getenv("TS_ONLY");	/* one scenario, by name */
	ts_endpoints = argc == 3 ? argv[2] : NULL;
	signal(SIGPIPE, SIG_IGN);
	log_setlevel(getenv("TS_VERBOSE") ? LOG_LVL_DEBUG : LOG_LVL_WARN);
	for (i = 0; i < scn_ntable; i++) {
		if (only != NULL && strcmp(only, scn_table[i].name) != 0)
			continue;
		err[0] = '\0';
		rc = scn_play(&scn_table[i], h, err, sizeof(err));
		if (rc == 1)
			printf("n/a %s: %s\n", scn_table[i].name, err);
		else if (rc == 0)
			printf("ok %s\n", scn_table[i].name);
		else
			printf("FAIL %s: %s\n", scn_table[i].name, err);
		fflush(stdout);
		ran += rc != 1;
		failed += rc == -1;
	}
	printf("%s: %d scenario(s) run, %d failed\n", h->name, ran, failed);
	return failed > 0 ? 1 : 0;
}

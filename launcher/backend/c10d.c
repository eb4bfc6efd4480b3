/*
 * c10d.c: the c10d rendezvous backend: the agent's side of the native
 * rendezvous protocol (docs/protocol.md).  It hosts the engine when the
 * endpoint is this agent's (c10d_host.c, torchrun's is_host), says HELLO
 * (and authenticates) on the connection c10d_link.c keeps, joins the
 * job's rounds, sends keep-alives and turns the server's decisions into
 * backend callbacks.  The state both files share is c10d_impl.h's.
 *
 * Two state variables, each changed only through one function that logs
 * "old -> new" (-v -v): the connection (c10d_link, c10d_link.c, whose top
 * comment draws it) and the session:
 *
 * The session (c10d_enter): CONNECTING -> JOINING (HELLO + JOIN sent) ->
 * RUNNING (ROUND received) -> STOPPING (RESTART received, workers
 * stopping) -> JOINING (STOPPED sent) ...; FAILED and DONE wait for the
 * server's decision; OVER after FINISHED or FAIL.  After a lost
 * connection comes back within the resume window, the client carries
 * its last round onto the new one, or repeats what the server may have
 * missed (c10d_resume.c).
 *
 * The exit barrier: in DONE (our workers succeeded) the server's FINISHED
 * ends the job; --exit-barrier-timeout bounds that wait.  When it expires
 * the agent exits CGRUN_EXIT_RDZV, unless it hosts what the other nodes
 * still need (the rendezvous engine, or the job store their workers use):
 * then it says so and keeps waiting.
 */
#include <sys/socket.h>
#include <sys/types.h>

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "auth.h"
#include "backend.h"
#include "c10d_conf.h"
#include "c10d_host.h"
#include "c10d_impl.h"
#include "endpoint.h"
#include "errbuf.h"
#include "exitcodes.h"
#include "log.h"
#include "monotime.h"
#include "options.h"
#include "rdzv_proto.h"
#include "store.h"
#include "wire.h"

#define C10D_DEFAULT_PORT	29400

static const char *const cstate_names[] = { "CONNECTING", "JOINING",
	"RUNNING", "STOPPING", "FAILED", "DONE", "OVER" };

_Static_assert(sizeof(cstate_names) / sizeof(cstate_names[0]) == C__STATES,
    "cstate_names does not match enum cstate");

/* Move the session to a new state. */
static void
c10d_enter(struct c10d *c, enum cstate s)
{
	log_debug("c10d %s -> %s", cstate_names[c->state], cstate_names[s]);
	c->state = s;
	if (s != C_DONE && c->barrier != NULL)
		evtimer_del(c->barrier);	/* the exit barrier is over */
}

/* Encode and queue one message to the server. */
void
c10d_send(struct c10d *c, const struct rdzv_msg *m)
{
	unsigned char buf[4 + RDZV_FRAME_MAX];
	ssize_t n;

	if (c->bev == NULL || !c10d_live(c))	/* lost: resent on resuming */
		return;
	if ((n = rdzv_proto_encode(m, buf, sizeof(buf))) < 0) {
		log_warnx("c10d: cannot encode %s", rdzv_proto_opname(m->op));
		return;
	}
	bufferevent_write(c->bev, buf, (size_t)n);
}

/* Send a message without fields. */
void
c10d_say(struct c10d *c, uint8_t op)
{
	struct rdzv_msg m;

	rdzv_proto_init(&m, op);
	c10d_send(c, &m);
}

/* Tell the agent the job is over (after the hosted engine drained). */
static void
c10d_end(struct c10d *c)
{
	const struct backend_cb *cb = &c->hdr.cb;

	evtimer_del(c->keepalive);	/* already OVER (c10d_over) */
	if (c->end_status == 0)
		cb->finished(cb->arg);
	else
		cb->fail(cb->arg, c->end_status, c->end_why);
}

/* Host: keep serving until every other node has gone (they need our
 * FINISHED/FAIL), at most close_timeout. */
static void
c10d_linger_cb(evutil_socket_t fd, short what, void *arg)
{
	struct c10d *c = arg;
	struct timeval tv = { 0, 20000 };

	if (c10d_host_njobs(c->hosted) == 0 ||
	    monotime_passed(&c->linger_deadline)) {
		c10d_end(c);
		return;
	}
	evtimer_add(c->linger, &tv);
}

/* The job is over for this node: status 0 finished, else fail. */
void
c10d_over(struct c10d *c, int status, const char *why)
{
	c->end_status = status;
	snprintf(c->end_why, sizeof(c->end_why), "%s", why);
	if (c->bev != NULL) {
		bufferevent_free(c->bev);	/* the server forgets us */
		c->bev = NULL;
	}
	c10d_link(c, LINK_DOWN);
	evtimer_del(c->keepalive);
	c10d_enter(c, C_OVER);
	c->linger_deadline = monotime_after(c->conf.close_ms);
	event_active(c->linger, EV_TIMEOUT, 0);	/* never inside an op */
}

/* One line per change of the round being formed. */
static void
c10d_progress(struct c10d *c, const struct rdzv_msg *m)
{
	char lc[64] = "";

	if (c->shown && m->round == c->shown_round &&
	    m->joined == c->shown_joined && m->role == c->shown_role)
		return;
	c->shown = 1;
	c->shown_round = m->round;
	c->shown_joined = m->joined;
	c->shown_role = m->role;
	if (m->role == RDZV_ROLE_SPARE) {
		log_warnx("rendezvous %s round %u: %u/%u nodes running; this "
		    "node waits as a spare (if that is another job using the "
		    "same --rdzv-id, this one will not run: give each job its "
		    "own id)", c->run_id, m->round, m->joined, m->max_nodes);
		return;
	}
	if (m->last_call_ms != RDZV_NO_DEADLINE)
		snprintf(lc, sizeof(lc), ", last call in %u s",
		    (m->last_call_ms + 999) / 1000);
	log_warnx("rendezvous %s round %u: %u/%u nodes (min %u, max %u)%s",
	    c->run_id, m->round, m->joined, m->max_nodes, m->min_nodes,
	    m->max_nodes, lc);
}

/* ROUND: this node's place; a fresh job store, then spawn. */
static void
c10d_round(struct c10d *c, const struct rdzv_msg *m)
{
	struct round_info *ri = &c->info;

	if (c10d_round_kept(c, m))
		return;
	c->resumed = 0;
	c->had_round = 1;
	memset(ri, 0, sizeof(*ri));
	ri->round = m->round;
	ri->group_rank = m->group_rank;
	ri->group_world_size = (int)m->group_world_size;
	ri->rank_base = (int)m->rank_base;
	ri->world_size = (int)m->world_size;
	ri->local_world_size = c->cfg.nproc;
	snprintf(ri->master_addr, sizeof(ri->master_addr), "%s", m->addr);
	ri->master_port = m->port;
	ri->restart_count = (int)m->restart_count;
	snprintf(ri->run_id, sizeof(ri->run_id), "%s", c->run_id);
	if (c->cfg.jobstore != NULL)
		store_reset(c->cfg.jobstore);
	c->shown = 0;
	log_info("rendezvous %s round %u: group_rank=%d/%u ranks=%u..%u of %u "
	    "restarts=%u store=%s:%u", c->run_id, m->round, m->group_rank,
	    m->group_world_size, m->rank_base, m->rank_base + c->cfg.nproc - 1,
	    m->world_size, m->restart_count, m->addr, m->port);
	c10d_enter(c, C_RUNNING);
	c->hdr.cb.round(c->hdr.cb.arg, ri);
}

/* FAIL: the job cannot go on. */
static void
c10d_fail_msg(struct c10d *c, const struct rdzv_msg *m)
{
	char why[RDZV_TEXT_MAX + RDZV_RUNID_MAX + 32];
	int status = CGRUN_EXIT_RDZV;

	if (m->reason == RDZV_FAIL_RESTARTS && c->state == C_FAILED)
		status = -1;	/* our workers: their root cause */
	snprintf(why, sizeof(why), "rendezvous %s: %s", c->run_id, m->text);
	c10d_over(c, status, why);
}

/* CHALLENGE: answer with our nonce and proof, then JOIN. */
static void
c10d_auth(struct c10d *c, const struct rdzv_msg *m)
{
	struct rdzv_msg a;

	if (c->key == NULL) {
		c10d_over(c, CGRUN_EXIT_RDZV, "the rendezvous server requires "
		    "authentication: give cgrun --auth-token-file");
		return;
	}
	snprintf(c->snonce, sizeof(c->snonce), "%s", m->nonce);
	rdzv_proto_init(&a, RDZV_OP_AUTH);
	if (auth_nonce(c->cnonce) == -1 || auth_proof(c->key, AUTH_ROLE_CLIENT,
	    c->snonce, c->cnonce, a.proof) == -1) {
		c10d_over(c, CGRUN_EXIT_RDZV, "bad authentication challenge "
		    "from the rendezvous server");
		return;
	}
	memcpy(a.nonce, c->cnonce, sizeof(c->cnonce));
	c10d_send(c, &a);
	if (c->link == LINK_HELLO)
		c10d_link(c, LINK_PROOF);
	if (!c->rejoining)
		c10d_join(c);
}

/* One message from the server. */
static void
c10d_msg(struct c10d *c, const struct rdzv_msg *m)
{
	char why[RDZV_TEXT_MAX + 64];

	if (c->key != NULL && c->link != LINK_UP && m->op != RDZV_OP_CHALLENGE &&
	    m->op != RDZV_OP_AUTHOK && m->op != RDZV_OP_ERROR) {
		c10d_over(c, CGRUN_EXIT_RDZV, "the rendezvous server did not "
		    "authenticate (has it no --auth-token-file?)");
		return;
	}
	c10d_busy_answered(c);
	switch (m->op) {
	case RDZV_OP_CHALLENGE:
		c10d_auth(c, m);
		break;
	case RDZV_OP_AUTHOK:
		if (c->key == NULL || !auth_verify(c->key, AUTH_ROLE_SERVER,
		    c->snonce, c->cnonce, m->proof)) {
			c10d_over(c, CGRUN_EXIT_RDZV, "the rendezvous server "
			    "failed to prove it knows the auth token");
			break;
		}
		c10d_link(c, LINK_UP);
		break;
	case RDZV_OP_WELCOME:
		if (c->rejoining)
			c10d_rejoin(c, m->version);
		break;
	case RDZV_OP_STATUS:
		c10d_progress(c, m);
		break;
	case RDZV_OP_ROUND:
		c10d_round(c, m);
		break;
	case RDZV_OP_RESTART:
		/* a report held after RESUME is answered here */
		c->carrying = c->unsent = 0;
		if (c->state == C_STOPPING)	/* again, after resuming */
			break;
		if (c->state == C_FAILED || c->state == C_JOINING) {
			/* our own failure started this round, or our STOPPED
			 * was lost with a connection: already stopped */
			c10d_say(c, RDZV_OP_STOPPED);
			c10d_enter(c, C_JOINING);
			break;
		}
		c10d_enter(c, C_STOPPING);
		snprintf(why, sizeof(why), "new rendezvous round %u: %s",
		    m->round, m->text);
		c->hdr.cb.restart(c->hdr.cb.arg, why);
		break;
	case RDZV_OP_FINISHED:
		c10d_over(c, 0, "");
		break;
	case RDZV_OP_FAIL:
		c10d_fail_msg(c, m);
		break;
	case RDZV_OP_ERROR:
		snprintf(why, sizeof(why), "rendezvous server error: %s",
		    m->text);
		c10d_over(c, CGRUN_EXIT_RDZV, why);
		break;
	default:
		c10d_over(c, CGRUN_EXIT_RDZV, "unexpected message from the "
		    "rendezvous server");
		break;
	}
}

/* Frames from the server. */
void
c10d_read_cb(struct bufferevent *bev, void *arg)
{
	struct c10d *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	struct rdzv_msg m;
	char why[RDZV_PROTO_ERRLEN];
	unsigned char *b;
	size_t len, used;
	int rc;

	while (c->bev != NULL && (len = evbuffer_get_length(in)) > 0) {
		if (len > 4 + RDZV_FRAME_MAX)
			len = 4 + RDZV_FRAME_MAX;
		b = evbuffer_pullup(in, (ssize_t)len);
		rc = rdzv_proto_decode(b, len, &m, &used, why, sizeof(why));
		if (rc == RDZV_PROTO_MORE)
			return;
		if (rc == RDZV_PROTO_ERROR) {
			log_warnx("c10d: bad frame from the server: %s", why);
			if (c10d_busy_pending(c)) {
				c10d_busy_fail(c, "answered with something "
				    "else");
				return;
			}
			c10d_over(c, CGRUN_EXIT_RDZV, "bad frame from the "
			    "rendezvous server");
			return;
		}
		evbuffer_drain(in, used);
		c10d_msg(c, &m);
	}
}

/*
 * The endpoint is this machine, reached over loopback because its name
 * resolves to loopback here (Debian's "127.0.1.1 myhost"): advertise the
 * job store by that name, which the other nodes resolve to this machine,
 * rather than by a loopback address they cannot reach.
 */
static void
c10d_store_addr_name(struct c10d *c, const struct sockaddr *sa)
{
	if (!c10d_host_sa_loopback(sa) || !c10d_host_loopback_name(c->host))
		return;
	log_info("c10d: advertising the job store as %s, not %s (a loopback "
	    "address)", c->host, c->store_addr);
	snprintf(c->store_addr, sizeof(c->store_addr), "%s", c->host);
}

/* HELLO and JOIN, once connected. */
void
c10d_hello(struct c10d *c)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	struct rdzv_msg m;

	if (c->cfg.opts->local_addr != NULL)
		snprintf(c->store_addr, sizeof(c->store_addr), "%s",
		    c->cfg.opts->local_addr);
	else if (getsockname(bufferevent_getfd(c->bev), (struct sockaddr *)&ss,
	    &sl) == 0) {
		getnameinfo((struct sockaddr *)&ss, sl, c->store_addr,
		    sizeof(c->store_addr), NULL, 0, NI_NUMERICHOST);
		c10d_store_addr_name(c, (struct sockaddr *)&ss);
	}
	bufferevent_write(c->bev, WIRE_NATIVE_MAGIC, WIRE_NATIVE_MAGIC_LEN);
	c10d_link(c, LINK_HELLO);
	c10d_busy_connected(c);
	rdzv_proto_init(&m, RDZV_OP_HELLO);
	m.version = c->key != NULL ? RDZV_PROTO_VERSION_AUTH :
	    RDZV_PROTO_VERSION;
	c10d_send(c, &m);
	/* a new connection after a lost one joins once WELCOME says what
	 * the server takes (c10d_rejoin) */
	c->rejoining = c->state != C_CONNECTING;
	c->carrying = 0;
	if (c->rejoining)
		c10d_await_welcome(c);
	if (c->key == NULL && !c->rejoining) {
		c10d_link(c, LINK_UP);
		c10d_join(c);
		return;
	}
	event_del(c->keepalive);	/* nothing but AUTH before the proof,
					 * nothing before JOIN */
}

/* JOIN (after HELLO, after AUTH, or after WELCOME on a new connection),
 * then keep-alives. */
void
c10d_join(struct c10d *c)
{
	struct rdzv_msg m;
	struct timeval tv = { c->conf.keepalive_ms / 1000,
	    (c->conf.keepalive_ms % 1000) * 1000 };

	rdzv_proto_init(&m, RDZV_OP_JOIN);
	snprintf(m.run_id, sizeof(m.run_id), "%s", c->run_id);
	snprintf(m.host, sizeof(m.host), "%s", c->me);
	m.pid = (uint32_t)getpid();
	m.local_id = c->local_id;
	m.nproc = (uint32_t)c->cfg.nproc;
	/* c10d ignores --node-rank, as torchrun; a Slurm step's node id
	 * orders the group ranks (site.c) */
	m.node_rank = c->cfg.opts->slurm_step ? c->cfg.opts->slurm_node_id :
	    RDZV_NO_NODE_RANK;
	m.min_nodes = (uint32_t)c->cfg.opts->nnodes_min;
	m.max_nodes = (uint32_t)c->cfg.opts->nnodes_max;
	m.max_restarts = (uint32_t)c->cfg.opts->max_restarts;
	m.join_timeout_ms = c->conf.join_ms;
	m.last_call_ms = c->conf.last_call_ms;
	m.close_ms = c->conf.close_ms;
	m.keepalive_ms = c->conf.keepalive_ms;
	m.keepalive_max = c->conf.keepalive_max;
	snprintf(m.addr, sizeof(m.addr), "%s", c->store_addr);
	m.port = (uint16_t)c->cfg.store_port;
	c10d_send(c, &m);
	if (c->link == LINK_HELLO)
		c10d_link(c, LINK_UP);	/* rejoining without a token */
	event_add(c->keepalive, &tv);
	if (c->state == C_CONNECTING)
		c10d_enter(c, C_JOINING);
}

/* Keep-alive timer. */
static void
c10d_keepalive_cb(evutil_socket_t fd, short what, void *arg)
{
	c10d_say(arg, RDZV_OP_KEEPALIVE);
}

/* is_host: --rdzv-conf's, else a Slurm step's (site.c), else -1. */
static int
c10d_is_host(const struct c10d *c)
{
	if (c->conf.is_host != -1 || !c->cfg.opts->slurm_step)
		return c->conf.is_host;
	return c->cfg.opts->slurm_is_host;
}

/*
 * Host the engine if this agent is the endpoint (c10d_host.c).  A port
 * that is taken is checked once connected (c10d_busy.c); any other
 * failure to host ends the start: -1 with err.
 */
static int
c10d_host_or_check(struct c10d *c, char *err, size_t errlen)
{
	char bind_why[256] = "out of memory";

	errno = 0;
	c->hosted = c10d_host_new(c->hdr.base, c->host, c->port,
	    c10d_is_host(c), c->key, bind_why, sizeof(bind_why));
	if (c->hosted != NULL || errno == 0)
		return 0;
	if (errno == EADDRINUSE && c10d_busy_start(c, bind_why) == 0)
		return 0;
	errbuf_set(err, errlen, "this agent should host the rendezvous on "
	    "%s:%d but cannot: %s", c->host, c->port, bind_why);
	return -1;
}

/* ops->start: host if we are the endpoint, then connect and join. */
static int
c10d_start(struct backend *b, char *err, size_t errlen)
{
	struct c10d *c = (struct c10d *)b;

	if (c10d_host_or_check(c, err, errlen) == -1)
		return -1;
	/* connecting is bounded by read_timeout, and by join_timeout too:
	 * a join that cannot even connect cannot take longer than a join */
	c->connect_ms = c->conf.read_ms < c->conf.join_ms ? c->conf.read_ms :
	    c->conf.join_ms;
	c->connect_deadline = monotime_after(c->connect_ms);
	c10d_connect(c);
	return 0;
}

/* ops->workers_failed: the server decides (restart or end). */
static void
c10d_workers_failed(struct backend *b, const char *why)
{
	struct c10d *c = (struct c10d *)b;

	if (c->state == C_STOPPING) {	/* stopped on a RESTART anyway */
		c10d_enter(c, C_JOINING);
		c10d_report(c);
		return;
	}
	snprintf(c->failed_why, sizeof(c->failed_why), "%s", why ? why : "");
	c10d_enter(c, C_FAILED);
	c10d_report(c);
}

/* ops->workers_stopped: join the next round. */
static void
c10d_workers_stopped(struct backend *b)
{
	struct c10d *c = (struct c10d *)b;

	c10d_enter(c, C_JOINING);
	c10d_report(c);
}

/* What this node hosts that the others need, or NULL. */
static const char *
c10d_hosting(const struct c10d *c)
{
	if (c10d_host_njobs(c->hosted) > 0)
		return "the rendezvous";
	if (c->cfg.store_host != NULL && c->info.master_port ==
	    c->cfg.store_port && strcmp(c->info.master_addr,
	    c->cfg.store_host) == 0)
		return "the job store";
	return NULL;
}

/* --exit-barrier-timeout expired in DONE: give up, or keep hosting. */
static void
c10d_barrier_cb(evutil_socket_t fd, short what, void *arg)
{
	struct c10d *c = arg;
	double t = c->cfg.opts->exit_barrier_timeout;
	const char *what_host = c10d_hosting(c);
	char why[256];

	if (c->state != C_DONE)
		return;
	if (what_host != NULL) {
		log_warnx("exit barrier: the other nodes are not done after "
		    "%.0f s; this node hosts %s they still need, so it keeps "
		    "waiting", t, what_host);
		return;
	}
	snprintf(why, sizeof(why), "exit barrier timed out: this node's "
	    "workers finished, the other nodes were not done %.0f s later "
	    "(--exit-barrier-timeout)", t);
	c10d_over(c, CGRUN_EXIT_RDZV, why);
}

/* ops->workers_done: the exit barrier is the server's FINISHED. */
static void
c10d_workers_done(struct backend *b)
{
	struct c10d *c = (struct c10d *)b;
	double t = c->cfg.opts->exit_barrier_timeout;
	struct timeval tv;

	c10d_enter(c, C_DONE);
	c10d_report(c);
	if (!(t > 0))
		return;		/* 0: no limit */
	tv.tv_sec = (time_t)t;
	tv.tv_usec = (suseconds_t)((t - (double)tv.tv_sec) * 1e6);
	evtimer_add(c->barrier, &tv);
}

/* ops->free: leave the job (not closing it: the others go on). */
static void
c10d_free(struct backend *b)
{
	struct c10d *c = (struct c10d *)b;

	if (c == NULL)
		return;
	if (c->bev != NULL) {
		c10d_say(c, RDZV_OP_LEAVE);
		/* One best-effort write: we are about to exit.  A socket
		 * bufferevent keeps its output's front frozen (only it may
		 * drain it), so thaw it first. */
		evbuffer_unfreeze(bufferevent_get_output(c->bev), 1);
		evbuffer_write(bufferevent_get_output(c->bev),
		    bufferevent_getfd(c->bev));
		bufferevent_free(c->bev);
	}
	if (c->retry)
		event_free(c->retry);
	if (c->keepalive)
		event_free(c->keepalive);
	if (c->linger)
		event_free(c->linger);
	if (c->barrier)
		event_free(c->barrier);
	c10d_host_free(c->hosted);
	c10d_busy_free(c);
	if (c->key != NULL)
		auth_key_clear(c->key);
	free(c->key);
	free(c);
}

static const struct backend_ops c10d_ops = {
	"c10d", c10d_start, c10d_workers_failed, c10d_workers_stopped,
	c10d_workers_done, c10d_free
};

/* This node's rank sort key: --local-addr, else the host name. */
static void
c10d_me(struct c10d *c)
{
	if (c->cfg.opts->local_addr != NULL)
		snprintf(c->me, sizeof(c->me), "%s", c->cfg.opts->local_addr);
	else if (gethostname(c->me, sizeof(c->me)) == -1)
		snprintf(c->me, sizeof(c->me), "localhost");
}

/* A new c10d backend; NULL with err (usage errors). */
struct backend *
c10d_new(struct event_base *base, const struct backend_config *cfg,
    const struct backend_cb *cb, char *err, size_t errlen)
{
	static uint32_t backends;	/* made by this process so far */
	const struct cgrun_options *o = cfg->opts;
	struct c10d *c;

	if (o->rdzv_id == NULL || o->rdzv_id[0] == '\0') {
		errbuf_set(err, errlen, "multi-node jobs need --rdzv-id (or a "
		    "batch system job id)");
		return NULL;
	}
	if (strlen(o->rdzv_id) > RDZV_RUNID_MAX) {
		errbuf_set(err, errlen, "--rdzv-id: longer than %d bytes",
		    RDZV_RUNID_MAX);
		return NULL;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL) {
		errbuf_set(err, errlen, "out of memory");
		return NULL;
	}
	c->hdr.ops = &c10d_ops;
	c->hdr.cb = *cb;
	c->hdr.base = base;
	c->cfg = *cfg;
	/* tells this process's nodes apart (one in cgrun; a test or a
	 * benchmark runs many, with one pid) */
	c->local_id = backends++;
	snprintf(c->run_id, sizeof(c->run_id), "%s", o->rdzv_id);
	if (c10d_conf_parse(o->rdzv_conf, &c->conf, err, errlen) == -1) {
		free(c);
		return NULL;
	}
	if (endpoint_parse(o->rdzv_endpoint, c->host, sizeof(c->host),
	    &c->port, C10D_DEFAULT_PORT) == -1) {
		errbuf_set(err, errlen, "--rdzv-endpoint %s: expected "
		    "HOST[:PORT] (IPv6: [ADDR]:PORT), the port a number in "
		    "1-65535",
		    o->rdzv_endpoint ? o->rdzv_endpoint : "(none given)");
		free(c);
		return NULL;
	}
	if (o->auth_token_file != NULL && ((c->key = malloc(sizeof(*c->key)))
	    == NULL || auth_key_load(c->key, o->auth_token_file, err, errlen)
	    == -1)) {
		if (c->key == NULL)
			errbuf_set(err, errlen, "out of memory");
		free(c->key);
		free(c);
		return NULL;
	}
	c10d_me(c);
	c->retry = evtimer_new(base, c10d_retry_cb, c);
	c->keepalive = event_new(base, -1, EV_PERSIST, c10d_keepalive_cb, c);
	c->linger = evtimer_new(base, c10d_linger_cb, c);
	c->barrier = evtimer_new(base, c10d_barrier_cb, c);
	if (c->retry == NULL || c->keepalive == NULL || c->linger == NULL ||
	    c->barrier == NULL) {
		errbuf_set(err, errlen, "out of memory");
		c10d_free(&c->hdr);
		return NULL;
	}
	return &c->hdr;
}

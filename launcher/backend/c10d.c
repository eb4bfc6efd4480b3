/*
 * c10d.c: the c10d rendezvous backend: the agent's side of the native
 * rendezvous protocol (docs/protocol.md).  It connects to the endpoint
 * (cgrun-rdzvd, or the engine hosted in-process by the agent whose address
 * the endpoint is, torchrun's is_host), joins the job's rounds, sends
 * keep-alives and turns the server's decisions into backend callbacks.
 *
 * Two state variables, each changed only through one function that logs
 * "old -> new" (-v -v):
 *
 * The session (c10d_enter): CONNECTING -> JOINING (HELLO + JOIN sent) ->
 * RUNNING (ROUND received) -> STOPPING (RESTART received, workers
 * stopping) -> JOINING (STOPPED sent) ...; FAILED and DONE wait for the
 * server's decision; OVER after FINISHED or FAIL.
 *
 * The connection (c10d_link): DOWN -> CONNECTING (TCP connect) -> HELLO
 * (connected, magic + HELLO sent) -> UP (JOIN sent); with an auth token
 * HELLO -> PROOF (CHALLENGE answered, JOIN sent, waiting for the server's
 * AUTHOK) -> UP.  A lost connection goes back to DOWN.  A connection lost
 * from PROOF or UP after the first JOIN opens the resume window (the
 * server keeps our place for keepalive_ms x keepalive_max): until a JOIN
 * goes out on a new connection the client is resuming, and repeats what
 * the server may have missed.
 *
 * The exit barrier: in DONE (our workers succeeded) the server's FINISHED
 * ends the job; --exit-barrier-timeout bounds that wait.  When it expires
 * the agent exits CGRUN_EXIT_RDZV, unless it hosts what the other nodes
 * still need (the rendezvous engine, or the job store their workers use):
 * then it says so and keeps waiting.
 */
#include <sys/socket.h>
#include <sys/types.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "auth.h"
#include "backend.h"
#include "c10d_conf.h"
#include "c10d_host.h"
#include "endpoint.h"
#include "exitcodes.h"
#include "log.h"
#include "options.h"
#include "rdzv_proto.h"
#include "store.h"
#include "wire.h"

#define C10D_DEFAULT_PORT	29400
#define C10D_RETRY_FIRST_MS	1	/* first retry after a failed connect */
#define C10D_RETRY_MAX_MS	100	/* the backoff's cap */

enum cstate { C_CONNECTING, C_JOINING, C_RUNNING, C_STOPPING, C_FAILED,
	C_DONE, C_OVER };

static const char *cstate_names[] = { "CONNECTING", "JOINING", "RUNNING",
	"STOPPING", "FAILED", "DONE", "OVER" };

enum link { L_DOWN, L_CONNECTING, L_HELLO, L_PROOF, L_UP };

static const char *link_names[] = { "DOWN", "CONNECTING", "HELLO", "PROOF",
	"UP" };

struct c10d {
	struct backend		 hdr;	/* first: a struct backend */
	struct backend_config	 cfg;
	struct c10d_conf	 conf;
	char			 host[RDZV_HOST_MAX + 1];	/* endpoint */
	int			 port;
	char			 run_id[RDZV_RUNID_MAX + 1];
	char			 me[RDZV_HOST_MAX + 1];	/* rank sort key */
	char			 store_addr[RDZV_ADDR_MAX + 1];
	enum cstate		 state;
	enum link		 link;
	struct bufferevent	*bev;
	struct event		*retry;
	unsigned int		 retry_ms;	/* next backoff step; 0: first */
	uint32_t		 jitter;	/* xorshift32 state */
	struct event		*keepalive;
	struct event		*linger;	/* host: wait for peers */
	struct event		*barrier;	/* --exit-barrier-timeout */
	struct timespec		 connect_deadline;
	uint32_t		 connect_ms;	/* min(read, join timeout) */
	int			 connect_warned;	/* said we retry */
	struct timespec		 linger_deadline;
	int			 had_round;	/* a ROUND came once */
	int			 resumed;	/* restored; no ROUND since */
	struct timespec		 resume_deadline;
	char			 failed_why[RDZV_TEXT_MAX + 1];
	struct round_info	 info;
	uint32_t		 shown_round, shown_joined, shown_role;
	int			 shown;
	struct c10d_host	*hosted;	/* is_host: the engine here */
	/* --auth-token-file: protocol version 2 (auth.h) */
	struct auth_key		*key;
	char			 snonce[AUTH_HEX_LEN + 1];
	char			 cnonce[AUTH_HEX_LEN + 1];
	/* what to tell the agent when lingering ends */
	int			 end_status;	/* 0: finished */
	char			 end_why[RDZV_TEXT_MAX + 1];
};

static void c10d_connect(struct c10d *);
static void c10d_join(struct c10d *);

/* Move the session to a new state. */
static void
c10d_enter(struct c10d *c, enum cstate s)
{
	log_debug("c10d %s -> %s", cstate_names[c->state], cstate_names[s]);
	c->state = s;
	if (s != C_DONE && c->barrier != NULL)
		evtimer_del(c->barrier);	/* the exit barrier is over */
}

/* Move the connection to a new state. */
static void
c10d_link(struct c10d *c, enum link l)
{
	if (c->link == l)
		return;
	log_debug("c10d link %s -> %s", link_names[c->link], link_names[l]);
	c->link = l;
	if (l == L_UP)
		c->retry_ms = 0;	/* the next outage backs off afresh */
}

/*
 * The wait before the next connection attempt.  Agents started together
 * (srun) find the hosting agent not yet listening: the first retry comes
 * after C10D_RETRY_FIRST_MS, each further one waits twice as long up to
 * C10D_RETRY_MAX_MS, and a uniform draw in [step/2, step] keeps agents
 * from retrying in lockstep.  The caller's deadline (read_timeout, or
 * the keep-alive window when resuming) still ends the attempts.
 */
static struct timeval
c10d_backoff(struct c10d *c)
{
	struct timespec now;
	struct timeval tv;
	uint32_t x, us;

	c->retry_ms = c->retry_ms == 0 ? C10D_RETRY_FIRST_MS :
	    c->retry_ms * 2 > C10D_RETRY_MAX_MS ? C10D_RETRY_MAX_MS :
	    c->retry_ms * 2;
	if ((x = c->jitter) == 0) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		x = ((uint32_t)getpid() * 2654435761u ^
		    (uint32_t)now.tv_nsec) | 1;
	}
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	c->jitter = x;
	us = c->retry_ms * 500 + x % (c->retry_ms * 500 + 1);
	tv.tv_sec = us / 1000000;
	tv.tv_usec = us % 1000000;
	return tv;
}

/* Can messages go out (connected, magic sent)? */
static int
c10d_live(const struct c10d *c)
{
	return c->link == L_HELLO || c->link == L_PROOF || c->link == L_UP;
}

/* Resuming: joined once, connection lost, no JOIN on a new one yet. */
static int
c10d_resuming(const struct c10d *c)
{
	return c->state != C_CONNECTING && c->state != C_OVER &&
	    c->link != L_PROOF && c->link != L_UP;
}

/* Monotonic time plus ms. */
static struct timespec
c10d_after(uint32_t ms)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	t.tv_sec += ms / 1000;
	t.tv_nsec += (long)(ms % 1000) * 1000000;
	if (t.tv_nsec >= 1000000000) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000;
	}
	return t;
}

/* Has the monotonic time t passed? */
static int
c10d_passed(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > t->tv_sec || (now.tv_sec == t->tv_sec &&
	    now.tv_nsec >= t->tv_nsec);
}

/* Encode and queue one message to the server. */
static void
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
static void
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
	    c10d_passed(&c->linger_deadline)) {
		c10d_end(c);
		return;
	}
	evtimer_add(c->linger, &tv);
}

/* The job is over for this node: status 0 finished, else fail. */
static void
c10d_over(struct c10d *c, int status, const char *why)
{
	c->end_status = status;
	snprintf(c->end_why, sizeof(c->end_why), "%s", why);
	if (c->bev != NULL) {
		bufferevent_free(c->bev);	/* the server forgets us */
		c->bev = NULL;
	}
	c10d_link(c, L_DOWN);
	evtimer_del(c->keepalive);
	c10d_enter(c, C_OVER);
	c->linger_deadline = c10d_after(c->conf.close_ms);
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

/* After resuming with workers running: does the ROUND give this node the
 * place it runs with?  A restarted server forgot the job and numbers its
 * rounds from 0 again, but decides the same places for the same nodes. */
static int
c10d_same_place(const struct c10d *c, const struct rdzv_msg *m)
{
	const struct round_info *ri = &c->info;

	return c->resumed && c->had_round &&
	    (c->state == C_RUNNING || c->state == C_DONE) &&
	    m->group_rank == ri->group_rank &&
	    (int)m->group_world_size == ri->group_world_size &&
	    (int)m->rank_base == ri->rank_base &&
	    (int)m->world_size == ri->world_size &&
	    m->port == ri->master_port &&
	    strcmp(m->addr, ri->master_addr) == 0;
}

/* A ROUND after resuming kept our place: a restarted server ignored the
 * DONE we repeated while its round was forming, so say it again (a
 * server that had it ignores it). */
static void
c10d_round_kept(struct c10d *c)
{
	if (c->resumed && c->state == C_DONE)
		c10d_say(c, RDZV_OP_DONE);
	c->resumed = 0;
}

/* ROUND: this node's place; a fresh job store, then spawn. */
static void
c10d_round(struct c10d *c, const struct rdzv_msg *m)
{
	struct round_info *ri = &c->info;

	if (c->had_round && m->round == ri->round &&
	    (c->state == C_RUNNING || c->state == C_DONE)) {
		log_debug("c10d: round %u again after resuming", m->round);
		c10d_round_kept(c);
		return;
	}
	if (c10d_same_place(c, m)) {
		log_warnx("rendezvous %s: the server's round %u is our round %u "
		    "with the same places (the server restarted): workers go "
		    "on", c->run_id, m->round, ri->round);
		ri->round = m->round;
		c10d_round_kept(c);
		return;
	}
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
	if (c->link == L_HELLO)
		c10d_link(c, L_PROOF);
	c10d_join(c);
}

/* One message from the server. */
static void
c10d_msg(struct c10d *c, const struct rdzv_msg *m)
{
	char why[RDZV_TEXT_MAX + 64];

	if (c->key != NULL && c->link != L_UP && m->op != RDZV_OP_CHALLENGE &&
	    m->op != RDZV_OP_AUTHOK && m->op != RDZV_OP_ERROR) {
		c10d_over(c, CGRUN_EXIT_RDZV, "the rendezvous server did not "
		    "authenticate (has it no --auth-token-file?)");
		return;
	}
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
		c10d_link(c, L_UP);
		break;
	case RDZV_OP_WELCOME:
		break;
	case RDZV_OP_STATUS:
		c10d_progress(c, m);
		break;
	case RDZV_OP_ROUND:
		c10d_round(c, m);
		break;
	case RDZV_OP_RESTART:
		if (c->state == C_STOPPING)	/* again, after resuming */
			break;
		if (c->state == C_FAILED) {
			/* our own failure started this round: already stopped */
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
static void
c10d_read_cb(struct bufferevent *bev, void *arg)
{
	struct c10d *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	struct rdzv_msg m;
	const char *why;
	unsigned char *b;
	size_t len, used;
	int rc;

	while (c->bev != NULL && (len = evbuffer_get_length(in)) > 0) {
		if (len > 4 + RDZV_FRAME_MAX)
			len = 4 + RDZV_FRAME_MAX;
		b = evbuffer_pullup(in, (ssize_t)len);
		rc = rdzv_proto_decode(b, len, &m, &used, &why);
		if (rc == RDZV_PROTO_MORE)
			return;
		if (rc == RDZV_PROTO_ERROR) {
			log_warnx("c10d: bad frame from the server: %s", why);
			c10d_over(c, CGRUN_EXIT_RDZV, "bad frame from the "
			    "rendezvous server");
			return;
		}
		evbuffer_drain(in, used);
		c10d_msg(c, &m);
	}
}

/* Back on a new connection: repeat what the server may have missed (it
 * ignores what it already had). */
static void
c10d_resent(struct c10d *c)
{
	struct rdzv_msg m;

	log_warnx("rendezvous %s: connection to %s:%d restored", c->run_id,
	    c->host, c->port);
	c->resumed = 1;
	if (c->state == C_DONE)
		c10d_say(c, RDZV_OP_DONE);
	else if (c->state == C_FAILED) {
		rdzv_proto_init(&m, RDZV_OP_FAILED);
		snprintf(m.text, sizeof(m.text), "%s", c->failed_why);
		c10d_send(c, &m);
	} else if (c->state == C_JOINING && c->had_round)
		c10d_say(c, RDZV_OP_STOPPED);
}

/* HELLO and JOIN, once connected. */
static void
c10d_hello(struct c10d *c)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	struct rdzv_msg m;

	if (c->cfg.opts->local_addr != NULL)
		snprintf(c->store_addr, sizeof(c->store_addr), "%s",
		    c->cfg.opts->local_addr);
	else if (getsockname(bufferevent_getfd(c->bev), (struct sockaddr *)&ss,
	    &sl) == 0)
		getnameinfo((struct sockaddr *)&ss, sl, c->store_addr,
		    sizeof(c->store_addr), NULL, 0, NI_NUMERICHOST);
	bufferevent_write(c->bev, WIRE_NATIVE_MAGIC, WIRE_NATIVE_MAGIC_LEN);
	c10d_link(c, L_HELLO);
	rdzv_proto_init(&m, RDZV_OP_HELLO);
	m.version = c->key != NULL ? RDZV_PROTO_VERSION_AUTH :
	    RDZV_PROTO_VERSION;
	c10d_send(c, &m);
	if (c->key == NULL) {
		c10d_link(c, L_UP);
		c10d_join(c);
		return;
	}
	event_del(c->keepalive);	/* nothing but AUTH before the proof */
}

/* JOIN (after HELLO, or after AUTH), keep-alives, resume. */
static void
c10d_join(struct c10d *c)
{
	struct rdzv_msg m;
	struct timeval tv = { c->conf.keepalive_ms / 1000,
	    (c->conf.keepalive_ms % 1000) * 1000 };

	rdzv_proto_init(&m, RDZV_OP_JOIN);
	snprintf(m.run_id, sizeof(m.run_id), "%s", c->run_id);
	snprintf(m.host, sizeof(m.host), "%s", c->me);
	m.pid = (uint32_t)getpid();
	m.nproc = (uint32_t)c->cfg.nproc;
	m.node_rank = RDZV_NO_NODE_RANK;	/* c10d ignores it, as torchrun */
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
	event_add(c->keepalive, &tv);
	if (c->state == C_CONNECTING) {
		c10d_enter(c, C_JOINING);
		return;
	}
	c10d_resent(c);
}

/* " within N s (read_timeout)": how long connecting is tried. */
static const char *
c10d_timeout_text(const struct c10d *c)
{
	static char buf[96];

	snprintf(buf, sizeof(buf), " within %.1f s (%s)",
	    c->connect_ms / 1000.0, c->connect_ms == c->conf.read_ms ?
	    "read_timeout" : "join_timeout");
	return buf;
}

/* The first failed connection attempt: say that (and how long) we retry,
 * once, so an unreachable endpoint is never silent. */
static void
c10d_connect_warn(struct c10d *c, short what)
{
	if (c->connect_warned++)
		return;
	log_warnx("rendezvous %s: cannot reach the endpoint %s:%d%s%s; "
	    "retrying, giving up if not connected%s", c->run_id, c->host,
	    c->port, (what & BEV_EVENT_ERROR) && errno ? ": " : "",
	    (what & BEV_EVENT_ERROR) && errno ? strerror(errno) : "",
	    c10d_timeout_text(c));
}

/*
 * TCP's simultaneous open: a connect to a local port nobody listens on
 * that the kernel gave the socket itself as its source port succeeds,
 * connected to itself (more likely the faster the retries sweep the
 * ephemeral range); it also holds the port the hosting agent wants.
 */
static int
c10d_self_connected(const struct c10d *c)
{
	struct sockaddr_storage a, b;
	socklen_t la = sizeof(a), lb = sizeof(b);
	int fd = bufferevent_getfd(c->bev);

	return getsockname(fd, (struct sockaddr *)&a, &la) == 0 &&
	    getpeername(fd, (struct sockaddr *)&b, &lb) == 0 && la == lb &&
	    memcmp(&a, &b, la) == 0;
}

/* Connection events: connected, refused (retry), lost. */
static void
c10d_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct c10d *c = arg;
	struct timeval tv;
	char why[512];
	int joined;

	if ((what & BEV_EVENT_CONNECTED) && c10d_self_connected(c)) {
		log_info("c10d: connected to itself (%s:%d is not listening "
		    "and was this socket's own port); retrying", c->host,
		    c->port);
		what = BEV_EVENT_ERROR;
	} else if (what & BEV_EVENT_CONNECTED) {
		log_info("c10d: connected to %s:%d", c->host, c->port);
		bufferevent_set_timeouts(bev, NULL, NULL);
		c10d_hello(c);
		return;
	}
	if (what & BEV_EVENT_TIMEOUT) {	/* a connect that hangs (no RST) */
		what |= BEV_EVENT_ERROR;
		errno = ETIMEDOUT;
	}
	if (!(what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)))
		return;
	joined = c->link == L_PROOF || c->link == L_UP;
	c10d_link(c, L_DOWN);
	if (joined && c->state != C_CONNECTING && c->state != C_OVER) {
		/* Lost after joining: the server keeps our place for the
		 * keep-alive window; try to get back within it. */
		c->resume_deadline = c10d_after(c->conf.keepalive_ms *
		    c->conf.keepalive_max);
		log_warnx("rendezvous %s: lost the connection to %s:%d; "
		    "reconnecting for up to %u ms", c->run_id, c->host, c->port,
		    c->conf.keepalive_ms * c->conf.keepalive_max);
	}
	if (c->state == C_CONNECTING && !c10d_passed(&c->connect_deadline))
		c10d_connect_warn(c, what);
	if ((c->state == C_CONNECTING && !c10d_passed(&c->connect_deadline)) ||
	    (c10d_resuming(c) && !c10d_passed(&c->resume_deadline))) {
		bufferevent_free(c->bev);
		c->bev = NULL;
		tv = c10d_backoff(c);
		evtimer_add(c->retry, &tv);
		return;
	}
	snprintf(why, sizeof(why), "%s rendezvous endpoint %s:%d%s%s%s",
	    c->state == C_CONNECTING ? "cannot reach the" :
	    "lost the connection to the", c->host, c->port,
	    c->state == C_CONNECTING ? c10d_timeout_text(c) : "",
	    (what & BEV_EVENT_ERROR) && errno ? ": " : "",
	    (what & BEV_EVENT_ERROR) && errno ? strerror(errno) : "");
	c10d_over(c, CGRUN_EXIT_RDZV, why);
}

/* Retry timer. */
static void
c10d_retry_cb(evutil_socket_t fd, short what, void *arg)
{
	c10d_connect(arg);
}

/* Keep-alive timer. */
static void
c10d_keepalive_cb(evutil_socket_t fd, short what, void *arg)
{
	c10d_say(arg, RDZV_OP_KEEPALIVE);
}

/*
 * Small frames go out at once; and a link that is cut (no RST ever comes)
 * must not leave this agent waiting for TCP's 15-minute retransmission
 * limit: keep-alives left unacknowledged for the keep-alive window abort
 * the connection, as the server declares us dead after the same window.
 */
static void
c10d_sockopts(struct c10d *c, int fd)
{
	unsigned int ms = c->conf.keepalive_ms * c->conf.keepalive_max;
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &ms, sizeof(ms));
}

/* A connect hanging (SYNs dropped) ends at the connect deadline: libevent
 * applies the write timeout to a pending connect (cleared once up). */
static void
c10d_connect_timeout(struct c10d *c)
{
	struct timespec now;
	struct timeval tv = { 0, C10D_RETRY_MAX_MS * 1000 };
	long long ms;

	if (c->state != C_CONNECTING)
		return;	/* resuming: TCP_USER_TIMEOUT bounds it */
	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (long long)(c->connect_deadline.tv_sec - now.tv_sec) * 1000 +
	    (c->connect_deadline.tv_nsec - now.tv_nsec) / 1000000;
	if (ms > C10D_RETRY_MAX_MS) {
		tv.tv_sec = (time_t)(ms / 1000);
		tv.tv_usec = (suseconds_t)(ms % 1000) * 1000;
	}
	bufferevent_set_timeouts(c->bev, NULL, &tv);
}

/* Start one connection attempt to the endpoint. */
static void
c10d_connect(struct c10d *c)
{
	struct addrinfo hints, *res;
	char port[16];
	int fd, rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	snprintf(port, sizeof(port), "%d", c->port);
	if ((rc = getaddrinfo(c->host, port, &hints, &res)) != 0) {
		char why[512];

		snprintf(why, sizeof(why), "rendezvous endpoint %s: %s",
		    c->host, gai_strerror(rc));
		c10d_over(c, CGRUN_EXIT_RDZV, why);
		return;
	}
	fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0);
	if (fd == -1 || (c->bev = bufferevent_socket_new(c->hdr.base, fd,
	    BEV_OPT_CLOSE_ON_FREE)) == NULL) {
		if (fd != -1)
			close(fd);
		freeaddrinfo(res);
		c10d_over(c, CGRUN_EXIT_INTERNAL, "cannot create a socket");
		return;
	}
	c10d_sockopts(c, fd);
	c10d_link(c, L_CONNECTING);
	c10d_connect_timeout(c);
	bufferevent_setcb(c->bev, c10d_read_cb, NULL, c10d_event_cb, c);
	bufferevent_enable(c->bev, EV_READ | EV_WRITE);
	if (bufferevent_socket_connect(c->bev, res->ai_addr,
	    (int)res->ai_addrlen) == -1)
		c10d_event_cb(c->bev, BEV_EVENT_ERROR, c);
	freeaddrinfo(res);
}

/* ops->start: host if we are the endpoint, then connect and join. */
static int
c10d_start(struct backend *b, char *err, size_t errlen)
{
	struct c10d *c = (struct c10d *)b;

	c->hosted = c10d_host_new(b->base, c->host, c->port, c->conf.is_host,
	    c->key);
	/* connecting is bounded by read_timeout, and by join_timeout too:
	 * a join that cannot even connect cannot take longer than a join */
	c->connect_ms = c->conf.read_ms < c->conf.join_ms ? c->conf.read_ms :
	    c->conf.join_ms;
	c->connect_deadline = c10d_after(c->connect_ms);
	c10d_connect(c);
	return 0;
}

/* ops->workers_failed: the server decides (restart or end). */
static void
c10d_workers_failed(struct backend *b, const char *why)
{
	struct c10d *c = (struct c10d *)b;
	struct rdzv_msg m;

	if (c->state == C_STOPPING) {	/* stopped on a RESTART anyway */
		c10d_say(c, RDZV_OP_STOPPED);
		c10d_enter(c, C_JOINING);
		return;
	}
	rdzv_proto_init(&m, RDZV_OP_FAILED);
	snprintf(m.text, sizeof(m.text), "%s", why ? why : "");
	snprintf(c->failed_why, sizeof(c->failed_why), "%s", m.text);
	c10d_send(c, &m);
	c10d_enter(c, C_FAILED);
}

/* ops->workers_stopped: join the next round. */
static void
c10d_workers_stopped(struct backend *b)
{
	struct c10d *c = (struct c10d *)b;

	c10d_say(c, RDZV_OP_STOPPED);
	c10d_enter(c, C_JOINING);
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

	c10d_say(c, RDZV_OP_DONE);
	c10d_enter(c, C_DONE);
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
	const struct cgrun_options *o = cfg->opts;
	struct c10d *c;

	if (o->rdzv_id == NULL || o->rdzv_id[0] == '\0') {
		snprintf(err, errlen, "multi-node jobs need --rdzv-id (or a "
		    "batch system job id)");
		return NULL;
	}
	if (strlen(o->rdzv_id) > RDZV_RUNID_MAX) {
		snprintf(err, errlen, "--rdzv-id: longer than %d bytes",
		    RDZV_RUNID_MAX);
		return NULL;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	c->hdr.ops = &c10d_ops;
	c->hdr.cb = *cb;
	c->hdr.base = base;
	c->cfg = *cfg;
	snprintf(c->run_id, sizeof(c->run_id), "%s", o->rdzv_id);
	if (c10d_conf_parse(o->rdzv_conf, &c->conf, err, errlen) == -1) {
		free(c);
		return NULL;
	}
	if (endpoint_parse(o->rdzv_endpoint, c->host, sizeof(c->host),
	    &c->port, C10D_DEFAULT_PORT) == -1) {
		snprintf(err, errlen, "--rdzv-endpoint %s: expected HOST[:PORT] "
		    "(IPv6: [ADDR]:PORT), the port a number in 1-65535",
		    o->rdzv_endpoint ? o->rdzv_endpoint : "(none given)");
		free(c);
		return NULL;
	}
	if (o->auth_token_file != NULL && ((c->key = malloc(sizeof(*c->key)))
	    == NULL || auth_key_load(c->key, o->auth_token_file, err, errlen)
	    == -1)) {
		if (c->key == NULL)
			snprintf(err, errlen, "out of memory");
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
		snprintf(err, errlen, "out of memory");
		c10d_free(&c->hdr);
		return NULL;
	}
	return &c->hdr;
}

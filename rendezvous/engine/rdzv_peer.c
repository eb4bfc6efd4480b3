/*
 * rdzv_peer.c: a peer session, one connection of an agent to the engine
 * (rdzv_impl.h): the versioned HELLO, the optional CHALLENGE/AUTH
 * handshake, the optional RESUME (what the agent carries from its last
 * round, carry.c), JOIN (a new node, or a known node resuming), then the
 * node's events into its job's decision table.  A peer's state changes
 * only in peer_enter().
 */
#include <sys/queue.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "auth.h"
#include "log.h"
#include "rdzv.h"
#include "rdzv_impl.h"

static const char *const peer_state_names[] = {
	"HELLO", "AUTH", "READY", "JOINED", "GONE"
};

_Static_assert(sizeof(peer_state_names) / sizeof(peer_state_names[0]) ==
    PEER__COUNT, "peer_state_names does not match enum rdzv_pstate");

/* Move a peer to state s, logging `old -> new`; the only place p->state
 * changes. */
static void
peer_enter(struct rdzv_peer *p, enum rdzv_pstate s)
{
	if (p->state == s)
		return;
	if (p->node != NULL)
		log_debug("rdzv peer=%llu job=%s node=%s:%u %s -> %s",
		    (unsigned long long)p->id, p->node->job->run_id,
		    p->node->host, p->node->pid, peer_state_names[p->state],
		    peer_state_names[s]);
	else
		log_debug("rdzv peer=%llu %s -> %s", (unsigned long long)p->id,
		    peer_state_names[p->state], peer_state_names[s]);
	p->state = s;
}

/* Bind the peer to its node (a JOIN, or a node resuming). */
void
peer_attach(struct rdzv_peer *p, struct node *n)
{
	p->node = n;
	peer_enter(p, PEER_JOINED);
}

/* The peer's node was removed (dead, left, or its job is over). */
void
peer_detach(struct rdzv_peer *p)
{
	peer_enter(p, PEER_READY);
	p->node = NULL;
}

static int peer_error(struct rdzv_peer *, const char *, ...)
    __attribute__((format(printf, 2, 3)));

/* Reply ERROR to a peer; always -1 (the caller closes it). */
static int
peer_error(struct rdzv_peer *p, const char *fmt, ...)
{
	struct rdzv_msg m;
	va_list ap;

	rdzv_proto_init(&m, RDZV_OP_ERROR);
	va_start(ap, fmt);
	vsnprintf(m.text, sizeof(m.text), fmt, ap);
	va_end(ap);
	log_info("rdzv peer error: %s", m.text);
	p->r->io.send(p->conn, &m, p->r->arg);
	return -1;
}

/* Check a JOIN's parameters; NULL, or what is wrong. */
static const char *
peer_join_invalid(const struct rdzv_msg *m)
{
	if (m->run_id[0] == '\0')
		return "empty run id";
	if (m->min_nodes < 1 || m->min_nodes > m->max_nodes)
		return "nodes must be 1 <= MIN <= MAX";
	if (m->nproc < 1)
		return "nproc must be at least 1";
	if (m->keepalive_ms < 1 || m->keepalive_max < 1)
		return "keep-alive interval and attempts must be positive";
	if (m->addr[0] == '\0' || m->port == 0)
		return "no job store address";
	return NULL;
}

/*
 * A known node comes back on a new connection within its keep-alive
 * window: it takes up where it was; the report it carried (RESUME) goes
 * through the job's table if it is about its current round, else it
 * hears again what it may have missed (its ROUND, a RESTART, the round's
 * progress, or the job's end).
 */
static int
peer_resume(struct rdzv_peer *p, struct node *n)
{
	struct job *j = n->job;
	struct carry *k = p->carry;
	struct rdzv_msg m;

	if (n->peer != NULL)
		return peer_error(p, "node %s (pid %u) is already joined on "
		    "another connection", n->host, n->pid);
	node_set_peer(n, p);
	p->carry = NULL;
	peer_attach(p, n);
	node_alive(n);
	job_bound_orphan_check(j);
	log_info("rdzv job=%s node=%s:%u resumed on a new connection",
	    j->run_id, n->host, n->pid);
	if (j->end != NULL) {	/* it ended while the node was away */
		free(k);
		node_send(n, j->end);
		return 0;
	}
	if (k != NULL && carry_resumed(j, n, k))
		return 0;
	switch (n->state) {
	case RDZV_N_ACTIVE:
	case RDZV_N_DONE:
	case RDZV_N_FAILED:	/* a member whose failure ended the job */
		job_round_to(j, n);
		break;
	case RDZV_N_STOPPING:
		rdzv_proto_init(&m, RDZV_OP_RESTART);
		m.round = j->round;
		snprintf(m.text, sizeof(m.text), "a new round is being formed");
		node_send(n, &m);
		break;
	default:
		job_status_to(j, n);
		break;
	}
	return 0;
}

/*
 * Whether a JOIN for an existing job j is another job's: the nodes range
 * or max_restarts differ from those j was created with (the same job's
 * agents share one command line).  Refused with FAIL(5) naming the job
 * that holds the id, so two runs that reuse an id do not merge (the
 * newcomer would otherwise wait as a spare and never run).  The peer
 * stays READY; the client closes.
 */
static int
peer_join_conflict(struct rdzv_peer *p, const struct job *j,
    const struct rdzv_msg *m)
{
	const struct node *first = TAILQ_FIRST(&j->nodes);
	struct rdzv_msg f;

	if (j->min == m->min_nodes && j->max == m->max_nodes &&
	    j->max_restarts == m->max_restarts)
		return 0;
	log_warnx("rdzv job=%s refused node=%s: asks nodes=%u:%u "
	    "max_restarts=%u; the job has nodes=%u:%u max_restarts=%u",
	    j->run_id, m->host, m->min_nodes, m->max_nodes, m->max_restarts,
	    j->min, j->max, j->max_restarts);
	rdzv_proto_init(&f, RDZV_OP_FAIL);
	f.reason = RDZV_FAIL_IN_USE;
	snprintf(f.text, sizeof(f.text), "rendezvous id %s is in use by "
	    "another job (nnodes %u:%u, max_restarts %u, %zu node(s), "
	    "first %s, round %u); this one asks nnodes %u:%u, max_restarts "
	    "%u: give each job its own --rdzv-id", j->run_id, j->min, j->max,
	    j->max_restarts, j->nnodes, first != NULL ? first->host : "-",
	    j->round, m->min_nodes, m->max_nodes, m->max_restarts);
	p->r->io.send(p->conn, &f, p->r->arg);
	return 1;
}

/* JOIN: find or create the job, add the node. */
static int
peer_join(struct rdzv_peer *p, const struct rdzv_msg *m)
{
	char owner[RDZV_ADDR_MAX + 1], why[RDZV_TEXT_MAX + 1];
	const char *bad;
	struct job *j;
	struct node *n;

	if (p->state == PEER_JOINED)
		return peer_error(p, "%s", "JOIN twice on one connection");
	if ((bad = peer_join_invalid(m)) != NULL)
		return peer_error(p, "bad JOIN: %s", bad);
	if ((j = job_find(p->r, m->run_id)) != NULL &&
	    (n = node_find(j, m)) != NULL)
		return peer_resume(p, n);
	if (j != NULL && peer_join_conflict(p, j, m))
		return 0;
	if (j == NULL && job_bound_admit(p, owner, sizeof owner, why,
	    sizeof why) != NULL)
		return peer_error(p, "%s", why);
	if (j == NULL) {
		if ((j = job_new(p->r, m)) == NULL)
			return peer_error(p, "%s", "out of memory");
		snprintf(j->owner, sizeof j->owner, "%s", owner);
	}
	if ((n = node_new(j, p, m)) == NULL) {
		if (j->nnodes == 0)
			job_free(j);
		return peer_error(p, "%s", "out of memory");
	}
	log_debug("rdzv job=%s join node=%s:%u nproc=%u store=%s:%u",
	    j->run_id, n->host, n->pid, n->nproc, n->addr, n->port);
	if (p->carry != NULL) {
		carry_join(j, n, p->carry);
		p->carry = NULL;
	}
	job_bound_orphan_check(j);
	job_dispatch(j, JOB_JOIN, n);
	return 0;
}

/* RESUME (version 4): kept until the JOIN that follows it. */
static int
peer_carry(struct rdzv_peer *p, const struct rdzv_msg *m)
{
	if (p->state != PEER_READY)
		return peer_error(p, "%s", "RESUME after JOIN");
	if (p->carry != NULL)
		return peer_error(p, "%s", "RESUME twice");
	if ((p->carry = carry_new(m)) == NULL)
		return peer_error(p, "%s", "out of memory");
	return 0;
}

/* Accept the peer: WELCOME with the version this server speaks (4: the
 * client's, 1 or 2, SPENT and RESUME). */
static int
peer_welcome(struct rdzv_peer *p, uint16_t version)
{
	struct rdzv_msg w;

	peer_enter(p, PEER_READY);
	rdzv_proto_init(&w, RDZV_OP_WELCOME);
	w.version = version;
	p->r->io.send(p->conn, &w, p->r->arg);
	return 0;
}

/* The first frame: HELLO 1 without a token, HELLO 2 (CHALLENGE) with. */
static int
peer_hello(struct rdzv_peer *p, const struct rdzv_msg *m)
{
	struct rdzv_msg c;

	if (m->op != RDZV_OP_HELLO)
		return peer_error(p, "%s", "HELLO expected first");
	if (m->version != RDZV_PROTO_VERSION &&
	    m->version != RDZV_PROTO_VERSION_AUTH)
		return peer_error(p, "%s", "unsupported protocol "
		    "version (this server speaks 1 and 2)");
	if (p->r->key == NULL && m->version == RDZV_PROTO_VERSION_AUTH)
		return peer_error(p, "%s", "authentication refused: this "
		    "server has no --auth-token-file");
	if (p->r->key == NULL)
		return peer_welcome(p, RDZV_PROTO_VERSION_RESUME);
	if (m->version != RDZV_PROTO_VERSION_AUTH) {
		log_warnx("rdzv: refused a client without authentication");
		return peer_error(p, "%s", "authentication required: this "
		    "server needs --auth-token-file");
	}
	if (auth_nonce(p->snonce) == -1)
		return peer_error(p, "%s", "no random nonce");
	peer_enter(p, PEER_AUTH);
	rdzv_proto_init(&c, RDZV_OP_CHALLENGE);
	memcpy(c.nonce, p->snonce, sizeof p->snonce);
	p->r->io.send(p->conn, &c, p->r->arg);
	return 0;
}

/* AUTH: check the client's proof, prove ourselves, WELCOME. */
static int
peer_auth(struct rdzv_peer *p, const struct rdzv_msg *m)
{
	struct rdzv_msg a;

	if (m->op != RDZV_OP_AUTH)
		return peer_error(p, "authentication required before %s",
		    rdzv_proto_opname(m->op));
	if (!auth_verify(p->r->key, AUTH_ROLE_CLIENT, p->snonce, m->nonce,
	    m->proof)) {
		log_warnx("rdzv: authentication failed (wrong token)");
		p->r->stats.auth_failures++;
		return peer_error(p, "%s", "authentication failed: wrong "
		    "auth token");
	}
	rdzv_proto_init(&a, RDZV_OP_AUTHOK);
	if (auth_proof(p->r->key, AUTH_ROLE_SERVER, p->snonce, m->nonce,
	    a.proof) == -1)
		return peer_error(p, "%s", "bad client nonce");
	p->r->io.send(p->conn, &a, p->r->arg);
	return peer_welcome(p, RDZV_PROTO_VERSION_RESUME);
}

/* One message from a peer: the HELLO check, then node events. */
int
rdzv_peer_msg(struct rdzv_peer *p, const struct rdzv_msg *m)
{
	static const enum node_event node_ev[] = {
	    [RDZV_OP_FAILED - 0x80] = NODE_FAILED,
	    [RDZV_OP_STOPPED - 0x80] = NODE_STOPPED,
	    [RDZV_OP_DONE - 0x80] = NODE_DONE,
	    [RDZV_OP_LEAVE - 0x80] = NODE_GONE };

	if (p->state == PEER_HELLO)
		return peer_hello(p, m);
	if (p->state == PEER_AUTH)
		return peer_auth(p, m);
	switch (m->op) {
	case RDZV_OP_JOIN:
		return peer_join(p, m);
	case RDZV_OP_KEEPALIVE:
	case RDZV_OP_FAILED:
	case RDZV_OP_STOPPED:
	case RDZV_OP_DONE:
	case RDZV_OP_LEAVE:
		if (p->state != PEER_JOINED)
			return peer_error(p, "%s before JOIN",
			    rdzv_proto_opname(m->op));
		node_alive(p->node);
		if (m->op == RDZV_OP_FAILED)	/* why, for the other nodes */
			snprintf(p->node->failed_why,
			    sizeof(p->node->failed_why), "%s", m->text);
		if (m->op != RDZV_OP_KEEPALIVE)
			job_dispatch_node(p->node, node_ev[m->op - 0x80]);
		return 0;
	case RDZV_OP_RESUME:
		return peer_carry(p, m);
	case RDZV_OP_SPENT:
		if (p->state != PEER_JOINED)
			return peer_error(p, "%s", "SPENT before JOIN");
		node_alive(p->node);
		job_spent(p->node->job, p->node, m->restart_count);
		return 0;
	default:
		return peer_error(p, "unexpected %s from a client",
		    rdzv_proto_opname(m->op));
	}
}

/* Decode and handle every complete frame buffered from the peer. */
int
rdzv_peer_input(struct rdzv_peer *p, struct evbuffer *in)
{
	struct rdzv_msg m;
	char why[RDZV_PROTO_ERRLEN];
	size_t len, used;
	unsigned char *b;
	int rc;

	while ((len = evbuffer_get_length(in)) > 0) {
		if (len > 4 + RDZV_FRAME_MAX)
			len = 4 + RDZV_FRAME_MAX;
		if ((b = evbuffer_pullup(in, (ssize_t)len)) == NULL)
			return -1;
		rc = rdzv_proto_decode(b, len, &m, &used, why, sizeof(why));
		if (rc == RDZV_PROTO_MORE)
			return 0;
		if (rc == RDZV_PROTO_ERROR)
			return peer_error(p, "bad frame: %s", why);
		evbuffer_drain(in, used);
		if (rdzv_peer_msg(p, &m) == -1)
			return -1;
	}
	return 0;
}

/* A new connection. */
struct rdzv_peer *
rdzv_peer_new(struct rdzv *r, void *conn)
{
	struct rdzv_peer *p;

	if ((p = calloc(1, sizeof(*p))) == NULL)
		return NULL;
	p->r = r;
	p->conn = conn;
	p->id = ++r->npeers;
	p->state = PEER_HELLO;
	return p;
}

/* The connection is gone: its node waits out the keep-alive window (or
 * goes at once if its job is over). */
void
rdzv_peer_gone(struct rdzv_peer *p)
{
	struct node *n;

	if (p == NULL)
		return;
	if ((n = p->node) != NULL) {
		node_set_peer(n, NULL);
		log_info("rdzv job=%s node=%s:%u connection lost", n->job->run_id,
		    n->host, n->pid);
	}
	peer_enter(p, PEER_GONE);
	p->node = NULL;
	free(p->carry);
	/* After the peer lets go: the dispatch may free the node. */
	if (n != NULL && n->job->state == RDZV_J_CLOSED)
		job_dispatch_node(n, NODE_GONE);
	else if (n != NULL)
		job_bound_orphan_check(n->job);
	free(p);
}

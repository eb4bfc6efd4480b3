/*
 * test_rdzv.c: the rendezvous engine as a state machine, driven through
 * fake connections that record what the engine sends: round decisions,
 * group ranks and rank offsets, spares, scale-up, the restart budget,
 * keep-alive deaths, MIN, join timeout, job separation, protocol errors;
 * the job tables (no hole; an ignored message logged with its reason; a
 * node left behind by a round taken in later); and what agents carry onto
 * a new connection (RESUME, carry.c): to a server that forgot the job
 * (their round goes on, or a new one follows it, spending a restart for a
 * carried failure) and to one that knows them (a report about another
 * round is stale).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "log.h"
#include "rdzv.h"
#include "helper_main.h"

#define MAXMSG 64

struct fconn {
	struct rdzv_peer *peer;
	struct rdzv_msg	 msgs[MAXMSG];
	int		 n;
};

static struct event_base *base;
static struct rdzv *eng;
/* Fakes not yet freed by bye(): teardown frees them (clean under LSan). */
static struct fconn *live[MAXMSG];
static int nlive;
static void bye(struct fconn *);

/* Fake transport: record the message. */
static void
fake_send(void *conn, const struct rdzv_msg *m, void *arg)
{
	struct fconn *c = conn;

	ck_assert_int_lt(c->n, MAXMSG);
	c->msgs[c->n++] = *m;
}

static const struct rdzv_io fake_io = { fake_send, NULL };

/* A fresh engine per test. */
static void
setup(void)
{
	base = event_base_new();
	eng = rdzv_new(base, &fake_io, NULL);
}

/* Free it. */
static void
teardown(void)
{
	while (nlive > 0)
		bye(live[0]);
	rdzv_free(eng);
	event_base_free(base);
}

/* The last message of op sent to c, or NULL. */
static const struct rdzv_msg *
last(const struct fconn *c, uint8_t op)
{
	int i;

	for (i = c->n - 1; i >= 0; i--)
		if (c->msgs[i].op == op)
			return &c->msgs[i];
	return NULL;
}

static const struct rdzv_msg nomsg;

/* The last message of op sent to c; the test fails without one. */
static const struct rdzv_msg *
got(const struct fconn *c, uint8_t op)
{
	const struct rdzv_msg *m = last(c, op);

	ck_assert_msg(m != NULL, "no %s received", rdzv_proto_opname(op));
	return m != NULL ? m : &nomsg;
}

/* Send a bodyless op from c. */
static int
say(struct fconn *c, uint8_t op)
{
	struct rdzv_msg m;

	rdzv_proto_init(&m, op);
	return rdzv_peer_msg(c->peer, &m);
}

struct jopt {
	const char *run_id;
	uint32_t min, max, restarts, nproc, last_call_ms, ka_ms, join_ms;
	int node_rank;
};

static struct fconn *join_rc(const char *, const struct jopt *, int *);

/* What a node carries in RESUME (test_rdzv's nodes have nproc 2, their
 * own host as store address, port 29500). */
struct kopt {
	uint32_t round, restarts, gws;
	int group_rank;
	uint8_t workers;
	const char *store;	/* group rank 0's host */
};
static struct fconn *rejoin(const char *, const struct jopt *,
	    const struct kopt *);

/* Connect, HELLO and JOIN as host; the JOIN must be accepted. */
static struct fconn *
join(const char *host, const struct jopt *o)
{
	int rc;
	struct fconn *c = join_rc(host, o, &rc);

	ck_assert_int_eq(rc, 0);
	return c;
}

static void join_msg(struct rdzv_msg *, const char *, const struct jopt *);

/* Connect, HELLO and JOIN as host; *rc: rdzv_peer_msg's for the JOIN. */
static struct fconn *
join_rc(const char *host, const struct jopt *o, int *rc)
{
	struct fconn *c = calloc(1, sizeof(*c));
	struct rdzv_msg m;

	ck_assert_int_lt(nlive, MAXMSG);
	live[nlive++] = c;
	c->peer = rdzv_peer_new(eng, c);
	rdzv_proto_init(&m, RDZV_OP_HELLO);
	m.version = RDZV_PROTO_VERSION;
	ck_assert_int_eq(rdzv_peer_msg(c->peer, &m), 0);
	ck_assert_int_eq(c->msgs[0].op, RDZV_OP_WELCOME);
	join_msg(&m, host, o);
	*rc = rdzv_peer_msg(c->peer, &m);
	return c;
}

/* Connect, HELLO, RESUME (what k says) and JOIN as host (accepted). */
static struct fconn *
rejoin(const char *host, const struct jopt *o, const struct kopt *k)
{
	struct fconn *c = calloc(1, sizeof(*c));
	struct rdzv_msg m;

	ck_assert_int_lt(nlive, MAXMSG);
	live[nlive++] = c;
	c->peer = rdzv_peer_new(eng, c);
	rdzv_proto_init(&m, RDZV_OP_HELLO);
	m.version = RDZV_PROTO_VERSION;
	ck_assert_int_eq(rdzv_peer_msg(c->peer, &m), 0);
	ck_assert_uint_eq(c->msgs[0].version, RDZV_PROTO_VERSION_RESUME);
	rdzv_proto_init(&m, RDZV_OP_RESUME);
	m.round = k->round;
	m.restart_count = k->restarts;
	m.group_rank = k->group_rank;
	m.group_world_size = k->gws ? k->gws : 2;
	m.rank_base = (uint32_t)k->group_rank * 2;
	m.world_size = m.group_world_size * 2;
	snprintf(m.addr, sizeof(m.addr), "%s", k->store ? k->store : "a");
	m.port = 29500;
	m.workers = k->workers;
	if (k->workers == RDZV_WORKERS_FAILED)
		snprintf(m.text, sizeof(m.text), "rank %d exited 13",
		    (int)m.rank_base + 1);
	ck_assert_int_eq(rdzv_peer_msg(c->peer, &m), 0);
	join_msg(&m, host, o);
	ck_assert_int_eq(rdzv_peer_msg(c->peer, &m), 0);
	return c;
}

/* The JOIN of host with o's parameters. */
static void
join_msg(struct rdzv_msg *mp, const char *host, const struct jopt *o)
{
	struct rdzv_msg m;

	rdzv_proto_init(&m, RDZV_OP_JOIN);
	strcpy(m.run_id, o->run_id ? o->run_id : "job7");
	strcpy(m.host, host);
	m.pid = 100;
	m.nproc = o->nproc ? o->nproc : 2;
	m.node_rank = o->node_rank;
	m.min_nodes = o->min;
	m.max_nodes = o->max;
	m.max_restarts = o->restarts;
	m.join_timeout_ms = o->join_ms ? o->join_ms : 60000;
	m.last_call_ms = o->last_call_ms ? o->last_call_ms : 60000;
	m.close_ms = 1000;
	m.keepalive_ms = o->ka_ms ? o->ka_ms : 60000;
	m.keepalive_max = 2;
	strcpy(m.addr, host);
	m.port = 29500;
	*mp = m;
}

/* Drop the connection (as a killed agent would). */
static void
drop(struct fconn *c)
{
	rdzv_peer_gone(c->peer);
	c->peer = NULL;
}

/* Close c's connection (if still open) and free the fake. */
static void
bye(struct fconn *c)
{
	int i;

	for (i = 0; i < nlive; i++)
		if (live[i] == c)
			live[i] = live[--nlive];
	if (c->peer != NULL)
		rdzv_peer_gone(c->peer);
	free(c);
}

/* Run the loop until c got op, at most ms milliseconds. */
static const struct rdzv_msg *
wait_for(struct fconn *c, uint8_t op, int ms)
{
	struct timeval tv = { 0, 5000 };
	int waited = 0;

	while (last(c, op) == NULL && waited < ms) {
		event_base_loopexit(base, &tv);
		event_base_dispatch(base);
		waited += 5;
	}
	return last(c, op);
}

/* Run the loop until c got a ROUND of round r, at most ms milliseconds. */
static const struct rdzv_msg *
wait_round(struct fconn *c, uint32_t r, int ms)
{
	struct timeval tv = { 0, 5000 };
	const struct rdzv_msg *m;
	int waited = 0;

	while (((m = last(c, RDZV_OP_ROUND)) == NULL || m->round != r) &&
	    waited < ms) {
		event_base_loopexit(base, &tv);
		event_base_dispatch(base);
		waited += 5;
	}
	return m != NULL && m->round == r ? m : NULL;
}

START_TEST(two_nodes_ranks_sorted_by_host)
{
	struct jopt o = { .min = 2, .max = 2, .node_rank = -1, .nproc = 3 };
	struct fconn *b = join("node-b", &o), *a;
	const struct rdzv_msg *ra, *rb;

	ck_assert_ptr_null(last(b, RDZV_OP_ROUND));
	ck_assert_ptr_nonnull(last(b, RDZV_OP_STATUS));
	o.nproc = 5;	/* heterogeneous --nproc-per-node */
	a = join("node-a", &o);
	ra = last(a, RDZV_OP_ROUND);
	rb = last(b, RDZV_OP_ROUND);
	ck_assert_ptr_nonnull(ra);
	ck_assert_ptr_nonnull(rb);
	ck_assert_int_eq(ra->group_rank, 0);
	ck_assert_int_eq(rb->group_rank, 1);
	ck_assert_uint_eq(ra->group_world_size, 2);
	ck_assert_uint_eq(ra->rank_base, 0);
	ck_assert_uint_eq(rb->rank_base, 5);
	ck_assert_uint_eq(ra->world_size, 8);
	ck_assert_uint_eq(rb->world_size, 8);
	ck_assert_str_eq(rb->addr, "node-a");	/* rank 0's job store */
	ck_assert_uint_eq(rb->restart_count, 0);
	bye(a);
	bye(b);
}
END_TEST

START_TEST(node_rank_wins_over_host)
{
	struct jopt o = { .min = 2, .max = 2, .node_rank = 0 };
	struct fconn *z = join("zzz", &o), *a;

	o.node_rank = 1;
	a = join("aaa", &o);
	ck_assert_int_eq(got(z, RDZV_OP_ROUND)->group_rank, 0);
	ck_assert_int_eq(got(a, RDZV_OP_ROUND)->group_rank, 1);
	bye(a);
	bye(z);
}
END_TEST

START_TEST(last_call_closes_round_at_min)
{
	struct jopt o = { .min = 1, .max = 3, .node_rank = -1,
	    .last_call_ms = 50 };
	struct fconn *a = join("a", &o);

	ck_assert_ptr_null(last(a, RDZV_OP_ROUND));
	ck_assert_uint_ne(got(a, RDZV_OP_STATUS)->last_call_ms,
	    RDZV_NO_DEADLINE);
	ck_assert_ptr_nonnull(wait_for(a, RDZV_OP_ROUND, 2000));
	ck_assert_uint_eq(got(a, RDZV_OP_ROUND)->group_world_size, 1);
	bye(a);
}
END_TEST

START_TEST(spare_then_takes_over)
{
	struct jopt o = { .min = 1, .max = 2, .node_rank = -1 };
	struct fconn *a = join("a", &o), *b = join("b", &o), *c;
	struct rdzv_job_info ji;
	const struct rdzv_msg *st;

	c = join("c", &o);
	ck_assert_ptr_nonnull(last(a, RDZV_OP_ROUND));
	ck_assert_ptr_null(last(c, RDZV_OP_ROUND));
	st = got(c, RDZV_OP_STATUS);
	ck_assert_int_eq(st->role, RDZV_ROLE_SPARE);
	ck_assert_uint_eq(st->joined, 2);	/* nodes running */
	/* a leaves: b restarts, c is taken in; no restart is spent. */
	ck_assert_int_eq(say(a, RDZV_OP_LEAVE), 0);
	ck_assert_ptr_nonnull(last(b, RDZV_OP_RESTART));
	ck_assert_int_eq(say(b, RDZV_OP_STOPPED), 0);
	ck_assert_ptr_nonnull(last(c, RDZV_OP_ROUND));
	ck_assert_int_eq(got(b, RDZV_OP_ROUND)->group_rank, 0);
	ck_assert_int_eq(got(c, RDZV_OP_ROUND)->group_rank, 1);
	ck_assert_uint_eq(got(c, RDZV_OP_ROUND)->round, 1);
	ck_assert_uint_eq(got(c, RDZV_OP_ROUND)->restart_count, 0);
	ck_assert_int_eq(rdzv_job_info(eng, "job7", &ji), 0);
	ck_assert_uint_eq(ji.nodes, 2);
	bye(a);
	bye(b);
	bye(c);
}
END_TEST

START_TEST(scale_up_below_max)
{
	struct jopt o = { .min = 2, .max = 3, .node_rank = -1,
	    .last_call_ms = 20 };
	struct fconn *a = join("a", &o), *b = join("b", &o), *c;

	ck_assert_ptr_nonnull(wait_for(a, RDZV_OP_ROUND, 2000));
	ck_assert_uint_eq(got(a, RDZV_OP_ROUND)->group_world_size, 2);
	c = join("c", &o);
	ck_assert_ptr_nonnull(last(a, RDZV_OP_RESTART));
	ck_assert_ptr_nonnull(last(b, RDZV_OP_RESTART));
	ck_assert_int_eq(say(a, RDZV_OP_STOPPED), 0);
	ck_assert_ptr_null(last(c, RDZV_OP_ROUND));
	ck_assert_int_eq(say(b, RDZV_OP_STOPPED), 0);
	ck_assert_uint_eq(got(c, RDZV_OP_ROUND)->group_world_size, 3);
	ck_assert_uint_eq(got(c, RDZV_OP_ROUND)->restart_count, 0);
	bye(a);
	bye(b);
	bye(c);
}
END_TEST

START_TEST(restart_budget_job_wide)
{
	struct jopt o = { .min = 2, .max = 2, .node_rank = -1, .restarts = 1 };
	struct fconn *a = join("a", &o), *b = join("b", &o);
	const struct rdzv_msg *f;

	ck_assert_int_eq(say(b, RDZV_OP_FAILED), 0);
	ck_assert_ptr_nonnull(last(a, RDZV_OP_RESTART));
	ck_assert_int_eq(say(a, RDZV_OP_STOPPED), 0);
	ck_assert_uint_eq(got(a, RDZV_OP_ROUND)->restart_count, 1);
	ck_assert_uint_eq(got(b, RDZV_OP_ROUND)->restart_count, 1);
	ck_assert_uint_eq(got(b, RDZV_OP_ROUND)->round, 1);
	/* Second failure, on the other node: the budget is spent. */
	ck_assert_int_eq(say(a, RDZV_OP_FAILED), 0);
	f = got(b, RDZV_OP_FAIL);
	ck_assert_int_eq(f->reason, RDZV_FAIL_RESTARTS);
	ck_assert_ptr_nonnull(last(a, RDZV_OP_FAIL));
	bye(a);
	bye(b);
}
END_TEST

/* Send SPENT(n) on c; rdzv_peer_msg's result. */
static int
spent(struct fconn *c, uint32_t n)
{
	struct rdzv_msg m;

	rdzv_proto_init(&m, RDZV_OP_SPENT);
	m.restart_count = n;
	return rdzv_peer_msg(c->peer, &m);
}

START_TEST(restart_budget_carried)
{
	struct jopt o = { .min = 2, .max = 2, .node_rank = -1, .restarts = 3 };
	struct fconn *a = join("a", &o), *b = join("b", &o);

	/* A restarted daemon: the agents' job had spent 2 of 3 restarts.
	 * WELCOME(4) takes SPENT still (agents of version 3 send it). */
	ck_assert_int_eq(a->msgs[0].version, RDZV_PROTO_VERSION_RESUME);
	ck_assert_uint_eq(got(a, RDZV_OP_ROUND)->restart_count, 0);
	ck_assert_int_eq(spent(a, 2), 0);
	ck_assert_int_eq(spent(b, 1), 0);	/* never lowers it */
	ck_assert_int_eq(say(b, RDZV_OP_FAILED), 0);
	ck_assert_int_eq(say(a, RDZV_OP_STOPPED), 0);
	ck_assert_uint_eq(got(a, RDZV_OP_ROUND)->restart_count, 3);
	ck_assert_uint_eq(got(b, RDZV_OP_ROUND)->restart_count, 3);
	/* The last one was the third: the next failure ends the job. */
	ck_assert_int_eq(say(a, RDZV_OP_FAILED), 0);
	ck_assert_int_eq(got(b, RDZV_OP_FAIL)->reason, RDZV_FAIL_RESTARTS);
	bye(a);
	bye(b);
}
END_TEST

START_TEST(restart_budget_carry_capped)
{
	struct jopt o = { .min = 1, .max = 1, .node_rank = -1, .restarts = 2 };
	struct fconn *a = join("a", &o);
	struct fconn *x = calloc(1, sizeof(*x));
	struct rdzv_msg m;

	/* More than max counts as max: no restart left, the failure ends it. */
	ck_assert_int_eq(spent(a, 1000), 0);
	ck_assert_int_eq(say(a, RDZV_OP_FAILED), 0);
	ck_assert_int_eq(got(a, RDZV_OP_FAIL)->reason, RDZV_FAIL_RESTARTS);
	/* SPENT before JOIN is a protocol error. */
	x->peer = rdzv_peer_new(eng, x);
	rdzv_proto_init(&m, RDZV_OP_HELLO);
	m.version = RDZV_PROTO_VERSION;
	ck_assert_int_eq(rdzv_peer_msg(x->peer, &m), 0);
	ck_assert_int_eq(spent(x, 1), -1);
	rdzv_peer_gone(x->peer);
	free(x);
	bye(a);
}
END_TEST

/*
 * A restarted server: both agents carry round 3 (2 of 3 restarts spent),
 * their workers running in their places: the server's first round goes
 * on with it (round 3, restart count 2; nobody restarts), and the job
 * ends as before.
 */
START_TEST(carry_round_goes_on)
{
	struct jopt o = { .min = 2, .max = 2, .node_rank = -1, .restarts = 3 };
	struct kopt ka = { .round = 3, .restarts = 2, .group_rank = 0 };
	struct kopt kb = { .round = 3, .restarts = 2, .group_rank = 1 };
	struct fconn *a = rejoin("a", &o, &ka), *b = rejoin("b", &o, &kb);

	ck_assert_uint_eq(got(a, RDZV_OP_ROUND)->round, 3);
	ck_assert_uint_eq(got(a, RDZV_OP_ROUND)->restart_count, 2);
	ck_assert_uint_eq(got(b, RDZV_OP_ROUND)->round, 3);
	ck_assert_int_eq(got(b, RDZV_OP_ROUND)->group_rank, 1);
	ck_assert_int_eq(say(a, RDZV_OP_DONE), 0);
	ck_assert_int_eq(say(b, RDZV_OP_DONE), 0);
	ck_assert_ptr_nonnull(last(a, RDZV_OP_FINISHED));
	bye(a);
	bye(b);
}
END_TEST

/*
 * Issue 24: the daemon restarted while one agent's workers had failed
 * (its FAILED never reached the old daemon): whichever node comes first,
 * the new daemon's first round follows the failed one, with one more
 * restart spent (round 1, restart count 1), and the failure is not
 * heard again as a failure of that round.
 */
START_TEST(carry_failure_spends)
{
	struct jopt o = { .min = 2, .max = 2, .node_rank = -1, .restarts = 3 };
	struct kopt kf = { .round = 0, .group_rank = 0,
	    .workers = RDZV_WORKERS_FAILED };
	struct kopt kr = { .round = 0, .group_rank = 1 };
	struct fconn *a, *b;
	struct rdzv_job_info ji;
	int order;

	for (order = 0; order < 2; order++) {
		o.run_id = order ? "job8" : "job7";
		if (order == 0) {
			a = rejoin("a", &o, &kf);
			b = rejoin("b", &o, &kr);
		} else {
			b = rejoin("b", &o, &kr);
			a = rejoin("a", &o, &kf);
		}
		ck_assert_uint_eq(got(a, RDZV_OP_ROUND)->round, 1);
		ck_assert_uint_eq(got(a, RDZV_OP_ROUND)->restart_count, 1);
		ck_assert_uint_eq(got(b, RDZV_OP_ROUND)->round, 1);
		ck_assert_uint_eq(got(b, RDZV_OP_ROUND)->restart_count, 1);
		ck_assert_ptr_null(last(b, RDZV_OP_RESTART));
		ck_assert_int_eq(rdzv_job_info(eng, o.run_id, &ji), 0);
		ck_assert_int_eq(ji.state, RDZV_J_RUNNING);
		ck_assert_uint_eq(ji.restarts, 1);
		bye(a);
		bye(b);
	}
}
END_TEST

/* A failure carried from the last round when no restart is left: the
 * job fails (FAIL 3) when its first round would be decided. */
START_TEST(carry_failure_no_budget)
{
	struct jopt o = { .min = 2, .max = 2, .node_rank = -1, .restarts = 1 };
	struct kopt kf = { .round = 1, .restarts = 1, .group_rank = 1,
	    .workers = RDZV_WORKERS_FAILED };
	struct kopt kr = { .round = 1, .restarts = 1, .group_rank = 0 };
	struct fconn *b = rejoin("b", &o, &kf), *a = rejoin("a", &o, &kr);

	ck_assert_int_eq(got(a, RDZV_OP_FAIL)->reason, RDZV_FAIL_RESTARTS);
	ck_assert_ptr_nonnull(strstr(got(b, RDZV_OP_FAIL)->text,
	    "rank 3 exited 13"));
	ck_assert_ptr_null(last(a, RDZV_OP_ROUND));
	bye(a);
	bye(b);
}
END_TEST

/*
 * What was carried decides a new round, never an older one: places that
 * differ (the old round had 3 nodes), a failure of an earlier round than
 * another node's (already spent there), one node's part done.
 */
START_TEST(carry_new_round)
{
	struct jopt o = { .min = 2, .max = 3, .node_rank = -1, .restarts = 3,
	    .last_call_ms = 1 };
	struct kopt k3a = { .round = 4, .restarts = 1, .gws = 3 };
	struct kopt k3b = { .round = 4, .restarts = 1, .gws = 3,
	    .group_rank = 1 };
	struct kopt kf = { .round = 4, .restarts = 1, .group_rank = 0,
	    .workers = RDZV_WORKERS_FAILED };
	struct kopt kn = { .round = 5, .restarts = 2, .group_rank = 1 };
	struct kopt kd = { .round = 2, .group_rank = 0,
	    .workers = RDZV_WORKERS_DONE };
	struct kopt kr = { .round = 2, .group_rank = 1 };
	struct fconn *a, *b;

	a = rejoin("a", &o, &k3a);
	b = rejoin("b", &o, &k3b);
	ck_assert_ptr_nonnull(wait_for(b, RDZV_OP_ROUND, 2000));
	ck_assert_uint_eq(got(a, RDZV_OP_ROUND)->round, 5);
	ck_assert_uint_eq(got(a, RDZV_OP_ROUND)->restart_count, 1);
	bye(a);
	bye(b);
	o.run_id = "job8";
	a = rejoin("a", &o, &kf);
	b = rejoin("b", &o, &kn);
	ck_assert_ptr_nonnull(wait_for(b, RDZV_OP_ROUND, 2000));
	ck_assert_uint_eq(got(b, RDZV_OP_ROUND)->round, 6);
	ck_assert_uint_eq(got(b, RDZV_OP_ROUND)->restart_count, 2);
	bye(a);
	bye(b);
	/* round 2 goes on; a's part was done: b's DONE finishes the job */
	o.run_id = "job9";
	o.max = 2;
	a = rejoin("a", &o, &kd);
	b = rejoin("b", &o, &kr);
	ck_assert_uint_eq(got(b, RDZV_OP_ROUND)->round, 2);
	ck_assert_ptr_null(last(a, RDZV_OP_FINISHED));
	ck_assert_int_eq(say(b, RDZV_OP_DONE), 0);
	ck_assert_ptr_nonnull(last(a, RDZV_OP_FINISHED));
	bye(a);
	bye(b);
}
END_TEST

/*
 * A server that knows the node: the report it carries counts only for
 * the node's current round.  b's failure of round 0 (resumed before the
 * server had it) starts round 1; a second resume still carrying round
 * 0's failure, after round 1 was decided, is stale: no restart spent, b
 * hears its round 1 again.
 */
START_TEST(carry_known_node)
{
	struct jopt o = { .min = 2, .max = 2, .node_rank = -1, .restarts = 3 };
	struct kopt kf = { .round = 0, .group_rank = 1,
	    .workers = RDZV_WORKERS_FAILED };
	struct fconn *a = join("a", &o), *b = join("b", &o), *b2, *b3;
	struct rdzv_job_info ji;

	drop(b);
	b2 = rejoin("b", &o, &kf);
	ck_assert_ptr_nonnull(last(a, RDZV_OP_RESTART));
	ck_assert_ptr_null(last(b2, RDZV_OP_ROUND));
	ck_assert_int_eq(say(a, RDZV_OP_STOPPED), 0);
	ck_assert_uint_eq(got(b2, RDZV_OP_ROUND)->round, 1);
	ck_assert_uint_eq(got(b2, RDZV_OP_ROUND)->restart_count, 1);
	a->n = 0;
	drop(b2);
	b3 = rejoin("b", &o, &kf);
	ck_assert_uint_eq(got(b3, RDZV_OP_ROUND)->round, 1);
	ck_assert_ptr_null(last(a, RDZV_OP_RESTART));
	ck_assert_int_eq(rdzv_job_info(eng, "job7", &ji), 0);
	ck_assert_uint_eq(ji.restarts, 1);
	ck_assert_int_eq(ji.state, RDZV_J_RUNNING);
	bye(a);
	bye(b);
	bye(b2);
	bye(b3);
}
END_TEST

/* RESUME belongs between WELCOME and JOIN, once. */
START_TEST(carry_protocol_errors)
{
	struct jopt o = { .min = 2, .max = 2, .node_rank = -1 };
	struct fconn *a = join("a", &o), *x = calloc(1, sizeof(*x));
	struct rdzv_msg m;

	rdzv_proto_init(&m, RDZV_OP_RESUME);
	ck_assert_int_eq(rdzv_peer_msg(a->peer, &m), -1);
	ck_assert_str_eq(got(a, RDZV_OP_ERROR)->text, "RESUME after JOIN");
	x->peer = rdzv_peer_new(eng, x);
	ck_assert_int_eq(rdzv_peer_msg(x->peer, &m), -1);	/* before HELLO */
	rdzv_proto_init(&m, RDZV_OP_HELLO);
	m.version = RDZV_PROTO_VERSION;
	ck_assert_int_eq(rdzv_peer_msg(x->peer, &m), 0);
	rdzv_proto_init(&m, RDZV_OP_RESUME);
	ck_assert_int_eq(rdzv_peer_msg(x->peer, &m), 0);
	ck_assert_int_eq(rdzv_peer_msg(x->peer, &m), -1);
	ck_assert_str_eq(got(x, RDZV_OP_ERROR)->text, "RESUME twice");
	rdzv_peer_gone(x->peer);	/* its RESUME freed with it */
	free(x);
	bye(a);
}
END_TEST

START_TEST(dead_node_by_keepalive)
{
	/*
	 * A keep-alive window of 200 ms against a's and b's keep-alives every
	 * ~50 ms: a loaded machine that stalls this process for a few
	 * scheduler ticks must not make a or b look dead too.
	 */
	struct jopt o = { .min = 2, .max = 3, .node_rank = -1, .ka_ms = 200,
	    .last_call_ms = 10 };
	struct fconn *a = join("a", &o), *b = join("b", &o), *c = join("c", &o);
	struct rdzv_job_info ji;

	ck_assert_ptr_nonnull(last(a, RDZV_OP_ROUND));
	drop(c);	/* c's agent was killed */
	ck_assert_ptr_null(last(a, RDZV_OP_RESTART));
	/* a and b keep sending keep-alives until the round restarts. */
	while (last(a, RDZV_OP_RESTART) == NULL) {
		ck_assert_int_eq(say(a, RDZV_OP_KEEPALIVE), 0);
		ck_assert_int_eq(say(b, RDZV_OP_KEEPALIVE), 0);
		ck_assert_ptr_null(wait_for(a, RDZV_OP_FAIL, 50));
	}
	ck_assert_int_eq(say(a, RDZV_OP_STOPPED), 0);
	ck_assert_int_eq(say(b, RDZV_OP_STOPPED), 0);
	ck_assert_uint_eq(got(a, RDZV_OP_ROUND)->group_world_size, 2);
	ck_assert_uint_eq(got(a, RDZV_OP_ROUND)->restart_count, 0);
	ck_assert_int_eq(rdzv_job_info(eng, "job7", &ji), 0);
	ck_assert_uint_eq(ji.nodes, 2);
	bye(a);
	bye(b);
	bye(c);
}
END_TEST

START_TEST(max_jobs_refuses)
{
	struct rdzv_limits l = { .max_jobs = 2 };
	struct jopt o = { .min = 2, .max = 2, .node_rank = -1 };
	struct fconn *a, *b, *c;
	struct rdzv_stats st;
	int rc;

	rdzv_set_limits(eng, &l);
	o.run_id = "j1";
	a = join("a", &o);
	o.run_id = "j2";
	b = join("b", &o);
	o.run_id = "j3";
	c = join_rc("c", &o, &rc);
	ck_assert_int_eq(rc, -1);
	ck_assert_ptr_nonnull(strstr(got(c, RDZV_OP_ERROR)->text,
	    "max-jobs=2 reached"));
	ck_assert_uint_eq(rdzv_njobs(eng), 2);
	rdzv_stats(eng, &st);
	ck_assert_uint_eq(st.jobs_refused, 1);
	bye(c);
	o.run_id = "j1";	/* joining a job that exists is not refused */
	c = join("c", &o);
	ck_assert_ptr_nonnull(last(c, RDZV_OP_ROUND));
	bye(a);
	bye(b);
	bye(c);
}
END_TEST

START_TEST(orphan_job_forgotten)
{
	struct rdzv_limits l = { .orphan_ms = 100 };
	struct jopt o = { .min = 2, .max = 2, .node_rank = -1,
	    .ka_ms = 600000 };
	struct fconn *a, *b, *probe;
	struct rdzv_stats st;

	rdzv_set_limits(eng, &l);
	o.run_id = "gone";
	a = join("a", &o);
	o.run_id = "kept";
	b = join("b", &o);
	drop(a);	/* its 20-minute keep-alive window does not matter */
	o.run_id = "probe";
	probe = join("p", &o);	/* a third job keeps the loop busy */
	ck_assert_ptr_null(wait_for(probe, RDZV_OP_FAIL, 400));
	ck_assert_int_eq(rdzv_job_info(eng, "gone", &(struct rdzv_job_info){ 0 }),
	    -1);
	ck_assert_int_eq(rdzv_job_info(eng, "kept", &(struct rdzv_job_info){ 0 }),
	    0);
	rdzv_stats(eng, &st);
	ck_assert_uint_eq(st.jobs_orphaned, 1);
	bye(a);
	bye(b);
	bye(probe);
}
END_TEST

START_TEST(below_min_fails_everyone)
{
	struct jopt o = { .min = 2, .max = 2, .node_rank = -1, .ka_ms = 200 };
	struct fconn *a = join("a", &o), *b = join("b", &o);
	const struct rdzv_msg *f;

	drop(b);
	while (last(a, RDZV_OP_FAIL) == NULL) {	/* a stays alive */
		ck_assert_int_eq(say(a, RDZV_OP_KEEPALIVE), 0);
		wait_for(a, RDZV_OP_FAIL, 50);
	}
	f = got(a, RDZV_OP_FAIL);
	ck_assert_int_eq(f->reason, RDZV_FAIL_BELOW_MIN);
	drop(a);
	ck_assert_uint_eq(rdzv_njobs(eng), 0);	/* forgotten */
	bye(a);
	bye(b);
}
END_TEST

START_TEST(join_timeout)
{
	struct jopt o = { .min = 2, .max = 2, .node_rank = -1, .join_ms = 30 };
	struct fconn *a = join("a", &o);
	const struct rdzv_msg *f;

	wait_for(a, RDZV_OP_FAIL, 2000);
	f = got(a, RDZV_OP_FAIL);
	ck_assert_int_eq(f->reason, RDZV_FAIL_TIMEOUT);
	bye(a);
}
END_TEST

START_TEST(all_done_finishes)
{
	struct jopt o = { .min = 2, .max = 2, .node_rank = -1 };
	struct fconn *a = join("a", &o), *b = join("b", &o), *c;
	const struct rdzv_msg *f;

	ck_assert_int_eq(say(a, RDZV_OP_DONE), 0);
	ck_assert_ptr_null(last(a, RDZV_OP_FINISHED));
	ck_assert_int_eq(say(b, RDZV_OP_DONE), 0);
	ck_assert_ptr_nonnull(last(a, RDZV_OP_FINISHED));
	ck_assert_ptr_nonnull(last(b, RDZV_OP_FINISHED));
	/* A late node is told the job is over. */
	c = join("c", &o);
	f = got(c, RDZV_OP_FAIL);
	ck_assert_int_eq(f->reason, RDZV_FAIL_CLOSED);
	bye(a);
	bye(b);
	bye(c);
}
END_TEST

START_TEST(jobs_are_separate)
{
	struct jopt o1 = { .run_id = "one", .min = 2, .max = 2,
	    .node_rank = -1 };
	struct jopt o2 = { .run_id = "two", .min = 1, .max = 1,
	    .node_rank = -1 };
	struct fconn *a = join("a", &o1), *b = join("b", &o2), *c;
	struct rdzv_job_info ji;

	ck_assert_uint_eq(rdzv_njobs(eng), 2);
	ck_assert_ptr_nonnull(last(b, RDZV_OP_ROUND));
	ck_assert_ptr_null(last(a, RDZV_OP_ROUND));
	ck_assert_int_eq(say(b, RDZV_OP_FAILED), 0);	/* 0 restarts */
	ck_assert_ptr_nonnull(last(b, RDZV_OP_FAIL));
	ck_assert_ptr_null(last(a, RDZV_OP_FAIL));
	c = join("c", &o1);
	ck_assert_int_eq(got(c, RDZV_OP_ROUND)->group_rank, 1);
	ck_assert_uint_eq(got(c, RDZV_OP_ROUND)->group_world_size, 2);
	ck_assert_int_eq(rdzv_job_info(eng, "one", &ji), 0);
	ck_assert_int_eq(ji.state, RDZV_J_RUNNING);
	bye(a);
	bye(b);
	bye(c);
}
END_TEST

START_TEST(resume_on_new_connection)
{
	struct jopt o = { .min = 2, .max = 2, .node_rank = -1, .ka_ms = 60000 };
	struct fconn *a = join("a", &o), *b = join("b", &o), *b2, *dup;
	struct rdzv_job_info ji;

	ck_assert_int_eq(got(b, RDZV_OP_ROUND)->group_rank, 1);
	drop(b);
	b2 = join("b", &o);	/* same host, pid and local id */
	ck_assert_int_eq(got(b2, RDZV_OP_ROUND)->group_rank, 1);
	ck_assert_uint_eq(got(b2, RDZV_OP_ROUND)->round, 0);
	ck_assert_ptr_null(last(a, RDZV_OP_RESTART));
	ck_assert_int_eq(rdzv_job_info(eng, "job7", &ji), 0);
	ck_assert_uint_eq(ji.nodes, 2);
	ck_assert_int_eq(ji.state, RDZV_J_RUNNING);
	/* The resumed node goes on as before: DONE from both finishes. */
	ck_assert_int_eq(say(a, RDZV_OP_DONE), 0);
	ck_assert_int_eq(say(b2, RDZV_OP_DONE), 0);
	ck_assert_ptr_nonnull(last(a, RDZV_OP_FINISHED));
	ck_assert_ptr_nonnull(last(b2, RDZV_OP_FINISHED));
	bye(a);
	bye(b);
	bye(b2);
	/* A second live connection for one node is refused. */
	a = join("x", &o);
	dup = calloc(1, sizeof(*dup));
	dup->peer = rdzv_peer_new(eng, dup);
	{
		struct rdzv_msg m;

		rdzv_proto_init(&m, RDZV_OP_HELLO);
		m.version = RDZV_PROTO_VERSION;
		ck_assert_int_eq(rdzv_peer_msg(dup->peer, &m), 0);
		rdzv_proto_init(&m, RDZV_OP_JOIN);
		strcpy(m.run_id, "job7");
		strcpy(m.host, "x");
		m.pid = 100;
		m.nproc = 2;
		m.min_nodes = m.max_nodes = 2;
		m.join_timeout_ms = m.last_call_ms = m.keepalive_ms = 60000;
		m.keepalive_max = 2;
		strcpy(m.addr, "x");
		m.port = 1;
		ck_assert_int_eq(rdzv_peer_msg(dup->peer, &m), -1);
	}
	ck_assert_ptr_nonnull(last(dup, RDZV_OP_ERROR));
	bye(dup);
	bye(a);
}
END_TEST

/*
 * The job ends while a node's connection is down (its FINISHED, or the
 * FAIL of a daemon going away, lost with it): when it comes back it hears
 * the end, not its round again (it would wait for an end that never
 * comes, and report the finished job as failed).
 */
START_TEST(resume_after_the_end)
{
	struct jopt o = { .min = 2, .max = 2, .node_rank = -1, .ka_ms = 60000 };
	struct fconn *a = join("a", &o), *b = join("b", &o), *b2;

	ck_assert_int_eq(say(b, RDZV_OP_DONE), 0);
	drop(b);
	ck_assert_int_eq(say(a, RDZV_OP_DONE), 0);
	ck_assert_ptr_nonnull(last(a, RDZV_OP_FINISHED));
	b2 = join("b", &o);
	ck_assert_ptr_nonnull(last(b2, RDZV_OP_FINISHED));
	ck_assert_ptr_null(last(b2, RDZV_OP_ROUND));
	bye(a);
	bye(b);
	bye(b2);
	o.run_id = "job8";
	a = join("a", &o);
	b = join("b", &o);
	drop(b);
	ck_assert_uint_eq(rdzv_shutdown(eng, "going away"), 1);
	b2 = join("b", &o);
	ck_assert_int_eq(got(b2, RDZV_OP_FAIL)->reason, RDZV_FAIL_CLOSED);
	ck_assert_str_eq(got(b2, RDZV_OP_FAIL)->text, "going away");
	bye(a);
	bye(b);
	bye(b2);
}
END_TEST

START_TEST(protocol_errors)
{
	struct fconn c = { 0 };
	struct rdzv_msg m;

	c.peer = rdzv_peer_new(eng, &c);
	ck_assert_int_eq(say(&c, RDZV_OP_KEEPALIVE), -1);	/* no HELLO */
	ck_assert_ptr_nonnull(last(&c, RDZV_OP_ERROR));
	rdzv_peer_gone(c.peer);
	memset(&c, 0, sizeof(c));
	c.peer = rdzv_peer_new(eng, &c);
	rdzv_proto_init(&m, RDZV_OP_HELLO);
	m.version = 99;
	ck_assert_int_eq(rdzv_peer_msg(c.peer, &m), -1);
	rdzv_peer_gone(c.peer);
	memset(&c, 0, sizeof(c));
	c.peer = rdzv_peer_new(eng, &c);
	m.version = RDZV_PROTO_VERSION;
	ck_assert_int_eq(rdzv_peer_msg(c.peer, &m), 0);
	ck_assert_int_eq(say(&c, RDZV_OP_DONE), -1);	/* before JOIN */
	rdzv_peer_gone(c.peer);
	memset(&c, 0, sizeof(c));
	c.peer = rdzv_peer_new(eng, &c);
	ck_assert_int_eq(rdzv_peer_msg(c.peer, &m), 0);
	rdzv_proto_init(&m, RDZV_OP_JOIN);
	strcpy(m.run_id, "x");
	m.min_nodes = 3;
	m.max_nodes = 2;	/* MIN > MAX */
	ck_assert_int_eq(rdzv_peer_msg(c.peer, &m), -1);
	ck_assert_uint_eq(rdzv_njobs(eng), 0);
	rdzv_peer_gone(c.peer);
}
END_TEST

/* Every line logged, for the test that reads the transitions. */
static char logged[16384];

/* Log sink: append the line to logged (the rest is cut). */
static void
log_keep(int level, const char *line, void *arg)
{
	size_t len = strlen(logged);

	snprintf(logged + len, sizeof logged - len, "%s\n", line);
}

START_TEST(peer_states)
{
	struct jopt o = { .min = 2, .max = 2, .node_rank = -1 };
	struct fconn *a, *b;
	int level = log_getlevel();

	logged[0] = '\0';
	log_setlevel(LOG_LVL_DEBUG);
	log_set_sink(log_keep, NULL);
	a = join("pa", &o);
	ck_assert_ptr_nonnull(strstr(logged, "rdzv peer=1 HELLO -> READY"));
	ck_assert_ptr_nonnull(strstr(logged,
	    "rdzv peer=1 job=job7 node=pa:100 READY -> JOINED"));
	/* LEAVE removes the node: the session is READY again. */
	ck_assert_int_eq(say(a, RDZV_OP_LEAVE), 0);
	ck_assert_ptr_nonnull(strstr(logged, "node=pa:100 JOINED -> READY"));
	ck_assert_int_eq(say(a, RDZV_OP_KEEPALIVE), -1);	/* no node */
	b = join("pb", &o);
	drop(b);
	ck_assert_ptr_nonnull(strstr(logged, "node=pb:100 JOINED -> GONE"));
	bye(a);
	bye(b);
	ck_assert_ptr_nonnull(strstr(logged, "rdzv peer=1 READY -> GONE"));
	log_set_sink(NULL, NULL);
	log_setlevel(level);
}
END_TEST

START_TEST(table_full)
{
	ck_assert_uint_eq(rdzv_table_holes(), 0);
}
END_TEST

/* A DONE while a round is formed, and a DONE repeated, are ignored, and
 * the log says so with the reason (a late message leaves a trace). */
START_TEST(ignored_events_leave_a_trace)
{
	struct jopt o = { .min = 2, .max = 2, .node_rank = -1 };
	struct fconn *a, *b;
	int level = log_getlevel();

	logged[0] = '\0';
	log_setlevel(LOG_LVL_INFO);
	log_set_sink(log_keep, NULL);
	a = join("ta", &o);
	ck_assert_int_eq(say(a, RDZV_OP_DONE), 0);
	ck_assert_ptr_nonnull(strstr(logged, "node=ta:100 DONE ignored in "
	    "JOINING/WAIT: no round runs: a DONE of the round before"));
	b = join("tb", &o);
	ck_assert_ptr_nonnull(last(b, RDZV_OP_ROUND));
	ck_assert_int_eq(say(b, RDZV_OP_DONE), 0);
	ck_assert_int_eq(say(b, RDZV_OP_DONE), 0);
	ck_assert_ptr_nonnull(strstr(logged, "node=tb:100 DONE ignored in "
	    "RUNNING/DONE: already done: a DONE repeated"));
	ck_assert_int_eq(say(a, RDZV_OP_STOPPED), 0);
	ck_assert_ptr_nonnull(strstr(logged, "node=ta:100 STOPPED ignored in "
	    "RUNNING/ACTIVE: not asked to stop: a STOPPED repeated"));
	ck_assert_ptr_null(last(a, RDZV_OP_FINISHED));
	log_set_sink(NULL, NULL);
	log_setlevel(level);
	bye(a);
	bye(b);
}
END_TEST

/*
 * A node still stopping when the last call closed the round without it
 * is not forgotten: its STOPPED makes it wait, and below MAX the job
 * scales up to take it in (no restart spent).
 */
START_TEST(left_behind_then_taken_in)
{
	struct jopt o = { .min = 2, .max = 3, .node_rank = -1, .restarts = 1,
	    .last_call_ms = 20 };
	struct fconn *a = join("a", &o), *b = join("b", &o), *c = join("c", &o);

	ck_assert_uint_eq(got(a, RDZV_OP_ROUND)->group_world_size, 3);
	ck_assert_int_eq(say(a, RDZV_OP_FAILED), 0);
	ck_assert_int_eq(say(b, RDZV_OP_STOPPED), 0);	/* c still stops */
	ck_assert_ptr_nonnull(wait_round(b, 1, 2000));
	ck_assert_uint_eq(got(b, RDZV_OP_ROUND)->group_world_size, 2);
	ck_assert_int_eq(say(c, RDZV_OP_STOPPED), 0);
	ck_assert_str_eq(got(a, RDZV_OP_RESTART)->text, "node c (pid 100) "
	    "joined");
	ck_assert_int_eq(say(a, RDZV_OP_STOPPED), 0);
	ck_assert_int_eq(say(b, RDZV_OP_STOPPED), 0);
	ck_assert_uint_eq(got(c, RDZV_OP_ROUND)->round, 2);
	ck_assert_uint_eq(got(c, RDZV_OP_ROUND)->group_world_size, 3);
	ck_assert_uint_eq(got(c, RDZV_OP_ROUND)->restart_count, 1);
	bye(a);
	bye(b);
	bye(c);
}
END_TEST

/* The suite. */
Suite *
test_suite(void)
{
	Suite *s = suite_create("rdzv");
	TCase *tc = tcase_create("engine");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, two_nodes_ranks_sorted_by_host);
	tcase_add_test(tc, node_rank_wins_over_host);
	tcase_add_test(tc, last_call_closes_round_at_min);
	tcase_add_test(tc, spare_then_takes_over);
	tcase_add_test(tc, scale_up_below_max);
	tcase_add_test(tc, restart_budget_job_wide);
	tcase_add_test(tc, restart_budget_carried);
	tcase_add_test(tc, restart_budget_carry_capped);
	tcase_add_test(tc, carry_round_goes_on);
	tcase_add_test(tc, carry_failure_spends);
	tcase_add_test(tc, carry_failure_no_budget);
	tcase_add_test(tc, carry_new_round);
	tcase_add_test(tc, carry_known_node);
	tcase_add_test(tc, carry_protocol_errors);
	tcase_add_test(tc, dead_node_by_keepalive);
	tcase_add_test(tc, max_jobs_refuses);
	tcase_add_test(tc, orphan_job_forgotten);
	tcase_add_test(tc, below_min_fails_everyone);
	tcase_add_test(tc, join_timeout);
	tcase_add_test(tc, all_done_finishes);
	tcase_add_test(tc, jobs_are_separate);
	tcase_add_test(tc, resume_on_new_connection);
	tcase_add_test(tc, resume_after_the_end);
	tcase_add_test(tc, protocol_errors);
	tcase_add_test(tc, peer_states);
	tcase_add_test(tc, table_full);
	tcase_add_test(tc, ignored_events_leave_a_trace);
	tcase_add_test(tc, left_behind_then_taken_in);
	suite_add_tcase(s, tc);
	return s;
}

/*
 * test_decide.c: the round rule (rendezvous/engine/decide.c) on views
 * built by hand, rule by rule: the last call armed and disarmed, MAX at
 * once, MIN after the last call, a restart's quick close, group-rank
 * order (node rank, host, arrival) with rank bases, world, spares and the
 * store, below MIN, join timeout, lost members, failures with and without
 * budget and while a member is disconnected, finish, scale-up, a closed
 * job, and 100,000 nodes (no node limit).  Then the scenario table
 * (helper_scenario_table.c), which tests/rdzv/tool_scenarios.c also runs
 * against the c10d engine and the etcd-v3 backend, against the rule
 * itself with a small model of the nodes around it.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decide.h"
#include "helper_main.h"
#include "helper_scenarios.h"

#define NMAX	16

static struct decide_view v;
static struct decide_node nodes[NMAX];
static char hosts[NMAX][32];
static struct decide_place order[NMAX];
static struct decide_out o;

/* A fresh view: a job forming round 0, nnodes MIN:MAX, max_restarts. */
static void
job(enum decide_phase p, uint32_t min, uint32_t max, uint32_t max_restarts)
{
	memset(&v, 0, sizeof(v));
	memset(nodes, 0, sizeof(nodes));
	v.job.phase = p;
	v.job.min = min;
	v.job.max = max;
	v.job.max_restarts = max_restarts;
	v.job.join_timeout_ms = 600000;
	v.job.started = p != DECIDE_JOB_FORMING;
	v.nodes = nodes;
}

/* Add a node: host (also its name), node rank, nproc, state. */
static size_t
node(const char *host, int32_t node_rank, uint32_t nproc,
    enum decide_nstate s)
{
	size_t i = v.nnodes++;

	ck_assert_uint_lt(i, NMAX);
	snprintf(hosts[i], sizeof(hosts[i]), "%s", host);
	nodes[i].name = hosts[i];
	nodes[i].host = hosts[i];
	nodes[i].addr = hosts[i];
	nodes[i].port = 1000 + (uint32_t)i;
	nodes[i].arrival = i;
	nodes[i].node_rank = node_rank;
	nodes[i].group_rank = -1;
	nodes[i].nproc = nproc;
	nodes[i].state = s;
	return i;
}

/* Decide on the view (its counts recomputed). */
static enum decide_verdict
run(void)
{
	decide_count(&v);
	return decide(&v, order, &o);
}

/* The host of the member or spare at place i. */
static const char *
at(size_t i)
{
	return nodes[order[i].node].host;
}

START_TEST(last_call_armed_then_disarmed)
{
	job(DECIDE_JOB_FORMING, 2, 3, 0);
	node("a", -1, 1, DECIDE_WAITING);
	ck_assert_int_eq(run(), DECIDE_NOTHING);
	node("b", -1, 1, DECIDE_WAITING);
	ck_assert_int_eq(run(), DECIDE_ARM_LAST_CALL);
	v.job.last_call_armed = 1;
	ck_assert_int_eq(run(), DECIDE_NOTHING);	/* already armed */
	nodes[1].state = DECIDE_GONE;
	ck_assert_int_eq(run(), DECIDE_DISARM_LAST_CALL);
	v.job.last_call_armed = 0;
	ck_assert_int_eq(run(), DECIDE_NOTHING);
}
END_TEST

START_TEST(last_call_over_closes_at_min)
{
	job(DECIDE_JOB_FORMING, 2, 3, 0);
	node("b", -1, 1, DECIDE_WAITING);
	node("a", -1, 1, DECIDE_WAITING);
	v.job.last_call_armed = 1;
	v.job.last_call_over = 1;
	ck_assert_int_eq(run(), DECIDE_ROUND);
	ck_assert_uint_eq(o.nmembers, 2);
	ck_assert_uint_eq(o.nspares, 0);
	ck_assert_str_eq(at(0), "a");
	ck_assert_str_eq(at(1), "b");
	ck_assert_str_eq(o.text, "2 node(s), 0 spare(s)");
}
END_TEST

START_TEST(max_closes_at_once_in_rank_order)
{
	job(DECIDE_JOB_FORMING, 1, 4, 0);
	node("zz", -1, 1, DECIDE_WAITING);	/* no node rank: after */
	node("n10", 1, 5, DECIDE_WAITING);
	node("h", -1, 2, DECIDE_WAITING);	/* same host: arrival */
	node("n9", 0, 3, DECIDE_WAITING);
	node("h", -1, 4, DECIDE_WAITING);
	node("aa", -1, 1, DECIDE_STOPPING);	/* not waiting: not in */
	ck_assert_int_eq(run(), DECIDE_ROUND);
	ck_assert_uint_eq(o.nmembers, 4);
	ck_assert_uint_eq(o.nspares, 1);
	ck_assert_str_eq(at(0), "n9");		/* node rank 0 */
	ck_assert_str_eq(at(1), "n10");		/* node rank 1 */
	ck_assert_uint_eq(order[2].node, 2);	/* h, first to arrive */
	ck_assert_uint_eq(order[3].node, 4);
	ck_assert_str_eq(at(4), "zz");		/* the spare */
	ck_assert_uint_eq(order[0].rank_base, 0);
	ck_assert_uint_eq(order[1].rank_base, 3);
	ck_assert_uint_eq(order[2].rank_base, 8);
	ck_assert_uint_eq(order[3].rank_base, 10);
	ck_assert_uint_eq(o.world, 14);
	ck_assert_uint_eq(nodes[order[0].node].port, 1003);	/* the store */
	ck_assert_str_eq(o.text, "4 node(s), 1 spare(s)");
}
END_TEST

START_TEST(restart_closes_when_nobody_is_left_to_wait_for)
{
	job(DECIDE_JOB_FORMING, 2, 3, 1);
	v.job.started = 1;
	v.job.round = 2;
	node("a", -1, 1, DECIDE_WAITING);
	node("b", -1, 1, DECIDE_WAITING);
	node("c", -1, 1, DECIDE_STOPPING);	/* still stopping */
	ck_assert_int_eq(run(), DECIDE_ARM_LAST_CALL);
	nodes[2].state = DECIDE_GONE;		/* gone: not waited for */
	ck_assert_int_eq(run(), DECIDE_ROUND);
	ck_assert_uint_eq(o.nmembers, 2);
	ck_assert_uint_eq(o.restarts, 0);	/* no budget spent here */
}
END_TEST

START_TEST(below_min_after_a_round_fails)
{
	job(DECIDE_JOB_FORMING, 2, 2, 0);
	v.job.started = 1;
	node("a", -1, 1, DECIDE_WAITING);
	node("b", -1, 1, DECIDE_GONE);
	ck_assert_int_eq(run(), DECIDE_FAIL);
	ck_assert_uint_eq(o.reason, RDZV_FAIL_BELOW_MIN);
	ck_assert_uint_eq(o.node, 1);
	ck_assert_str_eq(o.text, "node b was lost and 1 node(s) remain, "
	    "fewer than the minimum 2");
	v.nnodes = 1;	/* nobody known to be lost */
	ck_assert_int_eq(run(), DECIDE_FAIL);
	ck_assert_str_eq(o.text, "1 node(s) remain, fewer than the minimum 2");
	v.job.started = 0;	/* before the first round: wait */
	ck_assert_int_eq(run(), DECIDE_NOTHING);
}
END_TEST

START_TEST(join_timeout_fails)
{
	job(DECIDE_JOB_FORMING, 2, 2, 0);
	v.job.join_timeout_ms = 30000;
	node("a", -1, 1, DECIDE_WAITING);
	v.job.join_timeout_over = 1;
	ck_assert_int_eq(run(), DECIDE_FAIL);
	ck_assert_uint_eq(o.reason, RDZV_FAIL_TIMEOUT);
	ck_assert_uint_eq(o.node, DECIDE_NO_NODE);
	ck_assert_str_eq(o.text, "no round could be formed within "
	    "join_timeout (30 s): 1 of at least 2 nodes joined");
	node("b", -1, 1, DECIDE_WAITING);	/* decidable: decided */
	ck_assert_int_eq(run(), DECIDE_ROUND);
}
END_TEST

START_TEST(lost_member_new_round_or_fail)
{
	job(DECIDE_JOB_RUNNING, 2, 3, 0);
	node("a", -1, 1, DECIDE_RUNNING);
	node("b", -1, 1, DECIDE_DONE);
	node("c", -1, 1, DECIDE_LOST);
	node("d", -1, 1, DECIDE_GONE);		/* a spare that left */
	nodes[2].group_rank = 2;
	ck_assert_int_eq(run(), DECIDE_NEW_ROUND);
	ck_assert_uint_eq(o.node, 2);
	ck_assert_int_eq(o.spent, 0);
	ck_assert_str_eq(o.text, "node c was lost");
	nodes[1].state = DECIDE_LOST;		/* two: the first named */
	nodes[1].group_rank = 1;
	ck_assert_int_eq(run(), DECIDE_FAIL);
	ck_assert_uint_eq(o.reason, RDZV_FAIL_BELOW_MIN);
	ck_assert_str_eq(o.text, "node b was lost and 1 node(s) remain, "
	    "fewer than the minimum 2");
	nodes[1].state = DECIDE_GONE;		/* a spare that left: no */
	nodes[2].state = DECIDE_RUNNING;
	ck_assert_int_eq(run(), DECIDE_NOTHING);
}
END_TEST

START_TEST(failure_spends_the_budget)
{
	static const char why[] = "rank 3 exited 1";

	job(DECIDE_JOB_RUNNING, 2, 2, 1);
	node("a", -1, 1, DECIDE_RUNNING);
	node("b", -1, 1, DECIDE_FAILED);
	nodes[1].why = why;
	ck_assert_int_eq(run(), DECIDE_NEW_ROUND);
	ck_assert_int_eq(o.spent, 1);
	ck_assert_uint_eq(o.restarts, 1);
	ck_assert_uint_eq(o.node, 1);
	ck_assert_str_eq(o.text, "workers failed on node b: rank 3 exited 1");
	v.job.restarts = 1;			/* spent already */
	ck_assert_int_eq(run(), DECIDE_FAIL);
	ck_assert_uint_eq(o.reason, RDZV_FAIL_RESTARTS);
	ck_assert_uint_eq(o.node, 1);
	ck_assert_uint_eq(o.restarts, 1);
	ck_assert_str_eq(o.text, "workers failed on node b and no restarts "
	    "are left (1/1 spent)");
	nodes[1].why = NULL;
	v.job.restarts = 0;
	ck_assert_int_eq(run(), DECIDE_NEW_ROUND);
	ck_assert_str_eq(o.text, "workers failed on node b");
}
END_TEST

START_TEST(failure_while_a_member_is_offline_is_free)
{
	job(DECIDE_JOB_RUNNING, 2, 3, 0);
	node("a", -1, 1, DECIDE_FAILED);
	node("b", -1, 1, DECIDE_RUNNING);
	node("c", -1, 1, DECIDE_RUNNING);
	nodes[2].offline = 1;
	ck_assert_int_eq(run(), DECIDE_NEW_ROUND);
	ck_assert_int_eq(o.spent, 0);
	ck_assert_uint_eq(o.restarts, 0);
	nodes[2].offline = 0;			/* no budget: the end */
	ck_assert_int_eq(run(), DECIDE_FAIL);
	node("d", -1, 1, DECIDE_WAITING);	/* a spare offline: no */
	nodes[3].offline = 1;
	ck_assert_int_eq(run(), DECIDE_FAIL);
}
END_TEST

START_TEST(lost_before_failed)
{
	job(DECIDE_JOB_RUNNING, 1, 3, 0);
	node("a", -1, 1, DECIDE_FAILED);
	node("b", -1, 1, DECIDE_LOST);
	ck_assert_int_eq(run(), DECIDE_NEW_ROUND);
	ck_assert_str_eq(o.text, "node b was lost");
	ck_assert_int_eq(o.spent, 0);
}
END_TEST

START_TEST(all_done_finishes)
{
	job(DECIDE_JOB_RUNNING, 2, 2, 0);
	node("a", -1, 1, DECIDE_DONE);
	node("b", -1, 1, DECIDE_RUNNING);
	node("c", -1, 1, DECIDE_WAITING);	/* a spare */
	ck_assert_int_eq(run(), DECIDE_NOTHING);
	nodes[1].state = DECIDE_DONE;
	ck_assert_int_eq(run(), DECIDE_FINISH);
	ck_assert_str_eq(o.text, "every node's workers succeeded");
}
END_TEST

START_TEST(scale_up_below_max_only)
{
	job(DECIDE_JOB_RUNNING, 1, 3, 0);
	node("a", -1, 1, DECIDE_RUNNING);
	node("b", -1, 1, DECIDE_DONE);
	node("d", -1, 1, DECIDE_WAITING);
	node("c", -1, 1, DECIDE_WAITING);
	ck_assert_int_eq(run(), DECIDE_NEW_ROUND);
	ck_assert_str_eq(o.text, "node c joined");	/* rank order */
	ck_assert_uint_eq(o.node, 3);
	ck_assert_int_eq(o.spent, 0);
	nodes[2].state = DECIDE_RUNNING;		/* 3 run: spares */
	ck_assert_int_eq(run(), DECIDE_NOTHING);
	nodes[2].state = DECIDE_STOPPING;		/* left behind */
	ck_assert_int_eq(run(), DECIDE_NEW_ROUND);
}
END_TEST

START_TEST(closed_does_nothing)
{
	job(DECIDE_JOB_CLOSED, 1, 1, 0);
	node("a", -1, 1, DECIDE_FAILED);
	node("b", -1, 1, DECIDE_LOST);
	ck_assert_int_eq(run(), DECIDE_NOTHING);
}
END_TEST

/* 100,000 waiting nodes in reverse host order: no limit of its own; the
 * order is right and every rank base is the sum before it. */
START_TEST(no_node_limit)
{
	size_t k = 100000, i;
	struct decide_view big;
	struct decide_node *n = calloc(k, sizeof(*n));
	struct decide_place *ord = calloc(k, sizeof(*ord));
	char (*h)[16] = calloc(k, sizeof(*h));

	ck_assert_ptr_nonnull(n);
	ck_assert_ptr_nonnull(ord);
	ck_assert_ptr_nonnull(h);
	memset(&big, 0, sizeof(big));
	big.job.phase = DECIDE_JOB_FORMING;
	big.job.min = big.job.max = (uint32_t)k;
	for (i = 0; i < k; i++) {
		snprintf(h[i], sizeof(h[i]), "n%06zu", k - 1 - i);
		n[i].name = n[i].host = h[i];
		n[i].arrival = i;
		n[i].node_rank = -1;
		n[i].nproc = 2;
		n[i].state = DECIDE_WAITING;
	}
	big.nodes = n;
	big.nnodes = k;
	decide_count(&big);
	ck_assert_int_eq(decide(&big, ord, &o), DECIDE_ROUND);
	ck_assert_uint_eq(o.nmembers, k);
	ck_assert_uint_eq(o.world, 2 * k);
	for (i = 0; i < k; i++) {
		ck_assert_uint_eq(ord[i].node, k - 1 - i);
		ck_assert_uint_eq(ord[i].rank_base, 2 * i);
	}
	free(n);
	free(ord);
	free(h);
}
END_TEST

START_TEST(state_and_verdict_names)
{
	ck_assert_str_eq(decide_verdict_name(DECIDE_NEW_ROUND), "new-round");
	ck_assert_str_eq(decide_verdict_name(DECIDE__VERDICTS), "?");
	ck_assert_str_eq(decide_nstate_name(DECIDE_LOST), "lost");
	ck_assert_str_eq(decide_nstate_name(DECIDE__NSTATES), "?");
}
END_TEST


/* ---- the scenarios against the rule: a model of the nodes around it,
 * doing what an agent's backend would (stop when told, rejoin) ---- */

struct mnode {
	struct decide_node	 d;
	int			 joined, removed, missed;
	char			 why[256];
};

struct model {
	const struct scenario	*s;
	struct scn_run		*run;
	char			 run_id[96];
	struct decide_job	 job;
	struct mnode		 n[SCN_NODES];
	uint64_t		 arrivals;
};

/* The view of the nodes in the job; at[] maps its slots to nodes. */
static void
model_view(const struct model *m, struct decide_view *mv,
    struct decide_node *arr, int *at)
{
	int i;

	memset(mv, 0, sizeof(*mv));
	mv->job = m->job;
	for (i = 0; i < SCN_NODES; i++)
		if (m->n[i].joined && !m->n[i].removed) {
			at[mv->nnodes] = i;
			arr[mv->nnodes++] = m->n[i].d;
		}
	mv->nodes = arr;
	decide_count(mv);
}

/* Is node i in the job (joined, not gone)? */
static int
model_in(const struct model *m, int i)
{
	return m->n[i].joined && !m->n[i].removed &&
	    m->n[i].d.state != DECIDE_GONE && m->n[i].d.state != DECIDE_LOST;
}

/* DECIDE_ROUND: the members hear their places. */
static void
model_round(struct model *m, const struct decide_out *mo,
    const struct decide_place *mord, const int *at)
{
	struct round_info ri;
	size_t g;
	int i, store = at[mord[0].node];

	m->job.phase = DECIDE_JOB_RUNNING;
	m->job.started = 1;
	m->job.last_call_armed = 0;
	for (g = 0; g < mo->nmembers; g++) {
		i = at[mord[g].node];
		m->n[i].d.state = DECIDE_RUNNING;
		m->n[i].d.group_rank = (int32_t)g;
		memset(&ri, 0, sizeof(ri));
		ri.round = (int)m->job.round;
		ri.group_rank = (int)g;
		ri.group_world_size = (int)mo->nmembers;
		ri.rank_base = (int)mord[g].rank_base;
		ri.world_size = (int)mo->world;
		ri.restart_count = (int)m->job.restarts;
		snprintf(ri.master_addr, sizeof(ri.master_addr), "%s",
		    scn_host(m->s, store));
		ri.master_port = SCN_STORE_PORT + store;
		scn_saw(m->run, i, SCN_SAW_ROUND, &ri, 0, NULL);
	}
}

/* DECIDE_NEW_ROUND: members stop (those connected hear why at once). */
static void
model_new_round(struct model *m, const struct decide_out *mo)
{
	char why[DECIDE_TEXT_MAX + 64];
	int i;

	m->job.restarts = mo->restarts;
	m->job.round++;
	m->job.phase = DECIDE_JOB_FORMING;
	m->job.last_call_armed = 0;
	snprintf(why, sizeof(why), "new rendezvous round %u: %s", m->job.round,
	    mo->text);
	for (i = 0; i < SCN_NODES; i++) {
		if (!model_in(m, i))
			continue;
		m->n[i].d.group_rank = -1;
		if (m->n[i].d.state == DECIDE_FAILED)
			m->n[i].d.state = DECIDE_WAITING;
		if (m->n[i].d.state != DECIDE_RUNNING &&
		    m->n[i].d.state != DECIDE_DONE)
			continue;
		m->n[i].d.state = DECIDE_STOPPING;
		if (m->n[i].d.offline) {
			m->n[i].missed = 1;
			continue;
		}
		scn_saw(m->run, i, SCN_SAW_RESTART, NULL, 0, why);
		m->n[i].d.state = DECIDE_WAITING;	/* stopped */
	}
}

/* DECIDE_FAIL and DECIDE_FINISH: every node in the job hears it. */
static void
model_end(struct model *m, const struct decide_out *mo, const int *at)
{
	char why[DECIDE_TEXT_MAX + 128];
	int i, culprit = mo->node != DECIDE_NO_NODE ? at[mo->node] : -1;

	m->job.phase = DECIDE_JOB_CLOSED;
	snprintf(why, sizeof(why), "rendezvous %s: %s", m->run_id, mo->text);
	for (i = 0; i < SCN_NODES; i++)
		if (model_in(m, i) && mo->verdict == DECIDE_FINISH)
			scn_saw(m->run, i, SCN_SAW_FINISHED, NULL, 0, NULL);
		else if (model_in(m, i))
			scn_saw(m->run, i, SCN_SAW_FAILED, NULL,
			    mo->reason == RDZV_FAIL_RESTARTS && i == culprit ?
			    -1 : 75, why);
}

/* Ask the rule until it has nothing more to say, carrying it out. */
static void
model_settle(struct model *m)
{
	struct decide_node arr[SCN_NODES];
	struct decide_place mord[SCN_NODES];
	struct decide_view mv;
	struct decide_out mo;
	int at[SCN_NODES], more = 1;

	while (more) {
		model_view(m, &mv, arr, at);
		m->job.last_call_over = m->job.join_timeout_over = 0;
		more = 0;
		switch (decide(&mv, mord, &mo)) {
		case DECIDE_ARM_LAST_CALL:
			m->job.last_call_armed = 1;
			break;
		case DECIDE_DISARM_LAST_CALL:
			m->job.last_call_armed = 0;
			break;
		case DECIDE_ROUND:
			model_round(m, &mo, mord, at);
			break;
		case DECIDE_NEW_ROUND:
			model_new_round(m, &mo);
			more = 1;
			break;
		case DECIDE_FAIL:
		case DECIDE_FINISH:
			model_end(m, &mo, at);
			break;
		default:
			break;
		}
	}
}

/* harness->open: a job of s's shape, nobody in it yet. */
static void *
model_open(const struct scenario *sc, const char *run_id, struct scn_run *run,
    char *err, size_t len)
{
	struct model *m = calloc(1, sizeof(*m));

	if (m == NULL) {
		snprintf(err, len, "out of memory");
		return NULL;
	}
	m->s = sc;
	m->run = run;
	snprintf(m->run_id, sizeof(m->run_id), "%s", run_id);
	m->job.phase = DECIDE_JOB_FORMING;
	m->job.min = (uint32_t)sc->min;
	m->job.max = (uint32_t)sc->max;
	m->job.max_restarts = (uint32_t)sc->max_restarts;
	m->job.join_timeout_ms = sc->join_ms ? (uint32_t)sc->join_ms : 120000;
	return m;
}

/* harness->join: node i arrives, waiting. */
static int
model_join(void *h, int i, char *err, size_t len)
{
	struct model *m = h;
	struct decide_node *d = &m->n[i].d;

	m->n[i].joined = 1;
	memset(d, 0, sizeof(*d));
	d->name = m->s->nodes[i].name;
	d->host = scn_host(m->s, i);
	d->addr = d->host;
	d->port = SCN_STORE_PORT + (uint32_t)i;
	d->arrival = m->arrivals++;
	d->node_rank = m->s->nodes[i].node_rank;
	d->group_rank = -1;
	d->nproc = (uint32_t)m->s->nodes[i].nproc;
	d->why = m->n[i].why;
	d->state = DECIDE_WAITING;
	model_settle(m);
	return 0;
}

/* harness->failed: a member's workers failed. */
static void
model_failed(void *h, int i, const char *why)
{
	struct model *m = h;

	if (m->n[i].d.state != DECIDE_RUNNING && m->n[i].d.state != DECIDE_DONE)
		return;
	snprintf(m->n[i].why, sizeof(m->n[i].why), "%s", why ? why : "");
	m->n[i].d.state = DECIDE_FAILED;
	model_settle(m);
}

/* harness->done: a member's workers succeeded. */
static void
model_done(void *h, int i)
{
	struct model *m = h;

	if (m->n[i].d.state == DECIDE_RUNNING)
		m->n[i].d.state = DECIDE_DONE;
	model_settle(m);
}

/* harness->leave: gone (lost if a member of the running round). */
static void
model_leave(void *h, int i)
{
	struct model *m = h;
	struct decide_node *d = &m->n[i].d;

	d->state = d->state == DECIDE_RUNNING || d->state == DECIDE_DONE ||
	    d->state == DECIDE_FAILED ? DECIDE_LOST : DECIDE_GONE;
	model_settle(m);
	m->n[i].removed = 1;
}

/* harness->cut: the node's connection is down. */
static void
model_cut(void *h, int i)
{
	((struct model *)h)->n[i].d.offline = 1;
}

/* harness->heal: it comes back and hears what it missed (c10d's engine
 * repeats RESTART in its own words), then stops and waits. */
static void
model_heal(void *h, int i)
{
	struct model *m = h;
	char why[128];

	m->n[i].d.offline = 0;
	if (!m->n[i].missed)
		return;
	m->n[i].missed = 0;
	snprintf(why, sizeof(why), "new rendezvous round %u: a new round is "
	    "being formed", m->job.round);
	scn_saw(m->run, i, SCN_SAW_RESTART, NULL, 0, why);
	if (m->n[i].d.state == DECIDE_STOPPING)
		m->n[i].d.state = DECIDE_WAITING;
	model_settle(m);
}

/* harness->known: nodes in the job. */
static long
model_known(void *h)
{
	struct model *m = h;
	long k = 0;
	int i;

	for (i = 0; i < SCN_NODES; i++)
		k += m->n[i].joined && !m->n[i].removed;
	return k;
}

/* harness->offline. */
static int
model_offline(void *h, int i)
{
	return ((struct model *)h)->n[i].d.offline;
}

/* harness->turn: time passes: the last call ends, or else the join
 * timeout. */
static void
model_turn(void *h)
{
	struct model *m = h;

	if (m->job.phase != DECIDE_JOB_FORMING)
		return;
	if (m->job.last_call_armed)
		m->job.last_call_over = 1;
	else
		m->job.join_timeout_over = 1;
	model_settle(m);
}

/* harness->name_at: the model names nodes by their scenario names. */
static size_t
model_name_at(void *h, int i, const char *at)
{
	const char *name = ((struct model *)h)->s->nodes[i].name;
	size_t n = strlen(name);

	return strncmp(at, name, n) == 0 ? n : 0;
}

/* harness->close. */
static void
model_close(void *h)
{
	free(h);
}

static const struct scn_harness model_harness = {
	"decide", 1, model_open, model_join, model_failed, model_done,
	model_leave, model_cut, model_heal, model_known, model_offline,
	model_turn, model_name_at, model_close
};

/* Every scenario of the table, against the rule. */
START_TEST(scenario)
{
	char err[2048] = "";

	ck_assert_msg(scn_play(&scn_table[_i], &model_harness, err,
	    sizeof(err)) == 0, "scenario %s: %s", scn_table[_i].name, err);
}
END_TEST

/* The suite. */
Suite *
test_suite(void)
{
	Suite *s = suite_create("decide");
	TCase *tc = tcase_create("rules");

	tcase_add_test(tc, last_call_armed_then_disarmed);
	tcase_add_test(tc, last_call_over_closes_at_min);
	tcase_add_test(tc, max_closes_at_once_in_rank_order);
	tcase_add_test(tc, restart_closes_when_nobody_is_left_to_wait_for);
	tcase_add_test(tc, below_min_after_a_round_fails);
	tcase_add_test(tc, join_timeout_fails);
	tcase_add_test(tc, lost_member_new_round_or_fail);
	tcase_add_test(tc, failure_spends_the_budget);
	tcase_add_test(tc, failure_while_a_member_is_offline_is_free);
	tcase_add_test(tc, lost_before_failed);
	tcase_add_test(tc, all_done_finishes);
	tcase_add_test(tc, scale_up_below_max_only);
	tcase_add_test(tc, closed_does_nothing);
	tcase_add_test(tc, no_node_limit);
	tcase_add_test(tc, state_and_verdict_names);
	suite_add_tcase(s, tc);
	tc = tcase_create("scenarios");
	tcase_add_loop_test(tc, scenario, 0, (int)scn_ntable);
	suite_add_tcase(s, tc);
	return s;
}

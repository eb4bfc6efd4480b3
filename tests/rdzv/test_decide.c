/*
 * test_decide.c: the round rule (rendezvous/engine/decide.c) on views
 * built by hand, rule by rule: the last call armed and disarmed, MAX at
 * once, MIN after the last call, a restart's quick close, group-rank
 * order (node rank, host, arrival) with rank bases, world, spares and the
 * store, below MIN, join timeout, lost members, failures with and without
 * budget and while a member is disconnected, finish, scale-up, a closed
 * job, and 100,000 nodes (no node limit).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decide.h"
#include "helper_main.h"

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
	return s;
}

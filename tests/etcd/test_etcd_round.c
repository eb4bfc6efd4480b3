/*
 * test_etcd_round.c: the etcd rendezvous' decision (etcd_round.c) on
 * snapshots built by hand, rule by rule (creation, MIN/MAX, last call,
 * spares, a restart's quick close, lost members, the restart budget and
 * the failure's words, finish, scale-up, join timeout): the snapshot's
 * facts and the round rule's (decide.c) answer as the next state; and
 * the JSON values of its keys (etcd_value.c): round trips and values
 * that are not cgrun's.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etcd_round.h"
#include "helper_main.h"

static struct er_view *v;
static struct er_state *nx;

/* A fresh view: this agent asks for min:max and max_restarts. */
static void
setup(void)
{
	v = calloc(1, sizeof(*v));
	nx = calloc(1, sizeof(*nx));
	v->min = 2;
	v->max = 3;
	v->max_restarts = 1;
}

/* Free it. */
static void
teardown(void)
{
	free(v);
	free(nx);
}

/* A state key: phase, round, min:max, restart budget. */
static void
state(enum er_phase p, uint32_t round, uint32_t min, uint32_t max,
    uint32_t restarts, uint32_t max_restarts)
{
	memset(&v->state, 0, sizeof(v->state));
	v->state.exists = 1;
	v->state.mod_rev = 7;
	v->state.phase = p;
	v->state.round = round;
	v->state.min = min;
	v->state.max = max;
	v->state.restarts = restarts;
	v->state.max_restarts = max_restarts;
	v->state.started = round > 0 || p != ER_JOINING;
}

/* A node key. */
static void
node(const char *id, const char *host, uint32_t round, enum er_st st,
    int64_t rev)
{
	struct er_node *n = &v->nodes[v->nnodes++];

	memset(n, 0, sizeof(*n));
	snprintf(n->id, sizeof(n->id), "%s", id);
	snprintf(n->host, sizeof(n->host), "%s", host);
	snprintf(n->addr, sizeof(n->addr), "%s", host);
	n->port = 1000 + (uint32_t)rev;
	n->nproc = 2;
	n->round = round;
	n->st = st;
	n->create_rev = rev;
	n->node_rank = -1;
}

/* Make the members of the running round. */
static void
members(const char *const *ids, size_t n)
{
	size_t i;

	v->state.nmembers = n;
	for (i = 0; i < n; i++) {
		snprintf(v->state.members[i].id, ER_ID_MAX, "%s", ids[i]);
		v->state.members[i].nproc = 2;
	}
}

START_TEST(creates_the_job)
{
	ck_assert_int_eq(er_decide(v, nx), ER_WRITE);
	ck_assert_int_eq(nx->phase, ER_JOINING);
	ck_assert_uint_eq(nx->round, 0);
	ck_assert_uint_eq(nx->min, 2);
	ck_assert_uint_eq(nx->max, 3);
	ck_assert_uint_eq(nx->max_restarts, 1);
}
END_TEST

START_TEST(min_arms_last_call_then_decides)
{
	state(ER_JOINING, 0, 2, 3, 0, 1);
	node("b", "h2", 0, ER_WAIT, 10);
	ck_assert_int_eq(er_decide(v, nx), ER_NONE);
	node("a", "h1", 0, ER_WAIT, 11);
	ck_assert_int_eq(er_decide(v, nx), ER_ARM_LAST_CALL);
	v->last_call_armed = 1;
	ck_assert_int_eq(er_decide(v, nx), ER_NONE);	/* armed already */
	v->nnodes = 1;
	ck_assert_int_eq(er_decide(v, nx), ER_DISARM_LAST_CALL);
	v->nnodes = 2;
	v->last_call_over = 1;
	ck_assert_int_eq(er_decide(v, nx), ER_WRITE);
	ck_assert_int_eq(nx->phase, ER_RUNNING);
	ck_assert_uint_eq(nx->nmembers, 2);
	ck_assert_str_eq(nx->members[0].id, "a");	/* host order */
	ck_assert_str_eq(nx->members[1].id, "b");
	ck_assert_str_eq(nx->addr, "h1");
	ck_assert_uint_eq(nx->port, 1011);
	ck_assert_uint_eq(nx->world, 4);
	ck_assert_int_eq(nx->started, 1);
}
END_TEST

START_TEST(max_decides_and_parks_spares)
{
	state(ER_JOINING, 0, 2, 3, 0, 1);
	node("d", "h1", 0, ER_WAIT, 14);
	node("c", "h1", 0, ER_WAIT, 13);	/* same host: arrival */
	node("b", "h2", 0, ER_WAIT, 12);
	node("a", "h3", 0, ER_WAIT, 11);
	ck_assert_int_eq(er_decide(v, nx), ER_WRITE);
	ck_assert_uint_eq(nx->nmembers, 3);
	ck_assert_str_eq(nx->members[0].id, "c");
	ck_assert_str_eq(nx->members[1].id, "d");
	ck_assert_str_eq(nx->members[2].id, "b");
	ck_assert_int_eq(er_member_index(nx, "a"), -1);	/* spare */
	ck_assert_ptr_nonnull(strstr(nx->why, "1 spare"));
}
END_TEST

/*
 * Under a Slurm step, SLURM_NODEID orders group ranks before host names
 * (n10 sorts before n9); a node without one comes after those with one.
 */
START_TEST(node_rank_orders_members)
{
	state(ER_JOINING, 0, 3, 3, 0, 1);
	node("z", "a0", 0, ER_WAIT, 11);
	node("b", "n10", 0, ER_WAIT, 12);
	node("a", "n9", 0, ER_WAIT, 13);
	v->nodes[1].node_rank = 1;
	v->nodes[2].node_rank = 0;
	ck_assert_int_eq(er_decide(v, nx), ER_WRITE);
	ck_assert_uint_eq(nx->nmembers, 3);
	ck_assert_str_eq(nx->members[0].id, "a");
	ck_assert_str_eq(nx->members[1].id, "b");
	ck_assert_str_eq(nx->members[2].id, "z");
}
END_TEST

START_TEST(restart_closes_when_all_are_back)
{
	state(ER_JOINING, 3, 1, 3, 1, 1);
	node("a", "h1", 3, ER_WAIT, 11);
	node("b", "h2", 2, ER_WAIT, 12);	/* still stopping */
	ck_assert_int_eq(er_decide(v, nx), ER_ARM_LAST_CALL);
	v->nodes[1].round = 3;
	ck_assert_int_eq(er_decide(v, nx), ER_WRITE);
	ck_assert_int_eq(nx->phase, ER_RUNNING);
	ck_assert_uint_eq(nx->round, 3);
	ck_assert_uint_eq(nx->restarts, 1);
}
END_TEST

START_TEST(lost_member_new_round_or_fail)
{
	static const char *const m[] = { "a", "b", "c" };

	state(ER_RUNNING, 1, 2, 3, 0, 1);
	members(m, 3);
	node("a", "h1", 1, ER_WAIT, 11);
	node("b", "h2", 1, ER_WAIT, 12);
	ck_assert_int_eq(er_decide(v, nx), ER_WRITE);
	ck_assert_int_eq(nx->phase, ER_JOINING);
	ck_assert_uint_eq(nx->round, 2);
	ck_assert_uint_eq(nx->restarts, 0);	/* membership: free */
	ck_assert_str_eq(nx->why, "node c was lost");
	v->nnodes = 1;
	ck_assert_int_eq(er_decide(v, nx), ER_WRITE);
	ck_assert_int_eq(nx->phase, ER_FAILED);
	ck_assert_ptr_nonnull(strstr(nx->why, "fewer than the minimum 2"));
}
END_TEST

/* A member of the last round whose key went while the next one forms:
 * named when too few are left. */
START_TEST(gone_while_joining_is_named)
{
	static const char *const m[] = { "a", "b" };

	state(ER_JOINING, 1, 2, 2, 0, 1);
	members(m, 2);
	node("a", "h1", 1, ER_WAIT, 11);
	ck_assert_int_eq(er_decide(v, nx), ER_WRITE);
	ck_assert_int_eq(nx->phase, ER_FAILED);
	ck_assert_str_eq(nx->why, "node b was lost and 1 node(s) remain, "
	    "fewer than the minimum 2");
}
END_TEST

START_TEST(failure_spends_the_budget)
{
	static const char *const m[] = { "a", "b" };

	state(ER_RUNNING, 1, 2, 2, 0, 1);
	members(m, 2);
	node("a", "h1", 1, ER_WAIT, 11);
	node("b", "h2", 1, ER_FAILED_ST, 12);
	snprintf(v->nodes[1].why, sizeof(v->nodes[1].why), "rank 3 exited 1");
	ck_assert_int_eq(er_decide(v, nx), ER_WRITE);
	ck_assert_int_eq(nx->phase, ER_JOINING);
	ck_assert_uint_eq(nx->round, 2);
	ck_assert_uint_eq(nx->restarts, 1);
	ck_assert_str_eq(nx->why, "workers failed on node b: rank 3 exited 1");
	ck_assert_str_eq(nx->culprit, "");
	state(ER_RUNNING, 2, 2, 2, 1, 1);
	members(m, 2);
	v->nodes[0].round = v->nodes[1].round = 2;
	ck_assert_int_eq(er_decide(v, nx), ER_WRITE);
	ck_assert_int_eq(nx->phase, ER_FAILED);
	ck_assert_str_eq(nx->culprit, "b");
	ck_assert_str_eq(nx->why, "workers failed on node b and no restarts "
	    "are left (1/1 spent)");
	/* a failure of an earlier round counts nothing */
	v->nodes[1].round = 1;
	ck_assert_int_eq(er_decide(v, nx), ER_NONE);
}
END_TEST

START_TEST(all_done_finishes)
{
	static const char *const m[] = { "a", "b" };

	state(ER_RUNNING, 0, 2, 2, 0, 0);
	members(m, 2);
	node("a", "h1", 0, ER_DONE, 11);
	node("b", "h2", 0, ER_WAIT, 12);
	ck_assert_int_eq(er_decide(v, nx), ER_NONE);
	v->nodes[1].st = ER_DONE;
	ck_assert_int_eq(er_decide(v, nx), ER_WRITE);
	ck_assert_int_eq(nx->phase, ER_FINISHED);
	state(ER_FINISHED, 0, 2, 2, 0, 0);
	ck_assert_int_eq(er_decide(v, nx), ER_NONE);
}
END_TEST

START_TEST(scale_up_below_max_only)
{
	static const char *const m[] = { "a", "b" };
	static const char *const m3[] = { "a", "b", "c" };

	state(ER_RUNNING, 0, 2, 3, 0, 0);
	members(m, 2);
	node("a", "h1", 0, ER_WAIT, 11);
	node("b", "h2", 0, ER_WAIT, 12);
	node("c", "h3", 0, ER_WAIT, 13);
	ck_assert_int_eq(er_decide(v, nx), ER_WRITE);
	ck_assert_int_eq(nx->phase, ER_JOINING);
	ck_assert_str_eq(nx->why, "node c joined");
	ck_assert_uint_eq(nx->restarts, 0);
	members(m3, 3);
	node("d", "h4", 0, ER_WAIT, 14);
	ck_assert_int_eq(er_decide(v, nx), ER_NONE);	/* d: a spare */
}
END_TEST

START_TEST(join_timeout_fails)
{
	state(ER_JOINING, 0, 2, 3, 0, 0);
	node("a", "h1", 0, ER_WAIT, 11);
	v->join_ms = 30000;
	v->join_over = 1;
	ck_assert_int_eq(er_decide(v, nx), ER_WRITE);
	ck_assert_int_eq(nx->phase, ER_FAILED);
	ck_assert_str_eq(nx->why, "no round could be formed within "
	    "join_timeout (30 s): 1 of at least 2 nodes joined");
}
END_TEST

START_TEST(values_round_trip)
{
	static const char *const m[] = { "a", "b" };
	struct er_state *s = calloc(1, sizeof(*s));
	struct er_node n;
	char why[ER_WHY_MAX], *j;

	state(ER_RUNNING, 4, 2, 3, 1, 2);
	members(m, 2);
	snprintf(v->state.addr, sizeof(v->state.addr), "10.0.0.1");
	v->state.port = 29500;
	v->state.world = 4;
	snprintf(v->state.why, sizeof(v->state.why), "say \"hi\"");
	j = er_state_json(&v->state);
	ck_assert_int_eq(er_state_parse(j, strlen(j), s, why,
	    sizeof(why)), 0);
	free(j);
	ck_assert_int_eq(s->phase, ER_RUNNING);
	ck_assert_uint_eq(s->round, 4);
	ck_assert_uint_eq(s->nmembers, 2);
	ck_assert_str_eq(s->members[1].id, "b");
	ck_assert_str_eq(s->addr, "10.0.0.1");
	ck_assert_str_eq(s->why, "say \"hi\"");
	node("x", "h9", 3, ER_FAILED_ST, 1);
	j = er_node_json(&v->nodes[0]);
	ck_assert_int_eq(er_node_parse(j, strlen(j), &n, why,
	    sizeof(why)), 0);
	free(j);
	ck_assert_str_eq(n.host, "h9");
	ck_assert_str_eq(n.why, "");
	ck_assert_int_eq(n.st, ER_FAILED_ST);
	snprintf(v->nodes[0].why, sizeof(v->nodes[0].why), "rank \"0\" hung");
	j = er_node_json(&v->nodes[0]);
	ck_assert_int_eq(er_node_parse(j, strlen(j), &n, why,
	    sizeof(why)), 0);
	free(j);
	ck_assert_str_eq(n.why, "rank \"0\" hung");
	ck_assert_uint_eq(n.round, 3);
	ck_assert_int_eq(n.node_rank, -1);
	v->nodes[0].node_rank = 5;
	j = er_node_json(&v->nodes[0]);
	ck_assert_int_eq(er_node_parse(j, strlen(j), &n, why,
	    sizeof(why)), 0);
	free(j);
	ck_assert_int_eq(n.node_rank, 5);
	free(s);
}
END_TEST

START_TEST(values_not_ours)
{
	static const char *const bad[] = {
		"", "{}", "[]", "{\"host\":\"h\"}",
		"{\"host\":\"h\",\"nproc\":0,\"addr\":\"a\",\"port\":1,"
		"\"round\":0,\"st\":\"wait\"}",
		"{\"host\":\"h\",\"nproc\":1,\"addr\":\"a\",\"port\":70000,"
		"\"round\":0,\"st\":\"wait\"}",
		"{\"host\":\"h\",\"nproc\":1,\"addr\":\"a\",\"port\":1,"
		"\"round\":0,\"st\":\"sleeping\"}",
		"{\"host\":\"h\",\"nproc\":1,\"addr\":\"a\",\"port\":1,"
		"\"round\":-1,\"st\":\"wait\"}",
		"{\"host\":\"h\",\"nproc\":1,\"addr\":\"a\",\"port\":1,"
		"\"round\":0,\"st\":\"wait\",\"node_rank\":-2}",
		"{\"host\":\"h\",\"nproc\":1,\"addr\":\"a\",\"port\":1,"
		"\"round\":0,\"st\":\"wait\",\"node_rank\":\"0\"}",
		"{\"host\":\"h\",\"nproc\":1,\"addr\":\"a\",\"port\":1,"
		"\"round\":0,\"st\":\"failed\",\"why\":7}",
	};
	struct er_state *s = calloc(1, sizeof(*s));
	struct er_node n;
	char why[ER_WHY_MAX];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = '\0';
		ck_assert_msg(er_node_parse(bad[i], strlen(bad[i]), &n, why,
		    sizeof(why)) == -1, "accepted %s", bad[i]);
		ck_assert_msg(why[0] != '\0', "no reason for %s", bad[i]);
		why[0] = '\0';
		ck_assert_int_eq(er_state_parse(bad[i], strlen(bad[i]), s, why,
		    sizeof(why)), -1);
		ck_assert_msg(why[0] != '\0', "no reason for %s", bad[i]);
	}
	/* members beyond max */
	ck_assert_int_eq(er_state_parse("{\"round\":0,\"phase\":\"running\","
	    "\"restarts\":0,\"max_restarts\":0,\"min\":1,\"max\":1,\"started\":1,"
	    "\"members\":[{\"id\":\"a\",\"nproc\":1},{\"id\":\"b\",\"nproc\":1}],"
	    "\"addr\":\"\",\"port\":0,\"world\":2,\"why\":\"\",\"culprit\":\"\"}",
	    250, s, why, sizeof(why)), -1);
	free(s);
}
END_TEST

/* The suite. */
Suite *
test_suite(void)
{
	Suite *s = suite_create("etcd_round");
	TCase *tc = tcase_create("decide");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, creates_the_job);
	tcase_add_test(tc, min_arms_last_call_then_decides);
	tcase_add_test(tc, max_decides_and_parks_spares);
	tcase_add_test(tc, node_rank_orders_members);
	tcase_add_test(tc, restart_closes_when_all_are_back);
	tcase_add_test(tc, lost_member_new_round_or_fail);
	tcase_add_test(tc, gone_while_joining_is_named);
	tcase_add_test(tc, failure_spends_the_budget);
	tcase_add_test(tc, all_done_finishes);
	tcase_add_test(tc, scale_up_below_max_only);
	tcase_add_test(tc, join_timeout_fails);
	tcase_add_test(tc, values_round_trip);
	tcase_add_test(tc, values_not_ours);
	suite_add_tcase(s, tc);
	return s;
}

/*
 * helper_scenario_table.c: the rendezvous scenarios (helper_scenarios.h),
 * one table for the round rule, the c10d engine and the etcd-v3 backend:
 * MIN/MAX, the last call, spares beyond MAX, scale-up, node loss above
 * and below MIN, failures with and without restarts left, a failure
 * while a member is disconnected, group ranks by node rank, host and
 * arrival, the join timeout, the finish.  {x} in a text is node x's name
 * as its backend writes it ("x (pid 12)" with c10d, "x-12-0a1b2c3d" on
 * etcd).
 */
#include <stddef.h>

#include "helper_scenarios.h"

#define NODE(n, nproc)		{ n, NULL, -1, nproc }
#define RANKED(n, host, r)	{ n, host, r, 1 }
#define ON_HOST(n, host)	{ n, host, -1, 1 }
#define JOIN(w)			{ SCN_JOIN, w, NULL, 0, 0 }
#define KNOWN(k)		{ SCN_KNOWN, NULL, NULL, k, 0 }
#define FAIL(w, why)		{ SCN_FAIL, w, why, 0, 0 }
#define DONE(w)			{ SCN_DONE, w, NULL, 0, 0 }
#define LEAVE(w)		{ SCN_LEAVE, w, NULL, 0, 0 }
#define CUT(w)			{ SCN_CUT, w, NULL, 0, 0 }
#define HEAL(w)			{ SCN_HEAL, w, NULL, 0, 0 }
#define ROUND(w, round, spent)	{ SCN_ROUND, w, NULL, round, spent }
#define RESTART(w, why)		{ SCN_RESTART, w, why, 0, 0 }
#define FAILED(w, status, why)	{ SCN_FAILED, w, why, status, 0 }
#define FINISHED(w)		{ SCN_FINISHED, w, NULL, 0, 0 }
#define RDZV_EXIT		75	/* CGRUN_EXIT_RDZV */
#define WORKERS_EXIT		-1	/* the root cause's own status */

const struct scenario scn_table[] = {
	{ "max_closes_at_once", "MAX nodes: the round closes at once; rank "
	    "bases and world from each node's nproc", 2, 2, 0, 0, 0, 0,
	    { NODE("a", 3), NODE("b", 5) }, {
		JOIN("a"), JOIN("b"),
		ROUND("a b", 0, 0),
		DONE("a"), DONE("b"),
		FINISHED("a b"),
	} },
	{ "last_call_at_min", "MIN of MAX nodes: the round closes when the "
	    "last call ends", 2, 3, 0, 300, 0, 0,
	    { NODE("a", 1), NODE("b", 1) }, {
		JOIN("b"), JOIN("a"),
		ROUND("a b", 0, 0),
		DONE("a"), DONE("b"),
		FINISHED("a b"),
	} },
	{ "spare_beyond_max", "a node beyond MAX waits as a spare and takes "
	    "a lost node's place, no restart spent", 2, 2, 0, 0, 0, 0,
	    { NODE("a", 1), NODE("b", 1), NODE("c", 1) }, {
		JOIN("a"), JOIN("b"),
		ROUND("a b", 0, 0),
		JOIN("c"), KNOWN(3),
		LEAVE("a"),
		RESTART("b", "node {a} was lost"),
		ROUND("b c", 1, 0),
		DONE("b"), DONE("c"),
		FINISHED("b c"),
	} },
	{ "scale_up", "a node joining a running job below MAX starts a new "
	    "round with it, no restart spent", 2, 3, 0, 300, 0, 0,
	    { NODE("a", 1), NODE("b", 1), NODE("c", 2) }, {
		JOIN("a"), JOIN("b"),
		ROUND("a b", 0, 0),
		JOIN("c"),
		RESTART("a b", "node {c} joined"),
		ROUND("a b c", 1, 0),
		DONE("a"), DONE("b"), DONE("c"),
		FINISHED("a b c"),
	} },
	{ "loss_above_min", "a member lost with MIN still left: a new round "
	    "without it, no restart spent", 2, 3, 0, 0, 0, 0,
	    { NODE("a", 1), NODE("b", 1), NODE("c", 1) }, {
		JOIN("a"), JOIN("b"), JOIN("c"),
		ROUND("a b c", 0, 0),
		LEAVE("c"),
		RESTART("a b", "node {c} was lost"),
		ROUND("a b", 1, 0),
		DONE("a"), DONE("b"),
		FINISHED("a b"),
	} },
	{ "loss_below_min", "a member lost with fewer than MIN left: the "
	    "job fails", 2, 2, 0, 0, 0, 0,
	    { NODE("a", 1), NODE("b", 1) }, {
		JOIN("a"), JOIN("b"),
		ROUND("a b", 0, 0),
		LEAVE("b"),
		FAILED("a", RDZV_EXIT, "node {b} was lost and 1 node(s) "
		    "remain, fewer than the minimum 2"),
	} },
	{ "failures_spend_the_budget", "a failure spends a restart and the "
	    "others hear why; with none left the job fails", 2, 2, 1, 0, 0, 0,
	    { NODE("a", 1), NODE("b", 1) }, {
		JOIN("a"), JOIN("b"),
		ROUND("a b", 0, 0),
		FAIL("b", "rank 1 exited 1"),
		RESTART("a", "workers failed on node {b}: rank 1 exited 1"),
		ROUND("a b", 1, 1),
		FAIL("a", "rank 0 exited 2"),
		FAILED("a", WORKERS_EXIT, "workers failed on node {a} and no "
		    "restarts are left (1/1 spent)"),
		FAILED("b", RDZV_EXIT, "workers failed on node {a} and no "
		    "restarts are left (1/1 spent)"),
	} },
	{ "failure_while_disconnected", "a failure while a member's "
	    "connection is down is blamed on that: no restart spent", 3, 3, 0,
	    0, 0, 1,
	    { NODE("a", 1), NODE("b", 1), NODE("c", 1) }, {
		JOIN("a"), JOIN("b"), JOIN("c"),
		ROUND("a b c", 0, 0),
		CUT("c"),
		FAIL("a", "rank 0 exited 1"),
		RESTART("b", "workers failed on node {a}: rank 0 exited 1"),
		HEAL("c"),
		RESTART("c", NULL),
		ROUND("a b c", 1, 0),
		DONE("a"), DONE("b"), DONE("c"),
		FINISHED("a b c"),
	} },
	{ "node_rank_then_host", "a batch system's node rank orders group "
	    "ranks before host names; nodes without one come last", 3, 3, 0,
	    0, 0, 0,
	    { RANKED("z", "a0", -1), RANKED("y", "n10", 1),
	    RANKED("x", "n9", 0) }, {
		JOIN("z"), JOIN("y"), JOIN("x"),
		ROUND("x y z", 0, 0),
		DONE("x"), DONE("y"), DONE("z"),
		FINISHED("x y z"),
	} },
	{ "host_then_arrival", "nodes on one host are ordered by arrival",
	    3, 3, 0, 0, 0, 0,
	    { ON_HOST("h2", "h"), ON_HOST("h1", "h"), ON_HOST("g", "g") }, {
		JOIN("h2"), KNOWN(1),
		JOIN("h1"), KNOWN(2),
		JOIN("g"),
		ROUND("g h2 h1", 0, 0),
		DONE("g"), DONE("h2"), DONE("h1"),
		FINISHED("g h2 h1"),
	} },
	{ "join_timeout", "fewer than MIN nodes for join_timeout: the job "
	    "fails", 2, 2, 0, 0, 1000, 0,
	    { NODE("a", 1) }, {
		JOIN("a"),
		FAILED("a", RDZV_EXIT, "no round could be formed within "
		    "join_timeout (1 s): 1 of at least 2 nodes joined"),
	} },
	{ "finish_with_spare", "every member done: every node is told, the "
	    "spare too", 1, 1, 0, 0, 0, 0,
	    { NODE("a", 1), NODE("b", 1) }, {
		JOIN("a"),
		ROUND("a", 0, 0),
		JOIN("b"), KNOWN(2),
		DONE("a"),
		FINISHED("a b"),
	} },
};

const size_t scn_ntable = sizeof(scn_table) / sizeof(scn_table[0]);

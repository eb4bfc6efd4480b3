/*
 * etcd_round.c: the etcd rendezvous' decision (etcd_round.h), a pure
 * function of one snapshot of the run's keys.  Rules, in the order they
 * are tried, with the c10d engine's (rendezvous/engine/job.c) as model:
 *
 *   no state key            create it: round 0 joining, this agent's
 *                           MIN:MAX and max_restarts (agreed per job)
 *   JOINING round R         started and fewer than MIN nodes alive: fail;
 *                           MAX waiting: decide; MIN waiting and nobody
 *                           else to wait for (a restart): decide; MIN
 *                           waiting: last call, decide when it ends;
 *                           join timeout ended: fail
 *   RUNNING round R         a member's key is gone (lease): new round,
 *                           or fail below MIN; a member's workers failed:
 *                           spend a restart (budget_spend) and start a new
 *                           round, or fail; every member done: finished;
 *                           a node waits and fewer than MAX run: new round
 *   FINISHED, FAILED        nothing
 *
 * "Deciding" a round: the first MAX waiting nodes in (host, arrival) order
 * are its members, group rank = position; the others are spares; rank 0's
 * job store is the round's store.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "budget.h"
#include "etcd_round.h"

static const char *const phase_names[] = {
	[ER_JOINING] = "joining", [ER_RUNNING] = "running",
	[ER_FINISHED] = "finished", [ER_FAILED] = "failed",
};
_Static_assert(sizeof(phase_names) / sizeof(phase_names[0]) == ER__PHASES,
    "a phase without a name");
static const char *const st_names[] = {
	[ER_WAIT] = "wait", [ER_DONE] = "done", [ER_FAILED_ST] = "failed",
};
_Static_assert(sizeof(st_names) / sizeof(st_names[0]) == ER__STS,
    "a node state without a name");

/* The name of a phase. */
const char *
er_phase_name(enum er_phase p)
{
	return p < ER__PHASES ? phase_names[p] : "?";
}

/* The name of a node state. */
const char *
er_st_name(enum er_st s)
{
	return s < ER__STS ? st_names[s] : "?";
}

/* The index of id among the members, or -1. */
int
er_member_index(const struct er_state *s, const char *id)
{
	size_t i;

	for (i = 0; i < s->nmembers; i++)
		if (strcmp(s->members[i].id, id) == 0)
			return (int)i;
	return -1;
}

/* The node of that id, or NULL. */
const struct er_node *
er_view_node(const struct er_view *v, const char *id)
{
	size_t i;

	for (i = 0; i < v->nnodes; i++)
		if (strcmp(v->nodes[i].id, id) == 0)
			return &v->nodes[i];
	return NULL;
}

/*
 * Group rank order: the node rank a batch system gave (SLURM_NODEID; nodes
 * without one after those with one), then host, then arrival (the key's
 * create revision).
 */
static int
node_cmp(const void *a, const void *b)
{
	const struct er_node *x = *(const struct er_node *const *)a;
	const struct er_node *y = *(const struct er_node *const *)b;
	int c;

	if (x->node_rank != y->node_rank)
		return y->node_rank < 0 ? -1 : x->node_rank < 0 ? 1 :
		    x->node_rank < y->node_rank ? -1 : 1;
	if ((c = strcmp(x->host, y->host)) != 0)
		return c;
	return x->create_rev < y->create_rev ? -1 : x->create_rev >
	    y->create_rev;
}

/* The nodes waiting for round r, sorted; their number. */
static size_t
waiting(const struct er_view *v, uint32_t r, const struct er_node **w)
{
	size_t i, n = 0;

	for (i = 0; i < v->nnodes; i++)
		if (v->nodes[i].st == ER_WAIT && v->nodes[i].round == r)
			w[n++] = &v->nodes[i];
	qsort(w, n, sizeof(*w), node_cmp);
	return n;
}

/* Nodes alive that have not come back to round r yet. */
static size_t
stale(const struct er_view *v, uint32_t r)
{
	size_t i, n = 0;

	for (i = 0; i < v->nnodes; i++)
		n += v->nodes[i].round < r;
	return n;
}

/* The job cannot go on. */
static enum er_action
fail(struct er_state *next, const char *culprit, const char *why)
{
	next->phase = ER_FAILED;
	snprintf(next->why, sizeof(next->why), "%s", why);
	snprintf(next->culprit, sizeof(next->culprit), "%s", culprit);
	return ER_WRITE;
}

/* A new round forms: everyone stops and joins round + 1. */
static enum er_action
new_round(struct er_state *next, const char *why)
{
	next->round++;
	next->phase = ER_JOINING;
	/* why may be longer than the state's field: cut, on purpose */
	snprintf(next->why, sizeof(next->why), "%.*s",
	    (int)sizeof(next->why) - 1, why);
	return ER_WRITE;
}

/* Decide the round: the first MAX of the n waiting nodes are members. */
static enum er_action
complete(struct er_state *next, const struct er_node **w, size_t n)
{
	size_t i, np = n < next->max ? n : next->max;

	next->phase = ER_RUNNING;
	next->started = 1;
	next->nmembers = np;
	next->world = 0;
	for (i = 0; i < np; i++) {
		snprintf(next->members[i].id, sizeof(next->members[i].id), "%s",
		    w[i]->id);
		next->members[i].nproc = w[i]->nproc;
		next->world += w[i]->nproc;
	}
	snprintf(next->addr, sizeof(next->addr), "%s", w[0]->addr);
	next->port = w[0]->port;
	snprintf(next->why, sizeof(next->why), "%zu node(s), %zu spare(s)", np,
	    n - np);
	return ER_WRITE;
}

/* JOINING: close the round, arm the last call, or wait. */
static enum er_action
decide_joining(const struct er_view *v, struct er_state *next)
{
	const struct er_node *w[ER_NODES_MAX];
	size_t nw = waiting(v, next->round, w);
	char why[ER_WHY_MAX];

	if (next->started && v->nnodes < next->min) {
		snprintf(why, sizeof(why), "%zu node(s) remain, fewer than the "
		    "minimum %u", v->nnodes, next->min);
		return fail(next, "", why);
	}
	if (nw > 0 && (nw >= next->max || (nw >= next->min &&
	    ((next->started && stale(v, next->round) == 0) ||
	    v->last_call_over))))
		return complete(next, w, nw);
	if (v->join_over) {
		snprintf(why, sizeof(why), "no round could be formed within "
		    "join_timeout: %zu of at least %u nodes joined", nw,
		    next->min);
		return fail(next, "", why);
	}
	return nw > 0 && nw >= next->min ? ER_ARM_LAST_CALL :
	    ER_DISARM_LAST_CALL;
}

/* RUNNING: lost members, failed workers, the end, scale-up. */
static enum er_action
decide_running(const struct er_view *v, struct er_state *next)
{
	const struct er_node *n, *first = NULL;
	char why[ER_WHY_MAX + ER_ID_MAX];
	size_t i, done = 0;

	for (i = 0; i < next->nmembers; i++)
		if (er_view_node(v, next->members[i].id) == NULL) {
			snprintf(why, sizeof(why), "node %s was lost",
			    next->members[i].id);
			if (v->nnodes < next->min) {
				snprintf(why + strlen(why), sizeof(why) -
				    strlen(why), " and %zu node(s) remain, "
				    "fewer than the minimum %u", v->nnodes,
				    next->min);
				return fail(next, "", why);
			}
			return new_round(next, why);
		}
	for (i = 0; i < next->nmembers; i++) {
		n = er_view_node(v, next->members[i].id);
		if (n == NULL || n->round != next->round)
			continue;
		if (n->st == ER_FAILED_ST) {
			snprintf(why, sizeof(why), "workers failed on node %s",
			    n->id);
			if (budget_spend(&next->restarts, next->max_restarts))
				return new_round(next, why);
			snprintf(why + strlen(why), sizeof(why) - strlen(why),
			    " and no restarts are left (%u/%u spent)",
			    next->restarts, next->max_restarts);
			return fail(next, n->id, why);
		}
		done += n->st == ER_DONE;
	}
	if (done == next->nmembers) {
		next->phase = ER_FINISHED;
		snprintf(next->why, sizeof(next->why), "every node's workers "
		    "succeeded");
		return ER_WRITE;
	}
	for (i = 0; i < v->nnodes && first == NULL; i++)
		if (v->nodes[i].st == ER_WAIT &&
		    er_member_index(next, v->nodes[i].id) == -1)
			first = &v->nodes[i];
	if (first != NULL && next->nmembers < next->max) {
		snprintf(why, sizeof(why), "node %s joined", first->id);
		return new_round(next, why);
	}
	return ER_NONE;
}

/* What the job does next (see etcd_round.h). */
enum er_action
er_decide(const struct er_view *v, struct er_state *next)
{
	*next = v->state;
	if (!v->state.exists) {
		memset(next, 0, sizeof(*next));
		next->phase = ER_JOINING;
		next->min = v->min;
		next->max = v->max;
		next->max_restarts = v->max_restarts;
		snprintf(next->why, sizeof(next->why), "job created");
		return ER_WRITE;
	}
	switch (v->state.phase) {
	case ER_JOINING:
		return decide_joining(v, next);
	case ER_RUNNING:
		return decide_running(v, next);
	default:
		return ER_NONE;
	}
}

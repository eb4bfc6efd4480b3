/*
 * decide.c: the one round rule of a rendezvous (decide.h): a pure
 * function from the job's and its nodes' facts to what happens next, and
 * the words of every outcome.  The c10d engine (job.c) and the etcd-v3
 * backend (etcd_round.c) both ask it; neither decides anything itself.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "budget.h"
#include "decide.h"

static const char *const verdict_names[] = { "nothing", "arm-last-call",
	"disarm-last-call", "round", "new-round", "fail", "finish" };
static const char *const nstate_names[] = { "waiting", "stopping",
	"running", "done", "failed", "lost", "gone" };

_Static_assert(sizeof(verdict_names) / sizeof(verdict_names[0]) ==
    DECIDE__VERDICTS, "verdict_names does not match enum decide_verdict");
_Static_assert(sizeof(nstate_names) / sizeof(nstate_names[0]) ==
    DECIDE__NSTATES, "nstate_names does not match enum decide_nstate");

/* The name of a verdict. */
const char *
decide_verdict_name(enum decide_verdict v)
{
	return v < DECIDE__VERDICTS ? verdict_names[v] : "?";
}

/* The name of a node state. */
const char *
decide_nstate_name(enum decide_nstate s)
{
	return s < DECIDE__NSTATES ? nstate_names[s] : "?";
}

/* Count the nodes in each state (see decide.h). */
void
decide_count(struct decide_view *v)
{
	size_t i;

	memset(v->count, 0, sizeof(v->count));
	for (i = 0; i < v->nnodes; i++)
		if (v->nodes[i].state < DECIDE__NSTATES)
			v->count[v->nodes[i].state]++;
}

/* Nodes that are not gone. */
static size_t
decide_live(const struct decide_view *v)
{
	return v->count[DECIDE_WAITING] + v->count[DECIDE_STOPPING] +
	    v->count[DECIDE_RUNNING] + v->count[DECIDE_DONE] +
	    v->count[DECIDE_FAILED];
}

/* Group-rank order of two nodes: <0, 0, >0 (node rank, host, arrival). */
static int
decide_order(const struct decide_node *x, const struct decide_node *y)
{
	int c;

	if ((x->node_rank >= 0) != (y->node_rank >= 0))
		return x->node_rank >= 0 ? -1 : 1;
	if (x->node_rank != y->node_rank)
		return x->node_rank < y->node_rank ? -1 : 1;
	if ((c = strcmp(x->host ? x->host : "", y->host ? y->host : "")) != 0)
		return c;
	return x->arrival < y->arrival ? -1 : x->arrival > y->arrival;
}

/* qsort_r's comparison of two places (arg: the nodes). */
static int
decide_place_cmp(const void *a, const void *b, void *arg)
{
	const struct decide_node *nodes = arg;

	return decide_order(&nodes[((const struct decide_place *)a)->node],
	    &nodes[((const struct decide_place *)b)->node]);
}

/* The first node in state s in group-rank order, or DECIDE_NO_NODE. */
static size_t
decide_first(const struct decide_view *v, enum decide_nstate s)
{
	size_t i, best = DECIDE_NO_NODE;

	for (i = 0; i < v->nnodes; i++)
		if (v->nodes[i].state == s && (best == DECIDE_NO_NODE ||
		    decide_order(&v->nodes[i], &v->nodes[best]) < 0))
			best = i;
	return best;
}

/* Is a node of the running round (or one stopping) disconnected? */
static int
decide_offline(const struct decide_view *v)
{
	size_t i;

	for (i = 0; i < v->nnodes; i++)
		if (v->nodes[i].offline && (v->nodes[i].state ==
		    DECIDE_RUNNING || v->nodes[i].state == DECIDE_DONE ||
		    v->nodes[i].state == DECIDE_FAILED ||
		    v->nodes[i].state == DECIDE_STOPPING))
			return 1;
	return 0;
}

/* The name of node i in texts ("?" for none). */
static const char *
decide_name(const struct decide_view *v, size_t i)
{
	return i < v->nnodes && v->nodes[i].name != NULL ? v->nodes[i].name :
	    "?";
}

/* The job cannot go on. */
static enum decide_verdict
decide_fail(struct decide_out *o, uint8_t reason, size_t node)
{
	o->reason = reason;
	o->node = node;
	return o->verdict = DECIDE_FAIL;
}

/* A new round forms (the text is written by the caller). */
static enum decide_verdict
decide_new_round(struct decide_out *o, size_t node)
{
	o->node = node;
	return o->verdict = DECIDE_NEW_ROUND;
}

/* Fewer than MIN nodes are left of a job that ran (lost: the node that
 * went, or DECIDE_NO_NODE). */
static enum decide_verdict
decide_below_min(const struct decide_view *v, struct decide_out *o,
    size_t lost)
{
	if (lost != DECIDE_NO_NODE)
		snprintf(o->text, sizeof(o->text), "node %s was lost and %zu "
		    "node(s) remain, fewer than the minimum %u",
		    decide_name(v, lost), decide_live(v), v->job.min);
	else
		snprintf(o->text, sizeof(o->text), "%zu node(s) remain, fewer "
		    "than the minimum %u", decide_live(v), v->job.min);
	return decide_fail(o, RDZV_FAIL_BELOW_MIN, lost);
}

/* Decide the round: the first MAX waiting nodes in group-rank order are
 * its members, the others spares. */
static enum decide_verdict
decide_round(const struct decide_view *v, struct decide_place *order,
    struct decide_out *o)
{
	size_t i, n = 0;
	uint32_t base = 0;

	for (i = 0; i < v->nnodes; i++)
		if (v->nodes[i].state == DECIDE_WAITING)
			order[n++].node = i;
	/* const only for qsort_r's sake: the nodes are read, not written */
	qsort_r(order, n, sizeof(*order), decide_place_cmp,
	    (void *)(uintptr_t)v->nodes);
	o->nmembers = n < v->job.max ? n : v->job.max;
	o->nspares = n - o->nmembers;
	for (i = 0; i < n; i++) {
		order[i].rank_base = i < o->nmembers ? base : 0;
		if (i < o->nmembers)
			base += v->nodes[order[i].node].nproc;
	}
	o->world = base;
	snprintf(o->text, sizeof(o->text), "%zu node(s), %zu spare(s)",
	    o->nmembers, o->nspares);
	return o->verdict = DECIDE_ROUND;
}

/* A round is being formed: close it, fail, or mind the last call. */
static enum decide_verdict
decide_forming(const struct decide_view *v, struct decide_place *order,
    struct decide_out *o)
{
	const struct decide_job *j = &v->job;
	size_t nw = v->count[DECIDE_WAITING], live = decide_live(v);

	if (j->started && live < j->min)
		return decide_below_min(v, o, decide_first(v, DECIDE_GONE));
	if (nw > 0 && (nw >= j->max || (nw >= j->min && (j->last_call_over ||
	    (j->started && live == nw)))))
		return decide_round(v, order, o);
	if (j->join_timeout_over) {
		snprintf(o->text, sizeof(o->text), "no round could be formed "
		    "within join_timeout (%u s): %zu of at least %u nodes "
		    "joined", j->join_timeout_ms / 1000, nw, j->min);
		return decide_fail(o, RDZV_FAIL_TIMEOUT, DECIDE_NO_NODE);
	}
	if (nw > 0 && nw >= j->min)
		return o->verdict = j->last_call_armed ? DECIDE_NOTHING :
		    DECIDE_ARM_LAST_CALL;
	return o->verdict = j->last_call_armed ? DECIDE_DISARM_LAST_CALL :
	    DECIDE_NOTHING;
}

/* A member is lost: a new round without it, or too few are left. */
static enum decide_verdict
decide_lost(const struct decide_view *v, struct decide_out *o)
{
	size_t lost = decide_first(v, DECIDE_LOST);

	if (decide_live(v) < v->job.min)
		return decide_below_min(v, o, lost);
	snprintf(o->text, sizeof(o->text), "node %s was lost",
	    decide_name(v, lost));
	return decide_new_round(o, lost);
}

/* A member's workers failed: a new round, spending a restart unless a
 * member's connection is down (the failure is blamed on that loss), or
 * the end of the job when no restart is left. */
static enum decide_verdict
decide_failed(const struct decide_view *v, struct decide_out *o)
{
	size_t f = decide_first(v, DECIDE_FAILED);
	const char *why = f < v->nnodes ? v->nodes[f].why : NULL;

	if (!decide_offline(v)) {
		if (!budget_spend(&o->restarts, v->job.max_restarts)) {
			snprintf(o->text, sizeof(o->text), "workers failed on "
			    "node %s and no restarts are left (%u/%u spent)",
			    decide_name(v, f), o->restarts,
			    v->job.max_restarts);
			return decide_fail(o, RDZV_FAIL_RESTARTS, f);
		}
		o->spent = 1;
	}
	/* the other nodes hear why: "... on node h (pid 1): rank 2 hung" */
	snprintf(o->text, sizeof(o->text), "workers failed on node %s%s%s",
	    decide_name(v, f), why != NULL && *why != '\0' ? ": " : "",
	    why != NULL ? why : "");
	return decide_new_round(o, f);
}

/* A round runs: lost members, failures, the end, scale-up. */
static enum decide_verdict
decide_running(const struct decide_view *v, struct decide_out *o)
{
	size_t in = v->count[DECIDE_RUNNING] + v->count[DECIDE_DONE], w;

	if (v->count[DECIDE_LOST] > 0)
		return decide_lost(v, o);
	if (v->count[DECIDE_FAILED] > 0)
		return decide_failed(v, o);
	if (v->count[DECIDE_RUNNING] == 0 && v->count[DECIDE_DONE] > 0) {
		snprintf(o->text, sizeof(o->text), "every node's workers "
		    "succeeded");
		return o->verdict = DECIDE_FINISH;
	}
	if (v->count[DECIDE_WAITING] > 0 && in < v->job.max) {
		w = decide_first(v, DECIDE_WAITING);
		snprintf(o->text, sizeof(o->text), "node %s joined",
		    decide_name(v, w));
		return decide_new_round(o, w);
	}
	return o->verdict = DECIDE_NOTHING;
}

/* What happens next (see decide.h). */
enum decide_verdict
decide(const struct decide_view *v, struct decide_place *order,
    struct decide_out *o)
{
	memset(o, 0, sizeof(*o));
	o->node = DECIDE_NO_NODE;
	o->restarts = v->job.restarts;
	switch (v->job.phase) {
	case DECIDE_JOB_FORMING:
		return decide_forming(v, order, o);
	case DECIDE_JOB_RUNNING:
		return decide_running(v, o);
	default:
		return o->verdict = DECIDE_NOTHING;
	}
}

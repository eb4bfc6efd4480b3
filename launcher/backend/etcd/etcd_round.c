/*
 * etcd_round.c: the etcd rendezvous' decision (etcd_round.h), a pure
 * function of one snapshot of the run's keys.  It decides nothing itself:
 * it creates the job's state key when there is none, turns the snapshot
 * into the facts of the round rule (rendezvous/engine/decide.c, which the
 * c10d engine asks too) and the rule's answer into the next state key.
 *
 * Facts from the keys, for round R of the state key:
 *
 *   JOINING R    a node key "wait" for R: waiting; any other: yet to come
 *                back (stopping); a member of the last round whose key is
 *                gone: gone (named if too few are left)
 *   RUNNING R    a member's key "wait"/"done"/"failed" for R: running,
 *                done, failed (a member's key naming another round:
 *                running); a member whose key is gone: lost; another
 *                node "wait": a spare; "done"/"failed": left behind
 *
 * Node keys are matched to members by id through a sorted index: the
 * whole decision is O(K log K) in the run's K nodes.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decide.h"
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

_Static_assert(sizeof(phase_names) / sizeof(phase_names[0]) == ER__PHASES,
    "phase_names does not match enum er_phase");
_Static_assert(sizeof(st_names) / sizeof(st_names[0]) == ER__STS,
    "st_names does not match enum er_st");

/* The round rule's facts of one snapshot (er_facts_*). */
struct er_facts {
	struct decide_view	 v;
	struct decide_node	*nodes;	/* the keys, then lost members */
	struct decide_place	*order;
	size_t			*by_id;	/* key indices sorted by id */
	int			*member; /* per key: member index, or -1 */
};

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

/* qsort_r/bsearch order of two keys by id (arg: the view). */
static int
er_id_cmp(const void *a, const void *b, void *arg)
{
	const struct er_view *v = arg;

	return strcmp(v->nodes[*(const size_t *)a].id,
	    v->nodes[*(const size_t *)b].id);
}

/* The key of node id, by binary search in f->by_id; or -1. */
static long
er_find(const struct er_view *v, const struct er_facts *f, const char *id)
{
	size_t lo = 0, hi = v->nnodes, mid;
	int c;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if ((c = strcmp(id, v->nodes[f->by_id[mid]].id)) == 0)
			return (long)f->by_id[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return -1;
}

/* Free the facts. */
static void
er_facts_free(struct er_facts *f)
{
	free(f->nodes);
	free(f->order);
	free(f->by_id);
	free(f->member);
}

/* What one node key is to the round rule (see the table above). */
static enum decide_nstate
er_key_state(const struct er_state *s, const struct er_node *n, int member)
{
	if (s->phase == ER_JOINING)
		return n->st == ER_WAIT && n->round == s->round ?
		    DECIDE_WAITING : DECIDE_STOPPING;
	if (member < 0)
		return n->st == ER_WAIT ? DECIDE_WAITING : DECIDE_STOPPING;
	if (n->round != s->round || n->st == ER_WAIT)
		return DECIDE_RUNNING;
	return n->st == ER_DONE ? DECIDE_DONE : DECIDE_FAILED;
}

/* One node key's facts. */
static void
er_key_facts(const struct er_view *v, size_t i, int member,
    struct decide_node *d)
{
	const struct er_node *n = &v->nodes[i];

	memset(d, 0, sizeof(*d));
	d->name = n->id;
	d->host = n->host;
	d->addr = n->addr;
	d->why = n->why;
	d->arrival = (uint64_t)n->create_rev;
	d->node_rank = n->node_rank;
	d->group_rank = member;
	d->nproc = n->nproc;
	d->port = n->port;
	d->state = (uint8_t)er_key_state(&v->state, n, member);
}

/* A member of the last round whose key is gone: lost (RUNNING) or gone
 * (JOINING); named by its id, ordered by its group rank. */
static void
er_gone_facts(const struct er_state *s, size_t m, struct decide_node *d)
{
	memset(d, 0, sizeof(*d));
	d->name = s->members[m].id;
	d->host = "";
	d->addr = "";
	d->arrival = m;
	d->node_rank = -1;
	d->group_rank = (int32_t)m;
	d->nproc = s->members[m].nproc;
	d->state = s->phase == ER_RUNNING ? DECIDE_LOST : DECIDE_GONE;
}

/* The round rule's view of snapshot v; -1 when out of memory. */
static int
er_facts(const struct er_view *v, struct er_facts *f)
{
	const struct er_state *s = &v->state;
	size_t i, n = v->nnodes, k = v->nnodes + s->nmembers;
	long at;

	memset(f, 0, sizeof(*f));
	f->nodes = calloc(k + 1, sizeof(*f->nodes));
	f->order = calloc(k + 1, sizeof(*f->order));
	f->by_id = calloc(n + 1, sizeof(*f->by_id));
	f->member = calloc(n + 1, sizeof(*f->member));
	if (f->nodes == NULL || f->order == NULL || f->by_id == NULL ||
	    f->member == NULL)
		return -1;
	for (i = 0; i < n; i++) {
		f->by_id[i] = i;
		f->member[i] = -1;
	}
	/* const only for qsort_r's sake: the view is read, not written */
	qsort_r(f->by_id, n, sizeof(*f->by_id), er_id_cmp,
	    (void *)(uintptr_t)v);
	for (i = 0; i < s->nmembers; i++)
		if ((at = er_find(v, f, s->members[i].id)) >= 0)
			f->member[at] = (int)i;
		else
			er_gone_facts(s, i, &f->nodes[n++]);
	for (i = 0; i < v->nnodes; i++)
		er_key_facts(v, i, f->member[i], &f->nodes[i]);
	f->v.nodes = f->nodes;
	f->v.nnodes = n;
	f->v.job.phase = s->phase == ER_JOINING ? DECIDE_JOB_FORMING :
	    s->phase == ER_RUNNING ? DECIDE_JOB_RUNNING : DECIDE_JOB_CLOSED;
	f->v.job.round = s->round;
	f->v.job.min = s->min;
	f->v.job.max = s->max;
	f->v.job.max_restarts = s->max_restarts;
	f->v.job.restarts = s->restarts;
	f->v.job.join_timeout_ms = v->join_ms;
	f->v.job.started = (uint8_t)(s->started != 0);
	f->v.job.last_call_armed = (uint8_t)(v->last_call_armed != 0);
	f->v.job.last_call_over = (uint8_t)(v->last_call_over != 0);
	f->v.job.join_timeout_over = (uint8_t)(v->join_over != 0);
	decide_count(&f->v);
	return 0;
}

/* The decided round as the next state: members in group-rank order, the
 * job store of group rank 0. */
static void
er_round(const struct er_facts *f, const struct decide_out *o,
    struct er_state *next)
{
	const struct decide_node *d;
	size_t i;

	next->phase = ER_RUNNING;
	next->started = 1;
	next->nmembers = o->nmembers;
	next->world = o->world;
	for (i = 0; i < o->nmembers; i++) {
		d = &f->nodes[f->order[i].node];
		snprintf(next->members[i].id, sizeof(next->members[i].id), "%s",
		    d->name);
		next->members[i].nproc = d->nproc;
	}
	d = &f->nodes[f->order[0].node];
	snprintf(next->addr, sizeof(next->addr), "%s", d->addr);
	next->port = d->port;
}

/* The rule's answer as the next state (or a change of the last call). */
static enum er_action
er_carry(const struct er_facts *f, const struct decide_out *o,
    struct er_state *next)
{
	next->restarts = o->restarts;
	switch (o->verdict) {
	case DECIDE_ARM_LAST_CALL:
		return ER_ARM_LAST_CALL;
	case DECIDE_DISARM_LAST_CALL:
		return ER_DISARM_LAST_CALL;
	case DECIDE_ROUND:
		er_round(f, o, next);
		break;
	case DECIDE_NEW_ROUND:
		next->round++;
		next->phase = ER_JOINING;
		break;
	case DECIDE_FAIL:
		next->phase = ER_FAILED;
		snprintf(next->culprit, sizeof(next->culprit), "%s",
		    o->reason == RDZV_FAIL_RESTARTS && o->node < f->v.nnodes ?
		    f->nodes[o->node].name : "");
		break;
	case DECIDE_FINISH:
		next->phase = ER_FINISHED;
		break;
	default:
		return ER_NONE;
	}
	/* the rule's words may be longer than the state's field: cut */
	snprintf(next->why, sizeof(next->why), "%.*s",
	    (int)sizeof(next->why) - 1, o->text);
	return ER_WRITE;
}

/* What the job does next (see etcd_round.h). */
enum er_action
er_decide(const struct er_view *v, struct er_state *next)
{
	struct er_facts f;
	struct decide_out o;
	enum er_action a = ER_NONE;

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
	if (v->state.phase != ER_JOINING && v->state.phase != ER_RUNNING)
		return ER_NONE;
	if (er_facts(v, &f) == 0) {	/* else: the next snapshot retries */
		decide(&f.v, f.order, &o);
		a = er_carry(&f, &o, next);
	}
	er_facts_free(&f);
	return a;
}

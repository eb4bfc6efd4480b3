/*
 * job.c: a job's state machine (rdzv_impl.h).  Every job event goes
 * through one decision table, job_actions[job state][event]; a job's
 * state changes only in job_enter().  Here a round is formed and decided
 * (job_check, job_complete), a restart is spent (act_failed_running), and
 * a job fails or finishes.
 */
#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include "budget.h"
#include "log.h"
#include "monotime.h"
#include "rdzv.h"
#include "rdzv_impl.h"

/* How often waiting nodes hear about progress, at most. */
#define STATUS_PERIOD_MS	1000

static const char *const jstate_names[] = { "JOINING", "RUNNING", "CLOSED" };

static void job_check(struct job *);

/* The name of a job state. */
const char *
rdzv_jstate_name(enum rdzv_jstate s)
{
	return s < RDZV_J__COUNT ? jstate_names[s] : "?";
}

/* Move a job to a new state. */
static void
job_enter(struct job *j, enum rdzv_jstate s)
{
	if (j->state == s)
		return;
	log_info("rdzv job=%s round=%u %s -> %s", j->run_id, j->round,
	    jstate_names[j->state], jstate_names[s]);
	j->state = s;
}

/* Nodes that could take part in a next round. */
static size_t
job_live(const struct job *j)
{
	return j->nnodes - j->count[RDZV_N_NEW];
}

/* Nodes in the running round. */
static size_t
job_participants(const struct job *j)
{
	return j->count[RDZV_N_ACTIVE] + j->count[RDZV_N_DONE] +
	    j->count[RDZV_N_STOPPING];
}

/* Stop the round-forming timers. */
static void
job_disarm(struct job *j)
{
	evtimer_del(j->last_call);
	j->last_call_armed = 0;
	evtimer_del(j->join_timer);
}

/* Milliseconds left of the last call, or RDZV_NO_DEADLINE. */
static uint32_t
job_last_call_left(const struct job *j)
{
	int64_t ms;

	if (!j->last_call_armed)
		return RDZV_NO_DEADLINE;
	ms = -monotime_since_ms(&j->last_call_at);
	return ms < 0 ? 0 : (uint32_t)ms;
}

/* Tell one node how the round being formed is doing. */
void
job_status_to(struct job *j, struct node *n)
{
	struct rdzv_msg m;

	rdzv_proto_init(&m, RDZV_OP_STATUS);
	m.round = j->round;
	m.joined = (uint32_t)(n->state == RDZV_N_SPARE ? job_participants(j) :
	    j->count[RDZV_N_WAIT]);
	m.min_nodes = j->min;
	m.max_nodes = j->max;
	m.last_call_ms = job_last_call_left(j);
	m.role = n->state == RDZV_N_SPARE ? RDZV_ROLE_SPARE : RDZV_ROLE_WAITING;
	node_send(n, &m);
}

/* Progress changed: waiting nodes hear about it within STATUS_PERIOD_MS
 * (coalesced, so a round of N nodes costs O(N) messages, not O(N^2)). */
static void
job_status_dirty(struct job *j)
{
	struct timeval tv = ms_tv(STATUS_PERIOD_MS);

	if (!j->status_armed) {
		j->status_armed = 1;
		evtimer_add(j->status_timer, &tv);
	}
}

/* The coalesced progress broadcast. */
static void
job_status_cb(int fd, short what, void *arg)
{
	struct job *j = arg;
	struct node *n;

	j->status_armed = 0;
	if (j->state != RDZV_J_JOINING)
		return;
	TAILQ_FOREACH(n, &j->nodes, entry)
		if (n->state == RDZV_N_WAIT)
			job_status_to(j, n);
}

/* Tell one participant its place in the decided round. */
void
job_round_to(struct job *j, struct node *n)
{
	struct rdzv_msg m;

	rdzv_proto_init(&m, RDZV_OP_ROUND);
	m.round = j->round;
	m.group_rank = n->group_rank;
	m.group_world_size = j->gws;
	m.rank_base = n->rank_base;
	m.world_size = j->world;
	m.restart_count = j->restarts;
	snprintf(m.addr, sizeof(m.addr), "%s", j->master);
	m.port = j->master_port;
	node_send(n, &m);
}

/* Decide the round: the first MAX waiting nodes in rank order take part,
 * the rest are parked as spares. */
static void
job_complete(struct job *j)
{
	struct node **v, *n;
	size_t nw = j->count[RDZV_N_WAIT], i = 0, np;
	uint32_t world = 0, base = 0;

	if ((v = calloc(nw, sizeof(*v))) == NULL) {
		job_fail(j, RDZV_FAIL_CLOSED, "out of memory deciding a round");
		return;
	}
	TAILQ_FOREACH(n, &j->nodes, entry)
		if (n->state == RDZV_N_WAIT)
			v[i++] = n;
	qsort(v, nw, sizeof(*v), node_cmp);
	np = nw < j->max ? nw : j->max;
	for (i = 0; i < np; i++)
		world += v[i]->nproc;
	job_disarm(j);
	job_enter(j, RDZV_J_RUNNING);
	j->started = 1;
	j->r->stats.rounds++;
	log_info("rdzv job=%s round=%u decided nodes=%zu spares=%zu world=%u "
	    "store=%s:%u", j->run_id, j->round, np, nw - np, world, v[0]->addr,
	    v[0]->port);
	j->gws = (uint32_t)np;
	j->world = world;
	snprintf(j->master, sizeof(j->master), "%s", v[0]->addr);
	j->master_port = v[0]->port;
	for (i = 0; i < np; i++) {
		node_enter(v[i], RDZV_N_ACTIVE);
		v[i]->group_rank = (int)i;
		v[i]->rank_base = base;
		job_round_to(j, v[i]);
		base += v[i]->nproc;
	}
	for (; i < nw; i++) {
		node_enter(v[i], RDZV_N_SPARE);
		job_status_to(j, v[i]);
	}
	free(v);
}

/* Arm the last call: the round closes when it ends with MIN nodes in. */
static void
job_arm_last_call(struct job *j)
{
	struct timeval tv = ms_tv(j->last_call_ms);

	if (j->last_call_armed)
		return;
	j->last_call_armed = 1;
	j->last_call_at = monotime_after(j->last_call_ms);
	evtimer_add(j->last_call, &tv);
	job_status_dirty(j);
}

/*
 * Should the round being formed close now?  At MAX nodes: yes.  At MIN or
 * more: after the last call, or at once when the job already ran and
 * every node it knows has come back (nobody left to wait for).
 */
static void
job_check(struct job *j)
{
	size_t nw = j->count[RDZV_N_WAIT];

	if (j->state != RDZV_J_JOINING)
		return;
	if (nw >= j->max || (nw >= j->min && nw > 0 && j->started &&
	    j->count[RDZV_N_STOPPING] == 0)) {
		job_complete(j);
		return;
	}
	if (nw >= j->min && nw > 0) {
		job_arm_last_call(j);
	} else if (j->last_call_armed) {
		evtimer_del(j->last_call);
		j->last_call_armed = 0;
		job_status_dirty(j);
	}
}

/* Start forming the next round: participants stop their workers. */
static void
job_new_round(struct job *j, const char *why)
{
	struct timeval tv = ms_tv(j->join_ms);
	struct rdzv_msg m;
	struct node *n;

	j->round++;
	job_enter(j, RDZV_J_JOINING);
	log_info("rdzv job=%s round=%u forming restarts=%u/%u why=\"%s\"",
	    j->run_id, j->round, j->restarts, j->max_restarts, why);
	rdzv_proto_init(&m, RDZV_OP_RESTART);
	m.round = j->round;
	snprintf(m.text, sizeof(m.text), "%s", why);
	TAILQ_FOREACH(n, &j->nodes, entry) {
		if (n->state == RDZV_N_ACTIVE || n->state == RDZV_N_DONE) {
			node_enter(n, RDZV_N_STOPPING);
			node_send(n, &m);
		} else if (n->state == RDZV_N_SPARE)
			node_enter(n, RDZV_N_WAIT);
	}
	evtimer_add(j->join_timer, &tv);
	job_check(j);
	job_status_dirty(j);
}

/* The job cannot go on: every node hears why; the job is closed. */
void
job_fail(struct job *j, uint8_t reason, const char *why)
{
	struct rdzv_msg m;
	struct node *n;

	job_disarm(j);
	job_enter(j, RDZV_J_CLOSED);
	log_info("rdzv job=%s round=%u failed reason=%u why=\"%s\"", j->run_id,
	    j->round, reason, why);
	rdzv_proto_init(&m, RDZV_OP_FAIL);
	m.reason = reason;
	snprintf(m.text, sizeof(m.text), "%s", why);
	TAILQ_FOREACH(n, &j->nodes, entry)
		node_send(n, &m);
}

/* Every participant is done: the job is over, everyone exits 0. */
static void
job_finish(struct job *j)
{
	struct rdzv_msg m;
	struct node *n;

	job_disarm(j);
	job_enter(j, RDZV_J_CLOSED);
	rdzv_proto_init(&m, RDZV_OP_FINISHED);
	TAILQ_FOREACH(n, &j->nodes, entry)
		node_send(n, &m);
}

/* Is any participant of the running round disconnected? */
static int
job_lost_participant(const struct job *j)
{
	const struct node *n;

	TAILQ_FOREACH(n, &j->nodes, entry)
		if (n->peer == NULL && (n->state == RDZV_N_ACTIVE ||
		    n->state == RDZV_N_DONE || n->state == RDZV_N_STOPPING))
			return 1;
	return 0;
}

/* Fewer than MIN nodes remain of a job that ran: it cannot go on. */
static int
job_below_min(struct job *j, const char *who)
{
	char why[RDZV_TEXT_MAX + 1];

	if (!j->started || job_live(j) >= j->min)
		return 0;
	snprintf(why, sizeof(why), "node %s was lost and %zu node(s) remain, "
	    "fewer than the minimum %u", who, job_live(j), j->min);
	job_fail(j, RDZV_FAIL_BELOW_MIN, why);
	return 1;
}

/* Nothing to do for this event in this state. */
static void
act_none(struct job *j, struct node *n)
{
}

/* A node joins while the round is being formed. */
static void
act_join_forming(struct job *j, struct node *n)
{
	node_enter(n, RDZV_N_WAIT);
	job_check(j);
	if (n->state == RDZV_N_WAIT)
		job_status_to(j, n);
	job_status_dirty(j);
}

/* A node joins a running job: scale up below MAX, else park it. */
static void
act_join_running(struct job *j, struct node *n)
{
	char b[RDZV_HOST_MAX + 32], why[RDZV_HOST_MAX + 64];

	if (job_participants(j) < j->max) {
		node_enter(n, RDZV_N_WAIT);
		snprintf(why, sizeof(why), "node %s joined",
		    node_name(n, b, sizeof(b)));
		job_new_round(j, why);
	} else {
		node_enter(n, RDZV_N_SPARE);
		job_status_to(j, n);
	}
}

/* A node joins a job that is over. */
static void
act_join_closed(struct job *j, struct node *n)
{
	struct rdzv_msg m;

	rdzv_proto_init(&m, RDZV_OP_FAIL);
	m.reason = RDZV_FAIL_CLOSED;
	snprintf(m.text, sizeof(m.text), "rendezvous %s is closed", j->run_id);
	node_send(n, &m);
	node_remove(n);
}

/* A participant's workers failed: spend one restart, or end the job.  A
 * failure while a participant is disconnected is blamed on that node's
 * loss, which costs no restart. */
static void
act_failed_running(struct job *j, struct node *n)
{
	char why[RDZV_TEXT_MAX * 2 + RDZV_HOST_MAX + 64], b[RDZV_HOST_MAX + 32];

	if (n->state != RDZV_N_ACTIVE && n->state != RDZV_N_DONE)
		return;
	node_name(n, b, sizeof(b));
	if (!job_lost_participant(j)) {
		if (!budget_spend(&j->restarts, j->max_restarts)) {
			snprintf(why, sizeof(why), "workers failed on node %s "
			    "and no restarts are left (%u/%u spent)", b,
			    j->restarts, j->max_restarts);
			job_fail(j, RDZV_FAIL_RESTARTS, why);
			return;
		}
		j->r->stats.restarts++;
	}
	/* the other nodes hear why: "... on node h:1: rank 2 hung ..." */
	snprintf(why, sizeof(why), "workers failed on node %s%s%s", b,
	    n->failed_why[0] != '\0' ? ": " : "", n->failed_why);
	node_enter(n, RDZV_N_WAIT);
	job_new_round(j, why);
}

/* SPENT: a node says how many restarts the job had spent before this
 * daemon knew it (a restarted daemon starts every job at 0); the budget
 * keeps the larger count, so a daemon restart gives no restarts back. */
void
job_spent(struct job *j, struct node *n, uint32_t carried)
{
	char b[RDZV_HOST_MAX + 32];

	if (!budget_carry(&j->restarts, carried, j->max_restarts))
		return;
	node_name(n, b, sizeof(b));
	log_info("rdzv job=%s restarts=%u/%u carried by node %s", j->run_id,
	    j->restarts, j->max_restarts, b);
}

/* A node stopped its workers (or they failed) after RESTART. */
static void
act_stopped_forming(struct job *j, struct node *n)
{
	if (n->state != RDZV_N_STOPPING)
		return;
	node_enter(n, RDZV_N_WAIT);
	job_check(j);
	job_status_dirty(j);
}

/* A participant's workers are all done: the job ends when all are. */
static void
act_done_running(struct job *j, struct node *n)
{
	if (n->state != RDZV_N_ACTIVE)
		return;
	node_enter(n, RDZV_N_DONE);
	if (j->count[RDZV_N_ACTIVE] == 0)
		job_finish(j);
}

/* A node died or left while the round is being formed. */
static void
act_gone_forming(struct job *j, struct node *n)
{
	char b[RDZV_HOST_MAX + 32];

	node_name(n, b, sizeof(b));
	node_remove(n);
	if (!job_below_min(j, b)) {
		job_check(j);
		job_status_dirty(j);
	}
}

/* A node died or left a running job: a new round without it. */
static void
act_gone_running(struct job *j, struct node *n)
{
	char b[RDZV_HOST_MAX + 32], why[RDZV_HOST_MAX + 64];
	int was_in = n->state == RDZV_N_ACTIVE || n->state == RDZV_N_DONE;

	node_name(n, b, sizeof(b));
	node_remove(n);
	if (!was_in || job_below_min(j, b))
		return;
	snprintf(why, sizeof(why), "node %s was lost", b);
	job_new_round(j, why);
}

/* A node of a closed job goes away. */
static void
act_gone_closed(struct job *j, struct node *n)
{
	node_remove(n);
}

/* The last call ended: close the round if MIN nodes are in. */
static void
act_last_call(struct job *j, struct node *n)
{
	j->last_call_armed = 0;
	if (j->count[RDZV_N_WAIT] >= j->min && j->count[RDZV_N_WAIT] > 0)
		job_complete(j);
}

/* join_timeout passed and no round could be formed. */
static void
act_join_timeout(struct job *j, struct node *n)
{
	char why[RDZV_TEXT_MAX + 1];

	snprintf(why, sizeof(why), "no round could be formed within "
	    "join_timeout (%u s): %zu of at least %u nodes joined",
	    j->join_ms / 1000, j->count[RDZV_N_WAIT], j->min);
	job_fail(j, RDZV_FAIL_TIMEOUT, why);
}

typedef void (*action)(struct job *, struct node *);

/* The decision table: what each event does in each job state. */
static const action job_actions[RDZV_J__COUNT][EV__COUNT] = {
	[RDZV_J_JOINING] = {
		[EV_JOIN] = act_join_forming,
		[EV_FAILED] = act_stopped_forming,
		[EV_STOPPED] = act_stopped_forming,
		[EV_DONE] = act_none,
		[EV_GONE] = act_gone_forming,
		[EV_LASTCALL] = act_last_call,
		[EV_JOINTIMEOUT] = act_join_timeout,
	},
	[RDZV_J_RUNNING] = {
		[EV_JOIN] = act_join_running,
		[EV_FAILED] = act_failed_running,
		[EV_STOPPED] = act_none,
		[EV_DONE] = act_done_running,
		[EV_GONE] = act_gone_running,
		[EV_LASTCALL] = act_none,
		[EV_JOINTIMEOUT] = act_none,
	},
	[RDZV_J_CLOSED] = {
		[EV_JOIN] = act_join_closed,
		[EV_FAILED] = act_none,
		[EV_STOPPED] = act_none,
		[EV_DONE] = act_none,
		[EV_GONE] = act_gone_closed,
		[EV_LASTCALL] = act_none,
		[EV_JOINTIMEOUT] = act_none,
	},
};

/* The hash bucket of a run id (FNV-1a). */
static size_t
job_bucket(const char *run_id)
{
	uint32_t h = 2166136261u;

	for (; *run_id != '\0'; run_id++)
		h = (h ^ (unsigned char)*run_id) * 16777619u;
	return h % JOB_BUCKETS;
}

/* The job of run_id, or NULL. */
struct job *
job_find(const struct rdzv *r, const char *run_id)
{
	struct job *j;

	for (j = r->hash[job_bucket(run_id)]; j != NULL; j = j->hnext)
		if (strcmp(j->run_id, run_id) == 0)
			return j;
	return NULL;
}

/* Link j into the engine's list and run id hash. */
static void
job_link(struct rdzv *r, struct job *j)
{
	TAILQ_INSERT_TAIL(&r->jobs, j, entry);
	r->njobs++;
	if (j->run_id != NULL) {
		j->hnext = r->hash[job_bucket(j->run_id)];
		r->hash[job_bucket(j->run_id)] = j;
	}
}

/* Unlink j from the engine's list and run id hash. */
static void
job_unlink(struct rdzv *r, struct job *j)
{
	struct job **pp;

	TAILQ_REMOVE(&r->jobs, j, entry);
	r->njobs--;
	if (j->run_id == NULL)
		return;
	for (pp = &r->hash[job_bucket(j->run_id)]; *pp != NULL && *pp != j;)
		pp = &(*pp)->hnext;
	if (*pp == j)
		*pp = j->hnext;
}

/* Free a job. */
void
job_free(struct job *j)
{
	while (!TAILQ_EMPTY(&j->nodes))
		node_remove(TAILQ_FIRST(&j->nodes));
	job_unlink(j->r, j);
	event_free(j->last_call);
	event_free(j->join_timer);
	event_free(j->status_timer);
	if (j->orphan_timer != NULL)
		event_free(j->orphan_timer);
	free(j->run_id);
	free(j);
}

/* Run one event through the table; a job left without nodes is freed
 * (a later JOIN with its id starts a new job). */
void
job_dispatch(struct job *j, enum ev ev, struct node *n)
{
	job_actions[j->state][ev](j, n);
	if (j->nnodes == 0) {
		log_info("rdzv job=%s forgotten: no nodes left", j->run_id);
		job_free(j);
	}
}

/* Last-call timer. */
static void
job_last_call_cb(int fd, short what, void *arg)
{
	job_dispatch(arg, EV_LASTCALL, NULL);
}

/* Join-timeout timer. */
static void
job_join_timer_cb(int fd, short what, void *arg)
{
	job_dispatch(arg, EV_JOINTIMEOUT, NULL);
}

/* A new job from its first JOIN's parameters, or NULL. */
struct job *
job_new(struct rdzv *r, const struct rdzv_msg *m)
{
	struct job *j;
	struct timeval tv = ms_tv(m->join_timeout_ms);

	if ((j = calloc(1, sizeof(*j))) == NULL)
		return NULL;
	j->r = r;
	TAILQ_INIT(&j->nodes);
	j->run_id = strdup(m->run_id);
	j->last_call = evtimer_new(r->base, job_last_call_cb, j);
	j->join_timer = evtimer_new(r->base, job_join_timer_cb, j);
	j->status_timer = evtimer_new(r->base, job_status_cb, j);
	if (j->run_id == NULL || j->last_call == NULL || j->join_timer == NULL ||
	    j->status_timer == NULL) {
		job_link(r, j);		/* job_free unlinks */
		job_free(j);
		return NULL;
	}
	j->min = m->min_nodes;
	j->max = m->max_nodes;
	j->max_restarts = m->max_restarts;
	j->join_ms = m->join_timeout_ms;
	j->last_call_ms = m->last_call_ms;
	j->close_ms = m->close_ms;
	j->ka_ms = m->keepalive_ms;
	j->ka_max = m->keepalive_max;
	job_link(r, j);
	r->stats.jobs_created++;
	evtimer_add(j->join_timer, &tv);
	log_info("rdzv job=%s created nodes=%u:%u max_restarts=%u", j->run_id,
	    j->min, j->max, j->max_restarts);
	return j;
}

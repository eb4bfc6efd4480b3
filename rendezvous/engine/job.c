/*
 * job.c: a job's state machine (rdzv_impl.h).  Every event goes through
 * a table with every cell filled, logged in job_dispatch*(): a job's own
 * events (JOIN, the timers) through job_actions[job state][event], a
 * node's (FAILED, STOPPED, DONE, gone) through node_actions[job state]
 * [event][node state]; an ignored event's cell says why.  A job's state
 * changes only in job_enter().  What a round is, and when one is
 * decided, started, failed or finished, is asked of the round rule
 * (decide.c) over the job's view of its nodes (node.c); this file
 * carries the answer out: timers, ROUND, RESTART, FAIL and FINISHED.
 */
#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include "budget.h"
#include "decide.h"
#include "log.h"
#include "monotime.h"
#include "rdzv.h"
#include "rdzv_impl.h"

/* How often waiting nodes hear about progress, at most. */
#define STATUS_PERIOD_MS	1000

static const char *const jstate_names[] = { "JOINING", "RUNNING", "CLOSED" };
static const char *const job_event_names[] = { "JOIN", "LAST-CALL-OVER",
	"JOIN-TIMEOUT" };
static const char *const node_event_names[] = { "FAILED", "STOPPED", "DONE",
	"GONE" };

_Static_assert(sizeof(jstate_names) / sizeof(jstate_names[0]) ==
    RDZV_J__COUNT, "jstate_names does not match enum rdzv_jstate");
_Static_assert(sizeof(job_event_names) / sizeof(job_event_names[0]) ==
    JOB__EVENTS, "job_event_names does not match enum job_event");
_Static_assert(sizeof(node_event_names) / sizeof(node_event_names[0]) ==
    NODE__EVENTS, "node_event_names does not match enum node_event");

/* What each job state is to the round rule. */
static const enum decide_phase decide_phase_of[] = {
	[RDZV_J_JOINING] = DECIDE_JOB_FORMING,
	[RDZV_J_RUNNING] = DECIDE_JOB_RUNNING,
	[RDZV_J_CLOSED] = DECIDE_JOB_CLOSED,
};

_Static_assert(sizeof(decide_phase_of) / sizeof(decide_phase_of[0]) ==
    RDZV_J__COUNT, "decide_phase_of does not match enum rdzv_jstate");

static void job_decide(struct job *, int last_call_over, int join_over);
static void job_finish(struct job *);

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

/* Nodes in the running round (a spare's STATUS says how many). */
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

/* DECIDE_ROUND: the members hear their places, the spares are parked.
 * The first round of nodes that carried one (a restarted server) goes on
 * with it, or follows it (carry.c). */
static void
job_complete(struct job *j, const struct decide_out *o)
{
	const struct decide_node *store = &j->view[j->order[0].node];
	struct node *n;
	size_t i;
	int cont = 0;

	if (j->carried && carry_round(j, o, &cont) == -1)
		return;
	job_disarm(j);
	job_enter(j, RDZV_J_RUNNING);
	j->started = 1;
	j->r->stats.rounds++;
	log_info("rdzv job=%s round=%u decided nodes=%zu spares=%zu world=%u "
	    "store=%s:%u", j->run_id, j->round, o->nmembers, o->nspares,
	    o->world, store->addr, store->port);
	j->gws = (uint32_t)o->nmembers;
	j->world = o->world;
	snprintf(j->master, sizeof(j->master), "%s", store->addr);
	j->master_port = (uint16_t)store->port;
	for (i = 0; i < o->nmembers; i++) {
		n = j->slot_node[j->order[i].node];
		node_enter(n, cont && carry_done(n) ? RDZV_N_DONE :
		    RDZV_N_ACTIVE);
		node_place(n, (int)i, j->order[i].rank_base);
		job_round_to(j, n);
	}
	for (; i < o->nmembers + o->nspares; i++) {
		n = j->slot_node[j->order[i].node];
		node_enter(n, RDZV_N_SPARE);
		job_status_to(j, n);
	}
	carry_forget(j);
	if (cont && j->count[RDZV_N_ACTIVE] == 0)
		job_finish(j);	/* every node had finished its part */
}

/* DECIDE_ARM_LAST_CALL: the round closes when it ends with MIN nodes in. */
static void
job_arm_last_call(struct job *j)
{
	struct timeval tv = ms_tv(j->last_call_ms);

	if (j->last_call_armed)
		return;
	j->last_call_armed = 1;
	j->last_call_at = monotime_after(j->last_call_ms);
	evtimer_add(j->last_call, &tv);
}

/* DECIDE_DISARM_LAST_CALL: fewer than MIN wait again. */
static void
job_disarm_last_call(struct job *j)
{
	evtimer_del(j->last_call);
	j->last_call_armed = 0;
}

/* DECIDE_NEW_ROUND: start forming the next round; participants stop
 * their workers. */
static void
job_new_round(struct job *j, const struct decide_out *o)
{
	struct timeval tv = ms_tv(j->join_ms);
	struct rdzv_msg m;
	struct node *n;

	if (o->spent)
		j->r->stats.restarts++;
	j->restarts = o->restarts;
	j->round++;
	job_enter(j, RDZV_J_JOINING);
	log_info("rdzv job=%s round=%u forming restarts=%u/%u why=\"%s\"",
	    j->run_id, j->round, j->restarts, j->max_restarts, o->text);
	rdzv_proto_init(&m, RDZV_OP_RESTART);
	m.round = j->round;
	snprintf(m.text, sizeof(m.text), "%s", o->text);
	TAILQ_FOREACH(n, &j->nodes, entry) {
		if (n->gone)
			continue;
		node_place(n, -1, 0);
		if (n->state == RDZV_N_ACTIVE || n->state == RDZV_N_DONE) {
			node_enter(n, RDZV_N_STOPPING);
			node_send(n, &m);
		} else if (n->state == RDZV_N_SPARE ||
		    n->state == RDZV_N_FAILED)
			node_enter(n, RDZV_N_WAIT);
	}
	evtimer_add(j->join_timer, &tv);
	job_decide(j, 0, 0);
}

/* The job is over (m: FINISHED or FAIL): every node hears it, and a
 * node that was disconnected meanwhile hears it when it comes back
 * (peer_resume), not the round it ran, whose end would never come. */
static void
job_end(struct job *j, const struct rdzv_msg *m)
{
	struct node *n;

	job_disarm(j);
	job_enter(j, RDZV_J_CLOSED);
	free(j->end);
	if ((j->end = malloc(sizeof(*j->end))) != NULL)
		*j->end = *m;
	TAILQ_FOREACH(n, &j->nodes, entry)
		node_send(n, m);
}

/* The job cannot go on: every node hears why; the job is closed. */
void
job_fail(struct job *j, uint8_t reason, const char *why)
{
	struct rdzv_msg m;

	log_info("rdzv job=%s round=%u failed reason=%u why=\"%s\"", j->run_id,
	    j->round, reason, why);
	rdzv_proto_init(&m, RDZV_OP_FAIL);
	m.reason = reason;
	snprintf(m.text, sizeof(m.text), "%s", why);
	job_end(j, &m);
}

/* DECIDE_FINISH: every participant is done, everyone exits 0. */
static void
job_finish(struct job *j)
{
	struct rdzv_msg m;

	rdzv_proto_init(&m, RDZV_OP_FINISHED);
	job_end(j, &m);
}

/* The round rule's view of the job: its facts, its nodes, the timers. */
static void
job_facts(const struct job *j, struct decide_view *v, int last_call_over,
    int join_over)
{
	memset(v, 0, sizeof(*v));
	v->job.phase = decide_phase_of[j->state];
	v->job.round = j->round;
	v->job.min = j->min;
	v->job.max = j->max;
	v->job.max_restarts = j->max_restarts;
	v->job.restarts = j->restarts;
	v->job.join_timeout_ms = j->join_ms;
	v->job.started = (uint8_t)j->started;
	v->job.last_call_armed = (uint8_t)j->last_call_armed;
	v->job.last_call_over = (uint8_t)last_call_over;
	v->job.join_timeout_over = (uint8_t)join_over;
	v->nodes = j->view;
	v->nnodes = j->nnodes;
	memcpy(v->count, j->dcount, sizeof(v->count));
}

/* Ask the round rule what happens now, and carry it out. */
static void
job_decide(struct job *j, int last_call_over, int join_over)
{
	struct decide_view v;
	struct decide_out o;

	job_facts(j, &v, last_call_over, join_over);
	if (decide(&v, j->order, &o) != DECIDE_NOTHING)
		log_debug("rdzv job=%s round=%u decide: %s", j->run_id,
		    j->round, decide_verdict_name(o.verdict));
	switch (o.verdict) {
	case DECIDE_ARM_LAST_CALL:
		job_arm_last_call(j);
		break;
	case DECIDE_DISARM_LAST_CALL:
		job_disarm_last_call(j);
		break;
	case DECIDE_ROUND:
		job_complete(j, &o);
		break;
	case DECIDE_NEW_ROUND:
		job_new_round(j, &o);
		break;
	case DECIDE_FAIL:
		job_fail(j, o.reason, o.text);
		break;
	case DECIDE_FINISH:
		job_finish(j);
		break;
	default:
		break;
	}
	if (j->state == RDZV_J_JOINING)
		job_status_dirty(j);
}

/* While a round runs, a node that waits and did not start a new round
 * is a spare. */
static void
job_park(struct job *j, struct node *n)
{
	if (j->state != RDZV_J_RUNNING || n->state != RDZV_N_WAIT)
		return;
	node_enter(n, RDZV_N_SPARE);
	job_status_to(j, n);
}

/* SPENT: a node says how many restarts the job had spent before this
 * daemon knew it (a restarted daemon starts every job at 0); the budget
 * keeps the larger count, so a daemon restart gives no restarts back. */
void
job_spent(struct job *j, struct node *n, uint32_t carried)
{
	if (!budget_carry(&j->restarts, carried, j->max_restarts))
		return;
	log_info("rdzv job=%s restarts=%u/%u carried by node %s", j->run_id,
	    j->restarts, j->max_restarts, n->name);
}

/* One cell: the action, and for act_ignore why the event is ignored. */
struct job_cell {
	void		(*fn)(struct job *, struct node *);
	const char	*why;
};

/* An ignored event: job_dispatch() logs the cell's reason. */
static void
act_ignore(struct job *j, struct node *n)
{
}

/* JOIN while the round is being formed: it waits (the node is born
 * WAIT) and hears how the round is doing. */
static void
act_join_forming(struct job *j, struct node *n)
{
	job_decide(j, 0, 0);
	if (n->state == RDZV_N_WAIT)
		job_status_to(j, n);
}

/* JOIN while a round runs: scale-up below MAX, else a spare. */
static void
act_join_running(struct job *j, struct node *n)
{
	job_decide(j, 0, 0);
	job_park(j, n);
}

/* JOIN to a job that is over. */
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

/* A member's workers failed: the rule spends a restart (unless a member
 * is disconnected) or ends the job. */
static void
act_failed(struct job *j, struct node *n)
{
	node_enter(n, RDZV_N_FAILED);
	job_decide(j, 0, 0);
}

/* A node told to stop has its workers down (STOPPED, or FAILED while
 * stopping): it waits for the round being formed; if one was decided
 * without it meanwhile, it scales the job up or waits as a spare. */
static void
act_stopped(struct job *j, struct node *n)
{
	node_enter(n, RDZV_N_WAIT);
	job_decide(j, 0, 0);
	job_park(j, n);
}

/* A member's workers are all done: the job ends when every member's are. */
static void
act_done(struct job *j, struct node *n)
{
	node_enter(n, RDZV_N_DONE);
	job_decide(j, 0, 0);
}

/* A node died or left: the rule weighs the loss, then it is forgotten. */
static void
act_gone(struct job *j, struct node *n)
{
	node_gone(n);
	job_decide(j, 0, 0);
	node_remove(n);
}

/* A node of a job that is over goes away. */
static void
act_gone_closed(struct job *j, struct node *n)
{
	node_remove(n);
}

/* The last call ended. */
static void
act_last_call(struct job *j, struct node *n)
{
	j->last_call_armed = 0;
	job_decide(j, 1, 0);
}

/* join_timeout passed without a round. */
static void
act_join_timeout(struct job *j, struct node *n)
{
	job_decide(j, 0, 1);
}

#define DO(f)		{ f, NULL }
#define IGNORE(w)	{ act_ignore, w }

/*
 * What a job event does in each job state.  JOIN comes with the new
 * node (born WAIT); the timers come with none.
 */
static const struct job_cell job_actions[RDZV_J__COUNT][JOB__EVENTS] = {
	[RDZV_J_JOINING] = {
		[JOB_JOIN] = DO(act_join_forming),
		[JOB_LAST_CALL_OVER] = DO(act_last_call),
		[JOB_JOIN_TIMEOUT] = DO(act_join_timeout),
	},
	[RDZV_J_RUNNING] = {
		[JOB_JOIN] = DO(act_join_running),
		[JOB_LAST_CALL_OVER] = IGNORE("no round is being formed"),
		[JOB_JOIN_TIMEOUT] = IGNORE("no round is being formed"),
	},
	[RDZV_J_CLOSED] = {
		[JOB_JOIN] = DO(act_join_closed),
		[JOB_LAST_CALL_OVER] = IGNORE("the job is over"),
		[JOB_JOIN_TIMEOUT] = IGNORE("the job is over"),
	},
};

/* A node event's cells, one per node state. */
#define BY_NODE(wait, spare, active, stopping, done, failed) {		\
	[RDZV_N_WAIT] = wait, [RDZV_N_SPARE] = spare,			\
	[RDZV_N_ACTIVE] = active, [RDZV_N_STOPPING] = stopping,		\
	[RDZV_N_DONE] = done, [RDZV_N_FAILED] = failed }
#define EVERY_NODE(cell)	{ [0 ... RDZV_N__COUNT - 1] = cell }

/* Cells of node states that do not occur while a round is formed (a new
 * round makes members STOPPING, spares and the failed node WAIT). */
#define NOT_FORMING	IGNORE("no round runs while one is formed")
/* The failed node's state lasts only until the rule answers. */
#define BEING_DECIDED	IGNORE("its failure is being decided")

/*
 * What a node's event (its FAILED, STOPPED, DONE; it died or left) does
 * in each job state and each state of that node.  A repeated or late
 * message (a client repeats its last one after resuming) lands in an
 * IGNORE cell and is logged with its reason.
 */
static const struct job_cell
    node_actions[RDZV_J__COUNT][NODE__EVENTS][RDZV_N__COUNT] = {
	[RDZV_J_JOINING] = {
		[NODE_FAILED] = BY_NODE(
		    IGNORE("already waiting for the round being formed"),
		    NOT_FORMING, NOT_FORMING, DO(act_stopped), NOT_FORMING,
		    NOT_FORMING),
		[NODE_STOPPED] = BY_NODE(
		    IGNORE("already waiting for the round being formed"),
		    NOT_FORMING, NOT_FORMING, DO(act_stopped), NOT_FORMING,
		    NOT_FORMING),
		[NODE_DONE] = EVERY_NODE(IGNORE("no round runs: a DONE of "
		    "the round before")),
		[NODE_GONE] = EVERY_NODE(DO(act_gone)),
	},
	[RDZV_J_RUNNING] = {
		[NODE_FAILED] = BY_NODE(
		    IGNORE("a node waiting runs no workers"),
		    IGNORE("a spare runs no workers"), DO(act_failed),
		    DO(act_stopped), DO(act_failed), BEING_DECIDED),
		[NODE_STOPPED] = BY_NODE(
		    IGNORE("already waiting"), IGNORE("already waiting"),
		    IGNORE("not asked to stop: a STOPPED repeated"),
		    DO(act_stopped),
		    IGNORE("not asked to stop: a STOPPED repeated"),
		    BEING_DECIDED),
		[NODE_DONE] = BY_NODE(
		    IGNORE("a node waiting runs no workers"),
		    IGNORE("a spare runs no workers"), DO(act_done),
		    IGNORE("not a member of the running round"),
		    IGNORE("already done: a DONE repeated"), BEING_DECIDED),
		[NODE_GONE] = EVERY_NODE(DO(act_gone)),
	},
	[RDZV_J_CLOSED] = {
		[NODE_FAILED] = EVERY_NODE(IGNORE("the job is over")),
		[NODE_STOPPED] = EVERY_NODE(IGNORE("the job is over")),
		[NODE_DONE] = EVERY_NODE(IGNORE("the job is over")),
		[NODE_GONE] = EVERY_NODE(DO(act_gone_closed)),
	},
};

/* Cells of the tables without an action (0: none; see rdzv.h). */
size_t
rdzv_table_holes(void)
{
	size_t s, e, k, n = 0;

	for (s = 0; s < RDZV_J__COUNT; s++) {
		for (e = 0; e < JOB__EVENTS; e++)
			n += job_actions[s][e].fn == NULL ||
			    (job_actions[s][e].fn == act_ignore &&
			    job_actions[s][e].why == NULL);
		for (e = 0; e < NODE__EVENTS; e++)
			for (k = 0; k < RDZV_N__COUNT; k++)
				n += node_actions[s][e][k].fn == NULL ||
				    (node_actions[s][e][k].fn == act_ignore &&
				    node_actions[s][e][k].why == NULL);
	}
	return n;
}

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
	node_view_free(j);
	if (j->orphan_timer != NULL)
		event_free(j->orphan_timer);
	free(j->end);
	free(j->run_id);
	free(j);
}

/* A job left without nodes is freed (a later JOIN with its id starts a
 * new job). */
static void
job_forget_if_empty(struct job *j)
{
	if (j->nnodes > 0)
		return;
	log_info("rdzv job=%s forgotten: no nodes left", j->run_id);
	job_free(j);
}

/* Run a job event through job_actions (n: the joining node; NULL for a
 * timer), logging it; an ignored event says why. */
void
job_dispatch(struct job *j, enum job_event ev, struct node *n)
{
	const struct job_cell *c = &job_actions[j->state][ev];

	log_debug("rdzv job=%s round=%u event %s in %s%s%s", j->run_id,
	    j->round, job_event_names[ev], jstate_names[j->state],
	    c->fn == act_ignore ? ": ignored, " : "",
	    c->fn == act_ignore ? c->why : "");
	c->fn(j, n);
	job_forget_if_empty(j);
}

/* Run a node's event through node_actions, logging it; an ignored one
 * is logged at info level with its reason (a late or repeated message
 * leaves a trace). */
void
job_dispatch_node(struct node *n, enum node_event ev)
{
	struct job *j = n->job;
	const struct job_cell *c = &node_actions[j->state][ev][n->state];

	if (c->fn == act_ignore)
		log_info("rdzv job=%s round=%u node=%s:%u %s ignored in %s/%s: "
		    "%s", j->run_id, j->round, n->host, n->pid,
		    node_event_names[ev], jstate_names[j->state],
		    rdzv_nstate_name(n->state), c->why);
	else
		log_debug("rdzv job=%s round=%u node=%s:%u event %s in %s/%s",
		    j->run_id, j->round, n->host, n->pid,
		    node_event_names[ev], jstate_names[j->state],
		    rdzv_nstate_name(n->state));
	c->fn(j, n);
	job_forget_if_empty(j);
}

/* Last-call timer. */
static void
job_last_call_cb(int fd, short what, void *arg)
{
	job_dispatch(arg, JOB_LAST_CALL_OVER, NULL);
}

/* Join-timeout timer. */
static void
job_join_timer_cb(int fd, short what, void *arg)
{
	job_dispatch(arg, JOB_JOIN_TIMEOUT, NULL);
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

/*
 * rdzv.c: the rendezvous engine: jobs, nodes, rounds, restart budget,
 * keep-alive deadlines.  Every job event goes through one decision table,
 * job_actions[job state][event]; node and job states change only in
 * node_enter() and job_enter().
 */
#include <sys/queue.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "auth.h"
#include "log.h"
#include "rdzv.h"

/* Buckets of a job's node identity hash (resuming nodes are found in O(1)). */
#define NODE_BUCKETS		1024

/* How often waiting nodes hear about progress, at most. */
#define STATUS_PERIOD_MS	1000

enum ev { EV_JOIN, EV_FAILED, EV_STOPPED, EV_DONE, EV_GONE, EV_LASTCALL,
	EV_JOINTIMEOUT, EV__COUNT };

struct job;

struct node {
	TAILQ_ENTRY(node) entry;
	struct node	*hnext;		/* identity hash chain */
	struct job	*job;
	struct rdzv_peer *peer;		/* NULL while disconnected */
	char		*host;
	char		*addr;		/* its job store */
	uint16_t	port;
	uint32_t	pid, local_id, nproc;
	int32_t		node_rank;
	uint64_t	seq;		/* arrival order in the job */
	int		group_rank;	/* in the running round */
	uint32_t	rank_base;
	enum rdzv_nstate state;
	struct event	*alive;		/* keep-alive deadline */
	struct timespec	last_seen;	/* monotonic, of its last message */
};

struct job {
	TAILQ_ENTRY(job) entry;
	struct rdzv	*r;
	char		*run_id;
	uint32_t	min, max, max_restarts;
	uint32_t	join_ms, last_call_ms, close_ms, ka_ms, ka_max;
	enum rdzv_jstate state;
	uint32_t	round;
	uint32_t	restarts;
	uint32_t	gws, world;	/* of the decided round */
	char		master[RDZV_ADDR_MAX + 1];	/* its store */
	uint16_t	master_port;
	int		started;	/* a round was decided once */
	uint64_t	seq;
	TAILQ_HEAD(, node) nodes;
	struct node	*hash[NODE_BUCKETS];	/* by (host, pid, local id) */
	size_t		nnodes;
	size_t		count[RDZV_N__COUNT];
	struct event	*last_call;
	struct timespec	last_call_at;	/* monotonic deadline when armed */
	int		last_call_armed;
	struct event	*join_timer;
	struct event	*status_timer;
	int		status_armed;
};

struct rdzv {
	struct event_base *base;
	struct rdzv_io	io;
	void		*arg;
	TAILQ_HEAD(, job) jobs;
	size_t		njobs;
	struct rdzv_stats stats;	/* rdzv_stats() */
	struct auth_key	*key;		/* rdzv_set_auth(); NULL: none */
};

struct rdzv_peer {
	struct rdzv	*r;
	void		*conn;
	int		hello;
	int		authing;	/* CHALLENGE sent, AUTH awaited */
	char		snonce[AUTH_HEX_LEN + 1];
	struct node	*node;
};

static const char *jstate_names[] = { "JOINING", "RUNNING", "CLOSED" };
static const char *nstate_names[] = { "NEW", "WAIT", "SPARE", "ACTIVE",
	"STOPPING", "DONE" };

static void job_check(struct job *);
static void job_fail(struct job *, uint8_t, const char *);

/* The name of a job state. */
const char *
rdzv_jstate_name(enum rdzv_jstate s)
{
	return s < RDZV_J__COUNT ? jstate_names[s] : "?";
}

/* The name of a node state. */
const char *
rdzv_nstate_name(enum rdzv_nstate s)
{
	return s < RDZV_N__COUNT ? nstate_names[s] : "?";
}

/* Milliseconds as a timeval. */
static struct timeval
ms_tv(uint32_t ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

	return tv;
}

/* Monotonic now. */
static struct timespec
mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts;
}

/* Send m to node's connection, if it has one. */
static void
node_send(struct node *n, const struct rdzv_msg *m)
{
	if (n->peer != NULL)
		n->job->r->io.send(n->peer->conn, m, n->job->r->arg);
}

/* Move a node to a new state, keeping the job's counts. */
static void
node_enter(struct node *n, enum rdzv_nstate s)
{
	if (n->state == s)
		return;
	log_debug("rdzv job=%s node=%s:%u %s -> %s", n->job->run_id, n->host,
	    n->pid, nstate_names[n->state], nstate_names[s]);
	n->job->count[n->state]--;
	n->job->count[s]++;
	n->state = s;
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

/* Restart the node's keep-alive deadline. */
static void
node_alive(struct node *n)
{
	struct timeval tv = ms_tv(n->job->ka_ms * n->job->ka_max);

	clock_gettime(CLOCK_MONOTONIC, &n->last_seen);
	evtimer_add(n->alive, &tv);
}

/* The hash bucket of a node identity (FNV-1a). */
static size_t
node_bucket(const char *host, uint32_t pid, uint32_t local_id)
{
	uint32_t h = 2166136261u;

	for (; *host != '\0'; host++)
		h = (h ^ (unsigned char)*host) * 16777619u;
	h = (h ^ pid) * 16777619u;
	h = (h ^ local_id) * 16777619u;
	return h % NODE_BUCKETS;
}

/* Take a node out of its job's identity hash. */
static void
node_unhash(struct node *n)
{
	struct node **pp = &n->job->hash[node_bucket(n->host, n->pid,
	    n->local_id)];

	while (*pp != NULL && *pp != n)
		pp = &(*pp)->hnext;
	if (*pp == n)
		*pp = n->hnext;
}

/* Forget a node (dead, left, or its job is over). */
static void
node_remove(struct node *n)
{
	struct job *j = n->job;

	TAILQ_REMOVE(&j->nodes, n, entry);
	node_unhash(n);
	j->count[n->state]--;
	j->nnodes--;
	if (n->peer != NULL)
		n->peer->node = NULL;
	event_free(n->alive);
	free(n->host);
	free(n->addr);
	free(n);
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
	struct timespec now = mono_now();
	long long ms;

	if (!j->last_call_armed)
		return RDZV_NO_DEADLINE;
	ms = (j->last_call_at.tv_sec - now.tv_sec) * 1000LL +
	    (j->last_call_at.tv_nsec - now.tv_nsec) / 1000000;
	return ms < 0 ? 0 : (uint32_t)ms;
}

/* Tell one node how the round being formed is doing. */
static void
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

/* Order of group ranks: --node-rank if given, then host, then arrival. */
static int
node_cmp(const void *a, const void *b)
{
	const struct node *x = *(struct node *const *)a;
	const struct node *y = *(struct node *const *)b;
	int c;

	if ((x->node_rank >= 0) != (y->node_rank >= 0))
		return x->node_rank >= 0 ? -1 : 1;
	if (x->node_rank != y->node_rank)
		return x->node_rank < y->node_rank ? -1 : 1;
	if ((c = strcmp(x->host, y->host)) != 0)
		return c;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Tell one participant its place in the decided round. */
static void
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
	j->last_call_at = mono_now();
	j->last_call_at.tv_sec += j->last_call_ms / 1000;
	j->last_call_at.tv_nsec += (long)(j->last_call_ms % 1000) * 1000000;
	if (j->last_call_at.tv_nsec >= 1000000000) {
		j->last_call_at.tv_sec++;
		j->last_call_at.tv_nsec -= 1000000000;
	}
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
static void
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

/* Describe a node for messages. */
static const char *
node_name(const struct node *n, char *buf, size_t len)
{
	snprintf(buf, len, "%s (pid %u)", n->host, n->pid);
	return buf;
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
	char why[RDZV_TEXT_MAX + 1], b[RDZV_HOST_MAX + 32];

	if (n->state != RDZV_N_ACTIVE && n->state != RDZV_N_DONE)
		return;
	node_name(n, b, sizeof(b));
	if (!job_lost_participant(j)) {
		if (j->restarts >= j->max_restarts) {
			snprintf(why, sizeof(why), "workers failed on node %s "
			    "and no restarts are left (%u/%u spent)", b,
			    j->restarts, j->max_restarts);
			job_fail(j, RDZV_FAIL_RESTARTS, why);
			return;
		}
		j->restarts++;
		j->r->stats.restarts++;
	}
	snprintf(why, sizeof(why), "workers failed on node %s", b);
	node_enter(n, RDZV_N_WAIT);
	job_new_round(j, why);
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

/* Free a job. */
static void
job_free(struct job *j)
{
	while (!TAILQ_EMPTY(&j->nodes))
		node_remove(TAILQ_FIRST(&j->nodes));
	TAILQ_REMOVE(&j->r->jobs, j, entry);
	j->r->njobs--;
	event_free(j->last_call);
	event_free(j->join_timer);
	event_free(j->status_timer);
	free(j->run_id);
	free(j);
}

/* Run one event through the table; a job left without nodes is freed
 * (a later JOIN with its id starts a new job). */
static void
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

/* Keep-alive deadline of one node: it is dead. */
static void
node_alive_cb(int fd, short what, void *arg)
{
	struct node *n = arg;

	log_info("rdzv job=%s node=%s:%u dead: no keep-alive for %u ms",
	    n->job->run_id, n->host, n->pid, n->job->ka_ms * n->job->ka_max);
	n->job->r->stats.nodes_dead++;
	job_dispatch(n->job, EV_GONE, n);
}

/* The job of run_id, or NULL. */
static struct job *
job_find(const struct rdzv *r, const char *run_id)
{
	struct job *j;

	TAILQ_FOREACH(j, &r->jobs, entry)
		if (strcmp(j->run_id, run_id) == 0)
			return j;
	return NULL;
}

/* A new job from its first JOIN's parameters, or NULL. */
static struct job *
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
		TAILQ_INSERT_TAIL(&r->jobs, j, entry);	/* job_free unlinks */
		r->njobs++;
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
	TAILQ_INSERT_TAIL(&r->jobs, j, entry);
	r->njobs++;
	r->stats.jobs_created++;
	evtimer_add(j->join_timer, &tv);
	log_info("rdzv job=%s created nodes=%u:%u max_restarts=%u", j->run_id,
	    j->min, j->max, j->max_restarts);
	return j;
}

/* A new node of job j from a JOIN, or NULL. */
static struct node *
node_new(struct job *j, struct rdzv_peer *p, const struct rdzv_msg *m)
{
	struct node *n;

	if ((n = calloc(1, sizeof(*n))) == NULL)
		return NULL;
	n->host = strdup(m->host);
	n->addr = strdup(m->addr);
	n->alive = evtimer_new(j->r->base, node_alive_cb, n);
	if (n->host == NULL || n->addr == NULL || n->alive == NULL) {
		free(n->host);
		free(n->addr);
		if (n->alive != NULL)
			event_free(n->alive);
		free(n);
		return NULL;
	}
	n->job = j;
	n->peer = p;
	p->node = n;
	n->port = m->port;
	n->pid = m->pid;
	n->local_id = m->local_id;
	n->nproc = m->nproc;
	n->node_rank = m->node_rank;
	n->seq = j->seq++;
	n->state = RDZV_N_NEW;
	j->count[RDZV_N_NEW]++;
	j->nnodes++;
	TAILQ_INSERT_TAIL(&j->nodes, n, entry);
	n->hnext = j->hash[node_bucket(n->host, n->pid, n->local_id)];
	j->hash[node_bucket(n->host, n->pid, n->local_id)] = n;
	node_alive(n);
	return n;
}

static int peer_error(struct rdzv_peer *, const char *, ...)
    __attribute__((format(printf, 2, 3)));

/* Reply ERROR to a peer; always -1 (the caller closes it). */
static int
peer_error(struct rdzv_peer *p, const char *fmt, ...)
{
	struct rdzv_msg m;
	va_list ap;

	rdzv_proto_init(&m, RDZV_OP_ERROR);
	va_start(ap, fmt);
	vsnprintf(m.text, sizeof(m.text), fmt, ap);
	va_end(ap);
	log_info("rdzv peer error: %s", m.text);
	p->r->io.send(p->conn, &m, p->r->arg);
	return -1;
}

/* Check a JOIN's parameters; NULL, or what is wrong. */
static const char *
join_invalid(const struct rdzv_msg *m)
{
	if (m->run_id[0] == '\0')
		return "empty run id";
	if (m->min_nodes < 1 || m->min_nodes > m->max_nodes)
		return "nodes must be 1 <= MIN <= MAX";
	if (m->nproc < 1)
		return "nproc must be at least 1";
	if (m->keepalive_ms < 1 || m->keepalive_max < 1)
		return "keep-alive interval and attempts must be positive";
	if (m->addr[0] == '\0' || m->port == 0)
		return "no job store address";
	return NULL;
}

/* The node of job j with this identity (host, pid, local id), or NULL. */
static struct node *
node_find(const struct job *j, const struct rdzv_msg *m)
{
	struct node *n;

	for (n = j->hash[node_bucket(m->host, m->pid, m->local_id)]; n != NULL;
	    n = n->hnext)
		if (n->pid == m->pid && n->local_id == m->local_id &&
		    strcmp(n->host, m->host) == 0)
			return n;
	return NULL;
}

/*
 * A known node comes back on a new connection within its keep-alive
 * window: it takes up where it was, and hears again what it may have
 * missed (its ROUND, a RESTART, or the round's progress).
 */
static int
node_resume(struct node *n, struct rdzv_peer *p)
{
	struct job *j = n->job;
	struct rdzv_msg m;

	if (n->peer != NULL)
		return peer_error(p, "node %s (pid %u) is already joined on "
		    "another connection", n->host, n->pid);
	n->peer = p;
	p->node = n;
	node_alive(n);
	log_info("rdzv job=%s node=%s:%u resumed on a new connection",
	    j->run_id, n->host, n->pid);
	switch (n->state) {
	case RDZV_N_ACTIVE:
	case RDZV_N_DONE:
		job_round_to(j, n);
		break;
	case RDZV_N_STOPPING:
		rdzv_proto_init(&m, RDZV_OP_RESTART);
		m.round = j->round;
		snprintf(m.text, sizeof(m.text), "a new round is being formed");
		node_send(n, &m);
		break;
	default:
		job_status_to(j, n);
		break;
	}
	return 0;
}

/* JOIN: find or create the job, add the node. */
static int
peer_join(struct rdzv_peer *p, const struct rdzv_msg *m)
{
	const char *bad;
	struct job *j;
	struct node *n;

	if (p->node != NULL)
		return peer_error(p, "%s", "JOIN twice on one connection");
	if ((bad = join_invalid(m)) != NULL)
		return peer_error(p, "bad JOIN: %s", bad);
	if ((j = job_find(p->r, m->run_id)) != NULL &&
	    (n = node_find(j, m)) != NULL)
		return node_resume(n, p);
	if (j == NULL && (j = job_new(p->r, m)) == NULL)
		return peer_error(p, "%s", "out of memory");
	if (j->min != m->min_nodes || j->max != m->max_nodes)
		log_warnx("rdzv job=%s node=%s asks nodes=%u:%u; job has %u:%u",
		    j->run_id, m->host, m->min_nodes, m->max_nodes, j->min,
		    j->max);
	if ((n = node_new(j, p, m)) == NULL) {
		if (j->nnodes == 0)
			job_free(j);
		return peer_error(p, "%s", "out of memory");
	}
	log_debug("rdzv job=%s join node=%s:%u nproc=%u store=%s:%u",
	    j->run_id, n->host, n->pid, n->nproc, n->addr, n->port);
	job_dispatch(j, EV_JOIN, n);
	return 0;
}

/* Accept the peer: WELCOME with its version. */
static int
peer_welcome(struct rdzv_peer *p, uint16_t version)
{
	struct rdzv_msg w;

	p->hello = 1;
	rdzv_proto_init(&w, RDZV_OP_WELCOME);
	w.version = version;
	p->r->io.send(p->conn, &w, p->r->arg);
	return 0;
}

/* The first frame: HELLO 1 without a token, HELLO 2 (CHALLENGE) with. */
static int
peer_hello(struct rdzv_peer *p, const struct rdzv_msg *m)
{
	struct rdzv_msg c;

	if (m->op != RDZV_OP_HELLO)
		return peer_error(p, "%s", "HELLO expected first");
	if (m->version != RDZV_PROTO_VERSION &&
	    m->version != RDZV_PROTO_VERSION_AUTH)
		return peer_error(p, "%s", "unsupported protocol "
		    "version (this server speaks 1 and 2)");
	if (p->r->key == NULL && m->version == RDZV_PROTO_VERSION_AUTH)
		return peer_error(p, "%s", "authentication refused: this "
		    "server has no --auth-token-file");
	if (p->r->key == NULL)
		return peer_welcome(p, RDZV_PROTO_VERSION);
	if (m->version != RDZV_PROTO_VERSION_AUTH) {
		log_warnx("rdzv: refused a client without authentication");
		return peer_error(p, "%s", "authentication required: this "
		    "server needs --auth-token-file");
	}
	if (auth_nonce(p->snonce) == -1)
		return peer_error(p, "%s", "no random nonce");
	p->authing = 1;
	rdzv_proto_init(&c, RDZV_OP_CHALLENGE);
	memcpy(c.nonce, p->snonce, sizeof p->snonce);
	p->r->io.send(p->conn, &c, p->r->arg);
	return 0;
}

/* AUTH: check the client's proof, prove ourselves, WELCOME. */
static int
peer_auth(struct rdzv_peer *p, const struct rdzv_msg *m)
{
	struct rdzv_msg a;

	if (m->op != RDZV_OP_AUTH)
		return peer_error(p, "authentication required before %s",
		    rdzv_proto_opname(m->op));
	p->authing = 0;
	if (!auth_verify(p->r->key, AUTH_ROLE_CLIENT, p->snonce, m->nonce,
	    m->proof)) {
		log_warnx("rdzv: authentication failed (wrong token)");
		p->r->stats.auth_failures++;
		return peer_error(p, "%s", "authentication failed: wrong "
		    "auth token");
	}
	rdzv_proto_init(&a, RDZV_OP_AUTHOK);
	if (auth_proof(p->r->key, AUTH_ROLE_SERVER, p->snonce, m->nonce,
	    a.proof) == -1)
		return peer_error(p, "%s", "bad client nonce");
	p->r->io.send(p->conn, &a, p->r->arg);
	return peer_welcome(p, RDZV_PROTO_VERSION_AUTH);
}

/* One message from a peer: the HELLO check, then node events. */
int
rdzv_peer_msg(struct rdzv_peer *p, const struct rdzv_msg *m)
{
	static const enum ev node_ev[] = { [RDZV_OP_FAILED - 0x80] = EV_FAILED,
	    [RDZV_OP_STOPPED - 0x80] = EV_STOPPED,
	    [RDZV_OP_DONE - 0x80] = EV_DONE, [RDZV_OP_LEAVE - 0x80] = EV_GONE };

	if (p->authing)
		return peer_auth(p, m);
	if (!p->hello)
		return peer_hello(p, m);
	switch (m->op) {
	case RDZV_OP_JOIN:
		return peer_join(p, m);
	case RDZV_OP_KEEPALIVE:
	case RDZV_OP_FAILED:
	case RDZV_OP_STOPPED:
	case RDZV_OP_DONE:
	case RDZV_OP_LEAVE:
		if (p->node == NULL)
			return peer_error(p, "%s before JOIN",
			    rdzv_proto_opname(m->op));
		node_alive(p->node);
		if (m->op != RDZV_OP_KEEPALIVE)
			job_dispatch(p->node->job, node_ev[m->op - 0x80],
			    p->node);
		return 0;
	default:
		return peer_error(p, "unexpected %s from a client",
		    rdzv_proto_opname(m->op));
	}
}

/* Decode and handle every complete frame buffered from the peer. */
int
rdzv_peer_input(struct rdzv_peer *p, struct evbuffer *in)
{
	struct rdzv_msg m;
	const char *why;
	size_t len, used;
	unsigned char *b;
	int rc;

	while ((len = evbuffer_get_length(in)) > 0) {
		if (len > 4 + RDZV_FRAME_MAX)
			len = 4 + RDZV_FRAME_MAX;
		if ((b = evbuffer_pullup(in, (ssize_t)len)) == NULL)
			return -1;
		rc = rdzv_proto_decode(b, len, &m, &used, &why);
		if (rc == RDZV_PROTO_MORE)
			return 0;
		if (rc == RDZV_PROTO_ERROR)
			return peer_error(p, "bad frame: %s", why);
		evbuffer_drain(in, used);
		if (rdzv_peer_msg(p, &m) == -1)
			return -1;
	}
	return 0;
}

/* A new connection. */
struct rdzv_peer *
rdzv_peer_new(struct rdzv *r, void *conn)
{
	struct rdzv_peer *p;

	if ((p = calloc(1, sizeof(*p))) == NULL)
		return NULL;
	p->r = r;
	p->conn = conn;
	return p;
}

/* The connection is gone: its node waits out the keep-alive window (or
 * goes at once if its job is over). */
void
rdzv_peer_gone(struct rdzv_peer *p)
{
	struct node *n;

	if (p == NULL)
		return;
	if ((n = p->node) != NULL) {
		n->peer = NULL;
		log_info("rdzv job=%s node=%s:%u connection lost", n->job->run_id,
		    n->host, n->pid);
		if (n->job->state == RDZV_J_CLOSED)
			job_dispatch(n->job, EV_GONE, n);
	}
	free(p);
}

/* A new engine on base. */
struct rdzv *
rdzv_new(struct event_base *base, const struct rdzv_io *io, void *arg)
{
	struct rdzv *r;

	if ((r = calloc(1, sizeof(*r))) == NULL)
		return NULL;
	r->base = base;
	r->io = *io;
	r->arg = arg;
	TAILQ_INIT(&r->jobs);
	return r;
}

/* Free the engine and its jobs (peers belong to the transport). */
void
rdzv_free(struct rdzv *r)
{
	if (r == NULL)
		return;
	while (!TAILQ_EMPTY(&r->jobs))
		job_free(TAILQ_FIRST(&r->jobs));
	if (r->key != NULL)
		auth_key_clear(r->key);
	free(r->key);
	free(r);
}

/* Require clients to prove they know key (NULL: no authentication). */
int
rdzv_set_auth(struct rdzv *r, const struct auth_key *key)
{
	if (r->key != NULL)
		auth_key_clear(r->key);
	free(r->key);
	r->key = NULL;
	if (key == NULL)
		return 0;
	if ((r->key = malloc(sizeof *r->key)) == NULL)
		return -1;
	*r->key = *key;
	return 0;
}

/* Number of jobs the engine knows. */
size_t
rdzv_njobs(const struct rdzv *r)
{
	return r->njobs;
}

/* State of the job run_id; -1 when there is none. */
int
rdzv_job_info(const struct rdzv *r, const char *run_id,
    struct rdzv_job_info *ji)
{
	const struct job *j = job_find(r, run_id);

	if (j == NULL)
		return -1;
	ji->state = j->state;
	ji->round = j->round;
	ji->restarts = j->restarts;
	ji->nodes = j->nnodes;
	memcpy(ji->count, j->count, sizeof(ji->count));
	return 0;
}

/* Engine-wide counters since start. */
void
rdzv_stats(const struct rdzv *r, struct rdzv_stats *st)
{
	*st = r->stats;
}

/* Milliseconds from then to now (monotonic). */
static uint64_t
ms_since(const struct timespec *then, const struct timespec *now)
{
	int64_t ms = (int64_t)(now->tv_sec - then->tv_sec) * 1000 +
	    (now->tv_nsec - then->tv_nsec) / 1000000;

	return ms > 0 ? (uint64_t)ms : 0;
}

/* Call job() for every job, then node() for each of its nodes. */
void
rdzv_walk(const struct rdzv *r,
    void (*jobcb)(const struct rdzv_job_view *, void *),
    void (*nodecb)(const struct rdzv_node_view *, void *), void *arg)
{
	const struct job *j;
	const struct node *n;
	struct rdzv_job_view jv;
	struct rdzv_node_view nv;
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	TAILQ_FOREACH(j, &r->jobs, entry) {
		memset(&jv, 0, sizeof jv);
		jv.run_id = j->run_id;
		(void)rdzv_job_info(r, j->run_id, &jv.info);
		jv.min_nodes = j->min;
		jv.max_nodes = j->max;
		jv.max_restarts = j->max_restarts;
		jobcb(&jv, arg);
		TAILQ_FOREACH(n, &j->nodes, entry) {
			nv.host = n->host;
			nv.addr = n->addr;
			nv.port = n->port;
			nv.pid = n->pid;
			nv.nproc = n->nproc;
			nv.node_rank = n->node_rank;
			nv.state = n->state;
			nv.connected = n->peer != NULL;
			nv.last_seen_ms = ms_since(&n->last_seen, &now);
			nodecb(&nv, arg);
		}
	}
}

/* The server is going away: fail every open job; count the nodes told. */
size_t
rdzv_shutdown(struct rdzv *r, const char *why)
{
	struct job *j;
	struct node *n;
	size_t told = 0;

	TAILQ_FOREACH(j, &r->jobs, entry) {
		if (j->state == RDZV_J_CLOSED)
			continue;
		TAILQ_FOREACH(n, &j->nodes, entry)
			told += n->peer != NULL;
		job_fail(j, RDZV_FAIL_CLOSED, why);
	}
	return told;
}

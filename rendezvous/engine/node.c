/*
 * node.c: a node of a job (rdzv_impl.h): made by its first JOIN, found
 * again by its identity (host, pid, local id) when it resumes on a new
 * connection, moved between states only by node_enter(), declared dead
 * when its keep-alive deadline passes.  It also keeps the job's view, the
 * nodes' facts as the round rule (decide.c) reads them: one slot per
 * node, changed with the node, so asking the rule costs no walk.
 */
#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include "log.h"
#include "monotime.h"
#include "rdzv.h"
#include "rdzv_impl.h"

static const char *const nstate_names[] = { "WAIT", "SPARE", "ACTIVE",
	"STOPPING", "DONE", "FAILED" };

_Static_assert(sizeof(nstate_names) / sizeof(nstate_names[0]) ==
    RDZV_N__COUNT, "nstate_names does not match enum rdzv_nstate");

/* What each node state is to the round rule. */
static const uint8_t decide_state_of[] = {
	[RDZV_N_WAIT] = DECIDE_WAITING,
	[RDZV_N_SPARE] = DECIDE_WAITING,
	[RDZV_N_ACTIVE] = DECIDE_RUNNING,
	[RDZV_N_STOPPING] = DECIDE_STOPPING,
	[RDZV_N_DONE] = DECIDE_DONE,
	[RDZV_N_FAILED] = DECIDE_FAILED,
};

_Static_assert(sizeof(decide_state_of) == RDZV_N__COUNT,
    "decide_state_of does not match enum rdzv_nstate");

/* The name of a node state. */
const char *
rdzv_nstate_name(enum rdzv_nstate s)
{
	return s < RDZV_N__COUNT ? nstate_names[s] : "?";
}

/* Send m to node's connection, if it has one (and is not gone). */
void
node_send(struct node *n, const struct rdzv_msg *m)
{
	if (n->peer != NULL && !n->gone)
		n->job->r->io.send(n->peer->conn, m, n->job->r->arg);
}

/* Set the round rule's state of n, keeping the job's counts of them. */
static void
node_view_state(struct node *n, enum decide_nstate s)
{
	struct decide_node *d = &n->job->view[n->slot];

	n->job->dcount[d->state]--;
	n->job->dcount[s]++;
	d->state = (uint8_t)s;
}

/* Move a node to a new state, keeping the job's counts. */
void
node_enter(struct node *n, enum rdzv_nstate s)
{
	if (n->state == s)
		return;
	log_debug("rdzv job=%s node=%s:%u %s -> %s", n->job->run_id, n->host,
	    n->pid, nstate_names[n->state], nstate_names[s]);
	n->job->count[n->state]--;
	n->job->count[s]++;
	n->state = s;
	if (!n->gone)
		node_view_state(n, decide_state_of[s]);
}

/* The node's connection (NULL: down, which the round rule weighs). */
void
node_set_peer(struct node *n, struct rdzv_peer *p)
{
	n->peer = p;
	n->job->view[n->slot].offline = p == NULL;
}

/* The node's place in the running round (-1: none). */
void
node_place(struct node *n, int group_rank, uint32_t rank_base)
{
	n->group_rank = group_rank;
	n->rank_base = rank_base;
	n->job->view[n->slot].group_rank = group_rank;
}

/* The node died or left: to the rule it is lost (a member of the running
 * round) or gone, until node_remove(); it hears nothing more. */
void
node_gone(struct node *n)
{
	enum decide_nstate s = n->job->view[n->slot].state;

	n->gone = 1;
	node_view_state(n, s == DECIDE_RUNNING || s == DECIDE_DONE ||
	    s == DECIDE_FAILED ? DECIDE_LOST : DECIDE_GONE);
}

/* Restart the node's keep-alive deadline. */
void
node_alive(struct node *n)
{
	struct timeval tv = ms_tv(n->job->ka_ms * n->job->ka_max);

	n->last_seen = monotime_ts();
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

/* Take n's slot out of the job's view: the last slot moves into it. */
static void
node_view_remove(struct node *n)
{
	struct job *j = n->job;
	size_t last = j->nnodes - 1;

	j->dcount[j->view[n->slot].state]--;
	if (n->slot != last) {
		j->view[n->slot] = j->view[last];
		j->slot_node[n->slot] = j->slot_node[last];
		j->slot_node[n->slot]->slot = n->slot;
	}
}

/* Room in the job's view for one more node; -1 when out of memory. */
static int
node_view_grow(struct job *j)
{
	size_t cap = j->cap ? j->cap * 2 : 8;
	struct decide_node *v;
	struct node **sn;
	struct decide_place *o;

	if (j->nnodes < j->cap)
		return 0;
	if ((v = realloc(j->view, cap * sizeof(*v))) != NULL)
		j->view = v;
	if ((sn = realloc(j->slot_node, cap * sizeof(*sn))) != NULL)
		j->slot_node = sn;
	if ((o = realloc(j->order, cap * sizeof(*o))) != NULL)
		j->order = o;
	if (v == NULL || sn == NULL || o == NULL)
		return -1;
	j->cap = cap;
	return 0;
}

/* Free the job's view (its nodes are gone). */
void
node_view_free(struct job *j)
{
	free(j->view);
	free(j->slot_node);
	free(j->order);
}

/* Forget a node (dead, left, or its job is over). */
void
node_remove(struct node *n)
{
	struct job *j = n->job;

	TAILQ_REMOVE(&j->nodes, n, entry);
	node_unhash(n);
	node_view_remove(n);
	j->count[n->state]--;
	j->nnodes--;
	if (n->peer != NULL)
		peer_detach(n->peer);
	event_free(n->alive);
	carry_drop(n);
	free(n->name);
	free(n->host);
	free(n->addr);
	free(n);
}

/* Keep-alive deadline of one node: it is dead. */
static void
node_alive_cb(int fd, short what, void *arg)
{
	struct node *n = arg;

	log_info("rdzv job=%s node=%s:%u dead: no keep-alive for %u ms",
	    n->job->run_id, n->host, n->pid, n->job->ka_ms * n->job->ka_max);
	n->job->r->stats.nodes_dead++;
	job_dispatch_node(n, NODE_GONE);
}

/* Free a node not yet in its job. */
static void
node_discard(struct node *n)
{
	free(n->name);
	free(n->host);
	free(n->addr);
	if (n->alive != NULL)
		event_free(n->alive);
	free(n);
}

/* Fill n's slot in the job's view: its facts for the round rule. */
static void
node_view_add(struct node *n)
{
	struct job *j = n->job;
	struct decide_node *d = &j->view[n->slot];

	memset(d, 0, sizeof(*d));
	d->name = n->name;
	d->host = n->host;
	d->addr = n->addr;
	d->why = n->failed_why;
	d->arrival = n->seq;
	d->node_rank = n->node_rank;
	d->group_rank = -1;
	d->nproc = n->nproc;
	d->port = n->port;
	d->state = DECIDE_WAITING;
	d->offline = n->peer == NULL;
	j->slot_node[n->slot] = n;
	j->dcount[DECIDE_WAITING]++;
}

/* A new node of job j from a JOIN, waiting for a round; or NULL. */
struct node *
node_new(struct job *j, struct rdzv_peer *p, const struct rdzv_msg *m)
{
	struct node *n;

	if (node_view_grow(j) == -1 || (n = calloc(1, sizeof(*n))) == NULL)
		return NULL;
	n->host = strdup(m->host);
	n->addr = strdup(m->addr);
	n->alive = evtimer_new(j->r->base, node_alive_cb, n);
	if (asprintf(&n->name, "%s (pid %u)", m->host, m->pid) == -1)
		n->name = NULL;
	if (n->host == NULL || n->addr == NULL || n->alive == NULL ||
	    n->name == NULL) {
		node_discard(n);
		return NULL;
	}
	n->job = j;
	n->peer = p;
	n->port = m->port;
	n->pid = m->pid;
	n->local_id = m->local_id;
	n->nproc = m->nproc;
	n->node_rank = m->node_rank;
	n->seq = j->seq++;
	n->group_rank = -1;
	n->state = RDZV_N_WAIT;
	n->slot = j->nnodes;
	node_view_add(n);
	j->count[RDZV_N_WAIT]++;
	j->nnodes++;
	TAILQ_INSERT_TAIL(&j->nodes, n, entry);
	n->hnext = j->hash[node_bucket(n->host, n->pid, n->local_id)];
	j->hash[node_bucket(n->host, n->pid, n->local_id)] = n;
	peer_attach(p, n);
	node_alive(n);
	return n;
}

/* The node of job j with this identity (host, pid, local id), or NULL. */
struct node *
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

/*
 * node.c: a node of a job (rdzv_impl.h): made by its first JOIN, found
 * again by its identity (host, pid, local id) when it resumes on a new
 * connection, moved between states only by node_enter(), declared dead
 * when its keep-alive deadline passes, and ordered for group ranks.
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

static const char *const nstate_names[] = { "NEW", "WAIT", "SPARE", "ACTIVE",
	"STOPPING", "DONE" };

/* The name of a node state. */
const char *
rdzv_nstate_name(enum rdzv_nstate s)
{
	return s < RDZV_N__COUNT ? nstate_names[s] : "?";
}

/* Send m to node's connection, if it has one. */
void
node_send(struct node *n, const struct rdzv_msg *m)
{
	if (n->peer != NULL)
		n->job->r->io.send(n->peer->conn, m, n->job->r->arg);
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

/* Forget a node (dead, left, or its job is over). */
void
node_remove(struct node *n)
{
	struct job *j = n->job;

	TAILQ_REMOVE(&j->nodes, n, entry);
	node_unhash(n);
	j->count[n->state]--;
	j->nnodes--;
	if (n->peer != NULL)
		peer_detach(n->peer);
	event_free(n->alive);
	free(n->host);
	free(n->addr);
	free(n);
}

/* Order of group ranks: --node-rank if given, then host, then arrival. */
int
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

/* Describe a node for messages. */
const char *
node_name(const struct node *n, char *buf, size_t len)
{
	snprintf(buf, len, "%s (pid %u)", n->host, n->pid);
	return buf;
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

/* A new node of job j from a JOIN, or NULL. */
struct node *
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

/*
 * rdzv.c: the rendezvous engine object (rdzv.h, rdzv_impl.h): its jobs,
 * the authentication key, the counters, the walk behind /status and
 * /metrics, and shutdown.  A job's state machine is job.c, its nodes
 * node.c, a connection's session rdzv_peer.c.
 */
#include <sys/queue.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "auth.h"
#include "log.h"
#include "rdzv.h"
#include "rdzv_impl.h"

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

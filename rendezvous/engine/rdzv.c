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
#include "monotime.h"
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
	rdzv_limits_default(&r->lim);
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

/* The state of job j. */
static void
rdzv_job_fill(const struct job *j, struct rdzv_job_info *ji)
{
	ji->state = j->state;
	ji->round = j->round;
	ji->restarts = j->restarts;
	ji->nodes = j->nnodes;
	memcpy(ji->count, j->count, sizeof(ji->count));
}

/* State of the job run_id; -1 when there is none. */
int
rdzv_job_info(const struct rdzv *r, const char *run_id,
    struct rdzv_job_info *ji)
{
	const struct job *j = job_find(r, run_id);

	if (j == NULL)
		return -1;
	rdzv_job_fill(j, ji);
	return 0;
}

/* Engine-wide counters since start. */
void
rdzv_stats(const struct rdzv *r, struct rdzv_stats *st)
{
	*st = r->stats;
}

/* The view of job j. */
static void
rdzv_job_view(const struct job *j, struct rdzv_job_view *jv)
{
	memset(jv, 0, sizeof *jv);
	jv->run_id = j->run_id;
	rdzv_job_fill(j, &jv->info);
	jv->min_nodes = j->min;
	jv->max_nodes = j->max;
	jv->max_restarts = j->max_restarts;
}

/* Call nodecb for at most max nodes of j (max 0: all). */
static void
rdzv_walk_nodes(const struct job *j, size_t max, const struct timespec *now,
    void (*nodecb)(const struct rdzv_node_view *, void *), void *arg)
{
	const struct node *n;
	struct rdzv_node_view nv;
	size_t shown = 0;
	int64_t ms;

	TAILQ_FOREACH(n, &j->nodes, entry) {
		if (max != 0 && shown++ == max)
			return;
		nv.host = n->host;
		nv.addr = n->addr;
		nv.port = n->port;
		nv.pid = n->pid;
		nv.nproc = n->nproc;
		nv.node_rank = n->node_rank;
		nv.state = n->state;
		nv.connected = n->peer != NULL;
		ms = monotime_diff_ms(now, &n->last_seen);
		nv.last_seen_ms = ms > 0 ? (uint64_t)ms : 0;
		nodecb(&nv, arg);
	}
}

/* Call job() for every job, then node() for each of its nodes. */
void
rdzv_walk(const struct rdzv *r,
    void (*jobcb)(const struct rdzv_job_view *, void *),
    void (*nodecb)(const struct rdzv_node_view *, void *), void *arg)
{
	(void)rdzv_walk_page(r, 0, 0, 0, jobcb, nodecb, arg);
}

/* At most limit jobs (0: all) from the offset-th, max_nodes nodes each. */
size_t
rdzv_walk_page(const struct rdzv *r, size_t offset, size_t limit,
    size_t max_nodes,
    void (*jobcb)(const struct rdzv_job_view *, void *),
    void (*nodecb)(const struct rdzv_node_view *, void *), void *arg)
{
	const struct job *j;
	struct rdzv_job_view jv;
	struct timespec now;
	size_t shown = 0;

	now = monotime_ts();
	for (j = TAILQ_FIRST(&r->jobs); j != NULL && offset > 0; offset--)
		j = TAILQ_NEXT(j, entry);
	for (; j != NULL && (limit == 0 || shown < limit);
	    j = TAILQ_NEXT(j, entry), shown++) {
		rdzv_job_view(j, &jv);
		jobcb(&jv, arg);
		rdzv_walk_nodes(j, max_nodes, &now, nodecb, arg);
	}
	return shown;
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

/*
 * static.c: the static rendezvous backend (--rdzv-backend=static,
 * torch.distributed.launch style).  The job has exactly MAX nodes; this
 * node's group rank is --node-rank; node 0's agent hosts the workers'
 * store at --master-addr:--master-port (default 127.0.0.1:29500), fresh
 * for every round.  No elasticity and no cross-node coordination: as in
 * torchrun, each node restarts its own workers (its own --max-restarts
 * budget) and the other nodes' workers notice through their collectives.
 * Rank offsets assume the same --nproc-per-node on every node.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "agent.h"
#include "backend.h"
#include "log.h"
#include "options.h"
#include "static.h"
#include "store.h"

#define STATIC_DEFAULT_ADDR	"127.0.0.1"
#define STATIC_DEFAULT_PORT	29500

struct static_rdzv {
	struct backend		 hdr;	/* first: a struct backend */
	struct agent_config	 cfg;
	struct round_info	 info;
	struct store		*store;	/* node 0: the workers' store */
	struct event		*defer;	/* delivers the pending callback */
	enum { ST_NONE, ST_ROUND, ST_FAIL, ST_FINISHED } pending;
	char			 why[256];
};

/* Next loop turn: deliver the pending callback (never from inside ops). */
static void
static_deliver(evutil_socket_t fd, short what, void *arg)
{
	struct static_rdzv *s = arg;
	const struct backend_cb *cb = &s->hdr.cb;
	int p = s->pending;

	s->pending = ST_NONE;
	if (p == ST_ROUND)
		cb->round(cb->arg, &s->info);
	else if (p == ST_FAIL)
		cb->fail(cb->arg, -1, s->why);
	else if (p == ST_FINISHED)
		cb->finished(cb->arg);
}

/* Queue a callback for the next loop turn. */
static void
static_queue(struct static_rdzv *s, int what)
{
	s->pending = what;
	event_active(s->defer, EV_TIMEOUT, 0);
}

/* A new round: node 0 empties the store first. */
static void
static_round(struct static_rdzv *s)
{
	s->info.round++;
	if (s->store != NULL)
		store_reset(s->store);
	static_queue(s, ST_ROUND);
}

/* ops->start: node 0 binds the store before anyone is told about it. */
static int
static_start(struct backend *b, char *err, size_t errlen)
{
	struct static_rdzv *s = (struct static_rdzv *)b;
	int bound;

	if (s->info.group_rank == 0) {
		if ((s->store = store_new(b->base, NULL)) == NULL) {
			snprintf(err, errlen, "static rendezvous: out of memory");
			return -1;
		}
		if (store_listen(s->store, NULL, s->info.master_port, &bound, err,
		    errlen) == -1)
			return -1;
		log_info("static rendezvous: node 0 serves the store on port %d",
		    bound);
	}
	s->info.round = (unsigned)-1;
	static_round(s);
	return 0;
}

/* ops->workers_failed: spend one of this node's restarts, or fail. */
static void
static_failed(struct backend *b, const char *why)
{
	struct static_rdzv *s = (struct static_rdzv *)b;

	if (s->info.restart_count < s->cfg.opts->max_restarts) {
		s->info.restart_count++;
		static_round(s);
		return;
	}
	snprintf(s->why, sizeof(s->why), "%s", why);
	static_queue(s, ST_FAIL);
}

/* ops->workers_stopped: a new round. */
static void
static_stopped(struct backend *b)
{
	static_round((struct static_rdzv *)b);
}

/* ops->workers_done: no exit barrier with other nodes. */
static void
static_done(struct backend *b)
{
	static_queue((struct static_rdzv *)b, ST_FINISHED);
}

/* ops->free. */
static void
static_free(struct backend *b)
{
	struct static_rdzv *s = (struct static_rdzv *)b;

	if (s == NULL)
		return;
	if (s->defer != NULL)
		event_free(s->defer);
	if (s->store != NULL)
		store_free(s->store);
	free(s);
}

static const struct backend_ops static_ops = {
	.name = "static",
	.start = static_start,
	.workers_failed = static_failed,
	.workers_stopped = static_stopped,
	.workers_done = static_done,
	.free = static_free,
};

/* The static backend from --node-rank, --nnodes, --master-addr/port. */
struct backend *
static_new(struct event_base *base, const struct agent_config *cfg,
    const struct backend_cb *cb, char *err, size_t errlen)
{
	const struct cgrun_options *o = cfg->opts;
	struct static_rdzv *s;
	int nnodes = o->nnodes_max > 0 ? o->nnodes_max : 1;

	if (o->node_rank < 0 || o->node_rank >= nnodes) {
		snprintf(err, errlen, "--node-rank %d: must be in 0..%d "
		    "(--nnodes %d)", o->node_rank, nnodes - 1, nnodes);
		return NULL;
	}
	if ((s = calloc(1, sizeof(*s))) == NULL ||
	    (s->defer = event_new(base, -1, 0, static_deliver, s)) == NULL) {
		free(s);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	s->hdr.ops = &static_ops;
	s->hdr.cb = *cb;
	s->hdr.base = base;
	s->cfg = *cfg;
	s->info.group_rank = o->node_rank;
	s->info.group_world_size = nnodes;
	s->info.local_world_size = cfg->nproc;
	s->info.rank_base = o->node_rank * cfg->nproc;
	s->info.world_size = nnodes * cfg->nproc;
	snprintf(s->info.master_addr, sizeof(s->info.master_addr), "%s",
	    o->master_addr ? o->master_addr : STATIC_DEFAULT_ADDR);
	s->info.master_port = o->master_port > 0 ? o->master_port :
	    STATIC_DEFAULT_PORT;
	snprintf(s->info.run_id, sizeof(s->info.run_id), "%s",
	    o->rdzv_id ? o->rdzv_id : "none");
	return &s->hdr;
}

/*
 * local.c: the local rendezvous backend: every round is decided on this
 * node, without asking any other.  Where a restart happens for a local
 * job: a failure spends one restart of this node's --max-restarts
 * (budget_spend, rendezvous/engine/budget.c) and starts the next round on a
 * fresh store, or fails the job.  Two constructors:
 *
 *   standalone  one node; the workers' store is the agent's own (reset
 *               for every round).  Run id: a random UUID with
 *               --standalone (as torchrun) or without --rdzv-id (torchrun
 *               2.x auto-standalone); with an explicit --master-port
 *               torchrun runs its static backend, so --rdzv-id or "none".
 *   static      torch.distributed.launch style (--rdzv-backend=static,
 *               the default for several nodes): the job has exactly
 *               --nnodes MAX nodes, this one is --node-rank; node 0 hosts
 *               the workers' store, fresh for every round, at
 *               --rdzv-endpoint HOST:PORT if given, else at
 *               --master-addr:--master-port (default 127.0.0.1:29500);
 *               run id --rdzv-id or "none", as torchrun.  No elasticity
 *               and no cross-node coordination: as in torchrun, each node
 *               restarts its own workers and the other nodes' workers
 *               notice through their collectives.  Rank offsets assume
 *               the same --nproc-per-node on every node.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <event2/event.h>

#include "backend.h"
#include "budget.h"
#include "endpoint.h"
#include "errbuf.h"
#include "log.h"
#include "options.h"
#include "store.h"

#define LOCAL_STATIC_ADDR	"127.0.0.1"
#define LOCAL_STATIC_PORT	29500

enum local_pending { LP_NONE, LP_ROUND, LP_FAIL, LP_FINISHED };

struct local {
	struct backend		 hdr;	/* first: a struct backend */
	struct backend_config	 cfg;
	struct round_info	 info;
	uint32_t		 restarts;	/* spent of max_restarts */
	struct store		*fresh;		/* emptied every round */
	struct store		*own;		/* static node 0: its store */
	int			 hosts;		/* static node 0: listen at start */
	struct event		*defer;		/* delivers the pending cb */
	enum local_pending	 pending;
	char			 why[256];
};

/* A random (version 4) UUID, as torchrun's standalone run id. */
static void
local_uuid(char *buf, size_t len)
{
	unsigned char u[16];
	size_t i;

	if (getrandom(u, sizeof(u), 0) != (ssize_t)sizeof(u))
		for (i = 0; i < sizeof(u); i++)
			u[i] = (unsigned char)random();
	u[6] = (unsigned char)((u[6] & 0x0f) | 0x40);
	u[8] = (unsigned char)((u[8] & 0x3f) | 0x80);
	snprintf(buf, len, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
	    "%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2], u[3], u[4], u[5],
	    u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

/* Next loop turn: deliver the pending callback (never from inside ops). */
static void
local_deliver(evutil_socket_t fd, short what, void *arg)
{
	struct local *l = arg;
	const struct backend_cb *cb = &l->hdr.cb;
	enum local_pending p = l->pending;

	l->pending = LP_NONE;
	if (p == LP_ROUND)
		cb->round(cb->arg, &l->info);
	else if (p == LP_FAIL)
		cb->fail(cb->arg, -1, l->why);
	else if (p == LP_FINISHED)
		cb->finished(cb->arg);
}

/* Queue a callback for the next loop turn. */
static void
local_queue(struct local *l, enum local_pending what)
{
	l->pending = what;
	event_active(l->defer, EV_TIMEOUT, 0);
}

/* A new round on a fresh store. */
static void
local_round(struct local *l)
{
	l->info.round++;
	l->info.restart_count = (int)l->restarts;
	if (l->fresh != NULL)
		store_reset(l->fresh);
	log_info("%s rendezvous %s round %u: group_rank=%d/%d restarts=%u/%d "
	    "store=%s:%d", l->hdr.ops->name, l->info.run_id, l->info.round,
	    l->info.group_rank, l->info.group_world_size, l->restarts,
	    l->cfg.opts->max_restarts, l->info.master_addr,
	    l->info.master_port);
	local_queue(l, LP_ROUND);
}

/* Static node 0: bind the workers' store before anyone is told of it. */
static int
local_listen(struct local *l, char *err, size_t errlen)
{
	int bound;

	if ((l->own = store_new(l->hdr.base, NULL)) == NULL) {
		errbuf_set(err, errlen, "static rendezvous: out of memory");
		return -1;
	}
	if (store_listen(l->own, NULL, l->info.master_port, &bound, err,
	    errlen) == -1)
		return -1;
	l->fresh = l->own;
	log_info("static rendezvous: node 0 serves the store on port %d",
	    bound);
	return 0;
}

/* ops->start: (static node 0: the store, then) the first round. */
static int
local_start(struct backend *b, char *err, size_t errlen)
{
	struct local *l = (struct local *)b;

	if (l->hosts && l->own == NULL && local_listen(l, err, errlen) == -1)
		return -1;
	l->info.round = (unsigned)-1;
	local_round(l);
	return 0;
}

/* ops->workers_failed: spend one restart of this node's budget, or fail. */
static void
local_failed(struct backend *b, const char *why)
{
	struct local *l = (struct local *)b;

	if (budget_spend(&l->restarts,
	    (uint32_t)l->cfg.opts->max_restarts)) {
		local_round(l);
		return;
	}
	snprintf(l->why, sizeof(l->why), "%s", why);
	local_queue(l, LP_FAIL);
}

/* ops->workers_stopped: a new round without spending a restart. */
static void
local_stopped(struct backend *b)
{
	local_round((struct local *)b);
}

/* ops->workers_done: nobody else to wait for. */
static void
local_done(struct backend *b)
{
	local_queue((struct local *)b, LP_FINISHED);
}

/* ops->free. */
static void
local_free(struct backend *b)
{
	struct local *l = (struct local *)b;

	if (l == NULL)
		return;
	if (l->defer != NULL)
		event_free(l->defer);
	if (l->own != NULL)
		store_free(l->own);
	free(l);
}

static const struct backend_ops local_standalone_ops = {
	.name = "standalone",
	.start = local_start,
	.workers_failed = local_failed,
	.workers_stopped = local_stopped,
	.workers_done = local_done,
	.free = local_free,
};

static const struct backend_ops local_static_ops = {
	.name = "static",
	.start = local_start,
	.workers_failed = local_failed,
	.workers_stopped = local_stopped,
	.workers_done = local_done,
	.free = local_free,
};

/* The part both constructors share: NULL with err when out of memory. */
static struct local *
local_alloc(struct event_base *base, const struct backend_config *cfg,
    const struct backend_cb *cb, const struct backend_ops *ops, char *err,
    size_t errlen)
{
	struct local *l;

	if ((l = calloc(1, sizeof(*l))) == NULL ||
	    (l->defer = event_new(base, -1, 0, local_deliver, l)) == NULL) {
		free(l);
		errbuf_set(err, errlen, "out of memory");
		return NULL;
	}
	l->hdr.ops = ops;
	l->hdr.cb = *cb;
	l->hdr.base = base;
	l->hdr.run_id = l->info.run_id;	/* filled by the constructors */
	l->cfg = *cfg;
	l->info.local_world_size = cfg->nproc;
	return l;
}

/* The standalone backend: this node alone, on the agent's store. */
struct backend *
local_new_standalone(struct event_base *base,
    const struct backend_config *cfg, const struct backend_cb *cb, char *err,
    size_t errlen)
{
	const struct cgrun_options *o = cfg->opts;
	struct local *l;

	if ((l = local_alloc(base, cfg, cb, &local_standalone_ops, err,
	    errlen)) == NULL)
		return NULL;
	l->fresh = cfg->jobstore;
	l->info.group_world_size = 1;
	l->info.world_size = cfg->nproc;
	snprintf(l->info.master_addr, sizeof(l->info.master_addr), "%s",
	    cfg->store_host);
	l->info.master_port = cfg->store_port;
	if (o->standalone || (o->rdzv_id == NULL && !o->explicit_master_port))
		local_uuid(l->info.run_id, sizeof(l->info.run_id));
	else
		snprintf(l->info.run_id, sizeof(l->info.run_id), "%s",
		    o->rdzv_id ? o->rdzv_id : "none");
	return &l->hdr;
}

/* Where static node 0 hosts the store: the endpoint, else --master-*. */
static int
local_static_master(struct local *l, char *err, size_t errlen)
{
	const struct cgrun_options *o = l->cfg.opts;
	struct round_info *ri = &l->info;

	if (o->rdzv_endpoint != NULL && o->rdzv_endpoint[0] != '\0')
		return endpoint_parse_hostport(o->rdzv_endpoint,
		    ri->master_addr, sizeof(ri->master_addr), &ri->master_port,
		    err, errlen);
	snprintf(ri->master_addr, sizeof(ri->master_addr), "%s",
	    o->master_addr ? o->master_addr : LOCAL_STATIC_ADDR);
	ri->master_port = o->master_port > 0 ? o->master_port :
	    LOCAL_STATIC_PORT;
	return 0;
}

/* The static backend from --node-rank, --nnodes, the endpoint or master. */
struct backend *
local_new_static(struct event_base *base, const struct backend_config *cfg,
    const struct backend_cb *cb, char *err, size_t errlen)
{
	const struct cgrun_options *o = cfg->opts;
	struct local *l;
	int nnodes = o->nnodes_max > 0 ? o->nnodes_max : 1;

	if (o->node_rank < 0 || o->node_rank >= nnodes) {
		errbuf_set(err, errlen, "--node-rank %d: must be in 0..%d "
		    "(--nnodes %d)", o->node_rank, nnodes - 1, nnodes);
		return NULL;
	}
	if ((l = local_alloc(base, cfg, cb, &local_static_ops, err,
	    errlen)) == NULL)
		return NULL;
	if (local_static_master(l, err, errlen) == -1) {
		local_free(&l->hdr);
		return NULL;
	}
	l->hosts = o->node_rank == 0;
	l->info.group_rank = o->node_rank;
	l->info.group_world_size = nnodes;
	l->info.rank_base = o->node_rank * cfg->nproc;
	l->info.world_size = nnodes * cfg->nproc;
	snprintf(l->info.run_id, sizeof(l->info.run_id), "%s",
	    o->rdzv_id ? o->rdzv_id : "none");
	return &l->hdr;
}

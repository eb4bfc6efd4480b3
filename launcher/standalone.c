/*
 * standalone.c: the single-node rendezvous backend.  Every round is this
 * node alone; the workers' store is the agent's own (fresh and empty for
 * every round); the restart budget is --max-restarts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <event2/event.h>

#include "agent.h"
#include "backend.h"
#include "options.h"
#include "store.h"

struct standalone {
	struct backend		 hdr;	/* first: a struct backend */
	struct agent_config	 cfg;
	struct round_info	 info;
	struct event		*defer;	/* delivers the pending callback */
	enum { SA_NONE, SA_ROUND, SA_FAIL, SA_FINISHED } pending;
	char			 why[256];
};

/* A random (version 4) UUID, as torchrun's standalone run id. */
static void
standalone_uuid(char *buf, size_t len)
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
standalone_deliver(evutil_socket_t fd, short what, void *arg)
{
	struct standalone *s = arg;
	const struct backend_cb *cb = &s->hdr.cb;
	int p = s->pending;

	s->pending = SA_NONE;
	if (p == SA_ROUND)
		cb->round(cb->arg, &s->info);
	else if (p == SA_FAIL)
		cb->fail(cb->arg, -1, s->why);
	else if (p == SA_FINISHED)
		cb->finished(cb->arg);
}

/* Queue a callback for the next loop turn. */
static void
standalone_queue(struct standalone *s, int what)
{
	s->pending = what;
	event_active(s->defer, EV_TIMEOUT, 0);
}

/* A new round on a fresh store. */
static void
standalone_round(struct standalone *s)
{
	s->info.round++;
	if (s->cfg.jobstore != NULL)
		store_reset(s->cfg.jobstore);
	standalone_queue(s, SA_ROUND);
}

/* ops->start: the first round. */
static int
standalone_start(struct backend *b, char *err, size_t errlen)
{
	struct standalone *s = (struct standalone *)b;

	s->info.round = (unsigned)-1;
	standalone_round(s);
	return 0;
}

/* ops->workers_failed: spend one restart, or fail the job. */
static void
standalone_failed(struct backend *b, const char *why)
{
	struct standalone *s = (struct standalone *)b;

	if (s->info.restart_count < s->cfg.opts->max_restarts) {
		s->info.restart_count++;
		standalone_round(s);
		return;
	}
	snprintf(s->why, sizeof(s->why), "%s", why);
	standalone_queue(s, SA_FAIL);
}

/* ops->workers_stopped: a new round without spending a restart. */
static void
standalone_stopped(struct backend *b)
{
	standalone_round((struct standalone *)b);
}

/* ops->workers_done: nobody else to wait for. */
static void
standalone_done(struct backend *b)
{
	standalone_queue((struct standalone *)b, SA_FINISHED);
}

/* ops->free. */
static void
standalone_free(struct backend *b)
{
	struct standalone *s = (struct standalone *)b;

	if (s == NULL)
		return;
	if (s->defer != NULL)
		event_free(s->defer);
	free(s);
}

static const struct backend_ops standalone_ops = {
	.name = "standalone",
	.start = standalone_start,
	.workers_failed = standalone_failed,
	.workers_stopped = standalone_stopped,
	.workers_done = standalone_done,
	.free = standalone_free,
};

/*
 * The standalone backend.  Run id: a random UUID with --standalone (as
 * torchrun) or without --rdzv-id (torchrun 2.x auto-standalone), else
 * --rdzv-id.
 */
struct backend *
standalone_new(struct event_base *base, const struct agent_config *cfg,
    const struct backend_cb *cb, char *err, size_t errlen)
{
	const struct cgrun_options *o = cfg->opts;
	struct standalone *s;

	if ((s = calloc(1, sizeof(*s))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	s->hdr.ops = &standalone_ops;
	s->hdr.cb = *cb;
	s->hdr.base = base;
	s->cfg = *cfg;
	if ((s->defer = event_new(base, -1, 0, standalone_deliver, s)) ==
	    NULL) {
		free(s);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	s->info.group_rank = 0;
	s->info.group_world_size = 1;
	s->info.rank_base = 0;
	s->info.world_size = s->info.local_world_size = cfg->nproc;
	snprintf(s->info.master_addr, sizeof(s->info.master_addr), "%s",
	    cfg->store_host);
	s->info.master_port = cfg->store_port;
	if (o->standalone || o->rdzv_id == NULL)
		standalone_uuid(s->info.run_id, sizeof(s->info.run_id));
	else
		snprintf(s->info.run_id, sizeof(s->info.run_id), "%s",
		    o->rdzv_id);
	return &s->hdr;
}

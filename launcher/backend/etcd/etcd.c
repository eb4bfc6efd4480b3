/*
 * etcd.c: the etcd-v3 rendezvous backend (also named "etcd" and "etcd-v2":
 * cgrun speaks etcd's v3 API for every name).  The rendezvous lives in an
 * etcd cluster: each agent holds a lease and a node key on it, watches the
 * run's keys, and every agent runs the same decision (etcd_round.c) on
 * what it reads, writing the result in a transaction on the state key's
 * revision.  No process of ours is a single point of failure; the job
 * store of a round is the agent of group rank 0's, as with c10d.
 *
 * Agent states: REGISTERING (lease, first read) -> JOINING (node key says
 * "wait" for round R) -> RUNNING (round delivered) -> STOPPING (another
 * node started a new round; workers stopping) -> JOINING ...; FAILED and
 * DONE (our workers failed / succeeded; the node key says so) wait for the
 * job's decision; CLOSING (lease revoked, keys cleaned) -> OVER.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "backend.h"
#include "errbuf.h"
#include "etcd_conf.h"
#include "etcd_round.h"
#include "etcd_sync.h"
#include "exitcodes.h"
#include "log.h"
#include "options.h"
#include "store.h"

#define ETCD_PREFIX	"/cgrun/v1/"	/* + run id + "/" */

/* The agent's states (etcd_enter; see above). */
enum etcd_state { ETCD_REGISTERING, ETCD_JOINING, ETCD_RUNNING,
	ETCD_STOPPING, ETCD_FAILED, ETCD_DONE, ETCD_CLOSING, ETCD_OVER,
	ETCD__STATES };

static const char *const etcd_state_names[] = { "REGISTERING", "JOINING",
	"RUNNING", "STOPPING", "FAILED", "DONE", "CLOSING", "OVER" };

_Static_assert(sizeof(etcd_state_names) / sizeof(etcd_state_names[0]) ==
    ETCD__STATES, "etcd_state_names does not match enum etcd_state");

struct etcd {
	struct backend		 hdr;	/* first: a struct backend */
	struct backend_config	 cfg;
	struct etcd_conf	 conf;
	char			 run_id[ROUND_RUNID_MAX];
	char			 prefix[ROUND_RUNID_MAX + 16];
	char			 id[ER_ID_MAX + 1];
	struct etcd_sync	*sync;
	struct er_node		 me;	/* our node key's value */
	enum etcd_state		 state;
	struct round_info	 info;
	int			 had_round;
	struct event		*last_call, *join_timer;
	int			 lc_armed, lc_over, join_over;
	uint32_t		 timers_round;	/* round the timers are for */
	uint32_t		 seen_round;	/* the state's, last read */
	struct er_state		 next;	/* a decision being written */
	int			 shown_round, shown_waiting, shown_spare;
	int			 end_status;
	char			 end_why[ER_WHY_MAX + ROUND_RUNID_MAX + 64];
};

/* Move the agent to a new state (logged). */
static void
etcd_enter(struct etcd *e, enum etcd_state s)
{
	if (e->state != s)
		log_debug("etcd %s -> %s", etcd_state_names[e->state],
		    etcd_state_names[s]);
	e->state = s;
}

/* Leaving is done: tell the agent. */
static void
etcd_closed(void *arg)
{
	struct etcd *e = arg;
	const struct backend_cb *cb = &e->hdr.cb;

	etcd_enter(e, ETCD_OVER);
	if (e->end_status == 0)
		cb->finished(cb->arg);
	else
		cb->fail(cb->arg, e->end_status, e->end_why);
}

/* The job is over for this node: leave etcd, then tell the agent. */
static void
etcd_over(struct etcd *e, int status, const char *why)
{
	if (e->state == ETCD_CLOSING || e->state == ETCD_OVER)
		return;
	e->end_status = status;
	snprintf(e->end_why, sizeof(e->end_why), "%s", why);
	evtimer_del(e->last_call);
	evtimer_del(e->join_timer);
	etcd_enter(e, ETCD_CLOSING);
	etcd_sync_close(e->sync, etcd_closed, e);
}

/* Timers belong to one round: a new round starts them afresh. */
static void
etcd_timers_round(struct etcd *e, uint32_t round)
{
	struct timeval tv = { e->conf.c.join_ms / 1000,
	    (e->conf.c.join_ms % 1000) * 1000 };

	if (e->timers_round == round && evtimer_pending(e->join_timer, NULL))
		return;
	if (e->timers_round != round) {
		evtimer_del(e->last_call);
		e->lc_armed = e->lc_over = e->join_over = 0;
	}
	e->timers_round = round;
	evtimer_add(e->join_timer, &tv);
}

/* Join round r: our node key says "wait" for it. */
static void
etcd_rejoin(struct etcd *e, uint32_t r)
{
	e->me.round = r;
	e->me.st = ER_WAIT;
	e->me.why[0] = '\0';
	etcd_sync_put_node(e->sync, &e->me);
	etcd_enter(e, ETCD_JOINING);
	etcd_timers_round(e, r);
}

/* One line per change of the round being formed. */
static void
etcd_progress(struct etcd *e, const struct er_view *v)
{
	const struct er_state *s = &v->state;
	size_t i, nw = 0;

	for (i = 0; i < v->nnodes; i++)
		nw += v->nodes[i].st == ER_WAIT && v->nodes[i].round == s->round;
	if (e->shown_round == (int)s->round && e->shown_waiting == (int)nw)
		return;
	e->shown_round = (int)s->round;
	e->shown_waiting = (int)nw;
	log_warnx("rendezvous %s round %u: %zu/%u nodes (min %u, max %u)%s",
	    e->run_id, s->round, nw, s->max, s->min, s->max, e->lc_armed ?
	    ", last call" : "");
}

/* The round is decided and we are member idx: a fresh store, then spawn. */
static void
etcd_deliver(struct etcd *e, const struct er_state *s, int idx)
{
	struct round_info *ri = &e->info;
	int i;

	memset(ri, 0, sizeof(*ri));
	ri->round = s->round;
	ri->group_rank = idx;
	ri->group_world_size = (int)s->nmembers;
	for (i = 0; i < idx; i++)
		ri->rank_base += (int)s->members[i].nproc;
	ri->world_size = (int)s->world;
	ri->local_world_size = e->cfg.nproc;
	snprintf(ri->master_addr, sizeof(ri->master_addr), "%s", s->addr);
	ri->master_port = (int)s->port;
	ri->restart_count = (int)s->restarts;
	snprintf(ri->run_id, sizeof(ri->run_id), "%s", e->run_id);
	if (e->cfg.jobstore != NULL)
		store_reset(e->cfg.jobstore);
	e->had_round = 1;
	e->shown_spare = 0;
	evtimer_del(e->join_timer);
	evtimer_del(e->last_call);
	log_info("rendezvous %s round %u: group_rank=%d/%zu ranks=%d..%d of %u "
	    "restarts=%u store=%s:%u (etcd)", e->run_id, s->round, idx,
	    s->nmembers, ri->rank_base, ri->rank_base + e->cfg.nproc - 1,
	    s->world, s->restarts, s->addr, s->port);
	etcd_enter(e, ETCD_RUNNING);
	e->hdr.cb.round(e->hdr.cb.arg, ri);
}

/* JOINING phase: stop what runs, rejoin what lags. */
static void
etcd_react_joining(struct etcd *e, const struct er_view *v)
{
	const struct er_state *s = &v->state;
	char why[ER_WHY_MAX + 64];

	if ((e->state == ETCD_RUNNING || e->state == ETCD_DONE) &&
	    e->info.round < s->round) {
		etcd_enter(e, ETCD_STOPPING);
		snprintf(why, sizeof(why), "new rendezvous round %u: %s",
		    s->round, s->why);
		e->hdr.cb.restart(e->hdr.cb.arg, why);
	} else if (e->state == ETCD_FAILED ||
	    (e->state == ETCD_JOINING && e->me.round < s->round))
		etcd_rejoin(e, s->round);
	if (e->state == ETCD_JOINING)
		etcd_progress(e, v);
}

/* RUNNING phase: our place in the round, or a spare's wait. */
static void
etcd_react_running(struct etcd *e, const struct er_view *v)
{
	const struct er_state *s = &v->state;
	int idx = er_member_index(s, e->id);

	if (e->state != ETCD_JOINING)
		return;
	if (idx >= 0 && e->me.round == s->round) {
		etcd_deliver(e, s, idx);
		return;
	}
	if (idx < 0 && !e->shown_spare) {
		e->shown_spare = 1;
		log_warnx("rendezvous %s round %u: %zu/%u nodes running; this "
		    "node waits as a spare", e->run_id, s->round, s->nmembers,
		    s->max);
	}
}

/* Follow the job's state. */
static void
etcd_react(struct etcd *e, const struct er_view *v)
{
	const struct er_state *s = &v->state;
	char why[ER_WHY_MAX + ROUND_RUNID_MAX + 32];

	switch (s->phase) {
	case ER_JOINING:
		etcd_react_joining(e, v);
		break;
	case ER_RUNNING:
		etcd_react_running(e, v);
		break;
	case ER_FINISHED:
		etcd_over(e, 0, "");
		break;
	case ER_FAILED:
		snprintf(why, sizeof(why), "rendezvous %s: %s", e->run_id,
		    s->why);
		etcd_over(e, strcmp(s->culprit, e->id) == 0 &&
		    e->state == ETCD_FAILED ? -1 : CGRUN_EXIT_RDZV, why);
		break;
	default:
		break;
	}
}

/* Decide for the job (every agent does; one write wins). */
static void
etcd_decide(struct etcd *e, struct er_view *v)
{
	struct timeval tv = { e->conf.c.last_call_ms / 1000,
	    (e->conf.c.last_call_ms % 1000) * 1000 };

	if (etcd_sync_writing(e->sync))
		return;
	v->min = (uint32_t)e->cfg.opts->nnodes_min;
	v->max = (uint32_t)e->cfg.opts->nnodes_max;
	v->max_restarts = (uint32_t)e->cfg.opts->max_restarts;
	v->join_ms = e->conf.c.join_ms;
	v->last_call_armed = e->lc_armed && e->timers_round == v->state.round;
	v->last_call_over = e->lc_over && e->timers_round == v->state.round;
	v->join_over = e->join_over && e->timers_round == v->state.round;
	switch (er_decide(v, &e->next)) {
	case ER_WRITE:
		log_info("etcd: %s round %u: %s -> %s (%s)", e->run_id,
		    e->next.round, v->state.exists ?
		    er_phase_name(v->state.phase) : "none",
		    er_phase_name(e->next.phase), e->next.why);
		etcd_sync_write_state(e->sync, &e->next, v->state.mod_rev);
		break;
	case ER_ARM_LAST_CALL:
		if (!e->lc_armed && e->timers_round == v->state.round) {
			e->lc_armed = 1;
			evtimer_add(e->last_call, &tv);
		}
		break;
	case ER_DISARM_LAST_CALL:	/* MIN again later: a fresh last call */
		e->lc_armed = e->lc_over = 0;
		evtimer_del(e->last_call);
		break;
	default:
		break;
	}
}

/* The run id is held by a job of another shape (--nnodes, --max-restarts):
 * refuse, as the c10d engine does (rdzv_peer.c); 1 if so. */
static int
etcd_shape_conflict(struct etcd *e, const struct er_view *v)
{
	const struct cgrun_options *o = e->cfg.opts;
	const struct er_state *s = &v->state;
	char why[ER_WHY_MAX + ROUND_RUNID_MAX];

	if (!s->exists || (s->min == (uint32_t)o->nnodes_min &&
	    s->max == (uint32_t)o->nnodes_max &&
	    s->max_restarts == (uint32_t)o->max_restarts))
		return 0;
	snprintf(why, sizeof(why), "rendezvous id %s is in use by another job "
	    "(nnodes %u:%u, max_restarts %u, %zu node(s), round %u); this one "
	    "asks nnodes %d:%d, max_restarts %d: give each job its own "
	    "--rdzv-id", e->run_id, s->min, s->max, s->max_restarts,
	    v->nnodes, s->round, o->nnodes_min, o->nnodes_max,
	    o->max_restarts);
	etcd_over(e, CGRUN_EXIT_RDZV, why);
	return 1;
}

/* First snapshot: clear a dead run's leftovers, or register. */
static void
etcd_register(struct etcd *e, const struct er_view *v)
{
	char why[ROUND_RUNID_MAX + 64];

	if (v->state.exists && v->state.phase >= ER_FINISHED) {
		if (v->nnodes == 0) {	/* an earlier job's: nobody left */
			log_info("etcd: removing the ended run %s's state",
			    e->run_id);
			etcd_sync_drop_state(e->sync, v->state.mod_rev);
			return;
		}
		snprintf(why, sizeof(why), "rendezvous %s is closed",
		    e->run_id);
		etcd_over(e, CGRUN_EXIT_RDZV, why);
		return;
	}
	if (etcd_shape_conflict(e, v))
		return;
	if (e->cfg.opts->local_addr == NULL &&
	    etcd_sync_local_ip(e->sync)[0] != '\0')
		snprintf(e->me.addr, sizeof(e->me.addr), "%s",
		    etcd_sync_local_ip(e->sync));
	etcd_rejoin(e, v->state.exists ? v->state.round : 0);
}

/* A fresh snapshot of the run's keys. */
static void
etcd_view_cb(void *arg, struct er_view *v)
{
	struct etcd *e = arg;
	char why[ER_WHY_MAX + 2 * ROUND_RUNID_MAX + 64];

	if (e->state == ETCD_CLOSING || e->state == ETCD_OVER)
		return;
	if (v->bad[0] != '\0') {
		snprintf(why, sizeof(why), "rendezvous %s: %sstate in etcd: %s",
		    e->run_id, e->prefix, v->bad);
		etcd_over(e, CGRUN_EXIT_RDZV, why);
		return;
	}
	if (e->state == ETCD_REGISTERING) {
		etcd_register(e, v);
		return;
	}
	if (er_view_node(v, e->id) == NULL && e->me.round <= v->state.round &&
	    !etcd_sync_writing(e->sync)) {
		/* our put may still be on its way: only a stale read lacks it */
		etcd_sync_put_node(e->sync, &e->me);
	}
	etcd_decide(e, v);
	if (v->state.exists) {
		e->seen_round = v->state.round;
		etcd_react(e, v);
	}
}

/* The cluster lost us (lease) or we lost it. */
static void
etcd_lost_cb(void *arg, const char *why)
{
	struct etcd *e = arg;
	char msg[ER_WHY_MAX + ROUND_RUNID_MAX + 64];

	snprintf(msg, sizeof(msg), "rendezvous %s: %s", e->run_id, why);
	etcd_over(e, CGRUN_EXIT_RDZV, msg);
}

/* The last call ended: decide on a fresh read. */
static void
etcd_last_call_cb(evutil_socket_t fd, short what, void *arg)
{
	struct etcd *e = arg;

	e->lc_over = 1;
	etcd_sync_refresh(e->sync);
}

/* join_timeout ended without a round. */
static void
etcd_join_cb(evutil_socket_t fd, short what, void *arg)
{
	struct etcd *e = arg;

	if (e->state != ETCD_JOINING)
		return;
	e->join_over = 1;
	etcd_sync_refresh(e->sync);
}

/* ops->start: lease, first read, then join. */
static int
etcd_start(struct backend *b, char *err, size_t errlen)
{
	struct etcd *e = (struct etcd *)b;

	etcd_sync_start(e->sync);
	return 0;
}

/* ops->workers_failed: our node key says so; the job decides. */
static void
etcd_workers_failed(struct backend *b, const char *why)
{
	struct etcd *e = (struct etcd *)b;

	if (e->state == ETCD_STOPPING) {	/* stopped for a new round anyway */
		b->ops->workers_stopped(b);
		return;
	}
	e->me.st = ER_FAILED_ST;
	e->me.round = e->info.round;
	/* the other nodes hear why; the state's field holds this much */
	snprintf(e->me.why, sizeof(e->me.why), "%.*s",
	    (int)sizeof(e->me.why) - 1, why != NULL ? why : "");
	etcd_sync_put_node(e->sync, &e->me);
	etcd_enter(e, ETCD_FAILED);
}

/* ops->workers_stopped: join the round being formed. */
static void
etcd_workers_stopped(struct backend *b)
{
	struct etcd *e = (struct etcd *)b;

	etcd_rejoin(e, e->seen_round);
	etcd_sync_refresh(e->sync);
}

/* ops->workers_done: our node key says so; the job ends when all are. */
static void
etcd_workers_done(struct backend *b)
{
	struct etcd *e = (struct etcd *)b;

	e->me.st = ER_DONE;
	e->me.round = e->info.round;
	etcd_sync_put_node(e->sync, &e->me);
	etcd_enter(e, ETCD_DONE);
}

/* ops->free: leave (the lease is revoked: our key goes at once). */
static void
etcd_free(struct backend *b)
{
	struct etcd *e = (struct etcd *)b;

	if (e == NULL)
		return;
	etcd_sync_free(e->sync);
	if (e->last_call)
		event_free(e->last_call);
	if (e->join_timer)
		event_free(e->join_timer);
	explicit_bzero(e->conf.password, sizeof(e->conf.password));
	free(e);
}

static const struct backend_ops etcd_ops = {
	"etcd-v3", etcd_start, etcd_workers_failed, etcd_workers_stopped,
	etcd_workers_done, etcd_free
};

/* Our node: rank sort key, store address, id (host-pid-random). */
static void
etcd_me(struct etcd *e)
{
	const struct cgrun_options *o = e->cfg.opts;
	unsigned r;

	if (o->local_addr != NULL)
		snprintf(e->me.host, sizeof(e->me.host), "%s", o->local_addr);
	else if (gethostname(e->me.host, sizeof(e->me.host)) == -1)
		snprintf(e->me.host, sizeof(e->me.host), "localhost");
	snprintf(e->me.addr, sizeof(e->me.addr), "%s", o->local_addr ?
	    o->local_addr : e->cfg.store_host);
	e->me.port = (uint32_t)e->cfg.store_port;
	e->me.nproc = (uint32_t)e->cfg.nproc;
	e->me.node_rank = o->slurm_step ? o->slurm_node_id : -1;
	if (getentropy(&r, sizeof(r)) == -1)
		r = (unsigned)time(NULL) ^ (unsigned)getpid();
	snprintf(e->id, sizeof(e->id), "%.60s-%d-%08x", e->me.host,
	    (int)getpid(), r);
}

/* Check the run id: it becomes part of etcd keys. */
static int
etcd_check_id(const char *id, char *err, size_t errlen)
{
	if (id == NULL || *id == '\0') {
		errbuf_set(err, errlen, "multi-node jobs need --rdzv-id (or a "
		    "batch system job id)");
		return -1;
	}
	if (strlen(id) >= ROUND_RUNID_MAX || strchr(id, '/') != NULL) {
		errbuf_set(err, errlen, "--rdzv-id: at most %d bytes, no '/' "
		    "(it names etcd keys)", ROUND_RUNID_MAX - 1);
		return -1;
	}
	return 0;
}

/* A new etcd-v3 backend; NULL with err (usage errors). */
struct backend *
etcd_new(struct event_base *base, const struct backend_config *cfg,
    const struct backend_cb *cb, char *err, size_t errlen)
{
	const struct cgrun_options *o = cfg->opts;
	struct etcd_sync_cb scb;
	struct etcd *e;

	if (etcd_check_id(o->rdzv_id, err, errlen) == -1)
		return NULL;
	if (o->nnodes_max > ER_NODES_MAX) {
		errbuf_set(err, errlen, "--rdzv-backend=etcd-v3: at most %d "
		    "nodes (--nnodes)", ER_NODES_MAX);
		return NULL;
	}
	if ((e = calloc(1, sizeof(*e))) == NULL) {
		errbuf_set(err, errlen, "out of memory");
		return NULL;
	}
	e->hdr.ops = &etcd_ops;
	e->hdr.cb = *cb;
	e->hdr.base = base;
	e->cfg = *cfg;
	e->shown_round = -1;
	snprintf(e->run_id, sizeof(e->run_id), "%s", o->rdzv_id);
	snprintf(e->prefix, sizeof(e->prefix), ETCD_PREFIX "%s/", o->rdzv_id);
	if (o->rdzv_backend != NULL && strcmp(o->rdzv_backend, "etcd-v3") != 0)
		log_info("--rdzv-backend=%s: cgrun speaks etcd's v3 API (its "
		    "JSON gateway) for it, as for etcd-v3", o->rdzv_backend);
	etcd_me(e);
	scb.view = etcd_view_cb;
	scb.lost = etcd_lost_cb;
	scb.arg = e;
	e->last_call = evtimer_new(base, etcd_last_call_cb, e);
	e->join_timer = evtimer_new(base, etcd_join_cb, e);
	if (etcd_conf_parse(o->rdzv_conf, &e->conf, err, errlen) == -1 ||
	    e->last_call == NULL || e->join_timer == NULL ||
	    (e->sync = etcd_sync_new(base, &e->conf, o->rdzv_endpoint,
	    e->prefix, e->id, &scb, err, errlen)) == NULL) {
		etcd_free(&e->hdr);
		return NULL;
	}
	log_info("etcd: run %s at %s keys %s node %s", e->run_id,
	    o->rdzv_endpoint, e->prefix, e->id);
	return &e->hdr;
}

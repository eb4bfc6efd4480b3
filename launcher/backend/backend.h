/*
 * backend.h: the interface between the agent (spawning, supervision,
 * restarts) and a rendezvous backend, and the types every backend shares.
 * The agent never knows which backend it runs; a backend never touches
 * worker processes and never includes the agent's headers.
 *
 * The backends (launcher/backend/):
 *   local.c    decides every round on this node: "standalone" (one node,
 *              the agent's own store) and "static" (--node-rank of
 *              --nnodes, node 0 hosts the store at --master-addr:
 *              --master-port or the --rdzv-endpoint); its restart budget
 *              is this node's --max-restarts (rendezvous/engine/budget.c)
 *   c10d.c     a client of the rendezvous engine (cgrun-rdzvd, or hosted
 *              in-process: c10d_host.c), which decides every round and
 *              spends the job's budget (rendezvous/engine/job.c); its
 *              connection to the endpoint is c10d_link.c's, the state
 *              the two share c10d_impl.h's
 *   backend.c  picks one from the options and creates it (backend_new)
 *
 * Protocol, all on the agent's event loop (callbacks are never called from
 * inside a backend_ops call: a backend defers them to the next loop turn):
 *
 *   agent                          backend
 *   ops->start()            --->   forms the first round
 *                           <---   cb->round(info)      spawn workers
 *   (a local worker fails; the agent stops all local workers)
 *   ops->workers_failed()   --->   spends one restart of the job's budget
 *                           <---   cb->round(info')     restart_count + 1
 *                      or   <---   cb->fail(status, why) budget spent
 *   (another node failed, or a node waits to join: multi-node only)
 *                           <---   cb->restart(why)     stop local workers
 *   ops->workers_stopped()  --->   joins the next round
 *                           <---   cb->round(info')
 *   (every local worker exited 0)
 *   ops->workers_done()     --->   exit barrier with the other nodes
 *                           <---   cb->finished()       agent exits 0
 *                      or   <---   cb->restart / cb->round (a node failed)
 *   ops->free()                    leaves without closing the rendezvous
 *
 * cb->round may also come while workers of an earlier round run or stop
 * (c10d: a restarted rendezvous server decided a round from what the
 * agents carried): the agent stops them and starts that round, without
 * calling workers_failed or workers_stopped; a cb->restart after it
 * supersedes it (the agent then rejoins with workers_stopped).
 *
 * cb->fail's status is a CGRUN_EXIT_* code (exitcodes.h) or, when the job
 * failed because workers failed with no restarts left, -1: the agent then
 * exits with its root-cause worker status.
 */
#ifndef CGRUN_BACKEND_H
#define CGRUN_BACKEND_H

#include <stddef.h>

#include "round.h"

struct cgrun_options;
struct event_base;
struct store;
struct backend;

/*
 * What every backend is given: the options, the resolved local world
 * size, and the agent's job store, already listening (bound before
 * anything publishes it) at store_host:store_port.  A backend that hosts
 * the workers' store for a round calls store_reset(jobstore) before
 * delivering the round and puts store_host/store_port in
 * round_info.master_addr/master_port.
 */
struct backend_config {
	const struct cgrun_options *opts;
	int		 nproc;		/* local workers (resolved) */
	struct store	*jobstore;	/* the agent's workers' store */
	const char	*store_host;	/* address workers use for it */
	int		 store_port;
};

struct backend_cb {
	void	(*round)(void *arg, const struct round_info *);
	void	(*restart)(void *arg, const char *why);
	void	(*fail)(void *arg, int status, const char *why);
	void	(*finished)(void *arg);
	void	*arg;
};

struct backend_ops {
	const char *name;
	int	(*start)(struct backend *, char *err, size_t errlen);
	void	(*workers_failed)(struct backend *, const char *why);
	void	(*workers_stopped)(struct backend *);
	void	(*workers_done)(struct backend *);
	void	(*free)(struct backend *);
};

/* Every backend struct starts with this header. */
struct backend {
	const struct backend_ops *ops;
	struct backend_cb	  cb;
	struct event_base	 *base;
	const char		 *run_id;	/* known before a round, when
						 * not --rdzv-id (NULL) */
};

/* A backend's constructor: NULL with err (a usage error) on failure. */
typedef struct backend *(*backend_new_fn)(struct event_base *,
	    const struct backend_config *, const struct backend_cb *,
	    char *err, size_t errlen);

/*
 * The i-th value --rdzv-backend accepts (i from 0: "static", "c10d",
 * "etcd-v3", and its spellings "etcd", "etcd-v2"), NULL past the last.
 */
const char	*backend_name(size_t i);
/* The name of the backend the options ask for (backend.c). */
const char	*backend_pick(const struct cgrun_options *);
/* That backend, created; NULL with err (a usage error) on failure. */
struct backend	*backend_new(struct event_base *, const struct backend_config *,
		    const struct backend_cb *, char *err, size_t errlen);

/* The constructors backend.c knows (one line per backend). */
struct backend	*local_new_standalone(struct event_base *,
		    const struct backend_config *, const struct backend_cb *,
		    char *err, size_t errlen);
struct backend	*local_new_static(struct event_base *,
		    const struct backend_config *, const struct backend_cb *,
		    char *err, size_t errlen);
struct backend	*c10d_new(struct event_base *, const struct backend_config *,
		    const struct backend_cb *, char *err, size_t errlen);
struct backend	*etcd_new(struct event_base *, const struct backend_config *,
		    const struct backend_cb *, char *err, size_t errlen);

#endif /* CGRUN_BACKEND_H */

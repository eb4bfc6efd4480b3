/*
 * backend.h: the interface between the agent (launcher/agent.c: spawning,
 * supervision, restarts) and a rendezvous backend (standalone, static,
 * c10d).  The agent never knows which backend it runs; a backend never
 * touches worker processes.
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
 * cb->fail's status is a CGRUN_EXIT_* code (exitcodes.h) or, when the job
 * failed because workers failed with no restarts left, -1: the agent then
 * exits with its root-cause worker status.
 */
#ifndef CGRUN_BACKEND_H
#define CGRUN_BACKEND_H

#include <stddef.h>

#include "round.h"

struct event_base;
struct backend;

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
};

#endif

/*
 * agent.h: the per-node agent (supervise/agent.c): rendezvous through a
 * backend, supervision of the workers (attempt.c, worker.c), restarts,
 * logs (logdir.c), failure report (report.c).
 *
 * Backend factory.  agent.c picks the backend from the options:
 *   --standalone, or one node (--nnodes N with N = 1) with no
 *   --rdzv-endpoint                                  -> "standalone"
 *   --standalone with --nnodes MAX > 1               -> "c10d"
 *   otherwise --rdzv-backend (default "static")      -> that backend
 * and calls its constructor from agent_backends[] (agent.c) with the
 * agent's config: the options, the resolved local world size, and the
 * agent's job store, already listening (bound before anything publishes
 * it) at store_host:store_port.  A backend that hosts the workers' store
 * for a round calls store_reset(jobstore) before delivering the round and
 * puts store_host/store_port in round_info.master_addr/master_port.
 * A multi-node backend (c10d.c, static.c) adds one line to agent_backends[].
 */
#ifndef CGRUN_AGENT_H
#define CGRUN_AGENT_H

#include <stddef.h>

struct event_base;
struct backend;
struct backend_cb;
struct cgrun_options;
struct plan;
struct store;

struct agent_config {
	const struct cgrun_options *opts;
	int		 nproc;		/* local workers (resolved) */
	struct store	*jobstore;	/* the agent's workers' store */
	const char	*store_host;	/* address workers use for it */
	int		 store_port;
};

typedef struct backend *(*backend_new_fn)(struct event_base *,
	    const struct agent_config *, const struct backend_cb *,
	    char *err, size_t errlen);

/* The standalone (single node, in-process store) backend: standalone.c. */
struct backend *standalone_new(struct event_base *, const struct agent_config *,
	    const struct backend_cb *, char *err, size_t errlen);

struct agent;

/*
 * A new agent; NULL with err set and *status the exit status to use when
 * the job cannot start (usage: no such backend; rendezvous: the store
 * cannot listen; internal).
 */
struct agent *agent_new(struct event_base *, const struct cgrun_options *,
	    int nproc, const struct plan *, int *status, char *err,
	    size_t errlen);
/*
 * The same with the backend made by bk_new instead of the one the options
 * name (NULL: agent_new's choice).  The test hook: tests/test_agent.c
 * drives the agent with a fake backend this way.
 */
struct agent *agent_new_with_backend(struct event_base *,
	    const struct cgrun_options *, int nproc, const struct plan *,
	    backend_new_fn bk_new, int *status, char *err, size_t errlen);
/* Run the job to its end; returns cgrun's exit status. */
int	agent_run(struct agent *);
void	agent_free(struct agent *);

/* For tests: empty cells in the state x event table (0: none). */
int	agent_table_holes(void);

#endif

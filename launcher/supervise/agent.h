/*
 * agent.h: the per-node agent (supervise/agent.c): rendezvous through a
 * backend (backend/backend.h: which one, and what it is given),
 * supervision of the workers (attempt.c, worker.c), restarts, logs
 * (logdir.c), failure report (report.c).
 */
#ifndef CGRUN_AGENT_H
#define CGRUN_AGENT_H

#include <stddef.h>

#include "backend.h"

struct event_base;
struct cgrun_options;
struct plan;

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
 * name (NULL: agent_new's choice).  The test hook: tests/launcher/test_agent.c
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

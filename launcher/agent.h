/*
 * agent.h: the per-node agent (agent.c): rendezvous through a backend
 * (backend/backend.h: which one, and what it is given), spawning,
 * supervision, restarts, logs, failure report.
 */
#ifndef CGRUN_AGENT_H
#define CGRUN_AGENT_H

#include <stddef.h>

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
/* Run the job to its end; returns cgrun's exit status. */
int	agent_run(struct agent *);
void	agent_free(struct agent *);

#endif

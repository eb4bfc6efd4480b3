/*
 * agent_impl.h: PRIVATE to the agent's files (supervise/agent.c,
 * agent_hang.c, agent_setup.c); nothing else includes it.  The agent's
 * state and events, struct agent, and the functions these files share:
 * the table's actions defined outside agent.c, and what agent.c offers
 * them (agent_enter, agent_event, the stop actions, the event wiring).
 * It does not include agent.h (agent.c includes both: t_layers.sh allows
 * no two modules including each other's header).
 */
#ifndef CGRUN_AGENT_IMPL_H
#define CGRUN_AGENT_IMPL_H

#include <stddef.h>

#include "logdir.h"
#include "round.h"
#include "spawn.h"
#include "watchdog.h"

struct agent;
struct backend;
struct backend_cb;
struct cgrun_options;
struct contain;
struct event;
struct event_base;
struct observe;
struct plan;
struct stacks;
struct store;

#define AGENT_KILL_WAIT_SECS	10	/* exit wait after SIGKILL (D state) */
#define AGENT_HOST_MAX		256

enum agent_state {
	S_RDZV,		/* waiting for a round from the backend */
	S_RUNNING,	/* workers running */
	S_STOP_FAILURE,	/* a worker failed; then: backend workers_failed */
	S_STOP_RESTART,	/* the backend asked; then: backend workers_stopped */
	S_STOP_SIGNAL,	/* a signal; then: exit 128 + signal */
	S_STOP_BKFAIL,	/* the job cannot go on; then: exit with its status */
	S_STOP_ROUND,	/* a new round came while workers of another ran;
			 * then: start it */
	S_DONE,		/* all workers exited 0; waiting for the backend */
	S_DIAGNOSE,	/* a rank hung: taking every rank's stacks (stacks.c) */
	S_EXIT,		/* the loop ends */
	S_NSTATES
};

enum agent_ev {
	E_ROUND,	/* backend: a round is ready (in a->next) */
	E_FAILED,	/* a worker failed (first failure of the attempt) */
	E_SUCCEEDED,	/* every worker gone, none failed */
	E_FAILED_ALL_GONE, /* every worker gone, some failed */
	E_SIGSTOP,	/* TERM, INT, HUP, QUIT (or another handled signal) */
	E_SIGINT_AGAIN,	/* a second INT: kill at once */
	E_SIGFWD,	/* USR1, USR2: only forwarded to the workers */
	E_GRACE,	/* shutdown timeout expired: KILL */
	E_KILLWAIT,	/* still not gone long after KILL: give up on them */
	E_BK_RESTART,	/* backend: stop the workers for a new round */
	E_BK_FAIL,	/* backend: the job cannot go on */
	E_BK_FINISHED,	/* backend: every node done */
	E_HUNG,		/* the watchdog: a rank is hung */
	E_STACKS,	/* the hang's diagnosis is done */
	E_NEVENTS
};

/* What S_DIAGNOSE ends in once the stacks are taken (agent_hang.c): a
 * stop for the hang (a failure), or for what the backend asked meanwhile. */
enum agent_after {
	AFTER_FAILURE,	/* the hung rank is the root cause */
	AFTER_RESTART,	/* E_BK_RESTART came: stop, then rejoin */
	AFTER_ROUND	/* E_ROUND came: stop, then start that round */
};

struct agent {
	struct event_base	*base;
	const struct cgrun_options *o;
	const struct plan	*plan;
	int			 nproc;
	struct backend		*bk;
	struct store		*store;
	char			 store_host[AGENT_HOST_MAX];
	int			 store_port;
	struct spawn_cmd	 cmd;
	enum agent_state	 state;
	struct round_info	 round;		/* of the workers started last */
	struct round_info	 next;		/* the backend's latest round */
	struct attempt		*at;		/* the current attempt, or NULL */
	struct contain		*contain;	/* all the job's processes */
	struct event		*sigev[33];
	int			 nsigev;
	struct event		*chld, *grace, *killwait, *kick;
	int			 stop_sig, fwd_sig, nsigint;
	int			 last_sig;	/* the latest stop signal */
	int			 hup_ignored;	/* started under nohup */
	int			 exit_status;
	int			 by_signal;	/* exited for a signal */
	int			 ran;		/* an attempt was started */
	char			 why[512];
	int			 bk_status;
	struct logdir		 logdir;
	char			 host[AGENT_HOST_MAX];
	struct watchdog		*wd;		/* or NULL */
	struct watchdog_hang	 hang;		/* the last E_HUNG */
	struct stacks		*stacks;	/* the diagnosis, or NULL */
	enum agent_after	 after_stacks;	/* what the diagnosis ends in */
	struct observe		*ob;		/* what operators see */
	char			 restart_why[256];	/* the backend's */
};

/* agent.c: the state change, the dispatch, the wiring. */
void	agent_enter(struct agent *, enum agent_state);
void	agent_event(struct agent *, enum agent_ev);
int	agent_wire(struct agent *);
void	agent_backend_cb(struct agent *, struct backend_cb *);
/* agent.c: the stop actions the hang path ends in. */
void	agent_stop_hung(struct agent *);
void	act_stop_failure(struct agent *);
void	act_stop_signal(struct agent *);
void	act_stop_kill(struct agent *);
void	act_stop_restart(struct agent *);
void	act_stop_bkfail(struct agent *);
void	act_stop_round(struct agent *);

/* agent_hang.c: the watchdog, and the table's S_DIAGNOSE actions. */
int	agent_open_watchdog(struct agent *, char *err, size_t errlen);
void	act_hung(struct agent *);
void	act_diagnosed(struct agent *);
void	act_restart_after_stacks(struct agent *);
void	act_round_after_stacks(struct agent *);
void	act_diag_signal(struct agent *);
void	act_diag_kill(struct agent *);
void	act_diag_bkfail(struct agent *);

/* agent_setup.c: after the loop, the report and the exit line. */
void	agent_finish(struct agent *);

#endif

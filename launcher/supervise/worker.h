/*
 * worker.h: one worker process of an attempt and its two output streams
 * (as tmux's job.c).  Its life is an explicit state, changed only through
 * worker_enter(), which logs "old -> new" at debug level:
 *
 *   NEW --start--> RUNNING --reaped--> EXITED --both pipes at EOF--> GONE
 *                     |                   `----drain timeout (closes)--^
 *                     `--reaped, pipes already at EOF---------------> GONE
 *   NEW --start failed, or never started---------------------------> GONE
 *   EXITED --worker_abandon() (a pipe still held after KILL)-------> GONE
 *   RUNNING --worker_abandon() (stuck after KILL)--> ABANDONED
 *   ABANDONED --reaped at last (counted as gone already)-----------> GONE
 *
 * A worker is GONE only when it was reaped AND both its pipes hit EOF (or
 * WORKER_DRAIN_SECS passed after its exit: a grandchild may hold a pipe),
 * so its last lines are never lost.  Entering GONE or ABANDONED calls
 * the owner's on_gone, once per worker: an ABANDONED worker already counts
 * as gone, and its late exit is still logged and reported.
 */
#ifndef CGRUN_WORKER_H
#define CGRUN_WORKER_H

#include <stddef.h>
#include <sys/types.h>

#define WORKER_DRAIN_SECS	2	/* pipe EOF wait after a worker's exit */

struct event_base;
struct cgrun_options;
struct plan;
struct report_failure;
struct round_info;
struct spawn_cmd;
struct watchdog;
struct worker;

enum worker_state {
	WORKER_NEW,		/* prepared, not started */
	WORKER_RUNNING,		/* started, not reaped */
	WORKER_EXITED,		/* reaped; a pipe is still open */
	WORKER_GONE,		/* reaped and pipes closed (or drained) */
	WORKER_ABANDONED,	/* not reaped long after KILL; counts as gone */
	WORKER__STATES
};

/* What every worker of an attempt shares (owned by the caller). */
struct worker_job {
	struct event_base		*base;
	const struct cgrun_options	*opts;
	const struct round_info		*round;
	const struct plan		*plan;		/* or NULL */
	const struct spawn_cmd		*cmd;
	int				 hup_ignored;	/* nohup */
	const char			*cgroup_procs;	/* contain.h, or NULL */
	int				 filter_out;	/* filtered_*.log, or -1 */
	int				 filter_err;
	struct watchdog			*wd;		/* or NULL */
	void				(*on_gone)(void *arg);
	void				*arg;
};

/* A NEW worker for local rank lr of the job; NULL with errno. */
struct worker *worker_new(const struct worker_job *, int lr);
/* Kill a worker not yet reaped (its group), then free it. */
void	worker_free(struct worker *);

/* Log directory, streams, environment, fork and exec; -1 with err set. */
int	worker_start(struct worker *, const char *attempt_dir, char *err,
	    size_t errlen);
/* The worker was reaped with wait status: log it, wait for its pipes. */
void	worker_reaped(struct worker *, int status);
/* Stop waiting for a worker stuck after SIGKILL (logged): counts as gone. */
void	worker_abandon(struct worker *, int kill_wait_secs);
/* A NEW worker that will never start (an earlier one failed) is GONE. */
void	worker_skip(struct worker *);
/* Send sig to the worker's process group (grandchildren too). */
void	worker_signal(const struct worker *, int sig);
/* Send sig to the main process only (not reaped yet). */
void	worker_signal_main(const struct worker *, int sig);
/* Send sig to pid if it is the worker's or in its group; -1 (ESRCH) not. */
int	worker_signal_member(const struct worker *, pid_t pid, int sig);

/*
 * Give fn every whole stderr line from now on, and (NULL, 0) at EOF
 * (output_tap); fn NULL removes the tap.  -1 when stderr is not read
 * through a pipe (redirected to a file alone, or not shown) or at EOF.
 */
int	worker_tap(struct worker *, void (*fn)(void *arg, const char *line,
	    size_t len), void *arg);
enum worker_state worker_state(const struct worker *);
/* Whether it started and was not reaped yet (RUNNING or ABANDONED). */
int	worker_unreaped(const struct worker *);
const char *worker_state_name(enum worker_state);
pid_t	worker_pid(const struct worker *);
int	worker_rank(const struct worker *);
/* The wait status of a reaped worker. */
int	worker_status(const struct worker *);
/* For the report: f's rank, pid, status, exec errno, error and log file. */
void	worker_failure(const struct worker *, struct report_failure *f);

#endif

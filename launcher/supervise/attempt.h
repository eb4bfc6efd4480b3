/*
 * attempt.h: the workers of one attempt (one rendezvous round on this
 * node): starting them all, reaping them, signalling their process
 * groups, counting the gone ones, and the failures the report will name
 * (root cause first).  It decides nothing: it tells its owner (the agent)
 * the first failure (on_failed) and that every worker is gone (on_all_gone).
 */
#ifndef CGRUN_ATTEMPT_H
#define CGRUN_ATTEMPT_H

#include <stddef.h>
#include <sys/types.h>

struct event_base;
struct cgrun_options;
struct logdir;
struct plan;
struct report_failure;
struct round_info;
struct spawn_cmd;
struct watchdog;
struct attempt;
struct stacks;

struct attempt_conf {
	struct event_base		*base;
	const struct cgrun_options	*opts;
	const struct round_info		*round;		/* the round's copy */
	const struct plan		*plan;		/* or NULL */
	const struct spawn_cmd		*cmd;
	struct logdir			*logdir;
	int				 nproc;
	int				 hup_ignored;
	struct contain			*contain;	/* contain.h, or NULL */
	struct watchdog			*wd;		/* or NULL */
	/* the first failure of the attempt (why: "rank 1 exit code 3") */
	void	(*on_failed)(void *arg, const char *why);
	/* every worker is gone (called once, maybe inside another call) */
	void	(*on_all_gone)(void *arg);
	/* a worker exited (f filled whatever its status), and whether it is
	 * the attempt's root cause here (so far: a hang's diagnosis may
	 * name another); NULL: not told */
	void	(*on_worker_exit)(void *arg, const struct report_failure *f,
		    int root_cause);
	void	*arg;
};

/* A new attempt of nproc NEW workers; NULL when out of memory. */
struct attempt *attempt_new(const struct attempt_conf *);
/*
 * Start the workers; -1 with err set when one could not start (the ones
 * after it never start and are gone; the started ones must be stopped).
 */
int	attempt_start(struct attempt *, char *err, size_t errlen);
/* Kill the workers not reaped yet, free everything. */
void	attempt_free(struct attempt *);

/* A child was reaped: 1 if it was a worker of this attempt. */
int	attempt_reaped(struct attempt *, pid_t, int status);
/* Send sig to every worker's process group. */
void	attempt_signal(struct attempt *, int sig);
/* Send sig to every worker's main process only (USR1/USR2 default). */
void	attempt_signal_main(struct attempt *, int sig);
/*
 * Send sig to pid, which must be local rank lr's main process or in its
 * process group while it runs; 0, or -1 with errno (ESRCH: it is not).
 */
int	attempt_signal_rank(struct attempt *, int lr, pid_t pid, int sig);
/* From now on failures are "after cgrun stopped it" in the report. */
void	attempt_stopping(struct attempt *);
/* Give up on workers not gone after SIGKILL; they count as gone. */
void	attempt_abandon(struct attempt *, int kill_wait_secs);

/*
 * A hang: take the stacks of every running worker (stacks.h; flagged is
 * the rank the detector named, or -1), written to the attempt's log
 * directory.  From now on worker exits (a Python rank dies of the
 * SIGABRT that makes it dump) are recorded "after cgrun stopped it" and
 * never call on_failed: the caller stops the workers when done() comes,
 * and must stacks_free() before attempt_free().  NULL with errno.
 */
struct stacks *attempt_stacks(struct attempt *, int flagged, int timeout_ms,
	    void (*done)(void *arg, const char *summary), void *arg);
/*
 * Local rank lr is hung (the watchdog said why: "hung: no progress for
 * 10 s"): it becomes the root cause and "rank R hung: ..." the attempt's
 * why, whatever its exit status turns out to be.
 */
void	attempt_hung(struct attempt *, int lr, const char *why);

/* The attempt's log directory (BASE/RUN_ID/attempt_N), or "". */
const char *attempt_dir(const struct attempt *);
/* The pid of local rank lr's worker, or 0 (never started). */
pid_t	attempt_pid(const struct attempt *, int lr);
/* Whether every worker is gone. */
int	attempt_all_gone(const struct attempt *);
/* How the first failure ended ("rank 1 exit code 3"), or "". */
const char *attempt_why(const struct attempt *);
/* The failures, root cause first, and their count. */
const struct report_failure *attempt_failures(const struct attempt *, int *n);

#endif

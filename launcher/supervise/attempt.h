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
struct attempt;

struct attempt_conf {
	struct event_base		*base;
	const struct cgrun_options	*opts;
	const struct round_info		*round;		/* the round's copy */
	const struct plan		*plan;		/* or NULL */
	const struct spawn_cmd		*cmd;
	struct logdir			*logdir;
	int				 nproc;
	int				 hup_ignored;
	/* the first failure of the attempt (why: "rank 1 exit code 3") */
	void	(*on_failed)(void *arg, const char *why);
	/* every worker is gone (called once, maybe inside another call) */
	void	(*on_all_gone)(void *arg);
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
/* From now on failures are "after cgrun stopped it" in the report. */
void	attempt_stopping(struct attempt *);
/* Give up on workers not gone after SIGKILL; they count as gone. */
void	attempt_abandon(struct attempt *, int kill_wait_secs);

/* Whether every worker is gone. */
int	attempt_all_gone(const struct attempt *);
/* How the first failure ended ("rank 1 exit code 3"), or "". */
const char *attempt_why(const struct attempt *);
/* The failures, root cause first, and their count. */
const struct report_failure *attempt_failures(const struct attempt *, int *n);

#endif

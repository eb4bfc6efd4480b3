/*
 * observe.h: WHAT OPERATORS AND JOB OWNERS SEE.  The agent's one
 * observation point: the agent (supervise/agent.c, agent_hang.c) calls an
 * observe_*() function at each thing that happens to the job, and the
 * observer hands it to its sinks:
 *
 *   the event log   --event-log (evlog.c): one JSON record per event
 *                   (docs/event-log.md)
 *   the metrics     metrics.c's facts, written to --metrics-file
 *                   (metrics_file.c) and served on --metrics-port
 *                   (rendezvous/daemon/http.c) (cgrun(1), METRICS)
 *
 * An observer without sinks does nothing; every function takes NULL.  It
 * decides nothing and never changes the job: a sink that cannot write
 * says so once and drops what it cannot write.
 *
 * The records of one attempt, in order (docs/event-log.md):
 *   [restart] round attempt_start (worker_exit | hang stacks)*
 *   [stop worker_exit*] attempt_end
 * after agent_start, and outcome last.
 */
#ifndef CGRUN_OBSERVE_H
#define CGRUN_OBSERVE_H

#include <stddef.h>
#include <sys/types.h>

struct cgrun_options;
struct event_base;
struct report_failure;
struct round_info;
struct watchdog;
struct watchdog_hang;
struct observe;

#define OBSERVE_HOST_MAX	256	/* bytes of --metrics-port's host */

/*
 * --metrics-port's "PORT", "HOST:PORT" or "[V6]:PORT" (PORT 0-65535; 0:
 * any free port; host 127.0.0.1 when not given).  Pure; 0, or -1 when
 * malformed.
 */
int	observe_listen_parse(const char *spec, char *host, size_t hostlen,
	    int *port);

/*
 * Whether the path tmpl of --event-log or --metrics-file (what names it in
 * err) uses only the variables cgrun replaces ($run_id, $node, $pid): a
 * typo such as $runid would else stay as text and every job would share
 * one file.  Pure; 0, or -1 with err.
 */
int	observe_path_check(const char *what, const char *tmpl, char *err,
	    size_t errlen);

/*
 * An --event-log of fd:N must be open for writing when cgrun starts: asked
 * before cgrun opens any descriptor of its own, which could otherwise
 * take number N (its loop's signal pipe, the job store) and receive the
 * records.  0, or -1 with err; the site file's event_log that fails is
 * warned about and dropped (0).
 */
int	observe_check_dest(struct cgrun_options *, char *err, size_t errlen);

struct observe_conf {
	struct event_base		*base;
	const struct cgrun_options	*opts;
	const char	*run_id;	/* the backend's, known before a round */
	const char	*node;		/* --local-addr or the host name */
	const char	*backend;	/* its name */
	int		 nproc;		/* local workers */
	struct watchdog	*wd;		/* progress per rank, or NULL */
};

/*
 * The observer and its sinks, as the options ask (--event-log,
 * --metrics-file, --metrics-port, --event-log-handler); NULL with err
 * set when a sink cannot be opened, but for the site file's event_log and
 * metrics_file, which are warned about and left out.
 */
struct observe *observe_new(const struct observe_conf *, char *err,
	    size_t errlen);
/* Write the last metrics, flush the event log (bounded), free.  NULL ok. */
void	observe_free(struct observe *);

/* The agent starts (before its first round). */
void	observe_start(struct observe *);
/* The agent's state changed (its name, agent.c's table). */
void	observe_state(struct observe *, const char *state);
/* A round arrived (the next attempt's); a restart when not the first. */
void	observe_round(struct observe *, const struct round_info *);
/* Its workers started: pids[lr], the attempt's log directory. */
void	observe_attempt_start(struct observe *, const struct round_info *,
	    const pid_t *pids, int n, const char *dir);
/* A worker exited (f filled for any exit), root cause of the attempt here
 * or not. */
void	observe_worker_exit(struct observe *, const struct report_failure *f,
	    int root_cause);
/* The watchdog found global rank rank hung. */
void	observe_hang(struct observe *, const struct watchdog_hang *, int rank);
/* The hang's diagnosis: culprit (global rank, or -1), where, the file. */
void	observe_stacks(struct observe *, int culprit, const char *where,
	    const char *path, const char *summary);
/* The workers are being stopped: why (failure, restart, signal,
 * backend-failure), with which signal, the grace before KILL. */
void	observe_stop(struct observe *, const char *reason, int sig,
	    double grace, const char *why);
/* Every worker of the attempt is gone: its failures, root cause first
 * (report.h), whether every worker succeeded. */
void	observe_attempt_end(struct observe *, const struct report_failure *f,
	    int n, int succeeded);
/* The job ends with exit_status: success, failure or signal, and why;
 * the watchdog (observe_conf) is not used after this. */
void	observe_finish(struct observe *, int exit_status, const char *result,
	    const char *why, const struct report_failure *f, int n);

#endif /* CGRUN_OBSERVE_H */

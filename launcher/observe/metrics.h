/*
 * metrics.h: the agent's metrics (cgrun(1), METRICS): what the observer
 * (observe.c) knows of the job, as plain data it updates, and the one
 * renderer of the Prometheus text format (0.0.4) that both the metrics
 * file (metrics_file.c, node_exporter's textfile collector) and the
 * loopback /metrics port (observe.c, rendezvous/daemon/http.c) serve.
 *
 * Names follow Prometheus' conventions: the program's prefix "cgrun_",
 * base units in the name (_seconds), _total on counters, Unix time as
 * _timestamp_seconds.  Every sample has the label run_id, so the files
 * of several jobs on one node can sit in the same collector directory.
 */
#ifndef CGRUN_METRICS_H
#define CGRUN_METRICS_H

#include <stddef.h>

struct evbuffer;

#define METRICS_LABEL_MAX	256	/* bytes of a label value, escaped */

/*
 * Seconds since local rank lr's last sign of progress: 0 with *idle set,
 * -1 when nothing is known (no watchdog, rank not running).
 */
typedef int (*metrics_idle_fn)(void *arg, int lr, double *idle);

/* What the metrics show; the observer owns and updates it. */
struct metrics_facts {
	const char		*run_id;
	const char		*node;
	const char		*backend;
	double			 start_time;	/* Unix time the agent started */
	const char		*state;		/* the agent's state's name */
	unsigned long long	 rounds;	/* rounds this agent took part in */
	unsigned long long	 attempts;	/* attempts started */
	unsigned long long	 exits;		/* worker exits */
	unsigned long long	 failures;	/* root-cause failures here */
	unsigned long long	 hangs;		/* hangs detected here */
	unsigned long long	 dropped;	/* event log records dropped */
	int			 restart_count;	/* the job's restarts spent */
	int			 max_restarts;
	int			 workers;	/* local workers of the attempt */
	int			 workers_up;	/* of them, running now */
	int			 rank_base;	/* global rank of local rank 0 */
	int			 has_failure;	/* the last_failure_* are set */
	int			 failure_code;	/* exit code, or 128 + signal */
	int			 failure_rank;
	double			 failure_time;	/* Unix time */
	double			 rdzv_last, rdzv_sum;	/* seconds */
	unsigned long long	 rdzv_count;
	double			 launch_last, launch_sum;	/* seconds */
	unsigned long long	 launch_count;
	int			 exited;	/* exit_status is final */
	int			 exit_status;
	metrics_idle_fn		 idle;		/* or NULL */
	void			*idle_arg;
};

/* Unix time now, in seconds (CLOCK_REALTIME). */
double	metrics_now(void);
/* Append every metric of m, rendered at Unix time now, to out. */
void	metrics_render(const struct metrics_facts *m, double now,
	    struct evbuffer *out);

/*
 * Escape s for a label value (backslash, double quote and newline as
 * \\, \" and \n; invalid UTF-8 replaced) into out, cut at a whole
 * character so that it fits outlen (>= 1).  Pure; returns out.
 */
const char *metrics_label(const char *s, char *out, size_t outlen);

#endif /* CGRUN_METRICS_H */

/*
 * metrics.c: the agent's metrics in the Prometheus text format (metrics.h),
 * rendered from the observer's facts; the list is in cgrun(1), METRICS.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <event2/buffer.h>

#include "http.h"
#include "metrics.h"
#include "utf8.h"

/* The labels every sample has, and the run id's escaped value. */
struct metrics_ctx {
	struct evbuffer	*out;
	char		 run_id[METRICS_LABEL_MAX];
};

/* Unix time now, in seconds. */
double
metrics_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Copy the escape of byte c (or c itself) into out; its length. */
static size_t
metrics_escape_byte(char c, char out[2])
{
	if (c == '\\' || c == '"' || c == '\n') {
		out[0] = '\\';
		out[1] = c == '\n' ? 'n' : c;
		return 2;
	}
	out[0] = c;
	return 1;
}

/* The length of the UTF-8 sequence starting with byte c (valid input). */
static size_t
metrics_seqlen(unsigned char c)
{
	if (c < 0x80)
		return 1;
	return c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
}

/* Escape a label value (see metrics.h). */
const char *
metrics_label(const char *s, char *out, size_t outlen)
{
	char valid[UTF8_VALID_SIZE(METRICS_LABEL_MAX)], esc[2];
	size_t i = 0, o = 0, n, k;

	utf8_valid(s, valid, sizeof(valid));
	while (valid[i] != '\0') {
		n = metrics_seqlen((unsigned char)valid[i]);
		if (n == 1) {
			k = metrics_escape_byte(valid[i], esc);
			if (o + k >= outlen)
				break;
			memcpy(out + o, esc, k);
		} else {
			if (o + n >= outlen)
				break;
			memcpy(out + o, valid + i, n);
			k = n;
		}
		o += k;
		i += n;
	}
	out[o] = '\0';
	return out;
}

/* One unlabelled (but for run_id) sample of an integer. */
static void
metrics_int(struct metrics_ctx *c, const char *name, const char *type,
    const char *help, long long v)
{
	http_metric_head(c->out, name, type, help);
	evbuffer_add_printf(c->out, "%s{run_id=\"%s\"} %lld\n", name, c->run_id,
	    v);
}

/* One sample of a number of seconds (or a Unix time). */
static void
metrics_secs(struct metrics_ctx *c, const char *name, const char *help,
    double v)
{
	http_metric_head(c->out, name, "gauge", help);
	evbuffer_add_printf(c->out, "%s{run_id=\"%s\"} %.6f\n", name,
	    c->run_id, v);
}

/* A summary without quantiles: the sum and count of durations. */
static void
metrics_summary(struct metrics_ctx *c, const char *name, const char *help,
    double sum, unsigned long long count)
{
	http_metric_head(c->out, name, "summary", help);
	evbuffer_add_printf(c->out, "%s_sum{run_id=\"%s\"} %.6f\n"
	    "%s_count{run_id=\"%s\"} %llu\n", name, c->run_id, sum, name,
	    c->run_id, count);
}

/* cgrun_info and cgrun_state: who this agent is and what it does. */
static void
metrics_identity(struct metrics_ctx *c, const struct metrics_facts *m)
{
	char node[METRICS_LABEL_MAX], bk[METRICS_LABEL_MAX];

	http_metric_head(c->out, "cgrun_info", "gauge", "The agent: its node, "
	    "rendezvous backend and version (always 1).");
	evbuffer_add_printf(c->out, "cgrun_info{run_id=\"%s\",node=\"%s\","
	    "backend=\"%s\",version=\"%s\"} 1\n", c->run_id,
	    metrics_label(m->node, node, sizeof(node)),
	    metrics_label(m->backend, bk, sizeof(bk)), CGRUN_VERSION);
	metrics_secs(c, "cgrun_start_time_seconds", "Start time of the agent "
	    "since the Unix epoch.", m->start_time);
	http_metric_head(c->out, "cgrun_state", "gauge", "The agent's state "
	    "(one sample, 1; see cgrun(1) for the states).");
	evbuffer_add_printf(c->out, "cgrun_state{run_id=\"%s\",state=\"%s\"} "
	    "1\n", c->run_id, m->state);
}

/* Rounds, attempts, restarts and the budget left. */
static void
metrics_restarts(struct metrics_ctx *c, const struct metrics_facts *m)
{
	int left = m->max_restarts - m->restart_count;

	metrics_int(c, "cgrun_rounds_total", "counter",
	    "Rendezvous rounds this agent took part in.", (long long)m->rounds);
	metrics_int(c, "cgrun_attempts_total", "counter",
	    "Attempts (worker groups) this agent started.",
	    (long long)m->attempts);
	metrics_int(c, "cgrun_restarts_total", "counter", "Restarts the job "
	    "spent on failures (TORCHELASTIC_RESTART_COUNT).",
	    m->restart_count);
	metrics_int(c, "cgrun_max_restarts", "gauge",
	    "Restarts the job may spend (--max-restarts).", m->max_restarts);
	metrics_int(c, "cgrun_restarts_left", "gauge",
	    "Restarts the job may still spend.", left > 0 ? left : 0);
}

/* Workers of the attempt, exits, failures, hangs. */
static void
metrics_workers(struct metrics_ctx *c, const struct metrics_facts *m)
{
	metrics_int(c, "cgrun_workers", "gauge",
	    "Local workers of the current attempt.", m->workers);
	metrics_int(c, "cgrun_workers_up", "gauge",
	    "Local workers running now.", m->workers_up);
	metrics_int(c, "cgrun_worker_exits_total", "counter",
	    "Local worker exits, successful or not.", (long long)m->exits);
	metrics_int(c, "cgrun_worker_failures_total", "counter",
	    "Local worker failures that stopped an attempt (root causes).",
	    (long long)m->failures);
	metrics_int(c, "cgrun_hangs_detected_total", "counter",
	    "Hung local ranks detected by the hang watchdog.",
	    (long long)m->hangs);
}

/* Per rank: its last progress and the seconds since (watchdog only). */
static void
metrics_progress(struct metrics_ctx *c, const struct metrics_facts *m,
    double now)
{
	double idle;
	int lr, pass;

	for (pass = 0; pass < 2 && m->idle != NULL; pass++) {
		http_metric_head(c->out, pass == 0 ?
		    "cgrun_rank_last_progress_timestamp_seconds" :
		    "cgrun_rank_idle_seconds", "gauge", pass == 0 ?
		    "Time of the rank's last sign of progress (or start) since "
		    "the Unix epoch." : "Seconds since the rank's last sign of "
		    "progress (or start).");
		for (lr = 0; lr < m->workers; lr++) {
			if (m->idle(m->idle_arg, lr, &idle) == -1)
				continue;
			evbuffer_add_printf(c->out, "%s{run_id=\"%s\",rank=\"%d\","
			    "local_rank=\"%d\"} %.3f\n", pass == 0 ?
			    "cgrun_rank_last_progress_timestamp_seconds" :
			    "cgrun_rank_idle_seconds", c->run_id,
			    m->rank_base + lr, lr, pass == 0 ? now - idle : idle);
		}
	}
}

/* The last root-cause failure, once there was one. */
static void
metrics_failure(struct metrics_ctx *c, const struct metrics_facts *m)
{
	if (!m->has_failure)
		return;
	metrics_int(c, "cgrun_last_failure_exit_code", "gauge", "Exit code of "
	    "the last local root-cause failure (128 + N: signal N).",
	    m->failure_code);
	metrics_int(c, "cgrun_last_failure_rank", "gauge",
	    "Global rank of the last local root-cause failure.",
	    m->failure_rank);
	metrics_secs(c, "cgrun_last_failure_timestamp_seconds", "Time of the "
	    "last local root-cause failure since the Unix epoch.",
	    m->failure_time);
}

/* Rendezvous and launch durations: the last one and their sums. */
static void
metrics_durations(struct metrics_ctx *c, const struct metrics_facts *m)
{
	metrics_summary(c, "cgrun_rendezvous_duration_seconds", "Time from "
	    "asking for a round to having it.", m->rdzv_sum, m->rdzv_count);
	metrics_secs(c, "cgrun_last_rendezvous_duration_seconds",
	    "The last round's rendezvous time.", m->rdzv_last);
	metrics_summary(c, "cgrun_launch_duration_seconds", "Time from a "
	    "round to every local worker started.", m->launch_sum,
	    m->launch_count);
	metrics_secs(c, "cgrun_last_launch_duration_seconds",
	    "The last attempt's launch time.", m->launch_last);
}

/* Render every metric (see metrics.h). */
void
metrics_render(const struct metrics_facts *m, double now,
    struct evbuffer *out)
{
	struct metrics_ctx c;

	c.out = out;
	metrics_label(m->run_id, c.run_id, sizeof(c.run_id));
	metrics_identity(&c, m);
	metrics_restarts(&c, m);
	metrics_workers(&c, m);
	metrics_progress(&c, m, now);
	metrics_failure(&c, m);
	metrics_durations(&c, m);
	metrics_int(&c, "cgrun_event_log_dropped_total", "counter",
	    "Event log records dropped (a reader too slow, or gone).",
	    (long long)m->dropped);
	if (m->exited)
		metrics_int(&c, "cgrun_exit_status", "gauge",
		    "The agent's exit status, once the job ended.",
		    m->exit_status);
}

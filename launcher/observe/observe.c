/*
 * observe.c: the agent's observation point (observe.h): each observe_*()
 * updates the metrics' facts (metrics.h), marks the metrics file changed
 * (metrics_file.c) and writes its event log record (evlog.c).  The
 * records' members are documented in docs/event-log.md and checked by
 * docs/event-log.schema.json.
 */
#include <sys/wait.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "errbuf.h"
#include "evlog.h"
#include "http.h"
#include "log.h"
#include "metrics.h"
#include "metrics_file.h"
#include "monotime.h"
#include "observe.h"
#include "options.h"
#include "report.h"
#include "round.h"
#include "template.h"
#include "watchdog.h"

struct observe {
	struct observe_conf	 c;
	char			 run_id[ROUND_RUNID_MAX];
	char			 node[OBSERVE_HOST_MAX];
	char			 mfile[PATH_MAX];	/* "" : none */
	int			 mport;		/* bound, or -1 */
	struct evlog		*log;
	struct metrics_file	*mf;
	struct http		*http;
	struct metrics_facts	 m;
	int			 attempt;	/* rounds received */
	int			 in_attempt;	/* attempt_start, no end yet */
	int			 exits;		/* of this attempt */
	double			 asked;		/* asked for a round (mono) */
	double			 round_at;	/* the round came (mono) */
	double			 started_at;	/* the attempt started (mono) */
};

/* Parse --metrics-port (see observe.h). */
int
observe_listen_parse(const char *spec, char *host, size_t hostlen, int *port)
{
	const char *colon = strrchr(spec, ':'), *ps = colon ? colon + 1 : spec;
	size_t n = strlen(ps);

	if (n == 0 || n > 5 || strspn(ps, "0123456789") != n ||
	    atoi(ps) > 65535)
		return -1;
	*port = atoi(ps);
	if (colon == NULL) {
		snprintf(host, hostlen, "127.0.0.1");
		return 0;
	}
	n = (size_t)(colon - spec);
	if (n >= 2 && spec[0] == '[' && spec[n - 1] == ']') {
		spec++;
		n -= 2;
	} else if (memchr(spec, ':', n) != NULL)
		return -1;	/* an IPv6 address needs its brackets */
	if (n == 0 || n >= hostlen || memchr(spec, ']', n) != NULL)
		return -1;
	memcpy(host, spec, n);
	host[n] = '\0';
	return 0;
}

/* The watchdog's idle seconds of local rank lr (metrics_idle_fn). */
static int
observe_idle(void *arg, int lr, double *idle)
{
	struct observe *ob = arg;

	return watchdog_idle(ob->c.wd, lr, idle);
}

/* The variables of the path options, in observe_path()'s order. */
#define OBSERVE_NVARS	3
static const char *const observe_vars[OBSERVE_NVARS] = { "run_id", "node",
	"pid" };

/* Check a path option's variables (see observe.h). */
int
observe_path_check(const char *what, const char *tmpl, char *err,
    size_t errlen)
{
	struct template_var vars[OBSERVE_NVARS];
	char name[64];
	int i;

	for (i = 0; i < OBSERVE_NVARS; i++)
		vars[i] = (struct template_var){ observe_vars[i], "" };
	if (!template_unknown(tmpl, vars, OBSERVE_NVARS, name, sizeof(name)))
		return 0;
	errbuf_set(err, errlen, "%s: no variable $%s in \"%.100s\" (there are "
	    "$run_id, $node and $pid; $$ is a $)", what, name, tmpl);
	return -1;
}

/*
 * A path option with $run_id (a '/' in it made '_'), $node and $pid
 * expanded into out; -1 with err when it does not fit.
 */
static int
observe_path(const struct observe *ob, const char *opt, const char *tmpl,
    char *out, size_t outlen, char *err, size_t errlen)
{
	char run[ROUND_RUNID_MAX], pid[16], *p;
	struct template_var vars[OBSERVE_NVARS];

	snprintf(run, sizeof(run), "%s", ob->run_id);
	for (p = run; (p = strchr(p, '/')) != NULL; p++)
		*p = '_';
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	vars[0] = (struct template_var){ observe_vars[0], run };
	vars[1] = (struct template_var){ observe_vars[1], ob->node };
	vars[2] = (struct template_var){ observe_vars[2], pid };
	if (template_expand(tmpl, vars, OBSERVE_NVARS, out, outlen) >= 0)
		return 0;
	errbuf_set(err, errlen, "--%s: path too long", opt);
	return -1;
}

/* Where the event log goes: --event-log, else the console for
 * --event-log-handler=console, else nowhere (NULL). */
static const char *
observe_log_dest(const struct cgrun_options *o)
{
	if (o->event_log != NULL)
		return o->event_log;
	if (o->event_log_handler != NULL &&
	    strcmp(o->event_log_handler, "console") == 0)
		return "fd:2";	/* torchrun's console handler: stderr */
	return NULL;
}

/*
 * A sink that cannot be opened (err says why): fatal (-1) when the
 * command line asked for it; one of the site file's (site: its line) is
 * only warned about, and the job goes on without it (0).
 */
static int
observe_sink_failed(const char *site, const char *key, const char *err)
{
	if (site == NULL)
		return -1;
	log_warnx("%s: %s: %s; the job goes on without it", site, key, err);
	return 0;
}

/* Check the event log's fd:N before cgrun opens anything (observe.h). */
int
observe_check_dest(struct cgrun_options *o, char *err, size_t errlen)
{
	const char *dest = observe_log_dest(o);

	if (dest == NULL || evlog_dest_check(dest, err, errlen) != -1)
		return 0;
	if (observe_sink_failed(o->event_log_site, "event_log", err) == -1)
		return -1;
	free(o->event_log);
	o->event_log = NULL;
	return 0;
}

/* --event-log, else the console for --event-log-handler=console. */
static int
observe_open_log(struct observe *ob, char *err, size_t errlen)
{
	const char *dest = observe_log_dest(ob->c.opts);
	char path[PATH_MAX];

	if (dest == NULL)
		return 0;
	if (observe_path(ob, "event-log", dest, path, sizeof(path), err,
	    errlen) == 0 && (ob->log = evlog_open(ob->c.base, path,
	    ob->run_id, ob->node, err, errlen)) != NULL)
		return 0;
	return observe_sink_failed(ob->c.opts->event_log_site, "event_log",
	    err);
}

/* --metrics-file: the textfile collector's file, written once now. */
static int
observe_open_file(struct observe *ob, char *err, size_t errlen)
{
	const struct cgrun_options *o = ob->c.opts;

	if (o->metrics_file == NULL)
		return 0;
	if (observe_path(ob, "metrics-file", o->metrics_file, ob->mfile,
	    sizeof(ob->mfile), err, errlen) == 0 && (ob->mf =
	    metrics_file_new(ob->c.base, ob->mfile, &ob->m, err, errlen)) !=
	    NULL)
		return 0;
	ob->mfile[0] = '\0';
	return observe_sink_failed(o->metrics_file_site, "metrics_file", err);
}

/* The /metrics source: every metric, rendered now. */
static void
observe_metrics_cb(struct evbuffer *out, void *arg)
{
	struct observe *ob = arg;

	metrics_render(&ob->m, metrics_now(), out);
}

/* --metrics-port: a loopback (or the given host's) /metrics. */
static int
observe_open_port(struct observe *ob, char *err, size_t errlen)
{
	struct http_source src = { observe_metrics_cb, NULL, ob };
	char host[OBSERVE_HOST_MAX], why[256];
	int port;

	if (ob->c.opts->metrics_port == NULL)
		return 0;
	if (observe_listen_parse(ob->c.opts->metrics_port, host, sizeof(host),
	    &port) == -1) {
		errbuf_set(err, errlen, "--metrics-port: malformed");
		return -1;
	}
	if ((ob->http = http_new(ob->c.base, "cgrun")) == NULL ||
	    http_add_source(ob->http, &src) == -1) {
		errbuf_set(err, errlen, "out of memory");
		return -1;
	}
	if (http_listen(ob->http, host, port, &ob->mport, why,
	    sizeof(why)) == -1) {
		errbuf_set(err, errlen, "--metrics-port: %s", why);
		return -1;
	}
	log_info("metrics listening on %s%s%s:%d", strchr(host, ':') ? "[" : "",
	    host, strchr(host, ':') ? "]" : "", ob->mport);
	return 0;
}

/* The facts the metrics start from. */
static void
observe_facts_init(struct observe *ob)
{
	struct metrics_facts *m = &ob->m;

	m->run_id = ob->run_id;
	m->node = ob->node;
	m->backend = ob->c.backend;
	m->start_time = metrics_now();
	m->state = "rendezvous";
	m->max_restarts = ob->c.opts->max_restarts;
	if (ob->c.wd != NULL) {
		m->idle = observe_idle;
		m->idle_arg = ob;
	}
}

/* The observer and its sinks (see observe.h). */
struct observe *
observe_new(const struct observe_conf *c, char *err, size_t errlen)
{
	struct observe *ob;

	if ((ob = calloc(1, sizeof(*ob))) == NULL) {
		errbuf_set(err, errlen, "out of memory");
		return NULL;
	}
	ob->c = *c;
	ob->mport = -1;
	ob->asked = monotime_s();
	snprintf(ob->run_id, sizeof(ob->run_id), "%s", c->run_id);
	snprintf(ob->node, sizeof(ob->node), "%s", c->node);
	observe_facts_init(ob);
	if (observe_open_log(ob, err, errlen) == -1 ||
	    observe_open_port(ob, err, errlen) == -1 ||
	    observe_open_file(ob, err, errlen) == -1)
		goto fail;
	return ob;
fail:
	observe_free(ob);
	return NULL;
}

/* The last metrics written, the event log flushed, everything freed. */
void
observe_free(struct observe *ob)
{
	if (ob == NULL)
		return;
	evlog_flush(ob->log);	/* what it loses counts in the last metrics */
	ob->m.dropped = evlog_dropped(ob->log);
	metrics_file_free(ob->mf);
	http_free(ob->http);
	evlog_close(ob->log);
	free(ob);
}

/* Something changed: the metrics file is written on the next turn. */
static void
observe_changed(struct observe *ob)
{
	ob->m.dropped = evlog_dropped(ob->log);
	metrics_file_changed(ob->mf);
}

/* Add a string member, or null for NULL or "". */
static void
observe_str(struct json_object *o, const char *key, const char *s)
{
	json_object_object_add(o, key, s != NULL && *s != '\0' ?
	    evlog_string(s) : NULL);
}

/* Add a number of seconds, to the microsecond ("0.001987", "30.0"). */
static void
observe_secs(struct json_object *o, const char *key, double s)
{
	char text[64];
	size_t n;

	n = (size_t)snprintf(text, sizeof(text), "%.6f", s);
	while (n > 2 && text[n - 1] == '0' && text[n - 2] != '.')
		text[--n] = '\0';
	json_object_object_add(o, key, json_object_new_double_s(s, text));
}

/* Add an int member. */
static void
observe_int(struct json_object *o, const char *key, long long v)
{
	json_object_object_add(o, key, json_object_new_int64(v));
}

/* The agent starts: what it was asked to run. */
void
observe_start(struct observe *ob)
{
	const struct cgrun_options *o;
	struct json_object *r;

	if (ob == NULL || (r = evlog_record(ob->log, "agent_start")) == NULL)
		return;
	o = ob->c.opts;
	json_object_object_add(r, "version",
	    json_object_new_string(CGRUN_VERSION));
	observe_int(r, "pid", getpid());
	observe_str(r, "backend", ob->c.backend);
	observe_int(r, "nproc", ob->c.nproc);
	observe_int(r, "nnodes_min", o->nnodes_min);
	observe_int(r, "nnodes_max", o->nnodes_max);
	observe_int(r, "max_restarts", o->max_restarts);
	observe_str(r, "program", o->script);
	if (o->hang_timeout > 0)
		observe_secs(r, "hang_timeout_seconds", o->hang_timeout);
	else
		json_object_object_add(r, "hang_timeout_seconds", NULL);
	observe_str(r, "metrics_file", ob->mfile);
	json_object_object_add(r, "metrics_port", ob->mport >= 0 ?
	    json_object_new_int(ob->mport) : NULL);
	evlog_emit(ob->log, r);
}

/* The agent's state changed (metrics only). */
void
observe_state(struct observe *ob, const char *state)
{
	if (ob == NULL)
		return;
	ob->m.state = state;
	observe_changed(ob);
}

/* A round after an earlier attempt: the restart record. */
static void
observe_restart(struct observe *ob, const struct round_info *ri)
{
	int left = ob->c.opts->max_restarts - ri->restart_count;
	struct json_object *r;

	if ((r = evlog_record(ob->log, "restart")) == NULL)
		return;
	json_object_object_add(r, "reason", json_object_new_string(
	    ri->restart_count > ob->m.restart_count ? "failure" :
	    "membership"));
	observe_int(r, "restart_count", ri->restart_count);
	observe_int(r, "max_restarts", ob->c.opts->max_restarts);
	observe_int(r, "restarts_left", left > 0 ? left : 0);
	evlog_emit(ob->log, r);
}

/* A round arrived: it begins the next attempt. */
void
observe_round(struct observe *ob, const struct round_info *ri)
{
	struct metrics_facts *m;
	struct json_object *r;
	char store[ROUND_ADDR_MAX + 16];
	double now;

	if (ob == NULL)
		return;
	m = &ob->m;
	now = monotime_s();
	evlog_set_attempt(ob->log, ++ob->attempt);
	if (ob->attempt > 1)
		observe_restart(ob, ri);
	m->rounds++;
	m->restart_count = ri->restart_count;
	m->rdzv_last = now - ob->asked;
	m->rdzv_sum += m->rdzv_last;
	m->rdzv_count++;
	ob->round_at = now;
	observe_changed(ob);
	if ((r = evlog_record(ob->log, "round")) == NULL)
		return;
	observe_int(r, "round", ri->round);
	observe_int(r, "group_rank", ri->group_rank);
	observe_int(r, "nodes", ri->group_world_size);
	observe_int(r, "world_size", ri->world_size);
	observe_int(r, "rank_base", ri->rank_base);
	observe_int(r, "local_world_size", ri->local_world_size);
	observe_int(r, "restart_count", ri->restart_count);
	snprintf(store, sizeof(store), strchr(ri->master_addr, ':') ?
	    "[%s]:%d" : "%s:%d", ri->master_addr, ri->master_port);
	observe_str(r, "store", store);
	observe_secs(r, "rendezvous_seconds", m->rdzv_last);
	evlog_emit(ob->log, r);
}

/* Its workers started (those with a pid; a start may fail midway). */
void
observe_attempt_start(struct observe *ob, const struct round_info *ri,
    const pid_t *pids, int n, const char *dir)
{
	struct json_object *r, *ws, *w;
	double now;
	int lr, up = 0;

	if (ob == NULL)
		return;
	now = monotime_s();
	for (lr = 0; lr < n; lr++)
		up += pids[lr] > 0;
	ob->in_attempt = 1;
	ob->exits = 0;
	ob->started_at = now;
	ob->m.attempts++;
	ob->m.workers = n;
	ob->m.workers_up = up;
	ob->m.rank_base = ri->rank_base;
	ob->m.launch_last = now - ob->round_at;
	ob->m.launch_sum += ob->m.launch_last;
	ob->m.launch_count++;
	observe_changed(ob);
	if ((r = evlog_record(ob->log, "attempt_start")) == NULL)
		return;
	observe_int(r, "restart_count", ri->restart_count);
	ws = json_object_new_array();
	for (lr = 0; ws != NULL && lr < n; lr++) {
		if (pids[lr] <= 0 || (w = json_object_new_object()) == NULL)
			continue;
		observe_int(w, "rank", ri->rank_base + lr);
		observe_int(w, "local_rank", lr);
		observe_int(w, "pid", pids[lr]);
		json_object_array_add(ws, w);
	}
	json_object_object_add(r, "workers", ws);
	observe_str(r, "log_dir", dir);
	observe_secs(r, "launch_seconds", ob->m.launch_last);
	evlog_emit(ob->log, r);
}

/* How a worker ended: exit_code or signal (the other null). */
static void
observe_status(struct json_object *r, int status)
{
	char sig[16];
	const char *name;

	json_object_object_add(r, "exit_code", WIFEXITED(status) ?
	    json_object_new_int(WEXITSTATUS(status)) : NULL);
	if (!WIFSIGNALED(status)) {
		json_object_object_add(r, "signal", NULL);
		return;
	}
	name = options_signame(WTERMSIG(status));
	if (name != NULL)
		snprintf(sig, sizeof(sig), "SIG%s", name);
	else
		snprintf(sig, sizeof(sig), "%d", WTERMSIG(status));
	json_object_object_add(r, "signal", json_object_new_string(sig));
}

/* A worker exited. */
void
observe_worker_exit(struct observe *ob, const struct report_failure *f,
    int root_cause)
{
	struct json_object *r;

	if (ob == NULL)
		return;
	ob->m.exits++;
	ob->exits++;
	if (ob->m.workers_up > 0)
		ob->m.workers_up--;
	observe_changed(ob);
	if ((r = evlog_record(ob->log, "worker_exit")) == NULL)
		return;
	observe_int(r, "rank", f->rank);
	observe_int(r, "local_rank", f->local_rank);
	observe_int(r, "pid", f->pid);
	observe_status(r, f->status);
	json_object_object_add(r, "failed", json_object_new_boolean(
	    f->status != 0 || f->hung[0] != '\0'));
	json_object_object_add(r, "after_stop",
	    json_object_new_boolean(f->after_stop));
	json_object_object_add(r, "root_cause",
	    json_object_new_boolean(root_cause));
	observe_str(r, "log_file", f->log_file);
	evlog_emit(ob->log, r);
}

/* The watchdog found a rank hung. */
void
observe_hang(struct observe *ob, const struct watchdog_hang *h, int rank)
{
	struct json_object *r;

	if (ob == NULL)
		return;
	ob->m.hangs++;
	observe_changed(ob);
	if ((r = evlog_record(ob->log, "hang")) == NULL)
		return;
	observe_int(r, "rank", rank);
	observe_int(r, "local_rank", h->lr);
	observe_secs(r, "idle_seconds", h->idle);
	observe_secs(r, "timeout_seconds", h->timeout);
	observe_str(r, "source", h->source);
	observe_str(r, "section", h->section);
	observe_str(r, "why", h->why);
	evlog_emit(ob->log, r);
}

/* The hang's diagnosis is done. */
void
observe_stacks(struct observe *ob, int culprit, const char *where,
    const char *path, const char *summary)
{
	struct json_object *r;

	if (ob == NULL || (r = evlog_record(ob->log, "stacks")) == NULL)
		return;
	json_object_object_add(r, "culprit_rank", culprit >= 0 ?
	    json_object_new_int(culprit) : NULL);
	observe_str(r, "where", where);
	observe_str(r, "stacks_file", path);
	observe_str(r, "summary", summary);
	evlog_emit(ob->log, r);
}

/* The workers are being stopped. */
void
observe_stop(struct observe *ob, const char *reason, int sig, double grace,
    const char *why)
{
	struct json_object *r;
	char name[16];

	if (ob == NULL || (r = evlog_record(ob->log, "stop")) == NULL)
		return;
	snprintf(name, sizeof(name), "SIG%s", options_signame(sig) ?
	    options_signame(sig) : "?");
	observe_str(r, "reason", reason);
	observe_str(r, "signal", name);
	observe_secs(r, "grace_seconds", grace);
	observe_str(r, "why", why);
	evlog_emit(ob->log, r);
}

/* The root cause among an attempt's failures here: f[0] when it is one. */
static const struct report_failure *
observe_root(const struct report_failure *f, int n)
{
	return n > 0 && (!f[0].after_stop || f[0].hung[0] != '\0') ? &f[0] :
	    NULL;
}

/* The root cause as a member: rank, pid, how it ended, hung or not. */
static void
observe_root_member(struct json_object *r, const struct report_failure *f)
{
	struct json_object *c;

	if (f == NULL || (c = json_object_new_object()) == NULL) {
		json_object_object_add(r, "root_cause", NULL);
		return;
	}
	observe_int(c, "rank", f->rank);
	observe_int(c, "local_rank", f->local_rank);
	observe_int(c, "pid", f->pid);
	observe_status(c, f->status);
	observe_str(c, "hung", f->hung);
	json_object_object_add(r, "root_cause", c);
}

/* The last failure's metrics, from a root cause. */
static void
observe_failure(struct observe *ob, const struct report_failure *f)
{
	ob->m.failures++;
	ob->m.has_failure = 1;
	ob->m.failure_code = report_exit_status(f);
	ob->m.failure_rank = f->rank;
	ob->m.failure_time = (double)f->when_ms / 1000;
}

/* Every worker of the attempt is gone (once per attempt). */
void
observe_attempt_end(struct observe *ob, const struct report_failure *f,
    int n, int succeeded)
{
	const struct report_failure *root = observe_root(f, n);
	struct json_object *r;
	double now;

	if (ob == NULL || !ob->in_attempt)
		return;
	now = monotime_s();
	ob->in_attempt = 0;
	ob->asked = now;
	ob->m.workers_up = 0;
	if (root != NULL)
		observe_failure(ob, root);
	observe_changed(ob);
	if ((r = evlog_record(ob->log, "attempt_end")) == NULL)
		return;
	observe_str(r, "outcome", succeeded ? "succeeded" : root != NULL ?
	    "failed" : "stopped");
	observe_secs(r, "duration_seconds", now - ob->started_at);
	observe_int(r, "exits", ob->exits);
	observe_int(r, "failures", n);
	observe_root_member(r, root);
	evlog_emit(ob->log, r);
}

/* The job ends: the final record. */
void
observe_finish(struct observe *ob, int exit_status, const char *result,
    const char *why, const struct report_failure *f, int n)
{
	struct json_object *r;

	if (ob == NULL)
		return;
	ob->m.exited = 1;
	ob->m.exit_status = exit_status;
	ob->m.idle = NULL;	/* no rank runs; the watchdog goes first */
	ob->c.wd = NULL;
	observe_changed(ob);
	if ((r = evlog_record(ob->log, "outcome")) == NULL)
		return;
	observe_str(r, "result", result);
	observe_int(r, "exit_status", exit_status);
	observe_str(r, "why", why);
	observe_int(r, "restart_count", ob->m.restart_count);
	observe_int(r, "max_restarts", ob->c.opts->max_restarts);
	observe_int(r, "events_dropped", (long long)evlog_dropped(ob->log));
	observe_root_member(r, exit_status != 0 ? observe_root(f, n) : NULL);
	evlog_emit(ob->log, r);
}

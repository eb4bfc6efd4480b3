/*
 * options_check.c: the option values and combinations checked once the
 * command line and the PET_* fallbacks are read (options_parse calls
 * options_check last): node ranges, --nproc-per-node, comma lists,
 * signal names, enumerated values, numeric ranges, options that exclude
 * each other.  Defaults that depend on other values are filled here.
 */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "evlog.h"
#include "observe.h"
#include "options.h"
#include "options_priv.h"

/* Parse --nnodes "N" or "MIN:MAX" with 0 < MIN <= MAX. */
static enum options_result
options_check_nnodes(struct cgrun_options *o, char *err, size_t errlen)
{
	char buf[64], *colon;

	o->nnodes_min = o->nnodes_max = 1;
	if (o->nnodes == NULL)
		return OPTIONS_OK;
	if (strlen(o->nnodes) >= sizeof(buf))
		goto bad;
	strcpy(buf, o->nnodes);
	if ((colon = strchr(buf, ':')) != NULL) {
		*colon = '\0';
		if (options_parse_int(buf, 1, 1 << 20, &o->nnodes_min) == -1 ||
		    options_parse_int(colon + 1, 1, 1 << 20,
		    &o->nnodes_max) == -1)
			goto bad;
	} else {
		if (options_parse_int(buf, 1, 1 << 20, &o->nnodes_min) == -1)
			goto bad;
		o->nnodes_max = o->nnodes_min;
	}
	if (o->nnodes_min <= o->nnodes_max)
		return OPTIONS_OK;
bad:
	return options_error(err, errlen,
	    "--nnodes: expected N or MIN:MAX with "
	    "0 < MIN <= MAX, got \"%s\"", o->nnodes);
}

/* --nproc-per-node: a positive number, cpu, gpu or auto. */
static enum options_result
options_check_nproc(struct cgrun_options *o, char *err, size_t errlen)
{
	int n;

	if (o->nproc_per_node == NULL && (o->nproc_per_node = strdup("1")) ==
	    NULL)
		return options_error(err, errlen, "out of memory");
	if (strcmp(o->nproc_per_node, "cpu") == 0 ||
	    strcmp(o->nproc_per_node, "gpu") == 0 ||
	    strcmp(o->nproc_per_node, "auto") == 0 ||
	    options_parse_int(o->nproc_per_node, 1, OPTIONS_MAX_LOCAL, &n) == 0)
		return OPTIONS_OK;
	return options_error(err, errlen, "--nproc-per-node: expected a number "
	    "from 1 to %d, cpu, gpu or auto, got \"%s\"", OPTIONS_MAX_LOCAL,
	    o->nproc_per_node);
}

/* --local-ranks-filter: a comma list of local ranks. */
static enum options_result
options_check_filter(struct cgrun_options *o, char *err, size_t errlen)
{
	const char *p = o->local_ranks_filter;
	char *end;
	long v;

	if (p == NULL)
		return OPTIONS_OK;
	if (*p == '\0') {	/* torchrun: "" means no filter */
		free(o->local_ranks_filter);
		o->local_ranks_filter = NULL;
		return OPTIONS_OK;
	}
	for (;;) {
		v = strtol(p, &end, 10);
		if (end == p || v < 0 || v >= OPTIONS_MAX_LOCAL ||
		    (*end != ',' && *end != '\0'))
			return options_error(err, errlen,
			    "--local-ranks-filter: "
			    "expected local ranks like 0,2, got \"%s\"",
			    o->local_ranks_filter);
		if (*end == '\0')
			return OPTIONS_OK;
		p = end + 1;
	}
}

/* --signals-to-handle: a comma list of signal names. */
static enum options_result
options_check_signals(struct cgrun_options *o, char *err, size_t errlen)
{
	static const int defaults[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT,
	    SIGUSR1, SIGUSR2, 0 };
	char buf[512], *tok, *save = NULL;
	int n = 0, sig;

	if (o->signals_to_handle == NULL) {
		memcpy(o->signals, defaults, sizeof(defaults));
		return OPTIONS_OK;
	}
	if (strlen(o->signals_to_handle) >= sizeof(buf))
		return options_error(err, errlen,
		    "--signals-to-handle: too long");
	strcpy(buf, o->signals_to_handle);
	for (tok = strtok_r(buf, ", ", &save); tok != NULL;
	    tok = strtok_r(NULL, ", ", &save)) {
		sig = options_signum(tok);
		if (sig == -1 || sig == SIGKILL || sig == SIGSTOP ||
		    sig == SIGCHLD)
			return options_error(err, errlen,
			    "--signals-to-handle: "
			    "cannot handle signal \"%s\"", tok);
		if (n == (int)(sizeof(o->signals) / sizeof(o->signals[0])) - 1)
			return options_error(err, errlen,
			    "--signals-to-handle: too many signals");
		o->signals[n++] = sig;
	}
	o->signals[n] = 0;
	return OPTIONS_OK;
}

/* --rdzv-conf: k=v pairs, comma separated, no empty key or value. */
static enum options_result
options_check_rdzv_conf(struct cgrun_options *o, char *err, size_t errlen)
{
	const char *p = o->rdzv_conf, *eq, *comma;

	if (p == NULL || *p == '\0')
		return OPTIONS_OK;
	for (;;) {
		comma = strchr(p, ',');
		if (comma == NULL)
			comma = p + strlen(p);
		eq = memchr(p, '=', (size_t)(comma - p));
		if (eq == NULL || eq == p || eq + 1 == comma)
			return options_error(err, errlen,
			    "--rdzv-conf: expected "
			    "key=value,..., got \"%.*s\"", (int)(comma - p), p);
		if (*comma == '\0')
			return OPTIONS_OK;
		p = comma + 1;
	}
}

/* One-of check for an enumerated string option. */
static enum options_result
options_check_oneof(const char *val, const char *name,
    const char *const *allowed, char *err, size_t errlen)
{
	size_t i;

	if (val == NULL)
		return OPTIONS_OK;
	for (i = 0; allowed[i] != NULL; i++)
		if (strcmp(val, allowed[i]) == 0)
			return OPTIONS_OK;
	return options_error(err, errlen,
	    "--%s: unknown value \"%s\"", name, val);
}

/* --rdzv-backend: one of the names the registry has (backend.c). */
static enum options_result
options_check_backend(const char *val, char *err, size_t errlen)
{
	const char *name;
	size_t i;

	if (val == NULL)
		return OPTIONS_OK;
	for (i = 0; (name = backend_name(i)) != NULL; i++)
		if (strcmp(val, name) == 0)
			return OPTIONS_OK;
	return options_error(err, errlen,
	    "--rdzv-backend: unknown value \"%s\"", val);
}

/*
 * --logs-specs: torchrun loads NAME from the Python entry points
 * "torchrun.logs_specs", where only "default" ships; cgrun has that
 * layout and cannot load plugins, so any other name is refused (torchrun
 * fails too when the plugin is missing).
 */
static enum options_result
options_check_logs_specs(const struct cgrun_options *o, char *err,
    size_t errlen)
{
	if (o->logs_specs == NULL || strcmp(o->logs_specs, "default") == 0)
		return OPTIONS_OK;
	return options_error(err, errlen, "--logs-specs: no logs specs "
	    "\"%.100s\": cgrun has only \"default\" and cannot load "
	    "torchrun.logs_specs Python plugins", o->logs_specs);
}

/*
 * What operators see: --event-log FILE or fd:N (evlog.h), --metrics-file
 * a file, --metrics-port [HOST:]PORT (PORT 0: any free one).
 */
static enum options_result
options_check_observe(const struct cgrun_options *o, char *err,
    size_t errlen)
{
	char host[OBSERVE_HOST_MAX];
	int fd, port;

	if (o->event_log != NULL && (o->event_log[0] == '\0' ||
	    evlog_dest_parse(o->event_log, &fd) == -1))
		return options_error(err, errlen, "--event-log: expected a "
		    "file or fd:N, got \"%.100s\"", o->event_log);
	if (o->metrics_file != NULL && o->metrics_file[0] == '\0')
		return options_error(err, errlen, "--metrics-file: empty");
	if ((o->event_log != NULL && observe_path_check("--event-log",
	    o->event_log, err, errlen) == -1) || (o->metrics_file != NULL &&
	    observe_path_check("--metrics-file", o->metrics_file, err,
	    errlen) == -1))
		return OPTIONS_ERROR;
	if (o->metrics_port != NULL && observe_listen_parse(o->metrics_port,
	    host, sizeof(host), &port) == -1)
		return options_error(err, errlen, "--metrics-port: expected "
		    "PORT or HOST:PORT (PORT 0-65535), got \"%.100s\"",
		    o->metrics_port);
	return OPTIONS_OK;
}

/* Numeric ranges of the remaining options. */
static enum options_result
options_check_numbers(struct cgrun_options *o, char *err, size_t errlen)
{
	const char *env;

	if (o->max_restarts < 0)
		return options_error(err, errlen,
		    "--max-restarts: must be >= 0");
	if (!(o->monitor_interval > 0))
		return options_error(err, errlen,
		    "--monitor-interval: must be > 0");
	if (o->node_rank < 0)
		return options_error(err, errlen, "--node-rank: must be >= 0");
	if (o->explicit_master_port &&
	    (o->master_port < 0 || o->master_port > 65535))
		return options_error(err, errlen,
		    "--master-port: must be 0-65535");
	if (isnan(o->shutdown_timeout) &&
	    (env = getenv("TORCH_ELASTIC_SHUTDOWN_TIMEOUT")) != NULL &&
	    options_parse_double(env, &o->shutdown_timeout) == -1)
		return options_error(err, errlen,
		    "TORCH_ELASTIC_SHUTDOWN_TIMEOUT: "
		    "expected a number, got \"%s\"", env);
	if (isnan(o->shutdown_timeout))
		o->shutdown_timeout = 30;
	if (o->shutdown_timeout < 0 || o->shutdown_timeout > 1e7)
		return options_error(err, errlen, "--shutdown-timeout: must be "
		    ">= 0 seconds");
	if (isnan(o->exit_barrier_timeout))
		o->exit_barrier_timeout = 300;	/* torchrun's */
	if (!isnan(o->hang_first_timeout) && o->hang_first_timeout <= 0)
		return options_error(err, errlen, "--hang-first-timeout: must "
		    "be > 0 (leave it out for the default)");
	return OPTIONS_OK;
}

/* Validate values and combinations once everything is parsed. */
enum options_result
options_check(struct cgrun_options *o, char *err, size_t errlen)
{
	static const char *const methods[] = { "spawn", "fork", "forkserver",
	    NULL };
	static const char *const vis[] = { "all", "own", NULL };
	static const char *const ttys[] = { "auto", "always", "never", NULL };
	static const char *const progress[] = { "heartbeat", "output", NULL };
	static const char *const handlers[] = { "null", "console",
	    "dynamic_rendezvous", NULL };
	enum options_result r;

	if ((r = options_check_nnodes(o, err, errlen)) != OPTIONS_OK ||
	    (r = options_check_nproc(o, err, errlen)) != OPTIONS_OK ||
	    (r = options_check_filter(o, err, errlen)) != OPTIONS_OK ||
	    (r = options_check_signals(o, err, errlen)) != OPTIONS_OK ||
	    (r = options_check_rdzv_conf(o, err, errlen)) != OPTIONS_OK ||
	    (r = options_check_numbers(o, err, errlen)) != OPTIONS_OK ||
	    (r = options_check_logs_specs(o, err, errlen)) != OPTIONS_OK ||
	    (r = options_check_observe(o, err, errlen)) != OPTIONS_OK ||
	    (r = options_check_oneof(o->event_log_handler, "event-log-handler",
	    handlers, err, errlen)) != OPTIONS_OK ||
	    (r = options_check_oneof(o->start_method, "start-method", methods,
	    err, errlen)) != OPTIONS_OK ||
	    (r = options_check_oneof(o->gpu_visibility, "gpu-visibility", vis,
	    err, errlen)) != OPTIONS_OK ||
	    (r = options_check_backend(o->rdzv_backend, err, errlen)) !=
	    OPTIONS_OK ||
	    (r = options_check_oneof(o->tty, "tty", ttys, err, errlen)) !=
	    OPTIONS_OK ||
	    (r = options_check_oneof(o->hang_progress, "hang-progress",
	    progress, err, errlen)) != OPTIONS_OK)
		return r;
	if (o->module && o->no_python && !o->run_path)
		return options_error(err, errlen,
		    "--module and --no-python cannot be used together");
	if (o->run_path)
		o->no_python = 0;
	if (o->json && !o->dry_run)
		return options_error(err, errlen, "--json needs --dry-run");
	if (o->role != NULL && o->role[0] == '\0')
		return options_error(err, errlen, "--role: must not be empty");
	if (o->script == NULL && !o->dry_run)
		return options_error(err, errlen, "missing the training script "
		    "(or program) to run");
	return OPTIONS_OK;
}

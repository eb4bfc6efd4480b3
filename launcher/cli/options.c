/*
 * options.c: the command line, through one table of option definitions.
 *
 * Rules (torchrun's argparse behaviour): long options accept dash and
 * underscore spellings and any unique prefix; "--opt=value" and "--opt value";
 * the first non-option argument is the script and everything after it goes
 * to the workers verbatim; an option that was not given takes its value from
 * PET_<NAME> in the environment when the table says so (booleans as
 * integers, like torchrun's bool(int(...))).  What was read is checked
 * last, in options_check.c.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errbuf.h"
#include "options.h"
#include "options_priv.h"

enum opt_kind {
	K_FLAG,		/* int set to 1 */
	K_COUNT,	/* int incremented */
	K_STR,		/* char * (strdup'd) */
	K_INT,		/* int */
	K_DOUBLE,	/* double */
	K_DURATION,	/* double seconds, "90s", "30m", "1h" */
	K_STD,		/* struct options_std */
	K_HELP,
	K_VERSION
};

/* Whose option it is, which says whether PET_<NAME> sets it (the
 * origin: torchrun reads PET_<NAME> for its own options only, and not for
 * --logs-specs and --numa-binding). */
enum opt_origin {
	O_CGRUN,	/* cgrun's own: no PET_ variable */
	O_PET,		/* torchrun's, PET_<NAME> when not given */
	O_TORCHRUN	/* torchrun's without a PET_ variable */
};

struct opt_def {
	const char	*name;		/* dash spelling, without "--" */
	char		 shortopt;	/* or 0 */
	enum opt_kind	 kind;
	enum opt_origin	 origin;	/* whose option: PET_<NAME> or not */
	size_t		 off;		/* field in struct cgrun_options */
	const char	*metavar;
	const char	*help;
};

#define F(field) offsetof(struct cgrun_options, field)

static const struct opt_def opt_table[] = {
	{ "nnodes", 0, K_STR, O_PET, F(nnodes), "MIN[:MAX]",
	  "number of nodes, or the range MIN:MAX (default 1:1)" },
	{ "nproc-per-node", 0, K_STR, O_PET, F(nproc_per_node), "N|cpu|gpu|auto",
	  "workers per node (default 1)" },
	{ "rdzv-backend", 0, K_STR, O_PET, F(rdzv_backend),
	  "static|c10d|etcd-v3", "rendezvous backend (default static; "
	  "etcd and etcd-v2 also mean etcd-v3)" },
	{ "rdzv-endpoint", 0, K_STR, O_PET, F(rdzv_endpoint), "HOST[:PORT]",
	  "rendezvous endpoint" },
	{ "rdzv-id", 0, K_STR, O_PET, F(rdzv_id), "ID",
	  "job id shared by every node (single node: a random UUID)" },
	{ "rdzv-conf", 0, K_STR, O_PET, F(rdzv_conf), "K=V,...",
	  "rendezvous settings (join_timeout, last_call_timeout, ...)" },
	{ "standalone", 0, K_FLAG, O_PET, F(standalone), NULL,
	  "single node: in-process store on a free port, random run id" },
	{ "max-restarts", 0, K_INT, O_PET, F(max_restarts), "N",
	  "restarts of the worker group after failures (default 0)" },
	{ "monitor-interval", 0, K_DOUBLE, O_PET, F(monitor_interval), "SECONDS",
	  "accepted (if positive) for compatibility; cgrun sees exits at "
	  "once" },
	{ "start-method", 0, K_STR, O_PET, F(start_method), "spawn|fork|forkserver",
	  "accepted for compatibility (scripts are always executed)" },
	{ "event-log-handler", 0, K_STR, O_PET, F(event_log_handler),
	  "null|console|dynamic_rendezvous",
	  "console: the event log on stderr (unless --event-log)" },
	{ "role", 0, K_STR, O_PET, F(role), "NAME",
	  "worker role, ROLE_NAME (default \"default\")" },
	{ "module", 'm', K_FLAG, O_PET, F(module), NULL,
	  "run SCRIPT as a Python module (python -m)" },
	{ "no-python", 0, K_FLAG, O_PET, F(no_python), NULL,
	  "execute SCRIPT directly, without the Python interpreter" },
	{ "run-path", 0, K_FLAG, O_PET, F(run_path), NULL,
	  "run SCRIPT as a Python file (overrides --no-python)" },
	{ "log-dir", 0, K_STR, O_PET, F(log_dir), "DIR",
	  "base directory for worker logs and error files" },
	{ "redirects", 'r', K_STD, O_PET, F(redirects), "0-3|LR:V,...",
	  "send stdout (1), stderr (2) or both (3) to log files only" },
	{ "tee", 't', K_STD, O_PET, F(tee), "0-3|LR:V,...",
	  "copy stdout (1), stderr (2) or both (3) to log files too" },
	{ "local-ranks-filter", 0, K_STR, O_PET, F(local_ranks_filter), "LR,...",
	  "show only these local ranks' output on the console" },
	{ "duplicate-stdout-filters", 0, K_STR, O_PET, F(dup_stdout_filters),
	  "S,...", "copy stdout lines containing S to filtered_stdout.log" },
	{ "duplicate-stderr-filters", 0, K_STR, O_PET, F(dup_stderr_filters),
	  "S,...", "copy stderr lines containing S to filtered_stderr.log" },
	{ "node-rank", 0, K_INT, O_PET, F(node_rank), "N",
	  "this node's rank (static backend)" },
	{ "master-addr", 0, K_STR, O_PET, F(master_addr), "HOST",
	  "store address (static backend, default 127.0.0.1)" },
	{ "master-port", 0, K_INT, O_PET, F(master_port), "PORT",
	  "store port (static backend, default 29500)" },
	{ "local-addr", 0, K_STR, O_PET, F(local_addr), "HOST",
	  "address this node advertises (default: its host name)" },
	{ "auth-token-file", 0, K_STR, O_CGRUN, F(auth_token_file), "FILE",
	  "c10d: prove this agent knows the secret in FILE to cgrun-rdzvd" },
	{ "logs-specs", 0, K_STR, O_TORCHRUN, F(logs_specs), "default",
	  "only \"default\" (torchrun's built-in layout)" },
	{ "numa-binding", 0, K_STR, O_TORCHRUN, F(numa_binding),
	  "node|socket|exclusive|core-complex", "bind each rank near its GPU" },
	{ "signals-to-handle", 0, K_STR, O_PET, F(signals_to_handle), "SIG,...",
	  "signals forwarded to the workers (default SIGTERM,SIGINT,SIGHUP,"
	  "SIGQUIT,SIGUSR1,SIGUSR2)" },
	{ "signal-group", 0, K_FLAG, O_CGRUN, F(signal_group), NULL,
	  "USR1/USR2 go to each worker's process group, not its main process" },
	{ "shutdown-timeout", 0, K_DOUBLE, O_PET, F(shutdown_timeout), "SECONDS",
	  "grace between TERM and KILL when stopping workers (default "
	  "$TORCH_ELASTIC_SHUTDOWN_TIMEOUT, else 30)" },
	{ "hang-timeout", 0, K_DURATION, O_CGRUN, F(hang_timeout), "DURATION",
	  "a rank without progress this long is hung (10, 90s, 30m, 1h)" },
	{ "hang-first-timeout", 0, K_DURATION, O_CGRUN, F(hang_first_timeout),
	  "DURATION", "before a rank's first progress (default: the larger of "
	  "10m and --hang-timeout)" },
	{ "hang-progress", 0, K_STR, O_CGRUN, F(hang_progress), "heartbeat|output",
	  "output: any line a rank writes is progress too" },
	{ "event-log", 0, K_STR, O_CGRUN, F(event_log), "FILE|fd:N",
	  "append one JSON record per job event (docs/event-log.md)" },
	{ "metrics-file", 0, K_STR, O_CGRUN, F(metrics_file), "FILE",
	  "keep the agent's metrics in FILE (node_exporter's textfile)" },
	{ "metrics-port", 0, K_STR, O_CGRUN, F(metrics_port), "[HOST:]PORT",
	  "serve the agent's /metrics (host default 127.0.0.1; 0: any)" },
	{ "exit-barrier-timeout", 0, K_DURATION, O_CGRUN, F(exit_barrier_timeout),
	  "DURATION", "wait for the other nodes after success (default 300)" },
	{ "virtual-local-rank", 0, K_FLAG, O_PET, F(virtual_local_rank), NULL,
	  "every worker gets LOCAL_RANK=0 and only its own GPU" },
	{ "log-prefix", 0, K_STR, O_CGRUN, F(log_prefix), "torchrun|rank|none|TEMPLATE",
	  "console line prefix (default torchrun: \"[default0]:\" with --tee)" },
	{ "tty", 0, K_STR, O_CGRUN, F(tty), "auto|always|never",
	  "pseudo-terminals for workers, stdin to local rank 0 (default auto)" },
	{ "cpu-bind", 0, K_STR, O_CGRUN, F(cpu_bind), "none|gpu|numa|cores",
	  "CPU binding of each rank (default gpu when every rank has a GPU, "
	  "else none)" },
	{ "gpu-visibility", 0, K_STR, O_CGRUN, F(gpu_visibility), "all|own",
	  "own: CUDA_VISIBLE_DEVICES is the rank's GPU (default all)" },
	{ "mem-bind", 0, K_STR, O_CGRUN, F(mem_bind), "preferred|bind|none",
	  "memory of bound ranks: their NUMA node(s) (default preferred)" },
	{ "dry-run", 0, K_FLAG, O_CGRUN, F(dry_run), NULL,
	  "print the placement plan and exit" },
	{ "json", 0, K_FLAG, O_CGRUN, F(json), NULL,
	  "with --dry-run: print JSON" },
	{ "verbose", 'v', K_COUNT, O_CGRUN, F(verbose), NULL,
	  "log more (twice: debug)" },
	{ "help", 'h', K_HELP, O_TORCHRUN, 0, NULL, "show this help" },
	{ "version", 0, K_VERSION, O_CGRUN, 0, NULL, "show the version" },
};

#define NOPTS (sizeof(opt_table) / sizeof(opt_table[0]))

static const struct {
	const char	*name;
	int		 sig;
} sig_names[] = {
	{ "HUP", SIGHUP }, { "INT", SIGINT }, { "QUIT", SIGQUIT },
	{ "ILL", SIGILL }, { "TRAP", SIGTRAP }, { "ABRT", SIGABRT },
	{ "BUS", SIGBUS }, { "FPE", SIGFPE }, { "KILL", SIGKILL },
	{ "USR1", SIGUSR1 }, { "SEGV", SIGSEGV }, { "USR2", SIGUSR2 },
	{ "PIPE", SIGPIPE }, { "ALRM", SIGALRM }, { "TERM", SIGTERM },
	{ "STKFLT", SIGSTKFLT }, { "CHLD", SIGCHLD }, { "CONT", SIGCONT },
	{ "STOP", SIGSTOP }, { "TSTP", SIGTSTP }, { "TTIN", SIGTTIN },
	{ "TTOU", SIGTTOU }, { "URG", SIGURG }, { "XCPU", SIGXCPU },
	{ "XFSZ", SIGXFSZ }, { "VTALRM", SIGVTALRM }, { "PROF", SIGPROF },
	{ "WINCH", SIGWINCH }, { "IO", SIGIO }, { "PWR", SIGPWR },
	{ "SYS", SIGSYS },
};

/* Format a one-line error into err; returns OPTIONS_ERROR. */
enum options_result
options_error(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	errbuf_vset(err, errlen, fmt, ap);
	va_end(ap);
	return OPTIONS_ERROR;
}

/* The signal number for a name ("SIGTERM", "TERM", "term") or number. */
int
options_signum(const char *name)
{
	char *end;
	long n;
	size_t i;

	if (name[0] >= '0' && name[0] <= '9') {
		n = strtol(name, &end, 10);
		return (*end == '\0' && n > 0 && n < NSIG) ? (int)n : -1;
	}
	if (strncasecmp(name, "SIG", 3) == 0)
		name += 3;
	for (i = 0; i < sizeof(sig_names) / sizeof(sig_names[0]); i++)
		if (strcasecmp(name, sig_names[i].name) == 0)
			return sig_names[i].sig;
	return -1;
}

/* The short name of a signal ("TERM"), or NULL. */
const char *
options_signame(int sig)
{
	size_t i;

	for (i = 0; i < sizeof(sig_names) / sizeof(sig_names[0]); i++)
		if (sig_names[i].sig == sig)
			return sig_names[i].name;
	return NULL;
}

/* Parse a whole string as an int within [min, max]; 0 or -1. */
int
options_parse_int(const char *s, long min, long max, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (s[0] == '\0' || *end != '\0' || errno != 0 || v < min || v > max)
		return -1;
	*out = (int)v;
	return 0;
}

/* Parse a whole string as a finite double; 0 or -1. */
int
options_parse_double(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (s[0] == '\0' || *end != '\0' || errno != 0 || !isfinite(v))
		return -1;
	*out = v;
	return 0;
}

/* Parse a duration (see options.h). */
int
options_parse_duration(const char *s, double *out)
{
	char *end;
	double v, mul = 1;

	if (s[0] == '\0' || s[0] == '-' || s[0] == '+' ||
	    isspace((unsigned char)s[0]))
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno != 0 || !isfinite(v) || v < 0)
		return -1;
	if (strcmp(end, "h") == 0)
		mul = 3600;
	else if (strcmp(end, "m") == 0)
		mul = 60;
	else if (strcmp(end, "s") != 0 && *end != '\0')
		return -1;
	if (v * mul > OPTIONS_DURATION_MAX)
		return -1;
	*out = v * mul;
	return 0;
}

/* The first-progress timeout in effect (see options.h). */
double
options_hang_first(const struct cgrun_options *o)
{
	if (isnan(o->hang_timeout) || o->hang_timeout <= 0)
		return 0;
	if (!isnan(o->hang_first_timeout))
		return o->hang_first_timeout;
	return o->hang_timeout > 600 ? o->hang_timeout : 600;
}

/*
 * Parse torchrun's Std value: "0".."3" for every local rank, or a map
 * "lr:v,lr:v".  Contract: 0 on success, -1 on any malformed part.
 */
static int
options_parse_std(const char *s, struct options_std *std)
{
	const char *p = s;
	char *end;
	long lr, v;

	memset(std, 0, sizeof(*std));
	if (s[0] >= '0' && s[0] <= '3' && s[1] == '\0') {
		std->all = s[0] - '0';
		return 0;
	}
	std->all = -1;
	while (*p != '\0') {
		lr = strtol(p, &end, 10);
		if (end == p || *end != ':' || lr < 0 || lr >= OPTIONS_MAX_LOCAL)
			return -1;
		p = end + 1;
		if (*p < '0' || *p > '3' || (p[1] != ',' && p[1] != '\0'))
			return -1;
		v = *p - '0';
		if (std->nmap == (int)(sizeof(std->lr) / sizeof(std->lr[0])))
			return -1;
		std->lr[std->nmap] = (int)lr;
		std->val[std->nmap++] = (int)v;
		p++;
		if (*p == ',' && *++p == '\0')
			return -1;
	}
	return std->nmap > 0 ? 0 : -1;
}

/* Store one option's value (text) into o; OPTIONS_OK or an error. */
static enum options_result
opt_set(struct cgrun_options *o, const struct opt_def *d, const char *val,
    const char *from, char *err, size_t errlen)
{
	char *base = (char *)o;
	int iv;

	switch (d->kind) {
	case K_FLAG:
		if (val != NULL) {
			if (options_parse_int(val, INT_MIN, INT_MAX, &iv) == -1)
				return options_error(err, errlen, "%s: "
				    "expected an integer, got \"%s\"", from,
				    val);
			*(int *)(base + d->off) = iv != 0;
		} else
			*(int *)(base + d->off) = 1;
		return OPTIONS_OK;
	case K_COUNT:
		(*(int *)(base + d->off))++;
		return OPTIONS_OK;
	case K_STR:
		if (strlen(val) >= OPTIONS_STR_MAX)
			return options_error(err, errlen,
			    "%s: value too long", from);
		free(*(char **)(base + d->off));
		if ((*(char **)(base + d->off) = strdup(val)) == NULL)
			return options_error(err, errlen, "out of memory");
		return OPTIONS_OK;
	case K_INT:
		if (options_parse_int(val, INT_MIN, INT_MAX,
		    (int *)(base + d->off)) == -1)
			return options_error(err, errlen,
			    "%s: expected an integer, got \"%s\"", from, val);
		if (d->off == F(master_port))
			o->explicit_master_port = 1;
		if (d->off == F(node_rank))
			o->explicit_node_rank = 1;
		return OPTIONS_OK;
	case K_DOUBLE:
		if (options_parse_double(val, (double *)(base + d->off)) == -1)
			return options_error(err, errlen,
			    "%s: expected a number, got \"%s\"", from, val);
		return OPTIONS_OK;
	case K_DURATION:
		if (options_parse_duration(val, (double *)(base + d->off)) == -1)
			return options_error(err, errlen, "%s: expected a "
			    "duration (10, 90s, 30m, 1h), got \"%s\"", from,
			    val);
		return OPTIONS_OK;
	case K_STD:
		if (options_parse_std(val,
		    (struct options_std *)(base + d->off)) == -1)
			return options_error(err, errlen, "%s: expected 0-3 or "
			    "LOCAL_RANK:0-3,..., got \"%s\"", from, val);
		return OPTIONS_OK;
	default:
		return OPTIONS_OK;
	}
}

/* Whether an option of this kind takes a value. */
static int
opt_takes_value(const struct opt_def *d)
{
	return d->kind == K_STR || d->kind == K_INT || d->kind == K_DOUBLE ||
	    d->kind == K_DURATION || d->kind == K_STD;
}

/*
 * Find a long option by name (dashes or underscores; name ends at '=' or
 * NUL): an exact match, else a unique prefix.  NULL and err set otherwise.
 */
static const struct opt_def *
opt_find_long(const char *arg, char *err, size_t errlen)
{
	char name[64];
	const struct opt_def *hit = NULL;
	size_t i, n;
	int nhits = 0;

	n = strcspn(arg, "=");
	if (n == 0 || n >= sizeof(name)) {
		options_error(err, errlen, "unknown option --%.*s",
		    (int)(n > 60 ? 60 : n), arg);
		return NULL;
	}
	for (i = 0; i < n; i++)
		name[i] = arg[i] == '_' ? '-' : arg[i];
	name[n] = '\0';
	for (i = 0; i < NOPTS; i++) {
		if (strcmp(opt_table[i].name, name) == 0)
			return &opt_table[i];
		if (strncmp(opt_table[i].name, name, n) == 0) {
			hit = &opt_table[i];
			nhits++;
		}
	}
	if (nhits == 1)
		return hit;
	options_error(err, errlen, "%s option --%s", nhits > 1 ? "ambiguous" :
	    "unknown", name);
	return NULL;
}

/* Find a short option; NULL and err set when unknown. */
static const struct opt_def *
opt_find_short(char c, char *err, size_t errlen)
{
	size_t i;

	for (i = 0; i < NOPTS; i++)
		if (opt_table[i].shortopt == c)
			return &opt_table[i];
	options_error(err, errlen, "unknown option -%c", c);
	return NULL;
}

/* Apply one parsed option; help/version are reported through *res. */
static enum options_result
opt_apply(struct cgrun_options *o, const struct opt_def *d, const char *val,
    unsigned char *given, char *err, size_t errlen)
{
	char from[80];

	given[d - opt_table] = 1;
	if (d->kind == K_HELP)
		return OPTIONS_HELP;
	if (d->kind == K_VERSION)
		return OPTIONS_VERSION;
	snprintf(from, sizeof(from), "--%s", d->name);
	return opt_set(o, d, val, from, err, errlen);
}

/* Parse one "--name[=value]" at argv[*i], consuming a value if needed. */
static enum options_result
opt_long(struct cgrun_options *o, int argc, char **argv, int *i,
    unsigned char *given, char *err, size_t errlen)
{
	const char *arg = argv[*i] + 2, *eq, *val = NULL;
	const struct opt_def *d;

	if ((d = opt_find_long(arg, err, errlen)) == NULL)
		return OPTIONS_ERROR;
	eq = strchr(arg, '=');
	if (opt_takes_value(d)) {
		if (eq != NULL)
			val = eq + 1;
		else if (*i + 1 < argc)
			val = argv[++*i];
		else
			return options_error(err, errlen, "--%s needs a value",
			    d->name);
	} else if (eq != NULL)
		return options_error(err, errlen,
		    "--%s takes no value", d->name);
	return opt_apply(o, d, val, given, err, errlen);
}

/* Parse a cluster of short options ("-m", "-vv", "-r3", "-r 3"). */
static enum options_result
opt_short(struct cgrun_options *o, int argc, char **argv, int *i,
    unsigned char *given, char *err, size_t errlen)
{
	const char *p = argv[*i] + 1, *val;
	const struct opt_def *d;
	enum options_result r;

	for (; *p != '\0'; p++) {
		if ((d = opt_find_short(*p, err, errlen)) == NULL)
			return OPTIONS_ERROR;
		if (!opt_takes_value(d)) {
			if ((r = opt_apply(o, d, NULL, given, err, errlen)) !=
			    OPTIONS_OK)
				return r;
			continue;
		}
		if (p[1] != '\0')
			val = p[1] == '=' ? p + 2 : p + 1;
		else if (*i + 1 < argc)
			val = argv[++*i];
		else
			return options_error(err, errlen,
			    "-%c needs a value", *p);
		return opt_apply(o, d, val, given, err, errlen);
	}
	return OPTIONS_OK;
}

/* Take values of options not given on the command line from PET_*. */
static enum options_result
opt_env_fallbacks(struct cgrun_options *o, const unsigned char *given,
    char *err, size_t errlen)
{
	char env[80];
	const char *v;
	size_t i, j;
	enum options_result r;

	for (i = 0; i < NOPTS; i++) {
		if (opt_table[i].origin != O_PET || given[i])
			continue;
		snprintf(env, sizeof(env), "PET_%s", opt_table[i].name);
		for (j = 4; env[j] != '\0'; j++)
			env[j] = env[j] == '-' ? '_' :
			    (char)toupper((unsigned char)env[j]);
		if ((v = getenv(env)) == NULL)
			continue;
		if ((r = opt_set(o, &opt_table[i], v, env, err, errlen)) !=
		    OPTIONS_OK)
			return r;
	}
	return OPTIONS_OK;
}

/* Set every field to its "not given" value. */
static void
opt_defaults(struct cgrun_options *o)
{
	memset(o, 0, sizeof(*o));
	o->monitor_interval = 0.1;
	o->master_port = -1;
	o->shutdown_timeout = NAN;
	o->hang_timeout = NAN;
	o->hang_first_timeout = NAN;
	o->exit_barrier_timeout = NAN;
}

/*
 * Parse the command line.  Contract: on OPTIONS_OK every field is valid
 * (ranges and combinations checked), script is set and script_args points
 * into argv; OPTIONS_HELP/VERSION stop at that option; OPTIONS_ERROR has a
 * one-line message in err.  Always call options_free() afterwards.
 */
enum options_result
options_parse(struct cgrun_options *o, int argc, char **argv, char *err,
    size_t errlen)
{
	unsigned char given[NOPTS];
	enum options_result r = OPTIONS_OK;
	int i;

	opt_defaults(o);
	memset(given, 0, sizeof(given));
	err[0] = '\0';
	for (i = 1; i < argc && r == OPTIONS_OK; i++) {
		if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		}
		if (strncmp(argv[i], "--", 2) == 0)
			r = opt_long(o, argc, argv, &i, given, err, errlen);
		else if (argv[i][0] == '-' && argv[i][1] != '\0')
			r = opt_short(o, argc, argv, &i, given, err, errlen);
		else
			break;
	}
	if (r != OPTIONS_OK)
		return r;
	if (i < argc) {
		o->script = argv[i];
		o->script_args = argv + i + 1;
		o->nscript_args = argc - i - 1;
	}
	if ((r = opt_env_fallbacks(o, given, err, errlen)) != OPTIONS_OK)
		return r;
	return options_check(o, err, errlen);
}

/* Free the strings options_parse() duplicated. */
void
options_free(struct cgrun_options *o)
{
	size_t i;

	for (i = 0; i < NOPTS; i++)
		if (opt_table[i].kind == K_STR) {
			free(*(char **)((char *)o + opt_table[i].off));
			*(char **)((char *)o + opt_table[i].off) = NULL;
		}
	free(o->event_log_site);
	free(o->metrics_file_site);
	o->event_log_site = o->metrics_file_site = NULL;
}

/* The usage lines of the options of one origin, under a heading. */
static void
opt_usage_origin(FILE *fp, enum opt_origin origin, const char *heading)
{
	char left[80];
	size_t i;

	fprintf(fp, "\n%s\n", heading);
	for (i = 0; i < NOPTS; i++) {
		if (opt_table[i].origin != origin)
			continue;
		snprintf(left, sizeof(left), "%s%c%s--%s%s%s",
		    opt_table[i].shortopt ? "-" : "   ",
		    opt_table[i].shortopt ? opt_table[i].shortopt : ' ',
		    opt_table[i].shortopt ? ", " : "", opt_table[i].name,
		    opt_table[i].metavar ? " " : "",
		    opt_table[i].metavar ? opt_table[i].metavar : "");
		fprintf(fp, "  %-40s %s\n", left, opt_table[i].help);
	}
}

/* The usage text: full, or just a pointer to --help after an error. */
void
options_usage(FILE *fp, int full)
{
	if (!full) {
		fprintf(fp, "Try 'cgrun --help' for the options.\n");
		return;
	}
	fprintf(fp, "usage: cgrun [options] SCRIPT.py [ARGS...]\n"
	    "       cgrun [options] -m MODULE [ARGS...]\n"
	    "       cgrun [options] --no-python PROGRAM [ARGS...]\n"
	    "\nEvery option also has an underscore spelling "
	    "(--nproc_per_node).\n");
	opt_usage_origin(fp, O_PET, "torchrun's options (also from PET_<NAME>, "
	    "e.g. PET_NPROC_PER_NODE):");
	opt_usage_origin(fp, O_TORCHRUN, "torchrun's options without a PET_ "
	    "variable (as in torchrun):");
	opt_usage_origin(fp, O_CGRUN, "cgrun's own options (no PET_ "
	    "variables):");
	fprintf(fp, "\nSee cgrun(1).\n");
}

/* Row i of the table: name, short letter, metavariable; -1 past the end. */
int
options_row(size_t i, const char **name, char *shortopt, const char **metavar)
{
	if (i >= NOPTS)
		return -1;
	*name = opt_table[i].name;
	*shortopt = opt_table[i].shortopt;
	*metavar = opt_table[i].metavar;
	return 0;
}

/* Whether local rank lr passes --local-ranks-filter. */
int
options_rank_shown(const struct cgrun_options *o, int lr)
{
	const char *p = o->local_ranks_filter;
	char *end;

	if (p == NULL)
		return 1;
	for (;;) {
		if (strtol(p, &end, 10) == lr)
			return 1;
		if (*end != ',')
			return 0;
		p = end + 1;
	}
}

/* The redirect/tee bits that apply to local rank lr. */
int
options_std_for(const struct options_std *std, int lr)
{
	int i;

	if (std->all >= 0)
		return std->all;
	for (i = 0; i < std->nmap; i++)
		if (std->lr[i] == lr)
			return std->val[i];
	return 0;
}

/* Whether the options describe a multi-node job. */
int
options_multinode(const struct cgrun_options *o)
{
	if (o->nnodes_max > 1)
		return 1;
	if (o->standalone)
		return 0;
	return o->rdzv_endpoint != NULL && o->rdzv_endpoint[0] != '\0';
}

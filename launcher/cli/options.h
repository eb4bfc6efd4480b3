/*
 * options.h: cgrun's command line.  Every torchrun option (dash and
 * underscore spellings, unique prefixes as argparse allows, PET_* environment
 * fallbacks) plus cgrun's own, parsed through one table in options.c,
 * values and combinations checked in options_check.c.
 *
 * options_parse() never exits or prints: it fills the struct, or returns
 * OPTIONS_ERROR with a one-line message naming the bad option or value.
 * The caller (main.c) prints usage and exits CGRUN_EXIT_USAGE.
 */
#ifndef CGRUN_OPTIONS_H
#define CGRUN_OPTIONS_H

#include <stddef.h>
#include <stdio.h>

#define OPTIONS_MAX_LOCAL	4096	/* local ranks per node */
#define OPTIONS_STR_MAX		4096	/* bytes in one option value */

enum options_result {
	OPTIONS_OK = 0,		/* run the job */
	OPTIONS_HELP,		/* --help given */
	OPTIONS_VERSION,	/* --version given */
	OPTIONS_ERROR		/* err says why; exit with usage status */
};

/* Per-stream bits of --redirects / --tee (torchrun's Std). */
#define OPTIONS_STD_OUT	1
#define OPTIONS_STD_ERR	2

/* A "0..3" or "lr:v,lr:v" value of --redirects / --tee. */
struct options_std {
	int	all;		/* -1 when a per-rank map was given */
	int	nmap;
	int	lr[64];
	int	val[64];
};

struct cgrun_options {
	/* torchrun's options */
	int	 nnodes_min, nnodes_max;	/* --nnodes N or MIN:MAX */
	char	*nnodes;
	char	*nproc_per_node;		/* number, cpu, gpu, auto */
	char	*rdzv_backend;			/* NULL: default (static) */
	char	*rdzv_endpoint;
	char	*rdzv_id;
	char	*rdzv_conf;
	int	 standalone;
	int	 max_restarts;
	double	 monitor_interval;		/* accepted, not needed */
	char	*start_method;
	char	*role;
	int	 module;			/* -m */
	int	 no_python;
	int	 run_path;
	char	*log_dir;			/* NULL: a temporary one */
	struct options_std redirects;
	struct options_std tee;
	char	*local_ranks_filter;		/* NULL: every rank */
	char	*logs_specs;
	char	*numa_binding;
	char	*signals_to_handle;		/* as given, or NULL */
	double	 shutdown_timeout;		/* seconds, grace before KILL */
	int	 virtual_local_rank;
	char	*event_log_handler;
	char	*dup_stdout_filters;
	char	*dup_stderr_filters;
	int	 node_rank;
	char	*master_addr;
	int	 master_port;			/* -1: not given */
	char	*local_addr;
	/* cgrun's own */
	char	*log_prefix;			/* template; NULL: default */
	char	*tty;				/* auto|always|never; NULL: auto */
	int	 verbose;
	int	 signal_group;			/* USR1/USR2 to the whole group */
	int	 dry_run;
	int	 json;
	char	*cpu_bind;
	char	*gpu_visibility;
	char	*mem_bind;			/* placement.h: preferred|bind|none */
	char	*auth_token_file;		/* c10d: shared secret (auth.h) */
	/* what operators see (observe/observe.h) */
	char	*event_log;			/* FILE or fd:N; NULL: none */
	char	*metrics_file;			/* textfile collector's file */
	char	*metrics_port;			/* [HOST:]PORT; NULL: none */
	/* "FILE:LINE" when event_log, metrics_file came from the site file
	 * (site.c): a site's sink that cannot be written is warned about,
	 * not fatal (observe.c) */
	char	*event_log_site, *metrics_file_site;
	/* the hang watchdog (hang/watchdog.h); NAN: not given */
	double	 hang_timeout;			/* seconds; 0: off */
	double	 hang_first_timeout;		/* before a rank's first sign */
	char	*hang_progress;			/* heartbeat (NULL) | output */
	double	 exit_barrier_timeout;		/* seconds (default 300) */
	/* the worker command */
	char	*script;
	char   **script_args;			/* NULL-terminated, not owned */
	int	 nscript_args;
	/* derived */
	int	 signals[32];			/* signals forwarded, 0-ended */
	int	 explicit_master_port;
	int	 explicit_node_rank;		/* --node-rank or PET_NODE_RANK */
	/* set by site.c under a Slurm step (0: not in one), for c10d.c */
	int	 slurm_step;
	int	 slurm_node_id;			/* SLURM_NODEID: group rank order */
	int	 slurm_is_host;			/* -1: heuristic, else 0 or 1 */
};

/* Parse argv (and PET_* from the environment) into o; see the contract. */
enum options_result options_parse(struct cgrun_options *o, int argc,
	    char **argv, char *err, size_t errlen);
/* Release what options_parse allocated. */
void	options_free(struct cgrun_options *o);
/* Print the usage summary (every option, one line each). */
void	options_usage(FILE *fp, int full);

/*
 * Row i of the option table (0, 1, ...): its dash name, short letter (or
 * 0) and metavariable (NULL: a flag), as --help prints them; 0, or -1
 * past the last row.  For tests: bash completion reads --help.
 */
int	options_row(size_t i, const char **name, char *shortopt,
	    const char **metavar);

/* Whether local rank lr's console output is shown (--local-ranks-filter). */
int	options_rank_shown(const struct cgrun_options *, int lr);
/* The OPTIONS_STD_* bits of --redirects / --tee for local rank lr. */
int	options_std_for(const struct options_std *, int lr);
/* Whether the job spans several nodes (needs a multi-node backend). */
int	options_multinode(const struct cgrun_options *);

/*
 * A duration: a number of seconds, or with a unit s, m or h ("10", "90s",
 * "1.5m", "1h"); 0, or -1 for anything else (negative, empty, a unit
 * alone, trailing text, more than OPTIONS_DURATION_MAX seconds).
 */
#define OPTIONS_DURATION_MAX	1e8
int	options_parse_duration(const char *, double *seconds);
/* The start-up timeout in effect: --hang-first-timeout, else the default
 * (the larger of 600 s and --hang-timeout); 0 when the watchdog is off. */
double	options_hang_first(const struct cgrun_options *);

/* A signal's number from "SIGTERM", "TERM" or "15"; -1 if unknown. */
int	options_signum(const char *name);
/* "TERM" for SIGTERM, or NULL. */
const char *options_signame(int sig);

#endif /* CGRUN_OPTIONS_H */

/*
 * main.c: cgrun, a torchrun replacement.  Parses the command line,
 * resolves --nproc-per-node and the placement plan, then hands the job to
 * the agent (agent.c) and exits with its status (exitcodes.h, cgrun(1)).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/event.h>

#include "agent.h"
#include "exitcodes.h"
#include "log.h"
#include "observe.h"
#include "options.h"
#include "output.h"
#include "placement.h"
#include "site.h"
#include "tty.h"

/* Print a usage error and exit with the usage status. */
static void __attribute__((noreturn))
usage_error(const char *err)
{
	fprintf(stderr, "cgrun: %s\n", err);
	options_usage(stderr, 0);
	exit(CGRUN_EXIT_USAGE);
}

/* Log level from -v and torchrun's LOGLEVEL variable. */
static int
log_level(const struct cgrun_options *o)
{
	const char *env = getenv("LOGLEVEL");
	int level = o->verbose;

	if (env != NULL && strcasecmp(env, "INFO") == 0 && level < 1)
		level = LOG_LVL_INFO;
	if (env != NULL && strcasecmp(env, "DEBUG") == 0)
		level = LOG_LVL_DEBUG;
	return level > LOG_LVL_DEBUG ? LOG_LVL_DEBUG : level;
}

/* Resolve the local world size and the placement plan, or exit. */
static struct plan *
make_plan(const struct cgrun_options *o, int *nproc)
{
	struct plan_opts po;
	struct plan *p;
	char err[512];

	if ((*nproc = placement_nproc(o->nproc_per_node, err,
	    sizeof(err))) < 1)
		usage_error(err);
	memset(&po, 0, sizeof(po));
	po.cpu_bind = o->cpu_bind;
	po.numa_binding = o->numa_binding;
	/* --virtual-local-rank: each worker sees only its GPU (cuda:0) */
	po.gpu_visibility = o->virtual_local_rank ? "own" : o->gpu_visibility;
	po.mem_bind = o->mem_bind;
	if (plan_opts_check(&po, err, sizeof(err)) == -1)
		usage_error(err);
	if ((p = plan_new(*nproc, &po, err, sizeof(err))) == NULL) {
		fprintf(stderr, "cgrun: placement: %s\n", err);
		exit(CGRUN_EXIT_INTERNAL);
	}
	return p;
}

/*
 * Make sure fds 0-2 are open (on /dev/null if not), so that no pipe or log
 * file of ours lands on them and gets mistaken for the console.
 */
static void
std_fds(void)
{
	int fd;

	for (fd = 0; fd <= 2; fd++)
		if (fcntl(fd, F_GETFD) == -1) {
			if (open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY) !=
			    fd)
				exit(CGRUN_EXIT_INTERNAL);
			if (fd > 0)	/* worker output to it: said lost */
				output_console_closed(fd);
		}
}

/* Parse, plan, run the job, exit with its status. */
int
main(int argc, char **argv)
{
	struct cgrun_options o;
	struct event_base *base;
	struct agent *agent;
	struct plan *plan;
	char err[512];
	int nproc, status;

	std_fds();
	log_init("cgrun", LOG_LVL_WARN);
	switch (options_parse(&o, argc, argv, err, sizeof(err))) {
	case OPTIONS_HELP:
		options_usage(stdout, 1);
		return CGRUN_EXIT_OK;
	case OPTIONS_VERSION:
		printf("cgrun %s\n", CGRUN_VERSION);
		return CGRUN_EXIT_OK;
	case OPTIONS_ERROR:
		usage_error(err);
	case OPTIONS_OK:
		break;
	}
	log_setlevel(log_level(&o));
	if (site_apply(&o, err, sizeof(err)) == -1)	/* site defaults */
		usage_error(err);
	/* before any descriptor of ours: fd:N cannot be one of them */
	if (observe_check_dest(&o, err, sizeof(err)) == -1) {
		fprintf(stderr, "cgrun: %s\n", err);
		options_free(&o);
		return CGRUN_EXIT_CANTCREAT;
	}
	plan = make_plan(&o, &nproc);
	if (o.dry_run) {
		plan_print(plan, stdout, o.json);
		plan_free(plan);
		options_free(&o);
		return CGRUN_EXIT_OK;
	}
	if (o.verbose)
		plan_log(plan);
	if ((base = event_base_new()) == NULL) {
		fprintf(stderr, "cgrun: cannot create the event loop\n");
		return CGRUN_EXIT_INTERNAL;
	}
	if (tty_init(base, o.tty) == -1) {
		fprintf(stderr, "cgrun: cannot watch the terminal's signals\n");
		return CGRUN_EXIT_INTERNAL;
	}
	if ((agent = agent_new(base, &o, nproc, plan, &status, err,
	    sizeof(err))) == NULL) {
		fprintf(stderr, "cgrun: %s\n", err);
		plan_free(plan);
		tty_end();
		event_base_free(base);
		options_free(&o);
		return status;
	}
	status = agent_run(agent);
	agent_free(agent);
	plan_free(plan);
	tty_end();
	event_base_free(base);
	options_free(&o);
	fflush(stdout);
	fflush(stderr);
	return status;
}

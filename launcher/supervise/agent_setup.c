/*
 * agent_setup.c: the agent's construction and teardown (its state in
 * agent_impl.h, its event loop and table in agent.c): the job store, the
 * rendezvous backend, the command, the log directory, the watchdog
 * (agent_hang.c); after the loop the failure report and the exit line;
 * agent_free.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <event2/event.h>

#include "agent.h"
#include "agent_impl.h"
#include "attempt.h"
#include "backend.h"
#include "contain.h"
#include "errbuf.h"
#include "exitcodes.h"
#include "log.h"
#include "logdir.h"
#include "observe.h"
#include "options.h"
#include "report.h"
#include "spawn.h"
#include "stacks.h"
#include "store.h"
#include "tty.h"
#include "watchdog.h"
#include "worker_env.h"

/*
 * Where the job store listens and what workers are told: standalone binds
 * 127.0.0.1 and says "localhost" (torchrun 2.6's MASTER_ADDR); one node
 * with an explicit --master-port listens at --master-addr:--master-port;
 * multi-node listens at --local-addr (or everywhere) and advertises
 * --local-addr or the host name.
 */
static int
agent_open_store(struct agent *a, char *err, size_t errlen)
{
	const struct cgrun_options *o = a->o;
	struct store_limits lim;
	const char *bind_host = "127.0.0.1", *adv = "localhost";
	int port = 0;

	if (options_multinode(o)) {
		bind_host = o->local_addr ? o->local_addr : "0.0.0.0";
		adv = o->local_addr ? o->local_addr : a->host;
	} else if (!o->standalone && o->explicit_master_port) {
		bind_host = adv = o->master_addr ? o->master_addr : "127.0.0.1";
		port = o->master_port;
	}
	store_limits_default(&lim);
	if ((a->store = store_new(a->base, &lim)) == NULL) {
		errbuf_set(err, errlen, "cannot create the job store");
		return -1;
	}
	if (store_listen(a->store, bind_host, port, &a->store_port, err,
	    errlen) == -1)
		return -1;
	snprintf(a->store_host, sizeof(a->store_host), "%s", adv);
	log_debug("job store listening host=%s port=%d", bind_host,
	    a->store_port);
	return 0;
}

/*
 * Create the rendezvous backend: the one the options ask for (backend_new,
 * backend/backend.c), or the constructor given (agent_new_with_backend).
 */
static int
agent_open_backend(struct agent *a, backend_new_fn fn, char *err,
    size_t errlen)
{
	struct backend_config cfg;
	struct backend_cb cb;

	memset(&cfg, 0, sizeof(cfg));
	cfg.opts = a->o;
	cfg.nproc = a->nproc;
	cfg.jobstore = a->store;
	cfg.store_host = a->store_host;
	cfg.store_port = a->store_port;
	agent_backend_cb(a, &cb);
	a->bk = fn != NULL ? fn(a->base, &cfg, &cb, err, errlen) :
	    backend_new(a->base, &cfg, &cb, err, errlen);
	return a->bk ? 0 : -1;
}

/*
 * What operators see (observe/observe.h): the event log and the metrics,
 * of the backend's run id (a standalone job's is made by its backend).
 */
static int
agent_open_observe(struct agent *a, char *err, size_t errlen)
{
	struct observe_conf c;

	memset(&c, 0, sizeof(c));
	c.base = a->base;
	c.opts = a->o;
	c.run_id = a->bk->run_id ? a->bk->run_id :
	    a->o->rdzv_id ? a->o->rdzv_id : "none";
	c.node = a->o->local_addr ? a->o->local_addr : a->host;
	c.backend = a->bk->ops->name;
	c.nproc = a->nproc;
	c.wd = a->wd;
	a->ob = observe_new(&c, err, errlen);
	return a->ob != NULL ? 0 : -1;
}

/* Build an agent: log dir, command, job store, backend, signal events. */
struct agent *
agent_new_with_backend(struct event_base *base, const struct cgrun_options *o,
    int nproc, const struct plan *plan, backend_new_fn bk_new, int *status,
    char *err, size_t errlen)
{
	struct agent *a;

	if ((a = calloc(1, sizeof(*a))) == NULL) {
		errbuf_set(err, errlen, "out of memory");
		return NULL;
	}
	a->base = base;
	a->o = o;
	a->plan = plan;
	a->nproc = nproc;
	a->bk_status = -1;
	if (gethostname(a->host, sizeof(a->host)) == -1)
		snprintf(a->host, sizeof(a->host), "localhost");
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	if ((a->contain = contain_new()) == NULL) {
		errbuf_set(err, errlen, "out of memory");
		goto fail;
	}
	if (agent_wire(a) == -1) {
		errbuf_set(err, errlen, "cannot set up the event loop");
		goto fail;
	}
	*status = CGRUN_EXIT_INTERNAL;
	if (spawn_cmd_build(&a->cmd, o, err, errlen) == -1)
		goto fail;
	/* a program that cannot run fails once, before any rank is spawned */
	if ((*status = spawn_cmd_check(&a->cmd, o, err, errlen)) != 0)
		goto fail;
	*status = CGRUN_EXIT_CANTCREAT;
	if (logdir_open(&a->logdir, o->log_dir, err, errlen) == -1)
		goto fail;
	*status = CGRUN_EXIT_USAGE;
	if (agent_open_watchdog(a, err, errlen) == -1)
		goto fail;
	worker_env_explain(nproc, a->wd != NULL);
	*status = CGRUN_EXIT_RDZV;
	if (agent_open_store(a, err, errlen) == -1)
		goto fail;
	*status = CGRUN_EXIT_USAGE;
	if (agent_open_backend(a, bk_new, err, errlen) == -1)
		goto fail;
	*status = CGRUN_EXIT_CANTCREAT;
	if (agent_open_observe(a, err, errlen) == -1)
		goto fail;
	*status = CGRUN_EXIT_OK;
	return a;
fail:
	agent_free(a);
	return NULL;
}

/* The agent, its backend chosen from the options (see agent.h). */
struct agent *
agent_new(struct event_base *base, const struct cgrun_options *o, int nproc,
    const struct plan *plan, int *status, char *err, size_t errlen)
{
	return agent_new_with_backend(base, o, nproc, plan, NULL, status, err,
	    errlen);
}

/* The failure report of the attempt that ended the job. */
static void
agent_report(struct agent *a)
{
	const char *ef = getenv("TORCHELASTIC_ERROR_FILE");
	struct report r;

	memset(&r, 0, sizeof(r));
	r.name = spawn_cmd_name(&a->cmd);
	r.program = a->cmd.path ? a->cmd.path : a->cmd.argv[0];
	r.host = a->host;
	r.restarts = a->round.restart_count;
	r.max_restarts = a->o->max_restarts;
	r.f = attempt_failures(a->at, &r.n);
	report_print(stderr, &r);
	if (ef != NULL && *ef != '\0' &&
	    report_copy_error_file(&r.f[0], ef) == 0)
		log_info("root cause error file copied to %s", ef);
}

/* After the job: the report, the agent's error file, the exit line. */
void
agent_finish(struct agent *a)
{
	int n;

	fflush(stdout);
	if (a->exit_status == 0)
		return;
	if (a->by_signal || a->state == S_STOP_SIGNAL) {
		log_warnx("stopped by SIG%s; exit status %d",
		    options_signame(a->stop_sig ? a->stop_sig : SIGINT),
		    a->exit_status);
		return;
	}
	attempt_failures(a->at, &n);
	if (a->bk_status >= 0 || n == 0) {
		log_warnx("job failed: %s", a->why);
		return;
	}
	agent_report(a);
}

/* Free the agent: workers (killed if any is left), backend, store, and
 * the empty directories of a temporary log base. */
void
agent_free(struct agent *a)
{
	int i;

	if (a == NULL)
		return;
	stacks_free(a->stacks);		/* before its attempt's workers */
	attempt_free(a->at);
	observe_free(a->ob);		/* the last metrics, the log flushed */
	contain_free(a->contain);
	watchdog_free(a->wd);
	if (a->bk != NULL)
		a->bk->ops->free(a->bk);
	if (a->store != NULL)
		store_free(a->store);
	for (i = 0; i < a->nsigev; i++)
		event_free(a->sigev[i]);
	if (a->chld != NULL)
		event_free(a->chld);
	if (a->grace != NULL)
		event_free(a->grace);
	if (a->killwait != NULL)
		event_free(a->killwait);
	if (a->kick != NULL)
		event_free(a->kick);
	tty_on_job_control(NULL, NULL);
	spawn_cmd_free(&a->cmd);
	logdir_cleanup(&a->logdir);
	free(a);
}

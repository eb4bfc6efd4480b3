/*
 * agent.c: the per-node agent, and the map of the supervision room
 * (launcher/supervise/):
 *
 *   agent.c       this file: the event loop wiring (SIGCHLD, signals,
 *                 timers, the backend's callbacks), the run loop and the
 *                 supervisor's state x event table.  WHERE A RESTART
 *                 HAPPENS: the actions act_stop_failure (a worker
 *                 failed: stop the rest), act_stopped_failure (all gone:
 *                 ask the backend for the next round, which spends a
 *                 restart), act_stop_restart / act_rejoin (the backend
 *                 asked), act_spawn (a round arrived: a new attempt),
 *                 and act_stop_round (a round arrived while workers of
 *                 another run or stop: stop them, then start it).
 *   agent_hang.c  the hang path: the watchdog opened and its E_HUNG,
 *                 act_hung, S_DIAGNOSE's actions (act_diagnosed,
 *                 act_diag_*), the stacks dropped on a signal.
 *   agent_setup.c the agent built (job store, backend, command, log dir)
 *                 and freed; after the loop, the report and exit line.
 *   agent_impl.h  private to the three: struct agent, the states and
 *                 events, the functions they share.
 *   attempt.c     the workers of one attempt: start, reap, signal, count
 *                 the gone ones, the failures for the report.
 *   worker.c      one worker: its state (new, running, exited, gone,
 *                 abandoned), output streams, environment, spawn.
 *   logdir.c      --log-dir or a temporary base, attempt and rank dirs.
 *   output.c      a worker's stream as whole prefixed lines.
 *   prefix.c      which prefix (--log-prefix, torchrun's by default).
 *   tty.c         on a terminal: stdin to local rank 0, ptys, Ctrl-Z,
 *                 the terminal's modes restored.
 *   spawn.c       fork and exec of one worker process.
 *   contain.c     everything the workers start (a cgroup v2 per job and
 *                 its guard, or the subreaper's descendants): stopped
 *                 when an attempt's workers are gone (agent_kick_cb),
 *                 before the next attempt (act_spawn), at the job's end.
 *   worker_env.c  WHERE A RANK'S ENVIRONMENT IS BUILT (every variable;
 *                 the plan and the hang room pass theirs in as data).
 *   report.c      the failure report and the exit status it implies.
 *   observe/      what operators see: the agent calls observe_*() at
 *                 each thing that happens (agent_enter, a round, an
 *                 attempt's start and end, a worker's exit, a stop, a
 *                 hang, the end); the event log and metrics follow.
 *   stacks.c      a hang's diagnosis: every rank's stacks (stackprobe.c:
 *                 fault handler, py-spy, gdb, eu-stack, /proc), parsed
 *                 (stackdump.c), grouped, the culprit named (stackgroup.c).
 *
 * The supervisor is a state machine driven only through agent_event(),
 * which looks the action up in agent_actions[state][event] (every cell
 * filled: an event a state does not act on names act_ignore and why);
 * actions change state only through agent_enter(), which logs "old -> new".
 * Why the workers are being stopped is part of the state (stopping for a
 * failure, a restart, a signal, a backend failure), so what happens once
 * they are gone is one cell of the table.
 *
 * The hang watchdog (the agent's side of it in agent_hang.c): a watchdog
 * object beside the attempt (watchdog.c, WHERE A HANG IS DETECTED; torch's
 * FileTimer in filetimer.c) sees progress per rank and raises E_HUNG
 * through agent_event(); in S_RUNNING
 * E_HUNG starts taking every rank's stacks (stacks.c, WHERE A HANG IS
 * DIAGNOSED) and enters S_DIAGNOSE, where worker exits are expected (a
 * Python rank dies of the SIGABRT that makes it dump); E_STACKS then makes
 * the rank the stacks name the root cause and acts like E_FAILED (stop
 * for failure, a restart is spent); in the other states E_HUNG is ignored.
 *
 * Stopping sends the signal to each worker's process group (grandchildren
 * too), waits --shutdown-timeout (E_GRACE), sends SIGKILL, and gives up on
 * workers still not gone AGENT_KILL_WAIT_SECS later (E_KILLWAIT).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <event2/event.h>

#include "agent.h"
#include "agent_impl.h"
#include "attempt.h"
#include "backend.h"
#include "contain.h"
#include "exitcodes.h"
#include "log.h"
#include "observe.h"
#include "options.h"
#include "output.h"
#include "report.h"
#include "tty.h"
#include "watchdog.h"

static const char *const state_names[] = { "rendezvous", "running",
	"stopping-failure", "stopping-restart", "stopping-signal",
	"stopping-backend-failure", "stopping-round", "done", "diagnosing",
	"exit" };
static const char *const event_names[] = { "round", "failed", "succeeded",
	"failed-all-gone", "signal", "sigint-again", "forward", "grace",
	"kill-wait", "restart", "fail", "finished", "hung", "stacks" };

_Static_assert(sizeof(state_names) / sizeof(state_names[0]) == S_NSTATES,
    "state_names does not match enum agent_state");
_Static_assert(sizeof(event_names) / sizeof(event_names[0]) == E_NEVENTS,
    "event_names does not match enum agent_ev");

typedef void (*agent_action)(struct agent *);

/* The one place the state changes. */
void
agent_enter(struct agent *a, enum agent_state s)
{
	log_debug("agent state %s -> %s", state_names[a->state],
	    state_names[s]);
	a->state = s;
	observe_state(a->ob, state_names[s]);
	if (s == S_EXIT)
		event_base_loopbreak(a->base);
}

/* End the job with status. */
static void
agent_exit(struct agent *a, int status)
{
	a->exit_status = status;
	agent_enter(a, S_EXIT);
}

/* Next loop turn: dispatch E_SUCCEEDED or E_FAILED_ALL_GONE if every
 * worker is gone. */
static void
agent_kick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct agent *a = arg;
	const struct report_failure *f;
	int n;

	if (!attempt_all_gone(a->at))
		return;
	contain_kill(a->contain);	/* what the workers left, gone too */
	watchdog_end(a->wd);	/* the attempt's timers end with it */
	f = attempt_failures(a->at, &n);
	if (a->state != S_DIAGNOSE)	/* its stop and root cause come first */
		observe_attempt_end(a->ob, f, n, n == 0 &&
		    a->state == S_RUNNING);
	agent_event(a, n == 0 ? E_SUCCEEDED : E_FAILED_ALL_GONE);
}

/* attempt's on_all_gone: react on the next loop turn. */
static void
agent_all_gone_cb(void *arg)
{
	struct agent *a = arg;

	event_active(a->kick, EV_TIMEOUT, 0);
}

/* attempt's on_worker_exit: observed. */
static void
agent_worker_exit_cb(void *arg, const struct report_failure *f,
    int root_cause)
{
	struct agent *a = arg;

	observe_worker_exit(a->ob, f, root_cause);
}

/* attempt's on_failed: the first failure of the attempt (E_FAILED). */
static void
agent_failed_cb(void *arg, const char *why)
{
	agent_event(arg, E_FAILED);
}

/* SIGCHLD: reap every exited child; unknown ones are reparented orphans. */
static void
agent_sigchld_cb(evutil_socket_t sig, short what, void *arg)
{
	struct agent *a = arg;
	pid_t pid;
	int status;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		watchdog_reaped(a->wd, pid);
		attempt_reaped(a->at, pid, status);
	}
}

/* Ctrl-Z and fg on a terminal (tty.c): SIGSTOP or SIGCONT every worker. */
static void
agent_job_control_cb(void *arg, int sig)
{
	struct agent *a = arg;

	attempt_signal(a->at, sig);
}

/* Whether s is one of the stopping states (the grace timer runs). */
static int
agent_stopping(enum agent_state s)
{
	return s == S_STOP_FAILURE || s == S_STOP_RESTART ||
	    s == S_STOP_SIGNAL || s == S_STOP_BKFAIL || s == S_STOP_ROUND;
}

/* Why a stopping state stops the workers, in words (the event log's). */
static const char *
agent_stop_reason(enum agent_state s)
{
	return s == S_STOP_FAILURE ? "failure" : s == S_STOP_RESTART ?
	    "restart" : s == S_STOP_SIGNAL ? "signal" : s == S_STOP_ROUND ?
	    "round" : "backend_failure";
}

/* Stop (or keep stopping) for the reason next names: signal every group. */
static void
agent_stop(struct agent *a, enum agent_state next, int sig)
{
	struct timeval tv;
	double t = a->o->shutdown_timeout;

	log_info("stopping workers sig=%s grace=%.1fs", options_signame(sig),
	    t);
	observe_stop(a->ob, agent_stop_reason(next), sig, t,
	    next == S_STOP_RESTART || next == S_STOP_ROUND ? a->restart_why :
	    a->why);
	attempt_stopping(a->at);
	attempt_signal(a->at, sig);
	if (!agent_stopping(a->state)) {
		tv.tv_sec = (time_t)t;
		tv.tv_usec = (suseconds_t)((t - (double)tv.tv_sec) * 1e6);
		evtimer_add(a->grace, &tv);
	}
	agent_enter(a, next);
	event_active(a->kick, EV_TIMEOUT, 0);
}

/* KILL every group now; give up on them AGENT_KILL_WAIT_SECS later. */
static void
agent_kill(struct agent *a)
{
	struct timeval tv = { AGENT_KILL_WAIT_SECS, 0 };

	log_info("killing workers");
	attempt_signal(a->at, SIGKILL);
	evtimer_del(a->grace);
	evtimer_del(a->killwait);
	evtimer_add(a->killwait, &tv);
}

/*
 * The hang room's own stop of the hung rank (watchdog.h: a FileTimer's
 * signal to the process that asked for it), sent through the attempt like
 * every other stop: only to a process of that rank's worker, logged.
 */
void
agent_stop_hung(struct agent *a)
{
	const struct watchdog_hang *h = &a->hang;
	const char *name = options_signame(h->kill_sig);
	char num[16];

	if (h->kill_sig <= 0)
		return;
	snprintf(num, sizeof(num), "%d", h->kill_sig);
	log_info("stopping worker rank=%d local_rank=%d pid=%d sig=%s "
	    "reason=%s", a->round.rank_base + h->lr, h->lr, (int)h->kill_pid,
	    name != NULL ? name : num, h->source);
	if (attempt_signal_rank(a->at, h->lr, h->kill_pid, h->kill_sig) ==
	    -1)
		log_info("not sent pid=%d: %s", (int)h->kill_pid,
		    errno == ESRCH ? "no longer a process of that rank" :
		    strerror(errno));
}

/* Leaving a stopping state: its timers end. */
static void
agent_stopped(struct agent *a)
{
	evtimer_del(a->grace);
	evtimer_del(a->killwait);
}

/* An event this state does not act on (the table says why). */
static void
act_ignore(struct agent *a)
{
}

/* Start the attempt's workers, observed (those started, if one failed). */
static int
agent_start_attempt(struct agent *a, char *err, size_t errlen)
{
	pid_t *pids;
	int rc, lr;

	rc = attempt_start(a->at, err, errlen);
	if ((pids = calloc((size_t)a->nproc, sizeof(*pids))) == NULL)
		return rc;
	for (lr = 0; lr < a->nproc; lr++)
		pids[lr] = attempt_pid(a->at, lr);
	observe_attempt_start(a->ob, &a->round, pids, a->nproc,
	    attempt_dir(a->at));
	free(pids);
	return rc;
}

/* RDZV/DONE + round: start the new attempt, in the backend's round. */
static void
act_spawn(struct agent *a)
{
	struct attempt_conf c;
	char err[512];

	attempt_free(a->at);
	contain_kill(a->contain);	/* nothing of the last attempt runs on */
	a->round = a->next;
	memset(&c, 0, sizeof(c));
	c.base = a->base;
	c.opts = a->o;
	c.round = &a->round;
	c.plan = a->plan;
	c.cmd = &a->cmd;
	c.logdir = &a->logdir;
	c.nproc = a->nproc;
	c.hup_ignored = a->hup_ignored;
	c.contain = a->contain;
	c.wd = a->wd;
	c.on_failed = agent_failed_cb;
	c.on_all_gone = agent_all_gone_cb;
	c.on_worker_exit = agent_worker_exit_cb;
	c.arg = a;
	agent_enter(a, S_RUNNING);
	a->ran = 1;
	if ((a->at = attempt_new(&c)) == NULL)
		snprintf(err, sizeof(err), "out of memory");
	if (a->at != NULL && a->wd != NULL &&
	    watchdog_begin(a->wd, a->nproc, err, sizeof(err)) == -1) {
		attempt_free(a->at);
		a->at = NULL;
	}
	if (a->at == NULL || agent_start_attempt(a, err, sizeof(err)) == -1) {
		log_warnx("cannot start workers: %s", err);
		a->bk_status = CGRUN_EXIT_INTERNAL;
		snprintf(a->why, sizeof(a->why), "%s", err);
		agent_stop(a, S_STOP_BKFAIL, SIGKILL);
	}
}

/* RUNNING + failed (or gone with failures): stop the rest. */
void
act_stop_failure(struct agent *a)
{
	snprintf(a->why, sizeof(a->why), "%s", attempt_why(a->at));
	agent_stop(a, S_STOP_FAILURE, SIGTERM);
}

/*
 * RUNNING/STOPPING + round: the backend decided a round while workers of
 * another run (a restarted rendezvous server formed it from what the
 * agents carried, docs/protocol.md section 5) or stop (for a failure or
 * a restart: the round supersedes what they were stopping for).  Workers
 * of two rounds never run at once, and a round is never left unstarted:
 * stop these, then start it (act_stopped_round).
 */
void
act_stop_round(struct agent *a)
{
	snprintf(a->restart_why, sizeof(a->restart_why), "rendezvous round "
	    "%u came while the workers of round %u were %s", a->next.round,
	    a->round.round, a->state == S_RUNNING ? "running" : "stopping");
	log_warnx("%s: stopping them, then starting round %u", a->restart_why,
	    a->next.round);
	agent_stop(a, S_STOP_ROUND, SIGTERM);
}

/* STOPPING-ROUND + all gone: start the round that came. */
static void
act_stopped_round(struct agent *a)
{
	agent_stopped(a);
	act_spawn(a);
}

/* STOPPING-FAILURE + all gone: the backend spends a restart (or fails). */
static void
act_stopped_failure(struct agent *a)
{
	agent_stopped(a);
	agent_enter(a, S_RDZV);
	a->bk->ops->workers_failed(a->bk, a->why);
}

/* RUNNING + succeeded: the exit barrier (backend). */
static void
act_done(struct agent *a)
{
	agent_enter(a, S_DONE);
	a->bk->ops->workers_done(a->bk);
}

/*
 * RUNNING/STOPPING + signal: forward it, stop, exit afterwards.  Each
 * signal is forwarded as itself (a HUP or QUIT during a TERM stop stays
 * a HUP or QUIT); the exit status stays the first signal's.
 */
void
act_stop_signal(struct agent *a)
{
	agent_stop(a, S_STOP_SIGNAL, a->last_sig);
}

/* RUNNING + second INT: stop for the signal with KILL at once. */
void
act_stop_kill(struct agent *a)
{
	agent_stop(a, S_STOP_SIGNAL, SIGKILL);
	agent_kill(a);
}

/* STOPPING + grace expired or second INT: KILL, keep the reason. */
static void
act_kill(struct agent *a)
{
	agent_kill(a);
}

/* STOPPING + still not gone after KILL: count them gone. */
static void
act_abandon(struct agent *a)
{
	attempt_abandon(a->at, AGENT_KILL_WAIT_SECS);
	event_active(a->kick, EV_TIMEOUT, 0);
}

/*
 * RUNNING + USR1/USR2: forward (workers decide, e.g. checkpoint) to each
 * worker's main process, as torchrun does: its helpers (DataLoader
 * workers) keep the default action, which would kill them; the whole
 * group only with --signal-group.
 */
static void
act_forward(struct agent *a)
{
	if (a->o->signal_group)
		attempt_signal(a->at, a->fwd_sig);
	else
		attempt_signal_main(a->at, a->fwd_sig);
}

/* RDZV/DONE + signal: nothing runs; exit. */
static void
act_exit_signal(struct agent *a)
{
	a->by_signal = 1;
	agent_exit(a, 128 + (a->stop_sig ? a->stop_sig : SIGINT));
}

/* STOPPING-SIGNAL + all gone: exit with the signal's status. */
static void
act_stopped_signal(struct agent *a)
{
	agent_stopped(a);
	act_exit_signal(a);
}

/* RUNNING + backend restart: stop workers, then rejoin. */
void
act_stop_restart(struct agent *a)
{
	agent_stop(a, S_STOP_RESTART, SIGTERM);
}

/* DONE + backend restart: nothing runs; rejoin at once. */
static void
act_rejoin(struct agent *a)
{
	agent_enter(a, S_RDZV);
	a->bk->ops->workers_stopped(a->bk);
}

/* STOPPING-RESTART + all gone: join the next round (no restart spent). */
static void
act_stopped_restart(struct agent *a)
{
	agent_stopped(a);
	act_rejoin(a);
}

/* RUNNING/STOPPING + backend fail: stop workers, then exit. */
void
act_stop_bkfail(struct agent *a)
{
	agent_stop(a, S_STOP_BKFAIL, SIGTERM);
}

/* STOPPING-SIGNAL + backend fail: keep stopping; the signal's status wins. */
static void
act_stop_bkfail_signalled(struct agent *a)
{
	agent_stop(a, S_STOP_SIGNAL, SIGTERM);
}

/* RDZV/DONE + backend fail: exit with its status (or the root cause's). */
static void
act_exit_bkfail(struct agent *a)
{
	const struct report_failure *f;
	int n;

	f = attempt_failures(a->at, &n);
	agent_exit(a, a->bk_status >= 0 ? a->bk_status : (n > 0 ?
	    report_exit_status(&f[0]) : CGRUN_EXIT_INTERNAL));
}

/* STOPPING-BKFAIL + all gone: exit with the backend's status. */
static void
act_stopped_bkfail(struct agent *a)
{
	agent_stopped(a);
	act_exit_bkfail(a);
}

/* DONE + finished: success. */
static void
act_finished(struct agent *a)
{
	agent_exit(a, CGRUN_EXIT_OK);
}

/*
 * RDZV + finished: the job ended without this agent ever running a worker
 * (it waited as a spare).  Never a success: a scheduler would record
 * training that did not happen, e.g. when two runs share one --rdzv-id.
 */
static void
act_finished_unused(struct agent *a)
{
	if (a->ran) {	/* between rounds of a job it took part in */
		act_finished(a);
		return;
	}
	a->bk_status = CGRUN_EXIT_RDZV;
	snprintf(a->why, sizeof(a->why), "rendezvous %s finished without this "
	    "node ever running a worker (it waited as a spare); if that was "
	    "another job using the same id, give each job its own --rdzv-id",
	    a->o->rdzv_id ? a->o->rdzv_id : "(none)");
	agent_exit(a, CGRUN_EXIT_RDZV);
}

/* One cell: the action, and for act_ignore why the event is ignored. */
struct agent_cell {
	agent_action	 fn;
	const char	*why;
};

#define DO(f)		{ f, NULL }
#define IGNORE(w)	{ act_ignore, w }
/* RDZV and DONE: no workers; they differ in what a restart and the end
 * of the job do. */
#define IDLE_ROW(restart, finished) {					\
	[E_ROUND] = DO(act_spawn),					\
	[E_FAILED] = IGNORE("no workers running"),			\
	[E_SUCCEEDED] = IGNORE("workers already gone"),			\
	[E_FAILED_ALL_GONE] = IGNORE("workers already gone"),		\
	[E_SIGSTOP] = DO(act_exit_signal),				\
	[E_SIGINT_AGAIN] = DO(act_exit_signal),				\
	[E_SIGFWD] = IGNORE("no workers running"),			\
	[E_GRACE] = IGNORE("not stopping"),				\
	[E_KILLWAIT] = IGNORE("not stopping"),				\
	[E_BK_RESTART] = restart,					\
	[E_BK_FAIL] = DO(act_exit_bkfail),				\
	[E_BK_FINISHED] = DO(finished),					\
	[E_HUNG] = IGNORE("no workers running"),			\
	[E_STACKS] = IGNORE("no diagnosis running"),			\
}

/* The five stopping states: they differ in what follows "all gone", in
 * whether a round that comes still starts (not when exiting), and in what
 * a restart changes (stopping for a round: it supersedes that round). */
#define STOPPING_ROW(gone, bkfail, round, restart) {			\
	[E_ROUND] = round,						\
	[E_FAILED] = IGNORE("already stopping"),			\
	[E_SUCCEEDED] = DO(gone),					\
	[E_FAILED_ALL_GONE] = DO(gone),					\
	[E_SIGSTOP] = DO(act_stop_signal),				\
	[E_SIGINT_AGAIN] = DO(act_kill),				\
	[E_SIGFWD] = IGNORE("workers are being stopped"),		\
	[E_GRACE] = DO(act_kill),					\
	[E_KILLWAIT] = DO(act_abandon),					\
	[E_BK_RESTART] = restart,					\
	[E_BK_FAIL] = DO(bkfail),					\
	[E_BK_FINISHED] = IGNORE("workers still stopping"),		\
	[E_HUNG] = IGNORE("already stopping"),				\
	[E_STACKS] = IGNORE("no diagnosis running"),			\
}

/*
 * The supervisor: what every event does in every state.  Reading one
 * column shows what an event does everywhere (e.g. E_SIGSTOP: exit at once
 * when nothing runs, else stop the workers for the signal).
 */
static const struct agent_cell agent_actions[S_NSTATES][E_NEVENTS] = {
	[S_RDZV] = IDLE_ROW(IGNORE("already rejoining"), act_finished_unused),
	[S_RUNNING] = {
		[E_ROUND] = DO(act_stop_round),
		[E_FAILED] = DO(act_stop_failure),
		[E_SUCCEEDED] = DO(act_done),
		[E_FAILED_ALL_GONE] = DO(act_stop_failure),
		[E_SIGSTOP] = DO(act_stop_signal),
		[E_SIGINT_AGAIN] = DO(act_stop_kill),
		[E_SIGFWD] = DO(act_forward),
		[E_GRACE] = IGNORE("not stopping"),
		[E_KILLWAIT] = IGNORE("not stopping"),
		[E_BK_RESTART] = DO(act_stop_restart),
		[E_BK_FAIL] = DO(act_stop_bkfail),
		[E_BK_FINISHED] = IGNORE("workers still running"),
		[E_HUNG] = DO(act_hung),
		[E_STACKS] = IGNORE("no diagnosis running"),
	},
	/* the backend takes the failure as STOPPED after a restart */
	[S_STOP_FAILURE] = STOPPING_ROW(act_stopped_failure, act_stop_bkfail,
	    DO(act_stop_round), IGNORE("already stopping")),
	[S_STOP_RESTART] = STOPPING_ROW(act_stopped_restart, act_stop_bkfail,
	    DO(act_stop_round), IGNORE("already stopping for one")),
	[S_STOP_SIGNAL] = STOPPING_ROW(act_stopped_signal,
	    act_stop_bkfail_signalled, IGNORE("exiting for a signal"),
	    IGNORE("exiting for a signal")),
	[S_STOP_BKFAIL] = STOPPING_ROW(act_stopped_bkfail, act_stop_bkfail,
	    IGNORE("exiting: the job cannot go on"),
	    IGNORE("exiting: the job cannot go on")),
	[S_STOP_ROUND] = STOPPING_ROW(act_stopped_round, act_stop_bkfail,
	    DO(act_stop_round), DO(act_stop_restart)),
	[S_DONE] = IDLE_ROW(DO(act_rejoin), act_finished),
	/* the stacks first: a Python rank dies of the SIGABRT that dumps it */
	[S_DIAGNOSE] = {
		[E_ROUND] = DO(act_round_after_stacks),
		[E_FAILED] = IGNORE("taking the stacks (SIGABRT ends ranks)"),
		[E_SUCCEEDED] = IGNORE("taking the stacks first"),
		[E_FAILED_ALL_GONE] = IGNORE("taking the stacks first"),
		[E_SIGSTOP] = DO(act_diag_signal),
		[E_SIGINT_AGAIN] = DO(act_diag_kill),
		[E_SIGFWD] = DO(act_forward),
		[E_GRACE] = IGNORE("not stopping"),
		[E_KILLWAIT] = IGNORE("not stopping"),
		[E_BK_RESTART] = DO(act_restart_after_stacks),
		[E_BK_FAIL] = DO(act_diag_bkfail),
		[E_BK_FINISHED] = IGNORE("workers still running"),
		[E_HUNG] = IGNORE("already taking the stacks"),
		[E_STACKS] = DO(act_diagnosed),
	},
	[S_EXIT] = {
		[0 ... E_NEVENTS - 1] = IGNORE("exiting"),
	},
};

/* Dispatch one event through the table. */
void
agent_event(struct agent *a, enum agent_ev e)
{
	const struct agent_cell *c = &agent_actions[a->state][e];

	log_debug("agent event %s in %s%s%s", event_names[e],
	    state_names[a->state], c->why ? ": ignored, " : "",
	    c->why ? c->why : "");
	c->fn(a);
}

/* Grace timer: workers outlived --shutdown-timeout (E_GRACE). */
static void
agent_grace_cb(evutil_socket_t fd, short what, void *arg)
{
	struct agent *a = arg;

	log_warnx("workers still running %.1fs after the stop signal; "
	    "sending KILL", a->o->shutdown_timeout);
	agent_event(a, E_GRACE);
}

/* Kill-wait timer: workers not gone long after SIGKILL (E_KILLWAIT). */
static void
agent_killwait_cb(evutil_socket_t fd, short what, void *arg)
{
	agent_event(arg, E_KILLWAIT);
}

/*
 * A handled signal.  USR1/USR2 are only forwarded (workers decide what to
 * do, e.g. checkpoint before a SLURM preemption); the others are forwarded
 * and stop the job; a second SIGINT kills at once.
 */
static void
agent_signal_cb(evutil_socket_t fd, short what, void *arg)
{
	struct agent *a = arg;
	int sig = (int)fd;

	log_info("signal received sig=%s state=%s", options_signame(sig),
	    state_names[a->state]);
	if (sig == SIGUSR1 || sig == SIGUSR2) {
		a->fwd_sig = sig;
		agent_event(a, E_SIGFWD);
		return;
	}
	if (sig == SIGINT && a->nsigint++ > 0) {
		agent_event(a, E_SIGINT_AGAIN);
		return;
	}
	if (a->stop_sig == 0)
		a->stop_sig = sig;
	a->last_sig = sig;
	agent_event(a, E_SIGSTOP);
}

/* Backend callback: a round is ready (E_ROUND); the workers running, if
 * any, keep theirs in a->round until act_spawn. */
static void
bk_round(void *arg, const struct round_info *ri)
{
	struct agent *a = arg;

	a->next = *ri;
	observe_round(a->ob, ri);
	agent_event(a, E_ROUND);
}

/* Backend callback: stop the workers for a new round (E_BK_RESTART). */
static void
bk_restart(void *arg, const char *why)
{
	struct agent *a = arg;

	log_info("restart requested by the rendezvous: %s", why);
	snprintf(a->restart_why, sizeof(a->restart_why), "%s", why);
	agent_event(a, E_BK_RESTART);
}

/* Backend callback: the job cannot go on (E_BK_FAIL). */
static void
bk_fail(void *arg, int status, const char *why)
{
	struct agent *a = arg;

	a->bk_status = status;
	if (status >= 0)
		snprintf(a->why, sizeof(a->why), "%s", why);
	agent_event(a, E_BK_FAIL);
}

/* Backend callback: every node is done (E_BK_FINISHED). */
static void
bk_finished(void *arg)
{
	agent_event(arg, E_BK_FINISHED);
}

/*
 * Install the signal events: SIGCHLD and every forwarded signal, except a
 * SIGHUP that was ignored when cgrun started (nohup).
 */
static int
agent_signals(struct agent *a)
{
	struct sigaction old;
	int i;

	signal(SIGPIPE, SIG_IGN);
	a->chld = evsignal_new(a->base, SIGCHLD, agent_sigchld_cb, a);
	if (a->chld == NULL || evsignal_add(a->chld, NULL) == -1)
		return -1;
	sigaction(SIGHUP, NULL, &old);
	a->hup_ignored = old.sa_handler == SIG_IGN;
	for (i = 0; a->o->signals[i] != 0 && a->nsigev < 32; i++) {
		/* nohup: a hang-up is neither ours nor the workers' business
		 * (torchrun forwards it and kills the job, issue #76894) */
		if (a->o->signals[i] == SIGHUP && a->hup_ignored)
			continue;
		a->sigev[a->nsigev] = evsignal_new(a->base, a->o->signals[i],
		    agent_signal_cb, a);
		if (a->sigev[a->nsigev] == NULL ||
		    evsignal_add(a->sigev[a->nsigev], NULL) == -1)
			return -1;
		a->nsigev++;
	}
	tty_on_job_control(agent_job_control_cb, a);
	return 0;
}

/* The event wiring: the stop timers, the loop-turn kick, the signals. */
int
agent_wire(struct agent *a)
{
	a->grace = evtimer_new(a->base, agent_grace_cb, a);
	a->killwait = evtimer_new(a->base, agent_killwait_cb, a);
	a->kick = event_new(a->base, -1, 0, agent_kick_cb, a);
	if (a->grace == NULL || a->killwait == NULL || a->kick == NULL)
		return -1;
	return agent_signals(a);
}

/* The backend's callbacks: each raises its event in the table. */
void
agent_backend_cb(struct agent *a, struct backend_cb *cb)
{
	cb->round = bk_round;
	cb->restart = bk_restart;
	cb->fail = bk_fail;
	cb->finished = bk_finished;
	cb->arg = a;
}

/* The job's end, observed: success, failure or signal, and why. */
static void
agent_observe_finish(struct agent *a)
{
	const struct report_failure *f;
	char why[sizeof(a->why)];
	int n, sig = a->stop_sig ? a->stop_sig : SIGINT;

	f = attempt_failures(a->at, &n);
	if (a->exit_status == 0) {
		observe_finish(a->ob, 0, "success", NULL, NULL, 0);
		return;
	}
	if (a->by_signal || a->state == S_STOP_SIGNAL) {
		snprintf(why, sizeof(why), "stopped by SIG%s",
		    options_signame(sig) ? options_signame(sig) : "?");
		observe_finish(a->ob, a->exit_status, "signal", why, f, n);
		return;
	}
	observe_finish(a->ob, a->exit_status, "failure", a->why, f, n);
}

/* Run the job; returns cgrun's exit status. */
int
agent_run(struct agent *a)
{
	char err[512];

	a->state = S_RDZV;
	observe_start(a->ob);
	if (a->bk->ops->start(a->bk, err, sizeof(err)) == -1) {
		log_warnx("rendezvous: %s", err);
		observe_finish(a->ob, CGRUN_EXIT_RDZV, "failure", err, NULL, 0);
		return CGRUN_EXIT_RDZV;
	}
	while (a->state != S_EXIT)
		if (event_base_loop(a->base, EVLOOP_ONCE) == -1) {
			log_warnx("event loop failed");
			a->exit_status = CGRUN_EXIT_INTERNAL;
			break;
		}
	/* Whatever is left in the workers' process groups (a background
	 * child of a worker that exited 0) does not outlive the job. */
	attempt_signal(a->at, SIGKILL);
	contain_kill(a->contain);
	output_report_losses();
	agent_observe_finish(a);
	agent_finish(a);
	watchdog_free(a->wd);		/* removes the FIFO */
	a->wd = NULL;
	return a->exit_status;
}

/* For tests: the number of empty cells in the table (0: every one set). */
int
agent_table_holes(void)
{
	int s, e, n = 0;

	for (s = 0; s < S_NSTATES; s++)
		for (e = 0; e < E_NEVENTS; e++)
			n += agent_actions[s][e].fn == NULL;
	return n;
}

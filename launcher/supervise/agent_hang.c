/*
 * agent_hang.c: the agent's hang path (its state and events in
 * agent_impl.h, its table in agent.c).  agent_open_watchdog creates the
 * watchdog (watchdog.c, WHERE A HANG IS DETECTED), whose callback raises
 * E_HUNG; act_hung (RUNNING + E_HUNG) takes every rank's stacks (stacks.c,
 * WHERE A HANG IS DIAGNOSED) in S_DIAGNOSE; act_diagnosed (E_STACKS) names
 * the root cause and stops as for a crash (or for the restart asked
 * meanwhile); a signal or the job's failure drops the stacks (act_diag_*).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "agent_impl.h"
#include "attempt.h"
#include "log.h"
#include "observe.h"
#include "options.h"
#include "stacks.h"
#include "watchdog.h"

/* The diagnosis is done (stacks.c's done): E_STACKS. */
static void
agent_stacks_cb(void *arg, const char *summary)
{
	agent_event(arg, E_STACKS);
}

/*
 * RUNNING + hung: say which rank and why, then take every local rank's
 * stacks before anything is killed (S_DIAGNOSE, bounded by
 * STACKS_TIMEOUT_MS); E_STACKS then stops the workers as for a crash.
 */
void
act_hung(struct agent *a)
{
	const struct watchdog_hang *h = &a->hang;
	char sec[WATCHDOG_SECTION_MAX + 16] = "";

	if (h->section[0] != '\0')
		snprintf(sec, sizeof(sec), " section=%s", h->section);
	log_warnx("rank hung rank=%d local_rank=%d idle=%.0fs timeout=%.0fs "
	    "source=%s%s", a->round.rank_base + h->lr, h->lr, h->idle,
	    h->timeout, h->source, sec);
	observe_hang(a->ob, h, a->round.rank_base + h->lr);
	a->after_stacks = AFTER_FAILURE;
	a->stacks = attempt_stacks(a->at, a->round.rank_base + h->lr,
	    STACKS_TIMEOUT_MS, agent_stacks_cb, a);
	if (a->stacks == NULL) {
		log_warn("cannot take the stacks");
		agent_enter(a, S_DIAGNOSE);
		agent_event(a, E_STACKS);
		return;
	}
	agent_enter(a, S_DIAGNOSE);
}

/*
 * DIAGNOSE + stacks: the culprit (the rank the stacks name, else the one
 * the watchdog timed out) is the root cause; the stop the hang room chose
 * for the hung rank (a FileTimer's signal to its requester: watchdog.h)
 * goes out first (agent_stop_hung); then stop as for a crash, or for the
 * restart or the round the backend gave meanwhile (the latest of the two
 * wins).
 */
void
act_diagnosed(struct agent *a)
{
	const struct watchdog_hang *h = &a->hang;
	int c = a->stacks ? stacks_culprit(a->stacks) : -1, lr = h->lr;
	char why[sizeof(h->why) + 600];

	if (c >= a->round.rank_base && c < a->round.rank_base + a->nproc)
		lr = c - a->round.rank_base;
	snprintf(why, sizeof(why), "%s%s%s", h->why,
	    c >= 0 ? " in " : "", c >= 0 ? stacks_where(a->stacks) : "");
	observe_stacks(a->ob, a->round.rank_base + lr, c >= 0 ?
	    stacks_where(a->stacks) : NULL, a->stacks ?
	    stacks_path(a->stacks) : NULL, a->stacks ?
	    stacks_summary(a->stacks) : NULL);
	stacks_free(a->stacks);
	a->stacks = NULL;
	attempt_hung(a->at, lr, why);
	agent_stop_hung(a);
	if (a->after_stacks == AFTER_ROUND)
		act_stop_round(a);
	else if (a->after_stacks == AFTER_RESTART)
		act_stop_restart(a);
	else
		act_stop_failure(a);
}

/* DIAGNOSE + backend restart: stop for it once the stacks are taken. */
void
act_restart_after_stacks(struct agent *a)
{
	a->after_stacks = AFTER_RESTART;
}

/* DIAGNOSE + round: start it (a->next) once the stacks are taken and
 * the workers stopped. */
void
act_round_after_stacks(struct agent *a)
{
	a->after_stacks = AFTER_ROUND;
}

/* DIAGNOSE + a signal or the job's end: give up the stacks, act at once. */
static void
agent_drop_stacks(struct agent *a)
{
	stacks_free(a->stacks);
	a->stacks = NULL;
}

/* DIAGNOSE + TERM/INT/...: stop for the signal. */
void
act_diag_signal(struct agent *a)
{
	agent_drop_stacks(a);
	act_stop_signal(a);
}

/* DIAGNOSE + second INT: kill at once. */
void
act_diag_kill(struct agent *a)
{
	agent_drop_stacks(a);
	act_stop_kill(a);
}

/* DIAGNOSE + the job cannot go on. */
void
act_diag_bkfail(struct agent *a)
{
	agent_drop_stacks(a);
	act_stop_bkfail(a);
}

/* Watchdog callback: a rank is hung (E_HUNG). */
static void
agent_hung_cb(void *arg, const struct watchdog_hang *h)
{
	struct agent *a = arg;

	a->hang = *h;
	agent_event(a, E_HUNG);
}

/*
 * The hang watchdog, when --hang-timeout or TORCHELASTIC_ENABLE_FILE_TIMER=1
 * asks for it; the FileTimer FIFO is TORCHELASTIC_TIMER_FILE if set, else
 * BASE/timer.fifo in the log directory.
 */
int
agent_open_watchdog(struct agent *a, char *err, size_t errlen)
{
	const struct cgrun_options *o = a->o;
	const char *ft = getenv("TORCHELASTIC_ENABLE_FILE_TIMER");
	struct watchdog_conf c;

	memset(&c, 0, sizeof(c));
	c.base = a->base;
	c.hang_timeout = o->hang_timeout > 0 ? o->hang_timeout : 0;
	c.first_timeout = options_hang_first(o);
	c.progress_output = o->hang_progress != NULL &&
	    strcmp(o->hang_progress, "output") == 0;
	c.filetimer = ft != NULL && strcmp(ft, "1") == 0;
	c.timer_path = getenv("TORCHELASTIC_TIMER_FILE");
	c.dir = a->logdir.base;
	c.on_hung = agent_hung_cb;
	c.arg = a;
	if (c.hang_timeout <= 0 && !c.filetimer)
		return 0;
	a->wd = watchdog_new(&c, err, errlen);
	return a->wd != NULL ? 0 : -1;
}

/*
 * stacks.h: the diagnosis of a hang (issue 13, item 3): take the stack of
 * every local rank before anything is killed, group identical stacks,
 * name the odd rank(s) out, write the full stacks to the log directory
 * and print the summary in cgrun's own lines on stderr.
 *
 * How each rank's stack is taken (chosen per process, in this order):
 *   python, py-spy installed   `py-spy dump --pid PID` (non-destructive)
 *   python                     SIGABRT to the rank's main process: the
 *                              interpreter's fault handler (cgrun set
 *                              PYTHONFAULTHANDLER=1, worker_env.c) dumps
 *                              every thread to the rank's stderr, which is
 *                              tapped (worker_tap) until the dump ended
 *                              (stderr EOF, or the process is gone), or
 *                              read from its log file once it is dead
 *                              (--redirects without --tee: no pipe)
 *   native, gdb installed      `gdb -batch -p PID -ex 'thread apply all bt'`
 *   native, eu-stack installed `eu-stack -p PID`
 *   native, otherwise          /proc/PID/task/TID/{comm,wchan,syscall,stack}
 * Helpers run as child processes whose output is read on the loop; the
 * agent never blocks.  Everything is bounded by timeout_ms: a rank whose
 * stack did not arrive by then is "no stack (why)".
 *
 * THE CALLER'S SIDE OF THE CONTRACT (the agent's hang action):
 *   - call it with the workers still running; kill nothing until done();
 *   - a Python rank dies of SIGABRT during the collection: its exit is
 *     part of the diagnosis, so worker exits (E_FAILED) must not stop the
 *     group while a collection is in flight;
 *   - done(arg, summary) is called exactly once, on a later loop turn
 *     (never from inside stacks_collect), unless stacks_free() came first;
 *     summary and stacks_path() stay valid until stacks_free();
 *   - stacks_free() may be called from inside done().
 */
#ifndef CGRUN_STACKS_H
#define CGRUN_STACKS_H

#include <sys/types.h>

#define STACKS_TIMEOUT_MS	10000	/* a sensible timeout_ms */
#define STACKS_SUMMARY_MAX	2048	/* bytes of the one-line summary */

struct event_base;
struct stacks;
struct worker;

/* One local rank to diagnose. */
struct stacks_target {
	pid_t		 pid;		/* the rank's main process */
	int		 rank, local_rank;
	int		 node;		/* group rank, for the report */
	struct worker	*w;		/* its stderr is tapped, or NULL */
	int		 flagged;	/* the detector named this rank hung */
};

/*
 * Start collecting the stacks of n targets; write dir/stacks.txt (dir is
 * the attempt's log directory, or NULL: nothing written).  NULL with errno
 * only when out of memory (then nothing was signalled).
 */
struct stacks *stacks_collect(struct event_base *,
	    const struct stacks_target *targets, int n, const char *dir,
	    int timeout_ms, void (*done)(void *arg, const char *summary),
	    void *arg);
/* Cancel what is in flight (helpers killed, taps removed), free. */
void	stacks_free(struct stacks *);

/* The summary ("ranks 0,1,3 in ...; rank 2 in ..."), "" before done. */
const char *stacks_summary(const struct stacks *);
/* The full stacks' file, or "" (none written). */
const char *stacks_path(const struct stacks *);
/* Where the culprit is ("wait <- hang_here (x.py:3) <- main"), or "". */
const char *stacks_where(const struct stacks *);
/*
 * The rank the diagnosis blames: the one odd rank out, else the flagged
 * rank, else -1 (every rank in the same place, or no clear minority).
 */
int	stacks_culprit(const struct stacks *);

#endif

/*
 * filetimer.h: torch's FileTimer protocol, served by the agent
 * (torch.distributed.elastic.timer.FileTimerServer's side), when
 * TORCHELASTIC_ENABLE_FILE_TIMER=1 is in cgrun's environment.
 *
 * A worker's FileTimerClient opens the FIFO (TORCHELASTIC_TIMER_FILE),
 * writes one JSON line of at most PIPE_BUF bytes and closes it:
 *   {"version": 1, "pid": 1234, "scope_id": "train.py#12",
 *    "expiration_time": 1700000010.5, "signal": 9}
 * A negative expiration_time releases the timer (pid, scope_id).  When a
 * timer expires the owner is told which worker and signal (signal <= 0:
 * the timer is dropped, nobody is killed, as torch does).
 *
 * The FIFO is created once per job and lives until filetimer_free(), which
 * removes it; the agent keeps a write end open itself so the read end
 * never sees EOF between clients.  Requests from pids that do not belong
 * to a current worker (the owner's lookup says) are logged and ignored.
 */
#ifndef CGRUN_FILETIMER_H
#define CGRUN_FILETIMER_H

#include <stddef.h>
#include <sys/types.h>

#define FILETIMER_LINE_MAX	4096	/* PIPE_BUF: torch's own limit */
#define FILETIMER_SCOPE_MAX	256	/* bytes of scope_id kept */
#define FILETIMER_TIMERS_MAX	4096	/* live timers, all workers */
#define FILETIMER_LINES_PER_READ 256	/* lines handled per loop turn */

struct event_base;
struct filetimer;

/* One request, as parsed from a line. */
struct filetimer_req {
	long	version;
	pid_t	pid;
	char	scope[FILETIMER_SCOPE_MAX + 1];
	double	expiration;	/* unix time; < 0: release */
	int	signal;
};

enum filetimer_parse_result {
	FILETIMER_OK,
	FILETIMER_ERROR
};

/*
 * Parse one line (without its "\n") of len bytes; a pure function.
 * Contract: FILETIMER_OK with r filled when the line is one JSON object
 * with an integer pid > 0, a string scope_id (cut to FILETIMER_SCOPE_MAX),
 * a number expiration_time, an integer signal and, if present, version 1;
 * else FILETIMER_ERROR with a reason in err.  Lines longer than
 * FILETIMER_LINE_MAX are errors before any JSON is read.
 */
enum filetimer_parse_result filetimer_parse(const char *line, size_t len,
	    struct filetimer_req *r, char *err, size_t errlen);

struct filetimer_conf {
	/* the local rank of a current worker that owns pid, or -1 */
	int	(*owner)(void *arg, pid_t pid);
	/* a valid request from local rank lr (a sign of progress) */
	void	(*activity)(void *arg, int lr);
	/*
	 * A timer of lr expired with a signal > 0 (pid: the requester;
	 * timeout: seconds from its request to its expiry; waited: seconds
	 * since its request).
	 */
	void	(*expired)(void *arg, int lr, pid_t pid, int sig,
		    const char *scope, double timeout, double waited);
	void	*arg;
};

/*
 * Serve at path (NULL: a private FIFO in dir).  An existing FIFO at path
 * is replaced (as torchrun does); an existing file of any other type is an
 * error, never replaced.  NULL with err set.
 */
struct filetimer *filetimer_new(struct event_base *, const char *path,
	    const char *dir, const struct filetimer_conf *, char *err,
	    size_t errlen);
/* The FIFO's path (what workers get as TORCHELASTIC_TIMER_FILE). */
const char *filetimer_path(const struct filetimer *);
/* Drop every timer (the attempt ended). */
void	filetimer_clear(struct filetimer *);
/* Stop serving, remove the FIFO, free.  NULL ok. */
void	filetimer_free(struct filetimer *);

#endif

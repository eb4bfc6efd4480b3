/*
 * watchdog.h: WHERE A HANG IS DETECTED.  The agent's hang watchdog: signs
 * of progress per local rank against --hang-timeout (and
 * --hang-first-timeout before a rank's first sign), on the agent's own
 * event loop, with no process of its own.
 *
 * Signs of progress:
 *   heartbeat  bytes on the rank's channel: libcgrun's cgrun_heartbeat(),
 *              or any write to the inherited fd named by
 *              CGRUN_HEARTBEAT_FD (a non-blocking AF_UNIX stream socket;
 *              the last complete line, if any, names the section)
 *   filetimer  any valid FileTimer request of the rank (filetimer.h)
 *   output     with --hang-progress=output, any line the rank writes
 * Heartbeats cost a recv per 4 KiB; the watchdog has ONE timer, set to the
 * earliest deadline of all ranks and re-armed only when it fires, so a
 * rank that beats at 1 kHz costs no timer work at all; a drained channel
 * is not watched for WATCHDOG_QUIET_MS (one shared resume timer), so the
 * agent wakes at most about 20 times a second per rank, whatever the rate.
 *
 * A rank is hung when it showed no sign for its timeout, or when one of
 * its FileTimer timers expired with a signal; the owner's on_hung is then
 * called once per attempt (watchdog_end() re-arms it for the next one).
 */
#ifndef CGRUN_WATCHDOG_H
#define CGRUN_WATCHDOG_H

#include <stddef.h>
#include <sys/types.h>

#define WATCHDOG_SECTION_MAX	64	/* bytes of a heartbeat's section */
#define WATCHDOG_FIRST_DEFAULT	600	/* --hang-first-timeout (seconds) */
#define WATCHDOG_BEATS_PER_READ	16	/* reads per event */
#define WATCHDOG_READ_MAX	4096	/* bytes per read */
#define WATCHDOG_QUIET_MS	50	/* a drained channel's pause */

struct event_base;
struct watchdog;

/* What the owner learns about a hang. */
struct watchdog_hang {
	int	 lr;			/* local rank */
	double	 idle, timeout;		/* seconds */
	const char *source;		/* heartbeat, output or filetimer */
	/*
	 * The hang room's own stop of the hung rank, decided where the hang
	 * was seen (filetimer.c, as torch's FileTimerServer: the signal the
	 * expired request named, to the process that sent it, the rank's or
	 * one in its group), for the agent to send before it stops every
	 * worker; 0: none (the progress watchdog).
	 */
	pid_t	 kill_pid;
	int	 kill_sig;
	char	 section[WATCHDOG_SECTION_MAX + 1];	/* last heartbeat's */
	char	 why[192];		/* "hung: no progress for 10 s" */
};

struct watchdog_conf {
	struct event_base *base;
	double		 hang_timeout;	/* seconds; 0: no progress watchdog */
	double		 first_timeout;	/* before the first sign */
	int		 progress_output;	/* output lines count */
	int		 filetimer;	/* serve torch's FileTimer */
	const char	*timer_path;	/* the user's TORCHELASTIC_TIMER_FILE */
	const char	*dir;		/* for a private FIFO */
	void	(*on_hung)(void *arg, const struct watchdog_hang *);
	void	*arg;
};

/* A watchdog, or NULL with err set (the FileTimer FIFO could not be made). */
struct watchdog *watchdog_new(const struct watchdog_conf *, char *err,
	    size_t errlen);
/* Remove the FIFO, close everything.  NULL ok. */
void	watchdog_free(struct watchdog *);

/* A new attempt of nproc ranks: their channels; -1 with err set. */
int	watchdog_begin(struct watchdog *, int nproc, char *err, size_t errlen);
/* The fd local rank lr inherits as CGRUN_HEARTBEAT_FD, or -1. */
int	watchdog_child_fd(const struct watchdog *, int lr);
/* What workers get as TORCHELASTIC_TIMER_FILE, or NULL. */
const char *watchdog_timer_file(const struct watchdog *);

/*
 * What the hang room gives a rank, as data: worker_env.c names the
 * variables (CGRUN_HEARTBEAT_FD, TORCHELASTIC_TIMER_FILE,
 * PYTHONFAULTHANDLER).
 */
struct watchdog_rank_env {
	int		 heartbeat_fd;	/* the rank's channel, or -1 */
	const char	*timer_file;	/* FileTimer FIFO, or NULL */
	/*
	 * A hang is diagnosed from every rank's stacks (stacks.h): Python
	 * ranks should dump every thread on the SIGABRT it sends.
	 */
	int		 python_stacks;
};

/* Describe local rank lr's part into *e (wd NULL: no watchdog, nothing). */
void	watchdog_rank_env(const struct watchdog *, int lr,
	    struct watchdog_rank_env *e);
/* Local rank lr runs as pid: its clock starts, the child's end closes. */
void	watchdog_started(struct watchdog *, int lr, pid_t pid);
/* Local rank lr wrote a line (counts with --hang-progress=output). */
void	watchdog_output(struct watchdog *, int lr);
/* Seconds since running local rank lr's last sign of progress (or its
 * start, before the first): 0 with *idle set, or -1 (not running). */
int	watchdog_idle(const struct watchdog *, int lr, double *idle);
/* A child was reaped: if it is a rank, stop watching it. */
void	watchdog_reaped(struct watchdog *, pid_t pid);
/* The attempt is over: channels closed, FileTimer timers dropped. */
void	watchdog_end(struct watchdog *);

#endif

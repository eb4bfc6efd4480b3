/*
 * tty.h: cgrun on a terminal, as torchrun behaves there (--tty).
 *
 * Every worker runs in a session of its own (torchrun's
 * start_new_session=True), so the terminal that is cgrun's stdin is not
 * its controlling terminal: local rank 0 reads it without being stopped
 * by SIGTTIN (breakpoint(), pdb, input()), while cgrun stays the
 * terminal's foreground job: Ctrl-C, Ctrl-Z and window changes reach
 * cgrun, which passes them on (SIGSTOP/SIGCONT to every worker group,
 * the new size to every worker's pseudo-terminal).  The other local
 * ranks get /dev/null as stdin, so a line typed is read by rank 0 alone.
 *
 * When cgrun's stdout or stderr is a terminal (--tty=auto), each worker
 * stream shown there and not teed to a file gets a pseudo-terminal
 * instead of a pipe: the worker sees a tty (isatty(), colours, progress
 * bars, its width the terminal's minus the line prefix), cgrun still
 * reads it as whole lines.  --tty=always: a pseudo-terminal for every
 * stream cgrun reads, terminal or not; --tty=never: pipes, and no worker
 * gets the terminal as stdin.
 *
 * The terminal's modes (which a worker's readline or pdb changes) and
 * foreground group are put back as cgrun found them when local rank 0
 * exits, when cgrun stops (Ctrl-Z: the worker's modes return on fg), at
 * exit, and on a fatal signal.  State is per process (one terminal).
 */
#ifndef CGRUN_TTY_H
#define CGRUN_TTY_H

#include <stddef.h>

struct event_base;

/* Look at fds 0-2, save the terminal's state, watch SIGTSTP, SIGCONT and
 * SIGWINCH on base when on a terminal; 0, or -1 (events not set up). */
int	tty_init(struct event_base *base, const char *mode);
/* Stop watching the signals (before the event base is freed). */
void	tty_end(void);
/* Who stops and continues the workers on Ctrl-Z and fg (sig: SIGSTOP
 * or SIGCONT); without one, job control only concerns cgrun. */
void	tty_on_job_control(void (*fn)(void *arg, int sig), void *arg);
/* Put the terminal back as cgrun found it (modes, foreground group). */
void	tty_restore(void);
/* The same for the modes only, when local rank 0 exits. */
void	tty_restore_modes(void);

/* Whether local rank lr gets /dev/null as stdin (not the terminal). */
int	tty_stdin_null(int lr);
/* Whether local rank lr holds the terminal as stdin: its console output
 * is written as it comes (prompts, echo), not only in whole lines. */
int	tty_stdin_owner(int lr);

/* Whether console stream s (1, 2) gets a pseudo-terminal. */
int	tty_pty_wanted(int s, int shown, int teed);
/* A pseudo-terminal: fds[0] the master (cgrun reads), fds[1] the slave
 * (the worker's), both close-on-exec; -1 with errno. */
int	tty_pty_open(int fds[2]);
/* Size master like the console of stream s less prefixlen columns, and
 * keep it so on SIGWINCH until tty_pty_closed(). */
void	tty_pty_track(int master, int s, size_t prefixlen);
void	tty_pty_closed(int master);

#endif

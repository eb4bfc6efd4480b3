/*
 * tty.c: the terminal cgrun runs on (tty.h): its saved state and how it
 * is put back, job control (Ctrl-Z, fg, window changes) passed on to the
 * workers, and the workers' pseudo-terminals.
 */
#include <errno.h>
#include <fcntl.h>
#include <pty.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <event2/event.h>

#include "log.h"
#include "tty.h"

#define TTY_MIN_COLS	20	/* a worker's width after the prefix */

enum tty_mode { TTY_AUTO, TTY_ALWAYS, TTY_NEVER };

struct tty_pty {
	int	master;
	int	console;	/* 1 or 2 */
	size_t	prefixlen;
};

static struct {
	enum tty_mode	 mode;
	int		 in_tty;	/* stdin is a terminal */
	int		 saved;		/* modes and fg are valid */
	struct termios	 modes;		/* stdin's terminal as found */
	pid_t		 fg;		/* its foreground group then */
	struct termios	 job_modes;	/* the modes when Ctrl-Z came */
	int		 have_job_modes;
	struct event	*ev[3];		/* SIGTSTP, SIGCONT, SIGWINCH */
	void		(*job_fn)(void *, int);
	void		*job_arg;
	struct tty_pty	*pty;
	int		 npty, cap;
} tty;

/* Signals that end cgrun without its event loop (those it forwards are
 * loop events and end it through exit(), which restores the terminal). */
static const int tty_fatal[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT,
	SIGTRAP, SIGSYS, SIGXCPU, SIGXFSZ, SIGALRM, SIGVTALRM, SIGPROF };

/* The mode named s, or -1. */
static int
tty_mode_of(const char *s)
{
	if (s == NULL || strcmp(s, "auto") == 0)
		return TTY_AUTO;
	if (strcmp(s, "always") == 0)
		return TTY_ALWAYS;
	if (strcmp(s, "never") == 0)
		return TTY_NEVER;
	return -1;
}

/* Whether cgrun's process group is the foreground of stdin's terminal
 * (only then may it set the modes without being stopped by SIGTTOU). */
static int
tty_foreground(void)
{
	return tty.saved && tcgetpgrp(0) == getpgrp();
}

/* The modes as cgrun found them, if it may set them now. */
void
tty_restore_modes(void)
{
	if (tty_foreground())
		tcsetattr(0, TCSADRAIN, &tty.modes);
}

/*
 * Modes, then the foreground group if it moved away from cgrun's own
 * (SIGTTOU blocked: tcsetpgrp from the background would raise it).
 */
void
tty_restore(void)
{
	sigset_t ttou, old;
	pid_t now;

	if (!tty.saved)
		return;
	now = tcgetpgrp(0);
	if (now != -1 && now != tty.fg && tty.fg == getpgrp()) {
		sigemptyset(&ttou);
		sigaddset(&ttou, SIGTTOU);
		sigprocmask(SIG_BLOCK, &ttou, &old);
		tcsetpgrp(0, tty.fg);
		sigprocmask(SIG_SETMASK, &old, NULL);
	}
	tty_restore_modes();
}

/* atexit() hook. */
static void
tty_atexit(void)
{
	tty_restore();
}

/* A fatal signal: the modes back (async-signal-safe), then die of it. */
static void
tty_fatal_handler(int sig)
{
	if (tty.saved)
		tcsetattr(0, TCSANOW, &tty.modes);
	raise(sig);	/* SA_RESETHAND: the default action now */
}

/* Save stdin's terminal state and arrange for it to come back. */
static void
tty_save(void)
{
	struct sigaction sa, old;
	size_t i;

	if (tcgetattr(0, &tty.modes) == -1)
		return;
	tty.fg = tcgetpgrp(0);
	tty.saved = 1;
	atexit(tty_atexit);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = tty_fatal_handler;
	sa.sa_flags = SA_RESETHAND | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(tty_fatal) / sizeof(tty_fatal[0]); i++)
		if (sigaction(tty_fatal[i], NULL, &old) == 0 &&
		    old.sa_handler == SIG_DFL)	/* an ignored one stays so */
			sigaction(tty_fatal[i], &sa, NULL);
}

/* Give master the size of console s less prefixlen columns. */
static void
tty_pty_size(const struct tty_pty *p)
{
	struct winsize ws;

	if (ioctl(p->console, TIOCGWINSZ, &ws) == -1 &&
	    ioctl(0, TIOCGWINSZ, &ws) == -1)
		return;
	if (ws.ws_col > TTY_MIN_COLS + p->prefixlen)
		ws.ws_col = (unsigned short)(ws.ws_col - p->prefixlen);
	else if (ws.ws_col > TTY_MIN_COLS)
		ws.ws_col = TTY_MIN_COLS;
	ioctl(p->master, TIOCSWINSZ, &ws);	/* SIGWINCH to the worker */
}

/* SIGWINCH: every pseudo-terminal takes the new size. */
static void
tty_winch_cb(evutil_socket_t sig, short what, void *arg)
{
	int i;

	log_debug("terminal resized ptys=%d", tty.npty);
	for (i = 0; i < tty.npty; i++)
		tty_pty_size(&tty.pty[i]);
}

/*
 * SIGTSTP (Ctrl-Z, the workers are in other sessions and did not see
 * it): stop every worker, put the terminal's modes back for the shell
 * (keeping the workers' for fg), then stop cgrun itself with the default
 * action.  Execution goes on here after SIGCONT; tty_cont_cb follows.
 */
static void
tty_tstp_cb(evutil_socket_t sig, short what, void *arg)
{
	struct sigaction dfl, old;
	sigset_t tstp;

	log_info("job control: stopping workers (SIGTSTP)");
	if (tty.job_fn != NULL)
		tty.job_fn(tty.job_arg, SIGSTOP);
	tty.have_job_modes = tty_foreground() &&
	    tcgetattr(0, &tty.job_modes) == 0;
	tty_restore_modes();
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	sigaction(SIGTSTP, &dfl, &old);
	sigemptyset(&tstp);
	sigaddset(&tstp, SIGTSTP);
	sigprocmask(SIG_UNBLOCK, &tstp, NULL);
	raise(SIGTSTP);
	sigaction(SIGTSTP, &old, NULL);
}

/* SIGCONT (fg or bg): the workers' modes back if in the foreground,
 * every worker continued, sizes checked (the window may have changed). */
static void
tty_cont_cb(evutil_socket_t sig, short what, void *arg)
{
	log_info("job control: continuing workers (SIGCONT) foreground=%d",
	    tty_foreground());
	if (tty.have_job_modes && tty_foreground())
		tcsetattr(0, TCSADRAIN, &tty.job_modes);
	tty.have_job_modes = 0;
	if (tty.job_fn != NULL)
		tty.job_fn(tty.job_arg, SIGCONT);
	tty_winch_cb(SIGWINCH, 0, NULL);
}

/* Look at the terminal, save it, watch the job-control signals. */
int
tty_init(struct event_base *base, const char *mode)
{
	static const int sigs[3] = { SIGTSTP, SIGCONT, SIGWINCH };
	static void (*const cbs[3])(evutil_socket_t, short, void *) = {
		tty_tstp_cb, tty_cont_cb, tty_winch_cb };
	struct sigaction old;
	int i;

	tty.mode = tty_mode_of(mode) == -1 ? TTY_AUTO :
	    (enum tty_mode)tty_mode_of(mode);
	tty.in_tty = isatty(0);
	if (tty.in_tty)
		tty_save();
	if (!tty.in_tty && !isatty(1) && !isatty(2))
		return 0;
	for (i = 0; i < 3; i++) {
		/* SIGTSTP ignored by whoever started cgrun stays ignored */
		if (sigs[i] == SIGTSTP && sigaction(SIGTSTP, NULL, &old) == 0 &&
		    old.sa_handler == SIG_IGN)
			continue;
		tty.ev[i] = evsignal_new(base, sigs[i], cbs[i], NULL);
		if (tty.ev[i] == NULL || evsignal_add(tty.ev[i], NULL) == -1)
			return -1;
	}
	log_debug("terminal stdin=%d stdout=%d stderr=%d mode=%s",
	    tty.in_tty, isatty(1), isatty(2), mode ? mode : "auto");
	return 0;
}

/* Free the signal events and the pty table. */
void
tty_end(void)
{
	int i;

	for (i = 0; i < 3; i++) {
		if (tty.ev[i] != NULL)
			event_free(tty.ev[i]);
		tty.ev[i] = NULL;
	}
	free(tty.pty);
	tty.pty = NULL;
	tty.npty = tty.cap = 0;
}

/* Set the job-control callback (NULL: none). */
void
tty_on_job_control(void (*fn)(void *, int), void *arg)
{
	tty.job_fn = fn;
	tty.job_arg = arg;
}

/* Whether local rank lr's stdin is /dev/null. */
int
tty_stdin_null(int lr)
{
	return tty.in_tty && (tty.mode == TTY_NEVER || lr != 0);
}

/* Whether local rank lr reads the terminal. */
int
tty_stdin_owner(int lr)
{
	return tty.in_tty && tty.mode != TTY_NEVER && lr == 0;
}

/* Whether stream s gets a pseudo-terminal under the mode. */
int
tty_pty_wanted(int s, int shown, int teed)
{
	if (tty.mode != TTY_AUTO)
		return tty.mode == TTY_ALWAYS;
	return shown && !teed && isatty(s);
}

/* A pseudo-terminal pair that passes bytes unchanged. */
int
tty_pty_open(int fds[2])
{
	struct termios t;

	if (openpty(&fds[0], &fds[1], NULL, NULL, NULL) == -1)
		return -1;
	fcntl(fds[0], F_SETFD, FD_CLOEXEC);
	fcntl(fds[1], F_SETFD, FD_CLOEXEC);
	/* bytes as the worker wrote them ("\n" not "\r\n"), no echo */
	if (tcgetattr(fds[1], &t) == 0) {
		t.c_oflag &= ~(tcflag_t)OPOST;
		t.c_lflag &= ~(tcflag_t)(ECHO | ECHONL);
		tcsetattr(fds[1], TCSANOW, &t);
	}
	return 0;
}

/* Size a worker's pty and keep it in the table for SIGWINCH. */
void
tty_pty_track(int master, int s, size_t prefixlen)
{
	struct tty_pty *n;

	if (tty.npty == tty.cap) {
		if ((n = realloc(tty.pty, (size_t)(tty.cap + 16) *
		    sizeof(*n))) == NULL)
			return;
		tty.pty = n;
		tty.cap += 16;
	}
	n = &tty.pty[tty.npty++];
	n->master = master;
	n->console = s;
	n->prefixlen = prefixlen;
	tty_pty_size(n);
}

/* Forget a closed pty. */
void
tty_pty_closed(int master)
{
	int i;

	for (i = 0; i < tty.npty; i++)
		if (tty.pty[i].master == master) {
			tty.pty[i] = tty.pty[--tty.npty];
			return;
		}
}

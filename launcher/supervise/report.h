/*
 * report.h: the failure report printed when a job fails, root cause first
 * (DESIGN §2.7, §3.5), and the exit status that follows from it.
 */
#ifndef CGRUN_REPORT_H
#define CGRUN_REPORT_H

#include <limits.h>
#include <stdio.h>
#include <sys/types.h>

struct report_failure {
	int	rank, local_rank, group_rank;
	pid_t	pid;
	int	status;			/* wait status */
	int	exec_errno;		/* the exec failed with this, or 0 */
	long long when_ms;		/* wall clock, ms since the epoch */
	int	after_stop;		/* exited after cgrun stopped the group */
	int	attempt;		/* TORCHELASTIC_RESTART_COUNT */
	char	error_file[PATH_MAX];	/* TORCHELASTIC_ERROR_FILE */
	char	log_file[PATH_MAX];	/* stderr log, or "" */
	char	hung[192];		/* the watchdog's reason, or "" */
};

struct report {
	const char	*name;		/* script or program */
	const char	*host;
	const char	*program;	/* what was executed (for exec errors) */
	int		 restarts, max_restarts;
	const struct report_failure *f;	/* f[0] is the root cause */
	int		 n;
};

/* Print the report to fp. */
void	report_print(FILE *fp, const struct report *);
/* cgrun's exit status for a root-cause failure: code, or 128 + signal. */
int	report_exit_status(const struct report_failure *);
/* "exit code 7", "signal 9 (SIGKILL)": how a worker ended. */
void	report_describe(char *buf, size_t len, int status);
/*
 * The hang diagnosis (stacks.c): the grouped stacks of this node's ranks,
 * the culprit (or -1) and where it is, whether every rank waits in a
 * collective (then the culprit is on another node), and the file with
 * every stack.
 */
void	report_hang(FILE *fp, int node, const char *summary, int culprit,
	    const char *where, int all_waiting, const char *path);
/*
 * Copy the root cause's error.json to path (the agent's own
 * TORCHELASTIC_ERROR_FILE), with message.errorCode set to the exit code,
 * as torchrun does for schedulers.  0, or -1 when there was none to copy.
 */
int	report_copy_error_file(const struct report_failure *, const char *path);

#endif

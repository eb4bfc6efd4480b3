/*
 * spawn.h: the worker command (resolved once per job) and starting one
 * worker process: its own session and process group (torchrun's
 * start_new_session: the terminal is not its controlling one), default
 * signal handlers and an empty mask, PR_SET_PDEATHSIG (it never outlives
 * the agent), fds 0-2 only (and keep_fd),
 * its CPU/memory binding, then exec.  An exec failure makes the child exit
 * 126 (found, not executable) or 127 (not found), and its errno can be read
 * back after the child was reaped.
 */
#ifndef CGRUN_SPAWN_H
#define CGRUN_SPAWN_H

#include <stddef.h>
#include <sys/types.h>

struct cgrun_options;
struct plan;

struct spawn_cmd {
	char	 *path;		/* what execve() runs; NULL: execvp argv[0] */
	char	**argv;		/* before ${local_rank} substitution */
	int	  argc;
	int	  direct;	/* program executed directly, not python */
};

/* Resolve the command from the options; 0, or -1 with err set. */
int	spawn_cmd_build(struct spawn_cmd *, const struct cgrun_options *,
	    char *err, size_t errlen);
/* 0 if the command can run; else 127 (not found) or 126 (cannot run),
 * with err naming the program, interpreter or script. */
int	spawn_cmd_check(const struct spawn_cmd *, const struct cgrun_options *,
	    char *err, size_t errlen);
void	spawn_cmd_free(struct spawn_cmd *);

/* A short name for reports: the script or program as the user gave it. */
const char *spawn_cmd_name(const struct spawn_cmd *);

struct spawn_req {
	const struct spawn_cmd	*cmd;
	int			 local_rank;
	char			**envp;
	int			 out_fd, err_fd;	/* the child's fd 1 and 2 */
	const struct plan	*plan;			/* or NULL */
	int			 hup_ignored;	/* keep SIGHUP ignored (nohup) */
	const char		*cgroup_procs;	/* enter this cgroup, or NULL */
	int			 stdin_null;	/* stdin /dev/null, not ours */
	int			 ctty;	/* 1 or 2: that fd (a pty) becomes the
					 * controlling terminal; 0: none */
	int			 keep_fd;	/* > 2: inherited as is (the
						 * heartbeat channel) */
};

/*
 * Fork and exec one worker.  Returns its pid (also its process group) and
 * *exec_fd, a non-blocking descriptor to pass to spawn_exec_errno() after
 * the child was reaped; -1 with err set when fork failed.
 */
pid_t	spawn_worker(const struct spawn_req *, int *exec_fd, char *err,
	    size_t errlen);

/* errno of the child's failed exec, or 0 if exec succeeded; closes fd. */
int	spawn_exec_errno(int exec_fd);

/* What a script path is, for spawn_cmd_build(). */
#define SPAWN_NOT_PROGRAM	0	/* not executable: give it to python */
#define SPAWN_PROGRAM		1	/* ELF, or a #! script of another kind */
#define SPAWN_PYTHON_SCRIPT	2	/* #! line names python: $PYTHON_EXEC */

/* Which of the SPAWN_* kinds path is. */
int	spawn_is_program(const char *path);

#endif

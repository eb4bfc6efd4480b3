/*
 * stackprobe.h: the ways the hang diagnosis (stacks.c) takes one process's
 * stack, and the process-level helpers behind them: is it a Python
 * interpreter, which tools are installed (and allowed by
 * CGRUN_STACK_TOOLS), a helper tool started as a child whose stdout is a
 * pipe, and the /proc fallback written in eu-stack's format.
 */
#ifndef CGRUN_STACKPROBE_H
#define CGRUN_STACKPROBE_H

#include <limits.h>
#include <stddef.h>
#include <sys/types.h>

enum stackprobe_way {
	STACKPROBE_FAULTHANDLER,	/* SIGABRT; the dump on its stderr */
	STACKPROBE_PYSPY,		/* py-spy dump --pid */
	STACKPROBE_GDB,			/* gdb -batch -p, thread apply all bt */
	STACKPROBE_EUSTACK,		/* eu-stack -p */
	STACKPROBE_PROC,		/* /proc/PID/task/TID/... */
	STACKPROBE__WAYS
};

/* The tools found on PATH, once per collection. */
struct stackprobe_tools {
	char	pyspy[PATH_MAX], gdb[PATH_MAX], eustack[PATH_MAX];
};

/* Find the tools CGRUN_STACK_TOOLS allows (default all) on PATH. */
void	stackprobe_tools(struct stackprobe_tools *);
/* The way to take pid's stack, and the tool's path for a helper. */
enum stackprobe_way stackprobe_choose(const struct stackprobe_tools *,
	    pid_t pid, const char **tool);
/* "faulthandler", "py-spy", "gdb", "eu-stack", "/proc". */
const char *stackprobe_name(enum stackprobe_way);
/*
 * Start the helper tool for pid (stdout and stderr into a pipe, stdin
 * /dev/null, default signals, empty mask); its pid and the pipe's read
 * end in *fd (non-blocking, close-on-exec), or -1 with errno.
 */
pid_t	stackprobe_spawn(enum stackprobe_way, const char *tool, pid_t pid,
	    int *fd);
/*
 * pid's threads from /proc in eu-stack's format ("TID n:", "#0  0x0 f"):
 * the kernel stack where readable, else wchan; then the system call.
 * Returns the length written into buf (NUL-terminated, cut to fit).
 */
size_t	stackprobe_proc(pid_t pid, char *buf, size_t len);
/* Whether pid no longer runs (gone, or a zombie waiting to be reaped). */
int	stackprobe_dead(pid_t pid);

#endif

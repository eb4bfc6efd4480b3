/*
 * stackdump.h: a bounded, pure parser of the stack dumps the hang
 * diagnosis reads (stacks.c), fed one line at a time:
 *   Python's fault handler  "Thread 0x7f.. (most recent call first):" /
 *                           "Current thread 0x..." / "Stack (most ...):",
 *                           then "  File \"x.py\", line 12 in f"
 *   gdb                     "Thread 2 (Thread 0x7f.. (LWP 123) \"x\"):",
 *                           then "#0  0x.. in f (a=1) at x.c:3"
 *   eu-stack                "TID 123:", then "#0  0x00007f..  f"
 *   py-spy dump             "Thread 123 (idle): \"MainThread\"", then
 *                           "    f (x.py:12)"
 * Any other line is not part of a dump and is ignored.  Every field has
 * a named maximum below; longer text is cut, threads and frames past the
 * maximum are counted, never stored.
 */
#ifndef CGRUN_STACKDUMP_H
#define CGRUN_STACKDUMP_H

#include <stddef.h>

#define STACKDUMP_LINE_MAX	4096	/* bytes of a line looked at */
#define STACKDUMP_THREADS_MAX	64	/* threads kept per dump */
#define STACKDUMP_FRAMES_MAX	512	/* frames kept per dump, all threads */
#define STACKDUMP_FUNC_MAX	96	/* bytes of a function name */
#define STACKDUMP_FILE_MAX	160	/* bytes of a file name */
#define STACKDUMP_NAME_MAX	64	/* bytes of a thread's header id */

enum stackdump_fmt {
	STACKDUMP_NONE,		/* nothing recognised yet */
	STACKDUMP_FAULTHANDLER,
	STACKDUMP_GDB,
	STACKDUMP_EUSTACK,
	STACKDUMP_PYSPY,
	STACKDUMP_PROC		/* /proc, written by stacks.c as eu-stack */
};

struct stackdump_frame {
	char	func[STACKDUMP_FUNC_MAX];	/* "" when unknown ("??") */
	char	file[STACKDUMP_FILE_MAX];	/* "" when unknown */
	int	line;				/* 0 when unknown */
};

struct stackdump_thread {
	char	name[STACKDUMP_NAME_MAX];	/* "0x7f..", "2", "123" */
	long	tid;				/* LWP / TID, or 0 */
	int	current;			/* "Current thread" */
	int	first, nframes;			/* into frames[] */
	int	cut;				/* frames not kept */
};

struct stackdump {
	enum stackdump_fmt	fmt;
	int			nthreads, nframes;
	int			cut_threads;	/* threads not kept */
	int			ended;	/* the dump's last line was seen */
	struct stackdump_thread	threads[STACKDUMP_THREADS_MAX];
	struct stackdump_frame	frames[STACKDUMP_FRAMES_MAX];
};

/* An empty dump. */
void	stackdump_init(struct stackdump *);
/*
 * Feed one line (no terminator needed; a trailing "\n"/"\r\n" is
 * ignored): 1 if it was part of a dump, 0 if not.
 */
int	stackdump_line(struct stackdump *, const char *line, size_t len);
/* Feed a whole text, line by line; the number of dump lines. */
int	stackdump_text(struct stackdump *, const char *text, size_t len);
/*
 * The rank's main thread, or -1 when there is none: the Python thread
 * whose outermost frame is <module>, else the thread whose tid is pid,
 * else the current thread, else the last one with frames.
 */
int	stackdump_main(const struct stackdump *, long pid);
/* Frame i (0 = innermost) of thread t. */
const struct stackdump_frame *stackdump_frame(const struct stackdump *,
	    int t, int i);

#endif

/*
 * spawn.c: the worker command line (which scripts go to python:
 * shebang.c) and fork/exec of one worker.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "errbuf.h"
#include "options.h"
#include "placement.h"
#include "shebang.h"
#include "spawn.h"
#include "template.h"

#define SPAWN_ARGV_MAX	65536	/* arguments of one worker command */

/*
 * What path is: SPAWN_NOT_PROGRAM, SPAWN_PROGRAM (an executable ELF file or
 * #! script) or SPAWN_PYTHON_SCRIPT (an executable script whose #! line
 * names a Python interpreter: it runs under $PYTHON_EXEC, as torchrun
 * would run it, not under whatever python its #! line finds).
 */
int
spawn_is_program(const char *path)
{
	char head[SHEBANG_LINE_MAX];
	struct stat st;
	ssize_t n;
	int fd;

	if (stat(path, &st) == -1 || !S_ISREG(st.st_mode) ||
	    access(path, X_OK) == -1)
		return SPAWN_NOT_PROGRAM;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return SPAWN_NOT_PROGRAM;
	n = read(fd, head, sizeof(head));
	close(fd);
	if (n >= 2 && head[0] == '#' && head[1] == '!')
		return shebang_names_python(head, (size_t)n) ?
		    SPAWN_PYTHON_SCRIPT : SPAWN_PROGRAM;
	return n >= 4 && memcmp(head, "\177ELF", 4) == 0 ? SPAWN_PROGRAM :
	    SPAWN_NOT_PROGRAM;
}

/*
 * Find name as a program: as a path when it has a '/', else in the current
 * directory, else on PATH.  Returns a malloc'd path (its spawn_is_program()
 * kind in *kind) or NULL.
 */
static char *
spawn_find_program(const char *name, int *kind)
{
	char buf[PATH_MAX], *path, *dir, *save = NULL;
	const char *env;

	if (strchr(name, '/') != NULL)
		return (*kind = spawn_is_program(name)) ? strdup(name) : NULL;
	snprintf(buf, sizeof(buf), "./%s", name);
	if ((*kind = spawn_is_program(buf)) != SPAWN_NOT_PROGRAM)
		return strdup(buf);
	if ((env = getenv("PATH")) == NULL || (path = strdup(env)) == NULL)
		return NULL;
	for (dir = strtok_r(path, ":", &save); dir != NULL;
	    dir = strtok_r(NULL, ":", &save)) {
		snprintf(buf, sizeof(buf), "%s/%s", *dir ? dir : ".", name);
		if ((*kind = spawn_is_program(buf)) != SPAWN_NOT_PROGRAM) {
			free(path);
			return strdup(buf);
		}
	}
	free(path);
	return NULL;
}

/* Whether s ends with suffix. */
static int
ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Append one argument to the command; 0 or -1. */
static int
cmd_push(struct spawn_cmd *c, const char *arg)
{
	if (c->argc + 1 >= SPAWN_ARGV_MAX)
		return -1;
	if ((c->argv[c->argc] = strdup(arg)) == NULL)
		return -1;
	c->argc++;
	return 0;
}

/*
 * Decide how to run the script: python [-u] [-m] SCRIPT, or SCRIPT itself
 * with --no-python or when it is a compiled program or a #! script that
 * does not name python.  A Python #! script found on PATH (not in the
 * current directory) is given to python by the path where it was found.
 */
int
spawn_cmd_build(struct spawn_cmd *c, const struct cgrun_options *o, char *err,
    size_t errlen)
{
	const char *py = getenv("PYTHON_EXEC"), *script = o->script;
	char *prog = NULL;
	int i, kind = SPAWN_NOT_PROGRAM;

	memset(c, 0, sizeof(*c));
	if ((c->argv = calloc((size_t)o->nscript_args + 5, sizeof(char *))) ==
	    NULL)
		goto nomem;
	if (!o->no_python && !o->module && !o->run_path &&
	    !ends_with(o->script, ".py"))
		prog = spawn_find_program(o->script, &kind);
	if (o->no_python || kind == SPAWN_PROGRAM) {
		c->direct = 1;
		c->path = prog;
		if (cmd_push(c, o->script) == -1)
			goto nomem;
	} else {
		if (prog != NULL && strchr(o->script, '/') == NULL &&
		    strncmp(prog, "./", 2) != 0)
			script = prog;
		if (py == NULL || *py == '\0')
			py = "python3";
		i = cmd_push(c, py) == -1 || cmd_push(c, "-u") == -1 ||
		    (o->module && cmd_push(c, "-m") == -1) ||
		    cmd_push(c, script) == -1;
		free(prog);
		if (i)
			goto nomem;
	}
	for (i = 0; i < o->nscript_args; i++)
		if (cmd_push(c, o->script_args[i]) == -1)
			goto nomem;
	return 0;
nomem:
	errbuf_set(err, errlen, "out of memory building the worker command");
	spawn_cmd_free(c);
	return -1;
}

/* 0 if path is a regular file this process may execute, else an errno
 * as execve() would give it (ENOENT, ENOTDIR, EACCES). */
static int
spawn_runnable(const char *path)
{
	struct stat st;

	if (stat(path, &st) == -1)
		return errno;
	return S_ISREG(st.st_mode) && access(path, X_OK) == 0 ? 0 : EACCES;
}

/* spawn_runnable() of name as execvpe() finds it: a path, or on PATH. */
static int
spawn_runnable_on_path(const char *name)
{
	char buf[PATH_MAX], *path, *dir, *save = NULL;
	const char *env = getenv("PATH");
	int e = ENOENT;

	if (strchr(name, '/') != NULL)
		return spawn_runnable(name);
	if ((path = strdup(env != NULL ? env : "/bin:/usr/bin")) == NULL)
		return 0;	/* let exec decide */
	for (dir = strtok_r(path, ":", &save); dir != NULL && e != 0;
	    dir = strtok_r(NULL, ":", &save)) {
		snprintf(buf, sizeof(buf), "%s/%s", *dir ? dir : ".", name);
		if (spawn_runnable(buf) == 0)
			e = 0;
	}
	free(path);
	return e;
}

/* The exit status of an exec errno: 127 not found, else 126 (as sh). */
static int
spawn_exec_status(int e)
{
	return e == ENOENT || e == ENOTDIR ? 127 : 126;
}

/*
 * Whether the command can run at all, checked once before any worker is
 * spawned (issue 18): the program itself, or the interpreter and the
 * script it is given (not a module: -m names are python's to find).
 * Returns 0, or 127 (not found) / 126 (found, cannot run) with err set.
 */
int
spawn_cmd_check(const struct spawn_cmd *c, const struct cgrun_options *o,
    char *err, size_t errlen)
{
	const char *prog = c->path ? c->path : c->argv[0], *script;
	int e;

	if ((e = spawn_runnable_on_path(prog)) != 0) {
		errbuf_set(err, errlen, "could not execute %s%s: %s; no worker "
		    "started", c->direct ? "" : "the interpreter (PYTHON_EXEC) ",
		    prog, strerror(e));
		return spawn_exec_status(e);
	}
	script = spawn_cmd_name(c);
	if (c->direct || o->module || strchr(script, '$') != NULL)
		return 0;	/* a ${local_rank} template: per rank */
	if (access(script, R_OK) == 0)
		return 0;
	e = errno;
	errbuf_set(err, errlen, "could not open the script %s: %s; no worker "
	    "started", script, strerror(e));
	return spawn_exec_status(e);
}

/* Free a command. */
void
spawn_cmd_free(struct spawn_cmd *c)
{
	int i;

	if (c->argv != NULL)
		for (i = 0; i < c->argc; i++)
			free(c->argv[i]);
	free(c->argv);
	free(c->path);
	memset(c, 0, sizeof(*c));
}

/* The script or program name. */
const char *
spawn_cmd_name(const struct spawn_cmd *c)
{
	if (c->direct)
		return c->argv[0];
	return c->argv[c->argc > 2 && strcmp(c->argv[2], "-m") == 0 ? 3 : 2];
}

/* argv for one local rank, ${local_rank} substituted; NULL on failure. */
static char **
spawn_argv(const struct spawn_cmd *c, int lr)
{
	struct template_var var;
	char num[16], buf[OPTIONS_STR_MAX * 2], **argv;
	int i;

	snprintf(num, sizeof(num), "%d", lr);
	var.name = "local_rank";
	var.value = num;
	if ((argv = calloc((size_t)c->argc + 1, sizeof(char *))) == NULL)
		return NULL;
	for (i = 0; i < c->argc; i++) {
		if (i == 0 || strchr(c->argv[i], '$') == NULL)
			argv[i] = strdup(c->argv[i]);
		else if (template_expand(c->argv[i], &var, 1, buf,
		    sizeof(buf)) >= 0)
			argv[i] = strdup(buf);
		else
			argv[i] = strdup(c->argv[i]);
		if (argv[i] == NULL) {
			while (i-- > 0)
				free(argv[i]);
			free(argv);
			return NULL;
		}
	}
	return argv;
}

/* Free an argv from spawn_argv(). */
static void
spawn_argv_free(char **argv)
{
	char **p;

	for (p = argv; *p != NULL; p++)
		free(*p);
	free(argv);
}

/* In the child: close fds lo..hi (hi < lo: nothing). */
static void
child_close_range(int lo, int hi)
{
	int fd, max;

	if (hi < lo)
		return;
	if (syscall(SYS_close_range, (unsigned int)lo, (unsigned int)hi, 0)
	    == 0)
		return;
	max = (int)sysconf(_SC_OPEN_MAX);
	for (fd = lo; fd <= hi && fd < max && fd < 65536; fd++)
		close(fd);
}

/* In the child: close every fd above 2 except k1 and k2 (-1: none). */
static void
child_close_fds(int k1, int k2)
{
	int a = k1 < k2 ? k1 : k2, b = k1 < k2 ? k2 : k1;

	if (a < 3) {		/* one fd to keep, or none */
		a = b;
		b = -1;
	}
	if (a < 3) {
		child_close_range(3, ~0U >> 1);
		return;
	}
	child_close_range(3, a - 1);
	if (b < 3 || b == a) {
		child_close_range(a + 1, ~0U >> 1);
		return;
	}
	child_close_range(a + 1, b - 1);
	child_close_range(b + 1, ~0U >> 1);
}

/* In the child: default handlers for every signal, then an empty mask. */
static void
child_reset_signals(void)
{
	struct sigaction sa;
	sigset_t none;
	int sig;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	for (sig = 1; sig < NSIG; sig++)
		sigaction(sig, &sa, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

/* In the child: move into the job's cgroup (contain.c), so whatever the
 * worker starts stays in it; a failure is said, the worker still runs. */
static void
child_enter_cgroup(const char *procs)
{
	int fd;

	if ((fd = open(procs, O_WRONLY | O_CLOEXEC)) == -1 ||
	    write(fd, "0", 1) != 1)
		dprintf(2, "cgrun: cannot enter the job's cgroup %s: %s\n",
		    procs, strerror(errno));
	if (fd >= 0)
		close(fd);
}

/* In the child: report errno through the exec pipe and exit 126/127. */
static void __attribute__((noreturn))
child_fail(int exec_wr, int err)
{
	ssize_t n;

	n = write(exec_wr, &err, sizeof(err));
	(void)n;
	_exit(err == ENOENT || err == ENOTDIR ? 127 : 126);
}

/* In the child: stdin on /dev/null; 0 or -1. */
static int
child_stdin_null(void)
{
	int fd = open("/dev/null", O_RDONLY);

	if (fd == -1 || (fd != 0 && dup2(fd, 0) == -1))
		return -1;
	return 0;
}

/*
 * The child side, after fork: the order matters.  A new session (so the
 * terminal cgrun runs on is not the worker's controlling terminal: reading
 * it never stops the worker with SIGTTIN, as under torchrun); the parent
 * death signal is armed before the getppid() check so a parent that died
 * in between is noticed; signals are unblocked only after every handler is
 * default.
 */
static void __attribute__((noreturn))
spawn_child(const struct spawn_req *r, char **argv, pid_t parent, int exec_wr)
{
	const char *file = r->cmd->path ? r->cmd->path : argv[0];

	setsid();
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(128 + SIGKILL);
	if (r->cgroup_procs != NULL)	/* contain.c: before anything runs */
		child_enter_cgroup(r->cgroup_procs);
	if ((r->out_fd >= 0 && dup2(r->out_fd, 1) == -1) ||
	    (r->err_fd >= 0 && dup2(r->err_fd, 2) == -1) ||
	    (r->stdin_null && child_stdin_null() == -1))
		child_fail(exec_wr, errno);
	if (r->ctty > 0)	/* its pty: window changes reach it */
		ioctl(r->ctty, TIOCSCTTY, 0);
	child_close_fds(exec_wr, r->keep_fd > 2 ? r->keep_fd : -1);
	if (r->keep_fd > 2)
		fcntl(r->keep_fd, F_SETFD, 0);	/* inherited across exec */
	if (r->plan != NULL && plan_apply_child(r->plan, r->local_rank) == -1)
		dprintf(2, "cgrun: local rank %d: CPU/memory binding failed: "
		    "%s\n", r->local_rank, strerror(errno));
	child_reset_signals();
	if (r->hup_ignored)	/* under nohup the workers stay immune too */
		signal(SIGHUP, SIG_IGN);
	if (strchr(file, '/') != NULL)
		execve(file, argv, r->envp);
	else
		execvpe(file, argv, r->envp);
	dprintf(2, "cgrun: cannot execute %s: %s\n", file, strerror(errno));
	child_fail(exec_wr, errno);
}

/*
 * Fork one worker.  All signals are blocked around fork so no handler of
 * the agent's (libevent's) runs in the child before it resets them.
 */
pid_t
spawn_worker(const struct spawn_req *r, int *exec_fd, char *err,
    size_t errlen)
{
	sigset_t all, old;
	char **argv;
	int p[2];
	pid_t pid, parent = getpid();

	if ((argv = spawn_argv(r->cmd, r->local_rank)) == NULL) {
		errbuf_set(err, errlen, "out of memory");
		return -1;
	}
	if (pipe2(p, O_CLOEXEC) == -1) {
		errbuf_set(err, errlen, "pipe: %s", strerror(errno));
		spawn_argv_free(argv);
		return -1;
	}
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	pid = fork();
	if (pid == 0)
		spawn_child(r, argv, parent, p[1]);
	sigprocmask(SIG_SETMASK, &old, NULL);
	/* No setpgid(pid, pid) here: it would make the child a group leader
	 * before its setsid() and so make that fail.  A killpg() that comes
	 * before the child's setsid() finds no group: worker_signal() then
	 * signals the pid, pending until the child unblocks its signals. */
	if (pid == -1)
		errbuf_set(err, errlen, "fork: %s", strerror(errno));
	close(p[1]);
	spawn_argv_free(argv);
	if (pid == -1) {
		close(p[0]);
		return -1;
	}
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	*exec_fd = p[0];
	return pid;
}

/* Read the exec result of a reaped child: its exec errno, or 0. */
int
spawn_exec_errno(int exec_fd)
{
	int e = 0;
	ssize_t n;

	if (exec_fd < 0)
		return 0;
	n = read(exec_fd, &e, sizeof(e));
	close(exec_fd);
	return n == (ssize_t)sizeof(e) ? e : 0;
}

/*
 * spawn.c: the worker command line and fork/exec of one worker.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "options.h"
#include "placement.h"
#include "spawn.h"
#include "template.h"

#define SPAWN_ARGV_MAX	65536	/* arguments of one worker command */

/* Whether path is a regular executable file starting with ELF magic or #!. */
int
spawn_is_program(const char *path)
{
	unsigned char magic[4];
	struct stat st;
	ssize_t n;
	int fd;

	if (stat(path, &st) == -1 || !S_ISREG(st.st_mode) ||
	    access(path, X_OK) == -1)
		return 0;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return 0;
	n = read(fd, magic, sizeof(magic));
	close(fd);
	if (n >= 2 && magic[0] == '#' && magic[1] == '!')
		return 1;
	return n == 4 && memcmp(magic, "\177ELF", 4) == 0;
}

/*
 * Find name as a program: as a path when it has a '/', else in the current
 * directory, else on PATH.  Returns a malloc'd path or NULL.
 */
static char *
spawn_find_program(const char *name)
{
	char buf[PATH_MAX], *path, *dir, *save = NULL;
	const char *env;

	if (strchr(name, '/') != NULL)
		return spawn_is_program(name) ? strdup(name) : NULL;
	snprintf(buf, sizeof(buf), "./%s", name);
	if (spawn_is_program(buf))
		return strdup(buf);
	if ((env = getenv("PATH")) == NULL || (path = strdup(env)) == NULL)
		return NULL;
	for (dir = strtok_r(path, ":", &save); dir != NULL;
	    dir = strtok_r(NULL, ":", &save)) {
		snprintf(buf, sizeof(buf), "%s/%s", *dir ? dir : ".", name);
		if (spawn_is_program(buf)) {
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
 * with --no-python or when it is a compiled program or a #! script.
 */
int
spawn_cmd_build(struct spawn_cmd *c, const struct cgrun_options *o, char *err,
    size_t errlen)
{
	const char *py = getenv("PYTHON_EXEC");
	char *prog = NULL;
	int i;

	memset(c, 0, sizeof(*c));
	if ((c->argv = calloc((size_t)o->nscript_args + 5, sizeof(char *))) ==
	    NULL)
		goto nomem;
	if (!o->no_python && !o->module && !o->run_path &&
	    !ends_with(o->script, ".py"))
		prog = spawn_find_program(o->script);
	if (o->no_python || prog != NULL) {
		c->direct = 1;
		c->path = prog;
		if (cmd_push(c, o->script) == -1)
			goto nomem;
	} else {
		if (py == NULL || *py == '\0')
			py = "python3";
		if (cmd_push(c, py) == -1 || cmd_push(c, "-u") == -1 ||
		    (o->module && cmd_push(c, "-m") == -1) ||
		    cmd_push(c, o->script) == -1)
			goto nomem;
	}
	for (i = 0; i < o->nscript_args; i++)
		if (cmd_push(c, o->script_args[i]) == -1)
			goto nomem;
	return 0;
nomem:
	snprintf(err, errlen, "out of memory building the worker command");
	spawn_cmd_free(c);
	return -1;
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

/* In the child: report errno through the exec pipe and exit 126/127. */
static void __attribute__((noreturn))
child_fail(int exec_wr, int err)
{
	ssize_t n;

	n = write(exec_wr, &err, sizeof(err));
	(void)n;
	_exit(err == ENOENT || err == ENOTDIR ? 127 : 126);
}

/*
 * The child side, after fork: the order matters.  The parent death signal
 * is armed before the getppid() check so a parent that died in between is
 * noticed; signals are unblocked only after every handler is default.
 */
static void __attribute__((noreturn))
spawn_child(const struct spawn_req *r, char **argv, pid_t parent, int exec_wr)
{
	const char *file = r->cmd->path ? r->cmd->path : argv[0];

	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(128 + SIGKILL);
	if ((r->out_fd >= 0 && dup2(r->out_fd, 1) == -1) ||
	    (r->err_fd >= 0 && dup2(r->err_fd, 2) == -1))
		child_fail(exec_wr, errno);
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
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (pipe2(p, O_CLOEXEC) == -1) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		spawn_argv_free(argv);
		return -1;
	}
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	pid = fork();
	if (pid == 0)
		spawn_child(r, argv, parent, p[1]);
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (pid == -1)
		snprintf(err, errlen, "fork: %s", strerror(errno));
	else
		setpgid(pid, pid);	/* no race with killpg() right after */
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

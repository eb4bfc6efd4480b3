/*
 * stackprobe.c: per-process helpers of the hang diagnosis (stackprobe.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stackprobe.h"

#define STACKPROBE_TASKS_MAX	64	/* threads read from /proc */

static const char *const stackprobe_names[] = { "faulthandler", "py-spy",
	"gdb", "eu-stack", "/proc" };

_Static_assert(sizeof(stackprobe_names) / sizeof(stackprobe_names[0]) ==
    STACKPROBE__WAYS, "stackprobe_names does not match enum stackprobe_way");

/* The name of a way, for logs and stacks.txt. */
const char *
stackprobe_name(enum stackprobe_way w)
{
	return stackprobe_names[w];
}

/* Whether CGRUN_STACK_TOOLS (a comma list; unset: all) allows name. */
static int
stackprobe_allowed(const char *name)
{
	const char *s = getenv("CGRUN_STACK_TOOLS"), *p;
	size_t n = strlen(name);

	if (s == NULL)
		return 1;
	for (p = s; (p = strstr(p, name)) != NULL; p += n)
		if ((p == s || p[-1] == ',') && (p[n] == '\0' || p[n] == ','))
			return 1;
	return 0;
}

/* name's path on PATH into buf ("" when not found or not allowed). */
static void
stackprobe_find(const char *name, char *buf, size_t len)
{
	const char *path = getenv("PATH"), *p, *e;

	buf[0] = '\0';
	if (path == NULL || !stackprobe_allowed(name))
		return;
	for (p = path; *p != '\0'; p = *e ? e + 1 : e) {
		e = strchrnul(p, ':');
		if (e > p && p[0] == '/' && snprintf(buf, len, "%.*s/%s",
		    (int)(e - p), p, name) < (int)len && access(buf, X_OK) == 0)
			return;
		buf[0] = '\0';
	}
}

/* Find the allowed tools. */
void
stackprobe_tools(struct stackprobe_tools *t)
{
	stackprobe_find("py-spy", t->pyspy, sizeof(t->pyspy));
	stackprobe_find("gdb", t->gdb, sizeof(t->gdb));
	stackprobe_find("eu-stack", t->eustack, sizeof(t->eustack));
}

/* Whether a path's last component names a Python interpreter or library. */
static int
stackprobe_python_name(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return strncmp(base, "python", 6) == 0 ||
	    strncmp(base, "libpython", 9) == 0;
}

/*
 * Whether pid runs a Python interpreter: its exe, or a python binary or
 * libpython mapped (an interpreter started through a dynamic loader, as
 * tests/torch26.sh does, has the loader as its exe).
 */
static int
stackprobe_is_python(pid_t pid)
{
	char path[64], exe[PATH_MAX], line[PATH_MAX + 128], *file;
	ssize_t n;
	FILE *fp;
	int found = 0;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	if ((n = readlink(path, exe, sizeof(exe) - 1)) > 0) {
		exe[n] = '\0';
		if (stackprobe_python_name(exe))
			return 1;
	}
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if ((fp = fopen(path, "re")) == NULL)
		return 0;
	while (!found && fgets(line, sizeof(line), fp) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		found = (file = strchr(line, '/')) != NULL &&
		    stackprobe_python_name(file);
	}
	fclose(fp);
	return found;
}

/* The way for pid: py-spy or the fault handler; gdb, eu-stack or /proc. */
enum stackprobe_way
stackprobe_choose(const struct stackprobe_tools *t, pid_t pid,
    const char **tool)
{
	*tool = NULL;
	if (stackprobe_is_python(pid)) {
		if (t->pyspy[0] != '\0')
			return *tool = t->pyspy, STACKPROBE_PYSPY;
		return STACKPROBE_FAULTHANDLER;
	}
	if (t->gdb[0] != '\0')
		return *tool = t->gdb, STACKPROBE_GDB;
	if (t->eustack[0] != '\0')
		return *tool = t->eustack, STACKPROBE_EUSTACK;
	return STACKPROBE_PROC;
}

/* In the child: default signals, empty mask, own group, fds, exec. */
static void __attribute__((noreturn))
stackprobe_exec(char *const argv[], int out)
{
	sigset_t none;
	int sig, null;

	for (sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	setpgid(0, 0);
	if ((null = open("/dev/null", O_RDONLY)) >= 0)
		dup2(null, 0);
	dup2(out, 1);
	dup2(out, 2);
	execv(argv[0], argv);
	_exit(127);
}

/* Start tool for pid with its output into a pipe. */
pid_t
stackprobe_spawn(enum stackprobe_way w, const char *tool, pid_t pid, int *fd)
{
	char spid[16], exe[PATH_MAX], batch[] = "-batch", nx[] = "-nx",
	    p_[] = "-p", ex[] = "-ex", bt[] = "thread apply all bt",
	    dump[] = "dump", lpid[] = "--pid", *argv[12];
	int p[2], i = 0;
	pid_t child;

	snprintf(spid, sizeof(spid), "%d", (int)pid);
	snprintf(exe, sizeof(exe), "%s", tool);
	argv[i++] = exe;
	if (w == STACKPROBE_GDB) {
		argv[i++] = batch, argv[i++] = nx, argv[i++] = p_;
		argv[i++] = spid, argv[i++] = ex, argv[i++] = bt;
	} else if (w == STACKPROBE_PYSPY)
		argv[i++] = dump, argv[i++] = lpid, argv[i++] = spid;
	else
		argv[i++] = p_, argv[i++] = spid;
	argv[i] = NULL;
	if (pipe2(p, O_CLOEXEC) == -1)
		return -1;
	if ((child = fork()) == 0)
		stackprobe_exec(argv, p[1]);
	close(p[1]);
	if (child == -1) {
		close(p[0]);
		return -1;
	}
	fcntl(p[0], F_SETFL, fcntl(p[0], F_GETFL) | O_NONBLOCK);
	*fd = p[0];
	return child;
}

/* Read a small /proc file into buf (trailing newline cut); -1 if not. */
static int
stackprobe_read(char *buf, size_t len, const char *fmt, ...)
{
	char path[128];
	va_list ap;
	ssize_t n;
	int fd;

	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	while (n > 0 && buf[n - 1] == '\n')
		n--;
	buf[n] = '\0';
	return 0;
}

/* Append formatted text to buf at *n (cut, always NUL-terminated). */
static void __attribute__((format(printf, 4, 5)))
stackprobe_put(char *buf, size_t len, size_t *n, const char *fmt, ...)
{
	va_list ap;
	int r;

	if (*n + 1 >= len)
		return;
	va_start(ap, fmt);
	r = vsnprintf(buf + *n, len - *n, fmt, ap);
	va_end(ap);
	if (r > 0)
		*n = *n + (size_t)r < len ? *n + (size_t)r : len - 1;
}

/* The name of common x86-64 system calls a hung thread sits in. */
static const char *
stackprobe_sysname(long nr)
{
#if defined(__x86_64__)
	static const struct { long nr; const char *name; } s[] = {
		{ 0, "read" }, { 1, "write" }, { 7, "poll" }, { 23, "select" },
		{ 34, "pause" }, { 35, "nanosleep" }, { 42, "connect" },
		{ 43, "accept" }, { 45, "recvfrom" }, { 47, "recvmsg" },
		{ 61, "wait4" }, { 202, "futex" }, { 230, "clock_nanosleep" },
		{ 232, "epoll_wait" }, { 270, "pselect6" }, { 271, "ppoll" },
		{ 281, "epoll_pwait" }, { 288, "accept4" } };
	size_t i;

	for (i = 0; i < sizeof(s) / sizeof(s[0]); i++)
		if (s[i].nr == nr)
			return s[i].name;
#endif
	return NULL;
}

/* One thread's frames: kernel stack or wchan, then the system call. */
static void
stackprobe_task(pid_t pid, long tid, char *buf, size_t len, size_t *n)
{
	char kst[4096], wchan[128], sc[256], *line, *save = NULL, *plus;
	const char *name;
	int fr = 0;
	long nr;

	stackprobe_put(buf, len, n, "TID %ld:\n", tid);
	if (stackprobe_read(kst, sizeof(kst), "/proc/%d/task/%ld/stack",
	    (int)pid, tid) == 0 && kst[0] != '\0') {
		for (line = strtok_r(kst, "\n", &save); line != NULL;
		    line = strtok_r(NULL, "\n", &save)) {
			if ((line = strchr(line, ' ')) == NULL)
				continue;
			if ((plus = strchr(++line, '+')) != NULL)
				*plus = '\0';
			stackprobe_put(buf, len, n, "#%d  0x0 %s\n", fr++, line);
		}
	} else if (stackprobe_read(wchan, sizeof(wchan),
	    "/proc/%d/task/%ld/wchan", (int)pid, tid) == 0 &&
	    strcmp(wchan, "0") != 0 && wchan[0] != '\0')
		stackprobe_put(buf, len, n, "#%d  0x0 %s\n", fr++, wchan);
	if (stackprobe_read(sc, sizeof(sc), "/proc/%d/task/%ld/syscall",
	    (int)pid, tid) == -1)
		return;
	if (strcmp(sc, "running") == 0)
		stackprobe_put(buf, len, n, "#%d  0x0 (running)\n", fr);
	else if ((nr = strtol(sc, NULL, 10)) >= 0 &&
	    (name = stackprobe_sysname(nr)) != NULL)
		stackprobe_put(buf, len, n, "#%d  0x0 syscall:%s\n", fr, name);
	else if (nr >= 0)
		stackprobe_put(buf, len, n, "#%d  0x0 syscall:%ld\n", fr, nr);
}

/* Every thread of pid (main thread first), in eu-stack's format. */
size_t
stackprobe_proc(pid_t pid, char *buf, size_t len)
{
	char path[64];
	struct dirent *de;
	size_t n = 0;
	DIR *dir;
	long tid;
	int k = 0;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	stackprobe_put(buf, len, &n, "PID %d - process\n", (int)pid);
	stackprobe_task(pid, (long)pid, buf, len, &n);
	if ((dir = opendir(path)) == NULL)
		return n;
	while ((de = readdir(dir)) != NULL && k < STACKPROBE_TASKS_MAX) {
		tid = strtol(de->d_name, NULL, 10);
		if (tid <= 0 || tid == (long)pid)
			continue;
		stackprobe_task(pid, tid, buf, len, &n);
		k++;
	}
	closedir(dir);
	return n;
}

/* Gone, or a zombie ('Z') or dead ('X') in /proc/PID/stat. */
int
stackprobe_dead(pid_t pid)
{
	char st[512], *rp;

	if (stackprobe_read(st, sizeof(st), "/proc/%d/stat", (int)pid) == -1)
		return 1;
	if ((rp = strrchr(st, ')')) == NULL || rp[1] == '\0')
		return 0;
	return rp[2] == 'Z' || rp[2] == 'X';
}

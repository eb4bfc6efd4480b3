/*
 * contain.c: every process a job's workers start, found and stopped
 * (contain.h).  Two modes, chosen once per job:
 *
 *   cgroup     a cgroup v2 directory cgrun.PID under cgrun's own cgroup
 *              (where cgrun may create one: root, or a delegated
 *              subtree).  Each worker enters it before exec, so whatever
 *              it starts (setsid, double fork, daemons) stays in it.
 *              Stopping writes cgroup.kill and waits for "populated 0".
 *              A guard process, in its own session and outside the
 *              cgroup, holds the read end of a pipe: when cgrun dies (even
 *              by SIGKILL) the pipe hits EOF and the guard empties and
 *              removes the cgroup.
 *   subreaper  no cgroup cgrun may use: cgrun is a child subreaper, so
 *              orphans of the workers become its children; stopping walks
 *              /proc for cgrun's descendants and signals them.  The guard
 *              is told each worker's process group (contain_track) and
 *              forgets them once the attempt's leftovers are killed; when
 *              cgrun dies it kills the groups it knows.  What a worker
 *              started outside its group (setsid) then runs on.
 *
 * Every wait is bounded (CONTAIN_WAIT_MS) and names what it waited for.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "contain.h"
#include "errbuf.h"
#include "log.h"

#define CONTAIN_WAIT_MS		5000	/* wait for killed processes to go */
#define CONTAIN_POLL_MS		5
#define CONTAIN_MAX_PIDS	65536	/* processes read from /proc */
#define CONTAIN_MAX_MINE	4096	/* descendants found (subreaper) */
#define CONTAIN_MAX_GROUPS	4096	/* process groups the guard keeps */

struct contain {
	char	 dir[PATH_MAX];		/* the job's cgroup, or "" */
	char	 procs[PATH_MAX + 16];	/* its cgroup.procs */
	int	 guard_fd;		/* write end of the guard's pipe, or -1 */
	pid_t	 guard;
};

/* Sleep ms milliseconds. */
static void
contain_nap(int ms)
{
	struct timespec ts = { 0, (long)ms * 1000000L };

	nanosleep(&ts, NULL);
}

/* Read a small file into buf (NUL-ended); bytes read, or -1. */
static ssize_t
contain_read(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return n;
}

/* Write s to dir/file; 0, or -1 with errno. */
static int
contain_write(const char *dir, const char *file, const char *s)
{
	char path[PATH_MAX];
	ssize_t n;
	int fd, e;

	if (snprintf(path, sizeof(path), "%s/%s", dir, file) >=
	    (int)sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) == -1)
		return -1;
	n = write(fd, s, strlen(s));
	e = errno;
	close(fd);
	errno = e;
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

/* The cgroup v2 mount point from /proc/self/mountinfo; 0, or -1. */
static int
contain_mount(char *mnt, size_t len)
{
	char line[4096], path[PATH_MAX];
	const char *sep;
	FILE *fp;
	int found = -1;

	if ((fp = fopen("/proc/self/mountinfo", "re")) == NULL)
		return -1;
	while (found == -1 && fgets(line, sizeof(line), fp) != NULL) {
		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT ... - FSTYPE SOURCE ... */
		if ((sep = strstr(line, " - cgroup2 ")) == NULL)
			continue;
		if (sscanf(line, "%*s %*s %*s %*s %4095s", path) == 1 &&
		    strlen(path) < len) {
			snprintf(mnt, len, "%s", path);
			found = 0;
		}
	}
	fclose(fp);
	return found;
}

/* cgrun's own cgroup v2 directory; 0, or -1 with err set. */
static int
contain_own(char *dir, size_t len, char *err, size_t errlen)
{
	char mnt[PATH_MAX], buf[4096], *p, *nl;

	if (contain_mount(mnt, sizeof(mnt)) == -1)
		return errbuf_set(err, errlen, "no cgroup v2 mount");
	if (contain_read("/proc/self/cgroup", buf, sizeof(buf)) <= 0 ||
	    (p = strstr(buf, "0::")) == NULL || (p != buf && p[-1] != '\n'))
		return errbuf_set(err, errlen, "no cgroup v2 entry in "
		    "/proc/self/cgroup");
	p += 3;
	if ((nl = strchr(p, '\n')) != NULL)
		*nl = '\0';
	if (snprintf(dir, len, "%s%s", mnt, strcmp(p, "/") == 0 ? "" : p) >=
	    (int)len)
		return errbuf_set(err, errlen, "cgroup path too long");
	return 0;
}

/*
 * Whether a process can be moved into the new cgroup (delegation rules
 * need write access to the common ancestor too): a child tries it and
 * reports through its exit status.
 */
static int
contain_probe(struct contain *c)
{
	pid_t pid;
	int st;

	if ((pid = fork()) == -1)
		return -1;
	if (pid == 0)
		_exit(contain_write(c->dir, "cgroup.procs", "0") == 0 ? 0 : 1);
	while (waitpid(pid, &st, 0) == -1 && errno == EINTR)
		;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* Every process in dir killed, and gone (bounded); 0, or -1. */
static int
contain_cgroup_empty(const char *dir)
{
	char path[PATH_MAX], buf[256];
	int waited;

	if (contain_write(dir, "cgroup.kill", "1") == -1)
		return -1;
	snprintf(path, sizeof(path), "%s/cgroup.events", dir);
	for (waited = 0; waited < CONTAIN_WAIT_MS; waited += CONTAIN_POLL_MS) {
		if (contain_read(path, buf, sizeof(buf)) <= 0 ||
		    strstr(buf, "populated 0") != NULL)
			return 0;
		contain_nap(CONTAIN_POLL_MS);
	}
	errno = ETIMEDOUT;
	return -1;
}

/*
 * The guard's reading loop until EOF: each int32 on the pipe is a worker's
 * process group to kill when cgrun dies (0: forget them all, the attempt
 * is over); returns how many groups it holds.
 */
static int
contain_guard_read(int rfd, pid_t *groups)
{
	int32_t v;
	ssize_t n;
	int ng = 0;

	for (;;) {
		n = read(rfd, &v, sizeof(v));
		if (n == -1 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof(v))
			return ng;	/* EOF: cgrun is gone */
		if (v == 0)
			ng = 0;
		else if (v > 0 && ng < CONTAIN_MAX_GROUPS)
			groups[ng++] = (pid_t)v;
	}
}

/*
 * The guard: in its own session (terminal signals are not for it), every
 * catchable signal ignored, every fd but the pipe closed; when the pipe
 * hits EOF (cgrun exited or was killed) it kills the groups it was told
 * of and empties and removes the cgroup.
 */
static void __attribute__((noreturn))
contain_guard(int rfd, const char *dir)
{
	static pid_t groups[CONTAIN_MAX_GROUPS];
	sigset_t none;
	int sig, ng, i;

	setsid();
	for (sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			signal(sig, SIG_IGN);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (rfd > 3)
		syscall(SYS_close_range, 3, rfd - 1, 0);
	syscall(SYS_close_range, rfd + 1, ~0U, 0);
	ng = contain_guard_read(rfd, groups);
	for (i = 0; i < ng; i++)
		kill(-groups[i], SIGKILL);
	if (*dir != '\0') {
		contain_cgroup_empty(dir);
		rmdir(dir);
	}
	_exit(0);
}

/* Start the guard; 0, or -1. */
static int
contain_start_guard(struct contain *c)
{
	sigset_t all, old;
	int p[2];

	if (pipe2(p, O_CLOEXEC) == -1)
		return -1;
	fcntl(p[1], F_SETFL, O_NONBLOCK);	/* contain_track never blocks */
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	c->guard = fork();
	if (c->guard == 0)
		contain_guard(p[0], c->dir);
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(p[0]);
	if (c->guard == -1) {
		close(p[1]);
		return -1;
	}
	c->guard_fd = p[1];
	return 0;
}

/* Try the cgroup mode; 0, or -1 with err set (and nothing left behind). */
static int
contain_cgroup(struct contain *c, char *err, size_t errlen)
{
	char own[PATH_MAX], path[PATH_MAX + 32];

	if (contain_own(own, sizeof(own), err, errlen) == -1)
		return -1;
	snprintf(c->dir, sizeof(c->dir), "%.*s/cgrun.%d", PATH_MAX - 32, own,
	    (int)getpid());
	/* an empty one left by an earlier cgrun of this pid goes first */
	if (mkdir(c->dir, 0755) == -1 && (errno != EEXIST ||
	    rmdir(c->dir) == -1 || mkdir(c->dir, 0755) == -1)) {
		errbuf_set(err, errlen, "cannot create %.150s: %s", c->dir,
		    strerror(errno));
		c->dir[0] = '\0';
		return -1;
	}
	snprintf(path, sizeof(path), "%s/cgroup.kill", c->dir);
	if (access(path, W_OK) == -1)
		errbuf_set(err, errlen, "no cgroup.kill (kernel before 5.14?)");
	else if (contain_probe(c) == -1)
		errbuf_set(err, errlen, "cannot move processes into %.150s "
		    "(not delegated)", c->dir);
	else if (contain_start_guard(c) == -1)
		errbuf_set(err, errlen, "cannot start the guard: %s",
		    strerror(errno));
	else {
		snprintf(c->procs, sizeof(c->procs), "%s/cgroup.procs",
		    c->dir);
		return 0;
	}
	rmdir(c->dir);
	c->dir[0] = '\0';
	return -1;
}

/* A containment for one job: a cgroup if cgrun may create one, else the
 * subreaper; NULL only when out of memory. */
struct contain *
contain_new(void)
{
	struct contain *c;
	char why[256];

	if ((c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	c->guard_fd = -1;
	if (getenv("CGRUN_NO_CGROUP") != NULL &&
	    strcmp(getenv("CGRUN_NO_CGROUP"), "1") == 0)
		snprintf(why, sizeof(why), "CGRUN_NO_CGROUP=1");
	else if (contain_cgroup(c, why, sizeof(why)) == 0) {
		log_info("containment: cgroup %s (guard pid=%d)", c->dir,
		    (int)c->guard);
		return c;
	}
	if (contain_start_guard(c) == -1)
		log_warn("containment: cannot start the guard");
	log_info("containment: subreaper only: %s; what workers start outside "
	    "their process group is stopped at the end of each attempt, but "
	    "if cgrun itself is killed only their process groups are (guard "
	    "pid=%d)", why, (int)c->guard);
	return c;
}

/* The cgroup.procs a worker writes "0" to before exec, or NULL. */
const char *
contain_procs(const struct contain *c)
{
	return c != NULL && c->procs[0] != '\0' ? c->procs : NULL;
}

/* Subreaper mode: tell the guard a worker's process group (0: forget
 * them all).  Never blocks: a full pipe drops the news (logged). */
void
contain_track(struct contain *c, pid_t pgid)
{
	int32_t v = (int32_t)pgid;

	if (c == NULL || c->dir[0] != '\0' || c->guard_fd < 0)
		return;
	if (write(c->guard_fd, &v, sizeof(v)) != (ssize_t)sizeof(v))
		log_warn("containment: cannot tell the guard group=%d",
		    (int)pgid);
}

/* Whether pid's state is Z (a zombie: dead, waiting to be reaped). */
static int
contain_zombie(const char *stat)
{
	const char *p = strrchr(stat, ')');

	return p != NULL && p[1] == ' ' && p[2] == 'Z';
}

/* Whether v is one of the n pids in set. */
static int
contain_in(const pid_t *set, int n, pid_t v)
{
	int i;

	for (i = 0; i < n; i++)
		if (set[i] == v)
			return 1;
	return 0;
}

/* Append the children of every thread of pid (/proc/PID/task/TID/children)
 * to set (n entries, max room); -1 when the kernel has no such files. */
static int
contain_children(pid_t pid, pid_t *set, int *n, int max)
{
	char path[96], buf[4096], *p, *end;
	struct dirent *de;
	DIR *d;
	long v;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if ((d = opendir(path)) == NULL)
		return 0;	/* gone meanwhile */
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.20s/children",
		    (int)pid, de->d_name);
		if (contain_read(path, buf, sizeof(buf)) == -1 &&
		    errno == ENOENT && pid == getpid()) {
			closedir(d);
			return -1;	/* no CONFIG_PROC_CHILDREN */
		}
		for (p = buf; *n < max; p = end) {
			v = strtol(p, &end, 10);
			if (end == p)
				break;
			if (!contain_in(set, *n, (pid_t)v))
				set[(*n)++] = (pid_t)v;
		}
	}
	closedir(d);
	return 0;
}

/* The descendants of this process, breadth first from its children
 * files (few reads); -1 when the kernel has none (walk all of /proc). */
static int
contain_descendants_fast(pid_t *set, int max)
{
	int n = 0, i;

	if (contain_children(getpid(), set, &n, max) == -1)
		return -1;
	for (i = 0; i < n; i++)
		contain_children(set[i], set, &n, max);
	return n;
}

/* Whether pid is a zombie (or gone). */
static int
contain_dead(pid_t pid)
{
	char path[64], buf[512];

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	return contain_read(path, buf, sizeof(buf)) <= 0 ||
	    contain_zombie(buf);
}

/*
 * Signal every live descendant of this process but the guard (subreaper
 * mode), found from the children files, else (older kernels) by one pass
 * over /proc that reads each process's parent; the descendants
 * (few: at most CONTAIN_MAX_MINE) are then found by passes over that
 * table.  Returns how many were signalled.
 */
static int
contain_descendants(pid_t guard, int sig)
{
	static pid_t pid[CONTAIN_MAX_PIDS], ppid[CONTAIN_MAX_PIDS];
	static char zombie[CONTAIN_MAX_PIDS];
	pid_t mine[CONTAIN_MAX_MINE];
	char path[64], buf[512];
	const char *p;
	struct dirent *de;
	DIR *d;
	int n = 0, m = 1, i, grew, hit = 0;

	if ((n = contain_descendants_fast(mine, CONTAIN_MAX_MINE)) >= 0) {
		for (i = 0; i < n; i++)
			if (mine[i] != guard && !contain_dead(mine[i]) &&
			    kill(mine[i], sig) == 0)
				hit++;
		return hit;
	}
	n = 0;
	if ((d = opendir("/proc")) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL && n < CONTAIN_MAX_PIDS) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%.20s/stat", de->d_name);
		if (contain_read(path, buf, sizeof(buf)) <= 0 ||
		    (p = strrchr(buf, ')')) == NULL || strlen(p) < 5)
			continue;
		pid[n] = (pid_t)atoi(de->d_name);
		ppid[n] = (pid_t)atoi(p + 4);	/* ") S PPID" */
		zombie[n++] = contain_zombie(buf);
	}
	closedir(d);
	mine[0] = getpid();
	do {
		grew = 0;
		for (i = 0; i < n && m < CONTAIN_MAX_MINE; i++)
			if (contain_in(mine, m, ppid[i]) &&
			    !contain_in(mine, m, pid[i])) {
				mine[m++] = pid[i];
				grew = 1;
				if (!zombie[i] && pid[i] != guard &&
				    kill(pid[i], sig) == 0)
					hit++;
			}
	} while (grew);
	return hit;
}

/* Signal every process left: the cgroup's, or cgrun's descendants. */
void
contain_signal(struct contain *c, int sig)
{
	char path[PATH_MAX + 16], buf[65536], *p, *end;
	int n = 0;

	if (c == NULL)
		return;
	if (c->dir[0] == '\0') {
		n = contain_descendants(c->guard, sig);
	} else {
		snprintf(path, sizeof(path), "%s/cgroup.procs", c->dir);
		if (contain_read(path, buf, sizeof(buf)) > 0)
			for (p = buf; *p != '\0'; p = end) {
				long v = strtol(p, &end, 10);

				if (end == p)
					break;
				n += v > 0 && kill((pid_t)v, sig) == 0;
			}
	}
	if (n > 0)
		log_info("left-over processes signalled count=%d sig=%d mode=%s",
		    n, sig, c->dir[0] ? "cgroup" : "subreaper");
}

/*
 * Kill every process left and wait (at most CONTAIN_WAIT_MS) until none
 * is alive: called when an attempt's workers are gone, before the next
 * attempt starts, and when the job ends.
 */
void
contain_kill(struct contain *c)
{
	int waited;

	if (c == NULL)
		return;
	if (c->dir[0] != '\0') {
		if (contain_cgroup_empty(c->dir) == -1)
			log_warn("cannot empty the job's cgroup %s within %dms",
			    c->dir, CONTAIN_WAIT_MS);
		return;
	}
	for (waited = 0; contain_descendants(c->guard, SIGKILL) > 0; waited +=
	    CONTAIN_POLL_MS) {
		if (waited >= CONTAIN_WAIT_MS) {
			log_warnx("left-over processes still alive %dms after "
			    "KILL", CONTAIN_WAIT_MS);
			return;
		}
		contain_nap(CONTAIN_POLL_MS);
	}
	contain_track(c, 0);	/* the groups are empty: the guard forgets */
}

/* Kill what is left, remove the cgroup, let the guard go. */
void
contain_free(struct contain *c)
{
	if (c == NULL)
		return;
	contain_kill(c);
	if (c->dir[0] != '\0' && rmdir(c->dir) == -1 && errno != ENOENT)
		log_warn("rmdir %s", c->dir);
	if (c->guard_fd >= 0)
		close(c->guard_fd);	/* the guard finds nothing left, exits */
	free(c);
}

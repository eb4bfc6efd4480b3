/*
 * logdir.c: the job's log directories (logdir.h): the base (--log-dir or
 * a temporary one), one directory per attempt and per local rank, the
 * log files in them, and the removal of empty temporary ones.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "logdir.h"

/* snprintf that reports truncation: 0, or -1 with ENAMETOOLONG. */
int
logdir_path(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

/* mkdir -p. */
static int
mkdirs(const char *path)
{
	char buf[PATH_MAX], *p;

	if (logdir_path(buf, sizeof(buf), "%s", path) == -1)
		return -1;
	for (p = buf + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) == -1 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(buf, 0755) == -1 && errno != EEXIST)
		return -1;
	return 0;
}

/* The log directory: log_dir (--log-dir), or a fresh temporary one. */
int
logdir_open(struct logdir *ld, const char *log_dir, char *err, size_t errlen)
{
	const char *tmp = getenv("TMPDIR");

	memset(ld, 0, sizeof(*ld));
	if (log_dir != NULL) {
		snprintf(ld->base, sizeof(ld->base), "%s", log_dir);
		if (mkdirs(ld->base) == 0)
			return 0;
		snprintf(err, errlen, "--log-dir %s: %s", log_dir,
		    strerror(errno));
		return -1;
	}
	snprintf(ld->base, sizeof(ld->base), "%s/cgrun_XXXXXX",
	    tmp && *tmp ? tmp : "/tmp");
	if (mkdtemp(ld->base) == NULL) {
		snprintf(err, errlen, "cannot create a log directory in %s: "
		    "%s", tmp && *tmp ? tmp : "/tmp", strerror(errno));
		return -1;
	}
	ld->tmp = 1;
	return 0;
}

/* Create BASE/RUN_ID/attempt_N. */
int
logdir_attempt(const struct logdir *ld, const char *run_id, int attempt,
    char *dir, size_t len, char *err, size_t errlen)
{
	if (logdir_path(dir, len, "%s/%s/attempt_%d", ld->base, run_id,
	    attempt) == -1) {
		snprintf(err, errlen, "log directory name too long");
		return -1;
	}
	if (mkdirs(dir) == -1) {
		snprintf(err, errlen, "log directory %.200s: %s", dir,
		    strerror(errno));
		return -1;
	}
	return 0;
}

/* Create ATTEMPT_DIR/LOCAL_RANK. */
int
logdir_rank(const char *attempt_dir, int lr, char *dir, size_t len)
{
	if (logdir_path(dir, len, "%s/%d", attempt_dir, lr) == -1)
		return -1;
	if (mkdir(dir, 0755) == -1 && errno != EEXIST)
		return -1;
	return 0;
}

/* Open a log file (truncated); -1 with errno. */
int
logdir_file(const char *dir, const char *name, char *path, size_t len)
{
	if (logdir_path(path, len, "%s/%s", dir, name) == -1)
		return -1;
	return open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
}

/* nftw callback: remove empty directories (others stay). */
static int
rmdir_empty(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	if (flag == FTW_DP)
		rmdir(path);
	return 0;
}

/* Remove a temporary base's empty directories; --log-dir is left alone. */
void
logdir_cleanup(const struct logdir *ld)
{
	if (ld->tmp)
		nftw(ld->base, rmdir_empty, 16, FTW_DEPTH | FTW_PHYS);
}

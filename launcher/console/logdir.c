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

#include "errbuf.h"
#include "log.h"
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

/*
 * Whether new directories can be made in base: creating (and removing)
 * one is the only test that holds for root, read-only file systems and
 * /proc alike.  0, or -1 with errno.
 */
static int
logdir_probe(const char *base)
{
	char probe[PATH_MAX];

	if (logdir_path(probe, sizeof(probe), "%s/.cgrun_probe_XXXXXX",
	    base) == -1 || mkdtemp(probe) == NULL)
		return -1;
	rmdir(probe);
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
		if (mkdirs(ld->base) == -1)
			errbuf_set(err, errlen, "--log-dir %s: cannot create "
			    "it: %s", log_dir, strerror(errno));
		else if (logdir_probe(ld->base) == -1)
			errbuf_set(err, errlen, "--log-dir %s: cannot create "
			    "directories in it: %s", log_dir, strerror(errno));
		else
			return 0;
		return -1;
	}
	snprintf(ld->base, sizeof(ld->base), "%s/cgrun_XXXXXX",
	    tmp && *tmp ? tmp : "/tmp");
	if (mkdtemp(ld->base) == NULL) {
		errbuf_set(err, errlen, "cannot create a log directory in %s: "
		    "%s", tmp && *tmp ? tmp : "/tmp", strerror(errno));
		ld->base[0] = '\0';
		return -1;
	}
	ld->tmp = 1;
	return 0;
}

/*
 * Create this run's directory BASE/RUN_ID_XXXXXX once (torchrun's
 * <run_id>_<random>/): a rerun with the same run id and --log-dir gets
 * its own.  A '/' in the run id becomes '_'.  0, or -1 with errno.
 */
static int
logdir_run(struct logdir *ld, const char *run_id)
{
	char *p;

	if (ld->run[0] != '\0')
		return 0;
	if (logdir_path(ld->run, sizeof(ld->run), "%s/%.200s_XXXXXX",
	    ld->base, run_id) == -1)
		goto fail;
	for (p = ld->run + strlen(ld->base) + 1; *p != '\0'; p++)
		if (*p == '/')
			*p = '_';
	if (mkdtemp(ld->run) != NULL)
		return 0;
fail:
	ld->run[0] = '\0';
	return -1;
}

/*
 * Create RUN/attempt_N, or RUN/attempt_N.K when a round of the same
 * restart count already has one (a membership change: K = 1, 2, ...).
 * 0, or -1 with errno.
 */
static int
logdir_attempt_dir(const struct logdir *ld, int attempt, char *dir,
    size_t len)
{
	int k;

	if (logdir_path(dir, len, "%s/attempt_%d", ld->run, attempt) == -1)
		return -1;
	for (k = 1; mkdir(dir, 0755) == -1; k++)
		if (errno != EEXIST || k > LOGDIR_ROUNDS_MAX ||
		    logdir_path(dir, len, "%s/attempt_%d.%d", ld->run,
		    attempt, k) == -1)
			return -1;
	return 0;
}

/* Create this attempt's directory (and the run's, the first time). */
int
logdir_attempt(struct logdir *ld, const char *run_id, int attempt,
    char *dir, size_t len, char *err, size_t errlen)
{
	if (logdir_run(ld, run_id) == -1) {
		errbuf_set(err, errlen, "log directory %.200s/%.200s_*: %s",
		    ld->base, run_id, strerror(errno));
		return -1;
	}
	if (logdir_attempt_dir(ld, attempt, dir, len) == -1) {
		errbuf_set(err, errlen, "log directory %.200s/attempt_%d: %s",
		    ld->run, attempt, strerror(errno));
		return -1;
	}
	log_info("log directory %s", dir);
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

/*
 * Remove a temporary base's empty directories; --log-dir is left alone.
 * Safe to call again, and after a failed logdir_open().
 */
void
logdir_cleanup(const struct logdir *ld)
{
	if (ld->tmp && ld->base[0] != '\0')
		nftw(ld->base, rmdir_empty, 16, FTW_DEPTH | FTW_PHYS);
}

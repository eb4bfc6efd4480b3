/*
 * logdir.h: where a job's log files go (DESIGN §3.6).  The base is
 * --log-dir (created if missing) or a fresh temporary directory
 * ($TMPDIR/cgrun_XXXXXX); under it every attempt has
 * BASE/RUN_ID/attempt_N/ (filtered_*.log) and every local rank
 * BASE/RUN_ID/attempt_N/LOCAL_RANK/ (stdout.log, stderr.log, error.json).
 * A temporary base keeps only the directories that hold a file after the
 * job: logdir_cleanup() removes the empty ones.
 */
#ifndef CGRUN_LOGDIR_H
#define CGRUN_LOGDIR_H

#include <limits.h>
#include <stddef.h>

struct logdir {
	char	base[PATH_MAX];
	int	tmp;		/* base is our temporary directory */
};

/* Create the base: log_dir (NULL: a temporary one); 0, or -1 with err. */
int	logdir_open(struct logdir *, const char *log_dir, char *err,
	    size_t errlen);
/* Create BASE/RUN_ID/attempt_N into dir; 0, or -1 with err set. */
int	logdir_attempt(const struct logdir *, const char *run_id, int attempt,
	    char *dir, size_t len, char *err, size_t errlen);
/* Create ATTEMPT_DIR/LOCAL_RANK into dir; 0, or -1 with errno. */
int	logdir_rank(const char *attempt_dir, int lr, char *dir, size_t len);
/* Open (truncate) DIR/NAME for writing, its path into path; fd or -1. */
int	logdir_file(const char *dir, const char *name, char *path, size_t len);
/* snprintf that reports truncation: 0, or -1 with ENAMETOOLONG. */
int	logdir_path(char *buf, size_t len, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));
/* After the job: remove a temporary base's empty directories. */
void	logdir_cleanup(const struct logdir *);

#endif

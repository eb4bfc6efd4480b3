/*
 * logdir.h: where a job's log files go (DESIGN §3.6).  The base is
 * --log-dir (created if missing, and checked at once: a directory can be
 * made in it) or a fresh temporary directory ($TMPDIR/cgrun_XXXXXX).  As
 * torchrun does, each run gets its own BASE/RUN_ID_XXXXXX (RUN below),
 * made at the first attempt, so a rerun never overwrites earlier logs;
 * every attempt has RUN/attempt_N/ (filtered_*.log), or
 * RUN/attempt_N.K/ for the K-th membership change with the same restart
 * count N, and every local rank RUN/attempt_N/LOCAL_RANK/ (stdout.log,
 * stderr.log, error.json).  A temporary base keeps only the directories
 * that hold a file after the job: logdir_cleanup() removes the empty ones.
 */
#ifndef CGRUN_LOGDIR_H
#define CGRUN_LOGDIR_H

#include <limits.h>
#include <stddef.h>

#define LOGDIR_ROUNDS_MAX 100000	/* attempt_N.K: most K tried */

struct logdir {
	char	base[PATH_MAX];
	char	run[PATH_MAX];	/* BASE/RUN_ID_XXXXXX; "" before attempt 0 */
	int	tmp;		/* base is our temporary directory */
};

/* Create and check the base: log_dir (NULL: a temporary one); 0, or -1
 * with err naming the path and the error. */
int	logdir_open(struct logdir *, const char *log_dir, char *err,
	    size_t errlen);
/* Create RUN/attempt_N[.K] (and RUN the first time) into dir; 0, or -1
 * with err set. */
int	logdir_attempt(struct logdir *, const char *run_id, int attempt,
	    char *dir, size_t len, char *err, size_t errlen);
/* Create ATTEMPT_DIR/LOCAL_RANK into dir; 0, or -1 with errno. */
int	logdir_rank(const char *attempt_dir, int lr, char *dir, size_t len);
/* Open (truncate) DIR/NAME for writing, its path into path; fd or -1. */
int	logdir_file(const char *dir, const char *name, char *path, size_t len);
/* snprintf that reports truncation: 0, or -1 with ENAMETOOLONG. */
int	logdir_path(char *buf, size_t len, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));
/* After the job (or a failed start): remove a temporary base's empty
 * directories; safe to call twice. */
void	logdir_cleanup(const struct logdir *);

#endif

/*
 * exitcodes.h: exit statuses of cgrun (documented in cgrun.1, EXIT STATUS).
 *
 * A job that fails after its restarts exits with the root-cause worker's
 * own status (1-255), or 128 + N when it was killed by signal N; a worker
 * that could not be executed reports 126 (found, not executable) or 127
 * (not found), as shells do.  The launcher's own failures use these:
 */
#ifndef CGRUN_EXITCODES_H
#define CGRUN_EXITCODES_H

#define CGRUN_EXIT_OK		0
#define CGRUN_EXIT_USAGE	2	/* bad option, value or combination */
#define CGRUN_EXIT_INTERNAL	70	/* internal error (EX_SOFTWARE) */
#define CGRUN_EXIT_CANTCREAT	73	/* log directory unusable (EX_CANTCREAT) */
#define CGRUN_EXIT_RDZV		75	/* rendezvous failed, closed or timed out */
#define CGRUN_EXIT_EXEC_NOPERM	126
#define CGRUN_EXIT_EXEC_NOTFOUND 127

#endif

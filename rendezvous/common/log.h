/*
 * log.h: OpenBSD-style logging shared by cgrun-rdzvd and cgrun.
 *
 * Not part of the public library (libcgrun never prints).  Levels are
 * checked before formatting; errno is preserved across every call.
 * Event lines are key=value: log_info("worker exited rank=%d status=%d", ...).
 */
#ifndef CGRUN_LOG_H
#define CGRUN_LOG_H

#include <stdarg.h>
#include <stddef.h>

enum log_level { LOG_LVL_WARN = 0, LOG_LVL_INFO = 1, LOG_LVL_DEBUG = 2 };

/* Program name used as the line prefix, and the most verbose level shown. */
void	log_init(const char *progname, int level);
void	log_setlevel(int level);
int	log_getlevel(void);
/* Route lines to a callback instead of stderr (tests, the journal). */
void	log_set_sink(void (*sink)(int level, const char *line, void *arg), void *arg);

void	log_warn(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_warnx(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_info(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_debug(const char *, ...) __attribute__((format(printf, 1, 2)));
void	fatal(const char *, ...) __attribute__((format(printf, 1, 2), noreturn));
void	fatalx(const char *, ...) __attribute__((format(printf, 1, 2), noreturn));

/* Escape untrusted bytes for a log line: printable ASCII kept, the rest as
 * \xNN, cut to fit dst (at most dstlen-1 chars + NUL, "..." when cut). */
const char *log_escape(char *dst, size_t dstlen, const void *src, size_t srclen);

#endif

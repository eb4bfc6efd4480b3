/*
 * log.c: leveled logging to stderr (or a sink), errno-preserving.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

static const char *log_prog = "cgrun";
static int log_level = LOG_LVL_WARN;
static void (*log_sink)(int, const char *, void *);
static void *log_sink_arg;

/* Set the program name shown before each line and the verbosity. */
void
log_init(const char *progname, int level)
{
	log_prog = progname;
	log_level = level;
}

/* Change the verbosity. */
void
log_setlevel(int level)
{
	log_level = level;
}

/* The current verbosity. */
int
log_getlevel(void)
{
	return log_level;
}

/* Send every line to sink instead of stderr; NULL restores stderr. */
void
log_set_sink(void (*sink)(int, const char *, void *), void *arg)
{
	log_sink = sink;
	log_sink_arg = arg;
}

/* Format and emit one line; append strerror(err) when err != 0. */
static void
log_vemit(int level, int err, const char *fmt, va_list ap)
{
	char line[2048];
	int n;

	n = vsnprintf(line, sizeof line, fmt, ap);
	if (n < 0)
		return;
	if (err != 0 && (size_t)n < sizeof line)
		snprintf(line + n, sizeof line - (size_t)n, ": %s", strerror(err));
	if (log_sink != NULL)
		log_sink(level, line, log_sink_arg);
	else
		fprintf(stderr, "%s: %s\n", log_prog, line);
}

#define LOG_BODY(level, err) do {				\
	int saved = errno;					\
	va_list ap;						\
	if ((level) > log_level)				\
		return;						\
	va_start(ap, fmt);					\
	log_vemit((level), (err), fmt, ap);			\
	va_end(ap);						\
	errno = saved;						\
} while (0)

/* Warning with the current errno's text. */
void
log_warn(const char *fmt, ...)
{
	int err = errno;

	LOG_BODY(LOG_LVL_WARN, err);
}

/* Warning without errno. */
void
log_warnx(const char *fmt, ...)
{
	LOG_BODY(LOG_LVL_WARN, 0);
}

/* Informational line (shown with -v). */
void
log_info(const char *fmt, ...)
{
	LOG_BODY(LOG_LVL_INFO, 0);
}

/* Debug line (shown with -vv). */
void
log_debug(const char *fmt, ...)
{
	LOG_BODY(LOG_LVL_DEBUG, 0);
}

/* Log with errno's text and exit 1: start-up failures and broken invariants. */
void
fatal(const char *fmt, ...)
{
	int err = errno;
	va_list ap;

	va_start(ap, fmt);
	log_vemit(LOG_LVL_WARN, err, fmt, ap);
	va_end(ap);
	exit(1);
}

/* Log and exit 1, without errno. */
void
fatalx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vemit(LOG_LVL_WARN, 0, fmt, ap);
	va_end(ap);
	exit(1);
}

/* Escape untrusted bytes so that a log line stays one printable line. */
const char *
log_escape(char *dst, size_t dstlen, const void *src, size_t srclen)
{
	const unsigned char *s = src;
	size_t i, o = 0;

	if (dstlen == 0)
		return dst;
	for (i = 0; i < srclen; i++) {
		if (o + 5 + 3 >= dstlen) {
			if (dstlen >= 4) {
				o = o < dstlen - 4 ? o : dstlen - 4;
				memcpy(dst + o, "...", 3);
				o += 3;
			}
			break;
		}
		if (s[i] >= 0x20 && s[i] < 0x7f && s[i] != '\\')
			dst[o++] = (char)s[i];
		else
			o += (size_t)snprintf(dst + o, dstlen - o, "\\x%02x", s[i]);
	}
	dst[o] = '\0';
	return dst;
}

/*
 * util.c: small helpers shared by libcgrun's sources.  Hidden symbols (the
 * library is built with -fvisibility=hidden and nothing here is marked
 * CGRUN_EXPORT); libcgrun-nccl compiles its own copy.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "cgrun/cgrun.h"
#include "util.h"

/* Format a message into err (CGRUN_ERRLEN bytes) if err is not NULL. */
void
cgrun_seterr(char *err, const char *fmt, ...)
{
	va_list ap;
	int saved = errno;

	if (err != NULL) {
		va_start(ap, fmt);
		vsnprintf(err, CGRUN_ERRLEN, fmt, ap);
		va_end(ap);
	}
	errno = saved;
}

/* Milliseconds on the monotonic clock. */
long long
cgrun_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

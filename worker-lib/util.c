/*
 * util.c: small helpers shared by libcgrun's sources.  Hidden symbols (the
 * library is built with -fvisibility=hidden and nothing here is marked
 * CGRUN_EXPORT); libcgrun-nccl compiles its own copy.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

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

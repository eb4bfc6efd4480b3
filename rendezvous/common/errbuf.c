/*
 * errbuf.c: formatting of an error message into a caller's buffer.
 */
#include <stdarg.h>
#include <stdio.h>

#include "errbuf.h"

/* Format an error into the caller's buffer, if there is one; -1. */
int
errbuf_set(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

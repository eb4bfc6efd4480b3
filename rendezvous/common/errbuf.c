/*
 * errbuf.c: an error message formatted into a caller's buffer (errbuf.h).
 */
#include <stdarg.h>
#include <stdio.h>

#include "errbuf.h"

/* Format an error into the caller's buffer, if there is one; -1. */
int
errbuf_vset(char *err, size_t errlen, const char *fmt, va_list ap)
{
	if (err != NULL && errlen > 0)
		vsnprintf(err, errlen, fmt, ap);
	return -1;
}

/* errbuf_vset with the arguments inline; -1. */
int
errbuf_set(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	errbuf_vset(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

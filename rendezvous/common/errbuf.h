/*
 * errbuf.h: THE way rendezvous/ and launcher/ give a person the text of
 * an error: a caller's buffer, char *err of size_t errlen, filled here
 * (docs/architecture.md, "Errors").  Internal.
 */
#ifndef CGRUN_ERRBUF_H
#define CGRUN_ERRBUF_H

#include <stdarg.h>
#include <stddef.h>

/* Format into err (errlen bytes) when err is not NULL; returns -1. */
int	errbuf_set(char *err, size_t errlen, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));
/* The same with a va_list, for functions that wrap it; returns -1. */
int	errbuf_vset(char *err, size_t errlen, const char *fmt, va_list ap)
	    __attribute__((format(printf, 3, 0)));

#endif /* CGRUN_ERRBUF_H */

/*
 * errbuf.h: formatting of an error message into a caller's buffer, shared
 * by the pure parsers of rendezvous/ (acl, auth, config).  Internal.
 */
#ifndef CGRUN_ERRBUF_H
#define CGRUN_ERRBUF_H

#include <stddef.h>

/* Format into err (errlen bytes) when err is not NULL; returns -1. */
int	errbuf_set(char *err, size_t errlen, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));

#endif /* CGRUN_ERRBUF_H */

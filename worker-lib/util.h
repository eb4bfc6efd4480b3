/*
 * util.h: small helpers shared by libcgrun's sources (and compiled into
 * libcgrun-nccl too).  Internal header: not installed, nothing exported.
 */
#ifndef CGRUN_UTIL_H
#define CGRUN_UTIL_H

void		cgrun_seterr(char *, const char *, ...)
		    __attribute__((format(printf, 2, 3)));

#endif /* CGRUN_UTIL_H */

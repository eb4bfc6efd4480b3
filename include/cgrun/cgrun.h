/*
 * cgrun.h: common definitions of libcgrun, the cgrun worker library.
 *
 * Every function returns 0 (or a handle) on success and -1 (or NULL) on
 * failure with errno set; functions that can explain a failure fill a
 * caller's buffer of at least CGRUN_ERRLEN bytes.  The library never exits,
 * aborts or prints.
 *
 * Every function checks its arguments: a NULL handle, a NULL pointer where
 * one is needed or a value out of its range fails with errno EINVAL (-1 or
 * NULL), never a crash.  Exceptions, each documented with its function:
 * the *_free functions accept NULL and do nothing; the rank accessors
 * return -1 (strings: NULL) with EINVAL for a NULL handle;
 * cgrun_store_timeout returns -1, cgrun_store_prefix NULL and
 * cgrun_store_errmsg a fixed sentence for a NULL handle.
 */
#ifndef CGRUN_CGRUN_H
#define CGRUN_CGRUN_H

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define CGRUN_EXPORT __attribute__((visibility("default")))
#else
#define CGRUN_EXPORT
#endif

#define CGRUN_VERSION_MAJOR 0
#define CGRUN_VERSION_MINOR 1
#define CGRUN_VERSION_PATCH 0

/* Size of the error-message buffers the library fills. */
#define CGRUN_ERRLEN 256

/* The library's version as "MAJOR.MINOR.PATCH". */
CGRUN_EXPORT const char *cgrun_version(void);

#ifdef __cplusplus
}
#endif

#endif /* CGRUN_CGRUN_H */

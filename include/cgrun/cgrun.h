/*
 * cgrun.h: common definitions of libcgrun, the cgrun worker library.
 *
 * Every function returns 0 (or a handle) on success and -1 (or NULL) on
 * failure with errno set; functions that can explain a failure fill a
 * caller's buffer of at least CGRUN_ERRLEN bytes.  The library never exits,
 * aborts or prints.
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

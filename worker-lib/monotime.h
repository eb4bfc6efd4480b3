/*
 * monotime.h: the monotonic clock, the one way the tree reads it (the
 * lowest layer that needs it: libcgrun's deadlines; the engine's and the
 * agent's timers and ages use it too).  Internal: not installed, nothing
 * exported (libcgrun-nccl compiles its own copy).  CLOCK_MONOTONIC never
 * jumps with the wall clock; it cannot fail on Linux.
 */
#ifndef CGRUN_MONOTIME_H
#define CGRUN_MONOTIME_H

#include <stdint.h>
#include <time.h>

/* Now, as a timespec, in milliseconds, in seconds. */
struct timespec monotime_ts(void);
int64_t	monotime_ms(void);
double	monotime_s(void);

/* Now plus ms: a deadline. */
struct timespec monotime_after(uint32_t ms);
/* a - b in milliseconds (negative when b is later), cut toward zero. */
int64_t	monotime_diff_ms(const struct timespec *a,
	    const struct timespec *b);
/* Milliseconds since t (negative: t is ahead). */
int64_t	monotime_since_ms(const struct timespec *t);
/* Whether the deadline t has come (to the nanosecond). */
int	monotime_passed(const struct timespec *t);

#endif /* CGRUN_MONOTIME_H */

/*
 * monotime.c: the monotonic clock (monotime.h): now in the forms callers
 * need, deadlines, and differences.
 */
#include <stdint.h>
#include <time.h>

#include "monotime.h"

#define NSEC_PER_SEC	1000000000L
#define NSEC_PER_MS	1000000L

/* Now on the monotonic clock. */
struct timespec
monotime_ts(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts;
}

/* Now in milliseconds. */
int64_t
monotime_ms(void)
{
	struct timespec ts = monotime_ts();

	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / NSEC_PER_MS;
}

/* Now in seconds. */
double
monotime_s(void)
{
	struct timespec ts = monotime_ts();

	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Now plus ms. */
struct timespec
monotime_after(uint32_t ms)
{
	struct timespec t = monotime_ts();

	t.tv_sec += ms / 1000;
	t.tv_nsec += (long)(ms % 1000) * NSEC_PER_MS;
	if (t.tv_nsec >= NSEC_PER_SEC) {
		t.tv_sec++;
		t.tv_nsec -= NSEC_PER_SEC;
	}
	return t;
}

/* a - b in milliseconds. */
int64_t
monotime_diff_ms(const struct timespec *a, const struct timespec *b)
{
	return (int64_t)(a->tv_sec - b->tv_sec) * 1000 +
	    (a->tv_nsec - b->tv_nsec) / NSEC_PER_MS;
}

/* Milliseconds since t. */
int64_t
monotime_since_ms(const struct timespec *t)
{
	struct timespec now = monotime_ts();

	return monotime_diff_ms(&now, t);
}

/* Whether now is at or past t. */
int
monotime_passed(const struct timespec *t)
{
	struct timespec now = monotime_ts();

	return now.tv_sec > t->tv_sec || (now.tv_sec == t->tv_sec &&
	    now.tv_nsec >= t->tv_nsec);
}

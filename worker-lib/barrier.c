/*
 * barrier.c: a reusable named barrier over the job store.
 *
 * Round numbering: each rank counts its own calls of a barrier in the
 * store (ADD on ".../seq/RANK"), so the n-th call of every rank lands in
 * round n without any local state, even in a process that was restarted
 * with the same store prefix.  In round n a rank appends "RANK," to
 * ".../n/arrived" (for the timeout message), then ADDs 1 to ".../n/count";
 * the rank that brings the count to world_size sets ".../n/done" and
 * deletes round n-1's keys (everyone has left round n-1, since everyone
 * has entered round n).  Every rank waits for ".../n/done".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "barrier_marker.h"
#include "cgrun/barrier.h"
#include "cgrun/store.h"
#include "monotime.h"
#include "util.h"

#define BARRIER_KEYLEN	(CGRUN_BARRIER_MAX_NAME + 96)
#define BARRIER_LISTLEN	96 	/* text of missing ranks in a message */

/* Key "cgrun/barrier/NAME/ROUND/WHAT" into buf (BARRIER_KEYLEN bytes). */
static void
barrier_key(char *buf, const char *name, long long round, const char *what)
{
	snprintf(buf, BARRIER_KEYLEN, "cgrun/barrier/%s/%lld/%s", name, round,
	    what);
}

/* Report a store failure of step `what` and return -1. */
static int
barrier_store_fail(struct cgrun_store *s, const char *name, const char *what,
    char *err)
{
	cgrun_seterr(err, "barrier \"%s\": %s: %s", name, what,
	    cgrun_store_errmsg(s));
	return -1;
}

/* Mark the ranks listed in "r,r,...," text in seen (barrier_marker.h). */
int
barrier_mark(const char *list, size_t len, char *seen, int world_size)
{
	int n = 0;
	long v = -1;
	size_t i;

	for (i = 0; i < len; i++) {
		if (list[i] >= '0' && list[i] <= '9')
			v = (v < 0 ? 0 : v * 10) + (list[i] - '0');
		else if (list[i] == ',' && v >= 0) {
			if (v < world_size && !seen[v]) {
				seen[v] = 1;
				n++;
			}
			v = -1;
		}
		if (v > world_size)
			v = world_size;	/* out of range: ignored */
	}
	return n;
}

/* Write the ranks not in seen as "1, 3, 5 (and N more)" into buf. */
void
barrier_missing(const char *seen, int world_size, char *buf, size_t len)
{
	size_t off = 0;
	int i, more = 0, n;

	buf[0] = '\0';
	for (i = 0; i < world_size; i++) {
		if (seen[i])
			continue;
		if (more > 0 || off + 40 > len) {	/* room for the tail */
			more++;
			continue;
		}
		n = snprintf(buf + off, len - off, "%s%d", off ? ", " : "", i);
		off += (size_t)n;
	}
	if (more > 0)
		snprintf(buf + off, len - off, " (and %d more)", more);
}

/* After a timeout: say which ranks never arrived in round `round`. */
static int
barrier_explain(struct cgrun_store *s, const char *name, long long round,
    int world_size, int timeout_ms, char *err)
{
	char key[BARRIER_KEYLEN], list[BARRIER_LISTLEN], *seen;
	void *val = NULL;
	size_t len = 0;
	int arrived;

	barrier_key(key, name, round, "arrived");
	if ((seen = calloc((size_t)world_size, 1)) == NULL ||
	    cgrun_store_get(s, key, &val, &len) == -1) {
		free(seen);
		cgrun_seterr(err, "barrier \"%s\": timed out after %d ms "
		    "(ranks that arrived unknown)", name, timeout_ms);
		errno = ETIMEDOUT;
		return -1;
	}
	arrived = barrier_mark(val, len, seen, world_size);
	barrier_missing(seen, world_size, list, sizeof(list));
	cgrun_seterr(err, "barrier \"%s\": timed out after %d ms: %d of %d "
	    "ranks arrived; never arrived: %s", name, timeout_ms, arrived,
	    world_size, list);
	free(val);
	free(seen);
	errno = ETIMEDOUT;
	return -1;
}

/* The last rank in: release round `round` and forget round - 1. */
static int
barrier_release(struct cgrun_store *s, const char *name, long long round,
    char *err)
{
	static const char *const what[] = { "count", "arrived", "done" };
	char key[BARRIER_KEYLEN];
	size_t i;

	barrier_key(key, name, round, "done");
	if (cgrun_store_set(s, key, "1", 1) == -1)
		return barrier_store_fail(s, name, "set done", err);
	for (i = 0; round > 1 && i < sizeof(what) / sizeof(what[0]); i++) {
		barrier_key(key, name, round - 1, what[i]);
		if (cgrun_store_delete(s, key) == -1)
			return barrier_store_fail(s, name, "delete", err);
	}
	return 0;
}

/* Enter round `round`: announce this rank and count it. */
static int
barrier_arrive(struct cgrun_store *s, const char *name, long long round,
    int rank, int world_size, char *err)
{
	char key[BARRIER_KEYLEN], me[16];
	int64_t count;

	barrier_key(key, name, round, "arrived");
	snprintf(me, sizeof(me), "%d,", rank);
	if (cgrun_store_append(s, key, me, strlen(me)) == -1)
		return barrier_store_fail(s, name, "append", err);
	barrier_key(key, name, round, "count");
	if (cgrun_store_add(s, key, 1, &count) == -1)
		return barrier_store_fail(s, name, "add", err);
	if (count > world_size) {
		cgrun_seterr(err, "barrier \"%s\": %lld ranks arrived but "
		    "world_size is %d (ranks disagree on world_size?)", name,
		    (long long)count, world_size);
		errno = EPROTO;
		return -1;
	}
	if (count == world_size)
		return barrier_release(s, name, round, err);
	return 0;
}

/* Wait until all world_size ranks have entered barrier `name`. */
CGRUN_EXPORT int
cgrun_barrier(struct cgrun_store *s, const char *name, int rank,
    int world_size, int timeout_ms, char *err)
{
	char key[BARRIER_KEYLEN];
	const char *keys[1];
	long long start = monotime_ms(), left;
	int64_t round;

	if (s == NULL || name == NULL || *name == '\0' ||
	    strlen(name) > CGRUN_BARRIER_MAX_NAME || strchr(name, '/') ||
	    world_size < 1 || rank < 0 || rank >= world_size) {
		cgrun_seterr(err, "barrier: bad arguments (name of 1..%d bytes "
		    "without '/', 0 <= rank < world_size)",
		    CGRUN_BARRIER_MAX_NAME);
		errno = EINVAL;
		return -1;
	}
	if (timeout_ms <= 0)
		timeout_ms = cgrun_store_timeout(s);
	snprintf(key, sizeof(key), "cgrun/barrier/%s/seq/%d", name, rank);
	if (cgrun_store_add(s, key, 1, &round) == -1)
		return barrier_store_fail(s, name, "add", err);
	if (barrier_arrive(s, name, round, rank, world_size, err) == -1)
		return -1;
	barrier_key(key, name, round, "done");
	keys[0] = key;
	left = timeout_ms - (monotime_ms() - start);
	if (cgrun_store_wait(s, keys, 1, left < 1 ? 1 : (int)left) == 0)
		return 0;
	if (errno == ETIMEDOUT)
		return barrier_explain(s, name, round, world_size, timeout_ms,
		    err);
	return barrier_store_fail(s, name, "wait", err);
}

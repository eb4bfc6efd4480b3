/*
 * fuzz_barrier.c: libFuzzer target for the barrier's "arrived" marker
 * (worker-lib/barrier.c through barrier_marker.h): text any store client
 * can write, parsed after a barrier timeout to name the missing ranks.
 * The first two bytes give world_size (1..4096), the third the size of
 * the message buffer; the rest is the marker.  Beyond crashes (seen and
 * the buffer are exact-size heap blocks, so ASan sees one byte too far),
 * it checks the contract: the ranks marked are exactly those a simple
 * reference parser finds, the count returned is their number, and the
 * missing-ranks text lists exactly the unmarked ranks in order, with
 * " (and N more)" accounting for the rest.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "barrier_marker.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Abort (a finding) unless cond holds. */
static void
fb_assert(int cond)
{
	if (!cond)
		abort();
}

/*
 * The reference: split at ',', keep the digits of each ended piece, mark
 * the number when it is below world_size.  Written differently from
 * barrier_mark on purpose (piece by piece, saturating at world_size).
 */
static void
fb_reference(const uint8_t *p, size_t len, char *seen, int world_size)
{
	size_t start = 0, i, k;
	long long v;
	int digits;

	for (i = 0; i < len; i++) {
		if (p[i] != ',')
			continue;
		v = 0;
		digits = 0;
		for (k = start; k < i; k++)
			if (p[k] >= '0' && p[k] <= '9') {
				digits = 1;
				if (v < world_size)
					v = v * 10 + (p[k] - '0');
			}
		if (digits && v < world_size)
			seen[v] = 1;
		start = i + 1;
	}
}

/* Parse the missing-ranks text back and compare it with seen. */
static void
fb_check_missing(const char *text, const char *seen, int world_size)
{
	const char *p = text;
	char *end;
	long r, listed = 0, more = 0, unseen = 0;
	int next = 0, used = -1;

	for (r = 0; r < world_size; r++)
		unseen += !seen[r];
	while (*p >= '0' && *p <= '9') {
		r = strtol(p, &end, 10);
		while (next < world_size && seen[next])
			next++;
		fb_assert(next < world_size && r == next);	/* in order */
		next++;
		listed++;
		p = end;
		if (strncmp(p, ", ", 2) != 0)
			break;
		p += 2;
	}
	if (*p != '\0') {
		fb_assert(sscanf(p, " (and %ld more)%n", &more, &used) == 1 &&
		    more > 0 && used == (int)strlen(p));
	}
	fb_assert(listed + more == unseen);
}

/* libFuzzer entry: world_size, buffer size, marker text. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *seen, *ref, *buf;
	size_t blen;
	int world_size, n, want, i;

	if (size < 3)
		return 0;
	world_size = 1 + (data[0] | (data[1] & 0x0f) << 8);
	blen = 48 + data[2];
	data += 3;
	size -= 3;
	seen = calloc((size_t)world_size, 1);
	ref = calloc((size_t)world_size, 1);
	buf = malloc(blen);
	fb_assert(seen != NULL && ref != NULL && buf != NULL);
	n = barrier_mark((const char *)data, size, seen, world_size);
	fb_reference(data, size, ref, world_size);
	for (i = 0, want = 0; i < world_size; i++) {
		fb_assert(seen[i] == ref[i]);
		want += ref[i];
	}
	fb_assert(n == want);
	/* marking the same text again finds nothing new */
	fb_assert(barrier_mark((const char *)data, size, seen, world_size) == 0);
	barrier_missing(seen, world_size, buf, blen);
	fb_assert(memchr(buf, '\0', blen) != NULL);
	fb_check_missing(buf, seen, world_size);
	free(seen);
	free(ref);
	free(buf);
	return 0;
}

/*
 * fuzz_stackdump.c: libFuzzer target for launcher/hang/stackdump.c
 * (the parser of Python fault handler, gdb, eu-stack, py-spy and /proc
 * stack dumps a hang's diagnosis reads from a worker's stderr or a tool)
 * and stackgroup.c (grouping ranks by stack, the summary).  Input: up to
 * four dumps separated by NUL bytes, one per rank; the first byte picks
 * the summary's room (1..256 bytes) and which rank is flagged.
 *
 * Checked beyond crashes and UB: every thread's frames lie inside the
 * frames kept and follow each other; every text field is NUL-terminated
 * within its maximum; the main thread is a thread or -1; a dump fed
 * line by line equals the same dump fed whole (stackdump_text); the
 * summary fits its room, and the culprit is -1 or one of the ranks.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stackdump.h"
#include "stackgroup.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define FS_RANKS	4

/* Abort (a finding) unless cond holds. */
static void
fs_assert(int cond)
{
	if (!cond)
		abort();
}

/* The invariants of one parsed dump. */
static void
fs_check(const struct stackdump *d)
{
	const struct stackdump_thread *t;
	int i, next = 0, m;

	fs_assert(d->nthreads >= 0 && d->nthreads <= STACKDUMP_THREADS_MAX);
	fs_assert(d->nframes >= 0 && d->nframes <= STACKDUMP_FRAMES_MAX);
	for (i = 0; i < d->nthreads; i++) {
		t = &d->threads[i];
		fs_assert(memchr(t->name, '\0', sizeof(t->name)) != NULL);
		fs_assert(t->first == next || t->nframes == 0);
		fs_assert(t->first + t->nframes <= d->nframes);
		next += t->nframes;
	}
	fs_assert(next == d->nframes);
	for (i = 0; i < d->nframes; i++) {
		fs_assert(memchr(d->frames[i].func, '\0',
		    STACKDUMP_FUNC_MAX) != NULL);
		fs_assert(memchr(d->frames[i].file, '\0',
		    STACKDUMP_FILE_MAX) != NULL);
		fs_assert(d->frames[i].line >= 0);
	}
	m = stackdump_main(d, 1234);
	fs_assert(m >= -1 && m < d->nthreads);
	fs_assert(d->nthreads > 0 || m == -1);
}

/* Parse one dump line by line, and whole, and compare. */
static void
fs_parse(struct stackdump *d, struct stackdump *whole, const uint8_t *p,
    size_t len)
{
	const uint8_t *end = p + len, *nl;

	stackdump_init(d);
	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		stackdump_line(d, (const char *)p, nl ? (size_t)(nl - p) :
		    (size_t)(end - p));
		p = nl ? nl + 1 : end;
	}
	stackdump_init(whole);
	stackdump_text(whole, (const char *)end - len, len);
	fs_check(d);
	fs_assert(d->nthreads == whole->nthreads && d->nframes ==
	    whole->nframes && d->fmt == whole->fmt && d->ended ==
	    whole->ended && d->cut_threads == whole->cut_threads);
	fs_assert(memcmp(d->threads, whole->threads, (size_t)d->nthreads *
	    sizeof(d->threads[0])) == 0);
	fs_assert(memcmp(d->frames, whole->frames, (size_t)d->nframes *
	    sizeof(d->frames[0])) == 0);
}

/* libFuzzer entry. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct stackdump d[FS_RANKS], whole;
	struct stackgroup_rank r[FS_RANKS];
	const uint8_t *p, *end, *z;
	char *sum;
	size_t room;
	int n = 0, c, i;

	if (size < 1)
		return 0;
	room = 1 + data[0];
	memset(r, 0, sizeof(r));
	memset(&whole, 0, sizeof(whole));
	for (p = data + 1, end = data + size; p <= end && n < FS_RANKS; n++) {
		z = memchr(p, '\0', (size_t)(end - p));
		memset(&d[n], 0, sizeof(d[n]));
		fs_parse(&d[n], &whole, p, z ? (size_t)(z - p) :
		    (size_t)(end - p));
		r[n].rank = 10 + n;
		r[n].pid = 1234;
		r[n].d = d[n].nthreads > 0 ? &d[n] : NULL;
		r[n].flagged = (data[0] & 3) == n && (data[0] & 4);
		p = z ? z + 1 : end + 1;
	}
	if ((sum = malloc(room)) == NULL)
		abort();
	c = stackgroup_summary(r, n, sum, room);
	fs_assert(strlen(sum) < room);
	fs_assert(c == -1 || (c >= 10 && c < 10 + n));
	for (i = 0; i < n; i++)
		fs_assert(stackgroup_same(&r[i], &r[i]));
	free(sum);
	return 0;
}

/*
 * stackgroup.c: grouping ranks by where their main thread is, and the
 * one-line summary of a hang (stackgroup.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stackdump.h"
#include "stackgroup.h"

/* An appending writer into a caller's buffer that notes truncation. */
struct sg_out {
	char	*buf;
	size_t	 len, n;
	int	 cut;
};

/* Append formatted text; once it does not fit, the end becomes "...". */
static void __attribute__((format(printf, 2, 3)))
sg_put(struct sg_out *o, const char *fmt, ...)
{
	va_list ap;
	int r;

	if (o->cut || o->len == 0)
		return;
	va_start(ap, fmt);
	r = vsnprintf(o->buf + o->n, o->len - o->n, fmt, ap);
	va_end(ap);
	if (r >= 0 && (size_t)r < o->len - o->n) {
		o->n += (size_t)r;
		return;
	}
	o->cut = 1;
	o->n = o->len - 1;
	if (o->len > 4)
		memcpy(o->buf + o->len - 4, "...", 4);
}

/* The main thread of a rank, or -1 when it has no stack. */
static int
sg_main(const struct stackgroup_rank *r)
{
	if (r->d == NULL || r->d->nthreads == 0)
		return -1;
	return stackdump_main(r->d, r->pid);
}

/* Same place: the same function names, innermost first. */
int
stackgroup_same(const struct stackgroup_rank *a,
    const struct stackgroup_rank *b)
{
	int ta = sg_main(a), tb = sg_main(b), i, n;

	if (ta < 0 || tb < 0)
		return ta < 0 && tb < 0;
	n = a->d->threads[ta].nframes;
	if (n != b->d->threads[tb].nframes)
		return 0;
	for (i = 0; i < n; i++)
		if (strcmp(stackdump_frame(a->d, ta, i)->func,
		    stackdump_frame(b->d, tb, i)->func) != 0)
			return 0;
	return 1;
}

/* The last component of a path. */
static const char *
sg_base(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/*
 * Whether a frame is the user's code rather than a library's: it has a
 * file, not Python's own or an installed package's, not relative (a C
 * library's "../sysdeps/..."), not "<frozen ...>".
 */
static int
sg_user(const struct stackdump_frame *f)
{
	return f->file[0] != '\0' && f->file[0] != '.' && f->file[0] != '<' &&
	    strstr(f->file, "/lib/python") == NULL &&
	    strstr(f->file, "-packages/") == NULL;
}

/* The frame whose file and line are shown: the first user frame, or 0. */
static int
sg_shown_at(const struct stackdump *d, int t, int n)
{
	int i;

	for (i = 0; i < n && i < STACKGROUP_SHOWN; i++)
		if (sg_user(stackdump_frame(d, t, i)))
			return i;
	return 0;
}

/* Where a rank is: its innermost frames, one with its file and line. */
static void
sg_where(struct sg_out *o, const struct stackgroup_rank *r)
{
	const struct stackdump_frame *f;
	int t = sg_main(r), i, n, at;

	if (t < 0) {
		sg_put(o, "no stack (%s)", r->missing ? r->missing :
		    "no dump arrived");
		return;
	}
	n = r->d->threads[t].nframes;
	if (n == 0)
		sg_put(o, "no Python frame");
	at = sg_shown_at(r->d, t, n);
	for (i = 0; i < n && i < STACKGROUP_SHOWN; i++) {
		f = stackdump_frame(r->d, t, i);
		sg_put(o, "%s%s", i ? " <- " : "", f->func[0] ? f->func : "??");
		if (i == at && f->file[0] != '\0' && f->line > 0)
			sg_put(o, " (%s:%d)", sg_base(f->file), f->line);
		else if (i == at && f->file[0] != '\0')
			sg_put(o, " (%s)", sg_base(f->file));
	}
	if (n > STACKGROUP_SHOWN || r->d->threads[t].cut)
		sg_put(o, " <- ...");
}

/* One rank's place into buf. */
void
stackgroup_where(const struct stackgroup_rank *r, char *buf, size_t len)
{
	struct sg_out o = { buf, len, 0, 0 };

	if (len > 0)
		buf[0] = '\0';
	sg_where(&o, r);
}

/* "rank 2" or "ranks 0,1,3" (runs as "0-3") for the members of group g. */
static void
sg_ranks(struct sg_out *o, const struct stackgroup_rank *r, const int *grp,
    int n, int g, int size)
{
	int i, j, first = 1;

	sg_put(o, size == 1 ? "rank " : "ranks ");
	for (i = 0; i < n; i = j) {
		if (grp[i] != g) {
			j = i + 1;
			continue;
		}
		for (j = i + 1; j < n && grp[j] == g && r[j].rank ==
		    r[j - 1].rank + 1; j++)
			;
		sg_put(o, "%s%d", first ? "" : ",", r[i].rank);
		if (j - i > 2)
			sg_put(o, "-%d", r[j - 1].rank);
		else if (j - i == 2)
			sg_put(o, ",%d", r[i + 1].rank);
		first = 0;
	}
}

/* Assign groups: grp[i] is the index of the first rank in i's place. */
static void
sg_assign(const struct stackgroup_rank *r, int n, int *grp, int *size)
{
	int i, j;

	for (i = 0; i < n; i++) {
		size[i] = 0;
		for (j = 0; j < i && !stackgroup_same(&r[j], &r[i]); j++)
			;
		grp[i] = j < i ? grp[j] : i;
		size[grp[i]]++;
	}
}

/*
 * Whether a frame waits for other ranks: torch's collectives and autograd
 * (DDP's all-reduce runs inside backward), gloo, c10d, NCCL, libcgrun's
 * barrier and store waits.
 */
static int
sg_collective_frame(const struct stackdump_frame *f)
{
	static const char *const files[] = { "/torch/distributed/",
	    "/torch/autograd/", "/torch/nn/parallel/" };
	static const char *const funcs[] = { "gloo::", "c10d::", "nccl",
	    "cgrun_barrier", "cgrun_store_wait" };
	size_t i;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if (strstr(f->file, files[i]) != NULL)
			return 1;
	for (i = 0; i < sizeof(funcs) / sizeof(funcs[0]); i++)
		if (strncmp(f->func, funcs[i], strlen(funcs[i])) == 0)
			return 1;
	return 0;
}

/* Whether a rank's main thread waits in a collective. */
int
stackgroup_in_collective(const struct stackgroup_rank *r)
{
	int t = sg_main(r), i;

	for (i = 0; t >= 0 && i < r->d->threads[t].nframes; i++)
		if (sg_collective_frame(stackdump_frame(r->d, t, i)))
			return 1;
	return 0;
}

/* The one rank with a stack outside a collective while others wait. */
static int
sg_outside(const struct stackgroup_rank *r, int n)
{
	int i, nin = 0, nout = 0, who = -1;

	for (i = 0; i < n; i++) {
		if (sg_main(&r[i]) < 0)
			continue;
		if (stackgroup_in_collective(&r[i]))
			nin++;
		else
			nout++, who = r[i].rank;
	}
	return nin > 0 && nout == 1 ? who : -1;
}

/* The odd rank out: the one rank of the one smallest group, or -1. */
static int
sg_odd(const struct stackgroup_rank *r, int n, const int *grp,
    const int *size)
{
	int i, min = n + 1, max = 0, nmin = 0, who = -1;

	for (i = 0; i < n; i++) {
		if (grp[i] != i)
			continue;
		if (size[i] > max)
			max = size[i];
		if (size[i] < min)
			min = size[i], nmin = 0;
		if (size[i] == min)
			nmin++, who = i;
	}
	return min == 1 && nmin == 1 && max > 1 ? r[who].rank : -1;
}

/* The summary, largest group first; the culprit. */
int
stackgroup_summary(const struct stackgroup_rank *r, int n, char *buf,
    size_t len)
{
	struct sg_out o = { buf, len, 0, 0 };
	int *grp, *size, i, best, done = 0, culprit = -1;

	if (len > 0)
		buf[0] = '\0';
	if (n <= 0 || (grp = calloc((size_t)n * 2, sizeof(int))) == NULL)
		return -1;
	size = grp + n;
	sg_assign(r, n, grp, size);
	if ((culprit = sg_outside(r, n)) < 0)
		culprit = sg_odd(r, n, grp, size);
	for (i = 0; i < n && culprit < 0; i++)
		if (r[i].flagged)
			culprit = r[i].rank;
	while (done < n) {
		for (best = -1, i = 0; i < n; i++)
			if (grp[i] == i && size[i] > 0 && (best < 0 ||
			    size[i] > size[best]))
				best = i;
		sg_put(&o, "%s", done ? "; " : "");
		sg_ranks(&o, r, grp, n, best, size[best]);
		sg_put(&o, "%s", sg_main(&r[best]) < 0 ? ": " : " in ");
		sg_where(&o, &r[best]);
		done += size[best];
		size[best] = 0;
	}
	free(grp);
	return culprit;
}

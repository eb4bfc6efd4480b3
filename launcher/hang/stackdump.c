/*
 * stackdump.c: the stack dump parser (stackdump.h).  Pure and bounded:
 * each line is looked at through a length (never past STACKDUMP_LINE_MAX),
 * nothing is allocated, every copy is cut to its field's maximum.
 */
#include <stdlib.h>
#include <string.h>

#include "stackdump.h"

/* A cursor over one line. */
struct sd_cur {
	const char	*p, *end;
};

/* An empty dump. */
void
stackdump_init(struct stackdump *d)
{
	d->fmt = STACKDUMP_NONE;
	d->nthreads = d->nframes = d->cut_threads = d->ended = 0;
}

/* Whether the cursor starts with s (and then skip it). */
static int
sd_eat(struct sd_cur *c, const char *s)
{
	size_t n = strlen(s);

	if ((size_t)(c->end - c->p) < n || memcmp(c->p, s, n) != 0)
		return 0;
	c->p += n;
	return 1;
}

/* Whether the line ends with s. */
static int
sd_ends(const struct sd_cur *c, const char *s)
{
	size_t n = strlen(s);

	return (size_t)(c->end - c->p) >= n &&
	    memcmp(c->end - n, s, n) == 0;
}

/* Copy [p, end) into dst of size len, cut; NUL-terminated. */
static void
sd_copy(char *dst, size_t len, const char *p, const char *end)
{
	size_t n = (size_t)(end - p);

	if (n >= len)
		n = len - 1;
	memcpy(dst, p, n);
	dst[n] = '\0';
}

/* A decimal number at the cursor (skipped), or -1 when none. */
static long
sd_num(struct sd_cur *c)
{
	long v = 0;
	int digits = 0;

	while (c->p < c->end && *c->p >= '0' && *c->p <= '9' && digits < 9) {
		v = v * 10 + (*c->p++ - '0');
		digits++;
	}
	while (c->p < c->end && *c->p >= '0' && *c->p <= '9')
		c->p++;
	return digits ? v : -1;
}

/* The last occurrence of s in the line, or NULL. */
static const char *
sd_rfind(const struct sd_cur *c, const char *s)
{
	size_t n = strlen(s);
	const char *q;

	for (q = c->end - n; q >= c->p; q--)
		if (memcmp(q, s, n) == 0)
			return q;
	return NULL;
}

/* The first occurrence of s in the line, or NULL. */
static const char *
sd_find(const struct sd_cur *c, const char *s)
{
	return memmem(c->p, (size_t)(c->end - c->p), s, strlen(s));
}

/* Start a new thread named [p, end); NULL when the maximum was reached. */
static struct stackdump_thread *
sd_thread(struct stackdump *d, enum stackdump_fmt fmt, const char *p,
    const char *end)
{
	struct stackdump_thread *t;

	d->fmt = fmt;
	if (d->nthreads == STACKDUMP_THREADS_MAX) {
		d->cut_threads++;
		return NULL;
	}
	t = &d->threads[d->nthreads++];
	memset(t, 0, sizeof(*t));
	sd_copy(t->name, sizeof(t->name), p, end);
	t->first = d->nframes;
	return t;
}

/* A new frame of the last thread; NULL when there is none or no room. */
static struct stackdump_frame *
sd_frame(struct stackdump *d)
{
	struct stackdump_thread *t;
	struct stackdump_frame *f;

	if (d->nthreads == 0)
		return NULL;
	t = &d->threads[d->nthreads - 1];
	if (d->nframes == STACKDUMP_FRAMES_MAX ||
	    t->first + t->nframes != d->nframes) {
		t->cut++;
		return NULL;
	}
	f = &d->frames[d->nframes++];
	t->nframes++;
	memset(f, 0, sizeof(*f));
	return f;
}

/* The id in "Thread 0x7f.. (most recent call first):": up to the space. */
static const char *
sd_word_end(const char *p, const char *end)
{
	while (p < end && *p != ' ' && *p != ':')
		p++;
	return p;
}

/* Fault handler headers: "Thread 0x..", "Current thread 0x..", "Stack". */
static int
sd_fh_thread(struct stackdump *d, struct sd_cur c)
{
	struct stackdump_thread *t;
	int current = 0, single = 0;

	if (!sd_ends(&c, "(most recent call first):"))
		return 0;
	if (sd_eat(&c, "Current thread "))
		current = 1;
	else if (sd_eat(&c, "Stack "))
		single = 1;
	else if (!sd_eat(&c, "Thread "))
		return 0;
	t = sd_thread(d, STACKDUMP_FAULTHANDLER, c.p, single ? c.p :
	    sd_word_end(c.p, c.end));
	if (t != NULL)
		t->current = current || single;
	return 1;
}

/* A fault handler frame: '  File "x.py", line 12 in f'. */
static int
sd_fh_frame(struct stackdump *d, struct sd_cur c)
{
	struct stackdump_frame *f;
	const char *q, *file;
	struct sd_cur n;

	if (!sd_eat(&c, "  File \"") || (q = sd_rfind(&c, "\", line ")) ==
	    NULL)
		return 0;
	file = c.p;
	n.p = q + strlen("\", line ");
	n.end = c.end;
	if ((f = sd_frame(d)) == NULL)
		return 1;
	sd_copy(f->file, sizeof(f->file), file, q);
	f->line = (int)sd_num(&n);
	if (f->line < 0)
		f->line = 0;
	while (n.p < n.end && *n.p != ' ')
		n.p++;
	if (sd_eat(&n, " in ") && !(n.end - n.p == 3 && !memcmp(n.p, "???",
	    3)))
		sd_copy(f->func, sizeof(f->func), n.p, n.end);
	return 1;
}

/* The other fault handler lines: error, "<no Python frame>", "...", end. */
static int
sd_fh_other(struct stackdump *d, struct sd_cur c)
{
	if (sd_eat(&c, "Fatal Python error: "))
		return d->fmt = STACKDUMP_FAULTHANDLER, 1;
	if (d->fmt != STACKDUMP_FAULTHANDLER)
		return 0;
	if (sd_eat(&c, "Extension modules: "))
		return d->ended = 1;
	if (sd_eat(&c, "  <no Python frame>") || (c.end - c.p == 5 &&
	    sd_eat(&c, "  ...")))
		return 1;
	return 0;
}

/* gdb: "Thread 2 (Thread 0x7f.. (LWP 123) "x"):" or "Thread 1 (LWP 9):". */
static int
sd_gdb_thread(struct stackdump *d, struct sd_cur c)
{
	struct stackdump_thread *t;
	const char *num, *lwp;
	struct sd_cur n;

	if (!sd_eat(&c, "Thread ") || !sd_ends(&c, "):") ||
	    (lwp = sd_find(&c, "(LWP ")) == NULL)
		return 0;
	num = c.p;
	if (sd_num(&c) < 0 || !sd_eat(&c, " ("))
		return 0;
	n.p = lwp + 5;
	n.end = c.end;
	if ((t = sd_thread(d, STACKDUMP_GDB, num, sd_word_end(num, c.end)))
	    != NULL)
		t->tid = sd_num(&n);
	return 1;
}

/* eu-stack: "TID 123:". */
static int
sd_eu_thread(struct stackdump *d, struct sd_cur c)
{
	struct stackdump_thread *t;
	const char *num;
	long tid;

	if (!sd_eat(&c, "TID "))
		return 0;
	num = c.p;
	if ((tid = sd_num(&c)) < 0 || !sd_eat(&c, ":") || c.p != c.end)
		return 0;
	if ((t = sd_thread(d, d->fmt == STACKDUMP_PROC ? STACKDUMP_PROC :
	    STACKDUMP_EUSTACK, num, c.p - 1)) != NULL)
		t->tid = tid;
	return 1;
}

/* Skip "0x1234" and the spaces after it. */
static void
sd_skip_addr(struct sd_cur *c)
{
	if (!sd_eat(c, "0x"))
		return;
	while (c->p < c->end && strchr("0123456789abcdefABCDEF", *c->p) &&
	    *c->p != '\0')
		c->p++;
	while (c->p < c->end && *c->p == ' ')
		c->p++;
}

/*
 * The function of a gdb frame: [p, end) up to " (" (its arguments); a
 * C++ signature without debug info ("f(int) ()") is cut at its '('.
 */
static void
sd_gdb_func(struct stackdump_frame *f, struct sd_cur c)
{
	const char *q = sd_find(&c, " (");
	const char *e = q != NULL ? q : c.end, *paren;

	paren = memchr(c.p, '(', (size_t)(e - c.p));
	if (paren != NULL && paren > c.p)
		e = paren;
	if (!(e - c.p == 2 && c.p[0] == '?' && c.p[1] == '?'))
		sd_copy(f->func, sizeof(f->func), c.p, e);
}

/* " at x.c:3" at the end of a gdb frame: the file and line. */
static void
sd_gdb_where(struct stackdump_frame *f, struct sd_cur c)
{
	const char *at = sd_rfind(&c, " at "), *colon;
	struct sd_cur n;

	if (at == NULL)
		return;
	c.p = at + 4;
	if ((colon = sd_rfind(&c, ":")) == NULL)
		return;
	n.p = colon + 1;
	n.end = c.end;
	sd_copy(f->file, sizeof(f->file), c.p, colon);
	f->line = (int)sd_num(&n);
	if (f->line < 0 || n.p != n.end)
		f->line = 0;
}

/* gdb or eu-stack frame: "#0  0x.. in f (a=1) at x.c:3", "#1  0x.. f". */
static int
sd_hash_frame(struct stackdump *d, struct sd_cur c)
{
	struct stackdump_frame *f;
	const char *sp;

	if (d->fmt != STACKDUMP_GDB && d->fmt != STACKDUMP_EUSTACK &&
	    d->fmt != STACKDUMP_PROC)
		return 0;
	if (!sd_eat(&c, "#") || sd_num(&c) < 0 || !sd_eat(&c, " "))
		return 0;
	while (c.p < c.end && *c.p == ' ')
		c.p++;
	if ((f = sd_frame(d)) == NULL)
		return 1;
	sd_skip_addr(&c);
	if (d->fmt == STACKDUMP_GDB) {
		sd_eat(&c, "in ");
		sd_gdb_func(f, c);
		sd_gdb_where(f, c);
		return 1;
	}
	sp = memchr(c.p, ' ', (size_t)(c.end - c.p));
	if (!(c.end - c.p == 2 && c.p[0] == '?' && c.p[1] == '?'))
		sd_copy(f->func, sizeof(f->func), c.p, sp ? sp : c.end);
	return 1;
}

/* py-spy: 'Thread 123 (idle): "MainThread"' (no "LWP", no "call first"). */
static int
sd_pyspy_thread(struct stackdump *d, struct sd_cur c)
{
	const char *id;

	if (!sd_eat(&c, "Thread ") || sd_find(&c, "): ") == NULL)
		return 0;
	id = c.p;
	sd_thread(d, STACKDUMP_PYSPY, id, sd_word_end(id, c.end));
	return 1;
}

/* py-spy frame: "    f (x.py:12)". */
static int
sd_pyspy_frame(struct stackdump *d, struct sd_cur c)
{
	struct stackdump_frame *f;
	const char *open, *colon;
	struct sd_cur n;

	if (d->fmt != STACKDUMP_PYSPY || !sd_eat(&c, "    ") ||
	    !sd_ends(&c, ")") || (open = sd_rfind(&c, " (")) == NULL)
		return 0;
	if ((f = sd_frame(d)) == NULL)
		return 1;
	sd_copy(f->func, sizeof(f->func), c.p, open);
	n.p = open + 2;
	n.end = c.end - 1;
	if ((colon = sd_rfind(&n, ":")) == NULL)
		return 1;
	sd_copy(f->file, sizeof(f->file), n.p, colon);
	n.p = colon + 1;
	f->line = (int)sd_num(&n);
	if (f->line < 0)
		f->line = 0;
	return 1;
}

/* Feed one line. */
int
stackdump_line(struct stackdump *d, const char *line, size_t len)
{
	struct sd_cur c;

	if (len > STACKDUMP_LINE_MAX)
		len = STACKDUMP_LINE_MAX;
	while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
		len--;
	c.p = line;
	c.end = line + len;
	if (len == 0)
		return d->fmt != STACKDUMP_NONE;
	return sd_fh_thread(d, c) || sd_fh_frame(d, c) || sd_fh_other(d, c) ||
	    sd_gdb_thread(d, c) || sd_eu_thread(d, c) || sd_hash_frame(d, c) ||
	    sd_pyspy_thread(d, c) || sd_pyspy_frame(d, c);
}

/* Feed a whole text. */
int
stackdump_text(struct stackdump *d, const char *text, size_t len)
{
	const char *p = text, *end = text + len, *nl;
	int n = 0;

	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		n += stackdump_line(d, p, nl ? (size_t)(nl - p) : (size_t)(end
		    - p));
		p = nl ? nl + 1 : end;
	}
	return n;
}

/* Frame i of thread t (0 = innermost), or NULL. */
const struct stackdump_frame *
stackdump_frame(const struct stackdump *d, int t, int i)
{
	if (t < 0 || t >= d->nthreads || i < 0 ||
	    i >= d->threads[t].nframes)
		return NULL;
	return &d->frames[d->threads[t].first + i];
}

/* Whether thread t's outermost frame is a Python module's top level. */
static int
sd_is_module(const struct stackdump *d, int t)
{
	const struct stackdump_thread *th = &d->threads[t];

	return th->nframes > 0 && th->cut == 0 &&
	    strcmp(d->frames[th->first + th->nframes - 1].func, "<module>")
	    == 0;
}

/* The main thread of the rank. */
int
stackdump_main(const struct stackdump *d, long pid)
{
	int i, last = -1, cur = -1;

	for (i = 0; i < d->nthreads; i++)
		if (sd_is_module(d, i))
			return i;
	for (i = 0; i < d->nthreads; i++) {
		if (pid > 0 && d->threads[i].tid == pid)
			return i;
		if (d->threads[i].current)
			cur = i;
		if (d->threads[i].nframes > 0)
			last = i;
	}
	return cur >= 0 ? cur : last;
}

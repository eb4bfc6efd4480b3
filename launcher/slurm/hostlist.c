/*
 * hostlist.c: Slurm hostlist expressions (syntax and limits in hostlist.h).
 *
 * Nothing is expanded ahead: an expression is scanned once (its bracket
 * groups located and counted, every limit checked), and host k of it is
 * computed on demand by reading k in mixed radix, the last group fastest,
 * as Slurm orders "r[1-2]n[1-2]" (r1n1 r1n2 r2n1 r2n2).  Counts are checked
 * against HOSTLIST_HOSTS_MAX as they are added or multiplied, so no count
 * from the input can overflow or size anything.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "errbuf.h"
#include "hostlist.h"

#define HL_GROUP_CHARS	"0123456789-,"

/* Format err and return HOSTLIST_ERROR. */
static enum hostlist_result __attribute__((format(printf, 3, 4)))
hl_error(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	errbuf_vset(err, errlen, fmt, ap);
	va_end(ap);
	return HOSTLIST_ERROR;
}

/* A separator between expressions (outside brackets), as Slurm's. */
static int
hl_is_sep(char c)
{
	return c == ',' || c == ' ' || c == '\t' || c == '\n';
}

/* A byte that may appear in a host name outside brackets. */
static int
hl_is_name(char c)
{
	return c > 0x20 && c < 0x7f && c != '[' && c != ']' && c != ',';
}

/* Decimal digits needed to print v. */
static int
hl_ndigits(unsigned long v)
{
	int n = 1;

	while (v >= 10) {
		v /= 10;
		n++;
	}
	return n;
}

/*
 * Read one number of a bracket group at s[*i] (the group ends before
 * close): 1 to HOSTLIST_DIGITS_MAX digits.  Its value in *v, the digits
 * written (leading zeros included) in *width.
 */
static enum hostlist_result
hl_number(const char *s, size_t *i, size_t close, unsigned long *v,
    int *width, char *err, size_t errlen)
{
	size_t at = *i;

	*v = 0;
	*width = 0;
	while (*i < close && s[*i] >= '0' && s[*i] <= '9') {
		if (++*width > HOSTLIST_DIGITS_MAX)
			return hl_error(err, errlen, "hostlist: a number longer "
			    "than %d digits at offset %zu", HOSTLIST_DIGITS_MAX,
			    at);
		*v = *v * 10 + (unsigned long)(s[(*i)++] - '0');
	}
	if (*width == 0)
		return hl_error(err, errlen, "hostlist: expected a number at "
		    "offset %zu", at);
	return HOSTLIST_OK;
}

/*
 * Read the item "LO" or "LO-HI" of a bracket group at s[*i], and the comma
 * after it if any.  Width is LO's digit count (Slurm's zero padding).
 */
static enum hostlist_result
hl_item(const char *s, size_t *i, size_t close, unsigned long *lo,
    unsigned long *hi, int *width, char *err, size_t errlen)
{
	size_t at = *i;
	int hw;

	if (hl_number(s, i, close, lo, width, err, errlen) != HOSTLIST_OK)
		return HOSTLIST_ERROR;
	*hi = *lo;
	if (*i < close && s[*i] == '-') {
		(*i)++;
		if (hl_number(s, i, close, hi, &hw, err, errlen) != HOSTLIST_OK)
			return HOSTLIST_ERROR;
		if (*hi < *lo)
			return hl_error(err, errlen, "hostlist: range %lu-%lu "
			    "runs backwards at offset %zu", *lo, *hi, at);
	}
	if (*i < close && s[*i] != ',')
		return hl_error(err, errlen, "hostlist: unexpected '%c' in "
		    "brackets at offset %zu", s[*i], *i);
	if (*i < close && ++*i == close)
		return hl_error(err, errlen, "hostlist: empty item before ']' "
		    "at offset %zu", close);
	return HOSTLIST_OK;
}

/*
 * Count the hosts of the bracket group s(open, close) into g->count and the
 * widest number it prints into *digits; ERROR past HOSTLIST_HOSTS_MAX.
 */
static enum hostlist_result
hl_group_scan(const char *s, struct hostlist_group *g, int *digits,
    char *err, size_t errlen)
{
	unsigned long lo, hi;
	size_t i = g->open + 1;
	int width, d;

	g->count = 0;
	*digits = 0;
	if (i == g->close)
		return hl_error(err, errlen, "hostlist: empty brackets at "
		    "offset %zu", g->open);
	while (i < g->close) {
		if (hl_item(s, &i, g->close, &lo, &hi, &width, err,
		    errlen) != HOSTLIST_OK)
			return HOSTLIST_ERROR;
		if (hi - lo >= HOSTLIST_HOSTS_MAX - g->count)
			return hl_error(err, errlen, "hostlist: more than %d "
			    "hosts in the brackets at offset %zu",
			    HOSTLIST_HOSTS_MAX, g->open);
		g->count += hi - lo + 1;
		d = hl_ndigits(hi) > width ? hl_ndigits(hi) : width;
		if (d > *digits)
			*digits = d;
	}
	return HOSTLIST_OK;
}

/* Value number idx of a scanned group, and the width to print it with. */
static void
hl_group_value(const char *s, const struct hostlist_group *g, size_t idx,
    unsigned long *v, int *width)
{
	unsigned long lo = 0, hi = 0;
	size_t i = g->open + 1;
	char err[8];

	while (i < g->close) {
		(void)hl_item(s, &i, g->close, &lo, &hi, width, err,
		    sizeof(err));
		if (idx <= hi - lo)
			break;
		idx -= hi - lo + 1;
	}
	*v = lo + idx;
}

/* Find the ']' closing the group opened at s[open]; ERROR if none. */
static enum hostlist_result
hl_group_close(const char *s, size_t len, size_t open, size_t *close,
    char *err, size_t errlen)
{
	size_t j;

	for (j = open + 1; j < len && s[j] != ']'; j++)
		if (strchr(HL_GROUP_CHARS, s[j]) == NULL || s[j] == '\0')
			return hl_error(err, errlen, "hostlist: unexpected byte "
			    "0x%02x in brackets at offset %zu",
			    (unsigned char)s[j], j);
	if (j == len)
		return hl_error(err, errlen, "hostlist: '[' at offset %zu is "
		    "not closed", open);
	*close = j;
	return HOSTLIST_OK;
}

/* Add the group opened at s[i] to e; *i moves past its ']'. */
static enum hostlist_result
hl_expr_group(const char *s, size_t len, size_t *i, struct hostlist_expr *e,
    size_t *namelen, char *err, size_t errlen)
{
	struct hostlist_group *g;
	int digits;

	if (e->ngroups == HOSTLIST_GROUPS_MAX)
		return hl_error(err, errlen, "hostlist: more than %d bracket "
		    "groups in one name at offset %zu", HOSTLIST_GROUPS_MAX, *i);
	g = &e->group[e->ngroups++];
	g->open = *i;
	if (hl_group_close(s, len, *i, &g->close, err, errlen) != HOSTLIST_OK ||
	    hl_group_scan(s, g, &digits, err, errlen) != HOSTLIST_OK)
		return HOSTLIST_ERROR;
	if (e->count > HOSTLIST_HOSTS_MAX / g->count)
		return hl_error(err, errlen, "hostlist: the name at offset %zu "
		    "expands to more than %d hosts", e->start,
		    HOSTLIST_HOSTS_MAX);
	e->count *= g->count;
	*namelen += (size_t)digits;
	*i = g->close + 1;
	return HOSTLIST_OK;
}

/*
 * Scan the expression that starts at or after s[pos] (separators skipped)
 * into e.  Returns 1 with e filled, 0 at the end of the list, or -1 with err.
 */
static int
hl_expr_scan(const char *s, size_t len, size_t pos, struct hostlist_expr *e,
    char *err, size_t errlen)
{
	size_t i, namelen = 0;

	if (len > HOSTLIST_INPUT_MAX)
		return hl_error(err, errlen, "hostlist: longer than %d bytes",
		    HOSTLIST_INPUT_MAX);
	while (pos < len && hl_is_sep(s[pos]))
		pos++;
	if (pos == len)
		return 0;
	memset(e, 0, sizeof(*e));
	e->start = i = pos;
	e->count = 1;
	while (i < len && !hl_is_sep(s[i])) {
		if (s[i] == '[') {
			if (hl_expr_group(s, len, &i, e, &namelen, err,
			    errlen) != HOSTLIST_OK)
				return -1;
			continue;
		}
		if (!hl_is_name(s[i]))
			return hl_error(err, errlen, "hostlist: unexpected byte "
			    "0x%02x at offset %zu", (unsigned char)s[i], i);
		namelen++;
		i++;
	}
	if (namelen > HOSTLIST_NAME_MAX)
		return hl_error(err, errlen, "hostlist: the name at offset %zu "
		    "is longer than %d bytes", pos, HOSTLIST_NAME_MAX);
	e->end = i;
	return 1;
}

/* Append n bytes of p to buf at *at, if they fit (*at counts anyway). */
static void
hl_put(char *buf, size_t buflen, size_t *at, const char *p, size_t n)
{
	if (*at + n < buflen)
		memcpy(buf + *at, p, n);
	*at += n;
}

/* Write host idx of the scanned expression e into buf; ERROR if too long. */
static enum hostlist_result
hl_expr_host(const char *s, const struct hostlist_expr *e, size_t idx,
    char *buf, size_t buflen, char *err, size_t errlen)
{
	unsigned long v[HOSTLIST_GROUPS_MAX];
	int w[HOSTLIST_GROUPS_MAX], g;
	size_t at = 0, from = e->start;
	char num[HOSTLIST_DIGITS_MAX + 1];

	for (g = e->ngroups - 1; g >= 0; g--) {
		hl_group_value(s, &e->group[g], idx % e->group[g].count, &v[g],
		    &w[g]);
		idx /= e->group[g].count;
	}
	for (g = 0; g < e->ngroups; g++) {
		hl_put(buf, buflen, &at, s + from, e->group[g].open - from);
		snprintf(num, sizeof(num), "%0*lu", w[g], v[g]);
		hl_put(buf, buflen, &at, num, strlen(num));
		from = e->group[g].close + 1;
	}
	hl_put(buf, buflen, &at, s + from, e->end - from);
	if (at >= buflen)
		return hl_error(err, errlen, "hostlist: host name of %zu bytes "
		    "does not fit in %zu", at, buflen);
	buf[at] = '\0';
	return HOSTLIST_OK;
}

/* Number of hosts in the list (see hostlist.h). */
enum hostlist_result
hostlist_count(const char *s, size_t len, size_t *count, char *err,
    size_t errlen)
{
	struct hostlist_expr e;
	size_t pos = 0;
	int r;

	*count = 0;
	while ((r = hl_expr_scan(s, len, pos, &e, err, errlen)) == 1) {
		if (e.count > HOSTLIST_HOSTS_MAX - *count)
			return hl_error(err, errlen, "hostlist: more than %d "
			    "hosts", HOSTLIST_HOSTS_MAX);
		*count += e.count;
		pos = e.end;
	}
	return r == 0 ? HOSTLIST_OK : HOSTLIST_ERROR;
}

/* Host n of the list (see hostlist.h). */
enum hostlist_result
hostlist_nth(const char *s, size_t len, size_t n, char *buf, size_t buflen,
    char *err, size_t errlen)
{
	struct hostlist_expr e;
	size_t pos = 0, seen = 0, count;
	int r;

	if (hostlist_count(s, len, &count, err, errlen) != HOSTLIST_OK)
		return HOSTLIST_ERROR;	/* the whole list is checked first */
	while ((r = hl_expr_scan(s, len, pos, &e, err, errlen)) == 1) {
		if (n - seen < e.count)
			return hl_expr_host(s, &e, n - seen, buf, buflen, err,
			    errlen);
		seen += e.count;
		pos = e.end;
	}
	if (r == 0)
		return hl_error(err, errlen, "hostlist: no host %zu (the list "
		    "has %zu)", n, seen);
	return HOSTLIST_ERROR;
}

/* Start walking a list (see hostlist.h). */
void
hostlist_iter_init(struct hostlist_iter *it, const char *s, size_t len)
{
	memset(it, 0, sizeof(*it));
	it->s = s;
	it->len = len;
}

/* The next host of the walk (see hostlist.h). */
int
hostlist_next(struct hostlist_iter *it, char *buf, size_t buflen, char *err,
    size_t errlen)
{
	int r;

	while (!it->have || it->idx == it->expr.count) {
		if (it->have)
			it->pos = it->expr.end;
		if ((r = hl_expr_scan(it->s, it->len, it->pos, &it->expr, err,
		    errlen)) <= 0)
			return r;
		it->have = 1;
		it->idx = 0;
	}
	if (it->total == HOSTLIST_HOSTS_MAX)
		return hl_error(err, errlen, "hostlist: more than %d hosts",
		    HOSTLIST_HOSTS_MAX);
	if (hl_expr_host(it->s, &it->expr, it->idx, buf, buflen, err,
	    errlen) != HOSTLIST_OK)
		return -1;
	it->idx++;
	it->total++;
	return 1;
}

/*
 * hostlist.h: Slurm hostlist expressions (hostlist.c), as SLURM_JOB_NODELIST
 * and SLURM_STEP_NODELIST carry them:
 *
 *	n[1-3,7]		n1 n2 n3 n7
 *	gpu-[01-16]-ib		gpu-01-ib ... gpu-16-ib
 *	r[1-2]n[01-02]		r1n01 r1n02 r2n01 r2n02 (the last group fastest)
 *	a[1-2],b3,c[5-6]	a1 a2 b3 c5 c6
 *	n[08-10]		n08 n09 n10 (each range as wide as its first number)
 *
 * Expressions are separated by commas or white space outside brackets
 * (several in a row count as one, as in Slurm).  Names are printable ASCII
 * without '[', ']' or ','; a bracket group holds comma-separated numbers and
 * LO-HI ranges (LO <= HI).  The parser is pure: it reads the caller's bytes,
 * never allocates, and checks every limit below before it counts or copies.
 */
#ifndef CGRUN_HOSTLIST_H
#define CGRUN_HOSTLIST_H

#include <stddef.h>

#define HOSTLIST_INPUT_MAX	65536	/* bytes of one list */
#define HOSTLIST_HOSTS_MAX	65536	/* hosts a list may expand to */
#define HOSTLIST_NAME_MAX	255	/* bytes of one expanded host name */
#define HOSTLIST_DIGITS_MAX	9	/* digits of one number in brackets */
#define HOSTLIST_GROUPS_MAX	8	/* bracket groups in one expression */

enum hostlist_result {
	HOSTLIST_OK = 0,
	HOSTLIST_ERROR = -1	/* err says what and at which byte offset */
};

/* One bracket group of an expression: byte offsets and its host count. */
struct hostlist_group {
	size_t	open, close;		/* offsets of '[' and ']' */
	size_t	count;
};

/* One expression (a name with up to HOSTLIST_GROUPS_MAX groups). */
struct hostlist_expr {
	size_t	start, end;		/* its bytes: [start, end) */
	size_t	count;			/* hosts it expands to */
	int	ngroups;
	struct hostlist_group group[HOSTLIST_GROUPS_MAX];
};

/* Walks a list one host at a time (hostlist_iter_init, hostlist_next). */
struct hostlist_iter {
	const char		*s;
	size_t			 len, pos, idx;
	size_t			 total;	/* hosts returned so far */
	struct hostlist_expr	 expr;
	int			 have;	/* expr holds the current expression */
};

/* Number of hosts in the list s[0..len) into *count; ERROR with err. */
enum hostlist_result hostlist_count(const char *s, size_t len, size_t *count,
	    char *err, size_t errlen);
/* Host n (0-based) of the list into buf; ERROR with err if n is past the
 * end, the list is malformed or the name does not fit buflen. */
enum hostlist_result hostlist_nth(const char *s, size_t len, size_t n,
	    char *buf, size_t buflen, char *err, size_t errlen);
/* Start walking the list s[0..len). */
void	hostlist_iter_init(struct hostlist_iter *, const char *s, size_t len);
/* The next host into buf: 1 when one was written, 0 at the end, -1 with
 * err (malformed list, or the name does not fit buflen). */
int	hostlist_next(struct hostlist_iter *, char *buf, size_t buflen,
	    char *err, size_t errlen);

#endif /* CGRUN_HOSTLIST_H */

/*
 * tasks_per_node.c: "2(x3),1" lists of tasks per node (tasks_per_node.h).
 * Item by item, each number checked against its maximum while its digits
 * arrive; nothing is allocated.
 */
#include <stdio.h>
#include <string.h>

#include "errbuf.h"
#include "tasks_per_node.h"

/* Read a number 1..max at s[*i]; -1 with err if absent, 0 or too big. */
static int
tpn_number(const char *s, size_t len, size_t *i, unsigned long max,
    unsigned long *v, char *err, size_t errlen)
{
	size_t at = *i;

	*v = 0;
	while (*i < len && s[*i] >= '0' && s[*i] <= '9') {
		*v = *v * 10 + (unsigned long)(s[(*i)++] - '0');
		if (*v > max)
			return errbuf_set(err, errlen, "more than %lu at "
			    "offset %zu", max, at);
	}
	if (*i == at)
		return errbuf_set(err, errlen, "expected a number at offset "
		    "%zu", at);
	if (*v == 0)
		return errbuf_set(err, errlen, "zero at offset %zu", at);
	return 0;
}

/* Read one item "N" or "N(xR)" at s[*i] and the comma after it. */
static int
tpn_item(const char *s, size_t len, size_t *i, unsigned long *n,
    unsigned long *reps, char *err, size_t errlen)
{
	*reps = 1;
	if (tpn_number(s, len, i, TASKS_PER_NODE_TASKS_MAX, n, err,
	    errlen) == -1)
		return -1;
	if (*i + 1 < len && s[*i] == '(' && s[*i + 1] == 'x') {
		*i += 2;
		if (tpn_number(s, len, i, TASKS_PER_NODE_NODES_MAX, reps, err,
		    errlen) == -1)
			return -1;
		if (*i == len || s[*i] != ')')
			return errbuf_set(err, errlen, "expected ')' at offset "
			    "%zu", *i);
		(*i)++;
	}
	if (*i < len && s[*i] != ',')
		return errbuf_set(err, errlen, "unexpected byte 0x%02x at "
		    "offset %zu", (unsigned char)s[*i], *i);
	if (*i < len && ++*i == len)
		return errbuf_set(err, errlen, "nothing after the last ','");
	return 0;
}

/* Tasks on one node (see tasks_per_node.h). */
int
tasks_per_node_at(const char *s, size_t len, size_t node, int *tasks,
    char *err, size_t errlen)
{
	unsigned long n, reps;
	size_t i = 0, seen = 0;

	if (len > TASKS_PER_NODE_INPUT_MAX)
		return errbuf_set(err, errlen, "longer than %d bytes",
		    TASKS_PER_NODE_INPUT_MAX);
	while (i < len) {
		if (tpn_item(s, len, &i, &n, &reps, err, errlen) == -1)
			return -1;
		if (reps > TASKS_PER_NODE_NODES_MAX - seen)
			return errbuf_set(err, errlen, "more than %d nodes",
			    TASKS_PER_NODE_NODES_MAX);
		if (node - seen < reps && node >= seen) {
			*tasks = (int)n;
			return 0;
		}
		seen += reps;
	}
	return errbuf_set(err, errlen, "no count for node %zu (it covers %zu "
	    "nodes)", node, seen);
}

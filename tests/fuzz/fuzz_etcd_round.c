/*
 * fuzz_etcd_round.c: libFuzzer target for the etcd rendezvous' key values
 * (launcher/backend/etcd/etcd_value.c) and its decision (etcd_round.c:
 * the snapshot's facts for the round rule, decide.c, and its answer).
 * The input is values separated by NUL bytes: the first is the state
 * key's, each next one a node key's; whatever parses becomes a snapshot,
 * which is decided, and a written state must parse back the same.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etcd_round.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static struct er_view v;
static struct er_state next, back;

/* The next NUL-separated value of the input. */
static const char *
value(const uint8_t **p, const uint8_t *end, size_t *len)
{
	const uint8_t *s = *p, *z;

	if (s >= end)
		return NULL;
	z = memchr(s, '\0', (size_t)(end - s));
	*len = (size_t)((z ? z : end) - s);
	*p = z ? z + 1 : end;
	return (const char *)s;
}

/* One input: parse, decide, check a decision survives a round trip. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p = data, *end = data + size;
	const char *s;
	size_t len;
	char why[ER_WHY_MAX], *j;

	memset(&v, 0, sizeof(v));
	v.min = 1 + (size & 3);
	v.max = v.min + (size & 4);
	v.max_restarts = size & 1;
	v.last_call_over = (size >> 3) & 1;
	v.last_call_armed = (size >> 4) & 1;
	v.join_over = (size >> 5) & 1;
	v.join_ms = 1000;
	if ((s = value(&p, end, &len)) != NULL &&
	    er_state_parse(s, len, &v.state, why, sizeof(why)) == -1)
		memset(&v.state, 0, sizeof(v.state));
	while ((s = value(&p, end, &len)) != NULL && v.nnodes < ER_NODES_MAX)
		if (er_node_parse(s, len, &v.nodes[v.nnodes], why,
		    sizeof(why)) == 0) {
			snprintf(v.nodes[v.nnodes].id, ER_ID_MAX, "n%zu",
			    v.nnodes % 5);
			v.nodes[v.nnodes].create_rev = (int64_t)v.nnodes;
			v.nnodes++;
		}
	if (er_decide(&v, &next) != ER_WRITE)
		return 0;
	if ((j = er_state_json(&next)) == NULL)
		return 0;
	if (next.min >= 1 && next.max >= next.min &&
	    er_state_parse(j, strlen(j), &back, why, sizeof(why)) == -1)
		abort();	/* we wrote what we cannot read */
	free(j);
	return 0;
}

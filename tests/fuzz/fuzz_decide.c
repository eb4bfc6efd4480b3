/*
 * fuzz_decide.c: libFuzzer target for the round rule
 * (rendezvous/engine/decide.c).  The input's first 12 bytes are the job's
 * facts (phase, round, MIN, MAX, budget, timers), then 4 bytes per node
 * (state, node rank, host out of 8, nproc, connection); the counts come
 * from decide_count().  Whatever the facts, the answer must hold
 * together: a verdict in range, a named node that exists, a round whose
 * members are the first MAX waiting nodes in group-rank order with rank
 * bases summing their nproc, and a budget never overspent.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "decide.h"

#define FD_NODES	64

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static const char *const fd_hosts[] = { "a", "b", "c", "h", "h", "n1",
	"n10", "n9" };
static struct decide_node nodes[FD_NODES];
static struct decide_place order[FD_NODES];
static char names[FD_NODES][8];

/* Abort (a finding) unless cond holds. */
static void
fd_assert(int cond)
{
	if (!cond)
		abort();
}

/* Group-rank order, written again independently: x strictly before y? */
static int
fd_before(const struct decide_node *x, const struct decide_node *y)
{
	int c;

	if ((x->node_rank >= 0) != (y->node_rank >= 0))
		return x->node_rank >= 0;
	if (x->node_rank != y->node_rank)
		return x->node_rank < y->node_rank;
	if ((c = strcmp(x->host, y->host)) != 0)
		return c < 0;
	return x->arrival < y->arrival;
}

/* The job's facts from the input's first 12 bytes. */
static void
fd_job(const uint8_t *d, struct decide_job *j)
{
	j->phase = (enum decide_phase)(d[0] % DECIDE_JOB__PHASES);
	j->round = d[1];
	j->min = 1 + d[2] % 8;
	j->max = j->min + d[3] % 8;
	j->max_restarts = d[4] % 4;
	j->restarts = d[5] % 6;
	j->join_timeout_ms = (uint32_t)d[6] * 1000;
	j->started = d[7] & 1;
	j->last_call_armed = d[8] & 1;
	j->last_call_over = d[9] & 1;
	j->join_timeout_over = d[10] & 1;
}

/* A round's answer holds together. */
static void
fd_check_round(const struct decide_view *v, const struct decide_out *o)
{
	size_t i, waiting = v->count[DECIDE_WAITING];
	uint32_t base = 0;

	fd_assert(o->nmembers >= 1 && o->nmembers <= v->job.max);
	fd_assert(o->nmembers + o->nspares == waiting);
	fd_assert(o->nspares == 0 || o->nmembers == v->job.max);
	for (i = 0; i < waiting; i++) {
		fd_assert(order[i].node < v->nnodes);
		fd_assert(nodes[order[i].node].state == DECIDE_WAITING);
		if (i > 0)
			fd_assert(fd_before(&nodes[order[i - 1].node],
			    &nodes[order[i].node]));
		if (i < o->nmembers) {
			fd_assert(order[i].rank_base == base);
			base += nodes[order[i].node].nproc;
		}
	}
	fd_assert(o->world == base);
}

/* One input: build a view, decide, check the answer. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct decide_view v;
	struct decide_out o;
	const uint8_t *p;
	size_t i;

	if (size < 12)
		return 0;
	memset(&v, 0, sizeof(v));
	fd_job(data, &v.job);
	for (p = data + 12; p + 4 <= data + size && v.nnodes < FD_NODES;
	    p += 4) {
		i = v.nnodes++;
		memset(&nodes[i], 0, sizeof(nodes[i]));
		names[i][0] = (char)('A' + i % 26);
		names[i][1] = '\0';
		nodes[i].name = names[i];
		nodes[i].host = fd_hosts[p[1] & 7];
		nodes[i].addr = nodes[i].host;
		nodes[i].arrival = i;
		nodes[i].node_rank = p[1] & 0x80 ? (p[1] >> 3) & 7 : -1;
		nodes[i].group_rank = p[3] & 0x80 ? (int32_t)(p[3] & 0x3f) : -1;
		nodes[i].nproc = 1 + p[2] % 8;
		nodes[i].state = (uint8_t)(p[0] % DECIDE__NSTATES);
		nodes[i].offline = p[3] & 1;
		nodes[i].why = p[3] & 2 ? "why" : NULL;
	}
	v.nodes = nodes;
	decide_count(&v);
	fd_assert(decide(&v, order, &o) < DECIDE__VERDICTS);
	fd_assert(o.verdict < DECIDE__VERDICTS);
	fd_assert(o.node == DECIDE_NO_NODE || o.node < v.nnodes);
	fd_assert(memchr(o.text, '\0', sizeof(o.text)) != NULL);
	fd_assert(o.restarts <= (v.job.restarts > v.job.max_restarts ?
	    v.job.restarts : v.job.max_restarts));
	fd_assert(!o.spent || o.restarts == v.job.restarts + 1);
	if (o.verdict == DECIDE_ROUND)
		fd_check_round(&v, &o);
	if (o.verdict == DECIDE_FAIL)
		fd_assert(o.reason == RDZV_FAIL_TIMEOUT ||
		    o.reason == RDZV_FAIL_BELOW_MIN ||
		    o.reason == RDZV_FAIL_RESTARTS);
	if (v.job.phase == DECIDE_JOB_CLOSED)
		fd_assert(o.verdict == DECIDE_NOTHING);
	return 0;
}

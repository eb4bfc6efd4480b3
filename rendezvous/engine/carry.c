/*
 * carry.c: what an agent carries from its last round onto a new
 * connection (RESUME, protocol version 4; docs/protocol.md section 5),
 * and what the engine makes of it (rdzv_impl.h).
 *
 * A client that had a round says, before its JOIN on a new connection:
 * the round, its place in it, the job's restart count, and what its
 * workers did (running, done, failed, stopping, stopped).  Then:
 *
 *  - a server that knows the node (the connection was lost, the server
 *    was not) takes "failed", "stopped" or "done" as the report it may
 *    have missed, but only when it is about the node's current round
 *    (carry_report): a report about an earlier round is stale and would
 *    otherwise spend a restart of a round the client never saw;
 *  - a server that does not know the node (it restarted and forgot the
 *    job) keeps the larger restart count at once, before any round is
 *    decided (carry_join), and decides its first round from what every
 *    node carried (carry_round): the same round goes on when every member
 *    carried it, with its workers running or done, in the very place the
 *    decision gives it; otherwise the round is a new one, numbered after
 *    the largest carried, and a failure carried from that round spends
 *    one restart (the server that saw it may have died before it could).
 *    Round numbers and restart counts never go backwards.
 */
#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "budget.h"
#include "decide.h"
#include "log.h"
#include "rdzv.h"
#include "rdzv_impl.h"

static const char *const workers_names[] = { "running", "done", "failed",
	"stopping", "stopped" };
_Static_assert(sizeof(workers_names) / sizeof(workers_names[0]) ==
    RDZV_WORKERS_MAX + 1, "a name for every RDZV_WORKERS_*");

/* What a RESUME carries, copied out of the message; NULL: no memory. */
struct carry *
carry_new(const struct rdzv_msg *m)
{
	struct carry *k;

	if ((k = calloc(1, sizeof(*k))) == NULL)
		return NULL;
	k->round = m->round;
	k->restarts = m->restart_count;
	k->group_rank = m->group_rank;
	k->gws = m->group_world_size;
	k->rank_base = m->rank_base;
	k->world = m->world_size;
	k->port = m->port;
	k->workers = m->workers;
	snprintf(k->addr, sizeof(k->addr), "%s", m->addr);
	snprintf(k->text, sizeof(k->text), "%s", m->text);
	return k;
}

/* Forget what node n carried (its first round here is decided, or it is
 * removed). */
void
carry_drop(struct node *n)
{
	free(n->carry);
	n->carry = NULL;
}

/*
 * A node this server did not know joined with what it carried: the job's
 * restart count takes the larger at once (a round decided by this very
 * JOIN has it); a job not yet decided here keeps the rest for its first
 * round, and forms it under the largest round number carried.  Takes k.
 */
void
carry_join(struct job *j, struct node *n, struct carry *k)
{
	log_info("rdzv job=%s node %s carried round=%u restarts=%u "
	    "workers=%s", j->run_id, n->name, k->round, k->restarts,
	    workers_names[k->workers]);
	if (budget_carry(&j->restarts, k->restarts, j->max_restarts))
		log_info("rdzv job=%s restarts=%u/%u carried by node %s",
		    j->run_id, j->restarts, j->max_restarts, n->name);
	if (j->started) {	/* the job moved on here: it joins as new */
		free(k);
		return;
	}
	n->carry = k;
	if (!j->carried || k->round > j->round)
		j->round = k->round;
	j->carried = 1;
}

/*
 * The event a known node's carried report stands for, or NODE__EVENTS when
 * it is about another round or says nothing new: FAILED or STOPPED from
 * a node the job waits on to stop; FAILED or DONE from a member of the
 * running round, if it is that round's.
 */
static enum node_event
carry_report(const struct job *j, const struct node *n, const struct carry *k)
{
	int failed = k->workers == RDZV_WORKERS_FAILED;

	if (n->state == RDZV_N_STOPPING && j->state == RDZV_J_JOINING)
		return failed || k->workers == RDZV_WORKERS_STOPPED ?
		    NODE_STOPPED : NODE__EVENTS;
	if (n->state != RDZV_N_ACTIVE || j->state != RDZV_J_RUNNING ||
	    k->round != j->round)
		return NODE__EVENTS;
	return failed ? NODE_FAILED : k->workers == RDZV_WORKERS_DONE ?
	    NODE_DONE : NODE__EVENTS;
}

/*
 * A node the server knows came back with what it carried: its report
 * goes through the job's table when it is about the node's current
 * round.  1 if it did (the table told the nodes what follows), else 0
 * (the caller repeats what the node may have missed).  Takes k.
 */
int
carry_resumed(struct job *j, struct node *n, struct carry *k)
{
	enum node_event e = carry_report(j, n, k);

	if (e == NODE__EVENTS) {
		log_debug("rdzv job=%s node=%s:%u resumed with workers=%s of "
		    "round %u: nothing to act on in %s round %u", j->run_id,
		    n->host, n->pid, workers_names[k->workers], k->round,
		    rdzv_nstate_name(n->state), j->round);
		free(k);
		return 0;
	}
	if (e == NODE_FAILED)
		snprintf(n->failed_why, sizeof(n->failed_why), "%s", k->text);
	free(k);
	job_dispatch_node(n, e);
	return 1;
}

/* Does member i of the decided round o carry that very place (its
 * group rank, rank base, the round's size, world and store), in round
 * j->round, its workers running or done? */
static int
carry_same(const struct job *j, const struct decide_out *o, size_t i)
{
	const struct carry *k = j->slot_node[j->order[i].node]->carry;
	const struct decide_node *store = &j->view[j->order[0].node];

	return k != NULL && k->round == j->round && (k->workers ==
	    RDZV_WORKERS_RUNNING || k->workers == RDZV_WORKERS_DONE) &&
	    k->group_rank == (int32_t)i && k->gws == o->nmembers &&
	    k->rank_base == j->order[i].rank_base && k->world == o->world &&
	    k->port == store->port && strcmp(k->addr, store->addr) == 0;
}

/* Does the decided round o continue round j->round in every member's
 * place? */
static int
carry_continues(const struct job *j, const struct decide_out *o)
{
	size_t i;

	for (i = 0; i < o->nmembers; i++)
		if (!carry_same(j, o, i))
			return 0;
	return 1;
}

/* The first node that carried a failure of round r, or NULL. */
static struct node *
carry_failed(const struct job *j, uint32_t r)
{
	struct node *n;

	TAILQ_FOREACH(n, &j->nodes, entry)
		if (n->carry != NULL && n->carry->round == r &&
		    n->carry->workers == RDZV_WORKERS_FAILED)
			return n;
	return NULL;
}

/*
 * The first round decided (o, by the round rule) for a job whose nodes
 * carried one: *cont says whether it continues the carried round
 * j->round; else the round is j->round + 1, and a failure carried from
 * j->round spends a restart.  0 to go on deciding; -1 when the job
 * failed instead (no restart left).
 */
int
carry_round(struct job *j, const struct decide_out *o, int *cont)
{
	char why[RDZV_TEXT_MAX + RDZV_HOST_MAX + 128];
	struct node *f = carry_failed(j, j->round);

	*cont = f == NULL && carry_continues(j, o);
	if (*cont) {
		log_info("rdzv job=%s round=%u goes on: every node carried it "
		    "in the same place (restarts=%u/%u)", j->run_id, j->round,
		    j->restarts, j->max_restarts);
		return 0;
	}
	j->round++;
	if (f == NULL)
		return 0;
	if (!budget_spend(&j->restarts, j->max_restarts)) {
		snprintf(why, sizeof(why), "workers failed on node %s in round "
		    "%u and no restarts are left (%u/%u spent)%s%s", f->name,
		    j->round - 1, j->restarts, j->max_restarts,
		    f->carry->text[0] != '\0' ? ": " : "", f->carry->text);
		job_fail(j, RDZV_FAIL_RESTARTS, why);
		return -1;
	}
	j->r->stats.restarts++;
	log_info("rdzv job=%s round=%u follows round %u, whose workers failed "
	    "on node %s%s%s (restarts=%u/%u)", j->run_id, j->round,
	    j->round - 1, f->name, f->carry->text[0] != '\0' ? ": " : "",
	    f->carry->text, j->restarts, j->max_restarts);
	return 0;
}

/* In a round that goes on, is node n's part already done? */
int
carry_done(const struct node *n)
{
	return n->carry != NULL && n->carry->workers == RDZV_WORKERS_DONE;
}

/* The first round is decided: what the nodes carried is spent. */
void
carry_forget(struct job *j)
{
	struct node *n;

	TAILQ_FOREACH(n, &j->nodes, entry)
		carry_drop(n);
	j->carried = 0;
}

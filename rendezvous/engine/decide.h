/*
 * decide.h: the one round rule of a rendezvous (decide.c).  Who takes part
 * in a round and in which order (group ranks, rank bases, the job store),
 * when a round being formed closes (MAX, MIN with the last call, a
 * restart with nobody left to wait for), when a running job starts a new
 * round and whether that spends a restart, when it fails and why, when it
 * is finished: one pure function over a view of the job's nodes.
 *
 * Two callers gather the facts and carry the answer out, each its own
 * way: the c10d engine (rendezvous/engine/job.c: timers and messages) and
 * the etcd-v3 backend (launcher/backend/etcd/etcd_round.c: a transaction
 * on the job's state key).  Neither decides anything itself, so the two
 * cannot drift apart; tests/rdzv/ runs one table of scenarios against
 * this function and against both backends.
 *
 * Cost: O(1) for most facts (the caller keeps count[]); a verdict that
 * names a node walks the nodes once, and deciding a round sorts the
 * waiting ones: O(K log K).  No node limit of its own.
 */
#ifndef CGRUN_DECIDE_H
#define CGRUN_DECIDE_H

#include <stddef.h>
#include <stdint.h>

#include "rdzv_proto.h"

#define DECIDE_TEXT_MAX	RDZV_TEXT_MAX	/* a verdict's words, cut there */
#define DECIDE_NO_NODE	((size_t)-1)

/* Where the job is. */
enum decide_phase {
	DECIDE_JOB_FORMING,	/* a round is being formed */
	DECIDE_JOB_RUNNING,	/* a round was decided and runs */
	DECIDE_JOB_CLOSED,	/* finished or failed: nothing more */
	DECIDE_JOB__PHASES
};

/* What a node is, as the rule sees it. */
enum decide_nstate {
	DECIDE_WAITING,	/* ready for the round being formed; while a
			 * round runs: a spare (not a member) */
	DECIDE_STOPPING,/* yet to come back for the round being formed
			 * (stopping its workers, or its facts still name
			 * an earlier round); while a round runs: left
			 * behind, not a member */
	DECIDE_RUNNING,	/* a member of the running round, workers running */
	DECIDE_DONE,	/* a member, its workers all exited 0 */
	DECIDE_FAILED,	/* a member, its workers failed */
	DECIDE_LOST,	/* a member of the running round, gone */
	DECIDE_GONE,	/* gone (dead, left), not a member of a running
			 * round */
	DECIDE__NSTATES
};

/* One node's facts. */
struct decide_node {
	const char	*name;		/* in texts ("host (pid 12)", an id) */
	const char	*host;		/* group-rank order, second key */
	const char	*addr;		/* its job store */
	const char	*why;		/* DECIDE_FAILED: what failed, or NULL */
	uint64_t	 arrival;	/* group-rank order, third key */
	int32_t		 node_rank;	/* first key: the batch system's node
					 * rank (SLURM_NODEID); -1: none */
	int32_t		 group_rank;	/* in the round it runs or last ran;
					 * -1: none */
	uint32_t	 nproc;
	uint32_t	 port;
	uint8_t		 state;		/* enum decide_nstate */
	uint8_t		 offline;	/* its connection is down (c10d): a
					 * failure meanwhile is blamed on it */
};

/* The job's facts. */
struct decide_job {
	enum decide_phase phase;
	uint32_t	 round;		/* being formed, or running */
	uint32_t	 min, max;	/* --nnodes MIN:MAX */
	uint32_t	 max_restarts, restarts;	/* budget, spent */
	uint32_t	 join_timeout_ms;	/* for the join timeout's text */
	uint8_t		 started;	/* a round was decided once */
	uint8_t		 last_call_armed, last_call_over;
	uint8_t		 join_timeout_over;
};

/* What decide() is given: the job, its nodes as a plain array (one entry
 * per node, in any order), and how many are in each state (decide_count,
 * or kept by the caller as the nodes change: it must match the array). */
struct decide_view {
	struct decide_job	 job;
	const struct decide_node *nodes;
	size_t			 nnodes;
	size_t			 count[DECIDE__NSTATES];
};

/* One place of a decided round: which node, its first global rank. */
struct decide_place {
	size_t		 node;		/* index in the view's nodes */
	uint32_t	 rank_base;	/* members only: the nproc before it */
};

enum decide_verdict {
	DECIDE_NOTHING,		/* nothing happens (yet) */
	DECIDE_ARM_LAST_CALL,	/* MIN nodes wait: start the last call */
	DECIDE_DISARM_LAST_CALL,/* fewer than MIN again: stop it */
	DECIDE_ROUND,		/* the round is decided (order, world) */
	DECIDE_NEW_ROUND,	/* members stop; round + 1 forms (text) */
	DECIDE_FAIL,		/* the job cannot go on (reason, text) */
	DECIDE_FINISH,		/* every member's workers succeeded */
	DECIDE__VERDICTS
};

/* The answer. */
struct decide_out {
	enum decide_verdict verdict;
	/* DECIDE_ROUND: order[0 .. nmembers) are the members in group-rank
	 * order (group rank = position), then nspares spares; the job store
	 * is order[0]'s addr:port; world is the members' nproc summed */
	size_t		 nmembers, nspares;
	uint32_t	 world;
	/* DECIDE_NEW_ROUND: spent is 1 when a failure spent a restart;
	 * restarts is the budget spent after this verdict (any verdict) */
	int		 spent;
	uint32_t	 restarts;
	/* DECIDE_FAIL: why, as rdzv_proto.h's RDZV_FAIL_* */
	uint8_t		 reason;
	/* DECIDE_NEW_ROUND, DECIDE_FAIL: the node it is about (the lost
	 * one, the one whose workers failed, the one that joined), or
	 * DECIDE_NO_NODE */
	size_t		 node;
	/* every verdict but NOTHING and the last call's: its words, the
	 * one copy of them (the backends send or store them as they are) */
	char		 text[DECIDE_TEXT_MAX + 1];
};

/*
 * What happens next to the job of view v.  Pure: v is not changed.
 * order needs room for v->nnodes places (it is written for DECIDE_ROUND
 * only).  The rules, in the order they are tried:
 *
 * FORMING   a round ran once and fewer than MIN nodes are left: FAIL
 *           (below MIN); MAX nodes wait, or MIN wait and the last call
 *           is over, or MIN wait after a round ran and nobody is left to
 *           come back: ROUND (the first MAX waiting in group-rank order
 *           are members, the rest spares); the join timeout is over:
 *           FAIL (timeout); MIN wait: arm the last call; else disarm it
 * RUNNING   a member is lost: FAIL below MIN, else NEW_ROUND (free); a
 *           member's workers failed: NEW_ROUND, free when a member's
 *           connection is down, else spending one restart, or FAIL when
 *           none is left; every member done: FINISH; a node waits and
 *           fewer than MAX run: NEW_ROUND (scale-up, free)
 * CLOSED    nothing
 *
 * Group-rank order: nodes with a node rank first, by it; then host
 * (bytewise); then arrival.  Where a verdict names one of several nodes,
 * it names the first in that order.
 */
enum decide_verdict decide(const struct decide_view *v,
	    struct decide_place *order, struct decide_out *out);

/* Count the nodes in each state into v->count (O(K)), for callers that
 * do not keep the counts as their nodes change. */
void	decide_count(struct decide_view *v);

/* Names, for logs. */
const char *decide_verdict_name(enum decide_verdict);
const char *decide_nstate_name(enum decide_nstate);

#endif /* CGRUN_DECIDE_H */

/*
 * etcd_round.h: the etcd rendezvous as data (etcd_round.c): the job's
 * state key and each node's key as JSON values, and the pure function that
 * decides what the job does next from one snapshot of the run's keys.
 * Every agent runs the same decision on what it reads; it writes a new
 * state only in a transaction that compares the state key's revision, so
 * exactly one agent's decision wins and the others re-read.
 *
 * Keys under /cgrun/v1/<run_id>/ (docs/etcd.md):
 *   state        {"round","phase","restarts","max_restarts","min","max",
 *                 "started","members":[{"id","nproc"}...],"addr","port",
 *                 "world","why","culprit"}          no lease
 *   nodes/<id>   {"host","nproc","addr","port","round","st"[,"node_rank"]
 *                 [,"why"]}                         the agent's lease
 * The rule is the c10d engine's, the same function (decide.c): MIN:MAX
 * nodes, last call, spares beyond MAX, scale-up, a lost node starts a new
 * round without spending a restart, a failure spends one of the job's
 * max_restarts (the first agent's value, kept in the state).
 */
#ifndef CGRUN_ETCD_ROUND_H
#define CGRUN_ETCD_ROUND_H

#include <stddef.h>
#include <stdint.h>

#define ER_NODES_MAX	256	/* nodes of one run */
#define ER_ID_MAX	96	/* a node id: host-pid-random */
#define ER_HOST_MAX	255
#define ER_WHY_MAX	256

enum er_phase { ER_JOINING, ER_RUNNING, ER_FINISHED, ER_FAILED,
	ER__PHASES };
enum er_st { ER_WAIT, ER_DONE, ER_FAILED_ST, ER__STS };

struct er_member {
	char		 id[ER_ID_MAX + 1];
	uint32_t	 nproc;
};

struct er_state {
	int		 exists;
	int64_t		 mod_rev;
	uint32_t	 round;
	enum er_phase	 phase;
	uint32_t	 restarts, max_restarts, min, max;
	int		 started;	/* a round was decided once */
	size_t		 nmembers;	/* of the running round, rank order */
	struct er_member members[ER_NODES_MAX];
	char		 addr[ER_HOST_MAX + 1];	/* job store: rank 0's */
	uint32_t	 port, world;
	char		 why[ER_WHY_MAX];
	char		 culprit[ER_ID_MAX + 1];	/* failed: whose workers */
};

struct er_node {
	char		 id[ER_ID_MAX + 1];
	char		 host[ER_HOST_MAX + 1];
	char		 addr[ER_HOST_MAX + 1];
	uint32_t	 port, nproc, round;
	enum er_st	 st;
	int64_t		 create_rev;	/* arrival order */
	int32_t		 node_rank;	/* SLURM_NODEID: rank order; -1 none */
	char		 why[ER_WHY_MAX];	/* "failed": what failed */
};

/* One snapshot of a run's keys and what this agent knows locally. */
struct er_view {
	struct er_state	 state;
	struct er_node	 nodes[ER_NODES_MAX];
	size_t		 nnodes;
	uint32_t	 min, max, max_restarts;	/* this agent's options */
	uint32_t	 join_ms;		/* its join_timeout */
	int		 last_call_armed;	/* its last call timer runs */
	int		 last_call_over;	/* its last call timer ended */
	int		 join_over;		/* its join timeout ended */
	/* why the state key's value is not cgrun's; "" when it is */
	char		 bad[ER_WHY_MAX];
};

enum er_action { ER_NONE, ER_WRITE, ER_ARM_LAST_CALL, ER_DISARM_LAST_CALL };

/*
 * What the job does next: ER_WRITE with *next (the whole new state) to be
 * written if the state is still at v->state.mod_rev, or a change of the
 * last call timer, or nothing (also when out of memory: the next snapshot
 * asks again).  Pure: v is not changed.  The round rule is decide.c's.
 */
enum er_action er_decide(const struct er_view *v, struct er_state *next);

/* Values as JSON: encode into a malloc'ed string (NULL: no memory). */
char	*er_state_json(const struct er_state *);
char	*er_node_json(const struct er_node *);
/* Parse a value (untrusted: bounded); 0, or -1 with err set. */
int	er_state_parse(const char *, size_t, struct er_state *, char *err,
	    size_t errlen);
int	er_node_parse(const char *, size_t, struct er_node *, char *err,
	    size_t errlen);

/* Names of phases and node states (logs). */
const char *er_phase_name(enum er_phase);
const char *er_st_name(enum er_st);
/* The index of id among the state's members, or -1. */
int	er_member_index(const struct er_state *, const char *id);
/* The node of that id in the view, or NULL. */
const struct er_node *er_view_node(const struct er_view *, const char *id);

#endif /* CGRUN_ETCD_ROUND_H */

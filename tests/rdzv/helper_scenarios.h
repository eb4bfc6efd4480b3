/*
 * helper_scenarios.h: one table of rendezvous scenarios
 * (helper_scenario_table.c) and the runner that plays a scenario against
 * a harness and checks what every node was told (helper_scenarios.c).
 *
 * Three harnesses run the same table:
 *   tests/rdzv/test_decide.c     the round rule itself (decide.c) with a
 *                                small model of the nodes around it
 *   tests/rdzv/tool_scenarios.c  c10d: real c10d backends (the agent's
 *                                side) over real sockets to the engine;
 *                                etcd-v3: real etcd-v3 backends on a real
 *                                etcd cluster (t_rdzv_scenarios.sh,
 *                                t_etcd_scenarios.sh)
 *
 * A scenario is steps: actions (a node joins, its workers fail or
 * succeed, it leaves, its connection is cut and healed) and expectations
 * (the round each listed node gets, the restart or the failure or the
 * end each is told).  Every node's observations must match the
 * expectations naming it, in order, and nothing else may come: at the
 * end every node left or was told the job is over, and nothing it was
 * told is unexpected.
 */
#ifndef CGRUN_TEST_HELPER_SCENARIOS_H
#define CGRUN_TEST_HELPER_SCENARIOS_H

#include <stddef.h>

#include "round.h"

#define SCN_NODES	8	/* nodes of one scenario */
#define SCN_STEPS	40	/* steps of one scenario */
#define SCN_SEEN	16	/* observations of one node */
#define SCN_TEXT	1400	/* an observation's text */
#define SCN_STORE_PORT	30000	/* node i's job store: its name, port + i */
#define SCN_WAIT_SECS	60	/* longest wait for one expectation */

enum scn_op {
	SCN_END,
	SCN_JOIN,	/* who: its agent starts and joins */
	SCN_KNOWN,	/* n: wait until the rendezvous knows n nodes */
	SCN_FAIL,	/* who: its workers failed, text says why */
	SCN_DONE,	/* who: its workers all exited 0 */
	SCN_LEAVE,	/* who: its agent leaves (LEAVE; its lease revoked) */
	SCN_CUT,	/* who: its connection goes down and stays down */
	SCN_HEAL,	/* who: it may connect again */
	SCN_ROUND,	/* expect who (in group-rank order): round n, r
			 * restarts spent */
	SCN_RESTART,	/* expect who: told to stop for a new round because
			 * text (NULL: any reason) */
	SCN_FAILED,	/* expect who: the job failed, text; exit status n */
	SCN_FINISHED,	/* expect who: every node is done */
};

struct scn_step {
	enum scn_op	 op;
	const char	*who;	/* a node's name, or names separated by ' ' */
	const char	*text;	/* {x}: node x's name as its backend writes it */
	int		 n, r;
};

struct scn_node {
	const char	*name;	/* in the steps */
	const char	*host;	/* rank sort key and store address; NULL:
				 * the name */
	int		 node_rank;	/* SLURM_NODEID; -1: none */
	int		 nproc;
};

struct scenario {
	const char	*name;
	const char	*what;		/* one line: what it shows */
	int		 min, max, max_restarts;
	int		 last_call_ms;	/* 0: 60 s */
	int		 join_ms;	/* 0: 120 s */
	int		 needs_connection; /* only backends with connections */
	struct scn_node	 nodes[SCN_NODES];
	struct scn_step	 steps[SCN_STEPS];
};

extern const struct scenario scn_table[];
extern const size_t scn_ntable;

enum scn_kind { SCN_SAW_ROUND, SCN_SAW_RESTART, SCN_SAW_FAILED,
	SCN_SAW_FINISHED };

struct scn_run;

/* What runs a scenario: every call returns at once; the runner calls
 * turn() while it waits. */
struct scn_harness {
	const char *name;
	int	connection_facts;	/* cut() and heal() work */
	/* A fresh rendezvous for s under run_id; NULL with err. */
	void   *(*open)(const struct scenario *s, const char *run_id,
		    struct scn_run *run, char *err, size_t len);
	int	(*join)(void *, int node, char *err, size_t len);
	void	(*failed)(void *, int node, const char *why);
	void	(*done)(void *, int node);
	void	(*leave)(void *, int node);
	void	(*cut)(void *, int node);
	void	(*heal)(void *, int node);
	/* Nodes the rendezvous knows now; -1: not known yet (asked). */
	long	(*known)(void *);
	/* Does the rendezvous see node's connection down? */
	int	(*offline)(void *, int node);
	/* Let a little time pass (one loop turn, at most ~50 ms). */
	void	(*turn)(void *);
	/* Bytes of s that are node's name as this backend writes it in
	 * texts, or 0 if s does not start with it. */
	size_t	(*name_at)(void *, int node, const char *s);
	void	(*close)(void *);
};

/* A harness saw node told something (ri: SCN_SAW_ROUND; status:
 * SCN_SAW_FAILED; text: RESTART's and FAILED's words as the agent got
 * them). */
void	scn_saw(struct scn_run *, int node, enum scn_kind,
	    const struct round_info *ri, int status, const char *text);

/* Run scenario s on harness h: 0 passed, 1 not for this harness (it has
 * no connection facts), -1 failed with err saying what differed. */
int	scn_play(const struct scenario *s, const struct scn_harness *h,
	    char *err, size_t len);

/* The node of scenario s named name, or -1. */
int	scn_node(const struct scenario *s, const char *name);
/* Node i's host (its rank sort key and job store address). */
const char *scn_host(const struct scenario *s, int i);

#endif

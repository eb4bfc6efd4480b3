/*
 * rdzv_impl.h: the insides of the rendezvous engine (rdzv.h), shared by
 * the files of rendezvous/engine/ and by nothing else:
 *
 *	rdzv.c		the engine object: jobs list, auth key, counters,
 *			the status walk, shutdown
 *	job.c		a job's state machine: job_actions[state][event]
 *			and node_actions[state][event][node state]; it
 *			asks decide.c what happens and carries it out
 *			(a round's messages, RESTART, FAIL, timers)
 *	node.c		a node of a job: states, identity hash, keep-alive
 *			deadline, and its facts as decide.c sees them
 *			(the job's view: one slot per node)
 *	rdzv_peer.c	a peer session (one connection): HELLO, AUTH, JOIN,
 *			then node events into the job's table
 *	rdzv_attach.c	the transport over a store's native connections
 *	job_bound.c	what a peer can make the engine hold: max-jobs,
 *			max-jobs-per-address, job-orphan-timeout
 *	carry.c		what a node carries from its last round onto a new
 *			connection (RESUME), for a server that forgot it
 *
 * Jobs, nodes and peers each change state only in job_enter(),
 * node_enter() and peer_enter(), which log `old -> new`.  A peer:
 *
 *	HELLO --(HELLO 1, no key)--------------> READY --(JOIN)--> JOINED
 *	  |                                        ^  <--(node removed)--+
 *	  +--(HELLO 2, CHALLENGE sent)--> AUTH --(AUTH, proof good)--+
 *
 * and GONE when its connection is gone (rdzv_peer_gone(), then freed).
 * A protocol error leaves the state as it was: the caller closes.
 */
#ifndef CGRUN_RDZV_IMPL_H
#define CGRUN_RDZV_IMPL_H

#include <sys/queue.h>

#include <stdint.h>
#include <time.h>

#include <event2/event.h>

#include "auth.h"
#include "decide.h"

/* rdzv.h first (not included here, so the two never include each other). */
#ifndef CGRUN_RDZV_H
#error "include rdzv.h before rdzv_impl.h"
#endif

/* Buckets of a job's node identity hash (resuming nodes are found in O(1)). */
#define NODE_BUCKETS		1024
/* Buckets of the engine's run id hash (a JOIN finds its job in O(1)). */
#define JOB_BUCKETS		4096

/* A job's own events (job.c: job_actions). */
enum job_event {
	JOB_JOIN,		/* a new node joined (born WAIT) */
	JOB_LAST_CALL_OVER,	/* the last call's timer */
	JOB_JOIN_TIMEOUT,	/* join_timeout's timer */
	JOB__EVENTS
};

/* A node's events (job.c: node_actions, by the node's state too). */
enum node_event {
	NODE_FAILED,		/* FAILED: its workers failed */
	NODE_STOPPED,		/* STOPPED: its workers stopped after RESTART */
	NODE_DONE,		/* DONE: its workers all exited 0 */
	NODE_GONE,		/* LEAVE, its keep-alive window ended, or its
				 * connection closed in a job that is over */
	NODE__EVENTS
};

/* Where a peer session is (see the diagram above). */
enum rdzv_pstate {
	PEER_HELLO,	/* connected; HELLO expected first */
	PEER_AUTH,	/* CHALLENGE sent; AUTH expected */
	PEER_READY,	/* WELCOME sent; JOIN expected */
	PEER_JOINED,	/* bound to a node of a job */
	PEER_GONE,	/* the connection is gone; freed at once */
	PEER__COUNT
};

struct job;

/* What a node carried from its last round (RESUME, carry.c). */
struct carry {
	uint32_t	round, restarts;
	int32_t		group_rank;
	uint32_t	gws, rank_base, world;
	char		addr[RDZV_ADDR_MAX + 1];	/* the round's store */
	uint16_t	port;
	uint8_t		workers;	/* RDZV_WORKERS_* */
	char		text[RDZV_TEXT_MAX + 1];	/* a failure's */
};

struct node {
	TAILQ_ENTRY(node) entry;
	struct node	*hnext;		/* identity hash chain */
	struct job	*job;
	struct rdzv_peer *peer;		/* NULL while disconnected: only via
					 * node_set_peer() */
	size_t		 slot;		/* its facts: job->view[slot] */
	int		 gone;		/* dead or left: being removed */
	char		*name;		/* "host (pid N)", for messages */
	char		*host;
	char		*addr;		/* its job store */
	uint16_t	port;
	uint32_t	pid, local_id, nproc;
	int32_t		node_rank;
	uint64_t	seq;		/* arrival order in the job */
	int		group_rank;	/* in the running round */
	uint32_t	rank_base;
	enum rdzv_nstate state;		/* only via node_enter() */
	struct event	*alive;		/* keep-alive deadline */
	struct timespec	last_seen;	/* monotonic, of its last message */
	char		failed_why[RDZV_TEXT_MAX + 1];	/* its FAILED text */
	struct carry	*carry;		/* until its job's first round here */
};

struct job {
	TAILQ_ENTRY(job) entry;
	struct job	*hnext;		/* run id hash chain */
	struct rdzv	*r;
	char		*run_id;
	uint32_t	min, max, max_restarts;
	uint32_t	join_ms, last_call_ms, close_ms, ka_ms, ka_max;
	enum rdzv_jstate state;		/* only via job_enter() */
	uint32_t	round;
	uint32_t	restarts;
	uint32_t	gws, world;	/* of the decided round */
	char		master[RDZV_ADDR_MAX + 1];	/* its store */
	uint16_t	master_port;
	int		started;	/* a round was decided once */
	int		carried;	/* nodes carried a round here (carry.c) */
	uint64_t	seq;
	TAILQ_HEAD(, node) nodes;
	struct node	*hash[NODE_BUCKETS];	/* by (host, pid, local id) */
	size_t		nnodes;
	size_t		count[RDZV_N__COUNT];
	/* The nodes as decide() sees them (node.c keeps them): one slot
	 * per node, slot_node[] the way back, dcount[] per decide state;
	 * order[] is decide()'s answer; all with room for cap nodes. */
	struct decide_node *view;
	struct node	**slot_node;
	struct decide_place *order;
	size_t		cap;
	size_t		dcount[DECIDE__NSTATES];
	struct event	*last_call;
	struct timespec	last_call_at;	/* monotonic deadline when armed */
	int		last_call_armed;
	struct event	*join_timer;
	struct event	*status_timer;
	int		status_armed;
	struct event	*orphan_timer;	/* no agent connected (job_bound.c) */
	char		owner[RDZV_ADDR_MAX + 1];	/* creator's address */
	struct rdzv_msg	*end;		/* FINISHED or FAIL, once CLOSED */
};

struct rdzv {
	struct event_base *base;
	struct rdzv_io	io;
	void		*arg;
	TAILQ_HEAD(, job) jobs;
	struct job	*hash[JOB_BUCKETS];	/* by run id */
	size_t		njobs;
	uint64_t	npeers;		/* peers ever: their log ids */
	struct rdzv_stats stats;	/* rdzv_stats() */
	struct auth_key	*key;		/* rdzv_set_auth(); NULL: none */
	struct rdzv_limits lim;		/* rdzv_set_limits() */
	time_t		refused_logged, orphan_logged;	/* log rate limits */
	uint64_t	refused_quiet, orphan_quiet;	/* not logged since */
};

struct rdzv_peer {
	struct rdzv	*r;
	void		*conn;
	uint64_t	id;		/* for log lines */
	enum rdzv_pstate state;		/* only via peer_enter() */
	char		snonce[AUTH_HEX_LEN + 1];
	struct node	*node;		/* set in PEER_JOINED only */
	struct carry	*carry;		/* RESUME, until its JOIN */
};

/* Milliseconds as a timeval. */
static inline struct timeval
ms_tv(uint32_t ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

	return tv;
}

/* job.c */
struct job *job_new(struct rdzv *, const struct rdzv_msg *);
void	job_free(struct job *);
struct job *job_find(const struct rdzv *, const char *run_id);
void	job_dispatch(struct job *, enum job_event, struct node *);
void	job_dispatch_node(struct node *, enum node_event);
void	job_fail(struct job *, uint8_t, const char *);
void	job_round_to(struct job *, struct node *);
void	job_status_to(struct job *, struct node *);
void	job_spent(struct job *, struct node *, uint32_t carried);

/* carry.c */
struct carry *carry_new(const struct rdzv_msg *);
void	carry_drop(struct node *);
void	carry_join(struct job *, struct node *, struct carry *);
int	carry_resumed(struct job *, struct node *, struct carry *);
int	carry_round(struct job *, const struct decide_out *, int *cont);
int	carry_done(const struct node *);
void	carry_forget(struct job *);

/* job_bound.c */
const char *job_bound_admit(struct rdzv_peer *, char *owner, size_t len,
	    char *why, size_t whylen);
void	job_bound_orphan_check(struct job *);

/* node.c */
struct node *node_new(struct job *, struct rdzv_peer *,
	    const struct rdzv_msg *);
struct node *node_find(const struct job *, const struct rdzv_msg *);
void	node_remove(struct node *);
void	node_enter(struct node *, enum rdzv_nstate);
void	node_alive(struct node *);
void	node_send(struct node *, const struct rdzv_msg *);
void	node_set_peer(struct node *, struct rdzv_peer *);
void	node_place(struct node *, int group_rank, uint32_t rank_base);
void	node_gone(struct node *);
void	node_view_free(struct job *);

/* rdzv_peer.c */
void	peer_attach(struct rdzv_peer *, struct node *);
void	peer_detach(struct rdzv_peer *);

#endif /* CGRUN_RDZV_IMPL_H */

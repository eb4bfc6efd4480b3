/*
 * rdzv.h: the rendezvous engine.  It keeps every job (--rdzv-id) a daemon
 * serves, decides each job's rounds (who is in, group ranks, rank offsets,
 * the job store), counts the job-wide restart budget and declares nodes
 * dead when their keep-alives stop.  Semantics: docs/protocol.md and
 * cgrun(1), RENDEZVOUS; torchrun's c10d backend is the model.
 *
 * The engine never touches sockets: a transport (rdzv_attach() for a
 * store's native connections, or a test) creates one peer per connection,
 * feeds it decoded messages and tells it when the connection is gone; the
 * engine answers through rdzv_io.  Timers run on the given event_base.
 */
#ifndef CGRUN_RDZV_H
#define CGRUN_RDZV_H

#include <stddef.h>
#include <stdint.h>

#include "rdzv_proto.h"

struct event_base;
struct evbuffer;
struct store;
struct rdzv;
struct rdzv_peer;

struct rdzv_io {
	/* Queue one message to the connection conn. */
	void	(*send)(void *conn, const struct rdzv_msg *, void *arg);
	/* The peer's address without its port, for max-jobs-per-address;
	 * NULL (the hook or its result): the limit does not apply. */
	const char *(*addr)(void *conn, char *buf, size_t len);
};

/* What a peer can make the engine hold (job_bound.c); 0: no limit. */
struct rdzv_limits {
	size_t		max_jobs;		/* open jobs in all */
	size_t		max_jobs_per_addr;	/* created from one address,
						 * unauthenticated engines only */
	uint32_t	orphan_ms;	/* forget a job no agent is connected
					 * to after this; 0: keep-alive only */
};
void	rdzv_limits_default(struct rdzv_limits *);
void	rdzv_set_limits(struct rdzv *, const struct rdzv_limits *);

/* Job states and node states, as rdzv_job_info reports them. */
enum rdzv_jstate { RDZV_J_JOINING, RDZV_J_RUNNING, RDZV_J_CLOSED,
	RDZV_J__COUNT };
enum rdzv_nstate {
	RDZV_N_WAIT,		/* in the round being formed */
	RDZV_N_SPARE,		/* beyond MAX while a round runs: parked */
	RDZV_N_ACTIVE,		/* a member of the running round */
	RDZV_N_STOPPING,	/* told RESTART; its STOPPED not heard yet */
	RDZV_N_DONE,		/* a member whose workers all exited 0 */
	RDZV_N_FAILED,		/* a member whose workers failed */
	RDZV_N__COUNT
};

struct rdzv_job_info {
	enum rdzv_jstate state;
	uint32_t	round;
	uint32_t	restarts;
	size_t		nodes;			/* known nodes, any state */
	size_t		count[RDZV_N__COUNT];	/* nodes per state */
};

struct rdzv *rdzv_new(struct event_base *, const struct rdzv_io *, void *arg);
void	rdzv_free(struct rdzv *);

/* A new connection: conn is the transport's handle, given back in send. */
struct rdzv_peer *rdzv_peer_new(struct rdzv *, void *conn);
/* One message from the peer; -1: protocol error (ERROR was sent): close. */
int	rdzv_peer_msg(struct rdzv_peer *, const struct rdzv_msg *);
/* Decode and handle every complete frame in `in`; -1: close. */
int	rdzv_peer_input(struct rdzv_peer *, struct evbuffer *in);
/* The connection is gone; frees the peer.  Its node stays until the
 * keep-alive window ends (it may reconnect), then is dead. */
void	rdzv_peer_gone(struct rdzv_peer *);

/* Serve the engine on a store's native connections ("CGRN..."). */
struct rdzv *rdzv_attach(struct store *, struct event_base *);

/* Introspection for tests, benchmarks and logs. */
size_t	rdzv_njobs(const struct rdzv *);
int	rdzv_job_info(const struct rdzv *, const char *run_id,
	    struct rdzv_job_info *);
const char *rdzv_jstate_name(enum rdzv_jstate);
const char *rdzv_nstate_name(enum rdzv_nstate);

/* The server is going away: every open job fails (FAIL, reason CLOSED,
 * with why) so its agents exit with a clear message instead of waiting
 * for keep-alives to time out.  Returns the number of connected nodes told. */
size_t	rdzv_shutdown(struct rdzv *, const char *why);

/* Engine-wide counters since start (cgrun-rdzvd's /metrics). */
struct rdzv_stats {
	uint64_t	jobs_created;
	uint64_t	rounds;		/* rounds decided */
	uint64_t	restarts;	/* restarts spent on worker failures */
	uint64_t	nodes_dead;	/* nodes whose keep-alives stopped */
	uint64_t	auth_failures;	/* AUTH with a wrong proof */
	uint64_t	jobs_refused;	/* JOIN over max-jobs(-per-address) */
	uint64_t	jobs_orphaned;	/* forgotten after job-orphan-timeout */
};
void	rdzv_stats(const struct rdzv *, struct rdzv_stats *);

/* Cells of the engine's job tables with no action, or ignored without a
 * reason (tests: 0). */
size_t	rdzv_table_holes(void);

/* Require the native handshake of protocol version 2 (auth.h): clients
 * must prove they know key (copied; NULL: no authentication).  -1 on
 * ENOMEM. */
struct auth_key;
int	rdzv_set_auth(struct rdzv *, const struct auth_key *);

/* One job and one node as rdzv_walk() shows them (cgrun-rdzvd's /status). */
struct rdzv_job_view {
	const char	*run_id;
	struct rdzv_job_info info;
	uint32_t	min_nodes, max_nodes, max_restarts;
};
struct rdzv_node_view {
	const char	*host;		/* as the node named itself */
	const char	*addr;		/* its job store address */
	uint16_t	port;
	uint32_t	pid, nproc;
	int32_t		node_rank;	/* --node-rank, or -1 */
	enum rdzv_nstate state;
	int		connected;
	uint64_t	last_seen_ms;	/* since its last message (keep-alive) */
};
/* Call job() for every job, then node() for each of its nodes. */
void	rdzv_walk(const struct rdzv *,
	    void (*job)(const struct rdzv_job_view *, void *),
	    void (*node)(const struct rdzv_node_view *, void *), void *arg);
/* The same for at most limit jobs from the offset-th on (in creation
 * order), and at most max_nodes nodes of each: the cost is the page's,
 * plus skipping offset list entries.  Returns the jobs shown. */
size_t	rdzv_walk_page(const struct rdzv *, size_t offset, size_t limit,
	    size_t max_nodes,
	    void (*job)(const struct rdzv_job_view *, void *),
	    void (*node)(const struct rdzv_node_view *, void *), void *arg);

#endif /* CGRUN_RDZV_H */

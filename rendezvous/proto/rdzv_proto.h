/*
 * rdzv_proto.h: the native rendezvous protocol between cgrun agents and
 * the rendezvous engine (cgrun-rdzvd, or an agent hosting it in-process).
 * docs/protocol.md is the specification; this header is its codec.
 *
 * A connection starts with the 4 bytes WIRE_NATIVE_MAGIC ("CGRN") on the
 * store's port, then carries frames both ways:
 *
 *	u32 length	bytes after this field (op + fields), little-endian
 *	u8  op		RDZV_OP_* (0x80 and above: outside torch's opcodes)
 *	fields		fixed per op: u8/u16/u32/i32 little-endian, strings
 *			as u16 length + bytes (no NUL), each with a maximum
 *
 * The first client frame is HELLO carrying the protocol version; nothing
 * else is accepted before it.  The codec is pure: no allocation, no I/O.
 */
#ifndef CGRUN_RDZV_PROTO_H
#define CGRUN_RDZV_PROTO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define RDZV_PROTO_VERSION	1
#define RDZV_PROTO_VERSION_AUTH	2	/* HELLO: I authenticate (auth.h) */
#define RDZV_PROTO_VERSION_SPENT 3	/* WELCOME: SPENT understood */
#define RDZV_PROTO_VERSION_RESUME 4	/* WELCOME: RESUME understood */

/* Named maxima of every variable field (bytes, without a NUL). */
#define RDZV_FRAME_MAX		2048	/* length field of one frame */
#define RDZV_RUNID_MAX		255	/* --rdzv-id */
#define RDZV_HOST_MAX		255	/* node host name (rank sort key) */
#define RDZV_ADDR_MAX		255	/* job store host */
#define RDZV_TEXT_MAX		1023	/* reasons and error messages */
#define RDZV_NODES_MAX		100000	/* --nnodes MAX */
#define RDZV_NPROC_MAX		65536	/* workers on one node */
#define RDZV_TIMEOUT_MAX	(7u * 24 * 3600 * 1000)	/* any _ms field */
#define RDZV_NONCE_MAX		64	/* hex nonce or proof (auth.h) */

/* Opcodes.  Client to server: */
#define RDZV_OP_HELLO		0x80	/* version */
#define RDZV_OP_JOIN		0x81	/* join a job's next round */
#define RDZV_OP_KEEPALIVE	0x82	/* I am alive */
#define RDZV_OP_FAILED		0x83	/* my workers failed (and are stopped) */
#define RDZV_OP_STOPPED		0x84	/* my workers stopped after RESTART */
#define RDZV_OP_DONE		0x85	/* my workers all exited 0 */
#define RDZV_OP_LEAVE		0x86	/* I leave the job (not closing it) */
#define RDZV_OP_AUTH		0x87	/* v2: my nonce and proof */
#define RDZV_OP_SPENT		0x88	/* after WELCOME(3): restarts I saw spent */
#define RDZV_OP_RESUME		0x89	/* after WELCOME(4), before JOIN: my
					 * last round and what its workers did */
/* Server to client: */
#define RDZV_OP_WELCOME		0xC0	/* version accepted */
#define RDZV_OP_STATUS		0xC1	/* progress of the round being formed */
#define RDZV_OP_ROUND		0xC2	/* the round is decided: your place */
#define RDZV_OP_RESTART		0xC3	/* stop your workers, then STOPPED */
#define RDZV_OP_FINISHED	0xC4	/* every node done: exit 0 */
#define RDZV_OP_FAIL		0xC5	/* the job cannot go on: exit */
#define RDZV_OP_ERROR		0xC6	/* protocol error; connection closes */
#define RDZV_OP_CHALLENGE	0xC7	/* v2: the server's nonce */
#define RDZV_OP_AUTHOK		0xC8	/* v2: the server's proof */

/* FAIL reasons. */
#define RDZV_FAIL_TIMEOUT	1	/* join_timeout passed before a round */
#define RDZV_FAIL_BELOW_MIN	2	/* fewer than MIN nodes remain */
#define RDZV_FAIL_RESTARTS	3	/* workers failed, no restarts left */
#define RDZV_FAIL_CLOSED	4	/* the job is already over */
#define RDZV_FAIL_IN_USE	5	/* run_id held by a job with other
					 * nodes/max_restarts: another job */

/* STATUS roles. */
#define RDZV_ROLE_WAITING	0	/* in the round being formed */
#define RDZV_ROLE_SPARE		1	/* beyond MAX nodes: parked */

/* RESUME.workers: what the client's workers of its last round did. */
#define RDZV_WORKERS_RUNNING	0	/* they run */
#define RDZV_WORKERS_DONE	1	/* all exited 0 (DONE) */
#define RDZV_WORKERS_FAILED	2	/* they failed and are stopped (FAILED) */
#define RDZV_WORKERS_STOPPING	3	/* stopping after a RESTART */
#define RDZV_WORKERS_STOPPED	4	/* stopped after a RESTART (STOPPED) */
#define RDZV_WORKERS_MAX	4

/* "No deadline" in STATUS.last_call_ms; "no --node-rank" in JOIN. */
#define RDZV_NO_DEADLINE	0xFFFFFFFFu
#define RDZV_NO_NODE_RANK	(-1)

/* Decoder results. */
#define RDZV_PROTO_OK		0
#define RDZV_PROTO_MORE		1
#define RDZV_PROTO_ERROR	(-1)

/*
 * One decoded message: every op uses a subset of these fields (the field
 * table in rdzv_proto.c says which); strings are NUL-terminated.
 */
struct rdzv_msg {
	uint8_t		op;
	uint16_t	version;		/* HELLO WELCOME */
	char		run_id[RDZV_RUNID_MAX + 1];	/* JOIN */
	char		host[RDZV_HOST_MAX + 1];	/* JOIN */
	uint32_t	pid;			/* JOIN */
	uint32_t	local_id;		/* JOIN */
	uint32_t	nproc;			/* JOIN: local world size */
	int32_t		node_rank;		/* JOIN: --node-rank or -1 */
	uint32_t	min_nodes;		/* JOIN STATUS */
	uint32_t	max_nodes;		/* JOIN STATUS */
	uint32_t	max_restarts;		/* JOIN */
	uint32_t	join_timeout_ms;	/* JOIN */
	uint32_t	last_call_ms;		/* JOIN STATUS (time left) */
	uint32_t	close_ms;		/* JOIN */
	uint32_t	keepalive_ms;		/* JOIN */
	uint32_t	keepalive_max;		/* JOIN */
	char		addr[RDZV_ADDR_MAX + 1];	/* JOIN (mine) ROUND RESUME
						 * (rank 0's) */
	uint16_t	port;			/* JOIN ROUND RESUME */
	uint32_t	round;			/* STATUS ROUND RESTART RESUME */
	uint32_t	joined;			/* STATUS: nodes in the round */
	uint8_t		role;			/* STATUS */
	int32_t		group_rank;		/* ROUND RESUME */
	uint32_t	group_world_size;	/* ROUND RESUME */
	uint32_t	rank_base;		/* ROUND RESUME */
	uint32_t	world_size;		/* ROUND RESUME */
	uint32_t	restart_count;		/* ROUND SPENT RESUME */
	uint8_t		workers;		/* RESUME: RDZV_WORKERS_* */
	uint8_t		reason;			/* FAIL */
	char		text[RDZV_TEXT_MAX + 1];	/* FAILED RESTART FAIL ERROR
						 * RESUME */
	char		nonce[RDZV_NONCE_MAX + 1];	/* AUTH CHALLENGE */
	char		proof[RDZV_NONCE_MAX + 1];	/* AUTH AUTHOK */
};

/* The op's name ("JOIN"), or NULL for an unknown op. */
const char *rdzv_proto_opname(uint8_t op);

/*
 * Decode one frame from buf[0..len).  OK: *m filled, *used = frame bytes.
 * MORE: the frame is incomplete (nothing consumed).  ERROR: err says what
 * was wrong (length over RDZV_FRAME_MAX, seen as soon as the length field
 * is in, unknown op, a field over its maximum, bytes left over); the
 * connection must be closed.
 */
int	rdzv_proto_decode(const void *buf, size_t len, struct rdzv_msg *m,
	    size_t *used, char *err, size_t errlen);
#define RDZV_PROTO_ERRLEN	64	/* room for every decoding error */

/* Encode m into buf (cap bytes); the frame length, or -1 (unknown op,
 * a string over its maximum, or cap too small). */
ssize_t	rdzv_proto_encode(const struct rdzv_msg *m, void *buf, size_t cap);

/* Fill m with a zeroed message of op. */
void	rdzv_proto_init(struct rdzv_msg *m, uint8_t op);

#endif /* CGRUN_RDZV_PROTO_H */

/*
 * wire.h: TCPStore wire protocol constants shared by the server
 * (rendezvous/) and the client (worker-lib/store.c).  The specification is
 * docs/tcpstore-protocol.md's summary of torch's protocol: two dialects,
 * torch 1.13 (no handshake) and torch 2.x (VALIDATE + PING), host byte
 * order (little-endian), keys and values as u64 length + bytes.
 *
 * Internal header: not installed.
 */
#ifndef CGRUN_WIRE_H
#define CGRUN_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define WIRE_MAGIC		0x3C85F7CEu	/* VALIDATE payload (2.x) */

/* Dialect of one connection, chosen from its first bytes. */
enum wire_dialect {
	WIRE_UNKNOWN = 0,
	WIRE_V1,	/* torch 1.13: no handshake, WATCH_KEY */
	WIRE_V2,	/* torch 2.x: VALIDATE first, PING, APPEND, MULTI_*, ... */
	WIRE_NATIVE	/* cgrun rendezvous protocol (docs/protocol.md) */
};

/* Operations, numbered independently of either dialect. */
enum wire_op {
	WOP_VALIDATE, WOP_SET, WOP_COMPARE_SET, WOP_GET, WOP_ADD, WOP_CHECK,
	WOP_WAIT, WOP_GETNUMKEYS, WOP_WATCH_KEY, WOP_DELETE_KEY, WOP_APPEND,
	WOP_MULTI_GET, WOP_MULTI_SET, WOP_CANCEL_WAIT, WOP_PING,
	WOP_QUEUE_PUSH, WOP_QUEUE_POP, WOP_QUEUE_LEN, WOP_LIST_KEYS,
	WOP_BARRIER,
	WOP__COUNT,
	WOP_INVALID = -1
};

/* Opcode bytes of torch 1.13. */
enum wire_v1_code {
	V1_SET = 0, V1_COMPARE_SET = 1, V1_GET = 2, V1_ADD = 3, V1_CHECK = 4,
	V1_WAIT = 5, V1_GETNUMKEYS = 6, V1_WATCH_KEY = 7, V1_DELETE_KEY = 8
};

/* Opcode bytes of torch 2.x (QUEUE_* 2.8+, LIST_KEYS/BARRIER later). */
enum wire_v2_code {
	V2_VALIDATE = 0, V2_SET = 1, V2_COMPARE_SET = 2, V2_GET = 3,
	V2_ADD = 4, V2_CHECK = 5, V2_WAIT = 6, V2_GETNUMKEYS = 7,
	V2_DELETE_KEY = 8, V2_APPEND = 9, V2_MULTI_GET = 10, V2_MULTI_SET = 11,
	V2_CANCEL_WAIT = 12, V2_PING = 13, V2_QUEUE_PUSH = 14,
	V2_QUEUE_POP = 15, V2_QUEUE_LEN = 16, V2_LIST_KEYS = 17, V2_BARRIER = 18
};

/* One-byte response codes. */
#define WIRE_CHECK_READY	0
#define WIRE_CHECK_NOT_READY	1
#define WIRE_WAIT_STOP		0	/* STOP_WAITING */
#define WIRE_WAIT_CANCELED	1	/* WAIT_CANCELED (2.x) */
#define WIRE_WATCH_UPDATED	0
#define WIRE_WATCH_CREATED	1
#define WIRE_WATCH_DELETED	2
#define WIRE_WATCH_REGISTERED	3

/* First bytes of a native (cgrun rendezvous) connection. */
#define WIRE_NATIVE_MAGIC	"CGRN"
#define WIRE_NATIVE_MAGIC_LEN	4

/*
 * Server-side codec (worker-lib/wire.c).
 *
 * wire_parse() is a pure function over a buffer: it never allocates, never
 * blocks, and returns WIRE_OK (one whole request of `consumed` bytes),
 * WIRE_MORE (need more bytes; `req->need` says how many in total, at least)
 * or WIRE_ERROR (`req->error` names why).  Every length and count is checked
 * against the limits as soon as its 8 bytes are in, before any of the field
 * is buffered.  Zero the request (wire_req_init) before the first call for a
 * new request; between WIRE_MORE calls keep it, with the same bytes at the
 * start of buf plus more: long key lists resume where they stopped.
 */
enum wire_status { WIRE_ERROR = -1, WIRE_OK = 0, WIRE_MORE = 1 };

/* Field limits the parser enforces. */
struct wire_limits {
	uint64_t max_key;	/* bytes in one key */
	uint64_t max_value;	/* bytes in one value */
	uint64_t max_keys;	/* keys (or key/value pairs) in one request */
	uint64_t max_request;	/* bytes in one whole request */
};

/* Defaults: at least what torch's own stores accept (libuv: 8 KiB keys,
 * 8 MiB values, 128 Ki keys per request; legacy: unbounded). */
#define WIRE_DEFAULT_MAX_KEY		(1024u * 1024)		/* 1 MiB */
#define WIRE_DEFAULT_MAX_VALUE		(64u * 1024 * 1024)	/* 64 MiB */
#define WIRE_DEFAULT_MAX_KEYS		(128u * 1024)
#define WIRE_DEFAULT_MAX_REQUEST	(256u * 1024 * 1024)	/* 256 MiB */

/* A borrowed byte string inside the parsed buffer. */
struct wire_str {
	const uint8_t	*p;
	uint64_t	 len;
};

/* One parsed request; pointers borrow from the caller's buffer. */
struct wire_req {
	enum wire_op	 op;
	uint8_t		 code;		/* opcode byte as sent */
	struct wire_str	 key;		/* SET GET ADD CAS DELETE APPEND WATCH QUEUE_* BARRIER */
	struct wire_str	 val;		/* SET APPEND QUEUE_PUSH; CAS expected */
	struct wire_str	 val2;		/* CAS desired */
	int64_t		 num;		/* ADD delta, BARRIER world size */
	uint32_t	 u32;		/* VALIDATE magic, PING nonce */
	uint64_t	 count;		/* CHECK WAIT MULTI_GET: keys; MULTI_SET: pairs */
	struct wire_str	 list;		/* the count items, back to back (wire_list_next) */
	const char	*error;		/* WIRE_ERROR: static reason */
	uint64_t	 bad;		/* WIRE_ERROR: offending number (length, opcode) */
	uint64_t	 need;		/* WIRE_MORE: total bytes needed, at least */
	/* resume state for item lists (private) */
	uint64_t	 scan_pos;
	uint64_t	 scan_items;
};

/* Reset a request before parsing a new one. */
void	wire_req_init(struct wire_req *);
/* Fill limits with the defaults above. */
void	wire_limits_default(struct wire_limits *);
/* Pick a dialect from a connection's first bytes; WIRE_UNKNOWN: need more. */
enum wire_dialect wire_detect(const uint8_t *buf, size_t len);
/* Parse one request of the dialect from buf (see above). */
enum wire_status wire_parse(enum wire_dialect, const uint8_t *buf, size_t len,
	    const struct wire_limits *, struct wire_req *, size_t *consumed);
/* Next item of an already-parsed list; 0 at its end. */
int	wire_list_next(struct wire_str *list, struct wire_str *item);
/* Name of an operation for logs. */
const char *wire_op_name(enum wire_op);

/* Reply encoders: little-endian, return the bytes written. */
size_t	wire_enc_u32(uint8_t out[4], uint32_t);
size_t	wire_enc_i64(uint8_t out[8], int64_t);
size_t	wire_enc_u64(uint8_t out[8], uint64_t);
/* Little-endian loads. */
uint32_t wire_get_u32(const uint8_t *);
uint64_t wire_get_u64(const uint8_t *);

#endif /* CGRUN_WIRE_H */

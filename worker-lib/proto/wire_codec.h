/*
 * wire_codec.h: the TCPStore wire protocol, the half shared by the client
 * (libcgrun, worker-lib/store/) and the server (rendezvous/, which adds its
 * request parser in rendezvous/proto/wire.h): dialects, operations and
 * their opcode bytes, request layouts, reply codes, every limit, the
 * operation names, and the request encoder.
 *
 * The specification is docs/store.md's summary of torch's protocol: two
 * dialects, torch 1.13 (no handshake) and torch 2.x (VALIDATE + PING),
 * little-endian integers, keys and values as u64 length + bytes.
 *
 * Internal header: not installed.
 */
#ifndef CGRUN_WIRE_CODEC_H
#define CGRUN_WIRE_CODEC_H

#include <stddef.h>
#include <stdint.h>

#define WIRE_MAGIC		0x3C85F7CEu	/* VALIDATE payload (2.x) */

/* Dialect of one connection, chosen from its first bytes. */
enum wire_dialect {
	WIRE_UNKNOWN = 0,
	WIRE_V1,	/* torch 1.13: no handshake, WATCH_KEY */
	WIRE_V2,	/* torch 2.x: VALIDATE first, PING, APPEND, MULTI_*, ... */
	WIRE_NATIVE,	/* cgrun rendezvous protocol (docs/protocol.md) */
	WIRE__DIALECTS
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

/*
 * Field kinds making up a request after its opcode byte (wire_op_layout):
 * key and values as u64 length + bytes, I64 and U32 little-endian, KEYS a
 * u64 count then that many keys, PAIRS a u64 count then key, value pairs.
 */
enum wire_field { WF_END = 0, WF_KEY, WF_VAL, WF_VAL2, WF_I64, WF_U32,
	WF_KEYS, WF_PAIRS };
#define WIRE_FIELDS_MAX		4	/* fields of one request, at most */

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

/* Bytes of the 2.x client's opening: VALIDATE(magic) then PING(nonce). */
#define WIRE_HELLO_LEN		10

/*
 * Limits.  The server's parser enforces a struct wire_limits (per daemon,
 * from its configuration), by default at least what torch's own stores
 * accept (libuv: 8 KiB keys, 8 MiB values, 128 Ki keys per request;
 * legacy: unbounded).  The client's own limits are public API
 * (CGRUN_STORE_MAX_KEY, _MAX_VALUE, _MAX_KEYS in include/cgrun/store.h,
 * 64 KiB, 1 GiB, 128 Ki): a client reply value is refused above
 * CGRUN_STORE_MAX_VALUE before anything is allocated.
 */
struct wire_limits {
	uint64_t max_key;	/* bytes in one key */
	uint64_t max_value;	/* bytes in one value */
	uint64_t max_keys;	/* keys (or key/value pairs) in one request */
	uint64_t max_request;	/* bytes in one whole request */
};
#define WIRE_DEFAULT_MAX_KEY		(1024u * 1024)		/* 1 MiB */
#define WIRE_DEFAULT_MAX_VALUE		(64u * 1024 * 1024)	/* 64 MiB */
#define WIRE_DEFAULT_MAX_KEYS		(128u * 1024)
#define WIRE_DEFAULT_MAX_REQUEST	(256u * 1024 * 1024)	/* 256 MiB */

/* A borrowed byte string. */
struct wire_str {
	const uint8_t	*p;
	uint64_t	 len;
};

/*
 * One request to encode.  Which fields are sent is the op's layout;
 * keys are sent as torch's TCPStore client sends them: "/" then, with a
 * prefix, prefix "/" (PrefixStore's join), then the key.
 */
struct wire_request {
	enum wire_op	 op;
	const char	*prefix;	/* NULL: none */
	const char	*key;		/* KEY */
	const void	*val;		/* VAL (CAS: expected) */
	size_t		 val_len;
	const void	*val2;		/* VAL2 (CAS: desired) */
	size_t		 val2_len;
	int64_t		 num;		/* I64: ADD delta, BARRIER world size */
	uint32_t	 u32;		/* U32: VALIDATE magic, PING nonce */
	const char *const *keys;	/* KEYS, PAIRS: count keys */
	const void *const *vals;	/* PAIRS: count values */
	const size_t	*lens;
	size_t		 count;
};

/* Name of an operation for logs and metrics ("SET"; "?" if out of range). */
const char *wire_op_name(enum wire_op);
/* Opcode byte of op in dialect d, or -1 if d has no such operation. */
int	wire_op_code(enum wire_dialect d, enum wire_op op);
/* Operation of an opcode byte in dialect d, or WOP_INVALID. */
enum wire_op wire_op_of_code(enum wire_dialect d, uint8_t code);
/* The op's request layout: WIRE_FIELDS_MAX field kinds, WF_END-padded. */
const uint8_t *wire_op_layout(enum wire_op);

/*
 * Encode one request of dialect d into out (cap bytes).  Pure, like
 * snprintf: returns the request's whole length and writes it only when it
 * fits (nothing past cap is ever written); 0 when d has no such op.
 */
size_t	wire_encode(enum wire_dialect d, const struct wire_request *,
	    uint8_t *out, size_t cap);

#endif /* CGRUN_WIRE_CODEC_H */

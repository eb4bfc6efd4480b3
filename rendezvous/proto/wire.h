/*
 * wire.h: the server's half of the TCPStore codec: dialect detection, the
 * incremental request parser and the reply encoders.  The half shared with
 * the client (operations, opcodes, layouts, reply codes, limits, names,
 * request encoder) is worker-lib/proto/wire_codec.h, included here; libcgrun
 * links only that half.
 *
 * Internal header: not installed.
 */
#ifndef CGRUN_WIRE_H
#define CGRUN_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "le.h"
#include "wire_codec.h"

/*
 * Server-side parser (rendezvous/proto/wire_parse.c).
 *
 * wire_parse() is a pure function over a buffer: it never allocates, never
 * blocks, and returns WIRE_OK (one whole request of `consumed` bytes),
 * WIRE_MORE (need more bytes; `req->need` says how many in total, at least)
 * or WIRE_ERROR (`req->error` names why).  Every length and count is checked
 * against the limits (struct wire_limits, wire_codec.h) as soon as its 8
 * bytes are in, before any of the field is buffered.  Zero the request
 * (wire_req_init) before the first call for a new request; between
 * WIRE_MORE calls keep it, with the same bytes at the start of buf plus
 * more: long key lists resume where they stopped.
 */
enum wire_status { WIRE_ERROR = -1, WIRE_OK = 0, WIRE_MORE = 1 };

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
/* Fill limits with the defaults (WIRE_DEFAULT_*, wire_codec.h). */
void	wire_limits_default(struct wire_limits *);
/* Pick a dialect from a connection's first bytes; WIRE_UNKNOWN: need more. */
enum wire_dialect wire_detect(const uint8_t *buf, size_t len);
/* Parse one request of the dialect from buf (see above). */
enum wire_status wire_parse(enum wire_dialect, const uint8_t *buf, size_t len,
	    const struct wire_limits *, struct wire_req *, size_t *consumed);
/* Next item of an already-parsed list; 0 at its end. */
int	wire_list_next(struct wire_str *list, struct wire_str *item);

/* Reply encoders (le.h under the names the server uses): bytes written. */
static inline size_t
wire_enc_u32(uint8_t out[4], uint32_t v)
{
	le_put_u32(out, v);
	return 4;
}

/* Store a little-endian u64 reply field; 8. */
static inline size_t
wire_enc_u64(uint8_t out[8], uint64_t v)
{
	le_put_u64(out, v);
	return 8;
}

/* Store a little-endian two's complement i64 reply field; 8. */
static inline size_t
wire_enc_i64(uint8_t out[8], int64_t v)
{
	le_put_u64(out, (uint64_t)v);
	return 8;
}

/* Little-endian loads of request fields (le.h). */
static inline uint32_t
wire_get_u32(const uint8_t *p)
{
	return le_get_u32(p);
}

/* Load a little-endian u64 request field. */
static inline uint64_t
wire_get_u64(const uint8_t *p)
{
	return le_get_u64(p);
}

#endif /* CGRUN_WIRE_H */

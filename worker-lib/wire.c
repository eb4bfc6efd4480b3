/*
 * wire.c: server-side codec of the TCPStore wire protocol: dialect
 * detection, a pure incremental request parser and reply encoders.
 *
 * The parser never allocates and never trusts a length or a count before
 * checking it against the limits; see wire.h for its contract.
 */
#include <stdint.h>
#include <string.h>

#include "wire.h"

/* Field kinds making up a request after its opcode byte. */
enum wire_field { F_END = 0, F_KEY, F_VAL, F_VAL2, F_I64, F_U32, F_KEYS,
	F_PAIRS };

/* Request layout per operation (at most one list, always last). */
static const uint8_t wire_layout[WOP__COUNT][4] = {
	[WOP_VALIDATE]		= { F_U32 },
	[WOP_SET]		= { F_KEY, F_VAL },
	[WOP_COMPARE_SET]	= { F_KEY, F_VAL, F_VAL2 },
	[WOP_GET]		= { F_KEY },
	[WOP_ADD]		= { F_KEY, F_I64 },
	[WOP_CHECK]		= { F_KEYS },
	[WOP_WAIT]		= { F_KEYS },
	[WOP_GETNUMKEYS]	= { F_END },
	[WOP_WATCH_KEY]		= { F_KEY },
	[WOP_DELETE_KEY]	= { F_KEY },
	[WOP_APPEND]		= { F_KEY, F_VAL },
	[WOP_MULTI_GET]		= { F_KEYS },
	[WOP_MULTI_SET]		= { F_PAIRS },
	[WOP_CANCEL_WAIT]	= { F_END },
	[WOP_PING]		= { F_U32 },
	[WOP_QUEUE_PUSH]	= { F_KEY, F_VAL },
	[WOP_QUEUE_POP]		= { F_KEY },
	[WOP_QUEUE_LEN]		= { F_KEY },
	[WOP_LIST_KEYS]		= { F_END },
	[WOP_BARRIER]		= { F_KEY, F_I64 },
};

/* torch 1.13 opcode bytes to operations. */
static const int8_t wire_v1_ops[] = {
	[V1_SET] = WOP_SET, [V1_COMPARE_SET] = WOP_COMPARE_SET,
	[V1_GET] = WOP_GET, [V1_ADD] = WOP_ADD, [V1_CHECK] = WOP_CHECK,
	[V1_WAIT] = WOP_WAIT, [V1_GETNUMKEYS] = WOP_GETNUMKEYS,
	[V1_WATCH_KEY] = WOP_WATCH_KEY, [V1_DELETE_KEY] = WOP_DELETE_KEY,
};

/* torch 2.x opcode bytes to operations. */
static const int8_t wire_v2_ops[] = {
	[V2_VALIDATE] = WOP_VALIDATE, [V2_SET] = WOP_SET,
	[V2_COMPARE_SET] = WOP_COMPARE_SET, [V2_GET] = WOP_GET,
	[V2_ADD] = WOP_ADD, [V2_CHECK] = WOP_CHECK, [V2_WAIT] = WOP_WAIT,
	[V2_GETNUMKEYS] = WOP_GETNUMKEYS, [V2_DELETE_KEY] = WOP_DELETE_KEY,
	[V2_APPEND] = WOP_APPEND, [V2_MULTI_GET] = WOP_MULTI_GET,
	[V2_MULTI_SET] = WOP_MULTI_SET, [V2_CANCEL_WAIT] = WOP_CANCEL_WAIT,
	[V2_PING] = WOP_PING, [V2_QUEUE_PUSH] = WOP_QUEUE_PUSH,
	[V2_QUEUE_POP] = WOP_QUEUE_POP, [V2_QUEUE_LEN] = WOP_QUEUE_LEN,
	[V2_LIST_KEYS] = WOP_LIST_KEYS, [V2_BARRIER] = WOP_BARRIER,
};

static const char *const wire_op_names[WOP__COUNT] = {
	"VALIDATE", "SET", "COMPARE_SET", "GET", "ADD", "CHECK", "WAIT",
	"GETNUMKEYS", "WATCH_KEY", "DELETE_KEY", "APPEND", "MULTI_GET",
	"MULTI_SET", "CANCEL_WAIT", "PING", "QUEUE_PUSH", "QUEUE_POP",
	"QUEUE_LEN", "LIST_KEYS", "BARRIER",
};

static const uint8_t wire_v2_hello[5] = { 0x00, 0xce, 0xf7, 0x85, 0x3c };

/* Name of an operation for logs ("?" when out of range). */
const char *
wire_op_name(enum wire_op op)
{
	if ((int)op < 0 || op >= WOP__COUNT)
		return "?";
	return wire_op_names[op];
}

/* Load a little-endian u32. */
uint32_t
wire_get_u32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24;
}

/* Load a little-endian u64. */
uint64_t
wire_get_u64(const uint8_t *p)
{
	return (uint64_t)wire_get_u32(p) | (uint64_t)wire_get_u32(p + 4) << 32;
}

/* Store a little-endian u32. */
size_t
wire_enc_u32(uint8_t out[4], uint32_t v)
{
	out[0] = (uint8_t)v;
	out[1] = (uint8_t)(v >> 8);
	out[2] = (uint8_t)(v >> 16);
	out[3] = (uint8_t)(v >> 24);
	return 4;
}

/* Store a little-endian u64. */
size_t
wire_enc_u64(uint8_t out[8], uint64_t v)
{
	wire_enc_u32(out, (uint32_t)v);
	wire_enc_u32(out + 4, (uint32_t)(v >> 32));
	return 8;
}

/* Store a little-endian two's complement i64. */
size_t
wire_enc_i64(uint8_t out[8], int64_t v)
{
	return wire_enc_u64(out, (uint64_t)v);
}

/* Fill limits with the defaults. */
void
wire_limits_default(struct wire_limits *l)
{
	l->max_key = WIRE_DEFAULT_MAX_KEY;
	l->max_value = WIRE_DEFAULT_MAX_VALUE;
	l->max_keys = WIRE_DEFAULT_MAX_KEYS;
	l->max_request = WIRE_DEFAULT_MAX_REQUEST;
}

/* Reset a request before parsing a new one. */
void
wire_req_init(struct wire_req *req)
{
	memset(req, 0, sizeof *req);
	req->op = WOP_INVALID;
}

/*
 * Pick a dialect from a connection's first bytes: the 2.x hello
 * (00 ce f7 85 3c) means V2, "CGRN" means native, anything else V1.
 * Returns WIRE_UNKNOWN while the bytes so far are a prefix of either magic.
 */
enum wire_dialect
wire_detect(const uint8_t *buf, size_t len)
{
	const uint8_t *magic;
	size_t mlen, n;

	if (len == 0)
		return WIRE_UNKNOWN;
	if (buf[0] == wire_v2_hello[0]) {
		magic = wire_v2_hello;
		mlen = sizeof wire_v2_hello;
	} else if (buf[0] == (uint8_t)WIRE_NATIVE_MAGIC[0]) {
		magic = (const uint8_t *)WIRE_NATIVE_MAGIC;
		mlen = WIRE_NATIVE_MAGIC_LEN;
	} else
		return WIRE_V1;
	n = len < mlen ? len : mlen;
	if (memcmp(buf, magic, n) != 0)
		return WIRE_V1;
	if (n < mlen)
		return WIRE_UNKNOWN;
	return magic == wire_v2_hello ? WIRE_V2 : WIRE_NATIVE;
}

/* Operation of an opcode byte in a dialect, or WOP_INVALID. */
static enum wire_op
wire_decode_op(enum wire_dialect d, uint8_t code)
{
	if (d == WIRE_V1 && code < sizeof wire_v1_ops)
		return (enum wire_op)wire_v1_ops[code];
	if (d == WIRE_V2 && code < sizeof wire_v2_ops)
		return (enum wire_op)wire_v2_ops[code];
	return WOP_INVALID;
}

/* Record an error and return WIRE_ERROR. */
static enum wire_status
wire_fail(struct wire_req *req, const char *why, uint64_t bad)
{
	req->error = why;
	req->bad = bad;
	return WIRE_ERROR;
}

/* Ask for `need` bytes in total, unless that exceeds the request limit. */
static enum wire_status
wire_more(struct wire_req *req, const struct wire_limits *lim, uint64_t need)
{
	if (need > lim->max_request)
		return wire_fail(req, "request larger than max-request", need);
	req->need = need;
	return WIRE_MORE;
}

/* Take one u64-length-prefixed byte string at *pos, at most max bytes. */
static enum wire_status
wire_take_bytes(const uint8_t *buf, size_t len, uint64_t *pos, uint64_t max,
    const char *what, const struct wire_limits *lim, struct wire_req *req,
    struct wire_str *out)
{
	uint64_t n;

	if (*pos + 8 > len)
		return wire_more(req, lim, *pos + 8);
	n = wire_get_u64(buf + *pos);
	if (n > max)
		return wire_fail(req, what, n);
	if (*pos + 8 + n > lim->max_request)
		return wire_fail(req, "request larger than max-request",
		    *pos + 8 + n);
	if (*pos + 8 + n > len)
		return wire_more(req, lim, *pos + 8 + n);
	out->p = buf + *pos + 8;
	out->len = n;
	*pos += 8 + n;
	return WIRE_OK;
}

/* Take a fixed-width integer field of `width` bytes at *pos. */
static enum wire_status
wire_take_fixed(size_t len, uint64_t *pos, unsigned width,
    const struct wire_limits *lim, struct wire_req *req)
{
	if (*pos + width > len)
		return wire_more(req, lim, *pos + width);
	*pos += width;
	return WIRE_OK;
}

/*
 * Take a counted list of keys (or key/value pairs) at *pos.  Resumes from
 * req->scan_pos/scan_items so a long list arriving slowly is scanned once.
 */
static enum wire_status
wire_take_list(const uint8_t *buf, size_t len, uint64_t *pos, int pairs,
    const struct wire_limits *lim, struct wire_req *req)
{
	struct wire_str item;
	enum wire_status st;
	uint64_t start = *pos + 8, items;

	if (*pos + 8 > len)
		return wire_more(req, lim, *pos + 8);
	req->count = wire_get_u64(buf + *pos);
	if (req->count > lim->max_keys)
		return wire_fail(req, "key count over max-keys-per-request",
		    req->count);
	items = pairs ? req->count * 2 : req->count;
	if (req->scan_pos < start) {
		req->scan_pos = start;
		req->scan_items = 0;
	}
	while (req->scan_items < items) {
		if (pairs && req->scan_items % 2 == 1)
			st = wire_take_bytes(buf, len, &req->scan_pos,
			    lim->max_value, "value length over max-value-size",
			    lim, req, &item);
		else
			st = wire_take_bytes(buf, len, &req->scan_pos,
			    lim->max_key, "key length over max-key-size",
			    lim, req, &item);
		if (st != WIRE_OK)
			return st;
		req->scan_items++;
	}
	req->list.p = buf + start;
	req->list.len = req->scan_pos - start;
	*pos = req->scan_pos;
	return WIRE_OK;
}

/* Parse one field of kind f at *pos into req. */
static enum wire_status
wire_take_field(const uint8_t *buf, size_t len, uint64_t *pos, int f,
    const struct wire_limits *lim, struct wire_req *req)
{
	enum wire_status st;
	uint64_t at = *pos;

	switch (f) {
	case F_KEY:
		return wire_take_bytes(buf, len, pos, lim->max_key,
		    "key length over max-key-size", lim, req, &req->key);
	case F_VAL:
		return wire_take_bytes(buf, len, pos, lim->max_value,
		    "value length over max-value-size", lim, req, &req->val);
	case F_VAL2:
		return wire_take_bytes(buf, len, pos, lim->max_value,
		    "value length over max-value-size", lim, req, &req->val2);
	case F_I64:
		if ((st = wire_take_fixed(len, pos, 8, lim, req)) == WIRE_OK)
			req->num = (int64_t)wire_get_u64(buf + at);
		return st;
	case F_U32:
		if ((st = wire_take_fixed(len, pos, 4, lim, req)) == WIRE_OK)
			req->u32 = wire_get_u32(buf + at);
		return st;
	case F_KEYS:
		return wire_take_list(buf, len, pos, 0, lim, req);
	case F_PAIRS:
		return wire_take_list(buf, len, pos, 1, lim, req);
	}
	return wire_fail(req, "internal: bad field kind", (uint64_t)f);
}

/*
 * Parse one request of dialect d from the first len bytes of buf.
 * Contract: pure; WIRE_OK sets *consumed and borrows pointers into buf;
 * WIRE_MORE sets req->need > len; WIRE_ERROR sets req->error.  A request
 * must be re-parsed from its first byte with the same req until WIRE_OK.
 */
enum wire_status
wire_parse(enum wire_dialect d, const uint8_t *buf, size_t len,
    const struct wire_limits *lim, struct wire_req *req, size_t *consumed)
{
	enum wire_status st;
	uint64_t pos = 1;
	int i;

	req->error = NULL;
	if (len == 0)
		return wire_more(req, lim, 1);
	req->code = buf[0];
	req->op = wire_decode_op(d, buf[0]);
	if (req->op == WOP_INVALID)
		return wire_fail(req, "unknown opcode", buf[0]);
	for (i = 0; i < 4 && wire_layout[req->op][i] != F_END; i++) {
		st = wire_take_field(buf, len, &pos, wire_layout[req->op][i],
		    lim, req);
		if (st != WIRE_OK)
			return st;
	}
	if (pos > lim->max_request)
		return wire_fail(req, "request larger than max-request", pos);
	if (req->op == WOP_VALIDATE && req->u32 != WIRE_MAGIC)
		return wire_fail(req, "wrong VALIDATE magic", req->u32);
	*consumed = (size_t)pos;
	return WIRE_OK;
}

/* Next item of an already-parsed list; returns 0 at its end. */
int
wire_list_next(struct wire_str *list, struct wire_str *item)
{
	uint64_t n;

	if (list->len < 8)
		return 0;
	n = wire_get_u64(list->p);
	if (n > list->len - 8)
		return 0;
	item->p = list->p + 8;
	item->len = n;
	list->p += 8 + n;
	list->len -= 8 + n;
	return 1;
}

/*
 * wire_parse.c: the server's TCPStore request parser: dialect detection
 * and a pure incremental parser driven by the shared table of request
 * layouts (worker-lib/proto/wire_codec.c).
 *
 * The parser never allocates and never trusts a length or a count before
 * checking it against the limits; see wire.h for its contract.
 */
#include <stdint.h>
#include <string.h>

#include "le.h"
#include "wire.h"

/* The 2.x client's first bytes: VALIDATE's opcode and magic. */
static const uint8_t wire_v2_hello[5] = { 0x00, 0xce, 0xf7, 0x85, 0x3c };

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
	n = le_get_u64(buf + *pos);
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
	req->count = le_get_u64(buf + *pos);
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
	case WF_KEY:
		return wire_take_bytes(buf, len, pos, lim->max_key,
		    "key length over max-key-size", lim, req, &req->key);
	case WF_VAL:
		return wire_take_bytes(buf, len, pos, lim->max_value,
		    "value length over max-value-size", lim, req, &req->val);
	case WF_VAL2:
		return wire_take_bytes(buf, len, pos, lim->max_value,
		    "value length over max-value-size", lim, req, &req->val2);
	case WF_I64:
		if ((st = wire_take_fixed(len, pos, 8, lim, req)) == WIRE_OK)
			req->num = (int64_t)le_get_u64(buf + at);
		return st;
	case WF_U32:
		if ((st = wire_take_fixed(len, pos, 4, lim, req)) == WIRE_OK)
			req->u32 = le_get_u32(buf + at);
		return st;
	case WF_KEYS:
		return wire_take_list(buf, len, pos, 0, lim, req);
	case WF_PAIRS:
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
	const uint8_t *layout;
	enum wire_status st;
	uint64_t pos = 1;
	int i;

	req->error = NULL;
	if (len == 0)
		return wire_more(req, lim, 1);
	req->code = buf[0];
	req->op = wire_op_of_code(d, buf[0]);
	if (req->op == WOP_INVALID)
		return wire_fail(req, "unknown opcode", buf[0]);
	layout = wire_op_layout(req->op);
	for (i = 0; i < WIRE_FIELDS_MAX && layout[i] != WF_END; i++) {
		st = wire_take_field(buf, len, &pos, layout[i], lim, req);
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
	n = le_get_u64(list->p);
	if (n > list->len - 8)
		return 0;
	item->p = list->p + 8;
	item->len = n;
	list->p += 8 + n;
	list->len -= 8 + n;
	return 1;
}

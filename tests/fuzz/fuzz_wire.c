/*
 * fuzz_wire.c: libFuzzer target for the TCPStore request parser
 * (rendezvous/proto/wire_parse.c), both dialects.  The first byte picks the dialect
 * and the limits; the rest is a stream of requests.  Beyond "no crash",
 * it checks the parser's contract: OK consumes 1..len bytes and its lists
 * hold exactly `count` items, MORE asks for more than it has, and parsing
 * a request incrementally (growing the buffer to req.need each time)
 * gives the same answer as parsing it whole.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Abort (a finding) unless cond holds. */
static void
fw_assert(int cond)
{
	if (!cond)
		abort();
}

/* Check an OK request's fields against the bytes it consumed. */
static void
fw_check_ok(const struct wire_req *r, const uint8_t *buf, size_t used,
    size_t len)
{
	struct wire_str list = r->list, item;
	uint64_t n = 0, want;

	fw_assert(used >= 1 && used <= len);
	if (r->key.p != NULL)
		fw_assert(r->key.p >= buf && r->key.p + r->key.len <= buf + used);
	if (r->val.p != NULL)
		fw_assert(r->val.p >= buf && r->val.p + r->val.len <= buf + used);
	if (r->list.p == NULL)
		return;
	fw_assert(r->list.p >= buf && r->list.p + r->list.len <= buf + used);
	while (wire_list_next(&list, &item))
		n++;
	want = r->op == WOP_MULTI_SET ? r->count * 2 : r->count;
	fw_assert(n == want && list.len == 0);
}

/* Parse one request growing the buffer to req.need; compare with whole. */
static void
fw_incremental(enum wire_dialect d, const uint8_t *buf, size_t len,
    const struct wire_limits *lim, enum wire_status whole, size_t wused)
{
	struct wire_req r;
	enum wire_status st;
	size_t l = 1, used = 0;
	int steps = 0;

	wire_req_init(&r);
	for (;;) {
		fw_assert(++steps < 1000000);
		st = wire_parse(d, buf, l, lim, &r, &used);
		if (st != WIRE_MORE)
			break;
		fw_assert(r.need > l);
		if (r.need > len) {
			fw_assert(whole == WIRE_MORE);
			return;
		}
		l = (size_t)r.need;
	}
	fw_assert(st == whole);
	if (st == WIRE_OK)
		fw_assert(used == wused);
}

/* libFuzzer entry: a dialect/limits byte, then a stream of requests. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct wire_limits lim;
	struct wire_req r;
	enum wire_dialect d;
	enum wire_status st;
	size_t off = 0, used = 0;
	int n;

	if (size < 1)
		return 0;
	wire_limits_default(&lim);
	if (data[0] & 2) {		/* small limits: reach every refusal */
		lim.max_key = 16;
		lim.max_value = 64;
		lim.max_keys = 4;
		lim.max_request = 256;
	}
	d = (data[0] & 1) ? WIRE_V2 : WIRE_V1;
	if (data[0] & 4) {		/* let the bytes pick, as the server does */
		d = wire_detect(data + 1, size - 1);
		if (d == WIRE_UNKNOWN || d == WIRE_NATIVE)
			return 0;
	}
	data++;
	size--;
	for (n = 0; off < size && n < 10000; n++) {
		wire_req_init(&r);
		st = wire_parse(d, data + off, size - off, &lim, &r, &used);
		if (st == WIRE_ERROR)
			fw_assert(r.error != NULL);
		if (st == WIRE_MORE)
			fw_assert(r.need > size - off);
		if (st == WIRE_OK) {
			fw_check_ok(&r, data + off, used, size - off);
			(void)wire_op_name(r.op);
		}
		fw_incremental(d, data + off, size - off, &lim, st, used);
		if (st != WIRE_OK)
			break;
		off += used;
	}
	return 0;
}

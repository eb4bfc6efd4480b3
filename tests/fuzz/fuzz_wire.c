/*
 * fuzz_wire.c: libFuzzer target for the TCPStore request parser
 * (rendezvous/proto/wire_parse.c), both dialects.  The first byte picks
 * the dialect and the limits; the rest is a stream of requests.  Beyond
 * "no crash",
 * it checks the parser's contract: OK consumes 1..len bytes and its lists
 * hold exactly `count` items, MORE asks for more than it has, and parsing
 * a request incrementally (growing the buffer to req.need each time)
 * gives the same answer as parsing it whole.  The same input also drives
 * the client's request encoder (worker-lib/proto/wire_codec.c): it never
 * writes past its buffer and what it writes parses back.
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

/* Split s (len bytes, NUL-ended at s[len]) at NULs into at most max
 * strings; the number found. */
static size_t
fw_split(char *s, size_t len, const char **out, size_t max)
{
	size_t n = 0, i = 0;

	while (n < max && i <= len) {
		out[n++] = s + i;
		i += strlen(s + i) + 1;
	}
	return n;
}

/*
 * The client's encoder on a request built from the input (op and dialect
 * from the first byte, NUL-separated strings for prefix, key, values and
 * a key list): a buffer one byte short is never overrun (ASan, exact-size
 * heap buffers), and the whole request parses back as one OK request of
 * the same op and length, its key "/" [prefix "/"] key.
 */
static void
fw_encode(const uint8_t *data, size_t size)
{
	const char *str[8] = { "", "", "", "", "", "", "", "" };
	const void *vals[3];
	size_t lens[3], need, used = 0, i;
	struct wire_request q = { .op = WOP_INVALID };
	struct wire_limits lim;
	enum wire_dialect d;
	struct wire_req r;
	uint8_t *b;
	char *copy;

	if (size < 1 || (copy = malloc(size)) == NULL)
		return;
	memcpy(copy, data + 1, size - 1);
	copy[size - 1] = '\0';
	fw_split(copy, size - 1, str, 8);
	d = (data[0] & 0x80) ? WIRE_V1 : WIRE_V2;
	q.op = (enum wire_op)(data[0] % WOP__COUNT);
	q.prefix = str[0][0] != '\0' ? str[0] : NULL;
	q.key = str[1];
	q.val = str[2];
	q.val_len = strlen(str[2]);
	q.val2 = str[3];
	q.val2_len = strlen(str[3]);
	q.num = (int64_t)((uint64_t)data[0] << 56);
	q.u32 = q.op == WOP_VALIDATE ? WIRE_MAGIC : (uint32_t)size;
	for (i = 0; i < 3; i++) {
		vals[i] = str[5 + i];
		lens[i] = strlen(str[5 + i]);
	}
	q.keys = &str[4];
	q.vals = vals;
	q.lens = lens;
	q.count = (data[0] >> 5) & 3;
	need = wire_encode(d, &q, NULL, 0);
	fw_assert((need == 0) == (wire_op_code(d, q.op) < 0));
	if (need == 0) {
		free(copy);
		return;
	}
	b = malloc(need);
	fw_assert(b != NULL);
	fw_assert(wire_encode(d, &q, b, need - 1) == need);
	fw_assert(wire_encode(d, &q, b, need) == need);
	wire_limits_default(&lim);
	wire_req_init(&r);
	fw_assert(wire_parse(d, b, need, &lim, &r, &used) == WIRE_OK);
	fw_assert(used == need && r.op == q.op);
	if (r.key.p != NULL)
		fw_assert(r.key.len == 1 + strlen(q.key) + (q.prefix != NULL ?
		    strlen(q.prefix) + 1 : 0) && r.key.p[0] == '/');
	if (r.list.p != NULL)
		fw_assert(r.count == q.count);
	free(b);
	free(copy);
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
	fw_encode(data, size);
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

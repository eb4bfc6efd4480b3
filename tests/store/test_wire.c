/*
 * test_wire.c: the TCPStore codec: dialect detection, every request of
 * both dialects parsed whole, byte by byte and resumed, limits hit as soon
 * as a length arrives, bad opcodes and magic, reply encoders; the shared
 * request encoder byte for byte, round trips through the parser, short
 * buffers; the little-endian helper.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire.h"
#include "helper_main.h"

/* A request under construction. */
struct msg {
	uint8_t	b[4096];
	size_t	n;
};

/* Append raw bytes. */
static void
m_raw(struct msg *m, const void *p, size_t n)
{
	ck_assert_uint_le(m->n + n, sizeof m->b);
	memcpy(m->b + m->n, p, n);
	m->n += n;
}

/* Append one byte. */
static void
m_u8(struct msg *m, uint8_t v)
{
	m_raw(m, &v, 1);
}

/* Append a little-endian u64. */
static void
m_u64(struct msg *m, uint64_t v)
{
	uint8_t b[8];

	wire_enc_u64(b, v);
	m_raw(m, b, 8);
}

/* Append a u32. */
static void
m_u32(struct msg *m, uint32_t v)
{
	uint8_t b[4];

	wire_enc_u32(b, v);
	m_raw(m, b, 4);
}

/* Append a length-prefixed string (binary: len given). */
static void
m_bytes(struct msg *m, const void *p, size_t n)
{
	m_u64(m, n);
	m_raw(m, p, n);
}

/* Append a C string as bytes. */
static void
m_str(struct msg *m, const char *s)
{
	m_bytes(m, s, strlen(s));
}

static struct wire_limits lim;

/* Fresh default limits before each test. */
static void
setup(void)
{
	wire_limits_default(&lim);
}

/* Parse m whole; must be OK consuming exactly m->n bytes. */
static struct wire_req
parse_whole(enum wire_dialect d, const struct msg *m)
{
	struct wire_req r;
	size_t used = 0;

	wire_req_init(&r);
	ck_assert_int_eq(wire_parse(d, m->b, m->n, &lim, &r, &used), WIRE_OK);
	ck_assert_uint_eq(used, m->n);
	return r;
}

/* Whether two parsed requests say the same thing (pointers relative). */
static void
same_req(const struct wire_req *a, const uint8_t *abase,
    const struct wire_req *b, const uint8_t *bbase)
{
	ck_assert_int_eq(a->op, b->op);
	ck_assert_uint_eq(a->code, b->code);
	ck_assert_uint_eq(a->key.len, b->key.len);
	ck_assert_uint_eq(a->val.len, b->val.len);
	ck_assert_uint_eq(a->val2.len, b->val2.len);
	ck_assert_uint_eq(a->list.len, b->list.len);
	ck_assert_uint_eq(a->count, b->count);
	ck_assert(a->num == b->num);
	ck_assert_uint_eq(a->u32, b->u32);
	if (a->key.len > 0)
		ck_assert_int_eq(a->key.p - abase, b->key.p - bbase);
	if (a->val.len > 0)
		ck_assert_int_eq(a->val.p - abase, b->val.p - bbase);
	if (a->val2.len > 0)
		ck_assert_int_eq(a->val2.p - abase, b->val2.p - bbase);
	if (a->list.len > 0)
		ck_assert_int_eq(a->list.p - abase, b->list.p - bbase);
}

/*
 * Feed m one byte at a time, both resuming one request state and with a
 * fresh state per call: every proper prefix is MORE with a need beyond
 * it (and within the message), the whole is OK and equal to parse_whole.
 */
static void
check_bytewise(enum wire_dialect d, const struct msg *m)
{
	struct wire_req whole = parse_whole(d, m), r, fresh;
	uint8_t *copy;
	size_t i, used;

	wire_req_init(&r);
	for (i = 0; i < m->n; i++) {
		/* A private copy per step: pointers must not outlive calls. */
		copy = malloc(i + 1);
		ck_assert_ptr_nonnull(copy);
		memcpy(copy, m->b, i);
		ck_assert_int_eq(wire_parse(d, copy, i, &lim, &r, &used),
		    WIRE_MORE);
		ck_assert_uint_gt(r.need, i);
		ck_assert_uint_le(r.need, m->n);
		wire_req_init(&fresh);
		ck_assert_int_eq(wire_parse(d, copy, i, &lim, &fresh, &used),
		    WIRE_MORE);
		ck_assert_uint_eq(fresh.need, r.need);
		free(copy);
	}
	used = 0;
	ck_assert_int_eq(wire_parse(d, m->b, m->n, &lim, &r, &used), WIRE_OK);
	ck_assert_uint_eq(used, m->n);
	same_req(&whole, m->b, &r, m->b);
}

/* Build a key list of n keys "/k0".."/k{n-1}" after a count. */
static void
m_keys(struct msg *m, unsigned n)
{
	char k[16];
	unsigned i;

	m_u64(m, n);
	for (i = 0; i < n; i++) {
		snprintf(k, sizeof k, "/k%u", i);
		m_str(m, k);
	}
}

START_TEST(detect_dialects)
{
	static const uint8_t v2[] = { 0x00, 0xce, 0xf7, 0x85, 0x3c, 0x0d };
	static const uint8_t v1set[] = { 0x00, 0x03, 0, 0, 0, 0, 0, 0, 0 };

	ck_assert_int_eq(wire_detect(v2, 0), WIRE_UNKNOWN);
	ck_assert_int_eq(wire_detect(v2, 1), WIRE_UNKNOWN);
	ck_assert_int_eq(wire_detect(v2, 4), WIRE_UNKNOWN);
	ck_assert_int_eq(wire_detect(v2, 5), WIRE_V2);
	ck_assert_int_eq(wire_detect(v2, sizeof v2), WIRE_V2);
	/* A 1.13 SET: decided once the second byte differs from the magic. */
	ck_assert_int_eq(wire_detect(v1set, 1), WIRE_UNKNOWN);
	ck_assert_int_eq(wire_detect(v1set, 2), WIRE_V1);
	ck_assert_int_eq(wire_detect((const uint8_t *)"\x02", 1), WIRE_V1);
	ck_assert_int_eq(wire_detect((const uint8_t *)"\x06", 1), WIRE_V1);
	ck_assert_int_eq(wire_detect((const uint8_t *)"CGR", 3), WIRE_UNKNOWN);
	ck_assert_int_eq(wire_detect((const uint8_t *)"CGRN\x01", 5), WIRE_NATIVE);
	ck_assert_int_eq(wire_detect((const uint8_t *)"CGX", 3), WIRE_V1);
}
END_TEST

START_TEST(v1_requests)
{
	struct msg m;
	struct wire_req r;
	uint8_t i;

	/* SET, CAS, GET, ADD, CHECK, WAIT, GETNUMKEYS, WATCH, DELETE */
	memset(&m, 0, sizeof m);
	m_u8(&m, V1_SET); m_str(&m, "/k1"); m_str(&m, "v1");
	r = parse_whole(WIRE_V1, &m);
	ck_assert_int_eq(r.op, WOP_SET);
	ck_assert_uint_eq(r.key.len, 3);
	ck_assert_mem_eq(r.key.p, "/k1", 3);
	ck_assert_mem_eq(r.val.p, "v1", 2);
	check_bytewise(WIRE_V1, &m);

	memset(&m, 0, sizeof m);
	m_u8(&m, V1_COMPARE_SET); m_str(&m, "/cs"); m_str(&m, ""); m_str(&m, "d");
	r = parse_whole(WIRE_V1, &m);
	ck_assert_int_eq(r.op, WOP_COMPARE_SET);
	ck_assert_uint_eq(r.val.len, 0);
	ck_assert_uint_eq(r.val2.len, 1);
	check_bytewise(WIRE_V1, &m);

	memset(&m, 0, sizeof m);
	m_u8(&m, V1_ADD); m_str(&m, "/cnt"); m_u64(&m, (uint64_t)-2);
	r = parse_whole(WIRE_V1, &m);
	ck_assert_int_eq(r.op, WOP_ADD);
	ck_assert(r.num == -2);
	check_bytewise(WIRE_V1, &m);

	for (i = V1_CHECK; i <= V1_WAIT; i++) {
		memset(&m, 0, sizeof m);
		m_u8(&m, i); m_keys(&m, 3);
		r = parse_whole(WIRE_V1, &m);
		ck_assert_int_eq(r.op, i == V1_CHECK ? WOP_CHECK : WOP_WAIT);
		ck_assert_uint_eq(r.count, 3);
		check_bytewise(WIRE_V1, &m);
	}

	memset(&m, 0, sizeof m);
	m_u8(&m, V1_GETNUMKEYS);
	r = parse_whole(WIRE_V1, &m);
	ck_assert_int_eq(r.op, WOP_GETNUMKEYS);
	check_bytewise(WIRE_V1, &m);

	for (i = 0; i < 3; i++) {
		static const uint8_t codes[] = { V1_GET, V1_WATCH_KEY, V1_DELETE_KEY };
		static const int ops[] = { WOP_GET, WOP_WATCH_KEY, WOP_DELETE_KEY };

		memset(&m, 0, sizeof m);
		m_u8(&m, codes[i]); m_str(&m, "/wk");
		r = parse_whole(WIRE_V1, &m);
		ck_assert_int_eq(r.op, ops[i]);
		check_bytewise(WIRE_V1, &m);
	}
}
END_TEST

START_TEST(v2_requests)
{
	struct msg m;
	struct wire_req r;
	struct wire_str l, k;
	unsigned n;

	memset(&m, 0, sizeof m);
	m_u8(&m, V2_VALIDATE); m_u32(&m, WIRE_MAGIC);
	r = parse_whole(WIRE_V2, &m);
	ck_assert_int_eq(r.op, WOP_VALIDATE);
	check_bytewise(WIRE_V2, &m);

	memset(&m, 0, sizeof m);
	m_u8(&m, V2_PING); m_u32(&m, 0x7405);
	r = parse_whole(WIRE_V2, &m);
	ck_assert_int_eq(r.op, WOP_PING);
	ck_assert_uint_eq(r.u32, 0x7405);
	check_bytewise(WIRE_V2, &m);

	memset(&m, 0, sizeof m);
	m_u8(&m, V2_MULTI_SET); m_u64(&m, 2);
	m_str(&m, "/m1"); m_str(&m, "x"); m_str(&m, "/m2"); m_str(&m, "yy");
	r = parse_whole(WIRE_V2, &m);
	ck_assert_int_eq(r.op, WOP_MULTI_SET);
	ck_assert_uint_eq(r.count, 2);
	l = r.list;
	for (n = 0; wire_list_next(&l, &k); n++)
		;
	ck_assert_uint_eq(n, 4);
	check_bytewise(WIRE_V2, &m);

	memset(&m, 0, sizeof m);
	m_u8(&m, V2_MULTI_GET); m_keys(&m, 40);
	r = parse_whole(WIRE_V2, &m);
	ck_assert_int_eq(r.op, WOP_MULTI_GET);
	l = r.list;
	ck_assert(wire_list_next(&l, &k));
	ck_assert_mem_eq(k.p, "/k0", 3);
	check_bytewise(WIRE_V2, &m);

	memset(&m, 0, sizeof m);
	m_u8(&m, V2_BARRIER); m_str(&m, "/b"); m_u64(&m, 8);
	r = parse_whole(WIRE_V2, &m);
	ck_assert_int_eq(r.op, WOP_BARRIER);
	ck_assert(r.num == 8);
	check_bytewise(WIRE_V2, &m);

	for (n = 0; n < 6; n++) {
		static const uint8_t codes[] = { V2_APPEND, V2_QUEUE_PUSH, V2_SET,
		    V2_QUEUE_POP, V2_QUEUE_LEN, V2_DELETE_KEY };
		static const int ops[] = { WOP_APPEND, WOP_QUEUE_PUSH, WOP_SET,
		    WOP_QUEUE_POP, WOP_QUEUE_LEN, WOP_DELETE_KEY };

		memset(&m, 0, sizeof m);
		m_u8(&m, codes[n]); m_str(&m, "/q");
		if (n < 3)
			m_str(&m, "value");
		r = parse_whole(WIRE_V2, &m);
		ck_assert_int_eq(r.op, ops[n]);
		check_bytewise(WIRE_V2, &m);
	}
	for (n = 0; n < 3; n++) {
		static const uint8_t codes[] = { V2_GETNUMKEYS, V2_CANCEL_WAIT,
		    V2_LIST_KEYS };

		memset(&m, 0, sizeof m);
		m_u8(&m, codes[n]);
		r = parse_whole(WIRE_V2, &m);
		ck_assert_uint_eq(r.code, codes[n]);
	}
}
END_TEST

START_TEST(binary_and_empty)
{
	static const uint8_t key[] = { 0, 0xff, '\n', 0 };
	struct msg m = { .n = 0 };
	struct wire_req r;

	m_u8(&m, V2_SET); m_bytes(&m, key, sizeof key); m_bytes(&m, "", 0);
	r = parse_whole(WIRE_V2, &m);
	ck_assert_uint_eq(r.key.len, 4);
	ck_assert_mem_eq(r.key.p, key, 4);
	ck_assert_uint_eq(r.val.len, 0);
	check_bytewise(WIRE_V2, &m);
}
END_TEST

START_TEST(pipelined)
{
	struct msg m = { .n = 0 };
	struct wire_req r;
	size_t off = 0, used, n = 0;
	int i;

	for (i = 0; i < 50; i++) {
		m_u8(&m, V1_ADD); m_str(&m, "/c"); m_u64(&m, 1);
		m_u8(&m, V1_GETNUMKEYS);
	}
	while (off < m.n) {
		wire_req_init(&r);
		ck_assert_int_eq(wire_parse(WIRE_V1, m.b + off, m.n - off, &lim,
		    &r, &used), WIRE_OK);
		ck_assert_int_eq(r.op, n % 2 == 0 ? WOP_ADD : WOP_GETNUMKEYS);
		off += used;
		n++;
	}
	ck_assert_uint_eq(n, 100);
	ck_assert_uint_eq(off, m.n);
}
END_TEST

/* Parse a prefix of m and expect ERROR with a reason. */
static const char *
expect_error(enum wire_dialect d, const struct msg *m, size_t upto)
{
	struct wire_req r;
	size_t used;

	wire_req_init(&r);
	ck_assert_int_eq(wire_parse(d, m->b, upto, &lim, &r, &used), WIRE_ERROR);
	ck_assert_ptr_nonnull(r.error);
	return r.error;
}

START_TEST(huge_and_negative_lengths)
{
	struct msg m = { .n = 0 };

	/* 2^60-byte key: refused as soon as its 8 length bytes are in. */
	m_u8(&m, V1_SET); m_u64(&m, (uint64_t)1 << 60);
	ck_assert_ptr_nonnull(strstr(expect_error(WIRE_V1, &m, 9), "key"));
	/* -1 as a length is 2^64-1. */
	m.n = 0;
	m_u8(&m, V2_GET); m_u64(&m, UINT64_MAX);
	expect_error(WIRE_V2, &m, 9);
	/* Value over the limit, key fine. */
	m.n = 0;
	m_u8(&m, V2_SET); m_str(&m, "/k"); m_u64(&m, lim.max_value + 1);
	ck_assert_ptr_nonnull(strstr(expect_error(WIRE_V2, &m, m.n), "value"));
	/* Exactly at the limit is fine (MORE: the bytes are not there). */
	{
		struct wire_req r;
		size_t used;

		m.n = 0;
		m_u8(&m, V2_SET); m_str(&m, "/k"); m_u64(&m, lim.max_value);
		wire_req_init(&r);
		ck_assert_int_eq(wire_parse(WIRE_V2, m.b, m.n, &lim, &r, &used),
		    WIRE_MORE);
		ck_assert_uint_eq(r.need, m.n + lim.max_value);
	}
	/* Negative key count and one over max-keys. */
	m.n = 0;
	m_u8(&m, V2_WAIT); m_u64(&m, (uint64_t)-5);
	ck_assert_ptr_nonnull(strstr(expect_error(WIRE_V2, &m, 9), "count"));
	m.n = 0;
	m_u8(&m, V1_CHECK); m_u64(&m, lim.max_keys + 1);
	expect_error(WIRE_V1, &m, 9);
	m.n = 0;
	m_u8(&m, V2_MULTI_SET); m_u64(&m, (uint64_t)INT64_MIN);
	expect_error(WIRE_V2, &m, 9);
}
END_TEST

START_TEST(request_size_limit)
{
	struct msg m = { .n = 0 };
	struct wire_req r;
	size_t used;

	lim.max_request = 100;
	m_u8(&m, V2_SET); m_str(&m, "/k"); m_u64(&m, 90);	/* 109 bytes */
	wire_req_init(&r);
	ck_assert_int_eq(wire_parse(WIRE_V2, m.b, m.n, &lim, &r, &used),
	    WIRE_ERROR);
	ck_assert_ptr_nonnull(strstr(r.error, "max-request"));
	/* A list whose keys add up beyond the request limit. */
	m.n = 0;
	m_u8(&m, V2_WAIT); m_keys(&m, 20);
	expect_error(WIRE_V2, &m, m.n);
}
END_TEST

START_TEST(small_limits)
{
	struct msg m = { .n = 0 };

	lim.max_key = 4;
	lim.max_keys = 2;
	m_u8(&m, V1_GET); m_str(&m, "/abcd");
	expect_error(WIRE_V1, &m, 9);
	m.n = 0;
	m_u8(&m, V1_WAIT); m_keys(&m, 3);
	expect_error(WIRE_V1, &m, 9);
	m.n = 0;
	m_u8(&m, V1_WAIT); m_keys(&m, 2);
	(void)parse_whole(WIRE_V1, &m);
	/* A long key inside a list is refused too. */
	m.n = 0;
	m_u8(&m, V2_MULTI_GET); m_u64(&m, 2); m_str(&m, "/a"); m_str(&m, "/bcdef");
	expect_error(WIRE_V2, &m, m.n);
}
END_TEST

START_TEST(unknown_opcodes)
{
	struct msg m = { .n = 0 };
	unsigned c;

	for (c = 9; c < 256; c++) {
		m.n = 0;
		m_u8(&m, (uint8_t)c);
		expect_error(WIRE_V1, &m, 1);
	}
	for (c = 19; c < 256; c++) {
		m.n = 0;
		m_u8(&m, (uint8_t)c);
		expect_error(WIRE_V2, &m, 1);
	}
	m.n = 0;
	m_u8(&m, 0);
	expect_error(WIRE_NATIVE, &m, 1);
}
END_TEST

START_TEST(wrong_magic)
{
	struct msg m = { .n = 0 };

	m_u8(&m, V2_VALIDATE); m_u32(&m, 0x3C85F7CF);
	ck_assert_ptr_nonnull(strstr(expect_error(WIRE_V2, &m, m.n), "magic"));
}
END_TEST

START_TEST(long_list_resumes)
{
	/* Many keys arriving slowly are scanned once: the resume position
	 * only moves forward and ends at the list's end. */
	static struct msg m;
	struct wire_req r;
	size_t i, used, last = 0;

	m.n = 0;
	m_u8(&m, V2_WAIT); m_keys(&m, 300);
	wire_req_init(&r);
	for (i = 1; i < m.n; i += 7) {
		ck_assert_int_eq(wire_parse(WIRE_V2, m.b, i, &lim, &r, &used),
		    WIRE_MORE);
		ck_assert_uint_ge(r.scan_pos, last);
		last = r.scan_pos;
	}
	ck_assert_int_eq(wire_parse(WIRE_V2, m.b, m.n, &lim, &r, &used), WIRE_OK);
	ck_assert_uint_eq(used, m.n);
	ck_assert_uint_eq(r.count, 300);
}
END_TEST

/* Tiny deterministic PRNG (xorshift64) for the mutation test. */
static uint64_t
rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/*
 * Parse buf[0..n) whole with a fresh request, then the same bytes fed
 * in random-sized growing prefixes resuming one request: both must end
 * in the same status, and for OK the same length and fields.
 */
static void
same_both_ways(enum wire_dialect d, const uint8_t *buf, size_t n,
    uint64_t *seed)
{
	struct wire_req a, b;
	enum wire_status sa, sb = WIRE_MORE;
	size_t ua = 0, ub = 0, have = 0;

	wire_req_init(&a);
	sa = wire_parse(d, buf, n, &lim, &a, &ua);
	wire_req_init(&b);
	do {
		have += 1 + rnd(seed) % 9;
		if (have > n)
			have = n;
		sb = wire_parse(d, buf, have, &lim, &b, &ub);
		if (sb != WIRE_MORE)
			break;
		ck_assert_uint_gt(b.need, have);
	} while (have < n);
	ck_assert_int_eq(sa, sb);
	if (sa == WIRE_OK) {
		ck_assert_uint_eq(ua, ub);
		ck_assert_uint_le(ua, n);
		same_req(&a, buf, &b, buf);
	}
	if (sa == WIRE_MORE)
		ck_assert_uint_eq(a.need, b.need);
	if (sa == WIRE_ERROR)
		ck_assert_str_eq(a.error, b.error);
}

START_TEST(mutations_parse_the_same)
{
	static const uint8_t codes[] = { V2_SET, V2_COMPARE_SET, V2_GET,
	    V2_ADD, V2_WAIT, V2_MULTI_SET, V2_PING, V2_BARRIER, V2_VALIDATE };
	struct msg m;
	uint64_t seed = 0x9E3779B97F4A7C15ULL;
	unsigned i, j, flips;

	lim.max_key = 64;
	lim.max_value = 256;
	lim.max_keys = 16;
	lim.max_request = 2048;
	for (i = 0; i < 20000; i++) {
		memset(&m, 0, sizeof m);
		m_u8(&m, codes[i % sizeof codes]);
		switch (codes[i % sizeof codes]) {
		case V2_WAIT:
			m_keys(&m, (unsigned)(rnd(&seed) % 20));
			break;
		case V2_MULTI_SET:
			m_u64(&m, 2);
			m_str(&m, "/a"); m_str(&m, "xx"); m_str(&m, "/b"); m_str(&m, "");
			break;
		case V2_PING:
		case V2_VALIDATE:
			m_u32(&m, WIRE_MAGIC);
			break;
		default:
			m_str(&m, "/key");
			m_str(&m, "value");
			m_u64(&m, 7);
		}
		/* Flip a few bytes (lengths included) and cut or extend. */
		flips = (unsigned)(rnd(&seed) % 4);
		for (j = 0; j < flips; j++)
			m.b[rnd(&seed) % m.n] = (uint8_t)rnd(&seed);
		if (rnd(&seed) % 3 == 0)
			m.n = (size_t)(rnd(&seed) % (m.n + 1));
		same_both_ways(i % 2 ? WIRE_V2 : WIRE_V1, m.b, m.n, &seed);
	}
}
END_TEST

START_TEST(encoders)
{
	uint8_t b[8];

	ck_assert_uint_eq(wire_enc_i64(b, -2), 8);
	ck_assert_mem_eq(b, "\xfe\xff\xff\xff\xff\xff\xff\xff", 8);
	ck_assert_uint_eq(wire_enc_u32(b, 0x3C85F7CE), 4);
	ck_assert_mem_eq(b, "\xce\xf7\x85\x3c", 4);
	wire_enc_u64(b, 0x0102030405060708ULL);
	ck_assert(wire_get_u64(b) == 0x0102030405060708ULL);
	ck_assert_uint_eq(b[0], 8);
	ck_assert_str_eq(wire_op_name(WOP_CANCEL_WAIT), "CANCEL_WAIT");
	ck_assert_str_eq(wire_op_name(WOP_INVALID), "?");
}
END_TEST

/* Encode r in dialect d into m (must fit). */
static void
encode(enum wire_dialect d, const struct wire_request *r, struct msg *m)
{
	m->n = wire_encode(d, r, m->b, sizeof m->b);
	ck_assert_uint_gt(m->n, 0);
	ck_assert_uint_le(m->n, sizeof m->b);
}

/* The client's requests, byte for byte as torch 2.x's client sends them. */
START_TEST(request_bytes_exact)
{
	static const char *const keys[2] = { "a", "bc" };
	static const void *const vals[2] = { "x", "" };
	static const size_t lens[2] = { 1, 0 };
	struct wire_request r = { .op = WOP_SET, .prefix = "p", .key = "k",
	    .val = "xy", .val_len = 2 };
	struct msg got = { .n = 0 }, want = { .n = 0 };

	encode(WIRE_V2, &r, &got);
	m_u8(&want, V2_SET);
	m_str(&want, "/p/k");
	m_str(&want, "xy");
	ck_assert_uint_eq(got.n, want.n);
	ck_assert_mem_eq(got.b, want.b, want.n);

	r = (struct wire_request){ .op = WOP_VALIDATE, .u32 = WIRE_MAGIC };
	encode(WIRE_V2, &r, &got);
	ck_assert_uint_eq(got.n, 5);
	ck_assert_mem_eq(got.b, "\x00\xce\xf7\x85\x3c", 5);
	r = (struct wire_request){ .op = WOP_PING, .u32 = 0x01020304 };
	encode(WIRE_V2, &r, &got);
	ck_assert_mem_eq(got.b, "\x0d\x04\x03\x02\x01", 5);
	ck_assert_uint_eq(got.n + 5, WIRE_HELLO_LEN);

	r = (struct wire_request){ .op = WOP_MULTI_SET, .keys = keys,
	    .vals = vals, .lens = lens, .count = 2 };
	encode(WIRE_V2, &r, &got);
	want.n = 0;
	m_u8(&want, V2_MULTI_SET);
	m_u64(&want, 2);
	m_str(&want, "/a");
	m_str(&want, "x");
	m_str(&want, "/bc");
	m_str(&want, "");
	ck_assert_uint_eq(got.n, want.n);
	ck_assert_mem_eq(got.b, want.b, want.n);

	r = (struct wire_request){ .op = WOP_ADD, .key = "n", .num = -2 };
	encode(WIRE_V1, &r, &got);
	want.n = 0;
	m_u8(&want, V1_ADD);
	m_str(&want, "/n");
	m_u64(&want, (uint64_t)-2);
	ck_assert_uint_eq(got.n, want.n);
	ck_assert_mem_eq(got.b, want.b, want.n);
}
END_TEST

/* Every op of both dialects, encoded then parsed, says the same. */
START_TEST(encode_parse_round_trip)
{
	static const char *const keys[3] = { "a", "b", "c" };
	static const void *const vals[3] = { "1", "22", "333" };
	static const size_t lens[3] = { 1, 2, 3 };
	struct wire_request r = { .prefix = "pre", .key = "key",
	    .val = "v", .val_len = 1, .val2 = "w2", .val2_len = 2,
	    .num = 7, .u32 = WIRE_MAGIC, .keys = keys, .vals = vals,
	    .lens = lens, .count = 3 };
	enum wire_dialect d;
	struct wire_req p;
	struct msg m;
	int op;

	for (d = WIRE_V1; d <= WIRE_V2; d++) {
		for (op = 0; op < WOP__COUNT; op++) {
			r.op = (enum wire_op)op;
			if (wire_op_code(d, r.op) < 0) {
				ck_assert_uint_eq(wire_encode(d, &r, m.b,
				    sizeof m.b), 0);
				continue;
			}
			encode(d, &r, &m);
			p = parse_whole(d, &m);
			ck_assert_int_eq(p.op, op);
			ck_assert_uint_eq(p.code, wire_op_code(d, r.op));
			ck_assert_int_eq(wire_op_of_code(d, p.code), op);
			if (p.key.p != NULL)
				ck_assert_mem_eq(p.key.p, "/pre/key", 8);
			if (p.list.p != NULL)
				ck_assert_uint_eq(p.count, 3);
		}
	}
	ck_assert_int_eq(wire_op_code(WIRE_V2, WOP_WATCH_KEY), -1);
	ck_assert_int_eq(wire_op_code(WIRE_V1, WOP_VALIDATE), -1);
	ck_assert_int_eq(wire_op_code(WIRE_NATIVE, WOP_SET), -1);
	ck_assert_int_eq(wire_op_of_code(WIRE_V1, V1_DELETE_KEY + 1),
	    WOP_INVALID);
	ck_assert_int_eq(wire_op_of_code(WIRE_V2, 0xff), WOP_INVALID);
	ck_assert_int_eq(wire_op_of_code(WIRE_NATIVE, 0), WOP_INVALID);
}
END_TEST

/* A short buffer: the encoder counts the whole length, writes nothing past. */
START_TEST(encode_short_buffer)
{
	struct wire_request r = { .op = WOP_SET, .key = "key",
	    .val = "value", .val_len = 5 };
	uint8_t b[32];
	size_t need, cap;

	need = wire_encode(WIRE_V2, &r, NULL, 0);
	ck_assert_uint_eq(need, 1 + 8 + 4 + 8 + 5);
	for (cap = 0; cap < need; cap++) {
		memset(b, 0xAA, sizeof b);
		ck_assert_uint_eq(wire_encode(WIRE_V2, &r, b, cap), need);
		ck_assert_uint_eq(b[cap], 0xAA);
	}
	ck_assert_uint_eq(wire_encode(WIRE_V2, &r, b, need), need);
	ck_assert_uint_eq(b[0], V2_SET);
}
END_TEST

/* le.h: the one little-endian helper. */
START_TEST(little_endian)
{
	uint8_t b[8];

	le_put_u16(b, 0x0102);
	ck_assert_mem_eq(b, "\x02\x01", 2);
	ck_assert_uint_eq(le_get_u16(b), 0x0102);
	le_put_u32(b, 0xA1B2C3D4u);
	ck_assert_mem_eq(b, "\xd4\xc3\xb2\xa1", 4);
	ck_assert_uint_eq(le_get_u32(b), 0xA1B2C3D4u);
	le_put_u64(b, 0xF102030405060708ULL);
	ck_assert_mem_eq(b, "\x08\x07\x06\x05\x04\x03\x02\xf1", 8);
	ck_assert(le_get_u64(b) == 0xF102030405060708ULL);
}
END_TEST

/* The suite. */
Suite *
test_suite(void)
{
	Suite *s = suite_create("wire");
	TCase *tc = tcase_create("codec");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, detect_dialects);
	tcase_add_test(tc, v1_requests);
	tcase_add_test(tc, v2_requests);
	tcase_add_test(tc, binary_and_empty);
	tcase_add_test(tc, pipelined);
	tcase_add_test(tc, huge_and_negative_lengths);
	tcase_add_test(tc, request_size_limit);
	tcase_add_test(tc, small_limits);
	tcase_add_test(tc, unknown_opcodes);
	tcase_add_test(tc, wrong_magic);
	tcase_add_test(tc, long_list_resumes);
	tcase_add_test(tc, mutations_parse_the_same);
	tcase_add_test(tc, encoders);
	tcase_add_test(tc, request_bytes_exact);
	tcase_add_test(tc, encode_parse_round_trip);
	tcase_add_test(tc, encode_short_buffer);
	tcase_add_test(tc, little_endian);
	suite_add_tcase(s, tc);
	return s;
}

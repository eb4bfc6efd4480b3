/*
 * test_rdzv_proto.c: the native rendezvous codec: round trips of every op,
 * one byte at a time, and adversarial frames (huge, truncated, unknown,
 * over-long strings, NUL bytes, trailing bytes).
 */
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "rdzv_proto.h"
#include "helper_main.h"

static const uint8_t all_ops[] = { RDZV_OP_HELLO, RDZV_OP_JOIN,
	RDZV_OP_KEEPALIVE, RDZV_OP_FAILED, RDZV_OP_STOPPED, RDZV_OP_DONE,
	RDZV_OP_LEAVE, RDZV_OP_WELCOME, RDZV_OP_STATUS, RDZV_OP_ROUND,
	RDZV_OP_RESTART, RDZV_OP_FINISHED, RDZV_OP_FAIL, RDZV_OP_ERROR,
	RDZV_OP_SPENT, RDZV_OP_RESUME };

/* A JOIN with every field set. */
static void
make_join(struct rdzv_msg *m)
{
	rdzv_proto_init(m, RDZV_OP_JOIN);
	strcpy(m->run_id, "job7");
	strcpy(m->host, "node-a");
	m->pid = 4242;
	m->local_id = 3;
	m->nproc = 8;
	m->node_rank = -1;
	m->min_nodes = 2;
	m->max_nodes = 4;
	m->max_restarts = 3;
	m->join_timeout_ms = 600000;
	m->last_call_ms = 30000;
	m->close_ms = 30000;
	m->keepalive_ms = 5000;
	m->keepalive_max = 3;
	strcpy(m->addr, "10.0.0.7");
	m->port = 29500;
}

START_TEST(roundtrip_join)
{
	struct rdzv_msg m, d;
	unsigned char buf[4 + RDZV_FRAME_MAX];
	char why[RDZV_PROTO_ERRLEN] = "";
	size_t used;
	ssize_t n;

	make_join(&m);
	n = rdzv_proto_encode(&m, buf, sizeof(buf));
	ck_assert_int_gt(n, 5);
	ck_assert_int_eq(buf[4], RDZV_OP_JOIN);
	ck_assert_int_eq(rdzv_proto_decode(buf, (size_t)n, &d, &used, why,
	    sizeof(why)), RDZV_PROTO_OK);
	ck_assert_uint_eq(used, (size_t)n);
	ck_assert_str_eq(d.run_id, "job7");
	ck_assert_str_eq(d.host, "node-a");
	ck_assert_str_eq(d.addr, "10.0.0.7");
	ck_assert_uint_eq(d.pid, 4242);
	ck_assert_uint_eq(d.local_id, 3);
	ck_assert_uint_eq(d.nproc, 8);
	ck_assert_int_eq(d.node_rank, -1);
	ck_assert_uint_eq(d.min_nodes, 2);
	ck_assert_uint_eq(d.max_nodes, 4);
	ck_assert_uint_eq(d.max_restarts, 3);
	ck_assert_uint_eq(d.join_timeout_ms, 600000);
	ck_assert_uint_eq(d.keepalive_max, 3);
	ck_assert_uint_eq(d.port, 29500);
}
END_TEST

START_TEST(roundtrip_every_op)
{
	struct rdzv_msg m, d;
	unsigned char buf[4 + RDZV_FRAME_MAX];
	char why[RDZV_PROTO_ERRLEN] = "";
	size_t used;
	ssize_t n;

	rdzv_proto_init(&m, all_ops[_i]);
	m.round = 7;
	m.group_rank = 2;
	m.version = 1;
	m.reason = 3;
	m.restart_count = 5;
	if (all_ops[_i] == RDZV_OP_JOIN)
		make_join(&m);
	strcpy(m.text, "why not");
	strcpy(m.addr, "h");
	n = rdzv_proto_encode(&m, buf, sizeof(buf));
	ck_assert_int_ge(n, 5);
	ck_assert_int_eq(rdzv_proto_decode(buf, (size_t)n, &d, &used, why,
	    sizeof(why)), RDZV_PROTO_OK);
	ck_assert_uint_eq(used, (size_t)n);
	ck_assert_int_eq(d.op, all_ops[_i]);
	ck_assert_ptr_nonnull(rdzv_proto_opname(d.op));
	if (d.op == RDZV_OP_SPENT || d.op == RDZV_OP_ROUND ||
	    d.op == RDZV_OP_RESUME)
		ck_assert_uint_eq(d.restart_count, 5);
	/* The same bytes re-encode to the same frame. */
	{
		unsigned char again[4 + RDZV_FRAME_MAX];

		ck_assert_int_eq(rdzv_proto_encode(&d, again, sizeof(again)), n);
		ck_assert_int_eq(memcmp(buf, again, (size_t)n), 0);
	}
}
END_TEST

START_TEST(one_byte_at_a_time)
{
	struct rdzv_msg m, d;
	unsigned char buf[4 + RDZV_FRAME_MAX];
	char why[RDZV_PROTO_ERRLEN] = "";
	size_t used, i;
	ssize_t n;

	make_join(&m);
	n = rdzv_proto_encode(&m, buf, sizeof(buf));
	for (i = 0; i < (size_t)n; i++)
		ck_assert_int_eq(rdzv_proto_decode(buf, i, &d, &used, why,
		    sizeof(why)), RDZV_PROTO_MORE);
	ck_assert_int_eq(rdzv_proto_decode(buf, (size_t)n, &d, &used, why,
	    sizeof(why)), RDZV_PROTO_OK);
	ck_assert_str_eq(d.host, "node-a");
}
END_TEST

START_TEST(two_frames_in_one_buffer)
{
	struct rdzv_msg m, d;
	unsigned char buf[2 * (4 + RDZV_FRAME_MAX)];
	char why[RDZV_PROTO_ERRLEN] = "";
	size_t used;
	ssize_t a, b;

	rdzv_proto_init(&m, RDZV_OP_KEEPALIVE);
	a = rdzv_proto_encode(&m, buf, sizeof(buf));
	rdzv_proto_init(&m, RDZV_OP_FAILED);
	strcpy(m.text, "rank 3 exited 1");
	b = rdzv_proto_encode(&m, buf + a, sizeof(buf) - (size_t)a);
	ck_assert_int_eq(rdzv_proto_decode(buf, (size_t)(a + b), &d, &used,
	    why, sizeof(why)), RDZV_PROTO_OK);
	ck_assert_int_eq(d.op, RDZV_OP_KEEPALIVE);
	ck_assert_uint_eq(used, (size_t)a);
	ck_assert_int_eq(rdzv_proto_decode(buf + used, (size_t)b, &d, &used,
	    why, sizeof(why)), RDZV_PROTO_OK);
	ck_assert_str_eq(d.text, "rank 3 exited 1");
}
END_TEST

START_TEST(huge_length_rejected_early)
{
	unsigned char buf[4] = { 0xFF, 0xFF, 0xFF, 0x7F };
	struct rdzv_msg d;
	char why[RDZV_PROTO_ERRLEN] = "";
	size_t used;

	/* Only the length field has arrived: already an error. */
	ck_assert_int_eq(rdzv_proto_decode(buf, 4, &d, &used, why, sizeof(why)),
	    RDZV_PROTO_ERROR);
	ck_assert(why[0] != '\0');
	buf[0] = (RDZV_FRAME_MAX + 1) & 0xFF;
	buf[1] = (RDZV_FRAME_MAX + 1) >> 8;
	buf[2] = buf[3] = 0;
	ck_assert_int_eq(rdzv_proto_decode(buf, 4, &d, &used, why, sizeof(why)),
	    RDZV_PROTO_ERROR);
}
END_TEST

START_TEST(zero_length_and_unknown_op)
{
	unsigned char z[4] = { 0, 0, 0, 0 };
	unsigned char u[5] = { 1, 0, 0, 0, 0x03 };	/* torch's GET opcode */
	struct rdzv_msg d;
	char why[RDZV_PROTO_ERRLEN] = "";
	size_t used;

	ck_assert_int_eq(rdzv_proto_decode(z, 4, &d, &used, why, sizeof(why)),
	    RDZV_PROTO_ERROR);
	ck_assert_int_eq(rdzv_proto_decode(u, 5, &d, &used, why, sizeof(why)),
	    RDZV_PROTO_ERROR);
	ck_assert_str_eq(why, "unknown op");
}
END_TEST

START_TEST(truncated_and_trailing)
{
	struct rdzv_msg m, d;
	unsigned char buf[4 + RDZV_FRAME_MAX];
	char why[RDZV_PROTO_ERRLEN] = "";
	size_t used;
	ssize_t n;

	make_join(&m);
	n = rdzv_proto_encode(&m, buf, sizeof(buf));
	/* Claim one byte less: the last field is cut. */
	buf[0]--;
	ck_assert_int_eq(rdzv_proto_decode(buf, (size_t)n, &d, &used, why,
	    sizeof(why)), RDZV_PROTO_ERROR);
	/* Claim one byte more: a byte is left after the last field. */
	buf[0] += 2;
	buf[n] = 0;
	ck_assert_int_eq(rdzv_proto_decode(buf, (size_t)n + 1, &d, &used,
	    why, sizeof(why)), RDZV_PROTO_ERROR);
	ck_assert_str_eq(why, "bytes after the last field");
}
END_TEST

START_TEST(string_over_maximum)
{
	unsigned char buf[64];
	struct rdzv_msg d, m;
	char why[RDZV_PROTO_ERRLEN] = "";
	size_t used;

	/* FAILED with a text length of RDZV_TEXT_MAX + 1 */
	buf[0] = 3; buf[1] = buf[2] = buf[3] = 0;
	buf[4] = RDZV_OP_FAILED;
	buf[5] = (RDZV_TEXT_MAX + 1) & 0xFF;
	buf[6] = (RDZV_TEXT_MAX + 1) >> 8;
	ck_assert_int_eq(rdzv_proto_decode(buf, 7, &d, &used, why, sizeof(why)),
	    RDZV_PROTO_ERROR);
	ck_assert_str_eq(why, "string longer than its maximum");
	/* The encoder refuses the same. */
	rdzv_proto_init(&m, RDZV_OP_HELLO);
	m.op = RDZV_OP_JOIN;
	memset(m.run_id, 'x', sizeof(m.run_id));	/* no NUL within max */
	ck_assert_int_eq(rdzv_proto_encode(&m, buf, sizeof(buf)), -1);
}
END_TEST

START_TEST(nul_in_string_and_field_maximum)
{
	unsigned char buf[4 + RDZV_FRAME_MAX];
	struct rdzv_msg m, d;
	char why[RDZV_PROTO_ERRLEN] = "";
	size_t used;
	ssize_t n;

	rdzv_proto_init(&m, RDZV_OP_FAILED);
	strcpy(m.text, "abc");
	n = rdzv_proto_encode(&m, buf, sizeof(buf));
	buf[8] = '\0';
	ck_assert_int_eq(rdzv_proto_decode(buf, (size_t)n, &d, &used, why,
	    sizeof(why)), RDZV_PROTO_ERROR);
	/* nproc over RDZV_NPROC_MAX */
	make_join(&m);
	m.nproc = RDZV_NPROC_MAX + 1;
	ck_assert_int_eq(rdzv_proto_encode(&m, buf, sizeof(buf)), -1);
	/* Unknown op refused by the encoder, small buffer too. */
	m.op = 0x10;
	ck_assert_int_eq(rdzv_proto_encode(&m, buf, sizeof(buf)), -1);
	make_join(&m);
	ck_assert_int_eq(rdzv_proto_encode(&m, buf, 20), -1);
}
END_TEST

/* RESUME at every string's maximum fits one frame; workers past
 * RDZV_WORKERS_MAX is refused by both sides of the codec. */
START_TEST(resume_largest_and_workers_bounded)
{
	unsigned char buf[4 + RDZV_FRAME_MAX];
	struct rdzv_msg m, d;
	char why[RDZV_PROTO_ERRLEN] = "";
	size_t used;
	ssize_t n;

	rdzv_proto_init(&m, RDZV_OP_RESUME);
	memset(m.addr, 'a', RDZV_ADDR_MAX);
	memset(m.text, 't', RDZV_TEXT_MAX);
	m.round = 9;
	m.group_rank = -1;
	m.workers = RDZV_WORKERS_FAILED;
	n = rdzv_proto_encode(&m, buf, sizeof(buf));
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(rdzv_proto_decode(buf, (size_t)n, &d, &used, why,
	    sizeof(why)), RDZV_PROTO_OK);
	ck_assert_uint_eq(d.workers, RDZV_WORKERS_FAILED);
	ck_assert_int_eq(d.group_rank, -1);
	ck_assert_uint_eq(strlen(d.text), RDZV_TEXT_MAX);
	m.workers = RDZV_WORKERS_MAX + 1;
	ck_assert_int_eq(rdzv_proto_encode(&m, buf, sizeof(buf)), -1);
	m.workers = RDZV_WORKERS_STOPPED;
	m.text[0] = '\0';
	n = rdzv_proto_encode(&m, buf, sizeof(buf));
	ck_assert_int_gt(n, 0);
	buf[n - 3] = RDZV_WORKERS_MAX + 1;	/* workers: before text's u16 */
	ck_assert_int_eq(rdzv_proto_decode(buf, (size_t)n, &d, &used, why,
	    sizeof(why)), RDZV_PROTO_ERROR);
	ck_assert_str_eq(why, "field over its maximum");
}
END_TEST

/* The suite. */
Suite *
test_suite(void)
{
	Suite *s = suite_create("rdzv_proto");
	TCase *tc = tcase_create("codec");

	tcase_set_timeout(tc, 10);
	tcase_add_test(tc, roundtrip_join);
	tcase_add_loop_test(tc, roundtrip_every_op, 0,
	    sizeof(all_ops) / sizeof(all_ops[0]));
	tcase_add_test(tc, one_byte_at_a_time);
	tcase_add_test(tc, two_frames_in_one_buffer);
	tcase_add_test(tc, huge_length_rejected_early);
	tcase_add_test(tc, zero_length_and_unknown_op);
	tcase_add_test(tc, truncated_and_trailing);
	tcase_add_test(tc, string_over_maximum);
	tcase_add_test(tc, nul_in_string_and_field_maximum);
	tcase_add_test(tc, resume_largest_and_workers_bounded);
	suite_add_tcase(s, tc);
	return s;
}

/*
 * test_c10d.c: the c10d backend's parsers (--rdzv-conf with torchrun's
 * defaults, --rdzv-endpoint forms).  The Slurm node list's first host is
 * tested in test_slurm.c.
 */
#include <check.h>
#include <string.h>

#include "c10d.h"
#include "helper_main.h"

START_TEST(conf_defaults)
{
	struct c10d_conf c;
	char err[256] = "";

	ck_assert_int_eq(c10d_conf_parse(NULL, &c, err, sizeof(err)), 0);
	ck_assert_uint_eq(c.join_ms, 600000);
	ck_assert_uint_eq(c.last_call_ms, 30000);
	ck_assert_uint_eq(c.close_ms, 30000);
	ck_assert_uint_eq(c.keepalive_ms, 5000);
	ck_assert_uint_eq(c.keepalive_max, 3);
	ck_assert_uint_eq(c.read_ms, 60000);
	ck_assert_int_eq(c.is_host, -1);
}
END_TEST

START_TEST(conf_values)
{
	struct c10d_conf c;
	char err[256] = "";

	ck_assert_int_eq(c10d_conf_parse("join_timeout=10,last_call_timeout=0.5,"
	    "keep_alive_interval=1,keep_alive_max_attempt=7,is_host=yes,"
	    "timeout=900,use_libuv=0,store_type=tcp", &c, err, sizeof(err)), 0);
	ck_assert_uint_eq(c.join_ms, 10000);
	ck_assert_uint_eq(c.last_call_ms, 500);
	ck_assert_uint_eq(c.keepalive_ms, 1000);
	ck_assert_uint_eq(c.keepalive_max, 7);
	ck_assert_int_eq(c.is_host, 1);
	ck_assert_int_eq(c10d_conf_parse("is_host=F", &c, err, sizeof(err)), 0);
	ck_assert_int_eq(c.is_host, 0);
}
END_TEST

START_TEST(conf_errors)
{
	struct c10d_conf c;
	char err[256];

	ck_assert_int_eq(c10d_conf_parse("join_timeout=abc", &c, err,
	    sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "join_timeout"));
	ck_assert_int_eq(c10d_conf_parse("join_timeout=-1", &c, err,
	    sizeof(err)), -1);
	ck_assert_int_eq(c10d_conf_parse("keep_alive_max_attempt=0", &c, err,
	    sizeof(err)), -1);
	ck_assert_int_eq(c10d_conf_parse("is_host=maybe", &c, err,
	    sizeof(err)), -1);
	ck_assert_int_eq(c10d_conf_parse("store_type=file", &c, err,
	    sizeof(err)), -1);
	ck_assert_int_eq(c10d_conf_parse("novalue", &c, err, sizeof(err)), -1);
	ck_assert_int_eq(c10d_conf_parse("keep_alive_interval=0", &c, err,
	    sizeof(err)), -1);
	ck_assert_int_eq(c10d_conf_parse("join_timeout=99999999999", &c, err,
	    sizeof(err)), -1);
}
END_TEST

START_TEST(endpoints)
{
	char h[64];
	int port;

	ck_assert_int_eq(c10d_endpoint_parse("head:29401", h, sizeof(h), &port,
	    29400), 0);
	ck_assert_str_eq(h, "head");
	ck_assert_int_eq(port, 29401);
	ck_assert_int_eq(c10d_endpoint_parse("head", h, sizeof(h), &port,
	    29400), 0);
	ck_assert_int_eq(port, 29400);
	ck_assert_int_eq(c10d_endpoint_parse("[::1]:5", h, sizeof(h), &port,
	    29400), 0);
	ck_assert_str_eq(h, "::1");
	ck_assert_int_eq(port, 5);
	ck_assert_int_eq(c10d_endpoint_parse("fe80::1", h, sizeof(h), &port,
	    29400), 0);
	ck_assert_str_eq(h, "fe80::1");
	ck_assert_int_eq(port, 29400);
	ck_assert_int_eq(c10d_endpoint_parse("head:", h, sizeof(h), &port,
	    29400), -1);
	ck_assert_int_eq(c10d_endpoint_parse("head:70000", h, sizeof(h), &port,
	    29400), -1);
	ck_assert_int_eq(c10d_endpoint_parse(":29400", h, sizeof(h), &port,
	    29400), -1);
	ck_assert_int_eq(c10d_endpoint_parse("[::1", h, sizeof(h), &port,
	    29400), -1);
	ck_assert_int_eq(c10d_endpoint_parse("", h, sizeof(h), &port,
	    29400), -1);
}
END_TEST

/* The suite. */
Suite *
test_suite(void)
{
	Suite *s = suite_create("c10d");
	TCase *tc = tcase_create("parsers");

	tcase_set_timeout(tc, 10);
	tcase_add_test(tc, conf_defaults);
	tcase_add_test(tc, conf_values);
	tcase_add_test(tc, conf_errors);
	tcase_add_test(tc, endpoints);
	suite_add_tcase(s, tc);
	return s;
}

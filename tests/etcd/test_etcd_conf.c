/*
 * test_etcd_conf.c: --rdzv-conf of the etcd-v3 backend (etcd_conf.c):
 * defaults, etcd's keys and their torchrun-style aliases, the c10d keys
 * passed through, password_file, refusals; and --rdzv-endpoint's member
 * list (etcd_http_endpoints).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "etcd_conf.h"
#include "etcd_http.h"
#include "helper_main.h"

static struct etcd_conf cf;
static char err[512];

START_TEST(defaults)
{
	ck_assert_int_eq(etcd_conf_parse(NULL, &cf, err, sizeof(err)), 0);
	ck_assert_uint_eq(cf.request_ms, 5000);
	ck_assert_uint_eq(cf.c.keepalive_ms, 5000);
	ck_assert_uint_eq(cf.c.keepalive_max, 3);
	ck_assert_uint_eq(cf.c.join_ms, 600000);
	ck_assert_int_eq(cf.https, 0);
	ck_assert_str_eq(cf.user, "");
}
END_TEST

START_TEST(keys_and_aliases)
{
	ck_assert_int_eq(etcd_conf_parse("protocol=https,cacert=/ca,cert=/c,"
	    "key=/k,username=u,password=p,request_timeout=0.5,join_timeout=7,"
	    "keep_alive_interval=0.25", &cf, err, sizeof(err)), 0);
	ck_assert_int_eq(cf.https, 1);
	ck_assert_str_eq(cf.cacert, "/ca");
	ck_assert_str_eq(cf.cert, "/c");
	ck_assert_str_eq(cf.key, "/k");
	ck_assert_str_eq(cf.user, "u");
	ck_assert_str_eq(cf.password, "p");
	ck_assert_uint_eq(cf.request_ms, 500);
	ck_assert_uint_eq(cf.c.join_ms, 7000);
	ck_assert_uint_eq(cf.c.keepalive_ms, 250);
	ck_assert_int_eq(etcd_conf_parse("ca_cert=/a,ssl_cert=/b,ssl_cert_key=/c,"
	    "user=v", &cf, err, sizeof(err)), 0);
	ck_assert_str_eq(cf.cacert, "/a");
	ck_assert_str_eq(cf.key, "/c");
}
END_TEST

START_TEST(password_file)
{
	char path[] = "/tmp/cgrun-etcd-pw.XXXXXX", conf[128];
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "s3cret\nnext\n", 12), 12);
	close(fd);
	snprintf(conf, sizeof(conf), "user=root,password_file=%s", path);
	ck_assert_int_eq(etcd_conf_parse(conf, &cf, err, sizeof(err)), 0);
	ck_assert_str_eq(cf.password, "s3cret");
	unlink(path);
	ck_assert_int_eq(etcd_conf_parse(conf, &cf, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "No such file"));
}
END_TEST

START_TEST(refusals)
{
	static const char *const bad[][2] = {
		{ "protocol=ftp", "protocol=ftp" },
		{ "request_timeout=0", "request_timeout" },
		{ "request_timeout=x", "request_timeout" },
		{ "ssl_cert=/c", "ssl_cert needs ssl_cert_key" },
		{ "password=p", "password needs user" },
		{ "user=", "user=" },
		{ "join_timeout=-1", "join_timeout" },
		{ "keep_alive_max_attempt=0", "keep_alive_max_attempt" },
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		ck_assert_msg(etcd_conf_parse(bad[i][0], &cf, err, sizeof(err)) ==
		    -1, "accepted %s", bad[i][0]);
		ck_assert_msg(strstr(err, bad[i][1]) != NULL, "%s: %s",
		    bad[i][0], err);
	}
	/* a password is never echoed */
	ck_assert_int_eq(etcd_conf_parse("user=u,password=", &cf, err,
	    sizeof(err)), -1);
	ck_assert_ptr_null(strstr(err, "password=,"));
}
END_TEST

START_TEST(endpoints)
{
	struct etcd_http_conf hc;
	char many[1024] = "";
	int i;

	ck_assert_int_eq(etcd_http_endpoints("a:1,http://b:2/,https://c:3",
	    &hc, err, sizeof(err)), 0);
	ck_assert_int_eq(hc.nurls, 3);
	ck_assert_str_eq(hc.urls[0], "http://a:1");
	ck_assert_str_eq(hc.urls[1], "http://b:2");
	ck_assert_str_eq(hc.urls[2], "https://c:3");
	ck_assert_int_eq(etcd_http_endpoints(",a:1,,", &hc, err, sizeof(err)),
	    0);
	ck_assert_int_eq(hc.nurls, 1);
	ck_assert_int_eq(etcd_http_endpoints(NULL, &hc, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "needs --rdzv-endpoint"));
	ck_assert_int_eq(etcd_http_endpoints(",,", &hc, err, sizeof(err)), -1);
	ck_assert_int_eq(etcd_http_endpoints("a:1/v3", &hc, err, sizeof(err)),
	    -1);
	ck_assert_int_eq(etcd_http_endpoints("unix:///x", &hc, err,
	    sizeof(err)), -1);
	for (i = 0; i <= ETCD_ENDPOINTS_MAX; i++)
		snprintf(many + strlen(many), sizeof(many) - strlen(many),
		    "h%d:1,", i);
	ck_assert_int_eq(etcd_http_endpoints(many, &hc, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "more than 16"));
}
END_TEST

/* The suite. */
Suite *
test_suite(void)
{
	Suite *s = suite_create("etcd_conf");
	TCase *tc = tcase_create("conf");

	tcase_add_test(tc, defaults);
	tcase_add_test(tc, keys_and_aliases);
	tcase_add_test(tc, password_file);
	tcase_add_test(tc, refusals);
	tcase_add_test(tc, endpoints);
	suite_add_tcase(s, tc);
	return s;
}

/*
 * test_etcd_json.c: the etcd v3 gateway answer parser (etcd_json.c) on
 * real answers of etcd 3.4 and on hostile ones: cut short, too deep, too
 * long, bad base64, numbers that are not, too many key-values; base64.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "etcd_json.h"
#include "helper_main.h"

/* Parse a NUL-terminated answer. */
static int
parse(const char *s, struct etcd_reply *r, char *why)
{
	return etcd_json_parse(s, strlen(s), r, why, ETCD_JSON_ERRLEN);
}

START_TEST(range_answer)
{
	struct etcd_reply r;
	char why[ETCD_JSON_ERRLEN];

	ck_assert_int_eq(parse("{\"header\":{\"cluster_id\":\"99\",\"revision\""
	    ":\"3\",\"raft_term\":\"2\"},\"kvs\":[{\"key\":\"Zm9v\","
	    "\"create_revision\":\"2\",\"mod_revision\":\"3\",\"version\":\"2\","
	    "\"value\":\"YmFy\",\"lease\":\"77\"}],\"count\":\"1\"}", &r, why),
	    ETCD_JSON_OK);
	ck_assert_int_eq(r.revision, 3);
	ck_assert_uint_eq(r.nkvs, 1);
	ck_assert_str_eq(r.kvs[0].key, "foo");
	ck_assert_str_eq(r.kvs[0].value, "bar");
	ck_assert_int_eq(r.kvs[0].create_rev, 2);
	ck_assert_int_eq(r.kvs[0].mod_rev, 3);
	ck_assert_int_eq(r.kvs[0].lease, 77);
	etcd_reply_clear(&r);
}
END_TEST

START_TEST(txn_and_lease)
{
	struct etcd_reply r;
	char why[ETCD_JSON_ERRLEN];

	ck_assert_int_eq(parse("{\"header\":{\"revision\":\"5\"},\"succeeded\""
	    ":true,\"responses\":[{\"response_put\":{\"header\":{\"revision\":"
	    "\"5\"}}}]}", &r, why), ETCD_JSON_OK);
	ck_assert_int_eq(r.succeeded, 1);
	ck_assert_int_eq(r.revision, 5);
	etcd_reply_clear(&r);
	ck_assert_int_eq(parse("{\"header\":{\"revision\":\"4\"},\"responses\":"
	    "[{\"response_range\":{\"kvs\":[{\"key\":\"Zm9v\",\"value\":\"\"}]}}"
	    "]}", &r, why), ETCD_JSON_OK);
	ck_assert_int_eq(r.succeeded, 0);
	ck_assert_uint_eq(r.nkvs, 1);
	ck_assert_str_eq(r.kvs[0].value, "");
	etcd_reply_clear(&r);
	/* a response without kvs before the one with them (fuzz finding) */
	ck_assert_int_eq(parse("{\"responses\":[{\"response_range\":{\"kv'\":"
	    "[]}},{\"response_put\":{}},{\"response_range\":{\"kvs\":[{"
	    "\"key\":\"YQ==\"}]}}]}", &r, why), ETCD_JSON_OK);
	ck_assert_uint_eq(r.nkvs, 1);
	etcd_reply_clear(&r);
	ck_assert_int_eq(parse("{\"result\":{\"header\":{\"revision\":\"3\"},"
	    "\"ID\":\"6524205218050440202\",\"TTL\":\"5\"}}\n", &r, why),
	    ETCD_JSON_OK);
	ck_assert(r.lease_id == 6524205218050440202LL);
	ck_assert_int_eq(r.ttl, 5);
	etcd_reply_clear(&r);
}
END_TEST

START_TEST(watch_events_and_errors)
{
	struct etcd_reply r;
	char why[ETCD_JSON_ERRLEN];

	ck_assert_int_eq(parse("{\"result\":{\"header\":{\"revision\":\"9\"},"
	    "\"events\":[{\"type\":\"DELETE\",\"kv\":{\"key\":\"YQ==\","
	    "\"mod_revision\":\"9\"}},{\"kv\":{\"key\":\"Yg==\",\"value\":"
	    "\"eA==\"}}]}}", &r, why), ETCD_JSON_OK);
	ck_assert_uint_eq(r.nkvs, 2);
	ck_assert_int_eq(r.kvs[0].deleted, 1);
	ck_assert_str_eq(r.kvs[0].key, "a");
	ck_assert_int_eq(r.kvs[1].deleted, 0);
	ck_assert_str_eq(r.kvs[1].value, "x");
	etcd_reply_clear(&r);
	ck_assert_int_eq(parse("{\"result\":{\"canceled\":true,"
	    "\"compact_revision\":\"42\"}}", &r, why), ETCD_JSON_OK);
	ck_assert_int_eq(r.canceled, 1);
	ck_assert_int_eq(r.compact_revision, 42);
	etcd_reply_clear(&r);
	ck_assert_int_eq(parse("{\"error\":\"etcdserver: no leader\",\"code\":14,"
	    "\"message\":\"etcdserver: no leader\"}", &r, why), ETCD_JSON_OK);
	ck_assert_int_eq(r.code, 14);
	ck_assert_str_eq(r.message, "etcdserver: no leader");
	etcd_reply_clear(&r);
	ck_assert_int_eq(parse("{\"error\":{\"grpc_code\":1,\"http_code\":408,"
	    "\"message\":\"context canceled\",\"http_status\":\"\"}}", &r, why),
	    ETCD_JSON_OK);
	ck_assert_int_eq(r.code, 1);
	etcd_reply_clear(&r);
}
END_TEST

START_TEST(hostile_answers)
{
	static const char *bad[] = {
		"", "{", "[1,2]", "\"x\"", "{\"kvs\":[{\"key\":\"Zm9\"}]}",
		"{\"kvs\":[{\"value\":\"YQ==\"}]}", "{\"kvs\":[1]}",
		"{\"header\":{\"revision\":\"12x\"}}", "{\"TTL\":[]}",
		"{\"a\":1} {\"b\":2}", "{\"kvs\":[{\"key\":\"YQ==\","
		"\"value\":\"!!!!\"}]}", "404 page not found\n",
		"{\"code\":\"many\",\"error\":\"x\"}",
	};
	struct etcd_reply r;
	char why[ETCD_JSON_ERRLEN];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = '\0';
		ck_assert_msg(parse(bad[i], &r, why) == ETCD_JSON_ERROR,
		    "accepted %s", bad[i]);
		ck_assert(why[0] != '\0');
		ck_assert_uint_eq(r.nkvs, 0);
	}
}
END_TEST

START_TEST(bounds)
{
	struct etcd_reply r;
	char why[ETCD_JSON_ERRLEN];
	char *s;
	size_t i, n;

	/* too deep */
	s = calloc(1, 4096);
	for (i = 0; i < 100; i++)
		strcat(s, "{\"a\":");
	strcat(s, "1");
	for (i = 0; i < 100; i++)
		strcat(s, "}");
	ck_assert_int_eq(parse(s, &r, why), ETCD_JSON_ERROR);
	free(s);
	/* too many key-values */
	n = 16 + (ETCD_KVS_MAX + 1) * 16;
	s = malloc(n);
	strcpy(s, "{\"kvs\":[");
	for (i = 0; i <= ETCD_KVS_MAX; i++)
		strcat(s, i ? ",{\"key\":\"YQ==\"}" : "{\"key\":\"YQ==\"}");
	strcat(s, "]}");
	ck_assert_int_eq(parse(s, &r, why), ETCD_JSON_ERROR);
	ck_assert_str_eq(why, "too many key-values in one answer");
	free(s);
	/* over the size bound */
	s = malloc(ETCD_BODY_MAX + 2);
	memset(s, ' ', ETCD_BODY_MAX + 1);
	s[0] = '{';
	s[ETCD_BODY_MAX] = '}';
	ck_assert_int_eq(etcd_json_parse(s, ETCD_BODY_MAX + 1, &r, why,
	    sizeof(why)),
	    ETCD_JSON_ERROR);
	free(s);
	/* a key over ETCD_KEY_MAX */
	n = ETCD_KEY_MAX * 2 + 64;
	s = malloc(n);
	strcpy(s, "{\"kvs\":[{\"key\":\"");
	for (i = 0; i < (ETCD_KEY_MAX + 3) / 3 + 1; i++)
		strcat(s, "YWFh");
	strcat(s, "\"}]}");
	ck_assert_int_eq(parse(s, &r, why), ETCD_JSON_ERROR);
	free(s);
}
END_TEST

START_TEST(base64)
{
	char b[64], d[64];

	ck_assert_int_eq(etcd_b64(b, sizeof(b), "/cgrun/v1/x", 11), 0);
	ck_assert_int_eq(etcd_unb64(d, sizeof(d) - 1, b, strlen(b)), 11);
	ck_assert_str_eq(d, "/cgrun/v1/x");
	ck_assert_int_eq(etcd_b64(b, 4, "abcd", 4), -1);
	ck_assert_int_eq(etcd_unb64(d, 1, "YWJj", 4), -1);
	ck_assert_int_eq(etcd_unb64(d, 3, "YWJj", 4), 3);
	ck_assert_int_eq(etcd_unb64(d, 3, "YWJ", 3), -1);
	ck_assert_int_eq(etcd_unb64(d, 3, "", 0), 0);
}
END_TEST

/* The suite. */
Suite *
test_suite(void)
{
	Suite *s = suite_create("etcd_json");
	TCase *tc = tcase_create("parse");

	tcase_add_test(tc, range_answer);
	tcase_add_test(tc, txn_and_lease);
	tcase_add_test(tc, watch_events_and_errors);
	tcase_add_test(tc, hostile_answers);
	tcase_add_test(tc, bounds);
	tcase_add_test(tc, base64);
	suite_add_tcase(s, tc);
	return s;
}

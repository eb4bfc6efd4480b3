/*
 * test_kv.c: the store's key/value table: values, ADD's text counters,
 * COMPARE_SET's four cases, waits (duplicates, counts, cancel, close,
 * the stale wake of a timed-out 1.13 client), watches, queues, barrier,
 * reset; kv_validate() after every mutation.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv.h"
#include "wire.h"
#include "helper_main.h"

/* What the callbacks saw, per fake connection. */
struct owner {
	int	wakes;
	int	events[16];
	char	last_old[64], last_new[64];
	int	nevents;
};

/* kv callback: count wakes. */
static void
t_wake(void *o)
{
	((struct owner *)o)->wakes++;
}

/* kv callback: record watch events. */
static void
t_watch(void *o, int ev, const uint8_t *k, size_t kl, const uint8_t *old,
    size_t ol, const uint8_t *nv, size_t nl)
{
	struct owner *w = o;

	if (w->nevents < 16)
		w->events[w->nevents] = ev;
	w->nevents++;
	snprintf(w->last_old, sizeof w->last_old, "%.*s", (int)ol,
	    old ? (const char *)old : "");
	snprintf(w->last_new, sizeof w->last_new, "%.*s", (int)nl,
	    nv ? (const char *)nv : "");
}

static const struct kv_ops ops = { t_wake, t_watch };
static struct kv *kv;

/* A fresh table per test. */
static void
setup(void)
{
	kv = kv_new(&ops);
	ck_assert_ptr_nonnull(kv);
}

/* Validate and free the table. */
static void
teardown(void)
{
	ck_assert_int_eq(kv_validate(kv), 0);
	kv_free(kv);
}

#define S(s)	(const uint8_t *)(s), strlen(s)
#define VALID()	ck_assert_int_eq(kv_validate(kv), 0)

/* The value of key as a C string ("<missing>" if absent). */
static const char *
val(const char *key)
{
	static char buf[256];
	const uint8_t *v;
	size_t n;

	if (kv_get(kv, S(key), &v, &n) == -1)
		return "<missing>";
	snprintf(buf, sizeof buf, "%.*s", (int)n, (const char *)v);
	return buf;
}

/* Encode keys as a WAIT list into buf; returns its length. */
static size_t
keylist(uint8_t *buf, size_t cap, const char *const *keys, int n)
{
	size_t off = 0, l;
	int i;

	for (i = 0; i < n; i++) {
		l = strlen(keys[i]);
		ck_assert_uint_le(off + 8 + l, cap);
		wire_enc_u64(buf + off, l);
		memcpy(buf + off + 8, keys[i], l);
		off += 8 + l;
	}
	return off;
}

START_TEST(set_get_delete_count)
{
	static const uint8_t bin[] = { 0, 1, 0, 0xff };

	ck_assert_str_eq(val("/a"), "<missing>");
	ck_assert_int_eq(kv_set(kv, S("/a"), S("1")), 0);
	ck_assert_int_eq(kv_set(kv, S("/a"), S("22")), 0);
	ck_assert_str_eq(val("/a"), "22");
	ck_assert_int_eq(kv_set(kv, bin, sizeof bin, bin, sizeof bin), 0);
	ck_assert_int_eq(kv_set(kv, S(""), S("")), 0);
	VALID();
	ck_assert_uint_eq(kv_count(kv), 3);
	ck_assert_str_eq(val(""), "");
	ck_assert_int_eq(kv_delete(kv, S("/a")), 1);
	ck_assert_int_eq(kv_delete(kv, S("/a")), 0);
	ck_assert_uint_eq(kv_count(kv), 2);
	ck_assert(kv_exists(kv, bin, sizeof bin));
	ck_assert(!kv_exists(kv, bin, 3));
	VALID();
}
END_TEST

START_TEST(many_keys_grow)
{
	char k[32];
	int i;

	for (i = 0; i < 20000; i++) {
		snprintf(k, sizeof k, "/key/%d", i);
		ck_assert_int_eq(kv_set(kv, S(k), S(k)), 0);
	}
	VALID();
	ck_assert_uint_eq(kv_count(kv), 20000);
	ck_assert_str_eq(val("/key/12345"), "/key/12345");
	for (i = 0; i < 20000; i += 2) {
		snprintf(k, sizeof k, "/key/%d", i);
		ck_assert_int_eq(kv_delete(kv, S(k)), 1);
	}
	ck_assert_uint_eq(kv_count(kv), 10000);
	VALID();
}
END_TEST

START_TEST(add_text_counters)
{
	int64_t r;

	ck_assert_int_eq(kv_add(kv, S("/c"), 5, &r), KV_OK);
	ck_assert(r == 5);
	ck_assert_int_eq(kv_add(kv, S("/c"), -2, &r), KV_OK);
	ck_assert(r == 3);
	ck_assert_str_eq(val("/c"), "3");
	kv_set(kv, S("/j"), S("12abc"));
	ck_assert_int_eq(kv_add(kv, S("/j"), 1, &r), KV_OK);
	ck_assert(r == 13);
	kv_set(kv, S("/s"), S(" -7"));
	ck_assert_int_eq(kv_add(kv, S("/s"), 2, &r), KV_OK);
	ck_assert(r == -5);
	ck_assert_str_eq(val("/s"), "-5");
	kv_set(kv, S("/t"), S("abc"));
	ck_assert_int_eq(kv_add(kv, S("/t"), 1, &r), KV_NOT_NUMBER);
	ck_assert_str_eq(val("/t"), "abc");
	kv_set(kv, S("/e"), S(""));
	ck_assert_int_eq(kv_add(kv, S("/e"), 1, &r), KV_NOT_NUMBER);
	kv_set(kv, S("/o"), S("99999999999999999999"));
	ck_assert_int_eq(kv_add(kv, S("/o"), 1, &r), KV_OVERFLOW);
	kv_set(kv, S("/m"), S("9223372036854775807"));
	ck_assert_int_eq(kv_add(kv, S("/m"), 1, &r), KV_OVERFLOW);
	ck_assert_int_eq(kv_add(kv, S("/m"), 0, &r), KV_OK);
	ck_assert(r == INT64_MAX);
	kv_set(kv, S("/n"), S("-9223372036854775808"));
	ck_assert_int_eq(kv_add(kv, S("/n"), 0, &r), KV_OK);
	ck_assert(r == INT64_MIN);
	ck_assert_str_eq(val("/n"), "-9223372036854775808");
	ck_assert_int_eq(kv_add(kv, S("/n"), INT64_MAX, &r), KV_OK);
	ck_assert_str_eq(val("/n"), "-1");
	ck_assert_int_eq(kv_add(kv, S("/n"), 1, &r), KV_OK);
	ck_assert_str_eq(val("/n"), "0");
	ck_assert_int_eq(kv_add(kv, S("/n"), 1000000, &r), KV_OK);
	ck_assert_str_eq(val("/n"), "1000000");
	/* A failed ADD on a missing key leaves nothing behind. */
	ck_assert_int_eq(kv_add(kv, S("/c"), INT64_MAX, &r), KV_OVERFLOW);
	ck_assert_int_eq(kv_add(kv, S("/new"), INT64_MIN, &r), KV_OK);
	VALID();
}
END_TEST

START_TEST(compare_set_four_rows)
{
	const uint8_t *r;
	size_t n;

	/* missing, expected empty: created, reply desired */
	ck_assert_int_eq(kv_compare_set(kv, S("/cs"), S(""), S("d"), &r, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_mem_eq(r, "d", 1);
	ck_assert_str_eq(val("/cs"), "d");
	/* missing, expected non-empty: nothing, reply expected */
	ck_assert_int_eq(kv_compare_set(kv, S("/cs2"), S("x"), S("d"), &r, &n), 0);
	ck_assert_mem_eq(r, "x", 1);
	ck_assert_str_eq(val("/cs2"), "<missing>");
	/* present, equal: swapped, reply new */
	ck_assert_int_eq(kv_compare_set(kv, S("/cs"), S("d"), S("ee"), &r, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(val("/cs"), "ee");
	/* present, different: reply current */
	ck_assert_int_eq(kv_compare_set(kv, S("/cs"), S("zz"), S("f"), &r, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_mem_eq(r, "ee", 2);
	/* present, expected empty but value not empty: current */
	ck_assert_int_eq(kv_compare_set(kv, S("/cs"), S(""), S("f"), &r, &n), 0);
	ck_assert_mem_eq(r, "ee", 2);
	ck_assert_uint_eq(kv_count(kv), 1);
	VALID();
}
END_TEST

START_TEST(wait_wake_duplicates)
{
	struct owner o = { 0 };
	struct kv_client *c = kv_client_new(kv, &o);
	const char *keys[] = { "/a", "/b", "/a", "/have" };
	uint8_t l[256];
	size_t n;

	kv_set(kv, S("/have"), S("1"));
	n = keylist(l, sizeof l, keys, 4);
	ck_assert_int_eq(kv_wait(kv, c, l, n), 0);
	ck_assert_int_eq(kv_client_outstanding(c), 3);
	VALID();
	/* One SET releases both registrations of a duplicate key. */
	kv_set(kv, S("/a"), S("x"));
	ck_assert_int_eq(kv_client_outstanding(c), 1);
	ck_assert_int_eq(o.wakes, 0);
	kv_add(kv, S("/b"), 1, &(int64_t){0});
	ck_assert_int_eq(o.wakes, 1);
	ck_assert_int_eq(kv_client_outstanding(c), 0);
	/* All present: immediate. n = 0: immediate. */
	ck_assert_int_eq(kv_wait(kv, c, l, n), 1);
	ck_assert_int_eq(kv_wait(kv, c, l, 0), 1);
	VALID();
	kv_client_free(c);
}
END_TEST

START_TEST(wait_wakers)
{
	struct owner o = { 0 };
	struct kv_client *c = kv_client_new(kv, &o);
	const char *k1[] = { "/ap" }, *k2[] = { "/cs" }, *k3[] = { "/del" };
	uint8_t l[64];
	size_t n;
	const uint8_t *r;
	size_t rn;

	n = keylist(l, sizeof l, k1, 1);
	ck_assert_int_eq(kv_wait(kv, c, l, n), 0);
	kv_append(kv, S("/ap"), S("x"));
	ck_assert_int_eq(o.wakes, 1);
	/* MULTI_SET is SETs. COMPARE_SET that stores wakes; one that
	 * stores nothing does not. */
	n = keylist(l, sizeof l, k2, 1);
	ck_assert_int_eq(kv_wait(kv, c, l, n), 0);
	kv_compare_set(kv, S("/cs"), S("nope"), S("v"), &r, &rn);
	ck_assert_int_eq(o.wakes, 1);
	kv_compare_set(kv, S("/cs"), S(""), S("v"), &r, &rn);
	ck_assert_int_eq(o.wakes, 2);
	/* DELETE never wakes; a present key waited on again after delete. */
	kv_set(kv, S("/del"), S("1"));
	kv_delete(kv, S("/del"));
	n = keylist(l, sizeof l, k3, 1);
	ck_assert_int_eq(kv_wait(kv, c, l, n), 0);
	kv_delete(kv, S("/del"));
	ck_assert_int_eq(o.wakes, 2);
	kv_set(kv, S("/del"), S("2"));
	ck_assert_int_eq(o.wakes, 3);
	VALID();
	kv_client_free(c);
}
END_TEST

START_TEST(cancel_and_close)
{
	struct owner o1 = { 0 }, o2 = { 0 };
	struct kv_client *c1 = kv_client_new(kv, &o1);
	struct kv_client *c2 = kv_client_new(kv, &o2);
	const char *keys[] = { "/x", "/y" };
	uint8_t l[64];
	size_t n = keylist(l, sizeof l, keys, 2);

	ck_assert_int_eq(kv_wait(kv, c1, l, n), 0);
	ck_assert_int_eq(kv_wait(kv, c2, l, n), 0);
	kv_cancel(c1);
	ck_assert_int_eq(kv_client_outstanding(c1), 0);
	VALID();
	kv_client_free(c2);
	VALID();
	/* Nobody waits any more: the placeholder entries are gone. */
	kv_set(kv, S("/x"), S("1"));
	kv_set(kv, S("/y"), S("1"));
	ck_assert_int_eq(o1.wakes, 0);
	ck_assert_int_eq(o2.wakes, 0);
	ck_assert_uint_eq(kv_count(kv), 2);
	kv_client_free(c1);
}
END_TEST

START_TEST(stale_wake_after_client_timeout)
{
	/* A 1.13 client times out and sends nothing: the registration stays
	 * and the late SET still produces STOP_WAITING. */
	struct owner o = { 0 };
	struct kv_client *c = kv_client_new(kv, &o);
	const char *k[] = { "/late" };
	uint8_t l[64];
	size_t n = keylist(l, sizeof l, k, 1);

	ck_assert_int_eq(kv_wait(kv, c, l, n), 0);
	kv_set(kv, S("/late"), S("v"));
	ck_assert_int_eq(o.wakes, 1);
	kv_client_free(c);
}
END_TEST

START_TEST(watch_events)
{
	struct owner o = { 0 };
	struct kv_client *c = kv_client_new(kv, &o);
	int64_t r;
	const uint8_t *cr;
	size_t cn;

	ck_assert_int_eq(kv_watch(kv, c, S("/wk")), 0);
	kv_set(kv, S("/wk"), S("one"));
	ck_assert_int_eq(o.events[0], WIRE_WATCH_CREATED);
	ck_assert_str_eq(o.last_old, "");
	ck_assert_str_eq(o.last_new, "one");
	kv_set(kv, S("/wk"), S("two"));
	ck_assert_int_eq(o.events[1], WIRE_WATCH_UPDATED);
	ck_assert_str_eq(o.last_old, "one");
	kv_delete(kv, S("/wk"));
	ck_assert_int_eq(o.events[2], WIRE_WATCH_DELETED);
	ck_assert_str_eq(o.last_old, "two");
	ck_assert_str_eq(o.last_new, "");
	kv_add(kv, S("/wk"), 4, &r);
	ck_assert_int_eq(o.events[3], WIRE_WATCH_CREATED);
	ck_assert_str_eq(o.last_new, "4");
	/* A failed COMPARE_SET sends nothing; a successful one does. */
	kv_compare_set(kv, S("/wk"), S("x"), S("y"), &cr, &cn);
	ck_assert_int_eq(o.nevents, 4);
	kv_compare_set(kv, S("/wk"), S("4"), S("y"), &cr, &cn);
	ck_assert_int_eq(o.nevents, 5);
	kv_append(kv, S("/wk"), S("z"));
	ck_assert_int_eq(o.nevents, 6);
	ck_assert_str_eq(o.last_old, "y");
	ck_assert_str_eq(o.last_new, "yz");
	VALID();
	kv_client_free(c);
	VALID();
	kv_set(kv, S("/wk"), S("after"));
	ck_assert_int_eq(o.nevents, 6);
}
END_TEST

START_TEST(queues)
{
	struct owner o1 = { 0 }, o2 = { 0 };
	struct kv_client *c1 = kv_client_new(kv, &o1);
	struct kv_client *c2 = kv_client_new(kv, &o2);
	const char *k[] = { "/q" };
	uint8_t l[64], *v;
	size_t n = keylist(l, sizeof l, k, 1), vl;
	int64_t before;

	ck_assert(kv_queue_len(kv, S("/q")) == 0);
	ck_assert_int_eq(kv_queue_pop(kv, S("/q"), &before, &v, &vl), 0);
	ck_assert(before == 0);
	ck_assert_ptr_null(v);
	ck_assert_int_eq(kv_wait(kv, c1, l, n), 0);
	ck_assert_int_eq(kv_wait(kv, c2, l, n), 0);
	/* A push releases one waiter, first come first served. */
	kv_queue_push(kv, S("/q"), S("one"));
	ck_assert_int_eq(o1.wakes, 1);
	ck_assert_int_eq(o2.wakes, 0);
	kv_queue_push(kv, S("/q"), S("two"));
	ck_assert_int_eq(o2.wakes, 1);
	ck_assert(kv_queue_len(kv, S("/q")) == 2);
	/* A non-empty queue counts for CHECK/WAIT, not for GETNUMKEYS. */
	ck_assert(kv_exists(kv, S("/q")));
	ck_assert_uint_eq(kv_count(kv), 0);
	ck_assert_str_eq(val("/q"), "<missing>");
	ck_assert_int_eq(kv_queue_pop(kv, S("/q"), &before, &v, &vl), 0);
	ck_assert(before == 2);
	ck_assert_uint_eq(vl, 3);
	ck_assert_mem_eq(v, "one", 3);
	free(v);
	ck_assert_int_eq(kv_queue_pop(kv, S("/q"), &before, &v, &vl), 0);
	ck_assert(before == 1);
	free(v);
	ck_assert(!kv_exists(kv, S("/q")));
	VALID();
	kv_client_free(c1);
	kv_client_free(c2);
}
END_TEST

START_TEST(barrier)
{
	struct owner o[3] = { { 0 } };
	struct kv_client *c[3];
	int i, done;

	for (i = 0; i < 3; i++)
		c[i] = kv_client_new(kv, &o[i]);
	ck_assert_int_eq(kv_barrier(kv, c[0], S("/b"), 3, &done), KV_OK);
	ck_assert_int_eq(done, 0);
	ck_assert_int_eq(kv_barrier(kv, c[1], S("/b"), 3, &done), KV_OK);
	ck_assert_int_eq(done, 0);
	ck_assert_int_eq(o[0].wakes + o[1].wakes, 0);
	ck_assert_int_eq(kv_barrier(kv, c[2], S("/b"), 3, &done), KV_OK);
	ck_assert_int_eq(done, 1);
	ck_assert_int_eq(o[0].wakes, 1);
	ck_assert_int_eq(o[1].wakes, 1);
	ck_assert_int_eq(o[2].wakes, 0);
	ck_assert_str_eq(val("/b"), "3");
	VALID();
	for (i = 0; i < 3; i++)
		kv_client_free(c[i]);
}
END_TEST

START_TEST(big_barrier_wakes_all)
{
	enum { N = 8192 };
	static struct owner o[N];
	static struct kv_client *c[N];
	const char *k[] = { "/last" };
	uint8_t l[64];
	size_t n = keylist(l, sizeof l, k, 1);
	int64_t r;
	int i, woken = 0;

	memset(o, 0, sizeof o);
	for (i = 0; i < N; i++) {
		c[i] = kv_client_new(kv, &o[i]);
		ck_assert_int_eq(kv_add(kv, S("/cnt"), 1, &r), KV_OK);
		ck_assert_int_eq(kv_wait(kv, c[i], l, n), 0);
	}
	ck_assert(r == N);
	kv_set(kv, S("/last"), S("1"));
	for (i = 0; i < N; i++)
		woken += o[i].wakes;
	ck_assert_int_eq(woken, N);
	VALID();
	for (i = 0; i < N; i++)
		kv_client_free(c[i]);
}
END_TEST

START_TEST(reset_keeps_clients)
{
	struct owner o = { 0 };
	struct kv_client *c = kv_client_new(kv, &o);
	const char *k[] = { "/w" };
	uint8_t l[64];
	size_t n = keylist(l, sizeof l, k, 1);

	kv_set(kv, S("/a"), S("1"));
	kv_queue_push(kv, S("/q"), S("1"));
	kv_watch(kv, c, S("/a"));
	ck_assert_int_eq(kv_wait(kv, c, l, n), 0);
	kv_reset(kv);
	VALID();
	ck_assert_uint_eq(kv_count(kv), 0);
	ck_assert(kv_queue_len(kv, S("/q")) == 0);
	ck_assert_int_eq(kv_client_outstanding(c), 0);
	kv_set(kv, S("/w"), S("1"));
	kv_set(kv, S("/a"), S("1"));
	ck_assert_int_eq(o.wakes, 0);
	ck_assert_int_eq(o.nevents, 0);
	kv_client_free(c);
}
END_TEST

/* kv_foreach callback: count keys. */
static void
count_key(const uint8_t *k, size_t kl, void *arg)
{
	(*(int *)arg)++;
}

START_TEST(foreach_and_parse)
{
	int n = 0;
	int64_t v;

	kv_set(kv, S("/a"), S("1"));
	kv_set(kv, S("/b"), S("1"));
	kv_queue_push(kv, S("/q"), S("1"));
	kv_foreach(kv, count_key, &n);
	ck_assert_int_eq(n, 2);
	ck_assert_int_eq(kv_parse_i64(S("+42"), &v), KV_OK);
	ck_assert(v == 42);
	ck_assert_int_eq(kv_parse_i64(S("\t\n 7x"), &v), KV_OK);
	ck_assert(v == 7);
	ck_assert_int_eq(kv_parse_i64(S("-"), &v), KV_NOT_NUMBER);
	ck_assert_int_eq(kv_parse_i64(S("9223372036854775808"), &v),
	    KV_OVERFLOW);
}
END_TEST

/* The suite. */
Suite *
test_suite(void)
{
	Suite *s = suite_create("kv");
	TCase *tc = tcase_create("table");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, set_get_delete_count);
	tcase_add_test(tc, many_keys_grow);
	tcase_add_test(tc, add_text_counters);
	tcase_add_test(tc, compare_set_four_rows);
	tcase_add_test(tc, wait_wake_duplicates);
	tcase_add_test(tc, wait_wakers);
	tcase_add_test(tc, cancel_and_close);
	tcase_add_test(tc, stale_wake_after_client_timeout);
	tcase_add_test(tc, watch_events);
	tcase_add_test(tc, queues);
	tcase_add_test(tc, barrier);
	tcase_add_test(tc, big_barrier_wakes_all);
	tcase_add_test(tc, reset_keeps_clients);
	tcase_add_test(tc, foreach_and_parse);
	suite_add_tcase(s, tc);
	return s;
}

/*
 * store_client.c: drives every operation of the libcgrun store client
 * against a live server and checks exact results; used by
 * tests/interop/t_client_vs_torch26.sh (torch's own 2.6 server) and
 * tests/interop/t_client_vs_rdzvd.sh (cgrun-rdzvd).  Built by those scripts with cc
 * against $CGRUN_BUILD/libcgrun.a.
 *
 * usage: store_client HOST PORT
 * Runs the checks, then leaves keys for a Python PrefixStore reader
 * (c2py/k = "from-c", c2py/inner/k2 = "nested", c2py/bin = 00 ff 00 61)
 * and waits for the reader's answer py/k = "from-py" before setting "done".
 * Prints "ok NAME" per check; exits 0 if all passed, 1 on the first failure.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cgrun/store.h"

static struct cgrun_store *st;

/* Fail the run, naming the check and the client's last error. */
static void
die(const char *what)
{
	printf("FAIL %s: %s (errno %d %s)\n", what, cgrun_store_errmsg(st),
	    errno, strerror(errno));
	exit(1);
}

/* Milliseconds on the monotonic clock. */
static long long
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* get(key) through handle h must equal want (len bytes). */
static void
expect_get(struct cgrun_store *h, const char *key, const void *want,
    size_t len, const char *what)
{
	void *v;
	size_t n;

	if (cgrun_store_get(h, key, &v, &n) == -1)
		die(what);
	if (n != len || memcmp(v, want, len) != 0 || ((char *)v)[n] != '\0') {
		printf("FAIL %s: got %zu bytes '%.*s'\n", what, n, (int)n,
		    (char *)v);
		exit(1);
	}
	free(v);
	printf("ok %s\n", what);
}

/* SET, GET, ADD, binary and empty values. */
static void
check_basic(void)
{
	int64_t r;
	static const char bin[] = { 0, 'x', 0, (char)0xff };

	if (cgrun_store_set(st, "a", "hello", 5) == -1)
		die("set");
	expect_get(st, "a", "hello", 5, "set+get");
	if (cgrun_store_set(st, "a", "again", 5) == -1)
		die("set overwrite");
	expect_get(st, "a", "again", 5, "overwrite");
	if (cgrun_store_set(st, "bin", bin, sizeof(bin)) == -1)
		die("set binary");
	expect_get(st, "bin", bin, sizeof(bin), "binary value");
	if (cgrun_store_set(st, "empty", "", 0) == -1)
		die("set empty");
	expect_get(st, "empty", "", 0, "empty value");
	if (cgrun_store_add(st, "cnt", 5, &r) == -1 || r != 5)
		die("add 5 -> 5");
	if (cgrun_store_add(st, "cnt", -7, &r) == -1 || r != -2)
		die("add -7 -> -2");
	expect_get(st, "cnt", "-2", 2, "add stores decimal text");
	if (cgrun_store_add(st, "cnt", 0, NULL) == -1)
		die("add with NULL result");
	printf("ok add\n");
}

/* COMPARE_SET's four cases, as torch returns them. */
static void
check_compare_set(void)
{
	void *v;
	size_t n;

	if (cgrun_store_compare_set(st, "cs", "", 0, "d", 1, &v, &n) == -1 ||
	    n != 1 || memcmp(v, "d", 1) != 0)
		die("compare_set missing+empty creates");
	free(v);
	if (cgrun_store_compare_set(st, "cs2", "x", 1, "d", 1, &v, &n) == -1 ||
	    n != 1 || memcmp(v, "x", 1) != 0)
		die("compare_set missing+nonempty echoes expected");
	free(v);
	if (cgrun_store_check(st, (const char *[]){ "cs2" }, 1) != 0)
		die("compare_set missing+nonempty creates nothing");
	if (cgrun_store_compare_set(st, "cs", "d", 1, "ee", 2, &v, &n) == -1 ||
	    n != 2 || memcmp(v, "ee", 2) != 0)
		die("compare_set match swaps");
	free(v);
	if (cgrun_store_compare_set(st, "cs", "zz", 2, "f", 1, &v, &n) == -1 ||
	    n != 2 || memcmp(v, "ee", 2) != 0)
		die("compare_set mismatch returns current");
	free(v);
	printf("ok compare_set\n");
}

/* CHECK, WAIT, WAIT timeout + reuse, get timeout + reuse. */
static void
check_wait(void)
{
	const char *both[] = { "a", "cnt" }, *miss[] = { "a", "nope" };
	const char *never[] = { "never" };
	long long t0, dt;
	void *v;
	size_t n;

	if (cgrun_store_check(st, both, 2) != 1 ||
	    cgrun_store_check(st, miss, 2) != 0 ||
	    cgrun_store_check(st, NULL, 0) != 1)
		die("check");
	printf("ok check\n");
	if (cgrun_store_wait(st, both, 2, 1000) == -1)
		die("wait on present keys");
	t0 = now_ms();
	if (cgrun_store_wait(st, never, 1, 300) != -1 || errno != ETIMEDOUT)
		die("wait timeout");
	dt = now_ms() - t0;
	if (dt < 290 || dt > 5000) {
		printf("FAIL wait timeout took %lldms\n", dt);
		exit(1);
	}
	printf("ok wait timeout (%lldms): %s\n", dt, cgrun_store_errmsg(st));
	expect_get(st, "a", "again", 5, "connection usable after wait timeout");
	cgrun_store_set_timeout(st, 200);
	if (cgrun_store_get(st, "never", &v, &n) != -1 || errno != ETIMEDOUT)
		die("get timeout");
	cgrun_store_set_timeout(st, 30000);
	expect_get(st, "a", "again", 5, "connection usable after get timeout");
}

/* DELETE_KEY, GETNUMKEYS, APPEND, MULTI_SET, MULTI_GET. */
static void
check_misc(void)
{
	const char *mk[] = { "m1", "m2" }, *rk[] = { "m2", "m1", "m2" };
	const void *mv[] = { "x", "yy" };
	size_t ml[] = { 1, 2 }, lens[3];
	void *vals[3];
	int64_t n0, n1;

	if (cgrun_store_delete(st, "a") != 1 || cgrun_store_delete(st, "a") != 0)
		die("delete");
	printf("ok delete\n");
	if (cgrun_store_num_keys(st, &n0) == -1 ||
	    cgrun_store_set(st, "nk", "1", 1) == -1 ||
	    cgrun_store_num_keys(st, &n1) == -1 || n1 != n0 + 1)
		die("num_keys counts a new key");
	printf("ok num_keys %" PRId64 " -> %" PRId64 "\n", n0, n1);
	if (cgrun_store_append(st, "ap", "ab", 2) == -1 ||
	    cgrun_store_append(st, "ap", "cd", 2) == -1)
		die("append");
	expect_get(st, "ap", "abcd", 4, "append creates then appends");
	if (cgrun_store_multi_set(st, mk, mv, ml, 2) == -1)
		die("multi_set");
	if (cgrun_store_multi_get(st, rk, 3, vals, lens) == -1)
		die("multi_get");
	if (lens[0] != 2 || memcmp(vals[0], "yy", 2) || lens[1] != 1 ||
	    memcmp(vals[1], "x", 1) || lens[2] != 2 || memcmp(vals[2], "yy", 2))
		die("multi_get values in key order");
	free(vals[0]), free(vals[1]), free(vals[2]);
	printf("ok multi_set+multi_get\n");
}

/* Prefix joining: C side, then keys for the Python reader. */
static void
check_prefix(void)
{
	struct cgrun_store *p, *pp;

	if ((p = cgrun_store_prefixed(st, "c2py")) == NULL ||
	    (pp = cgrun_store_prefixed(p, "inner")) == NULL)
		die("prefixed");
	if (strcmp(cgrun_store_prefix(pp), "c2py/inner") != 0)
		die("nested prefix");
	if (cgrun_store_set(pp, "k2", "nested", 6) == -1 ||
	    cgrun_store_set(p, "bin", "\0\xff\0a", 4) == -1)
		die("prefixed set");
	expect_get(st, "c2py/inner/k2", "nested", 6, "prefix joins like PrefixStore");
	cgrun_store_free(p);	/* views outlive each other in any order */
	expect_get(pp, "k2", "nested", 6, "view survives parent view");
	cgrun_store_free(pp);
	if ((p = cgrun_store_prefixed(st, "py")) == NULL)
		die("prefixed py");
	/* Last: this key tells the Python reader that everything is there. */
	if (cgrun_store_set(st, "c2py/k", "from-c", 6) == -1)
		die("set c2py/k");
	expect_get(p, "k", "from-py", 7, "Python wrote through PrefixStore(\"py\")");
	cgrun_store_free(p);
}

int
main(int argc, char **argv)
{
	char err[CGRUN_ERRLEN];

	if (argc != 3) {
		fprintf(stderr, "usage: store_client HOST PORT\n");
		return 2;
	}
	st = cgrun_store_connect(argv[1], atoi(argv[2]), 30000, err);
	if (st == NULL) {
		printf("FAIL connect: %s\n", err);
		return 1;
	}
	printf("ok connect\n");
	check_basic();
	check_compare_set();
	check_wait();
	check_misc();
	check_prefix();
	if (cgrun_store_set(st, "done", "1", 1) == -1)
		die("set done");
	cgrun_store_free(st);
	printf("ALL OK\n");
	return 0;
}

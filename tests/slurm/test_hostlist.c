/*
 * test_hostlist.c: Slurm hostlist expressions (launcher/slurm/hostlist.c)
 * and per-node task counts (launcher/slurm/tasks_per_node.c).  The lists
 * are those of Slurm's own documentation (scontrol(1) "show hostnames",
 * slurm.conf(5) NodeName, srun(1) SLURM_TASKS_PER_NODE, Slurm::Hostlist)
 * and the forms clusters use: suffixes, several bracket groups, zero
 * padding, comma lists of prefixes; then every malformed shape and limit.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostlist.h"
#include "tasks_per_node.h"
#include "helper_main.h"

/* Expand list with the iterator into one space-separated string. */
static const char *
expand(const char *list)
{
	static char out[8192];
	struct hostlist_iter it;
	char host[HOSTLIST_NAME_MAX + 1], err[256];
	size_t at = 0;
	int r;

	out[0] = '\0';
	hostlist_iter_init(&it, list, strlen(list));
	while ((r = hostlist_next(&it, host, sizeof(host), err,
	    sizeof(err))) == 1)
		at += (size_t)snprintf(out + at, sizeof(out) - at, "%s%s",
		    at ? " " : "", host);
	ck_assert_msg(r == 0, "%s: %s", list, err);
	return out;
}

/* Expect list to expand to want, with count and nth agreeing. */
static void
expect(const char *list, const char *want)
{
	char host[HOSTLIST_NAME_MAX + 1], err[256], first[HOSTLIST_NAME_MAX + 1];
	size_t n = 0, count;
	const char *p;

	ck_assert_str_eq(expand(list), want);
	for (p = want; *p != '\0'; p++)
		n += *p == ' ';
	n += *want != '\0';
	ck_assert_int_eq(hostlist_count(list, strlen(list), &count, err,
	    sizeof(err)), HOSTLIST_OK);
	ck_assert_uint_eq(count, n);
	if (n == 0)
		return;
	snprintf(first, sizeof(first), "%.*s", (int)strcspn(want, " "), want);
	ck_assert_int_eq(hostlist_nth(list, strlen(list), 0, host,
	    sizeof(host), err, sizeof(err)), HOSTLIST_OK);
	ck_assert_str_eq(host, first);
	ck_assert_int_eq(hostlist_nth(list, strlen(list), n - 1, host,
	    sizeof(host), err, sizeof(err)), HOSTLIST_OK);
	ck_assert_str_eq(host, strrchr(want, ' ') ? strrchr(want, ' ') + 1 :
	    want);
	ck_assert_int_eq(hostlist_nth(list, strlen(list), n, host,
	    sizeof(host), err, sizeof(err)), HOSTLIST_ERROR);
}

/* Expect list to be refused with an error containing what. */
static void
refuse(const char *list, const char *what)
{
	char host[64], err[256] = "";
	size_t count;

	ck_assert_msg(hostlist_count(list, strlen(list), &count, err,
	    sizeof(err)) == HOSTLIST_ERROR, "%s was accepted", list);
	ck_assert_msg(strstr(err, what) != NULL, "%s: \"%s\" lacks \"%s\"",
	    list, err, what);
	ck_assert_int_eq(hostlist_nth(list, strlen(list), 0, host,
	    sizeof(host), err, sizeof(err)), HOSTLIST_ERROR);
}

START_TEST(slurm_documented)
{
	/* scontrol(1): show hostnames tux[1-3] */
	expect("tux[1-3]", "tux1 tux2 tux3");
	/* slurm.conf(5) NodeName */
	expect("alpha,beta,gamma", "alpha beta gamma");
	expect("lx[15,18,32-33]", "lx15 lx18 lx32 lx33");
	expect("linux[0-64,128]", "linux0 linux1 linux2 linux3 linux4 linux5 "
	    "linux6 linux7 linux8 linux9 linux10 linux11 linux12 linux13 "
	    "linux14 linux15 linux16 linux17 linux18 linux19 linux20 linux21 "
	    "linux22 linux23 linux24 linux25 linux26 linux27 linux28 linux29 "
	    "linux30 linux31 linux32 linux33 linux34 linux35 linux36 linux37 "
	    "linux38 linux39 linux40 linux41 linux42 linux43 linux44 linux45 "
	    "linux46 linux47 linux48 linux49 linux50 linux51 linux52 linux53 "
	    "linux54 linux55 linux56 linux57 linux58 linux59 linux60 linux61 "
	    "linux62 linux63 linux64 linux128");
	/* slurm_hostlist_create(3): "linux[1-3,6]" */
	expect("linux[1-3,6]", "linux1 linux2 linux3 linux6");
	/* Slurm::Hostlist(3pm) */
	expect("node1,node[2-5,12]", "node1 node2 node3 node4 node5 node12");
	expect("node21,node[27-34]", "node21 node27 node28 node29 node30 "
	    "node31 node32 node33 node34");
	expect("tux[0-5,12,20-25]", "tux0 tux1 tux2 tux3 tux4 tux5 tux12 "
	    "tux20 tux21 tux22 tux23 tux24 tux25");
	/* scontrol(1) hostlist: not sorted, not unique */
	expect("tux2,tux1,tux2", "tux2 tux1 tux2");
	expect("tux[2,1-2]", "tux2 tux1 tux2");
}
END_TEST

START_TEST(slurm_documented_counts)
{
	char h[64], err[256];
	size_t n;

	/* slurm.conf(5): "rack[0-63]_blade[0-41]", "linux[0000-1023]" */
	ck_assert_int_eq(hostlist_count("rack[0-63]_blade[0-41]", 22, &n, err,
	    sizeof(err)), HOSTLIST_OK);
	ck_assert_uint_eq(n, 64 * 42);
	ck_assert_int_eq(hostlist_nth("rack[0-63]_blade[0-41]", 22, 42, h,
	    sizeof(h), err, sizeof(err)), HOSTLIST_OK);
	ck_assert_str_eq(h, "rack1_blade0");
	ck_assert_int_eq(hostlist_nth("rack[0-63]_blade[0-41]", 22, 64 * 42 - 1,
	    h, sizeof(h), err, sizeof(err)), HOSTLIST_OK);
	ck_assert_str_eq(h, "rack63_blade41");
	ck_assert_int_eq(hostlist_count("linux[0000-1023]", 16, &n, err,
	    sizeof(err)), HOSTLIST_OK);
	ck_assert_uint_eq(n, 1024);
	ck_assert_int_eq(hostlist_nth("linux[0000-1023]", 16, 7, h, sizeof(h),
	    err, sizeof(err)), HOSTLIST_OK);
	ck_assert_str_eq(h, "linux0007");
}
END_TEST

START_TEST(cluster_forms)
{
	expect("n[1-3,7]", "n1 n2 n3 n7");
	expect("gpu-[01-03]-ib", "gpu-01-ib gpu-02-ib gpu-03-ib");
	expect("gpu-[01-16]-ib,login", "gpu-01-ib gpu-02-ib gpu-03-ib "
	    "gpu-04-ib gpu-05-ib gpu-06-ib gpu-07-ib gpu-08-ib gpu-09-ib "
	    "gpu-10-ib gpu-11-ib gpu-12-ib gpu-13-ib gpu-14-ib gpu-15-ib "
	    "gpu-16-ib login");
	expect("r[1-2]n[01-02]", "r1n01 r1n02 r2n01 r2n02");
	expect("a[1-2],b3,c[5-6]", "a1 a2 b3 c5 c6");
	expect("n[08-10]", "n08 n09 n10");
	expect("n[8-10]", "n8 n9 n10");
	expect("n[098-101]", "n098 n099 n100 n101");
	expect("n[08-09,7]", "n08 n09 n7");	/* each range its own width */
	expect("x[1-2]y[3]z[4-5]w", "x1y3z4w x1y3z5w x2y3z4w x2y3z5w");
	expect("gpu[03-07,9],cpu1", "gpu03 gpu04 gpu05 gpu06 gpu07 gpu9 cpu1");
	expect("node7.cluster.example.org", "node7.cluster.example.org");
	expect("[1-2]", "1 2");
	expect("solo", "solo");
	expect("a b\tc\nd", "a b c d");		/* white space separates */
	expect(",,a,,b,", "a b");		/* runs of separators */
	expect("", "");
	expect(" , ", "");
	expect("n[0-0]", "n0");
}
END_TEST

START_TEST(malformed)
{
	refuse("n[1-3", "not closed");
	refuse("n]1", "0x5d");
	refuse("n[]", "empty brackets");
	refuse("n[1,]", "empty item");
	refuse("n[,1]", "expected a number");
	refuse("n[3-1]", "runs backwards");
	refuse("n[1-2-3]", "unexpected '-'");
	refuse("n[-1]", "expected a number");
	refuse("n[1-]", "expected a number");
	refuse("n[a]", "0x61 in brackets");
	refuse("n[1 2]", "0x20 in brackets");
	refuse("n[[1]]", "0x5b in brackets");
	refuse("n[1]]", "0x5d");
	refuse("n\x01", "0x01");
	refuse("n\xc3\xa9", "0xc3");
	refuse("bgl[123x456]", "0x78 in brackets");	/* no 3-D boxes */
}
END_TEST

START_TEST(limits)
{
	char big[HOSTLIST_INPUT_MAX + 2], host[HOSTLIST_NAME_MAX + 1],
	    err[256];
	size_t n;

	refuse("n[1234567890]", "longer than 9 digits");
	refuse("n[0-65536]", "more than 65536 hosts");
	refuse("a[0-999999999]b[0-9]", "more than 65536 hosts");
	refuse("a[1-256]b[1-256]c[1-2]", "more than 65536");
	refuse("a[1-65536],b", "more than 65536 hosts");
	refuse("a[1]b[1]c[1]d[1]e[1]f[1]g[1]h[1]i[1]", "more than 8 bracket");
	ck_assert_int_eq(hostlist_count("n[1-65536]", 10, &n, err,
	    sizeof(err)), HOSTLIST_OK);
	ck_assert_uint_eq(n, 65536);
	ck_assert_int_eq(hostlist_nth("n[1-65536]", 10, 65535, host,
	    sizeof(host), err, sizeof(err)), HOSTLIST_OK);
	ck_assert_str_eq(host, "n65536");
	/* a name of 255 bytes passes, 256 does not (digits included) */
	memset(big, 'a', 254);
	memcpy(big + 254, "[8-10]", 7);
	refuse(big, "longer than 255");
	memcpy(big + 253, "[8-10]", 7);
	ck_assert_int_eq(hostlist_nth(big, strlen(big), 2, host,
	    sizeof(host), err, sizeof(err)), HOSTLIST_OK);
	ck_assert_uint_eq(strlen(host), 255);
	/* the whole input */
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	for (n = 200; n < sizeof(big) - 1; n += 201)
		big[n] = ',';
	refuse(big, "longer than 65536 bytes");
	/* a caller's buffer too small */
	ck_assert_int_eq(hostlist_nth("averyveryverylonghostname", 25, 0, host,
	    8, err, sizeof(err)), HOSTLIST_ERROR);
	ck_assert_ptr_nonnull(strstr(err, "does not fit"));
	/* a length shorter than the string: only those bytes count */
	ck_assert_int_eq(hostlist_count("n[1-3],m", 5, &n, err, sizeof(err)),
	    HOSTLIST_ERROR);
	ck_assert_int_eq(hostlist_count("n[1-3],m", 6, &n, err, sizeof(err)),
	    HOSTLIST_OK);
	ck_assert_uint_eq(n, 3);
}
END_TEST

START_TEST(tasks_per_node)
{
	char err[128];
	int t;
	const char *v = "2(x3),1";	/* srun(1) SLURM_TASKS_PER_NODE */

	ck_assert_int_eq(tasks_per_node_at(v, strlen(v), 0, &t, err,
	    sizeof(err)), 0);
	ck_assert_int_eq(t, 2);
	ck_assert_int_eq(tasks_per_node_at(v, strlen(v), 2, &t, err,
	    sizeof(err)), 0);
	ck_assert_int_eq(t, 2);
	ck_assert_int_eq(tasks_per_node_at(v, strlen(v), 3, &t, err,
	    sizeof(err)), 0);
	ck_assert_int_eq(t, 1);
	ck_assert_int_eq(tasks_per_node_at(v, strlen(v), 4, &t, err,
	    sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "no count for node 4"));
	ck_assert_int_eq(tasks_per_node_at("8", 1, 0, &t, err, sizeof(err)), 0);
	ck_assert_int_eq(t, 8);
	ck_assert_int_eq(tasks_per_node_at("1(x2)", 5, 1, &t, err,
	    sizeof(err)), 0);
	ck_assert_int_eq(t, 1);
	ck_assert_int_eq(tasks_per_node_at("", 0, 0, &t, err, sizeof(err)), -1);
	ck_assert_int_eq(tasks_per_node_at("2(x", 3, 1, &t, err, sizeof(err)),
	    -1);
	ck_assert_int_eq(tasks_per_node_at("2(x3", 4, 5, &t, err, sizeof(err)),
	    -1);
	ck_assert_int_eq(tasks_per_node_at("2,", 2, 1, &t, err, sizeof(err)),
	    -1);
	ck_assert_int_eq(tasks_per_node_at("0", 1, 0, &t, err, sizeof(err)),
	    -1);
	ck_assert_int_eq(tasks_per_node_at("65536", 5, 0, &t, err,
	    sizeof(err)), -1);
	ck_assert_int_eq(tasks_per_node_at("1(x65536),1(x1)", 15, 65536, &t,
	    err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "more than 65536 nodes"));
	ck_assert_int_eq(tasks_per_node_at("2x3", 3, 0, &t, err, sizeof(err)),
	    -1);
}
END_TEST

/* The suite. */
Suite *
test_suite(void)
{
	Suite *s = suite_create("hostlist");
	TCase *tc = tcase_create("parse");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, slurm_documented);
	tcase_add_test(tc, slurm_documented_counts);
	tcase_add_test(tc, cluster_forms);
	tcase_add_test(tc, malformed);
	tcase_add_test(tc, limits);
	tcase_add_test(tc, tasks_per_node);
	suite_add_tcase(s, tc);
	return s;
}

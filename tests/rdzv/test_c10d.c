/*
 * test_c10d.c: the c10d backend: its parsers (--rdzv-conf with torchrun's
 * defaults, --rdzv-endpoint forms, the static backend's strict HOST:PORT;
 * the Slurm node list is tested in test_slurm.c), and the client driven on
 * a real event_base against the engine it hosts in-process (is_host): rounds,
 * the job's restart budget spent by the engine, the exit barrier, the
 * authenticated handshake, an endpoint nobody serves, usage errors.
 */
#include <arpa/inet.h>
#include <check.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "backend.h"
#include "c10d_conf.h"
#include "c10d_host.h"
#include "endpoint.h"
#include "exitcodes.h"
#include "options.h"
#include "helper_backend.h"
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

	ck_assert_int_eq(endpoint_parse("head:29401", h, sizeof(h), &port,
	    29400), 0);
	ck_assert_str_eq(h, "head");
	ck_assert_int_eq(port, 29401);
	ck_assert_int_eq(endpoint_parse("head", h, sizeof(h), &port,
	    29400), 0);
	ck_assert_int_eq(port, 29400);
	ck_assert_int_eq(endpoint_parse("[::1]:5", h, sizeof(h), &port,
	    29400), 0);
	ck_assert_str_eq(h, "::1");
	ck_assert_int_eq(port, 5);
	ck_assert_int_eq(endpoint_parse("fe80::1", h, sizeof(h), &port,
	    29400), 0);
	ck_assert_str_eq(h, "fe80::1");
	ck_assert_int_eq(port, 29400);
	ck_assert_int_eq(endpoint_parse("head:", h, sizeof(h), &port,
	    29400), -1);
	ck_assert_int_eq(endpoint_parse("head:70000", h, sizeof(h), &port,
	    29400), -1);
	ck_assert_int_eq(endpoint_parse(":29400", h, sizeof(h), &port,
	    29400), -1);
	ck_assert_int_eq(endpoint_parse("[::1", h, sizeof(h), &port,
	    29400), -1);
	ck_assert_int_eq(endpoint_parse("", h, sizeof(h), &port,
	    29400), -1);
	/* issue 18: what could never work is refused here */
	ck_assert_int_eq(endpoint_parse("127.0.0.1:0", h, sizeof(h), &port,
	    29400), -1);
	ck_assert_int_eq(endpoint_parse("a:b:c", h, sizeof(h), &port,
	    29400), -1);
	ck_assert_int_eq(endpoint_parse("::1:32100", h, sizeof(h), &port,
	    29400), -1);
	ck_assert_int_eq(endpoint_parse("[head]:5", h, sizeof(h), &port,
	    29400), -1);
	ck_assert_int_eq(endpoint_parse("head:+5", h, sizeof(h), &port,
	    29400), -1);
	ck_assert_int_eq(endpoint_parse("::1", h, sizeof(h), &port,
	    29400), 0);
}
END_TEST

START_TEST(endpoints_hostport)
{
	char h[64], err[256];
	int port;

	ck_assert_int_eq(endpoint_parse_hostport("head:29401", h, sizeof(h),
	    &port, err, sizeof(err)), 0);
	ck_assert_str_eq(h, "head");
	ck_assert_int_eq(port, 29401);
	ck_assert_int_eq(endpoint_parse_hostport("[fe80::1]:65535", h,
	    sizeof(h), &port, err, sizeof(err)), 0);
	ck_assert_str_eq(h, "fe80::1");
	ck_assert_int_eq(port, 65535);
	ck_assert_int_eq(endpoint_parse_hostport("head", h, sizeof(h), &port,
	    err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "expected HOST:PORT"));
	ck_assert_int_eq(endpoint_parse_hostport("head:0", h, sizeof(h), &port,
	    err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "1-65535"));
	ck_assert_int_eq(endpoint_parse_hostport("head:00080", h, sizeof(h),
	    &port, err, sizeof(err)), 0);
	ck_assert_int_eq(port, 80);
	ck_assert_int_eq(endpoint_parse_hostport("head:000080", h, sizeof(h),
	    &port, err, sizeof(err)), -1);
	ck_assert_int_eq(endpoint_parse_hostport("a:b:c", h, sizeof(h), &port,
	    err, sizeof(err)), -1);
	ck_assert_int_eq(endpoint_parse_hostport("fe80::1", h, sizeof(h), &port,
	    err, sizeof(err)), -1);
	ck_assert_int_eq(endpoint_parse_hostport("h:-1", h, sizeof(h), &port,
	    err, sizeof(err)), -1);
	ck_assert_int_eq(endpoint_parse_hostport("", h, sizeof(h), &port,
	    err, sizeof(err)), -1);
	ck_assert_int_eq(endpoint_parse_hostport(NULL, h, sizeof(h), &port,
	    err, sizeof(err)), -1);
}
END_TEST

static struct cgrun_options o;
static struct event_base *base;
static struct backend *bk;
static struct helper_seen seen;
static char err[512], tokfile[64];

/* c10d options for a one-node job on a free port, then the script. */
#define P(...) do {							\
	char ep_[64];							\
	snprintf(ep_, sizeof(ep_), "--rdzv-endpoint=127.0.0.1:%d",	\
	    helper_backend_free_port());				\
	helper_backend_parse(&o, (const char *const[]){ "cgrun",	\
	    "--nnodes=1", "--rdzv-backend=c10d", "--rdzv-id=t1", ep_,	\
	    __VA_ARGS__, "true", NULL });				\
} while (0)

/* A fresh loop and nothing seen. */
static void
client_setup(void)
{
	memset(&o, 0, sizeof(o));
	memset(&seen, 0, sizeof(seen));
	base = event_base_new();
	bk = NULL;
	tokfile[0] = '\0';
}

/* Free what the test left. */
static void
client_teardown(void)
{
	if (bk != NULL)
		bk->ops->free(bk);
	event_base_free(base);
	options_free(&o);
	if (tokfile[0] != '\0')
		unlink(tokfile);
}

/* Create and start the backend for the parsed options (2 workers). */
static void
client_start(void)
{
	ck_assert_msg((bk = helper_backend_open(base, &o, 2, &seen, err,
	    sizeof(err))) != NULL, "c10d: %s", err);
	ck_assert_str_eq(bk->ops->name, "c10d");
	ck_assert_int_eq(bk->ops->start(bk, err, sizeof(err)), 0);
	ck_assert_int_eq(helper_backend_wait(base, &seen.rounds, 1, 5000), 1);
	ck_assert_uint_eq(seen.last.round, 0);
	ck_assert_int_eq(seen.last.restart_count, 0);
	ck_assert_int_eq(seen.last.group_rank, 0);
	ck_assert_int_eq(seen.last.group_world_size, 1);
	ck_assert_int_eq(seen.last.world_size, 2);
	ck_assert_int_eq(seen.last.master_port, 4242);
	ck_assert_str_eq(seen.last.master_addr, "127.0.0.1");
	ck_assert_str_eq(seen.last.run_id, "t1");
}

START_TEST(client_budget)
{
	P("--rdzv-conf=is_host=1,close_timeout=0.2", "--max-restarts=1");
	client_start();
	bk->ops->workers_failed(bk, "rank 1 exited 3");
	ck_assert_int_eq(helper_backend_wait(base, &seen.rounds, 2, 5000), 2);
	ck_assert_uint_eq(seen.last.round, 1);
	ck_assert_int_eq(seen.last.restart_count, 1);
	bk->ops->workers_failed(bk, "rank 0 exited 1");
	ck_assert_int_eq(helper_backend_wait(base, &seen.fails, 1, 5000), 1);
	ck_assert_int_eq(seen.rounds, 2);
	ck_assert_int_eq(seen.fail_status, -1);	/* the workers' own status */
	ck_assert_msg(strstr(seen.fail_why, "no restarts are left") != NULL,
	    "why: %s", seen.fail_why);
	ck_assert_int_eq(seen.restarts, 0);
	ck_assert_int_eq(seen.finished, 0);
}
END_TEST

START_TEST(client_done)
{
	P("--rdzv-conf=is_host=1,close_timeout=0.2");
	client_start();
	bk->ops->workers_done(bk);
	ck_assert_int_eq(helper_backend_wait(base, &seen.finished, 1, 5000), 1);
	ck_assert_int_eq(seen.fails, 0);
}
END_TEST

START_TEST(client_auth)
{
	char arg[128];
	int fd;

	snprintf(tokfile, sizeof(tokfile), "/tmp/test_c10d.tok.XXXXXX");
	ck_assert_int_ne(fd = mkstemp(tokfile), -1);
	ck_assert_int_eq(write(fd, "0123456789abcdef0123456789abcdef", 32), 32);
	close(fd);
	snprintf(arg, sizeof(arg), "--auth-token-file=%s", tokfile);
	P("--rdzv-conf=is_host=1,close_timeout=0.2", arg);
	client_start();		/* HELLO, CHALLENGE, AUTH + JOIN, AUTHOK */
	bk->ops->workers_done(bk);
	ck_assert_int_eq(helper_backend_wait(base, &seen.finished, 1, 5000), 1);
}
END_TEST

START_TEST(client_unreachable)
{
	P("--rdzv-conf=is_host=0,read_timeout=0.3");
	ck_assert_ptr_nonnull(bk = helper_backend_open(base, &o, 1, &seen, err,
	    sizeof(err)));
	ck_assert_int_eq(bk->ops->start(bk, err, sizeof(err)), 0);
	ck_assert_int_eq(helper_backend_wait(base, &seen.fails, 1, 5000), 1);
	ck_assert_int_eq(seen.fail_status, CGRUN_EXIT_RDZV);
	ck_assert_msg(strstr(seen.fail_why, "cannot reach the rendezvous") !=
	    NULL, "why: %s", seen.fail_why);
	ck_assert_int_eq(seen.rounds, 0);
}
END_TEST

/* Free the backend and the options for the next case of a test. */
static void
client_again(void)
{
	if (bk != NULL)
		bk->ops->free(bk);
	bk = NULL;
	options_free(&o);
	memset(&seen, 0, sizeof(seen));
}

/* What site.c sets under a Slurm step: node id and is_host. */
static void
slurm_step(int node_id, int is_host)
{
	o.slurm_step = 1;
	o.slurm_node_id = node_id;
	o.slurm_is_host = is_host;
}

/* Under a Slurm step site.c's is_host decides, unless --rdzv-conf does:
 * node 1 does not host an endpoint on this machine, node 0 does. */
START_TEST(client_slurm_host)
{
	P("--rdzv-conf=read_timeout=0.3,close_timeout=0.2");
	slurm_step(1, 0);
	ck_assert_ptr_nonnull(bk = helper_backend_open(base, &o, 1, &seen, err,
	    sizeof(err)));
	ck_assert_int_eq(bk->ops->start(bk, err, sizeof(err)), 0);
	ck_assert_int_eq(helper_backend_wait(base, &seen.fails, 1, 5000), 1);
	ck_assert_msg(strstr(seen.fail_why, "cannot reach the rendezvous") !=
	    NULL, "why: %s", seen.fail_why);
	client_again();
	P("--rdzv-conf=close_timeout=0.2");	/* node 0 hosts it */
	slurm_step(0, 1);
	client_start();
	client_again();
	P("--rdzv-conf=is_host=1,close_timeout=0.2");	/* the conf wins */
	slurm_step(1, 0);
	client_start();
}
END_TEST

/* Loopback addresses, and names that are not loopback names. */
START_TEST(loopback)
{
	static const struct { const char *a; int want; } v[] = {
		{ "127.0.0.1", 1 }, { "127.0.1.1", 1 }, { "10.0.0.1", 0 },
		{ "::1", 1 }, { "::ffff:127.0.1.1", 1 }, { "::ffff:10.0.0.1", 0 },
		{ "fe80::1", 0 },
	};
	struct sockaddr_storage ss;
	struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
	size_t i;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		memset(&ss, 0, sizeof(ss));
		if (inet_pton(AF_INET, v[i].a, &s4->sin_addr) == 1)
			s4->sin_family = AF_INET;
		else {
			ck_assert_int_eq(inet_pton(AF_INET6, v[i].a,
			    &s6->sin6_addr), 1);
			s6->sin6_family = AF_INET6;
		}
		ck_assert_msg(c10d_host_sa_loopback((struct sockaddr *)&ss) ==
		    v[i].want, "%s", v[i].a);
	}
	/* literals and localhost are what they say, not names to replace */
	ck_assert_int_eq(c10d_host_loopback_name("localhost"), 0);
	ck_assert_int_eq(c10d_host_loopback_name("127.0.1.1"), 0);
	ck_assert_int_eq(c10d_host_loopback_name("::1"), 0);
	ck_assert_int_eq(c10d_host_loopback_name("no-such-host.invalid"), 0);
}
END_TEST

START_TEST(client_usage)
{
	helper_backend_parse(&o, (const char *const[]){ "cgrun", "--nnodes=2",
	    "--rdzv-backend=c10d", "--rdzv-endpoint=h:1", "true", NULL });
	ck_assert_ptr_null(helper_backend_open(base, &o, 1, &seen, err,
	    sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "--rdzv-id"));
	helper_backend_parse(&o, (const char *const[]){ "cgrun", "--nnodes=2",
	    "--rdzv-backend=c10d", "--rdzv-id=x", "--rdzv-endpoint=h:notaport",
	    "true", NULL });
	ck_assert_ptr_null(helper_backend_open(base, &o, 1, &seen, err,
	    sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "--rdzv-endpoint h:notaport"));
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
	tcase_add_test(tc, endpoints_hostport);
	suite_add_tcase(s, tc);
	tc = tcase_create("client");
	tcase_add_checked_fixture(tc, client_setup, client_teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, client_budget);
	tcase_add_test(tc, client_done);
	tcase_add_test(tc, client_auth);
	tcase_add_test(tc, client_unreachable);
	tcase_add_test(tc, client_slurm_host);
	tcase_add_test(tc, loopback);
	tcase_add_test(tc, client_usage);
	suite_add_tcase(s, tc);
	return s;
}

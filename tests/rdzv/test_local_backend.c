/*
 * test_local_backend.c: the backend room's local side, driven on a real
 * event_base: the registry's choice of backend (backend.c), the restart
 * budget (rendezvous/engine/budget.c), and the local backend (local.c) in both
 * modes: rounds, restart counts, the budget running out, callbacks only
 * on a later loop turn, run ids, static node 0 hosting the store, and the
 * static endpoint's checks.
 */
#include <sys/socket.h>

#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "backend.h"
#include "budget.h"
#include "options.h"
#include "helper_backend.h"
#include "helper_main.h"

static struct cgrun_options o;
static struct event_base *base;
static struct backend *bk;
static char err[512];
static struct helper_seen seen;

/* cgrun's options, then the script "true". */
#define P(...) helper_backend_parse(&o, (const char *const[]){ "cgrun", \
	__VA_ARGS__, "true", NULL })

/* A backend for the parsed options and nproc local workers. */
static struct backend *
open_backend(int nproc)
{
	return helper_backend_open(base, &o, nproc, &seen, err, sizeof(err));
}

/* Run the loop until nothing is pending. */
static void
turn(void)
{
	event_base_loop(base, EVLOOP_NONBLOCK);
}

/* A fresh loop, no backend, nothing seen, no PET_* from outside. */
static void
setup(void)
{
	unsetenv("PET_MASTER_PORT");
	unsetenv("PET_RDZV_ENDPOINT");
	unsetenv("PET_NNODES");
	memset(&o, 0, sizeof(o));
	memset(&seen, 0, sizeof(seen));
	base = event_base_new();
	bk = NULL;
}

/* Free what the test left. */
static void
teardown(void)
{
	if (bk != NULL)
		bk->ops->free(bk);
	event_base_free(base);
	options_free(&o);
}

START_TEST(budget_rule)
{
	uint32_t spent = 0;

	ck_assert_int_eq(budget_spend(&spent, 0), 0);
	ck_assert_uint_eq(spent, 0);
	ck_assert_int_eq(budget_spend(&spent, 2), 1);
	ck_assert_int_eq(budget_spend(&spent, 2), 1);
	ck_assert_uint_eq(spent, 2);
	ck_assert_int_eq(budget_spend(&spent, 2), 0);
	ck_assert_uint_eq(spent, 2);
	spent = UINT32_MAX;
	ck_assert_int_eq(budget_spend(&spent, UINT32_MAX), 0);
	ck_assert_uint_eq(spent, UINT32_MAX);
	/* A carried count: the larger one, at most max. */
	spent = 1;
	ck_assert_int_eq(budget_carry(&spent, 0, 3), 0);
	ck_assert_int_eq(budget_carry(&spent, 1, 3), 0);
	ck_assert_uint_eq(spent, 1);
	ck_assert_int_eq(budget_carry(&spent, 2, 3), 1);
	ck_assert_uint_eq(spent, 2);
	ck_assert_int_eq(budget_carry(&spent, 7, 3), 1);
	ck_assert_uint_eq(spent, 3);
	ck_assert_int_eq(budget_spend(&spent, 3), 0);
}
END_TEST

START_TEST(registry_pick)
{
	P("--nproc-per-node=2");
	ck_assert_str_eq(backend_pick(&o), "standalone");
	P("--standalone");
	ck_assert_str_eq(backend_pick(&o), "standalone");
	P("--nnodes=1", "--master-port=29999");
	ck_assert_str_eq(backend_pick(&o), "standalone");
	P("--nnodes=2", "--standalone");
	ck_assert_str_eq(backend_pick(&o), "c10d");
	P("--nnodes=2");
	ck_assert_str_eq(backend_pick(&o), "static");
	P("--nnodes=1", "--rdzv-endpoint=127.0.0.1:29533");
	ck_assert_str_eq(backend_pick(&o), "static");
	P("--nnodes=1:3", "--rdzv-backend=c10d", "--rdzv-endpoint=h:1");
	ck_assert_str_eq(backend_pick(&o), "c10d");
}
END_TEST

START_TEST(registry_unknown)
{
	P("--nnodes=2");
	free(o.rdzv_backend);
	o.rdzv_backend = strdup("zookeeper");
	ck_assert_ptr_null(open_backend(1));
	ck_assert_ptr_nonnull(strstr(err, "\"zookeeper\" is not available"));
}
END_TEST

START_TEST(standalone_rounds)
{
	P("--max-restarts=2", "--nproc-per-node=3");
	ck_assert_ptr_nonnull(bk = open_backend(3));
	ck_assert_str_eq(bk->ops->name, "standalone");
	ck_assert_int_eq(bk->ops->start(bk, err, sizeof(err)), 0);
	ck_assert_int_eq(seen.rounds, 0);	/* never from inside an op */
	turn();
	ck_assert_int_eq(seen.rounds, 1);
	ck_assert_uint_eq(seen.last.round, 0);
	ck_assert_int_eq(seen.last.restart_count, 0);
	ck_assert_int_eq(seen.last.group_rank, 0);
	ck_assert_int_eq(seen.last.group_world_size, 1);
	ck_assert_int_eq(seen.last.rank_base, 0);
	ck_assert_int_eq(seen.last.world_size, 3);
	ck_assert_int_eq(seen.last.local_world_size, 3);
	ck_assert_str_eq(seen.last.master_addr, "localhost");
	ck_assert_int_eq(seen.last.master_port, 4242);
	ck_assert_uint_eq(strlen(seen.last.run_id), 36);	/* a uuid */
	bk->ops->workers_failed(bk, "rank 1 exited 3");
	ck_assert_int_eq(seen.rounds, 1);
	turn();
	ck_assert_int_eq(seen.rounds, 2);
	ck_assert_uint_eq(seen.last.round, 1);
	ck_assert_int_eq(seen.last.restart_count, 1);
	bk->ops->workers_stopped(bk);		/* does not spend */
	turn();
	ck_assert_uint_eq(seen.last.round, 2);
	ck_assert_int_eq(seen.last.restart_count, 1);
	bk->ops->workers_failed(bk, "rank 0 exited 1");
	turn();
	ck_assert_uint_eq(seen.last.round, 3);
	ck_assert_int_eq(seen.last.restart_count, 2);
	bk->ops->workers_failed(bk, "rank 2 killed by SIGKILL");
	ck_assert_int_eq(seen.fails, 0);
	turn();
	ck_assert_int_eq(seen.rounds, 4);	/* no round: budget gone */
	ck_assert_int_eq(seen.fails, 1);
	ck_assert_int_eq(seen.fail_status, -1);
	ck_assert_str_eq(seen.fail_why, "rank 2 killed by SIGKILL");
	ck_assert_int_eq(seen.restarts, 0);
}
END_TEST

START_TEST(standalone_done)
{
	P("--nproc-per-node=1");
	ck_assert_ptr_nonnull(bk = open_backend(1));
	ck_assert_int_eq(bk->ops->start(bk, err, sizeof(err)), 0);
	turn();
	bk->ops->workers_done(bk);
	ck_assert_int_eq(seen.finished, 0);
	turn();
	ck_assert_int_eq(seen.finished, 1);
	ck_assert_int_eq(seen.fails, 0);
}
END_TEST

START_TEST(standalone_no_restarts)
{
	P("--nproc-per-node=1");
	ck_assert_ptr_nonnull(bk = open_backend(1));
	ck_assert_int_eq(bk->ops->start(bk, err, sizeof(err)), 0);
	turn();
	bk->ops->workers_failed(bk, "rank 0 exited 1");
	turn();
	ck_assert_int_eq(seen.rounds, 1);
	ck_assert_int_eq(seen.fails, 1);
}
END_TEST

/* The run id the standalone backend gives for the parsed options. */
static const char *
standalone_run_id(void)
{
	static char id[ROUND_RUNID_MAX];

	ck_assert_ptr_nonnull(bk = open_backend(1));
	ck_assert_int_eq(bk->ops->start(bk, err, sizeof(err)), 0);
	turn();
	bk->ops->free(bk);
	bk = NULL;
	snprintf(id, sizeof(id), "%s", seen.last.run_id);
	return id;
}

START_TEST(standalone_run_ids)
{
	P("--standalone", "--rdzv-id=job7");
	ck_assert_uint_eq(strlen(standalone_run_id()), 36);
	P("--rdzv-id=job7");
	ck_assert_str_eq(standalone_run_id(), "job7");
	P("--nnodes=1");
	ck_assert_uint_eq(strlen(standalone_run_id()), 36);
	/* torchrun runs its static backend there: run id "none" */
	P("--nnodes=1", "--master-port=29999");
	ck_assert_str_eq(standalone_run_id(), "none");
	P("--master-port=29999", "--rdzv-id=job8");
	ck_assert_str_eq(standalone_run_id(), "job8");
}
END_TEST

START_TEST(static_from_endpoint)
{
	P("--nnodes=2", "--node-rank=1", "--nproc-per-node=2",
	    "--max-restarts=1", "--rdzv-endpoint=10.0.0.1:1234",
	    "--master-addr=10.9.9.9", "--master-port=99");
	ck_assert_ptr_nonnull(bk = open_backend(2));
	ck_assert_str_eq(bk->ops->name, "static");
	ck_assert_int_eq(bk->ops->start(bk, err, sizeof(err)), 0);
	turn();
	ck_assert_int_eq(seen.rounds, 1);
	ck_assert_int_eq(seen.last.group_rank, 1);
	ck_assert_int_eq(seen.last.group_world_size, 2);
	ck_assert_int_eq(seen.last.rank_base, 2);
	ck_assert_int_eq(seen.last.world_size, 4);
	ck_assert_int_eq(seen.last.local_world_size, 2);
	ck_assert_str_eq(seen.last.master_addr, "10.0.0.1");
	ck_assert_int_eq(seen.last.master_port, 1234);
	ck_assert_str_eq(seen.last.run_id, "none");
	bk->ops->workers_failed(bk, "rank 3 exited 2");
	turn();
	ck_assert_int_eq(seen.last.restart_count, 1);
	bk->ops->workers_failed(bk, "rank 3 exited 2");
	turn();
	ck_assert_int_eq(seen.rounds, 2);
	ck_assert_int_eq(seen.fails, 1);
	ck_assert_int_eq(seen.fail_status, -1);
}
END_TEST

START_TEST(static_from_master)
{
	P("--nnodes=3", "--node-rank=2", "--master-addr=head",
	    "--master-port=1235", "--rdzv-id=s1");
	ck_assert_ptr_nonnull(bk = open_backend(1));
	ck_assert_int_eq(bk->ops->start(bk, err, sizeof(err)), 0);
	turn();
	ck_assert_str_eq(seen.last.master_addr, "head");
	ck_assert_int_eq(seen.last.master_port, 1235);
	ck_assert_str_eq(seen.last.run_id, "s1");
	ck_assert_int_eq(seen.last.rank_base, 2);
	bk->ops->free(bk);
	P("--nnodes=2", "--node-rank=1");
	ck_assert_ptr_nonnull(bk = open_backend(1));
	ck_assert_int_eq(bk->ops->start(bk, err, sizeof(err)), 0);
	turn();
	ck_assert_str_eq(seen.last.master_addr, "127.0.0.1");
	ck_assert_int_eq(seen.last.master_port, 29500);
	P("--nnodes=1", "--rdzv-endpoint=[::1]:29533");
	bk->ops->free(bk);
	ck_assert_ptr_nonnull(bk = open_backend(1));
	ck_assert_int_eq(bk->ops->start(bk, err, sizeof(err)), 0);
	turn();
	ck_assert_str_eq(seen.last.master_addr, "::1");
	ck_assert_int_eq(seen.last.master_port, 29533);
}
END_TEST

START_TEST(static_node0_hosts)
{
	struct sockaddr_in sin;
	struct backend *second;
	char ep[64];
	int port = helper_backend_free_port(), fd;

	snprintf(ep, sizeof(ep), "--rdzv-endpoint=127.0.0.1:%d", port);
	P("--nnodes=2", "--node-rank=0", ep);
	ck_assert_ptr_nonnull(bk = open_backend(1));
	ck_assert_int_eq(bk->ops->start(bk, err, sizeof(err)), 0);
	turn();
	ck_assert_int_eq(seen.last.group_rank, 0);
	ck_assert_int_eq(seen.last.master_port, port);
	/* listening before the first round is delivered */
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	close(fd);
	bk->ops->workers_stopped(bk);	/* a fresh store, same port */
	turn();
	ck_assert_uint_eq(seen.last.round, 1);
	/* a second node 0 on the same port cannot start */
	ck_assert_ptr_nonnull(second = open_backend(1));
	ck_assert_int_eq(second->ops->start(second, err, sizeof(err)), -1);
	ck_assert_str_ne(err, "");
	second->ops->free(second);
}
END_TEST

/* The static backend refuses the parsed options with err naming what. */
static void
static_refused(const char *what)
{
	ck_assert_ptr_null(open_backend(1));
	ck_assert_msg(strstr(err, what) != NULL, "err \"%s\" lacks \"%s\"",
	    err, what);
}

START_TEST(static_bad)
{
	static const char *bad[] = { "127.0.0.1:notaport", "127.0.0.1:0",
	    "a:b:c", "127.0.0.1", "127.0.0.1:70000", "[::1]", "head:",
	    "head:+80", "head: 80", ":29500", "[::1:5" };
	char ep[64];
	size_t i;

	P("--nnodes=2", "--node-rank=2");
	static_refused("--node-rank 2: must be in 0..1");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(ep, sizeof(ep), "--rdzv-endpoint=%s", bad[i]);
		P("--nnodes=2", ep);
		static_refused("--rdzv-endpoint");
		static_refused(bad[i]);
	}
}
END_TEST

/* The suite. */
Suite *
test_suite(void)
{
	Suite *s = suite_create("local_backend");
	TCase *tc = tcase_create("local");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 10);
	tcase_add_test(tc, budget_rule);
	tcase_add_test(tc, registry_pick);
	tcase_add_test(tc, registry_unknown);
	tcase_add_test(tc, standalone_rounds);
	tcase_add_test(tc, standalone_done);
	tcase_add_test(tc, standalone_no_restarts);
	tcase_add_test(tc, standalone_run_ids);
	tcase_add_test(tc, static_from_endpoint);
	tcase_add_test(tc, static_from_master);
	tcase_add_test(tc, static_node0_hosts);
	tcase_add_test(tc, static_bad);
	suite_add_tcase(s, tc);
	return s;
}

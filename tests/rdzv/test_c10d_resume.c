/*
 * test_c10d_resume.c: the c10d client on a new connection after a lost
 * one (launcher/backend/c10d_resume.c), against a scripted server on a
 * real socket that records every frame the client sends and answers only
 * what the test says.  A server of version 4: the client waits for
 * WELCOME, carries its round (RESUME, then JOIN), holds a report made
 * meanwhile until the server's ROUND, sends it when that ROUND goes on
 * with its round, drops it when a new round supersedes it (and the new
 * round reaches the agent), answers a RESTART with STOPPED.  A server of
 * version 3: JOIN, the report repeated, SPENT.  A listener that never
 * says WELCOME ends the job when the resume window is over.
 */
#include <sys/socket.h>

#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "backend.h"
#include "options.h"
#include "rdzv_proto.h"
#include "wire.h"
#include "helper_backend.h"
#include "helper_main.h"

#define SRV_MAX	32

/* The scripted server: one connection at a time. */
static struct {
	struct evconnlistener	*lis;
	struct bufferevent	*bev;
	int			 port;
	int			 conns;		/* accepted so far */
	int			 magic;		/* "CGRN" read on this one */
	uint16_t		 version;	/* WELCOME's */
	int			 welcome;	/* WELCOME at once on HELLO */
	struct rdzv_msg		 got[SRV_MAX];	/* frames on this one */
	int			 n;
} srv;

static struct event_base *base;
static struct cgrun_options o;
static struct backend *bk;
static struct helper_seen seen;

/* Send m to the client. */
static void
srv_send(const struct rdzv_msg *m)
{
	unsigned char buf[4 + RDZV_FRAME_MAX];
	ssize_t n = rdzv_proto_encode(m, buf, sizeof(buf));

	ck_assert_int_gt(n, 0);
	ck_assert_ptr_nonnull(srv.bev);
	bufferevent_write(srv.bev, buf, (size_t)n);
}

/* WELCOME(srv.version). */
static void
srv_welcome(void)
{
	struct rdzv_msg m;

	rdzv_proto_init(&m, RDZV_OP_WELCOME);
	m.version = srv.version;
	srv_send(&m);
}

/* ROUND r: group rank 0 of 2, ranks 0..1 of 4, store 127.0.0.1:4242. */
static void
srv_round(uint32_t r, uint32_t restarts)
{
	struct rdzv_msg m;

	rdzv_proto_init(&m, RDZV_OP_ROUND);
	m.round = r;
	m.group_rank = 0;
	m.group_world_size = 2;
	m.rank_base = 0;
	m.world_size = 4;
	m.restart_count = restarts;
	snprintf(m.addr, sizeof(m.addr), "127.0.0.1");
	m.port = 4242;
	srv_send(&m);
}

/* Frames from the client: the magic first, then record each. */
static void
srv_read_cb(struct bufferevent *b, void *arg)
{
	struct evbuffer *in = bufferevent_get_input(b);
	char why[RDZV_PROTO_ERRLEN] = "";
	size_t used, len;
	int rc;

	if (!srv.magic) {
		if (evbuffer_get_length(in) < WIRE_NATIVE_MAGIC_LEN)
			return;
		evbuffer_drain(in, WIRE_NATIVE_MAGIC_LEN);
		srv.magic = 1;
	}
	while ((len = evbuffer_get_length(in)) > 0) {
		ck_assert_int_lt(srv.n, SRV_MAX);
		rc = rdzv_proto_decode(evbuffer_pullup(in, (ssize_t)len), len,
		    &srv.got[srv.n], &used, why, sizeof(why));
		if (rc == RDZV_PROTO_MORE)
			return;
		ck_assert_msg(rc == RDZV_PROTO_OK, "bad frame: %s", why);
		evbuffer_drain(in, used);
		if (srv.got[srv.n++].op == RDZV_OP_HELLO && srv.welcome)
			srv_welcome();
	}
}

/* A new connection replaces the last. */
static void
srv_accept_cb(struct evconnlistener *l, evutil_socket_t fd,
    struct sockaddr *sa, int len, void *arg)
{
	if (srv.bev != NULL)
		bufferevent_free(srv.bev);
	srv.bev = bufferevent_socket_new(base, fd, BEV_OPT_CLOSE_ON_FREE);
	bufferevent_setcb(srv.bev, srv_read_cb, NULL, NULL, NULL);
	bufferevent_enable(srv.bev, EV_READ | EV_WRITE);
	srv.conns++;
	srv.magic = 0;
	srv.n = 0;
}

/* Close the connection (as a server that dies). */
static void
srv_drop(void)
{
	bufferevent_free(srv.bev);
	srv.bev = NULL;
}

/* How many frames of op the client sent on this connection. */
static int
srv_count(uint8_t op)
{
	int i, k = 0;

	for (i = 0; i < srv.n; i++)
		k += srv.got[i].op == op;
	return k;
}

/* Turn the loop for ms milliseconds. */
static void
spin(int ms)
{
	int never = 0;

	helper_backend_wait(base, &never, 1, ms);
}

/* The server listening, the client started, in round 0 (restarts r). */
static void
setup(void)
{
	struct sockaddr_in sin;
	socklen_t sl = sizeof(sin);
	char ep[64];

	memset(&srv, 0, sizeof(srv));
	memset(&seen, 0, sizeof(seen));
	memset(&o, 0, sizeof(o));
	base = event_base_new();
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	srv.lis = evconnlistener_new_bind(base, srv_accept_cb, NULL,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE, 8,
	    (struct sockaddr *)&sin, sizeof(sin));
	ck_assert_ptr_nonnull(srv.lis);
	getsockname(evconnlistener_get_fd(srv.lis), (struct sockaddr *)&sin,
	    &sl);
	srv.port = ntohs(sin.sin_port);
	snprintf(ep, sizeof(ep), "--rdzv-endpoint=127.0.0.1:%d", srv.port);
	helper_backend_parse(&o, (const char *const[]){ "cgrun", "--nnodes=2",
	    "--rdzv-backend=c10d", "--rdzv-id=t1", ep, "--max-restarts=3",
	    "--rdzv-conf=is_host=0,keep_alive_interval=0.5,"
	    "keep_alive_max_attempt=20", "true", NULL });
}

/* Free what the test left. */
static void
teardown(void)
{
	if (bk != NULL)
		bk->ops->free(bk);
	bk = NULL;
	if (srv.bev != NULL)
		bufferevent_free(srv.bev);
	evconnlistener_free(srv.lis);
	event_base_free(base);
	options_free(&o);
}

/* Start the client against a server of version v (WELCOME at once): it
 * joins and runs round 0 with restart count r. */
static void
first_round(uint16_t v, uint32_t r)
{
	char err[256];

	srv.version = v;
	srv.welcome = 1;
	ck_assert_ptr_nonnull(bk = helper_backend_open(base, &o, 2, &seen, err,
	    sizeof(err)));
	ck_assert_int_eq(bk->ops->start(bk, err, sizeof(err)), 0);
	ck_assert_int_eq(helper_backend_wait(base, &srv.n, 2, 5000), 2);
	ck_assert_int_eq(srv.got[1].op, RDZV_OP_JOIN);
	srv_round(0, r);
	ck_assert_int_eq(helper_backend_wait(base, &seen.rounds, 1, 5000), 1);
}

/* Round 0 with restart count r on a server of version v; then the server
 * "restarts": the connection drops, the client comes back and says
 * HELLO; WELCOME(v) is sent when the test saw nothing else come first. */
static void
to_new_connection(uint16_t v, uint32_t r)
{
	first_round(v, r);
	srv.welcome = 0;
	srv_drop();
	ck_assert_int_eq(helper_backend_wait(base, &srv.conns, 2, 5000), 2);
	ck_assert_int_eq(helper_backend_wait(base, &srv.n, 1, 5000), 1);
	spin(100);
	ck_assert_int_eq(srv.n, 1);	/* HELLO, then nothing until WELCOME */
	ck_assert_int_eq(srv.got[0].op, RDZV_OP_HELLO);
	srv_welcome();
}

/* Version 4: RESUME (round 0, running, our place), then JOIN. */
static void
expect_resume(void)
{
	const struct rdzv_msg *k = &srv.got[1];

	ck_assert_int_eq(helper_backend_wait(base, &srv.n, 3, 5000), 3);
	ck_assert_int_eq(k->op, RDZV_OP_RESUME);
	ck_assert_int_eq(srv.got[2].op, RDZV_OP_JOIN);
	ck_assert_uint_eq(k->round, 0);
	ck_assert_uint_eq(k->workers, RDZV_WORKERS_RUNNING);
	ck_assert_int_eq(k->group_rank, 0);
	ck_assert_uint_eq(k->group_world_size, 2);
	ck_assert_uint_eq(k->world_size, 4);
	ck_assert_str_eq(k->addr, "127.0.0.1");
	ck_assert_uint_eq(k->port, 4242);
}

/* The workers fail after the RESUME went out: the report waits. */
static void
fail_while_carrying(void)
{
	bk->ops->workers_failed(bk, "rank 1 exited 13");
	spin(100);
	ck_assert_int_eq(srv_count(RDZV_OP_FAILED), 0);
}

/* A new round supersedes the held report: the agent gets the round, the
 * server never hears the report. */
START_TEST(new_round_supersedes)
{
	to_new_connection(RDZV_PROTO_VERSION_RESUME, 0);
	expect_resume();
	fail_while_carrying();
	srv_round(1, 1);
	ck_assert_int_eq(helper_backend_wait(base, &seen.rounds, 2, 5000), 2);
	ck_assert_uint_eq(seen.last.round, 1);
	ck_assert_int_eq(seen.last.restart_count, 1);
	spin(100);
	ck_assert_int_eq(srv_count(RDZV_OP_FAILED), 0);
	ck_assert_int_eq(srv_count(RDZV_OP_SPENT), 0);
}
END_TEST

/* The server goes on with our round: no new round for the agent, and
 * the held failure goes out now. */
START_TEST(round_goes_on_sends_report)
{
	int i;

	to_new_connection(RDZV_PROTO_VERSION_RESUME, 0);
	expect_resume();
	fail_while_carrying();
	srv_round(0, 0);
	for (i = 0; i < 50 && srv_count(RDZV_OP_FAILED) == 0; i++)
		spin(100);
	ck_assert_int_eq(srv_count(RDZV_OP_FAILED), 1);
	ck_assert_str_eq(srv.got[srv.n - 1].text, "rank 1 exited 13");
	ck_assert_int_eq(seen.rounds, 1);
}
END_TEST

/* A RESTART answers the held failure: STOPPED, and the next ROUND is
 * the agent's new round. */
START_TEST(restart_while_carrying)
{
	struct rdzv_msg m;
	int i;

	to_new_connection(RDZV_PROTO_VERSION_RESUME, 0);
	expect_resume();
	fail_while_carrying();
	rdzv_proto_init(&m, RDZV_OP_RESTART);
	m.round = 1;
	srv_send(&m);
	for (i = 0; i < 50 && srv_count(RDZV_OP_STOPPED) == 0; i++)
		spin(100);
	ck_assert_int_eq(srv_count(RDZV_OP_STOPPED), 1);
	ck_assert_int_eq(srv_count(RDZV_OP_FAILED), 0);
	ck_assert_int_eq(seen.restarts, 0);	/* already stopped */
	srv_round(1, 1);
	ck_assert_int_eq(helper_backend_wait(base, &seen.rounds, 2, 5000), 2);
}
END_TEST

/* A failure reported as the server died (its FAILED lost with the
 * connection) is carried in RESUME, not repeated. */
START_TEST(failure_carried)
{
	first_round(RDZV_PROTO_VERSION_RESUME, 2);
	srv_drop();	/* the client has not seen it go yet */
	bk->ops->workers_failed(bk, "rank 0 exited 9");
	ck_assert_int_eq(helper_backend_wait(base, &srv.conns, 2, 5000), 2);
	ck_assert_int_eq(helper_backend_wait(base, &srv.n, 3, 5000), 3);
	ck_assert_int_eq(srv.got[1].op, RDZV_OP_RESUME);
	ck_assert_uint_eq(srv.got[1].workers, RDZV_WORKERS_FAILED);
	ck_assert_uint_eq(srv.got[1].restart_count, 2);
	ck_assert_str_eq(srv.got[1].text, "rank 0 exited 9");
	ck_assert_int_eq(srv.got[2].op, RDZV_OP_JOIN);
	spin(100);
	ck_assert_int_eq(srv_count(RDZV_OP_FAILED), 0);
}
END_TEST

/* A server of version 3: JOIN, the lost failure repeated, SPENT; no
 * RESUME. */
START_TEST(older_server)
{
	first_round(RDZV_PROTO_VERSION_SPENT, 2);
	srv_drop();
	bk->ops->workers_failed(bk, "rank 1 exited 13");
	ck_assert_int_eq(helper_backend_wait(base, &srv.conns, 2, 5000), 2);
	ck_assert_int_eq(helper_backend_wait(base, &srv.n, 4, 5000), 4);
	ck_assert_int_eq(srv.got[0].op, RDZV_OP_HELLO);
	ck_assert_int_eq(srv.got[1].op, RDZV_OP_JOIN);
	ck_assert_int_eq(srv.got[2].op, RDZV_OP_FAILED);
	ck_assert_str_eq(srv.got[2].text, "rank 1 exited 13");
	ck_assert_int_eq(srv.got[3].op, RDZV_OP_SPENT);
	ck_assert_uint_eq(srv.got[3].restart_count, 2);
	spin(100);
	ck_assert_int_eq(srv_count(RDZV_OP_RESUME), 0);
}
END_TEST

/* A new connection that never hears WELCOME is lost when the resume
 * window (1 s here) is over: the job ends, it does not wait forever. */
START_TEST(no_welcome)
{
	char ep[64];

	snprintf(ep, sizeof(ep), "--rdzv-endpoint=127.0.0.1:%d", srv.port);
	helper_backend_parse(&o, (const char *const[]){ "cgrun", "--nnodes=2",
	    "--rdzv-backend=c10d", "--rdzv-id=t1", ep, "--rdzv-conf=is_host=0,"
	    "keep_alive_interval=0.5,keep_alive_max_attempt=2", "true", NULL });
	first_round(RDZV_PROTO_VERSION_RESUME, 0);
	srv.welcome = 0;
	srv_drop();
	ck_assert_int_eq(helper_backend_wait(base, &srv.conns, 2, 5000), 2);
	ck_assert_int_eq(helper_backend_wait(base, &seen.fails, 1, 5000), 1);
	ck_assert_msg(strstr(seen.fail_why, "lost the connection") != NULL,
	    "why: %s", seen.fail_why);
	ck_assert_int_eq(srv_count(RDZV_OP_JOIN), 0);
}
END_TEST

/* The suite. */
Suite *
test_suite(void)
{
	Suite *s = suite_create("c10d_resume");
	TCase *tc = tcase_create("resume");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, new_round_supersedes);
	tcase_add_test(tc, round_goes_on_sends_report);
	tcase_add_test(tc, restart_while_carrying);
	tcase_add_test(tc, failure_carried);
	tcase_add_test(tc, older_server);
	tcase_add_test(tc, no_welcome);
	suite_add_tcase(s, tc);
	return s;
}

/*
 * test_store_client.c: the libcgrun store client (worker-lib/store/)
 * against cgrun's in-process store server (rendezvous/store.h) running on
 * its own libevent loop in a thread: every operation's exact result, wait
 * timeout and reuse, prefix joining, connect retry, and errors.
 */
#include <sys/socket.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <check.h>
#include <event2/event.h>

#include "cgrun/store.h"
#include "store.h"		/* rendezvous/store.h: the server */
#include "helper_main.h"

/* An in-process server: a store on an event loop in a thread. */
struct server {
	struct event_base	*base;
	struct store		*store;
	struct event		*stopev;
	int			 stopfd[2];
	int			 port;
	pthread_t		 thread;
};

static struct server srv;

/* Runs the server's loop until stop is signalled through the pipe. */
static void *
server_main(void *arg)
{
	struct server *s = arg;

	event_base_dispatch(s->base);
	return NULL;
}

/* Stop request from the test thread: leave the loop. */
static void
server_stopcb(evutil_socket_t fd, short what, void *arg)
{
	event_base_loopbreak(arg);
}

/* Create the loop and store; listen on 127.0.0.1 unless fd >= 0 given. */
static void
server_init(struct server *s, int listen_fd)
{
	char err[256];

	memset(s, 0, sizeof(*s));
	ck_assert_ptr_nonnull(s->base = event_base_new());
	ck_assert_ptr_nonnull(s->store = store_new(s->base, NULL));
	ck_assert_int_eq(pipe2(s->stopfd, O_CLOEXEC), 0);
	s->stopev = event_new(s->base, s->stopfd[0], EV_READ, server_stopcb,
	    s->base);
	event_add(s->stopev, NULL);
	if (listen_fd >= 0)
		ck_assert_msg(store_adopt_listener(s->store, listen_fd, err,
		    sizeof(err)) == 0, "adopt: %s", err);
	else
		ck_assert_msg(store_listen(s->store, "127.0.0.1", 0, &s->port,
		    err, sizeof(err)) == 0, "listen: %s", err);
	ck_assert_int_eq(pthread_create(&s->thread, NULL, server_main, s), 0);
}

/* Stop the loop thread and free the server. */
static void
server_fini(struct server *s)
{
	ck_assert_int_eq(write(s->stopfd[1], "x", 1), 1);
	pthread_join(s->thread, NULL);
	store_free(s->store);
	event_free(s->stopev);
	event_base_free(s->base);
	close(s->stopfd[0]);
	close(s->stopfd[1]);
}

static void
setup(void)
{
	server_init(&srv, -1);
}

static void
teardown(void)
{
	server_fini(&srv);
}

/* Milliseconds on the monotonic clock. */
static long long
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A client of the test server with a 10 s store timeout. */
static struct cgrun_store *
client(void)
{
	char err[CGRUN_ERRLEN];
	struct cgrun_store *s;

	s = cgrun_store_connect("127.0.0.1", srv.port, 10000, err);
	ck_assert_msg(s != NULL, "connect: %s", err);
	return s;
}

/* get(key) must return exactly want (n bytes). */
static void
expect_get(struct cgrun_store *s, const char *key, const char *want, size_t n)
{
	void *v = NULL;
	size_t len = 0;

	ck_assert_msg(cgrun_store_get(s, key, &v, &len) == 0, "get %s: %s",
	    key, cgrun_store_errmsg(s));
	ck_assert_uint_eq(len, n);
	ck_assert_mem_eq(v, want, n);
	ck_assert_int_eq(((char *)v)[n], '\0');
	free(v);
}

START_TEST(test_ops)
{
	struct cgrun_store *s = client();
	const char *keys[] = { "m1", "m2" }, *rev[] = { "m2", "m1" };
	const void *vals[] = { "x", "y\0z" };
	size_t lens[] = { 1, 3 }, glens[2];
	void *gv[2], *v;
	size_t n;
	int64_t r;

	ck_assert_int_eq(cgrun_store_num_keys(s, &r), 0);
	ck_assert_int_eq(r, 0);
	ck_assert_int_eq(cgrun_store_set(s, "k", "v\0w", 3), 0);
	expect_get(s, "k", "v\0w", 3);
	ck_assert_int_eq(cgrun_store_set(s, "e", "", 0), 0);
	expect_get(s, "e", "", 0);
	ck_assert_int_eq(cgrun_store_add(s, "c", 40, &r), 0);
	ck_assert_int_eq(r, 40);
	ck_assert_int_eq(cgrun_store_add(s, "c", -43, &r), 0);
	ck_assert_int_eq(r, -3);
	expect_get(s, "c", "-3", 2);
	/* COMPARE_SET: missing+"" creates; missing+x echoes x; swap; mismatch */
	ck_assert_int_eq(cgrun_store_compare_set(s, "cs", "", 0, "d", 1, &v, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_mem_eq(v, "d", 1);
	free(v);
	ck_assert_int_eq(cgrun_store_compare_set(s, "cs2", "x", 1, "d", 1, &v, &n), 0);
	ck_assert_mem_eq(v, "x", 1);
	free(v);
	ck_assert_int_eq(cgrun_store_check(s, (const char *[]){ "cs2" }, 1), 0);
	ck_assert_int_eq(cgrun_store_compare_set(s, "cs", "d", 1, "ee", 2, NULL, NULL), 0);
	ck_assert_int_eq(cgrun_store_compare_set(s, "cs", "d", 1, "f", 1, &v, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_mem_eq(v, "ee", 2);
	free(v);
	ck_assert_int_eq(cgrun_store_check(s, (const char *[]){ "k", "c" }, 2), 1);
	ck_assert_int_eq(cgrun_store_check(s, (const char *[]){ "k", "no" }, 2), 0);
	ck_assert_int_eq(cgrun_store_check(s, NULL, 0), 1);
	ck_assert_int_eq(cgrun_store_wait(s, (const char *[]){ "k", "c" }, 2, 1000), 0);
	ck_assert_int_eq(cgrun_store_num_keys(s, &r), 0);
	ck_assert_int_eq(r, 4);
	ck_assert_int_eq(cgrun_store_delete(s, "k"), 1);
	ck_assert_int_eq(cgrun_store_delete(s, "k"), 0);
	ck_assert_int_eq(cgrun_store_append(s, "ap", "ab", 2), 0);
	ck_assert_int_eq(cgrun_store_append(s, "ap", "cd", 2), 0);
	expect_get(s, "ap", "abcd", 4);
	ck_assert_int_eq(cgrun_store_multi_set(s, keys, vals, lens, 2), 0);
	ck_assert_int_eq(cgrun_store_multi_get(s, rev, 2, gv, glens), 0);
	ck_assert_uint_eq(glens[0], 3);
	ck_assert_mem_eq(gv[0], "y\0z", 3);
	ck_assert_uint_eq(glens[1], 1);
	ck_assert_mem_eq(gv[1], "x", 1);
	free(gv[0]);
	free(gv[1]);
	ck_assert_int_eq(cgrun_store_num_keys(s, &r), 0);
	ck_assert_int_eq(r, 6);
	ck_assert_str_eq(cgrun_store_errmsg(s), "");
	cgrun_store_free(s);
}
END_TEST

START_TEST(test_large_value)
{
	struct cgrun_store *s = client();
	size_t n = 3u << 20, i;
	char *big = malloc(n);
	void *v;
	size_t len;

	ck_assert_ptr_nonnull(big);
	for (i = 0; i < n; i++)
		big[i] = (char)(i * 7 + i / 251);
	ck_assert_int_eq(cgrun_store_set(s, "big", big, n), 0);
	ck_assert_int_eq(cgrun_store_get(s, "big", &v, &len), 0);
	ck_assert_uint_eq(len, n);
	ck_assert(memcmp(v, big, n) == 0);
	free(v);
	free(big);
	cgrun_store_free(s);
}
END_TEST

START_TEST(test_wait_timeout_reuse)
{
	struct cgrun_store *s = client(), *o = client();
	const char *never[] = { "late" };
	long long t0, dt;
	int64_t r;

	t0 = now_ms();
	ck_assert_int_eq(cgrun_store_wait(s, never, 1, 200), -1);
	ck_assert_int_eq(errno, ETIMEDOUT);
	dt = now_ms() - t0;
	ck_assert_msg(dt >= 195 && dt < 3000, "wait took %lldms", dt);
	ck_assert_ptr_nonnull(strstr(cgrun_store_errmsg(s), "timeout"));
	/* The server dropped the registration: creating the key later must
	 * not push a stray STOP_WAITING byte into the next reply. */
	ck_assert_int_eq(cgrun_store_set(o, "late", "1", 1), 0);
	ck_assert_int_eq(cgrun_store_add(o, "n", 5, NULL), 0);
	ck_assert_int_eq(cgrun_store_add(s, "n", 1, &r), 0);
	ck_assert_int_eq(r, 6);
	expect_get(s, "late", "1", 1);
	/* get()'s implicit wait times out the same way, store timeout */
	ck_assert_int_eq(cgrun_store_set_timeout(s, 150), 0);
	ck_assert_int_eq(cgrun_store_timeout(s), 150);
	t0 = now_ms();
	{
		void *v = NULL;
		size_t len;

		ck_assert_int_eq(cgrun_store_get(s, "nothing", &v, &len), -1);
		ck_assert_int_eq(errno, ETIMEDOUT);
		ck_assert_ptr_null(v);
	}
	ck_assert(now_ms() - t0 >= 145);
	ck_assert_int_eq(cgrun_store_add(s, "n", 1, &r), 0);
	ck_assert_int_eq(r, 7);
	cgrun_store_free(o);
	cgrun_store_free(s);
}
END_TEST

/* Second client for test_wait_released: sets "go" once "ready" exists. */
static void *
releaser(void *arg)
{
	struct cgrun_store *o = arg;
	void *v;
	size_t n;

	if (cgrun_store_get(o, "ready", &v, &n) == 0) {
		free(v);
		cgrun_store_add(o, "go", 1, NULL);
	}
	return NULL;
}

START_TEST(test_wait_released)
{
	struct cgrun_store *s = client(), *o = client();
	pthread_t t;
	long long t0;

	ck_assert_int_eq(pthread_create(&t, NULL, releaser, o), 0);
	ck_assert_int_eq(cgrun_store_set(s, "ready", "", 0), 0);
	t0 = now_ms();
	ck_assert_msg(cgrun_store_wait(s, (const char *[]){ "go" }, 1, 8000) == 0,
	    "wait: %s", cgrun_store_errmsg(s));
	ck_assert(now_ms() - t0 < 5000);
	pthread_join(t, NULL);
	expect_get(s, "go", "1", 1);
	cgrun_store_free(o);
	cgrun_store_free(s);
}
END_TEST

START_TEST(test_prefix)
{
	struct cgrun_store *s = client(), *a, *ab;

	ck_assert_ptr_null(cgrun_store_prefix(s));
	ck_assert_ptr_nonnull(a = cgrun_store_prefixed(s, "a"));
	ck_assert_ptr_nonnull(ab = cgrun_store_prefixed(a, "b"));
	ck_assert_str_eq(cgrun_store_prefix(ab), "a/b");
	ck_assert_int_eq(cgrun_store_set(a, "k", "1", 1), 0);
	ck_assert_int_eq(cgrun_store_set(ab, "k", "2", 1), 0);
	expect_get(s, "a/k", "1", 1);
	expect_get(s, "a/b/k", "2", 1);
	expect_get(a, "b/k", "2", 1);
	/* views share the connection and survive each other */
	cgrun_store_free(a);
	expect_get(ab, "k", "2", 1);
	/* set_prefix replaces; "" is a real prefix (PrefixStore("", s)) */
	ck_assert_int_eq(cgrun_store_set_prefix(ab, ""), 0);
	ck_assert_int_eq(cgrun_store_set(ab, "k", "3", 1), 0);
	expect_get(s, "/k", "3", 1);
	ck_assert_int_eq(cgrun_store_check(s, (const char *[]){ "k" }, 1), 0);
	ck_assert_int_eq(cgrun_store_set_prefix(ab, NULL), 0);
	ck_assert_ptr_null(cgrun_store_prefix(ab));
	ck_assert_int_eq(cgrun_store_set(ab, "k", "4", 1), 0);
	expect_get(s, "k", "4", 1);
	/* a trailing "/" in a prefix doubles, as torch's 2.x gloo keys do */
	ck_assert_ptr_nonnull(a = cgrun_store_prefixed(s, "0/"));
	ck_assert_int_eq(cgrun_store_add(a, "c", 9, NULL), 0);
	expect_get(s, "0//c", "9", 1);
	cgrun_store_free(a);
	cgrun_store_free(ab);
	cgrun_store_free(s);
}
END_TEST

START_TEST(test_errors)
{
	struct cgrun_store *s = client(), *p;
	char err[CGRUN_ERRLEN];
	int64_t r;
	void *v;
	size_t n;

	errno = 0;
	ck_assert_ptr_null(cgrun_store_connect(NULL, 1, 100, err));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_null(cgrun_store_connect("127.0.0.1", 0, 100, err));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_null(cgrun_store_connect("127.0.0.1", srv.port, 0, err));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(cgrun_store_set_timeout(s, 0), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(cgrun_store_set(s, NULL, "", 0), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(cgrun_store_set(s, "k", NULL, 3), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(cgrun_store_get(s, "k", NULL, &n), -1);
	ck_assert_int_eq(errno, EINVAL);
	/* argument errors leave the connection usable */
	ck_assert_int_eq(cgrun_store_set(s, "txt", "abc", 3), 0);
	expect_get(s, "txt", "abc", 3);
	/* ADD on a non-number: the server closes the connection */
	p = cgrun_store_prefixed(s, "view");
	ck_assert_int_eq(cgrun_store_add(s, "txt", 1, &r), -1);
	ck_assert_int_eq(errno, ECONNRESET);
	ck_assert_ptr_nonnull(strstr(cgrun_store_errmsg(s), "closed"));
	ck_assert_int_eq(cgrun_store_get(s, "txt", &v, &n), -1);
	ck_assert_int_eq(errno, ENOTCONN);
	ck_assert_int_eq(cgrun_store_set(p, "x", "", 0), -1);
	ck_assert_int_eq(errno, ENOTCONN);
	ck_assert_str_ne(cgrun_store_errmsg(p), "");
	cgrun_store_free(p);
	cgrun_store_free(s);
	cgrun_store_free(NULL);
	/* the store kept its data */
	s = client();
	expect_get(s, "txt", "abc", 3);
	cgrun_store_free(s);
}
END_TEST

START_TEST(test_connect_refused_times_out)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	char err[CGRUN_ERRLEN];
	long long t0, dt;
	int fd;

	/* a bound but not listening port refuses connections */
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&sin, &len), 0);
	t0 = now_ms();
	ck_assert_ptr_null(cgrun_store_connect("127.0.0.1", ntohs(sin.sin_port),
	    400, err));
	ck_assert_int_eq(errno, ETIMEDOUT);
	dt = now_ms() - t0;
	ck_assert_msg(dt >= 395 && dt < 3000, "gave up after %lldms", dt);
	ck_assert_ptr_nonnull(strstr(err, "refused"));
	ck_assert_ptr_nonnull(strstr(err, "attempt"));
	close(fd);
}
END_TEST

static int connect_timeout_ms = 10000;

/* Connect in a thread (the retry tests); the result goes to *arg. */
static void *
connector(void *arg)
{
	struct cgrun_store **out = arg;
	char err[CGRUN_ERRLEN];

	*out = cgrun_store_connect("127.0.0.1", srv.port, connect_timeout_ms,
	    err);
	return NULL;
}

START_TEST(test_connect_retries)
{
	struct cgrun_store *s = NULL;
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	struct pollfd pfd;
	pthread_t t;
	int lfd, c, i;

	/* Our own listener first: it accepts and drops the client's first
	 * two attempts (EOF during the handshake), then the store adopts
	 * it, so the client's retries must reach the real server. */
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(lfd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	ck_assert_int_eq(listen(lfd, 16), 0);
	ck_assert_int_eq(getsockname(lfd, (struct sockaddr *)&sin, &len), 0);
	srv.port = ntohs(sin.sin_port);
	ck_assert_int_eq(pthread_create(&t, NULL, connector, &s), 0);
	for (i = 0; i < 2; i++) {
		pfd.fd = lfd;
		pfd.events = POLLIN;
		ck_assert_msg(poll(&pfd, 1, 5000) == 1, "no attempt %d in 5 s", i);
		ck_assert_int_ge(c = accept(lfd, NULL, NULL), 0);
		close(c);
	}
	server_fini(&srv);
	server_init(&srv, lfd);
	srv.port = ntohs(sin.sin_port);
	pthread_join(t, NULL);
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(cgrun_store_set(s, "after", "retry", 5), 0);
	expect_get(s, "after", "retry", 5);
	cgrun_store_free(s);
}
END_TEST

START_TEST(test_bad_ping_reply)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	pthread_t t;
	struct cgrun_store *s = (struct cgrun_store *)1;
	unsigned char buf[10];
	struct pollfd pfd;
	int lfd, c;

	/* a server that answers PING with the wrong nonce is not a store */
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(lfd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	ck_assert_int_eq(listen(lfd, 16), 0);
	ck_assert_int_eq(getsockname(lfd, (struct sockaddr *)&sin, &len), 0);
	srv.port = ntohs(sin.sin_port);
	connect_timeout_ms = 1000;
	ck_assert_int_eq(pthread_create(&t, NULL, connector, &s), 0);
	pfd.fd = lfd;
	pfd.events = POLLIN;
	ck_assert_int_eq(poll(&pfd, 1, 5000), 1);
	ck_assert_int_ge(c = accept(lfd, NULL, NULL), 0);
	ck_assert_int_eq(recv(c, buf, sizeof(buf), MSG_WAITALL), 10);
	ck_assert_int_eq(buf[0], 0);		/* VALIDATE */
	ck_assert_int_eq(buf[1], 0xce);		/* magic, little-endian */
	ck_assert_int_eq(buf[4], 0x3c);
	ck_assert_int_eq(buf[5], 13);		/* PING */
	buf[6] ^= 0xff;
	ck_assert_int_eq(send(c, buf + 6, 4, MSG_NOSIGNAL), 4);
	close(lfd);	/* later attempts are refused until the timeout */
	close(c);
	pthread_join(t, NULL);
	ck_assert_ptr_null(s);
}
END_TEST

Suite *
test_suite(void)
{
	Suite *su = suite_create("store_client");
	TCase *tc = tcase_create("client");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_ops);
	tcase_add_test(tc, test_large_value);
	tcase_add_test(tc, test_wait_timeout_reuse);
	tcase_add_test(tc, test_wait_released);
	tcase_add_test(tc, test_prefix);
	tcase_add_test(tc, test_errors);
	tcase_add_test(tc, test_connect_refused_times_out);
	tcase_add_test(tc, test_connect_retries);
	tcase_add_test(tc, test_bad_ping_reply);
	suite_add_tcase(su, tc);
	return su;
}

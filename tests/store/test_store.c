/*
 * test_store.c: the store server in-process on an event_base, driven by
 * raw client sockets: exact reply bytes of both dialects, waits across
 * connections, pipelining and splits, limits closing only the offender,
 * slow readers, reset, the native hook, idle timeout.
 *
 * Single-threaded: a client call pumps the loop (non-blocking passes)
 * until its bytes arrive or a deadline passes.
 */
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "log.h"
#include "store.h"
#include "store_impl.h"
#include "wire.h"
#include "helper_main.h"

#define DEADLINE_MS	5000	/* longest wait for anything expected */

static struct event_base *base;
static struct store *st;
static int port;
static struct store_limits lim;

/* Default limits; a test may change lim before start(). */
static void
setup(void)
{
	log_init("test_store", LOG_LVL_WARN);
	store_limits_default(&lim);
	base = event_base_new();
	ck_assert_ptr_nonnull(base);
	st = NULL;
}

/* Free the store and loop. */
static void
teardown(void)
{
	log_set_sink(NULL, NULL);
	store_free(st);
	event_base_free(base);
}

/* Start the store on an ephemeral loopback port. */
static void
start(void)
{
	char err[256];

	st = store_new(base, &lim);
	ck_assert_ptr_nonnull(st);
	ck_assert_int_eq(store_listen(st, "127.0.0.1", 0, &port, err,
	    sizeof err), 0);
	ck_assert_int_gt(port, 0);
}

/* Milliseconds on a monotonic clock. */
static long
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* One non-blocking pass of the server loop. */
static void
pump(void)
{
	event_base_loop(base, EVLOOP_NONBLOCK);
}

/* A connected, non-blocking client socket. */
static int
cli(void)
{
	struct sockaddr_in sin;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	ck_assert_int_ge(fd, 0);
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sin, sizeof sin), 0);
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	return fd;
}

/* Send all bytes, pumping the server while the socket is full. */
static void
csend(int fd, const void *p, size_t n)
{
	const uint8_t *b = p;
	long end = now_ms() + DEADLINE_MS;
	ssize_t w;

	while (n > 0) {
		w = send(fd, b, n, MSG_NOSIGNAL);
		if (w > 0) {
			b += w;
			n -= (size_t)w;
			continue;
		}
		ck_assert_msg(w == -1 && errno == EAGAIN, "send: %s",
		    strerror(errno));
		ck_assert_msg(now_ms() < end, "send timed out");
		pump();
	}
	pump();
}

/* Receive exactly n bytes within the deadline; -1 if the peer closed. */
static int
crecv(int fd, void *p, size_t n)
{
	uint8_t *b = p;
	long end = now_ms() + DEADLINE_MS;
	size_t got = 0;
	ssize_t r;

	while (got < n) {
		pump();
		r = recv(fd, b + got, n - got, 0);
		if (r > 0) {
			got += (size_t)r;
			continue;
		}
		if (r == 0 || (r == -1 && errno == ECONNRESET))
			return -1;
		ck_assert_msg(now_ms() < end, "waited %d ms for %zu reply "
		    "bytes, got %zu", DEADLINE_MS, n, got);
	}
	return 0;
}

/* Expect exactly these reply bytes. */
static void
expect(int fd, const void *want, size_t n)
{
	uint8_t buf[4096];

	ck_assert_uint_le(n, sizeof buf);
	ck_assert_int_eq(crecv(fd, buf, n), 0);
	ck_assert_mem_eq(buf, want, n);
}

/* Expect the server to close fd (EOF) within the deadline. */
static void
expect_closed(int fd)
{
	uint8_t buf[4096];
	long end = now_ms() + DEADLINE_MS;
	ssize_t r;

	for (;;) {
		pump();
		r = recv(fd, buf, sizeof buf, 0);
		if (r == 0 || (r == -1 && errno == ECONNRESET))
			return;
		ck_assert_msg(now_ms() < end, "connection not closed");
	}
}

/* A request under construction. */
struct msg {
	uint8_t	b[1 << 16];
	size_t	n;
};

/* Start an empty message with an opcode. */
static struct msg *
op(uint8_t code)
{
	static struct msg m;

	m.n = 0;
	m.b[m.n++] = code;
	return &m;
}

/* Append a u64. */
static struct msg *
u64(struct msg *m, uint64_t v)
{
	wire_enc_u64(m->b + m->n, v);
	m->n += 8;
	return m;
}

/* Append a u32. */
static struct msg *
u32(struct msg *m, uint32_t v)
{
	wire_enc_u32(m->b + m->n, v);
	m->n += 4;
	return m;
}

/* Append a length-prefixed byte string. */
static struct msg *
bytes(struct msg *m, const void *p, size_t n)
{
	u64(m, n);
	memcpy(m->b + m->n, p, n);
	m->n += n;
	return m;
}

/* Append a C string as bytes. */
static struct msg *
str(struct msg *m, const char *s)
{
	return bytes(m, s, strlen(s));
}

/* Send a built message. */
static void
msend(int fd, const struct msg *m)
{
	csend(fd, m->b, m->n);
}

/* Expect an i64 reply. */
static void
expect_i64(int fd, int64_t v)
{
	uint8_t b[8];

	wire_enc_i64(b, v);
	expect(fd, b, 8);
}

/* Expect a byte-string reply. */
static void
expect_bytes(int fd, const char *s)
{
	uint8_t b[8];

	wire_enc_u64(b, strlen(s));
	expect(fd, b, 8);
	if (*s != '\0')
		expect(fd, s, strlen(s));
}

/* Open a 2.x connection: VALIDATE + PING in one segment. */
static int
cli_v2(void)
{
	static const uint8_t hello[] = { 0x00, 0xce, 0xf7, 0x85, 0x3c, 0x0d,
	    0x05, 0x74, 0x00, 0x00 };
	int fd = cli();

	csend(fd, hello, sizeof hello);
	expect(fd, "\x05\x74\x00\x00", 4);
	return fd;
}

START_TEST(v1_trace)
{
	int fd;

	start();
	fd = cli();
	/* Byte traces of reference §11 (torch 1.13 server). */
	msend(fd, str(str(op(V1_SET), "/k1"), "v1"));
	msend(fd, str(op(V1_GET), "/k1"));
	expect(fd, "\x02\0\0\0\0\0\0\0v1", 10);
	msend(fd, u64(str(op(V1_ADD), "/cnt"), 5));
	expect_i64(fd, 5);
	msend(fd, u64(str(op(V1_ADD), "/cnt"), (uint64_t)-2));
	expect_i64(fd, 3);
	msend(fd, str(op(V1_GET), "/cnt"));
	expect_bytes(fd, "3");
	msend(fd, str(str(str(op(V1_COMPARE_SET), "/cs"), ""), "d"));
	expect_bytes(fd, "d");
	msend(fd, str(str(str(op(V1_COMPARE_SET), "/cs2"), "x"), "d"));
	expect_bytes(fd, "x");
	msend(fd, str(str(u64(op(V1_CHECK), 2), "/k1"), "/cnt"));
	expect(fd, "\x00", 1);
	msend(fd, str(u64(op(V1_CHECK), 1), "/nope"));
	expect(fd, "\x01", 1);
	msend(fd, u64(op(V1_CHECK), 0));
	expect(fd, "\x00", 1);
	msend(fd, str(u64(op(V1_WAIT), 1), "/k1"));
	expect(fd, "\x00", 1);
	msend(fd, op(V1_GETNUMKEYS));
	expect_i64(fd, 3);
	msend(fd, str(op(V1_DELETE_KEY), "/k1"));
	expect_i64(fd, 1);
	msend(fd, str(op(V1_DELETE_KEY), "/k1"));
	expect_i64(fd, 0);
	/* The worker counter, raw key. */
	msend(fd, u64(str(op(V1_ADD), "init/"), 1));
	expect_i64(fd, 1);
	msend(fd, op(V1_GETNUMKEYS));
	expect_i64(fd, 3);
	close(fd);
}
END_TEST

START_TEST(v2_ops)
{
	int fd;

	start();
	fd = cli_v2();
	msend(fd, u32(op(V2_PING), 0xdeadbeef));
	expect(fd, "\xef\xbe\xad\xde", 4);
	msend(fd, str(str(op(V2_SET), "/k"), "v"));
	msend(fd, u64(str(op(V2_ADD), "/c"), 1));
	expect_i64(fd, 1);
	msend(fd, str(str(u64(op(V2_CHECK), 2), "/k"), "/zz"));
	expect(fd, "\x01", 1);
	msend(fd, str(str(op(V2_APPEND), "/ap"), "ab"));
	msend(fd, str(str(op(V2_APPEND), "/ap"), "cd"));
	msend(fd, str(op(V2_GET), "/ap"));
	expect_bytes(fd, "abcd");
	msend(fd, str(str(str(str(u64(op(V2_MULTI_SET), 2), "/m1"), "x"),
	    "/m2"), "yy"));
	msend(fd, str(str(u64(op(V2_MULTI_GET), 2), "/m2"), "/m1"));
	expect(fd, "\x02\0\0\0\0\0\0\0yy\x01\0\0\0\0\0\0\0x", 19);
	/* CANCEL_WAIT replies 01 even with nothing pending. */
	msend(fd, op(V2_CANCEL_WAIT));
	expect(fd, "\x01", 1);
	msend(fd, op(V2_GETNUMKEYS));
	expect_i64(fd, 5);
	msend(fd, str(op(V2_DELETE_KEY), "/k"));
	expect_i64(fd, 1);
	/* Queues: a namespace apart. */
	msend(fd, str(str(op(V2_QUEUE_PUSH), "/q"), "one"));
	msend(fd, str(str(op(V2_QUEUE_PUSH), "/q"), "two"));
	msend(fd, str(op(V2_QUEUE_LEN), "/q"));
	expect_i64(fd, 2);
	msend(fd, str(op(V2_QUEUE_POP), "/q"));
	expect_i64(fd, 2);
	expect_bytes(fd, "one");
	msend(fd, str(op(V2_QUEUE_POP), "/q"));
	expect_i64(fd, 1);
	expect_bytes(fd, "two");
	msend(fd, str(op(V2_QUEUE_POP), "/q"));
	expect_i64(fd, 0);
	msend(fd, op(V2_GETNUMKEYS));
	expect_i64(fd, 4);
	/* LIST_KEYS: a count then the keys (order free): check the count. */
	msend(fd, op(V2_LIST_KEYS));
	expect_i64(fd, 4);
	{
		uint8_t b[8], k[64];
		int i;

		for (i = 0; i < 4; i++) {
			ck_assert_int_eq(crecv(fd, b, 8), 0);
			ck_assert_uint_lt(wire_get_u64(b), sizeof k);
			ck_assert_int_eq(crecv(fd, k, wire_get_u64(b)), 0);
		}
	}
	msend(fd, op(V2_GETNUMKEYS));
	expect_i64(fd, 4);
	close(fd);
}
END_TEST

START_TEST(wait_across_clients)
{
	int a, b, c;

	start();
	a = cli();
	b = cli_v2();
	c = cli();
	/* a (1.13) waits on two keys, one listed twice. */
	msend(a, str(str(str(u64(op(V1_WAIT), 3), "/x"), "/y"), "/x"));
	/* A reply to a later request proves WAIT sent nothing yet. */
	msend(a, op(V1_GETNUMKEYS));
	expect_i64(a, 0);
	msend(b, str(str(op(V2_SET), "/x"), "1"));
	msend(b, op(V2_GETNUMKEYS));
	expect_i64(b, 1);
	msend(a, op(V1_GETNUMKEYS));
	expect_i64(a, 1);
	msend(c, u64(str(op(V1_ADD), "/y"), 1));
	expect_i64(c, 1);
	expect(a, "\x00", 1);
	close(a);
	close(b);
	close(c);
}
END_TEST

START_TEST(cancel_wait)
{
	int a, b;

	start();
	a = cli_v2();
	b = cli_v2();
	msend(a, str(u64(op(V2_WAIT), 1), "/never"));
	msend(a, op(V2_CANCEL_WAIT));
	expect(a, "\x01", 1);
	/* The registration is gone: a later SET sends a nothing. */
	msend(b, str(str(op(V2_SET), "/never"), "v"));
	msend(b, op(V2_GETNUMKEYS));
	expect_i64(b, 1);
	msend(a, op(V2_GETNUMKEYS));
	expect_i64(a, 1);
	/* A closed waiter's registration goes with it. */
	msend(b, str(u64(op(V2_WAIT), 1), "/gone"));
	close(b);
	msend(a, str(str(op(V2_SET), "/gone"), "v"));
	msend(a, op(V2_GETNUMKEYS));
	expect_i64(a, 2);
	close(a);
}
END_TEST

START_TEST(stale_stop_waiting)
{
	/* A 1.13 client that timed out sends nothing; the server still
	 * answers when the key appears (the byte the client no longer
	 * expects, reference §7). */
	int a, b;

	start();
	a = cli();
	b = cli();
	msend(a, str(u64(op(V1_WAIT), 1), "/late"));
	msend(b, str(str(op(V1_SET), "/late"), "v"));
	expect(a, "\x00", 1);
	close(a);
	close(b);
}
END_TEST

START_TEST(pipelined_many)
{
	static struct msg m;
	uint8_t r[8 * 1000];
	int fd, i;

	start();
	fd = cli();
	m.n = 0;
	for (i = 0; i < 1000; i++) {
		m.b[m.n++] = V1_ADD;
		wire_enc_u64(m.b + m.n, 2);
		memcpy(m.b + m.n + 8, "/p", 2);
		wire_enc_u64(m.b + m.n + 10, 1);
		m.n += 18;
	}
	csend(fd, m.b, m.n);
	ck_assert_int_eq(crecv(fd, r, sizeof r), 0);
	for (i = 0; i < 1000; i++)
		ck_assert(wire_get_u64(r + 8 * i) == (uint64_t)i + 1);
	close(fd);
}
END_TEST

START_TEST(split_does_not_stall_others)
{
	struct msg *m;
	uint8_t copy[64];
	size_t i, n;
	int slow, fast;

	start();
	slow = cli();
	fast = cli_v2();
	m = str(str(op(V1_SET), "/split"), "value");
	n = m->n;
	memcpy(copy, m->b, n);
	for (i = 0; i < n; i++) {
		csend(slow, copy + i, 1);
		/* While slow's request is half-sent, fast is served. */
		msend(fast, u64(str(op(V2_ADD), "/f"), 1));
		expect_i64(fast, (int64_t)i + 1);
	}
	msend(slow, str(op(V1_GET), "/split"));
	expect_bytes(slow, "value");
	close(slow);
	close(fast);
}
END_TEST

START_TEST(binary_keys)
{
	static const uint8_t key[] = { 0, '/', 0xff, 0 };
	static const uint8_t val[] = { 0xce, 0xf7, 0x85, 0x3c, 0 };
	uint8_t want[8 + sizeof val];
	int fd;

	start();
	fd = cli_v2();
	msend(fd, bytes(bytes(op(V2_SET), key, sizeof key), val, sizeof val));
	msend(fd, bytes(op(V2_GET), key, sizeof key));
	wire_enc_u64(want, sizeof val);
	memcpy(want + 8, val, sizeof val);
	expect(fd, want, sizeof want);
	/* Empty key and empty value are legal. */
	msend(fd, bytes(bytes(op(V2_SET), "", 0), "", 0));
	msend(fd, bytes(op(V2_GET), "", 0));
	expect_bytes(fd, "");
	msend(fd, op(V2_GETNUMKEYS));
	expect_i64(fd, 2);
	close(fd);
}
END_TEST

START_TEST(get_missing_closes)
{
	int a, b;

	start();
	a = cli();
	b = cli();
	msend(b, str(str(op(V1_SET), "/keep"), "v"));
	msend(a, str(op(V1_GET), "/missing"));
	expect_closed(a);
	msend(b, str(op(V1_GET), "/keep"));
	expect_bytes(b, "v");
	close(a);
	/* MULTI_GET: values before the missing key, then close. */
	a = cli_v2();
	msend(a, str(str(u64(op(V2_MULTI_GET), 2), "/keep"), "/missing"));
	expect_bytes(a, "v");
	expect_closed(a);
	close(a);
	close(b);
}
END_TEST

START_TEST(add_non_number_closes)
{
	int a, b;

	start();
	a = cli();
	b = cli();
	msend(b, str(str(op(V1_SET), "/t"), "text"));
	msend(a, u64(str(op(V1_ADD), "/t"), 1));
	expect_closed(a);
	msend(b, str(op(V1_GET), "/t"));
	expect_bytes(b, "text");
	close(a);
	close(b);
}
END_TEST

START_TEST(limits_close_offender_only)
{
	int bad, good;

	lim.max_key = 16;
	lim.max_value = 32;
	lim.max_keys_per_req = 4;
	start();
	good = cli();
	msend(good, str(str(op(V1_SET), "/g"), "1"));
	/* key too long: refused after its length arrives */
	bad = cli();
	msend(bad, u64(op(V1_SET), 17));
	expect_closed(bad);
	close(bad);
	/* value too long */
	bad = cli_v2();
	msend(bad, u64(str(op(V2_SET), "/k"), 33));
	expect_closed(bad);
	close(bad);
	/* too many keys */
	bad = cli();
	msend(bad, u64(op(V1_WAIT), 5));
	expect_closed(bad);
	close(bad);
	/* 2^60 and negative lengths */
	bad = cli();
	msend(bad, u64(op(V1_GET), (uint64_t)1 << 60));
	expect_closed(bad);
	close(bad);
	bad = cli_v2();
	msend(bad, u64(op(V2_GET), (uint64_t)-1));
	expect_closed(bad);
	close(bad);
	/* unknown opcode, and VALIDATE twice */
	bad = cli();
	csend(bad, "\x09", 1);
	expect_closed(bad);
	close(bad);
	bad = cli_v2();
	msend(bad, u32(op(V2_VALIDATE), WIRE_MAGIC));
	expect_closed(bad);
	close(bad);
	/* wrong magic: a 1.13 SET with an absurd key length */
	bad = cli();
	csend(bad, "\x00\xce\xf7\x85\x3d\x0d\x00\x00\x00\x00", 10);
	expect_closed(bad);
	close(bad);
	msend(good, str(op(V1_GET), "/g"));
	expect_bytes(good, "1");
	close(good);
}
END_TEST

START_TEST(max_connections)
{
	int a, b, c;

	lim.max_conns = 2;
	start();
	a = cli();
	b = cli();
	msend(a, op(V1_GETNUMKEYS));
	expect_i64(a, 0);
	c = cli();
	expect_closed(c);
	close(c);
	msend(b, op(V1_GETNUMKEYS));
	expect_i64(b, 0);
	close(a);
	/* A slot is free again once the close is seen. */
	{
		long end = now_ms() + DEADLINE_MS;
		int ok = 0;

		while (!ok && now_ms() < end) {
			uint8_t r[8];

			c = cli();
			msend(c, op(V1_GETNUMKEYS));
			ok = crecv(c, r, 8) == 0;
			close(c);
		}
		ck_assert_msg(ok, "no connection accepted after one closed");
	}
	close(b);
}
END_TEST

START_TEST(slow_reader_dropped)
{
	static uint8_t big[16384];
	static struct msg m;
	int slow, good, rcv = 4096;
	long end;
	ssize_t w;
	int closed = 0;

	lim.max_outbuf = 64 * 1024;
	start();
	good = cli();
	slow = cli();
	setsockopt(slow, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof rcv);
	memset(big, 'x', sizeof big);
	msend(good, bytes(str(op(V1_SET), "/big"), big, sizeof big));
	m.n = 0;
	while (m.n + 13 < sizeof m.b) {
		m.b[m.n++] = V1_GET;
		wire_enc_u64(m.b + m.n, 4);
		memcpy(m.b + m.n + 8, "/big", 4);
		m.n += 12;
	}
	/* Keep requesting, never reading, until the server hangs up. */
	end = now_ms() + DEADLINE_MS;
	while (!closed && now_ms() < end) {
		w = send(slow, m.b, m.n, MSG_NOSIGNAL);
		if (w == -1 && (errno == EPIPE || errno == ECONNRESET))
			closed = 1;
		pump();
		msend(good, op(V1_GETNUMKEYS));
		expect_i64(good, 1);
	}
	if (!closed)
		expect_closed(slow);
	close(slow);
	msend(good, str(op(V1_GET), "/big"));
	{
		uint8_t hdr[8];

		ck_assert_int_eq(crecv(good, hdr, 8), 0);
		ck_assert(wire_get_u64(hdr) == sizeof big);
	}
	close(good);
}
END_TEST

START_TEST(watch_key_events)
{
	int w, s;

	start();
	w = cli();
	s = cli();
	msend(w, str(op(V1_WATCH_KEY), "/wk"));
	expect(w, "\x03", 1);
	msend(s, str(str(op(V1_SET), "/wk"), "one"));
	expect(w, "\x01\x03\0\0\0\0\0\0\0/wk\0\0\0\0\0\0\0\0\x03\0\0\0\0\0\0\0one",
	    1 + 11 + 8 + 11);
	msend(s, str(op(V1_DELETE_KEY), "/wk"));
	expect_i64(s, 1);
	expect(w, "\x02\x03\0\0\0\0\0\0\0/wk\x03\0\0\0\0\0\0\0one\0\0\0\0\0\0\0\0",
	    1 + 11 + 11 + 8);
	close(w);
	close(s);
}
END_TEST

/* Native hook state for the tests. */
static int native_inputs, native_closes;

/* Echo every native byte back and count calls. */
static int
native_echo(struct store_conn *c, struct evbuffer *in, void *arg)
{
	uint8_t b[256];
	int n;

	native_inputs++;
	store_conn_set_data(c, arg);
	while ((n = evbuffer_remove(in, b, sizeof b)) > 0) {
		if (n == 1 && b[0] == 'q') {
			store_conn_close(c);
			return 0;
		}
		if (store_conn_write(c, b, (size_t)n) == -1)
			return -1;
	}
	return 0;
}

/* Count closes; data set by native_echo must still be there. */
static void
native_close(struct store_conn *c, void *arg)
{
	ck_assert_ptr_eq(store_conn_get_data(c), arg);
	ck_assert_ptr_nonnull(store_conn_peer(c));
	native_closes++;
}

START_TEST(native_hook)
{
	static const struct store_native_ops nops = { native_echo, native_close };
	int n, t, fd, fresh;

	start();
	/* No handler: refused. */
	fd = cli();
	csend(fd, "CGRN", 4);
	expect_closed(fd);
	close(fd);
	native_inputs = native_closes = 0;
	store_set_native(st, &nops, &native_inputs);
	n = cli();
	csend(n, "CGRNhello", 9);
	expect(n, "hello", 5);
	csend(n, "more", 4);
	expect(n, "more", 4);
	/* reset: TCPStore clients go, native ones stay, keys vanish. */
	t = cli();
	msend(t, str(str(op(V1_SET), "/k"), "v"));
	msend(t, op(V1_GETNUMKEYS));
	expect_i64(t, 1);
	fresh = cli();
	csend(fresh, "CG", 2);		/* a hello still in flight */
	store_reset(st);
	expect_closed(t);
	close(t);
	csend(fresh, "RNhi", 4);
	expect(fresh, "hi", 2);
	close(fresh);
	csend(n, "alive", 5);
	expect(n, "alive", 5);
	t = cli();
	msend(t, op(V1_GETNUMKEYS));
	expect_i64(t, 0);
	close(t);
	/* store_conn_close after output; on_close runs once per connection. */
	csend(n, "q", 1);
	expect_closed(n);
	close(n);
	ck_assert_int_ge(native_inputs, 3);
	{
		long end = now_ms() + DEADLINE_MS;

		while (native_closes < 2 && now_ms() < end)
			pump();
	}
	ck_assert_int_eq(native_closes, 2);
}
END_TEST

/* Every line logged, for tests that read the transitions. */
static char logged[16384];

/* Log sink: append the line to logged (the rest is cut). */
static void
log_keep(int level, const char *line, void *arg)
{
	size_t len = strlen(logged);

	snprintf(logged + len, sizeof logged - len, "%s\n", line);
}

/* Pump the loop until want is in logged; 1 if it is. */
static int
logged_soon(const char *want)
{
	long end = now_ms() + DEADLINE_MS;

	while (strstr(logged, want) == NULL && now_ms() < end)
		pump();
	return strstr(logged, want) != NULL;
}

START_TEST(conn_states)
{
	static const struct store_native_ops nops = { native_echo, native_close };
	int t, n;

	start();
	logged[0] = '\0';
	log_setlevel(LOG_LVL_DEBUG);
	log_set_sink(log_keep, NULL);
	/* TCPStore: NEW -> TCPSTORE at the first request, DEAD at close. */
	t = cli();
	msend(t, op(V1_GETNUMKEYS));
	expect_i64(t, 0);
	ck_assert(logged_soon("dialect=1.13 NEW -> TCPSTORE"));
	close(t);
	ck_assert(logged_soon("dialect=1.13 TCPSTORE -> DEAD"));
	/* Native: NATIVE at the magic, CLOSING by store_conn_close(), then
	 * DEAD once the output is out. */
	store_set_native(st, &nops, &native_inputs);
	n = cli();
	csend(n, "CGRNhi", 6);
	expect(n, "hi", 2);
	ck_assert(logged_soon("dialect=native NEW -> NATIVE"));
	csend(n, "q", 1);
	expect_closed(n);
	close(n);
	ck_assert(logged_soon("NATIVE -> CLOSING"));
	ck_assert(logged_soon("CLOSING -> DEAD"));
	log_set_sink(NULL, NULL);
	log_setlevel(LOG_LVL_WARN);
}
END_TEST

START_TEST(idle_timeout)
{
	int half, clean, silent;

	lim.idle_timeout_ms = 100;
	start();
	silent = cli();
	clean = cli();
	msend(clean, op(V1_GETNUMKEYS));
	expect_i64(clean, 0);
	half = cli();
	csend(half, "\x00\x05\x00", 3);
	expect_closed(half);
	close(half);
	/* Connections without a pending request are not idle-closed, even
	 * one that never sent a byte (1.13's callback connection). */
	msend(clean, op(V1_GETNUMKEYS));
	expect_i64(clean, 0);
	msend(silent, op(V1_GETNUMKEYS));
	expect_i64(silent, 0);
	close(clean);
	close(silent);
}
END_TEST

START_TEST(big_value_in_pieces)
{
	enum { N = 3 * 1024 * 1024 + 7 };
	uint8_t *buf = malloc(N + 64), hdr[8], *got = malloc(N);
	size_t n = 0, off;
	int fd;

	ck_assert_ptr_nonnull(buf);
	ck_assert_ptr_nonnull(got);
	start();
	fd = cli_v2();
	buf[n++] = V2_SET;
	wire_enc_u64(buf + n, 4);
	memcpy(buf + n + 8, "/big", 4);
	n += 12;
	wire_enc_u64(buf + n, N);
	n += 8;
	for (off = 0; off < N; off++)
		buf[n + off] = (uint8_t)(off * 7);
	n += N;
	for (off = 0; off < n; off += 100000)
		csend(fd, buf + off, n - off < 100000 ? n - off : 100000);
	msend(fd, str(op(V2_GET), "/big"));
	ck_assert_int_eq(crecv(fd, hdr, 8), 0);
	ck_assert(wire_get_u64(hdr) == N);
	ck_assert_int_eq(crecv(fd, got, N), 0);
	ck_assert_mem_eq(got, buf + 21, 1000);
	ck_assert_int_eq(memcmp(got, buf + 21, N), 0);
	close(fd);
	free(buf);
	free(got);
}
END_TEST

/* Send what the socket takes of p[0..n) while pumping the server, for at
 * most ms milliseconds; the bytes sent. */
static size_t
csend_some(int fd, const uint8_t *p, size_t n, long ms)
{
	long end = now_ms() + ms;
	size_t off = 0;
	ssize_t w;

	while (off < n && now_ms() < end) {
		w = send(fd, p + off, n - off, MSG_NOSIGNAL);
		if (w > 0)
			off += (size_t)w;
		pump();
	}
	return off;
}

START_TEST(input_budget_pauses)
{
	enum { NC = 3, V = 1024 * 1024, FIRST = 200 * 1024 };
	uint8_t *req = malloc(V + 64), hdr[8];
	size_t n = 0, sent[NC];
	struct store_stats ss;
	int fd[NC], i, healthy;
	char key[8];

	ck_assert_ptr_nonnull(req);
	lim.max_inbuf_total = 128 * 1024;
	start();
	req[n++] = V1_SET;
	wire_enc_u64(req + n, 3);
	n += 8 + 3;	/* the key is written per client */
	wire_enc_u64(req + n, V);
	n += 8;
	memset(req + n, 'v', V);
	n += V;
	for (i = 0; i < NC; i++) {
		fd[i] = cli();
		snprintf(key, sizeof key, "/k%d", i);
		memcpy(req + 9, key, 3);
		sent[i] = csend_some(fd[i], req, 21 + FIRST, 300);
	}
	for (i = 0; i < 50; i++)
		pump();
	store_stats(st, &ss);
	/* Without the budget all three would hold their 200 KiB (256 KiB
	 * buffers); with it one leads and the other two were paused. */
	ck_assert_uint_eq(ss.paused, NC - 1);
	ck_assert_uint_le(ss.inbuf, 256 * 1024 + 2 * 64 * 1024);
	healthy = cli();
	msend(healthy, op(V1_GETNUMKEYS));
	expect_i64(healthy, 0);
	/* Every request completes once the rest arrives: paused readers
	 * resume as the budget frees. */
	for (i = 0; i < NC; i++) {
		memcpy(req + 9, (char[]){ '/', 'k', (char)('0' + i) }, 3);
		sent[i] += csend_some(fd[i], req + sent[i], n - sent[i],
		    DEADLINE_MS);
		ck_assert_uint_eq(sent[i], n);
	}
	for (i = 0; i < NC; i++) {
		snprintf(key, sizeof key, "/k%d", i);
		msend(fd[i], str(op(V1_GET), key));
		ck_assert_int_eq(crecv(fd[i], hdr, 8), 0);
		ck_assert(wire_get_u64(hdr) == V);
	}
	store_stats(st, &ss);
	ck_assert_uint_eq(ss.paused, 0);
	for (i = 0; i < NC; i++)
		close(fd[i]);
	close(healthy);
	free(req);
}
END_TEST

START_TEST(out_watermark)
{
	/* Not paused: stop at high.  Paused: go on at high / 2 or less. */
	ck_assert_int_eq(store_out_watermark(0, 100, 0), 0);
	ck_assert_int_eq(store_out_watermark(99, 100, 0), 0);
	ck_assert_int_eq(store_out_watermark(100, 100, 0), 1);
	ck_assert_int_eq(store_out_watermark(1000, 100, 0), 1);
	ck_assert_int_eq(store_out_watermark(99, 100, 1), 1);
	ck_assert_int_eq(store_out_watermark(51, 100, 1), 1);
	ck_assert_int_eq(store_out_watermark(50, 100, 1), 0);
	ck_assert_int_eq(store_out_watermark(0, 100, 1), 0);
	/* high 0: never paused, and a paused one goes on. */
	ck_assert_int_eq(store_out_watermark((size_t)-1, 0, 0), 0);
	ck_assert_int_eq(store_out_watermark((size_t)-1, 0, 1), 0);
	ck_assert_int_eq(store_out_watermark(1, 1, 0), 1);
	ck_assert_int_eq(store_out_watermark(1, 1, 1), 1);
	ck_assert_int_eq(store_out_watermark(0, 1, 1), 0);
}
END_TEST

START_TEST(output_high_water_pauses)
{
	enum { V = 16 * 1024, N = 1000 };	/* 16 MiB of replies */
	static uint8_t val[V], reqs[N * 13], got[8 + V];
	struct store_stats ss;
	int fd, good, i;

	lim.out_high = 64 * 1024;
	lim.max_outbuf = 64 * 1024 * 1024;	/* not what stops it */
	start();
	good = cli();
	fd = cli();
	memset(val, 'v', sizeof val);
	msend(good, bytes(str(op(V1_SET), "/big"), val, sizeof val));
	for (i = 0; i < N; i++) {	/* GET "/big": opcode, u64 4, key */
		reqs[i * 13] = V1_GET;
		wire_enc_u64(reqs + i * 13 + 1, 4);
		memcpy(reqs + i * 13 + 9, "/big", 4);
	}
	csend(fd, reqs, sizeof reqs);
	for (i = 0; i < 200; i++)
		pump();
	/* Paused with its requests kept; its output stays near the mark. */
	store_stats(st, &ss);
	ck_assert_uint_ge(ss.out_paused_total, 1);
	ck_assert_uint_le(ss.outbuf, 64 * 1024 + 8 + V);
	msend(good, op(V1_GETNUMKEYS));
	expect_i64(good, 1);
	/* Reading resumes it: every reply arrives, complete and right. */
	for (i = 0; i < N; i++) {
		ck_assert_int_eq(crecv(fd, got, sizeof got), 0);
		ck_assert(wire_get_u64(got) == V);
		ck_assert(memcmp(got + 8, val, V) == 0);
	}
	store_stats(st, &ss);
	ck_assert_uint_eq(ss.outbuf, 0);
	close(fd);
	close(good);
}
END_TEST

START_TEST(request_timeout_not_reset)
{
	/* A SET whose 100-byte key never ends within the test. */
	static const uint8_t req[9 + 100] = { V1_SET, 100 };
	long t0, took, next;
	size_t i = 0;
	int fd;

	lim.idle_timeout_ms = 10000;
	lim.request_timeout_ms = 300;
	start();
	fd = cli();
	t0 = now_ms();
	/* One byte every 50 ms: each resets the idle timer, none the
	 * request deadline. */
	while (now_ms() - t0 < 3000 && i < sizeof req) {
		if (send(fd, req + i++, 1, MSG_NOSIGNAL) != 1)
			break;
		for (next = now_ms() + 50; now_ms() < next;)
			pump();
		if (recv(fd, (char[1]){ 0 }, 1, MSG_DONTWAIT) == 0)
			break;
	}
	took = now_ms() - t0;
	ck_assert_msg(took >= 250 && took < 2000, "closed after %ld ms", took);
	close(fd);
}
END_TEST

START_TEST(barrier_op)
{
	int a, b;

	start();
	a = cli_v2();
	b = cli_v2();
	msend(a, u64(str(op(V2_BARRIER), "/bar"), 2));
	msend(a, op(V2_GETNUMKEYS));
	expect_i64(a, 1);
	msend(b, u64(str(op(V2_BARRIER), "/bar"), 2));
	expect(b, "\x00", 1);
	expect(a, "\x00", 1);
	close(a);
	close(b);
}
END_TEST

START_TEST(listen_addresses)
{
	struct sockaddr_in6 s6;
	char err[256];
	int fd, port2, busy;

	/* "localhost" binds all its addresses on one picked port. */
	st = store_new(base, &lim);
	ck_assert_ptr_nonnull(st);
	ck_assert_int_eq(store_listen(st, "localhost", 0, &port, err,
	    sizeof err), 0);
	fd = cli();
	msend(fd, op(V1_GETNUMKEYS));
	expect_i64(fd, 0);
	close(fd);
	fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd != -1) {
		memset(&s6, 0, sizeof s6);
		s6.sin6_family = AF_INET6;
		s6.sin6_port = htons((uint16_t)port);
		s6.sin6_addr = in6addr_loopback;
		if (connect(fd, (struct sockaddr *)&s6, sizeof s6) == 0) {
			fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
			msend(fd, op(V1_GETNUMKEYS));
			expect_i64(fd, 0);
		}
		close(fd);
	}
	/* A busy explicit port fails with a reason. */
	busy = port;
	ck_assert_int_eq(store_listen(st, "127.0.0.1", busy, &port2, err,
	    sizeof err), -1);
	ck_assert_ptr_nonnull(strstr(err, "in use"));
}
END_TEST

/* The suite. */
Suite *
test_suite(void)
{
	Suite *s = suite_create("store");
	TCase *tc = tcase_create("server");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, v1_trace);
	tcase_add_test(tc, v2_ops);
	tcase_add_test(tc, wait_across_clients);
	tcase_add_test(tc, cancel_wait);
	tcase_add_test(tc, stale_stop_waiting);
	tcase_add_test(tc, pipelined_many);
	tcase_add_test(tc, split_does_not_stall_others);
	tcase_add_test(tc, binary_keys);
	tcase_add_test(tc, get_missing_closes);
	tcase_add_test(tc, add_non_number_closes);
	tcase_add_test(tc, limits_close_offender_only);
	tcase_add_test(tc, max_connections);
	tcase_add_test(tc, slow_reader_dropped);
	tcase_add_test(tc, watch_key_events);
	tcase_add_test(tc, native_hook);
	tcase_add_test(tc, conn_states);
	tcase_add_test(tc, idle_timeout);
	tcase_add_test(tc, big_value_in_pieces);
	tcase_add_test(tc, input_budget_pauses);
	tcase_add_test(tc, request_timeout_not_reset);
	tcase_add_test(tc, out_watermark);
	tcase_add_test(tc, output_high_water_pauses);
	tcase_add_test(tc, barrier_op);
	tcase_add_test(tc, listen_addresses);
	suite_add_tcase(s, tc);
	return s;
}

/*
 * loadgen.c: a single-threaded epoll load generator for TCPStore servers
 * (cgrun-rdzvd, torch's own 1.13 and 2.x servers), driven by bench/store.sh.
 *
 * usage: loadgen [-h HOST] -p PORT [-d v1|v2] [-P SERVER_PID] MODE [ARGS]
 *   ops OP CONNS SECS   OP = set|get|add|cas|tget; every connection keeps
 *                       exactly one request in flight for SECS seconds
 *   barrier N           N clients (connected first) do ADD then WAIT, as
 *                       torch 2.x's store-based barrier does
 *   storm N             N clients connect at once, handshake, ADD
 *   idle N OPS          N idle connections open, then one client does OPS
 *                       sequential ADDs (its latency is what counts)
 *
 * Prints one line of key=value results.  With -P, the server's CPU time
 * (utime + stime from /proc/PID/stat, all threads) over the measured
 * interval is reported as cpu_us and cpu_us_per_op.
 *
 * SET has no reply in the protocol, so "set" sends SET and an empty CHECK
 * (the cheapest request that has a reply) in one segment and times the
 * pair.  "tget" is what torch's client get() does: WAIT [key], then GET.
 * Client sockets bind to rotating source addresses 127.0.0.2-127.0.0.251
 * and close with an RST so that repeated 10,000-connection runs neither run
 * out of ephemeral ports nor fill TIME_WAIT.
 */
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "wire.h"

#define MAXOUT		256
#define MAXIN		512
#define RUN_DEADLINE_MS	120000

enum op { OP_SET, OP_GET, OP_ADD, OP_CAS, OP_TGET };
enum mode { M_OPS, M_BARRIER, M_STORM, M_IDLE };

/* What a connection is waiting for. */
enum phase {
	PH_CONNECT,	/* non-blocking connect in progress */
	PH_HELLO,	/* PING reply (v2 handshake) */
	PH_READY,	/* connected, nothing in flight */
	PH_REPLY,	/* reply of the current request */
	PH_TGET_WAIT,	/* tget: WAIT reply, GET follows */
	PH_BAR_ADD,	/* barrier: ADD reply */
	PH_BAR_WAIT,	/* barrier: WAIT reply */
	PH_DONE
};

/* Shape of the reply being read. */
enum shape { R_FIXED, R_BYTES };

struct conn {
	int		 fd;
	int		 id;
	enum phase	 ph;
	enum shape	 shape;
	size_t		 need;		/* R_FIXED: bytes */
	unsigned char	 out[MAXOUT];
	size_t		 olen, ooff;
	unsigned char	 in[MAXIN];
	size_t		 ilen;
	int64_t		 t0;		/* request start, ns */
	int		 cas_state;	/* value last swapped in: 0 "", 1 a, 2 b */
	int		 retries;
};

static const char *host = "127.0.0.1";
static int port;
static int v2 = 1;
static int server_pid;
static int epfd;
static struct sockaddr_in dst;
static struct conn *conns;
static int nconns;
static uint32_t *lat_us;
static size_t nlat, caplat;
static uint64_t nops;
static int measuring;
static enum op cur_op;
static int barrier_n, barrier_done, barrier_id;
static int storm_done, storm_retries;

/* Exit with a message: the load generator's own failures. */
static void __attribute__((noreturn, format(printf, 1, 2)))
die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "loadgen: ");
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	exit(1);
}

/* Nanoseconds on the monotonic clock. */
static int64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Server CPU time (utime + stime, all threads) in microseconds, or -1. */
static int64_t
server_cpu_us(void)
{
	char path[64], buf[2048], *p;
	unsigned long ut, st;
	FILE *f;
	size_t n;

	if (server_pid <= 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/stat", server_pid);
	if ((f = fopen(path, "re")) == NULL)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	if ((p = strrchr(buf, ')')) == NULL ||
	    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
	    &ut, &st) != 2)
		return -1;
	return (int64_t)(ut + st) * 1000000 / sysconf(_SC_CLK_TCK);
}

/* One counter of /proc/net/netstat's TcpExt table, or -1. */
static long long
netstat_counter(const char *name)
{
	char hdr[4096], val[4096], *hs, *vs, *h, *v;
	FILE *f;
	long long r = -1;

	if ((f = fopen("/proc/net/netstat", "re")) == NULL)
		return -1;
	while (fgets(hdr, sizeof(hdr), f) && fgets(val, sizeof(val), f)) {
		if (strncmp(hdr, "TcpExt:", 7) != 0)
			continue;
		h = strtok_r(hdr, " \n", &hs);
		v = strtok_r(val, " \n", &vs);
		while (h && v) {
			if (strcmp(h, name) == 0)
				r = atoll(v);
			h = strtok_r(NULL, " \n", &hs);
			v = strtok_r(NULL, " \n", &vs);
		}
	}
	fclose(f);
	return r;
}

/* Append bytes to a connection's output. */
static void
put(struct conn *c, const void *p, size_t n)
{
	if (c->olen + n > MAXOUT)
		die("request too large");
	memcpy(c->out + c->olen, p, n);
	c->olen += n;
}

/* Append a little-endian u64. */
static void
put_u64(struct conn *c, uint64_t v)
{
	unsigned char b[8];
	int i;

	for (i = 0; i < 8; i++)
		b[i] = (unsigned char)(v >> (8 * i));
	put(c, b, 8);
}

/* Append a length-prefixed string. */
static void
put_str(struct conn *c, const char *s)
{
	put_u64(c, strlen(s));
	put(c, s, strlen(s));
}

/* Append an opcode byte: the operation in this run's dialect. */
static void
put_op(struct conn *c, int v1code, int v2code)
{
	unsigned char b = (unsigned char)(v2 ? v2code : v1code);

	put(c, &b, 1);
}

/* Send pending output (non-blocking; EPOLLOUT finishes the rest). */
static void
flush_out(struct conn *c)
{
	ssize_t w;
	struct epoll_event ev;

	while (c->ooff < c->olen) {
		w = send(c->fd, c->out + c->ooff, c->olen - c->ooff,
		    MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w > 0) {
			c->ooff += (size_t)w;
			continue;
		}
		if (w == -1 && errno == EINTR)
			continue;
		if (w == -1 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			ev.events = EPOLLIN | EPOLLOUT;
			ev.data.ptr = c;
			epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev);
			return;
		}
		die("send to server: %s (conn %d)", strerror(errno), c->id);
	}
	c->olen = c->ooff = 0;
}

/* Start a request: reset input, set reply shape, send. */
static void
request(struct conn *c, enum phase ph, enum shape shape, size_t need)
{
	c->ph = ph;
	c->shape = shape;
	c->need = need;
	c->ilen = 0;
	flush_out(c);
}

/* Key names: per-connection keys for the ops runs. */
static void
key(char *buf, size_t len, const char *kind, int id)
{
	snprintf(buf, len, "/%s%d", kind, id);
}

/* Encode and send the next request of an ops run. */
static void
ops_next(struct conn *c)
{
	char k[32];
	static const char val[] = "0123456789abcdef";

	c->t0 = now_ns();
	switch (cur_op) {
	case OP_SET:
		key(k, sizeof(k), "s", c->id);
		put_op(c, V1_SET, V2_SET);
		put_str(c, k);
		put_str(c, val);
		put_op(c, V1_CHECK, V2_CHECK);
		put_u64(c, 0);
		request(c, PH_REPLY, R_FIXED, 1);
		break;
	case OP_GET:
		key(k, sizeof(k), "g", c->id);
		put_op(c, V1_GET, V2_GET);
		put_str(c, k);
		request(c, PH_REPLY, R_BYTES, 0);
		break;
	case OP_ADD:
		key(k, sizeof(k), "a", c->id);
		put_op(c, V1_ADD, V2_ADD);
		put_str(c, k);
		put_u64(c, 1);
		request(c, PH_REPLY, R_FIXED, 8);
		break;
	case OP_CAS:
		key(k, sizeof(k), "c", c->id);
		put_op(c, V1_COMPARE_SET, V2_COMPARE_SET);
		put_str(c, k);
		put_str(c, c->cas_state == 0 ? "" : c->cas_state == 1 ? "a" : "b");
		put_str(c, c->cas_state == 1 ? "b" : "a");
		request(c, PH_REPLY, R_BYTES, 0);
		break;
	case OP_TGET:
		key(k, sizeof(k), "g", c->id);
		put_op(c, V1_WAIT, V2_WAIT);
		put_u64(c, 1);
		put_str(c, k);
		request(c, PH_TGET_WAIT, R_FIXED, 1);
		break;
	}
}

/* Record one finished operation. */
static void
record(struct conn *c)
{
	int64_t us;

	if (!measuring)
		return;
	nops++;
	if (nlat == caplat) {
		caplat = caplat ? caplat * 2 : 65536;
		if ((lat_us = realloc(lat_us, caplat * sizeof(*lat_us))) == NULL)
			die("out of memory");
	}
	us = (now_ns() - c->t0) / 1000;
	lat_us[nlat++] = us > UINT32_MAX ? UINT32_MAX : (uint32_t)us;
}

/* Send the barrier's WAIT on its last-worker key. */
static void
barrier_wait(struct conn *c)
{
	char k[48];

	snprintf(k, sizeof(k), "/barrier%d:last", barrier_id);
	put_op(c, V1_WAIT, V2_WAIT);
	put_u64(c, 1);
	put_str(c, k);
	request(c, PH_BAR_WAIT, R_FIXED, 1);
}

/* Send the barrier's (or storm's) ADD. */
static void
send_add(struct conn *c, const char *k, enum phase ph)
{
	put_op(c, V1_ADD, V2_ADD);
	put_str(c, k);
	put_u64(c, 1);
	request(c, ph, R_FIXED, 8);
}

/* Little-endian i64 from the input buffer. */
static int64_t
get_i64(const unsigned char *b)
{
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = (v << 8) | b[i];
	return (int64_t)v;
}

/* A complete reply arrived: advance the connection. */
static void
on_reply(struct conn *c, enum mode mode)
{
	char k[48];

	switch (c->ph) {
	case PH_HELLO:
		if (mode == M_STORM) {
			send_add(c, "/storm", PH_REPLY);
			return;
		}
		c->ph = PH_READY;
		return;
	case PH_TGET_WAIT:
		if (c->in[0] != WIRE_WAIT_STOP)
			die("tget: WAIT reply %u", c->in[0]);
		key(k, sizeof(k), "g", c->id);
		put_op(c, V1_GET, V2_GET);
		put_str(c, k);
		request(c, PH_REPLY, R_BYTES, 0);
		return;
	case PH_BAR_ADD:
		if (get_i64(c->in) == barrier_n) {
			snprintf(k, sizeof(k), "/barrier%d:last", barrier_id);
			put_op(c, V1_SET, V2_SET);
			put_str(c, k);
			put_str(c, "1");
		}
		barrier_wait(c);
		return;
	case PH_BAR_WAIT:
		c->ph = PH_DONE;
		barrier_done++;
		return;
	case PH_REPLY:
		if (mode == M_STORM) {
			c->ph = PH_DONE;
			storm_done++;
			return;
		}
		if (cur_op == OP_CAS)
			c->cas_state = c->cas_state == 1 ? 2 : 1;
		record(c);
		c->ph = PH_READY;
		if (mode == M_OPS)
			ops_next(c);
		return;
	default:
		die("reply in phase %d", c->ph);
	}
}

/* Is the reply in c->in complete? */
static int
reply_complete(struct conn *c)
{
	if (c->shape == R_FIXED)
		return c->ilen >= c->need;
	if (c->ilen < 8)
		return 0;
	if (get_i64(c->in) > MAXIN - 8)
		die("reply value too long");
	return c->ilen >= 8 + (size_t)get_i64(c->in);
}

static void conn_start(struct conn *);

/* Drop a connection and start it again, counting the retry. */
static void
reconnect(struct conn *c)
{
	epoll_ctl(epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	c->retries++;
	storm_retries++;
	conn_start(c);
}

/* Read what the server sent; replies are never pipelined beyond one. */
static void
on_readable(struct conn *c, enum mode mode)
{
	ssize_t r;

	for (;;) {
		r = recv(c->fd, c->in + c->ilen, MAXIN - c->ilen, MSG_DONTWAIT);
		if (r == -1 && errno == EINTR)
			continue;
		if (r == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (r <= 0 && (mode == M_STORM || c->ph == PH_HELLO)) {
			/* a client the server dropped while connecting (or in
			 * a storm) connects again, as torch's client retries */
			reconnect(c);
			return;
		}
		if (r == 0)
			die("server closed connection %d (phase %d)", c->id, c->ph);
		if (r == -1)
			die("recv: %s (conn %d)", strerror(errno), c->id);
		c->ilen += (size_t)r;
		if (reply_complete(c))
			on_reply(c, mode);
	}
}

/* Begin a non-blocking connect from a rotating loopback source address. */
static void
conn_start(struct conn *c)
{
	struct sockaddr_in src;
	struct epoll_event ev;
	struct linger lg = { 1, 0 };
	int one = 1;

	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->fd == -1)
		die("socket: %s (raise ulimit -n)", strerror(errno));
	memset(&src, 0, sizeof(src));
	src.sin_family = AF_INET;
	src.sin_addr.s_addr = htonl(0x7f000002u + (uint32_t)(c->id % 250));
	if (dst.sin_addr.s_addr == htonl(INADDR_LOOPBACK) &&
	    bind(c->fd, (struct sockaddr *)&src, sizeof(src)) == -1)
		die("bind source: %s", strerror(errno));
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	c->ph = PH_CONNECT;
	c->ilen = c->olen = c->ooff = 0;
	if (connect(c->fd, (struct sockaddr *)&dst, sizeof(dst)) == -1 &&
	    errno != EINPROGRESS)
		die("connect: %s", strerror(errno));
	ev.events = EPOLLOUT;
	ev.data.ptr = c;
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, c->fd, &ev) == -1)
		die("epoll_ctl: %s", strerror(errno));
}

/* The connect finished: handshake (v2) or go straight on (v1). */
static void
on_connected(struct conn *c, enum mode mode)
{
	struct epoll_event ev;
	socklen_t len = sizeof(int);
	int e = 0;

	getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &e, &len);
	if (e != 0) {
		/* refused or reset under a storm: count and try again */
		reconnect(c);
		return;
	}
	ev.events = EPOLLIN;
	ev.data.ptr = c;
	epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev);
	if (v2) {
		unsigned char b = V2_VALIDATE;
		uint32_t nonce = (uint32_t)c->id + 1;
		unsigned char nb[4];
		int i;

		put(c, &b, 1);
		for (i = 0; i < 4; i++)
			nb[i] = (unsigned char)(WIRE_MAGIC >> (8 * i));
		put(c, nb, 4);
		b = V2_PING;
		put(c, &b, 1);
		for (i = 0; i < 4; i++)
			nb[i] = (unsigned char)(nonce >> (8 * i));
		put(c, nb, 4);
		request(c, PH_HELLO, R_FIXED, 4);
		return;
	}
	if (mode == M_STORM)
		send_add(c, "/storm", PH_REPLY);
	else
		c->ph = PH_READY;
}

/* Run the loop until done() or the deadline; -1 on deadline. */
static int
loop(enum mode mode, int (*done)(void), int64_t deadline_ns)
{
	struct epoll_event evs[256];
	struct conn *c;
	int n, i;

	while (!done()) {
		if (now_ns() > deadline_ns)
			return -1;
		n = epoll_wait(epfd, evs, 256, 50);
		if (n == -1 && errno != EINTR)
			die("epoll_wait: %s", strerror(errno));
		for (i = 0; i < n; i++) {
			c = evs[i].data.ptr;
			if (c->ph == PH_CONNECT) {
				on_connected(c, mode);
				continue;
			}
			if (evs[i].events & EPOLLOUT) {
				struct epoll_event ev = { EPOLLIN, { .ptr = c } };

				epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev);
				flush_out(c);
			}
			if (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR))
				on_readable(c, mode);
		}
	}
	return 0;
}

/* All connections connected (and handshaken). */
static int
all_ready(void)
{
	int i;

	for (i = 0; i < nconns; i++)
		if (conns[i].ph != PH_READY)
			return 0;
	return 1;
}

/* Never done: ops runs end on time. */
static int
never(void)
{
	return 0;
}

static int
barrier_finished(void)
{
	return barrier_done == nconns;
}

static int
storm_finished(void)
{
	return storm_done == nconns;
}

/* Open n connections and finish their handshakes. */
static void
open_conns(int n, enum mode mode)
{
	int i;

	nconns = n;
	/* one spare slot: the idle mode's healthy client */
	if ((conns = calloc((size_t)n + 1, sizeof(*conns))) == NULL)
		die("out of memory");
	for (i = 0; i < n; i++) {
		conns[i].id = i;
		conn_start(&conns[i]);
	}
	if (loop(mode, all_ready, now_ns() + (int64_t)RUN_DEADLINE_MS * 1000000) == -1)
		die("connections not ready after %d ms", RUN_DEADLINE_MS);
}

/* Close all connections (with RST, see the top comment). */
static void
close_conns(void)
{
	int i;

	for (i = 0; i < nconns; i++)
		close(conns[i].fd);
	free(conns);
	conns = NULL;
	nconns = 0;
}

/* Compare for qsort. */
static int
cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Percentile p (0-100) of the recorded latencies, in microseconds. */
static uint32_t
pct(double p)
{
	size_t i;

	if (nlat == 0)
		return 0;
	i = (size_t)(p / 100.0 * (double)(nlat - 1) + 0.5);
	return lat_us[i];
}

/* Put "prefix" keys the get/tget runs read. */
static void
preset_keys(const char *kind)
{
	int i;
	char k[32];

	for (i = 0; i < nconns; i++) {
		key(k, sizeof(k), kind, i);
		put_op(&conns[i], V1_SET, V2_SET);
		put_str(&conns[i], k);
		put_str(&conns[i], "0123456789abcdef");
		put_op(&conns[i], V1_CHECK, V2_CHECK);
		put_u64(&conns[i], 0);
		request(&conns[i], PH_REPLY, R_FIXED, 1);
	}
	measuring = 0;
	cur_op = OP_SET;
	if (loop(M_IDLE, all_ready, now_ns() + 60000000000LL) == -1)
		die("preset: replies missing after 60 s");
}

/* The ops mode: N connections, one request in flight each. */
static void
run_ops(const char *opname, int n, double secs)
{
	static const char *names[] = { "set", "get", "add", "cas", "tget" };
	int64_t t0, t1, c0, c1;
	int i;

	for (i = 0; i < 5 && strcmp(opname, names[i]) != 0; i++)
		;
	if (i == 5)
		die("unknown op %s", opname);
	open_conns(n, M_OPS);
	if (i == OP_GET || i == OP_TGET)
		preset_keys("g");
	cur_op = (enum op)i;
	/* warm up for 10% of the time, then measure */
	measuring = 0;
	for (i = 0; i < nconns; i++)
		ops_next(&conns[i]);
	loop(M_OPS, never, now_ns() + (int64_t)(secs * 0.1e9));
	measuring = 1;
	c0 = server_cpu_us();
	t0 = now_ns();
	loop(M_OPS, never, t0 + (int64_t)(secs * 1e9));
	t1 = now_ns();
	c1 = server_cpu_us();
	measuring = 0;
	qsort(lat_us, nlat, sizeof(*lat_us), cmp_u32);
	printf("mode=ops op=%s conns=%d secs=%.2f ops=%" PRIu64 " ops_per_s=%.0f "
	    "p50_us=%u p99_us=%u cpu_us=%" PRId64 " cpu_us_per_op=%.2f\n",
	    opname, n, (double)(t1 - t0) / 1e9, nops,
	    (double)nops / ((double)(t1 - t0) / 1e9), pct(50), pct(99),
	    c0 >= 0 ? c1 - c0 : -1,
	    c0 >= 0 && nops ? (double)(c1 - c0) / (double)nops : -1.0);
	close_conns();
}

/* The barrier mode: N connected clients ADD then WAIT. */
static void
run_barrier(int n)
{
	char k[32];
	int64_t t0, t1, c0, c1;
	int i, r;

	barrier_id = (int)(now_ns() % 1000000000);
	open_conns(n, M_BARRIER);
	barrier_n = n;
	barrier_done = 0;
	snprintf(k, sizeof(k), "/barrier%d", barrier_id);
	c0 = server_cpu_us();
	t0 = now_ns();
	for (i = 0; i < n; i++)
		send_add(&conns[i], k, PH_BAR_ADD);
	r = loop(M_BARRIER, barrier_finished, t0 + (int64_t)RUN_DEADLINE_MS * 1000000);
	t1 = now_ns();
	c1 = server_cpu_us();
	printf("mode=barrier conns=%d ok=%d released=%d ms=%.1f cpu_us=%" PRId64 "\n",
	    n, r == 0, barrier_done, (double)(t1 - t0) / 1e6,
	    c0 >= 0 ? c1 - c0 : -1);
	close_conns();
}

/* The storm mode: N clients connect at once, handshake, ADD. */
static void
run_storm(int n)
{
	int64_t t0, t1, c0, c1;
	long long ov0, ov1, dr0, dr1;
	int i, r;

	nconns = n;
	if ((conns = calloc((size_t)n, sizeof(*conns))) == NULL)
		die("out of memory");
	storm_done = storm_retries = 0;
	ov0 = netstat_counter("ListenOverflows");
	dr0 = netstat_counter("ListenDrops");
	c0 = server_cpu_us();
	t0 = now_ns();
	for (i = 0; i < n; i++) {
		conns[i].id = i;
		conn_start(&conns[i]);
	}
	r = loop(M_STORM, storm_finished, t0 + (int64_t)RUN_DEADLINE_MS * 1000000);
	t1 = now_ns();
	c1 = server_cpu_us();
	ov1 = netstat_counter("ListenOverflows");
	dr1 = netstat_counter("ListenDrops");
	printf("mode=storm conns=%d ok=%d done=%d ms=%.1f retries=%d "
	    "listen_overflows=%lld listen_drops=%lld cpu_us=%" PRId64 "\n",
	    n, r == 0, storm_done, (double)(t1 - t0) / 1e6, storm_retries,
	    ov1 - ov0, dr1 - dr0, c0 >= 0 ? c1 - c0 : -1);
	close_conns();
}

/* The idle mode: N idle connections, one healthy client's latency. */
static void
run_idle(int n, int ops)
{
	struct conn *h;
	int64_t t0, tc;
	int i, timeouts = 0;

	open_conns(n, M_IDLE);
	/* the healthy client: a fresh connection after the idle ones */
	h = &conns[n];
	memset(h, 0, sizeof(*h));
	h->id = n;
	nconns = n + 1;
	t0 = now_ns();
	conn_start(h);
	if (loop(M_IDLE, all_ready, t0 + 10000000000LL) == -1) {
		printf("mode=idle conns=%d connect_ms=timeout ops=0 timeouts=1\n", n);
		close_conns();
		return;
	}
	tc = now_ns() - t0;
	measuring = 1;
	cur_op = OP_ADD;
	for (i = 0; i < ops; i++) {
		h->t0 = now_ns();
		send_add(h, "/healthy", PH_REPLY);
		if (loop(M_IDLE, all_ready, h->t0 + 2000000000LL) == -1) {
			timeouts++;
			break;
		}
	}
	measuring = 0;
	qsort(lat_us, nlat, sizeof(*lat_us), cmp_u32);
	printf("mode=idle conns=%d connect_ms=%.2f ops=%zu timeouts=%d "
	    "p50_us=%u p99_us=%u max_us=%u\n", n, (double)tc / 1e6, nlat,
	    timeouts, pct(50), pct(99), nlat ? lat_us[nlat - 1] : 0);
	close_conns();
}

/* Raise the open-file limit to its hard maximum. */
static void
raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

int
main(int argc, char **argv)
{
	int ch;

	while ((ch = getopt(argc, argv, "h:p:d:P:")) != -1) {
		switch (ch) {
		case 'h': host = optarg; break;
		case 'p': port = atoi(optarg); break;
		case 'd': v2 = strcmp(optarg, "v1") != 0; break;
		case 'P': server_pid = atoi(optarg); break;
		default: die("bad option");
		}
	}
	argc -= optind;
	argv += optind;
	if (port <= 0 || argc < 2)
		die("usage: loadgen [-h HOST] -p PORT [-d v1|v2] [-P PID] "
		    "ops OP CONNS SECS | barrier N | storm N | idle N OPS");
	raise_nofile();
	memset(&dst, 0, sizeof(dst));
	dst.sin_family = AF_INET;
	dst.sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, host, &dst.sin_addr) != 1)
		die("host must be an IPv4 address: %s", host);
	if ((epfd = epoll_create1(EPOLL_CLOEXEC)) == -1)
		die("epoll_create1: %s", strerror(errno));
	if (strcmp(argv[0], "ops") == 0 && argc == 4)
		run_ops(argv[1], atoi(argv[2]), atof(argv[3]));
	else if (strcmp(argv[0], "barrier") == 0)
		run_barrier(atoi(argv[1]));
	else if (strcmp(argv[0], "storm") == 0)
		run_storm(atoi(argv[1]));
	else if (strcmp(argv[0], "idle") == 0 && argc == 3)
		run_idle(atoi(argv[1]), atoi(argv[2]));
	else
		die("unknown mode %s", argv[0]);
	return 0;
}

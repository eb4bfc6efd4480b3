/*
 * store.c: the libcgrun TCPStore client (torch 2.x dialect).  See
 * include/cgrun/store.h for the contract and worker-lib/wire.h for the
 * opcodes.
 *
 * Shape: a connection (struct store_conn, shared by a handle and its
 * prefixed views, reference counted) owns a non-blocking socket and a
 * request buffer.  Every operation encodes one request into that buffer,
 * sends it, and reads its fixed-shape reply with a deadline; reads never
 * consume more bytes than the reply being read, so no reply is ever split
 * between two calls.  Any failure other than a cancelled wait leaves the
 * byte stream in an unknown state, so the connection is closed and later
 * calls fail with ENOTCONN.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cgrun/store.h"
#include "util.h"
#include "wire.h"

/* Backoff between connection attempts: first delay, cap (milliseconds). */
#define STORE_BACKOFF_MIN_MS	10
#define STORE_BACKOFF_MAX_MS	1000

struct store_conn {
	int		 refs;
	int		 fd;		/* -1 once broken or closed */
	int		 timeout_ms;	/* store timeout */
	unsigned char	*buf;		/* request being encoded */
	size_t		 len;
	size_t		 cap;
	int		 oom;		/* the encoder failed to grow */
};

struct cgrun_store {
	struct store_conn *conn;
	char		*prefix;	/* NULL: none */
	char		 err[CGRUN_ERRLEN];
};

/* Milliseconds left until deadline, at least 0, at most INT32_MAX. */
static int
store_left_ms(int64_t deadline)
{
	int64_t left = deadline - cgrun_now_ms();

	if (left < 0)
		return 0;
	return left > INT32_MAX ? INT32_MAX : (int)left;
}

/* Record a message on the handle; errno is preserved. */
static void __attribute__((format(printf, 2, 3)))
store_err(struct cgrun_store *s, const char *fmt, ...)
{
	va_list ap;
	int saved = errno;

	va_start(ap, fmt);
	vsnprintf(s->err, sizeof(s->err), fmt, ap);
	va_end(ap);
	errno = saved;
}

/* Close the connection's socket: its byte stream can no longer be trusted. */
static void
store_break(struct store_conn *c)
{
	if (c->fd != -1) {
		close(c->fd);
		c->fd = -1;
	}
}

/* Fail with errno e and a message, breaking the connection. */
static int __attribute__((format(printf, 3, 4)))
store_fail(struct cgrun_store *s, int e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->err, sizeof(s->err), fmt, ap);
	va_end(ap);
	store_break(s->conn);
	errno = e;
	return -1;
}

/* Make sure the connection is usable before starting an operation. */
static int
store_ready(struct cgrun_store *s)
{
	if (s == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (s->conn->fd == -1) {
		store_err(s, "store connection is closed after an earlier error");
		errno = ENOTCONN;
		return -1;
	}
	s->conn->len = 0;
	s->conn->oom = 0;
	return 0;
}

/* Ensure room for n more bytes in the request buffer. */
static int
store_reserve(struct store_conn *c, size_t n)
{
	size_t cap;
	unsigned char *p;

	if (c->oom)
		return -1;
	if (c->cap - c->len >= n)
		return 0;
	cap = c->cap ? c->cap : 256;
	while (cap - c->len < n) {
		if (cap > SIZE_MAX / 2) {
			c->oom = 1;
			return -1;
		}
		cap *= 2;
	}
	if ((p = realloc(c->buf, cap)) == NULL) {
		c->oom = 1;
		return -1;
	}
	c->buf = p;
	c->cap = cap;
	return 0;
}

/* Append raw bytes to the request. */
static void
store_put(struct store_conn *c, const void *p, size_t n)
{
	if (n == 0 || store_reserve(c, n) == -1)
		return;
	memcpy(c->buf + c->len, p, n);
	c->len += n;
}

/* Append one opcode byte. */
static void
store_put_op(struct store_conn *c, uint8_t op)
{
	store_put(c, &op, 1);
}

/* Append a little-endian 64-bit integer. */
static void
store_put_u64(struct store_conn *c, uint64_t v)
{
	unsigned char b[8];
	int i;

	for (i = 0; i < 8; i++)
		b[i] = (unsigned char)(v >> (8 * i));
	store_put(c, b, sizeof(b));
}

/* Append a length-prefixed byte string. */
static void
store_put_bytes(struct store_conn *c, const void *p, size_t n)
{
	store_put_u64(c, n);
	store_put(c, p, n);
}

/* Length of the wire key of key on handle s: "/" [prefix "/"] key. */
static size_t
store_key_len(const struct cgrun_store *s, const char *key)
{
	size_t n = 1 + strlen(key);

	if (s->prefix != NULL)
		n += strlen(s->prefix) + 1;
	return n;
}

/* Check a key argument; -1 with EINVAL and a message if unusable. */
static int
store_check_key(struct cgrun_store *s, const char *key)
{
	if (key == NULL) {
		store_err(s, "key is NULL");
		errno = EINVAL;
		return -1;
	}
	if (store_key_len(s, key) > CGRUN_STORE_MAX_KEY) {
		store_err(s, "key longer than %u bytes", CGRUN_STORE_MAX_KEY);
		errno = EINVAL;
		return -1;
	}
	return 0;
}

/* Check a key array argument. */
static int
store_check_keys(struct cgrun_store *s, const char *const *keys, size_t n)
{
	size_t i;

	if (n > CGRUN_STORE_MAX_KEYS || (n > 0 && keys == NULL)) {
		store_err(s, "bad key list (%zu keys, at most %u)", n,
		    CGRUN_STORE_MAX_KEYS);
		errno = EINVAL;
		return -1;
	}
	for (i = 0; i < n; i++)
		if (store_check_key(s, keys[i]) == -1)
			return -1;
	return 0;
}

/* Check a value argument. */
static int
store_check_value(struct cgrun_store *s, const void *val, size_t len)
{
	if ((val == NULL && len > 0) || len > CGRUN_STORE_MAX_VALUE) {
		store_err(s, "bad value (%zu bytes, at most %u)", len,
		    CGRUN_STORE_MAX_VALUE);
		errno = EINVAL;
		return -1;
	}
	return 0;
}

/* Append a key as torch's client sends it (PrefixStore join, then "/"). */
static void
store_put_key(struct cgrun_store *s, const char *key)
{
	struct store_conn *c = s->conn;

	store_put_u64(c, store_key_len(s, key));
	store_put(c, "/", 1);
	if (s->prefix != NULL) {
		store_put(c, s->prefix, strlen(s->prefix));
		store_put(c, "/", 1);
	}
	store_put(c, key, strlen(key));
}

/* Append "u64 n" then n keys. */
static void
store_put_keys(struct cgrun_store *s, const char *const *keys, size_t n)
{
	size_t i;

	store_put_u64(s->conn, n);
	for (i = 0; i < n; i++)
		store_put_key(s, keys[i]);
}

/* Wait until fd is ready for events or the deadline passes (0 / -1). */
static int
store_poll(int fd, short events, int64_t deadline)
{
	struct pollfd pfd;
	int r;

	for (;;) {
		pfd.fd = fd;
		pfd.events = events;
		pfd.revents = 0;
		r = poll(&pfd, 1, store_left_ms(deadline));
		if (r > 0)
			return 0;
		if (r == 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		if (errno != EINTR)
			return -1;
	}
}

/* Send n bytes from p before the deadline. */
static int
store_send_raw(int fd, const void *p, size_t n, int64_t deadline)
{
	const unsigned char *b = p;
	ssize_t w;

	while (n > 0) {
		w = send(fd, b, n, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w > 0) {
			b += w;
			n -= (size_t)w;
			continue;
		}
		if (w == -1 && errno == EINTR)
			continue;
		if (w == -1 && errno != EAGAIN && errno != EWOULDBLOCK)
			return -1;
		if (store_poll(fd, POLLOUT, deadline) == -1)
			return -1;
	}
	return 0;
}

/* Receive exactly n bytes into p before the deadline (EOF: ECONNRESET). */
static int
store_recv_raw(int fd, void *p, size_t n, int64_t deadline)
{
	unsigned char *b = p;
	ssize_t r;

	while (n > 0) {
		r = recv(fd, b, n, MSG_DONTWAIT);
		if (r > 0) {
			b += r;
			n -= (size_t)r;
			continue;
		}
		if (r == 0) {
			errno = ECONNRESET;
			return -1;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -1;
		if (store_poll(fd, POLLIN, deadline) == -1)
			return -1;
	}
	return 0;
}

/* Deadline of a reply: now plus the store timeout. */
static int64_t
store_deadline(const struct cgrun_store *s)
{
	return cgrun_now_ms() + s->conn->timeout_ms;
}

/* Send the encoded request; on failure break the connection. */
static int
store_flush(struct cgrun_store *s, const char *what)
{
	struct store_conn *c = s->conn;

	if (c->oom) {
		store_err(s, "%s: out of memory encoding the request", what);
		errno = ENOMEM;
		return -1;
	}
	if (store_send_raw(c->fd, c->buf, c->len, store_deadline(s)) == -1)
		return store_fail(s, errno, "%s: sending request: %s", what,
		    strerror(errno));
	return 0;
}

/* Read n reply bytes within the store timeout; on failure break. */
static int
store_read(struct cgrun_store *s, void *p, size_t n, const char *what)
{
	if (store_recv_raw(s->conn->fd, p, n, store_deadline(s)) == -1) {
		if (errno == ECONNRESET)
			return store_fail(s, ECONNRESET, "%s: server closed "
			    "the connection (missing key or rejected request)",
			    what);
		return store_fail(s, errno, "%s: reading reply: %s", what,
		    strerror(errno));
	}
	return 0;
}

/* Decode a little-endian 64-bit integer. */
static uint64_t
store_get_u64(const unsigned char *b)
{
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = (v << 8) | b[i];
	return v;
}

/* Read an i64 reply. */
static int
store_read_i64(struct cgrun_store *s, int64_t *v, const char *what)
{
	unsigned char b[8];

	if (store_read(s, b, sizeof(b), what) == -1)
		return -1;
	*v = (int64_t)store_get_u64(b);
	return 0;
}

/* Read a length-prefixed value reply into a malloc'd, NUL-ended copy. */
static int
store_read_value(struct cgrun_store *s, void **val, size_t *len,
    const char *what)
{
	unsigned char b[8];
	uint64_t n;
	char *p;

	if (store_read(s, b, sizeof(b), what) == -1)
		return -1;
	n = store_get_u64(b);
	if (n > CGRUN_STORE_MAX_VALUE)
		return store_fail(s, EPROTO, "%s: reply claims a %" PRIu64
		    "-byte value (limit %u)", what, n, CGRUN_STORE_MAX_VALUE);
	if ((p = malloc((size_t)n + 1)) == NULL)
		return store_fail(s, ENOMEM, "%s: out of memory for a %"
		    PRIu64 "-byte value", what, n);
	if (store_read(s, p, (size_t)n, what) == -1) {
		free(p);
		return -1;
	}
	p[n] = '\0';
	*val = p;
	*len = (size_t)n;
	return 0;
}

/* Read one status byte and require it to be one of two values. */
static int
store_read_code(struct cgrun_store *s, uint8_t *code, const char *what)
{
	if (store_read(s, code, 1, what) == -1)
		return -1;
	if (*code > 1)
		return store_fail(s, EPROTO, "%s: unexpected reply byte 0x%02x",
		    what, *code);
	return 0;
}

/*
 * Finish a wait whose deadline passed: CANCEL_WAIT, then accept WAIT_CANCELED
 * or a late STOP_WAITING followed by WAIT_CANCELED, as torch's client does.
 */
static int
store_cancel_wait(struct cgrun_store *s, size_t n, int timeout_ms)
{
	uint8_t op = V2_CANCEL_WAIT, code;

	if (store_send_raw(s->conn->fd, &op, 1, store_deadline(s)) == -1)
		return store_fail(s, errno, "wait: sending cancel: %s",
		    strerror(errno));
	if (store_read_code(s, &code, "wait cancel") == -1)
		return -1;
	if (code == WIRE_WAIT_STOP) {
		if (store_read_code(s, &code, "wait cancel") == -1)
			return -1;
		if (code != WIRE_WAIT_CANCELED)
			return store_fail(s, EPROTO, "wait cancel: got two "
			    "STOP_WAITING replies");
	}
	store_err(s, "wait timeout after %dms for %zu key(s)", timeout_ms, n);
	errno = ETIMEDOUT;
	return -1;
}

/* Send WAIT for keys and block until STOP_WAITING or the timeout. */
static int
store_wait_keys(struct cgrun_store *s, const char *const *keys, size_t n,
    int timeout_ms)
{
	struct store_conn *c = s->conn;
	int64_t deadline;
	uint8_t code;

	store_put_op(c, V2_WAIT);
	store_put_keys(s, keys, n);
	if (store_flush(s, "wait") == -1)
		return -1;
	deadline = cgrun_now_ms() + timeout_ms;
	if (store_recv_raw(c->fd, &code, 1, deadline) == -1) {
		if (errno == ETIMEDOUT)
			return store_cancel_wait(s, n, timeout_ms);
		return store_fail(s, errno, "wait: %s", errno == ECONNRESET ?
		    "server closed the connection" : strerror(errno));
	}
	if (code != WIRE_WAIT_STOP)
		return store_fail(s, EPROTO, "wait: unexpected reply byte 0x%02x",
		    code);
	c->len = 0;
	return 0;
}

/* Next pseudo-random 32 bits from *seed (xorshift; for jitter only). */
static uint32_t
store_rand(uint32_t *seed)
{
	uint32_t x = *seed ? *seed : 0x9e3779b9u;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return *seed = x;
}

/* Wait for a non-blocking connect to finish before the deadline. */
static int
store_connect_fd(const struct addrinfo *ai, int64_t deadline)
{
	int fd, e, one = 1;
	socklen_t elen = sizeof(e);

	fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC |
	    SOCK_NONBLOCK, ai->ai_protocol);
	if (fd == -1)
		return -1;
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) == -1) {
		if (errno != EINPROGRESS)
			goto fail;
		if (store_poll(fd, POLLOUT, deadline) == -1)
			goto fail;
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &elen) == -1)
			goto fail;
		if (e != 0) {
			errno = e;
			goto fail;
		}
	}
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
fail:
	e = errno;
	close(fd);
	errno = e;
	return -1;
}

/* VALIDATE + PING on a fresh socket; the echoed nonce must match. */
static int
store_handshake(int fd, uint32_t nonce, int64_t deadline)
{
	unsigned char m[10], r[4];
	uint32_t magic = WIRE_MAGIC;
	int i;

	m[0] = V2_VALIDATE;
	m[5] = V2_PING;
	for (i = 0; i < 4; i++) {
		m[1 + i] = (unsigned char)(magic >> (8 * i));
		m[6 + i] = (unsigned char)(nonce >> (8 * i));
	}
	if (store_send_raw(fd, m, sizeof(m), deadline) == -1 ||
	    store_recv_raw(fd, r, sizeof(r), deadline) == -1)
		return -1;
	if (memcmp(r, m + 6, 4) != 0) {
		errno = EPROTO;
		return -1;
	}
	return 0;
}

/* One connection attempt over every resolved address; fd or -1. */
static int
store_try_connect(const struct addrinfo *res, uint32_t nonce,
    int64_t deadline)
{
	const struct addrinfo *ai;
	int fd, e = ECONNREFUSED;

	for (ai = res; ai != NULL; ai = ai->ai_next) {
		if ((fd = store_connect_fd(ai, deadline)) == -1) {
			e = errno;
			continue;
		}
		if (store_handshake(fd, nonce, deadline) == 0)
			return fd;
		e = errno;
		close(fd);
	}
	errno = e;
	return -1;
}

/* Sleep for about delay ms (50-100% jitter), not past the deadline. */
static void
store_backoff(int delay, uint32_t *seed, int64_t deadline)
{
	struct timespec ts;
	int ms = delay / 2 + (int)(store_rand(seed) % (uint32_t)(delay / 2 + 1));
	int left = store_left_ms(deadline);

	if (ms > left)
		ms = left;
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (long)(ms % 1000) * 1000000;
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

/* Resolve host:port for TCP; 0, or -1 with err filled. */
static int
store_resolve(const char *host, int port, struct addrinfo **res, char *err)
{
	struct addrinfo hints;
	char serv[16];
	int r;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	/* No AI_ADDRCONFIG: in a namespace with only loopback it would
	 * hide 127.0.0.1 itself. */
	snprintf(serv, sizeof(serv), "%d", port);
	r = getaddrinfo(host, serv, &hints, res);
	if (r != 0) {
		if (err != NULL)
			snprintf(err, CGRUN_ERRLEN, "store %s:%d: cannot "
			    "resolve: %s", host, port, gai_strerror(r));
		errno = r == EAI_SYSTEM ? errno : (r == EAI_MEMORY ? ENOMEM :
		    (r == EAI_AGAIN ? EAGAIN : ENOENT));
		return -1;
	}
	return 0;
}

/* Connect with retries until the deadline; fd or -1 with err filled. */
static int
store_dial(const char *host, int port, int timeout_ms, char *err)
{
	struct addrinfo *res = NULL;
	int64_t deadline = cgrun_now_ms() + timeout_ms;
	uint32_t seed = (uint32_t)getpid() ^ (uint32_t)cgrun_now_ms() ^
	    (uint32_t)(uintptr_t)&res;
	int fd, delay = STORE_BACKOFF_MIN_MS, attempts = 0;

	for (;;) {
		if (res == NULL && store_resolve(host, port, &res, err) == -1) {
			if (errno != EAGAIN || store_left_ms(deadline) == 0)
				return -1;
		} else {
			attempts++;
			fd = store_try_connect(res, store_rand(&seed), deadline);
			if (fd != -1) {
				freeaddrinfo(res);
				return fd;
			}
			if (err != NULL)
				snprintf(err, CGRUN_ERRLEN, "store %s:%d: no "
				    "connection after %d attempt(s) in %dms: %s",
				    host, port, attempts, timeout_ms,
				    strerror(errno));
		}
		if (store_left_ms(deadline) == 0)
			break;
		store_backoff(delay, &seed, deadline);
		delay = delay * 2 > STORE_BACKOFF_MAX_MS ?
		    STORE_BACKOFF_MAX_MS : delay * 2;
	}
	if (res != NULL)
		freeaddrinfo(res);
	errno = ETIMEDOUT;
	return -1;
}

/* Connect to host:port, 2.x handshake, retrying until timeout_ms. */
CGRUN_EXPORT struct cgrun_store *
cgrun_store_connect(const char *host, int port, int timeout_ms, char *err)
{
	struct cgrun_store *s;
	int fd;

	if (err != NULL)
		err[0] = '\0';
	if (host == NULL || port <= 0 || port > 65535 || timeout_ms <= 0) {
		if (err != NULL)
			snprintf(err, CGRUN_ERRLEN, "store: bad address or "
			    "timeout (port %d, timeout %dms)", port, timeout_ms);
		errno = EINVAL;
		return NULL;
	}
	if ((s = calloc(1, sizeof(*s))) == NULL ||
	    (s->conn = calloc(1, sizeof(*s->conn))) == NULL) {
		free(s);
		if (err != NULL)
			snprintf(err, CGRUN_ERRLEN, "store: out of memory");
		errno = ENOMEM;
		return NULL;
	}
	if ((fd = store_dial(host, port, timeout_ms, err)) == -1) {
		int e = errno;

		free(s->conn);
		free(s);
		errno = e;
		return NULL;
	}
	s->conn->refs = 1;
	s->conn->fd = fd;
	s->conn->timeout_ms = timeout_ms;
	return s;
}

/* Release a handle and, with the last handle, the connection. */
CGRUN_EXPORT void
cgrun_store_free(struct cgrun_store *s)
{
	int saved = errno;

	if (s == NULL)
		return;
	if (--s->conn->refs == 0) {
		store_break(s->conn);
		free(s->conn->buf);
		free(s->conn);
	}
	free(s->prefix);
	free(s);
	errno = saved;
}

/* Replace this handle's prefix. */
CGRUN_EXPORT int
cgrun_store_set_prefix(struct cgrun_store *s, const char *prefix)
{
	char *p = NULL;

	if (s == NULL || (prefix != NULL &&
	    strlen(prefix) >= CGRUN_STORE_MAX_KEY)) {
		errno = EINVAL;
		return -1;
	}
	if (prefix != NULL && (p = strdup(prefix)) == NULL)
		return -1;
	free(s->prefix);
	s->prefix = p;
	return 0;
}

/* A new handle on the parent's connection, PrefixStore(prefix, parent). */
CGRUN_EXPORT struct cgrun_store *
cgrun_store_prefixed(struct cgrun_store *parent, const char *prefix)
{
	struct cgrun_store *s;
	size_t n;

	if (parent == NULL || prefix == NULL) {
		errno = EINVAL;
		return NULL;
	}
	n = strlen(prefix) + 1;
	if (parent->prefix != NULL)
		n += strlen(parent->prefix) + 1;
	if (n > CGRUN_STORE_MAX_KEY) {
		store_err(parent, "prefix longer than %u bytes",
		    CGRUN_STORE_MAX_KEY);
		errno = EINVAL;
		return NULL;
	}
	if ((s = calloc(1, sizeof(*s))) == NULL ||
	    (s->prefix = malloc(n)) == NULL) {
		free(s);
		errno = ENOMEM;
		return NULL;
	}
	if (parent->prefix != NULL)
		snprintf(s->prefix, n, "%s/%s", parent->prefix, prefix);
	else
		memcpy(s->prefix, prefix, n);
	s->conn = parent->conn;
	s->conn->refs++;
	return s;
}

/* The handle's prefix, or NULL. */
CGRUN_EXPORT const char *
cgrun_store_prefix(const struct cgrun_store *s)
{
	return s != NULL ? s->prefix : NULL;
}

/* Set the store timeout. */
CGRUN_EXPORT int
cgrun_store_set_timeout(struct cgrun_store *s, int timeout_ms)
{
	if (s == NULL || timeout_ms <= 0) {
		errno = EINVAL;
		return -1;
	}
	s->conn->timeout_ms = timeout_ms;
	return 0;
}

/* The store timeout. */
CGRUN_EXPORT int
cgrun_store_timeout(const struct cgrun_store *s)
{
	return s != NULL ? s->conn->timeout_ms : -1;
}

/* Text of the last failure on this handle. */
CGRUN_EXPORT const char *
cgrun_store_errmsg(const struct cgrun_store *s)
{
	return s != NULL ? s->err : "no store handle";
}

/* SET: no reply. */
CGRUN_EXPORT int
cgrun_store_set(struct cgrun_store *s, const char *key, const void *val,
    size_t len)
{
	if (store_ready(s) == -1 || store_check_key(s, key) == -1 ||
	    store_check_value(s, val, len) == -1)
		return -1;
	store_put_op(s->conn, V2_SET);
	store_put_key(s, key);
	store_put_bytes(s->conn, val, len);
	return store_flush(s, "set");
}

/* WAIT [key] with the store timeout, then GET. */
CGRUN_EXPORT int
cgrun_store_get(struct cgrun_store *s, const char *key, void **val,
    size_t *len)
{
	const char *keys[1] = { key };

	if (val == NULL || len == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (store_ready(s) == -1 || store_check_key(s, key) == -1)
		return -1;
	if (store_wait_keys(s, keys, 1, s->conn->timeout_ms) == -1)
		return -1;
	store_put_op(s->conn, V2_GET);
	store_put_key(s, key);
	if (store_flush(s, "get") == -1)
		return -1;
	return store_read_value(s, val, len, "get");
}

/* ADD: reply is the new value. */
CGRUN_EXPORT int
cgrun_store_add(struct cgrun_store *s, const char *key, int64_t delta,
    int64_t *result)
{
	int64_t v;

	if (store_ready(s) == -1 || store_check_key(s, key) == -1)
		return -1;
	store_put_op(s->conn, V2_ADD);
	store_put_key(s, key);
	store_put_u64(s->conn, (uint64_t)delta);
	if (store_flush(s, "add") == -1 || store_read_i64(s, &v, "add") == -1)
		return -1;
	if (result != NULL)
		*result = v;
	return 0;
}

/* COMPARE_SET: reply is a value (see store.h for which). */
CGRUN_EXPORT int
cgrun_store_compare_set(struct cgrun_store *s, const char *key,
    const void *expected, size_t elen, const void *desired, size_t dlen,
    void **val, size_t *len)
{
	void *v;
	size_t n;

	if (store_ready(s) == -1 || store_check_key(s, key) == -1 ||
	    store_check_value(s, expected, elen) == -1 ||
	    store_check_value(s, desired, dlen) == -1)
		return -1;
	store_put_op(s->conn, V2_COMPARE_SET);
	store_put_key(s, key);
	store_put_bytes(s->conn, expected, elen);
	store_put_bytes(s->conn, desired, dlen);
	if (store_flush(s, "compare_set") == -1 ||
	    store_read_value(s, &v, &n, "compare_set") == -1)
		return -1;
	if (val != NULL)
		*val = v;
	else
		free(v);
	if (len != NULL)
		*len = n;
	return 0;
}

/* CHECK: 1 ready, 0 not. */
CGRUN_EXPORT int
cgrun_store_check(struct cgrun_store *s, const char *const *keys, size_t n)
{
	uint8_t code;

	if (store_ready(s) == -1 || store_check_keys(s, keys, n) == -1)
		return -1;
	store_put_op(s->conn, V2_CHECK);
	store_put_keys(s, keys, n);
	if (store_flush(s, "check") == -1 ||
	    store_read_code(s, &code, "check") == -1)
		return -1;
	return code == WIRE_CHECK_READY;
}

/* WAIT with a timeout; cancels on expiry. */
CGRUN_EXPORT int
cgrun_store_wait(struct cgrun_store *s, const char *const *keys, size_t n,
    int timeout_ms)
{
	if (store_ready(s) == -1 || store_check_keys(s, keys, n) == -1)
		return -1;
	if (timeout_ms <= 0)
		timeout_ms = s->conn->timeout_ms;
	return store_wait_keys(s, keys, n, timeout_ms);
}

/* DELETE_KEY: 1 deleted, 0 absent. */
CGRUN_EXPORT int
cgrun_store_delete(struct cgrun_store *s, const char *key)
{
	int64_t v;

	if (store_ready(s) == -1 || store_check_key(s, key) == -1)
		return -1;
	store_put_op(s->conn, V2_DELETE_KEY);
	store_put_key(s, key);
	if (store_flush(s, "delete") == -1 ||
	    store_read_i64(s, &v, "delete") == -1)
		return -1;
	return v == 1;
}

/* GETNUMKEYS. */
CGRUN_EXPORT int
cgrun_store_num_keys(struct cgrun_store *s, int64_t *n)
{
	if (n == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (store_ready(s) == -1)
		return -1;
	store_put_op(s->conn, V2_GETNUMKEYS);
	if (store_flush(s, "num_keys") == -1)
		return -1;
	return store_read_i64(s, n, "num_keys");
}

/* APPEND: no reply. */
CGRUN_EXPORT int
cgrun_store_append(struct cgrun_store *s, const char *key, const void *val,
    size_t len)
{
	if (store_ready(s) == -1 || store_check_key(s, key) == -1 ||
	    store_check_value(s, val, len) == -1)
		return -1;
	store_put_op(s->conn, V2_APPEND);
	store_put_key(s, key);
	store_put_bytes(s->conn, val, len);
	return store_flush(s, "append");
}

/* WAIT for all keys, then MULTI_GET; all or nothing. */
CGRUN_EXPORT int
cgrun_store_multi_get(struct cgrun_store *s, const char *const *keys,
    size_t n, void **vals, size_t *lens)
{
	size_t i;

	if (n > 0 && (vals == NULL || lens == NULL)) {
		errno = EINVAL;
		return -1;
	}
	if (store_ready(s) == -1 || store_check_keys(s, keys, n) == -1)
		return -1;
	if (store_wait_keys(s, keys, n, s->conn->timeout_ms) == -1)
		return -1;
	store_put_op(s->conn, V2_MULTI_GET);
	store_put_keys(s, keys, n);
	if (store_flush(s, "multi_get") == -1)
		return -1;
	for (i = 0; i < n; i++) {
		if (store_read_value(s, &vals[i], &lens[i], "multi_get") == -1) {
			while (i > 0) {
				free(vals[--i]);
				vals[i] = NULL;
			}
			return -1;
		}
	}
	return 0;
}

/* MULTI_SET: no reply. */
CGRUN_EXPORT int
cgrun_store_multi_set(struct cgrun_store *s, const char *const *keys,
    const void *const *vals, const size_t *lens, size_t n)
{
	size_t i;

	if (store_ready(s) == -1 || store_check_keys(s, keys, n) == -1)
		return -1;
	if (n > 0 && (vals == NULL || lens == NULL)) {
		errno = EINVAL;
		return -1;
	}
	for (i = 0; i < n; i++)
		if (store_check_value(s, vals[i], lens[i]) == -1)
			return -1;
	store_put_op(s->conn, V2_MULTI_SET);
	store_put_u64(s->conn, n);
	for (i = 0; i < n; i++) {
		store_put_key(s, keys[i]);
		store_put_bytes(s->conn, vals[i], lens[i]);
	}
	return store_flush(s, "multi_set");
}

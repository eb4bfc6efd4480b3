/*
 * client_call.c: one call of the store client on a handle (client_call.h):
 * argument checks, a request encoded by the shared codec and sent with the
 * store timeout, its reply read with the same deadline, and WAIT with
 * torch's cancellation.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client_call.h"
#include "client_io.h"
#include "le.h"
#include "monotime.h"

/* Initial size of a connection's request buffer. */
#define CLIENT_BUF_MIN		256

/* Record a message on the handle; errno is preserved. */
void
client_call_err(struct cgrun_store *s, const char *fmt, ...)
{
	va_list ap;
	int saved = errno;

	va_start(ap, fmt);
	vsnprintf(s->err, sizeof(s->err), fmt, ap);
	va_end(ap);
	errno = saved;
}

/* Close the connection's socket: its byte stream can no longer be trusted. */
void
client_call_break(struct store_conn *c)
{
	if (c->fd != -1) {
		close(c->fd);
		c->fd = -1;
	}
}

/* Fail with errno e and a message, breaking the connection. */
static int __attribute__((format(printf, 3, 4)))
client_call_fail(struct cgrun_store *s, int e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->err, sizeof(s->err), fmt, ap);
	va_end(ap);
	client_call_break(s->conn);
	errno = e;
	return -1;
}

/* Make sure the connection is usable before starting an operation. */
int
client_call_ready(struct cgrun_store *s)
{
	if (s == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (s->conn->fd == -1) {
		client_call_err(s, "store connection is closed after an "
		    "earlier error");
		errno = ENOTCONN;
		return -1;
	}
	return 0;
}

/* Length of the wire key of key on handle s: "/" [prefix "/"] key. */
static size_t
client_call_key_len(const struct cgrun_store *s, const char *key)
{
	size_t n = 1 + strlen(key);

	if (s->prefix != NULL)
		n += strlen(s->prefix) + 1;
	return n;
}

/* Check a key argument; -1 with EINVAL and a message if unusable. */
int
client_call_check_key(struct cgrun_store *s, const char *key)
{
	if (key == NULL) {
		client_call_err(s, "key is NULL");
		errno = EINVAL;
		return -1;
	}
	if (client_call_key_len(s, key) > CGRUN_STORE_MAX_KEY) {
		client_call_err(s, "key longer than %u bytes",
		    CGRUN_STORE_MAX_KEY);
		errno = EINVAL;
		return -1;
	}
	return 0;
}

/* Check a key array argument. */
int
client_call_check_keys(struct cgrun_store *s, const char *const *keys,
    size_t n)
{
	size_t i;

	if (n > CGRUN_STORE_MAX_KEYS || (n > 0 && keys == NULL)) {
		client_call_err(s, "bad key list (%zu keys, at most %u)", n,
		    CGRUN_STORE_MAX_KEYS);
		errno = EINVAL;
		return -1;
	}
	for (i = 0; i < n; i++)
		if (client_call_check_key(s, keys[i]) == -1)
			return -1;
	return 0;
}

/* Check a value argument. */
int
client_call_check_value(struct cgrun_store *s, const void *val, size_t len)
{
	if ((val == NULL && len > 0) || len > CGRUN_STORE_MAX_VALUE) {
		client_call_err(s, "bad value (%zu bytes, at most %u)", len,
		    CGRUN_STORE_MAX_VALUE);
		errno = EINVAL;
		return -1;
	}
	return 0;
}

/* Grow the request buffer to at least n bytes (doubling); 0 or -1. */
static int
client_call_reserve(struct store_conn *c, size_t n)
{
	size_t cap = c->cap ? c->cap : CLIENT_BUF_MIN;
	uint8_t *p;

	while (cap < n) {
		if (cap > SIZE_MAX / 2)
			return -1;
		cap *= 2;
	}
	if ((p = realloc(c->buf, cap)) == NULL)
		return -1;
	c->buf = p;
	c->cap = cap;
	return 0;
}

/* Deadline of a reply: now plus the store timeout. */
static int64_t
client_call_deadline(const struct cgrun_store *s)
{
	return monotime_ms() + s->conn->timeout_ms;
}

/* Encode r with the handle's prefix (2.x dialect) and send it. */
int
client_call_send(struct cgrun_store *s, struct wire_request *r,
    const char *what)
{
	struct store_conn *c = s->conn;
	size_t n;

	r->prefix = s->prefix;
	n = wire_encode(WIRE_V2, r, c->buf, c->cap);
	if (n > c->cap) {
		if (client_call_reserve(c, n) == -1) {
			client_call_err(s, "%s: out of memory encoding the "
			    "request", what);
			errno = ENOMEM;
			return -1;
		}
		n = wire_encode(WIRE_V2, r, c->buf, c->cap);
	}
	if (client_io_send(c->fd, c->buf, n, client_call_deadline(s)) == -1)
		return client_call_fail(s, errno, "%s: sending request: %s",
		    what, strerror(errno));
	return 0;
}

/* Read n reply bytes within the store timeout; on failure break. */
static int
client_call_read(struct cgrun_store *s, void *p, size_t n, const char *what)
{
	if (client_io_recv(s->conn->fd, p, n, client_call_deadline(s)) == -1) {
		if (errno == ECONNRESET)
			return client_call_fail(s, ECONNRESET, "%s: server "
			    "closed the connection (missing key or rejected "
			    "request)", what);
		return client_call_fail(s, errno, "%s: reading reply: %s",
		    what, strerror(errno));
	}
	return 0;
}

/* Read an i64 reply. */
int
client_call_read_i64(struct cgrun_store *s, int64_t *v, const char *what)
{
	uint8_t b[8];

	if (client_call_read(s, b, sizeof(b), what) == -1)
		return -1;
	*v = (int64_t)le_get_u64(b);
	return 0;
}

/* Read a length-prefixed value reply into a malloc'd, NUL-ended copy. */
int
client_call_read_value(struct cgrun_store *s, void **val, size_t *len,
    const char *what)
{
	uint8_t b[8];
	uint64_t n;
	char *p;

	if (client_call_read(s, b, sizeof(b), what) == -1)
		return -1;
	n = le_get_u64(b);
	if (n > CGRUN_STORE_MAX_VALUE)
		return client_call_fail(s, EPROTO, "%s: reply claims a %"
		    PRIu64 "-byte value (limit %u)", what, n,
		    CGRUN_STORE_MAX_VALUE);
	if ((p = malloc((size_t)n + 1)) == NULL)
		return client_call_fail(s, ENOMEM, "%s: out of memory for a %"
		    PRIu64 "-byte value", what, n);
	if (client_call_read(s, p, (size_t)n, what) == -1) {
		free(p);
		return -1;
	}
	p[n] = '\0';
	*val = p;
	*len = (size_t)n;
	return 0;
}

/* Read one status byte and require it to be one of two values. */
int
client_call_read_code(struct cgrun_store *s, uint8_t *code, const char *what)
{
	if (client_call_read(s, code, 1, what) == -1)
		return -1;
	if (*code > 1)
		return client_call_fail(s, EPROTO, "%s: unexpected reply byte "
		    "0x%02x", what, *code);
	return 0;
}

/*
 * Finish a wait whose deadline passed: CANCEL_WAIT, then accept WAIT_CANCELED
 * or a late STOP_WAITING followed by WAIT_CANCELED, as torch's client does.
 */
static int
client_call_cancel_wait(struct cgrun_store *s, size_t n, int timeout_ms)
{
	struct wire_request r = { .op = WOP_CANCEL_WAIT };
	uint8_t code;

	if (client_call_send(s, &r, "wait cancel") == -1)
		return -1;
	if (client_call_read_code(s, &code, "wait cancel") == -1)
		return -1;
	if (code == WIRE_WAIT_STOP) {
		if (client_call_read_code(s, &code, "wait cancel") == -1)
			return -1;
		if (code != WIRE_WAIT_CANCELED)
			return client_call_fail(s, EPROTO, "wait cancel: got "
			    "two STOP_WAITING replies");
	}
	client_call_err(s, "wait timeout after %dms for %zu key(s)",
	    timeout_ms, n);
	errno = ETIMEDOUT;
	return -1;
}

/* Send WAIT for keys and block until STOP_WAITING or the timeout. */
int
client_call_wait(struct cgrun_store *s, const char *const *keys, size_t n,
    int timeout_ms)
{
	struct wire_request r = { .op = WOP_WAIT, .keys = keys, .count = n };
	int64_t deadline;
	uint8_t code;

	if (client_call_send(s, &r, "wait") == -1)
		return -1;
	deadline = monotime_ms() + timeout_ms;
	if (client_io_recv(s->conn->fd, &code, 1, deadline) == -1) {
		if (errno == ETIMEDOUT)
			return client_call_cancel_wait(s, n, timeout_ms);
		return client_call_fail(s, errno, "wait: %s",
		    errno == ECONNRESET ? "server closed the connection" :
		    strerror(errno));
	}
	if (code != WIRE_WAIT_STOP)
		return client_call_fail(s, EPROTO, "wait: unexpected reply "
		    "byte 0x%02x", code);
	return 0;
}

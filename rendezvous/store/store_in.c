/*
 * store_in.c: the store server's input (store_impl.h).  Each connection
 * reads into one shared scratch buffer; complete requests are served
 * straight from it and only a partial request's bytes are kept per
 * connection, so idle connections cost no buffer memory.  The first bytes
 * choose the dialect (torch 1.13, torch 2.x, native): a NEW connection
 * becomes TCPSTORE or NATIVE here.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "log.h"
#include "store.h"
#include "store_impl.h"

/* Hand native bytes to the rendezvous engine. */
static void
store_in_native(struct store_conn *c, const uint8_t *p, size_t len)
{
	struct store *st = c->st;

	if (len > 0 && evbuffer_add(c->nin, p, len) == -1) {
		store_conn_drop(c, LOG_LVL_WARN, "out of memory for input");
		return;
	}
	if (evbuffer_get_length(c->nin) > st->lim.max_inbuf) {
		store_conn_drop(c, LOG_LVL_WARN, "native input over max-input "
		    "buffered=%zu", evbuffer_get_length(c->nin));
		return;
	}
	if (st->native.on_input(c, c->nin, st->native_arg) == -1)
		store_conn_drop(c, LOG_LVL_INFO, "closed by rendezvous engine");
}

/* Switch c to the native protocol with the bytes after the magic. */
static void
store_in_go_native(struct store_conn *c, const uint8_t *p, size_t len)
{
	struct store *st = c->st;

	if (!st->has_native) {
		store_conn_drop(c, LOG_LVL_WARN, "native protocol connection "
		    "but no rendezvous engine here");
		return;
	}
	if ((c->nin = evbuffer_new()) == NULL) {
		store_conn_drop(c, LOG_LVL_WARN, "out of memory for input");
		return;
	}
	kv_client_free(c->kc);
	c->kc = NULL;
	store_conn_enter(c, STORE_C_NATIVE);
	store_in_native(c, p, len);
}

/* Log and drop c for a request the parser refused. */
static void
store_in_parse_error(struct store_conn *c, const struct wire_req *r)
{
	store_conn_drop(c, LOG_LVL_WARN, "bad request: %s dialect=%s "
	    "opcode=%u op=%s value=%llu", r->error,
	    c->dialect == WIRE_V2 ? "2.x" : "1.13", (unsigned)r->code,
	    wire_op_name(r->op), (unsigned long long)r->bad);
}

/*
 * A NEW connection's first bytes: choose its dialect and state.  Returns
 * 0 to go on parsing TCPStore requests, 1 when the bytes are consumed
 * (handed to the native side, or the connection refused), -1 when more
 * bytes are needed.
 */
static int
store_in_detect(struct store_conn *c, const uint8_t *p, size_t len)
{
	c->dialect = wire_detect(p, len);
	if (c->dialect == WIRE_UNKNOWN)
		return -1;
	if (c->dialect == WIRE_NATIVE) {
		store_in_go_native(c, p + WIRE_NATIVE_MAGIC_LEN,
		    len - WIRE_NATIVE_MAGIC_LEN);
		return 1;
	}
	if (!c->tcpstore_ok) {
		store_conn_drop(c, LOG_LVL_WARN, "TCPStore client refused: "
		    "not in tcpstore-allow");
		return 1;
	}
	store_conn_enter(c, STORE_C_TCPSTORE);
	return 0;
}

/*
 * Serve every complete request in buf; returns the bytes consumed (the
 * rest is the start of an incomplete request, or the connection died).
 */
static size_t
store_in_process(struct store_conn *c, const uint8_t *buf, size_t len)
{
	enum wire_status ws;
	size_t off = 0, used;
	int rc;

	while (off < len && c->state <= STORE_C_TCPSTORE) {
		if (c->state == STORE_C_NEW) {
			if ((rc = store_in_detect(c, buf + off, len - off)) != 0)
				return rc == 1 ? len : off;
		}
		ws = wire_parse(c->dialect, buf + off, len - off,
		    &c->st->wlim, &c->req, &used);
		if (ws == WIRE_MORE)
			break;
		if (ws == WIRE_ERROR) {
			store_in_parse_error(c, &c->req);
			break;
		}
		c->st->stats.requests[c->req.op]++;
		store_ops[c->req.op](c, &c->req);
		off += used;
		wire_req_init(&c->req);
	}
	return off;
}

/* Keep the unserved tail of a request in c's own buffer. */
static int
store_in_keep(struct store_conn *c, const uint8_t *p, size_t len)
{
	size_t cap;
	uint8_t *nb;

	if (len > c->icap - c->ilen) {
		cap = c->icap > 0 ? c->icap : 256;
		while (cap < c->ilen + len)
			cap *= 2;
		if ((nb = realloc(c->ibuf, cap)) == NULL)
			return -1;
		c->ibuf = nb;
		c->icap = cap;
	}
	memcpy(c->ibuf + c->ilen, p, len);
	c->ilen += len;
	return 0;
}

/* Serve what c has kept plus the new bytes; keep the rest. */
static void
store_in_kept(struct store_conn *c, const uint8_t *p, size_t len)
{
	size_t used;

	if (store_in_keep(c, p, len) == -1) {
		store_conn_drop(c, LOG_LVL_WARN, "out of memory for input");
		return;
	}
	if (c->req.need > c->ilen)
		return;		/* the field in transit is not complete */
	used = store_in_process(c, c->ibuf, c->ilen);
	if (c->state == STORE_C_DEAD)
		return;
	if (c->state == STORE_C_NATIVE)
		used = c->ilen;	/* all handed to the native input */
	memmove(c->ibuf, c->ibuf + used, c->ilen - used);
	c->ilen -= used;
	if (c->ilen == 0 && (c->icap > STORE_RBUF ||
	    c->state == STORE_C_NATIVE)) {
		free(c->ibuf);
		c->ibuf = NULL;
		c->icap = 0;
	}
}

/* New bytes from the peer: serve what is complete, keep the rest. */
static void
store_in_bytes(struct store_conn *c, const uint8_t *p, size_t len)
{
	size_t used;

	if (c->state == STORE_C_NATIVE) {
		store_in_native(c, p, len);
		return;
	}
	if (c->ilen > 0) {
		store_in_kept(c, p, len);
		return;
	}
	used = store_in_process(c, p, len);
	if (used < len && c->state <= STORE_C_TCPSTORE &&
	    store_in_keep(c, p + used, len - used) == -1)
		store_conn_drop(c, LOG_LVL_WARN, "out of memory for input");
}

/* Re-arm or stop the idle timer after input: only a half-sent request
 * counts (a 1.13 client's callback connection stays silent for good). */
static void
store_in_idle_update(struct store_conn *c)
{
	struct timeval tv;
	unsigned ms = c->st->lim.idle_timeout_ms;

	if (ms == 0 || c->state == STORE_C_DEAD)
		return;
	if (c->ilen > 0) {
		tv.tv_sec = ms / 1000;
		tv.tv_usec = (ms % 1000) * 1000;
		event_add(&c->idle, &tv);
	} else if (event_pending(&c->idle, EV_TIMEOUT, NULL))
		event_del(&c->idle);
}

/* A half-sent request sat idle too long. */
void
store_in_idlecb(evutil_socket_t fd, short what, void *arg)
{
	struct store_conn *c = arg;

	store_conn_drop(c, LOG_LVL_WARN, "idle timeout with %zu bytes of a "
	    "request pending idle-timeout=%ums", c->ilen,
	    c->st->lim.idle_timeout_ms);
}

/* The socket is readable: read once, serve, flush everything touched. */
void
store_in_readcb(evutil_socket_t fd, short what, void *arg)
{
	struct store_conn *c = arg;
	struct store *st = c->st;
	ssize_t n;

	n = recv(fd, st->rbuf, sizeof st->rbuf, 0);
	if (n == 0) {
		store_conn_drop(c, c->ilen > 0 ? LOG_LVL_INFO : LOG_LVL_DEBUG,
		    "peer closed pending=%zu", c->ilen);
		return;
	}
	if (n == -1) {
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			store_conn_drop(c, LOG_LVL_INFO, "read failed: %s",
			    strerror(errno));
		return;
	}
	st->stats.bytes_in += (uint64_t)n;
	st->in_batch++;
	store_in_bytes(c, st->rbuf, (size_t)n);
	store_in_idle_update(c);
	st->in_batch--;
	store_out_flush_all(st);
}

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
#include <time.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "log.h"
#include "store.h"
#include "store_impl.h"

#define STORE_GROW_STEP	(1024 * 1024)	/* growth of a large kept request */

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

	while (off < len && c->state <= STORE_C_TCPSTORE && !c->out_paused) {
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
		c->served++;
		off += used;
		wire_req_init(&c->req);
		if (store_out_over(c))
			store_out_pause(c);	/* the rest waits, kept */
	}
	return off;
}

/* The capacity to hold need bytes: doubling up to STORE_GROW_STEP, then
 * whole steps, so a large request costs little more than its bytes. */
static size_t
store_in_capacity(size_t cap, size_t need)
{
	if (cap == 0)
		cap = 256;
	while (cap < need && cap < STORE_GROW_STEP)
		cap *= 2;
	if (cap < need)
		cap = (need + STORE_GROW_STEP - 1) / STORE_GROW_STEP *
		    STORE_GROW_STEP;
	return cap;
}

/* Keep the unserved tail of a request in c's own buffer. */
static int
store_in_keep(struct store_conn *c, const uint8_t *p, size_t len)
{
	size_t cap;
	uint8_t *nb;

	if (len > c->icap - c->ilen) {
		cap = store_in_capacity(c->icap, c->ilen + len);
		if ((nb = realloc(c->ibuf, cap)) == NULL)
			return -1;
		store_budget_grow(c->st, c->icap, cap);
		c->ibuf = nb;
		c->icap = cap;
	}
	memcpy(c->ibuf + c->ilen, p, len);
	c->ilen += len;
	return 0;
}

/* Serve the complete requests c has kept; keep the rest. */
static void
store_in_serve_kept(struct store_conn *c)
{
	size_t used;

	if (c->req.need > c->ilen)
		return;		/* the field in transit is not complete */
	used = store_in_process(c, c->ibuf, c->ilen);
	if (c->state == STORE_C_DEAD)
		return;
	if (c->state == STORE_C_NATIVE)
		used = c->ilen;	/* all handed to the native input */
	memmove(c->ibuf, c->ibuf + used, c->ilen - used);
	c->ilen -= used;
	if (c->ilen == 0) {	/* idle connections hold no buffer (budget) */
		store_budget_grow(c->st, c->icap, 0);
		free(c->ibuf);
		c->ibuf = NULL;
		c->icap = 0;
	}
}

/* Serve what c has kept plus the new bytes; keep the rest. */
static void
store_in_kept(struct store_conn *c, const uint8_t *p, size_t len)
{
	if (store_in_keep(c, p, len) == -1) {
		store_conn_drop(c, LOG_LVL_WARN, "out of memory for input");
		return;
	}
	store_in_serve_kept(c);
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

/* Arm ev for ms from now. */
static void
store_in_arm(struct event *ev, unsigned ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

	event_add(ev, &tv);
}

/*
 * After input: the idle timer restarts with every byte of a half-sent
 * request; the request deadline starts at a request's first byte and is
 * not moved by later bytes of the same request (a trickle cannot reset
 * it), only by a request served.  Only a half-sent request counts (a 1.13
 * client's callback connection stays silent for good).  served_before:
 * c->served before this input.
 */
static void
store_in_timers_update(struct store_conn *c, uint64_t served_before)
{
	const struct store_limits *l = &c->st->lim;

	if (c->state == STORE_C_DEAD)
		return;
	if (c->ilen == 0) {
		event_del(&c->idle);
		event_del(&c->deadline);
		store_budget_forget(c);
		return;
	}
	if (c->out_paused)
		return;		/* timers wait for its output (store_out.c) */
	if (l->idle_timeout_ms != 0)
		store_in_arm(&c->idle, l->idle_timeout_ms);
	if (l->request_timeout_ms != 0 && (c->served != served_before ||
	    !event_pending(&c->deadline, EV_TIMEOUT, NULL)))
		store_in_arm(&c->deadline, l->request_timeout_ms);
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

/* A request took longer than request-timeout from its first byte: drop
 * the connection, logged at warn level at most once a second. */
void
store_in_deadlinecb(evutil_socket_t fd, short what, void *arg)
{
	struct store_conn *c = arg;
	struct store *st = c->st;
	time_t now = time(NULL);

	if (now == st->deadline_logged) {
		st->deadline_quiet++;
		store_conn_drop(c, LOG_LVL_DEBUG, "request timeout: %zu bytes "
		    "of a request after request-timeout=%ums", c->ilen,
		    st->lim.request_timeout_ms);
		return;
	}
	st->deadline_logged = now;
	store_conn_drop(c, LOG_LVL_WARN, "request timeout: %zu bytes of a "
	    "request after request-timeout=%ums (%llu more not logged since)",
	    c->ilen, st->lim.request_timeout_ms,
	    (unsigned long long)st->deadline_quiet);
	st->deadline_quiet = 0;
}

/* c's output is down to the low-water mark: serve the requests it sent
 * meanwhile, then read it again unless its output is high again or the
 * input budget paused it.  Called inside a batch (store_out_flush). */
void
store_in_resume(struct store_conn *c)
{
	uint64_t served = c->served;

	c->out_paused = 0;
	if (c->ilen > 0)
		store_in_serve_kept(c);
	store_in_timers_update(c, served);
	if (c->state >= STORE_C_CLOSING || c->out_paused)
		return;
	if (store_out_over(c))
		store_out_pause(c);
	else if (!c->paused)
		event_add(&c->rev, NULL);
}

/* The socket is readable: read once, serve, flush everything touched. */
void
store_in_readcb(evutil_socket_t fd, short what, void *arg)
{
	struct store_conn *c = arg;
	struct store *st = c->st;
	uint64_t served = c->served;
	ssize_t n;

	if (store_out_over(c)) {	/* replies from elsewhere (wake-ups) */
		store_out_pause(c);
		return;
	}
	if (c->ilen > 0 && store_budget_full(st)) {
		store_budget_pause(c);
		if (c->paused)
			return;
	}
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
	store_in_timers_update(c, served);
	st->in_batch--;
	store_out_flush_all(st);
}

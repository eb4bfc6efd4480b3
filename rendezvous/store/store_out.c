/*
 * store_out.c: the store server's output (store_impl.h).  Replies go into
 * a per-connection evbuffer; connections with new output are flushed once
 * at the end of each event (one send per connection, even when a barrier
 * wakes thousands).  Unsent output is bounded three ways:
 *  - output-high-water: a connection with that much unsent is not read
 *    (requests it already sent wait unserved) until half of it is left,
 *    back-pressure on a client that sends requests but reads no replies;
 *  - max-output: a connection with that much unsent is dropped (one
 *    request whose reply alone is too large: MULTI_GET, wake-ups);
 *  - max-output-total: past it, the connection with the most unsent
 *    bytes, of all, is dropped and its output freed.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/uio.h>

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

#define STORE_IOV		64		/* iovecs per sendmsg() */
#define STORE_OUT_EXACT		(64 * 1024)	/* larger: an exact copy */

/* Queue c for the end-of-event flush (or flush now outside an event). */
void
store_out_schedule(struct store_conn *c)
{
	struct store *st = c->st;

	if (!c->on_flushq) {
		c->on_flushq = 1;
		TAILQ_INSERT_TAIL(&st->flushq, c, flink);
	}
	if (!st->in_batch)
		store_out_flush_all(st);
}

/*
 * The watermarks, a pure function: should a connection with unsent bytes
 * of output not be read?  One not paused stops at high; a paused one goes
 * on once at most low = high / 2 are left, so it is not paused and woken
 * for every reply.  high 0: never.
 */
int
store_out_watermark(size_t unsent, size_t high, int paused)
{
	if (high == 0)
		return 0;
	return paused ? unsent > high / 2 : unsent >= high;
}

/* Is c's output over its watermark (store_out_watermark)? */
int
store_out_over(const struct store_conn *c)
{
	return store_out_watermark(evbuffer_get_length(c->out),
	    c->st->lim.out_high, c->out_paused);
}

/* Stop reading c until its output is down to the low-water mark (its
 * timers wait too: the wait is the client's reading, not its requests). */
void
store_out_pause(struct store_conn *c)
{
	struct store *st = c->st;
	time_t now;

	if (c->out_paused || c->state >= STORE_C_CLOSING)
		return;
	c->out_paused = 1;
	event_del(&c->rev);
	event_del(&c->idle);
	event_del(&c->deadline);
	store_budget_forget(c);	/* no longer the input budget's leader */
	st->stats.out_paused_total++;
	now = time(NULL);
	if (c->ilen > 0 && now != st->out_logged) {
		log_warnx("store: output over output-high-water: not reading "
		    "peer=%s unsent=%zu output-high-water=%zu pending=%zu",
		    c->peer, evbuffer_get_length(c->out), st->lim.out_high,
		    c->ilen);
		st->out_logged = now;
	}
}

/* The connection with the most unsent output, or NULL. */
static struct store_conn *
store_out_worst(struct store *st)
{
	struct store_conn *c, *worst = NULL;
	size_t most = 0;

	TAILQ_FOREACH(c, &st->conns, link) {
		if (evbuffer_get_length(c->out) > most) {
			most = evbuffer_get_length(c->out);
			worst = c;
		}
	}
	return worst;
}

/* Over max-output-total: drop the worst offenders and free their output
 * now (a dead connection is freed only on the next loop turn). */
static void
store_out_total_check(struct store *st)
{
	struct store_conn *worst;
	size_t n;

	while (st->lim.max_outbuf_total != 0 &&
	    st->outbuf > st->lim.max_outbuf_total &&
	    (worst = store_out_worst(st)) != NULL) {
		n = evbuffer_get_length(worst->out);
		worst->slow = 1;
		store_conn_drop(worst, LOG_LVL_WARN, "output over "
		    "max-output-total: unsent=%zu total=%zu "
		    "max-output-total=%zu", n, st->outbuf,
		    st->lim.max_outbuf_total);
		evbuffer_drain(worst->out, n);
		st->outbuf -= n;
		st->stats.out_dropped++;
	}
}

/* Free an exact copy once it is sent (evbuffer_add_reference cleanup). */
static void
store_out_free_copy(const void *data, size_t len, void *arg)
{
	free((void *)(uintptr_t)data);
}

/* Append bytes to c's output: a large value as an exact copy, since an
 * evbuffer rounds a new chain up to a power of two (a 1 MiB reply would
 * hold 2 MiB); -1 on ENOMEM. */
static int
store_out_add(struct store_conn *c, const void *p, size_t len)
{
	void *copy;

	if (len < STORE_OUT_EXACT)
		return evbuffer_add(c->out, p, len);
	if ((copy = malloc(len)) == NULL)
		return -1;
	memcpy(copy, p, len);
	if (evbuffer_add_reference(c->out, copy, len, store_out_free_copy,
	    NULL) == -1) {
		free(copy);
		return -1;
	}
	return 0;
}

/* Append reply bytes; drop a reader whose unsent output exceeds the limit. */
void
store_out_send(struct store_conn *c, const void *p, size_t len)
{
	size_t before;

	if (c->state == STORE_C_DEAD)
		return;
	before = evbuffer_get_length(c->out);
	if (before > c->st->lim.max_outbuf) {
		/* Checked before adding: one reply of any size still fits. */
		c->slow = 1;
		store_conn_drop(c, LOG_LVL_WARN,
		    "slow reader unsent=%zu max-output=%zu", before,
		    c->st->lim.max_outbuf);
		return;
	}
	if (store_out_add(c, p, len) == -1) {
		store_conn_drop(c, LOG_LVL_WARN, "out of memory for output");
		return;
	}
	c->st->outbuf += len;
	store_out_schedule(c);
	store_out_total_check(c->st);
}

/* Send one byte. */
void
store_out_u8(struct store_conn *c, uint8_t v)
{
	store_out_send(c, &v, 1);
}

/* Send an i64. */
void
store_out_i64(struct store_conn *c, int64_t v)
{
	uint8_t b[8];

	store_out_send(c, b, wire_enc_i64(b, v));
}

/* Send a u64-length-prefixed byte string. */
void
store_out_bytes(struct store_conn *c, const uint8_t *p, size_t len)
{
	uint8_t b[8];

	store_out_send(c, b, wire_enc_u64(b, len));
	if (len > 0)
		store_out_send(c, p, len);
}

/* Write as much pending output as the socket takes; -1 on a dead peer. */
int
store_out_write(struct store_conn *c)
{
	struct evbuffer_iovec v[STORE_IOV];
	struct iovec iov[STORE_IOV];
	struct msghdr msg;
	ssize_t n;
	int i, nv;

	while (evbuffer_get_length(c->out) > 0) {
		nv = evbuffer_peek(c->out, -1, NULL, v, STORE_IOV);
		if (nv > STORE_IOV)
			nv = STORE_IOV;
		for (i = 0; i < nv; i++) {
			iov[i].iov_base = v[i].iov_base;
			iov[i].iov_len = v[i].iov_len;
		}
		memset(&msg, 0, sizeof msg);
		msg.msg_iov = iov;
		msg.msg_iovlen = (size_t)nv;
		n = sendmsg(c->fd, &msg, MSG_NOSIGNAL);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			return -1;
		}
		evbuffer_drain(c->out, (size_t)n);
		c->st->outbuf -= (size_t)n;
		c->st->stats.bytes_out += (uint64_t)n;
	}
	return 0;
}

/* Flush c: write what the socket takes, wait for writability for the
 * rest; a paused connection is read again once its output is low enough;
 * a CLOSING connection goes once everything is written. */
static void
store_out_flush(struct store_conn *c)
{
	if (c->state == STORE_C_DEAD)
		return;
	if (store_out_write(c) == -1) {
		store_conn_drop(c, LOG_LVL_INFO, "write failed: %s",
		    strerror(errno));
		return;
	}
	if (c->out_paused && !store_out_over(c)) {
		c->st->in_batch++;	/* its replies go on the flush queue */
		store_in_resume(c);
		c->st->in_batch--;
		if (c->state == STORE_C_DEAD)
			return;
	}
	if (evbuffer_get_length(c->out) > 0) {
		if (!event_pending(&c->wev, EV_WRITE, NULL))
			event_add(&c->wev, NULL);
		return;
	}
	if (event_pending(&c->wev, EV_WRITE, NULL))
		event_del(&c->wev);
	if (c->state == STORE_C_CLOSING)
		store_conn_drop(c, LOG_LVL_DEBUG, "closed after output");
}

/* Flush every connection that got output during this event. */
void
store_out_flush_all(struct store *st)
{
	struct store_conn *c;

	while ((c = TAILQ_FIRST(&st->flushq)) != NULL) {
		TAILQ_REMOVE(&st->flushq, c, flink);
		c->on_flushq = 0;
		store_out_flush(c);
	}
}

/* The socket is writable again. */
void
store_out_writecb(evutil_socket_t fd, short what, void *arg)
{
	struct store_conn *c = arg;

	c->st->in_batch++;
	store_out_flush(c);
	c->st->in_batch--;
	store_out_flush_all(c->st);
}

/*
 * store_out.c: the store server's output (store_impl.h).  Replies go into
 * a per-connection evbuffer; connections with new output are flushed once
 * at the end of each event (one send per connection, even when a barrier
 * wakes thousands).  A reader whose unsent output passes max-output is
 * dropped.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "log.h"
#include "store.h"
#include "store_impl.h"

#define STORE_IOV		64		/* iovecs per sendmsg() */

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
	if (evbuffer_add(c->out, p, len) == -1) {
		store_conn_drop(c, LOG_LVL_WARN, "out of memory for output");
		return;
	}
	store_out_schedule(c);
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
		c->st->stats.bytes_out += (uint64_t)n;
	}
	return 0;
}

/* Flush c: write what the socket takes, wait for writability for the
 * rest; a CLOSING connection goes once everything is written. */
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

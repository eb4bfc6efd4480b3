/*
 * store.c: the TCPStore-compatible store server (see store.h), on one
 * libevent loop.
 *
 * Each connection reads into one shared scratch buffer; complete requests
 * are served straight from it and only a partial request's bytes are kept
 * per connection, so idle connections cost no buffer memory.  The dialect
 * (torch 1.13, torch 2.x, native) is chosen from the first bytes.  Replies
 * go into a per-connection evbuffer; connections with new output are
 * flushed once at the end of each event (one send per connection, even
 * when a barrier wakes thousands).  A connection that must go is marked
 * dead and freed on the next loop turn, never inside a callback that may
 * still use it.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/queue.h>
#include <sys/uio.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <netdb.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/event_struct.h>
#include <event2/listener.h>

#include "kv.h"
#include "log.h"
#include "sock.h"
#include "acl.h"
#include "store.h"
#include "wire.h"

#define STORE_RBUF		(64 * 1024)	/* bytes read per recv() */
#define STORE_BACKLOG		65535		/* clamped by somaxconn */
#define STORE_IOV		64		/* iovecs per sendmsg() */
#define STORE_ACCEPT_RETRY_MS	100		/* after EMFILE and friends */
#define STORE_PEER_LEN		64

/* Defaults of the limits (see docs/store.md). */
#define STORE_DEFAULT_MAX_CONNS		65536
#define STORE_DEFAULT_MAX_OUTBUF	(128u * 1024 * 1024)
#define STORE_DEFAULT_IDLE_TIMEOUT_MS	60000	/* a half-sent request */

struct store_listener {
	TAILQ_ENTRY(store_listener) link;
	struct store		*st;
	struct evconnlistener	*lev;
	struct event		 retry;
};

struct store_conn {
	TAILQ_ENTRY(store_conn)	 link;	/* st->conns or st->dead */
	TAILQ_ENTRY(store_conn)	 flink;	/* st->flushq */
	struct store		*st;
	int			 fd;
	enum wire_dialect	 dialect;
	unsigned		 dead:1, closing:1, on_flushq:1,
				 validated:1, slow:1,
				 tcpstore_ok:1;	/* tcpstore-allow */
	struct event		 rev, wev, idle;
	uint8_t			*ibuf;	/* partial request, from its start */
	size_t			 ilen, icap;
	struct wire_req		 req;
	struct evbuffer		*out;
	struct evbuffer		*nin;	/* native input */
	struct kv_client	*kc;
	void			*data;
	char			 peer[STORE_PEER_LEN];
};
TAILQ_HEAD(store_connq, store_conn);

struct store {
	struct event_base	*base;
	struct store_limits	 lim;
	struct wire_limits	 wlim;
	struct kv		*kv;
	struct store_native_ops	 native;
	void			*native_arg;
	int			 has_native;
	struct acl		*tcpstore_allow;	/* NULL: anyone */
	TAILQ_HEAD(, store_listener) listeners;
	struct store_connq	 conns, dead, flushq;
	size_t			 nconns;
	int			 in_batch;
	struct event		*reaper;
	time_t			 full_logged;
	struct store_stats	 stats;		/* counters (store_stats()) */
	uint8_t			 rbuf[STORE_RBUF];
};

static void	store_conn_drop(struct store_conn *, int level, const char *, ...)
		    __attribute__((format(printf, 3, 4)));
static void	store_flush_all(struct store *);

/* Fill limits with the defaults. */
void
store_limits_default(struct store_limits *l)
{
	memset(l, 0, sizeof *l);
	l->max_key = WIRE_DEFAULT_MAX_KEY;
	l->max_value = WIRE_DEFAULT_MAX_VALUE;
	l->max_keys_per_req = WIRE_DEFAULT_MAX_KEYS;
	l->max_conns = STORE_DEFAULT_MAX_CONNS;
	l->max_outbuf = STORE_DEFAULT_MAX_OUTBUF;
	l->max_inbuf = WIRE_DEFAULT_MAX_REQUEST;
	l->idle_timeout_ms = STORE_DEFAULT_IDLE_TIMEOUT_MS;
}

/* Log a line at a log.h level. */
static void
store_log(int level, const char *line)
{
	if (level <= LOG_LVL_WARN)
		log_warnx("%s", line);
	else if (level == LOG_LVL_INFO)
		log_info("%s", line);
	else
		log_debug("%s", line);
}

/* ---- output ---- */

/* Queue c for the end-of-event flush (or flush now outside an event). */
static void
store_conn_schedule(struct store_conn *c)
{
	struct store *st = c->st;

	if (!c->on_flushq) {
		c->on_flushq = 1;
		TAILQ_INSERT_TAIL(&st->flushq, c, flink);
	}
	if (!st->in_batch)
		store_flush_all(st);
}

/* Append reply bytes; drop a reader whose unsent output exceeds the limit. */
static void
store_send(struct store_conn *c, const void *p, size_t len)
{
	size_t before;

	if (c->dead)
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
	store_conn_schedule(c);
}

/* Send one byte. */
static void
store_send_u8(struct store_conn *c, uint8_t v)
{
	store_send(c, &v, 1);
}

/* Send an i64. */
static void
store_send_i64(struct store_conn *c, int64_t v)
{
	uint8_t b[8];

	store_send(c, b, wire_enc_i64(b, v));
}

/* Send a u64-length-prefixed byte string. */
static void
store_send_bytes(struct store_conn *c, const uint8_t *p, size_t len)
{
	uint8_t b[8];

	store_send(c, b, wire_enc_u64(b, len));
	if (len > 0)
		store_send(c, p, len);
}

/* Write as much pending output as the socket takes; -1 on a dead peer. */
static int
store_conn_write_out(struct store_conn *c)
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

/* Flush c: write what the socket takes, wait for writability for the rest. */
static void
store_conn_flush(struct store_conn *c)
{
	if (c->dead)
		return;
	if (store_conn_write_out(c) == -1) {
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
	if (c->closing)
		store_conn_drop(c, LOG_LVL_DEBUG, "closed after output");
}

/* Flush every connection that got output during this event. */
static void
store_flush_all(struct store *st)
{
	struct store_conn *c;

	while ((c = TAILQ_FIRST(&st->flushq)) != NULL) {
		TAILQ_REMOVE(&st->flushq, c, flink);
		c->on_flushq = 0;
		store_conn_flush(c);
	}
}

/* The socket is writable again. */
static void
store_conn_writecb(evutil_socket_t fd, short what, void *arg)
{
	struct store_conn *c = arg;

	c->st->in_batch++;
	store_conn_flush(c);
	c->st->in_batch--;
	store_flush_all(c->st);
}

/* ---- connection life ---- */

/* Free a dead connection: last best-effort flush, hooks, fd, memory. */
static void
store_conn_free(struct store_conn *c)
{
	struct store *st = c->st;

	if (!c->slow && evbuffer_get_length(c->out) > 0)
		(void)store_conn_write_out(c);
	if (c->dialect == WIRE_NATIVE && st->has_native &&
	    st->native.on_close != NULL)
		st->native.on_close(c, st->native_arg);
	kv_client_free(c->kc);
	event_del(&c->rev);
	event_del(&c->wev);
	event_del(&c->idle);
	close(c->fd);
	evbuffer_free(c->out);
	if (c->nin != NULL)
		evbuffer_free(c->nin);
	free(c->ibuf);
	st->nconns--;
	free(c);
}

/* Next loop turn: free every connection marked dead. */
static void
store_reapcb(evutil_socket_t fd, short what, void *arg)
{
	struct store *st = arg;
	struct store_conn *c;

	while ((c = TAILQ_FIRST(&st->dead)) != NULL) {
		TAILQ_REMOVE(&st->dead, c, link);
		store_conn_free(c);
	}
}

/* Mark c dead with a logged reason; it is freed on the next loop turn. */
static void
store_conn_drop(struct store_conn *c, int level, const char *fmt, ...)
{
	struct store *st = c->st;
	char why[512], line[640];
	va_list ap;

	if (c->dead)
		return;
	if (level <= log_getlevel()) {
		va_start(ap, fmt);
		vsnprintf(why, sizeof why, fmt, ap);
		va_end(ap);
		snprintf(line, sizeof line, "store: connection closed peer=%s "
		    "reason=\"%s\"", c->peer, why);
		store_log(level, line);
	}
	c->dead = 1;
	event_del(&c->rev);
	event_del(&c->wev);
	event_del(&c->idle);
	if (c->on_flushq) {
		TAILQ_REMOVE(&st->flushq, c, flink);
		c->on_flushq = 0;
	}
	TAILQ_REMOVE(&st->conns, c, link);
	TAILQ_INSERT_TAIL(&st->dead, c, link);
	event_active(st->reaper, EV_TIMEOUT, 1);
}

/* A half-sent request sat idle too long. */
static void
store_conn_idlecb(evutil_socket_t fd, short what, void *arg)
{
	struct store_conn *c = arg;

	store_conn_drop(c, LOG_LVL_WARN, "idle timeout with %zu bytes of a "
	    "request pending idle-timeout=%ums", c->ilen,
	    c->st->lim.idle_timeout_ms);
}

/* ---- requests ---- */

/* Log-escaped key of a request, for error lines. */
static const char *
store_key_text(char *buf, size_t len, const struct wire_str *k)
{
	return log_escape(buf, len, k->p, (size_t)k->len);
}

/* VALIDATE: only as the first request of a 2.x connection; no reply. */
static void
op_validate(struct store_conn *c, const struct wire_req *r)
{
	if (c->validated)
		store_conn_drop(c, LOG_LVL_WARN, "VALIDATE after handshake");
	c->validated = 1;
}

/* PING: echo the nonce. */
static void
op_ping(struct store_conn *c, const struct wire_req *r)
{
	uint8_t b[4];

	store_send(c, b, wire_enc_u32(b, r->u32));
}

/* SET: store, no reply. */
static void
op_set(struct store_conn *c, const struct wire_req *r)
{
	if (kv_set(c->st->kv, r->key.p, r->key.len, r->val.p, r->val.len) == -1)
		store_conn_drop(c, LOG_LVL_WARN, "out of memory in SET");
}

/* GET: the value; a missing key closes the connection (1.13, 2.x legacy). */
static void
op_get(struct store_conn *c, const struct wire_req *r)
{
	const uint8_t *v;
	size_t n;
	char k[128];

	if (kv_get(c->st->kv, r->key.p, r->key.len, &v, &n) == -1) {
		store_conn_drop(c, LOG_LVL_WARN, "GET of missing key key=%s",
		    store_key_text(k, sizeof k, &r->key));
		return;
	}
	store_send_bytes(c, v, n);
}

/* ADD: add to a decimal counter, reply the new value. */
static void
op_add(struct store_conn *c, const struct wire_req *r)
{
	enum kv_err err;
	int64_t v;
	char k[128];

	err = kv_add(c->st->kv, r->key.p, r->key.len, r->num, &v);
	if (err == KV_OK) {
		store_send_i64(c, v);
		return;
	}
	store_conn_drop(c, LOG_LVL_WARN, "ADD failed key=%s error=%s",
	    store_key_text(k, sizeof k, &r->key),
	    err == KV_NOT_NUMBER ? "value-not-a-number" :
	    err == KV_OVERFLOW ? "overflow" : "out-of-memory");
}

/* COMPARE_SET: the four-case table of kv_compare_set(). */
static void
op_compare_set(struct store_conn *c, const struct wire_req *r)
{
	const uint8_t *v;
	size_t n;

	if (kv_compare_set(c->st->kv, r->key.p, r->key.len, r->val.p,
	    r->val.len, r->val2.p, r->val2.len, &v, &n) == -1) {
		store_conn_drop(c, LOG_LVL_WARN, "out of memory in COMPARE_SET");
		return;
	}
	store_send_bytes(c, v, n);
}

/* CHECK: READY if every key exists. */
static void
op_check(struct store_conn *c, const struct wire_req *r)
{
	struct wire_str l = r->list, k;

	while (wire_list_next(&l, &k))
		if (!kv_exists(c->st->kv, k.p, k.len)) {
			store_send_u8(c, WIRE_CHECK_NOT_READY);
			return;
		}
	store_send_u8(c, WIRE_CHECK_READY);
}

/* c's table client, made on first use (most connections never wait). */
static struct kv_client *
store_conn_kc(struct store_conn *c)
{
	if (c->kc == NULL && (c->kc = kv_client_new(c->st->kv, c)) == NULL)
		store_conn_drop(c, LOG_LVL_WARN, "out of memory for waits");
	return c->kc;
}

/* WAIT: STOP_WAITING now or when the last missing key appears. */
static void
op_wait(struct store_conn *c, const struct wire_req *r)
{
	if (store_conn_kc(c) == NULL)
		return;
	switch (kv_wait(c->st->kv, c->kc, r->list.p, r->list.len)) {
	case 1:
		store_send_u8(c, WIRE_WAIT_STOP);
		break;
	case -1:
		store_conn_drop(c, LOG_LVL_WARN, "out of memory in WAIT");
		break;
	}
}

/* GETNUMKEYS: number of keys. */
static void
op_getnumkeys(struct store_conn *c, const struct wire_req *r)
{
	store_send_i64(c, (int64_t)kv_count(c->st->kv));
}

/* WATCH_KEY (1.13): register, reply KEY_CALLBACK_REGISTERED. */
static void
op_watch(struct store_conn *c, const struct wire_req *r)
{
	if (store_conn_kc(c) == NULL)
		return;
	if (kv_watch(c->st->kv, c->kc, r->key.p, r->key.len) == -1) {
		store_conn_drop(c, LOG_LVL_WARN, "out of memory in WATCH_KEY");
		return;
	}
	store_send_u8(c, WIRE_WATCH_REGISTERED);
}

/* DELETE_KEY: 1 if it existed, else 0. */
static void
op_delete(struct store_conn *c, const struct wire_req *r)
{
	store_send_i64(c, kv_delete(c->st->kv, r->key.p, r->key.len));
}

/* APPEND: concatenate, no reply. */
static void
op_append(struct store_conn *c, const struct wire_req *r)
{
	if (kv_append(c->st->kv, r->key.p, r->key.len, r->val.p,
	    r->val.len) == -1)
		store_conn_drop(c, LOG_LVL_WARN, "out of memory in APPEND");
}

/* MULTI_GET: values in order; a missing key closes after the ones before. */
static void
op_multi_get(struct store_conn *c, const struct wire_req *r)
{
	struct wire_str l = r->list, k;
	const uint8_t *v;
	size_t n;
	char kt[128];

	while (!c->dead && wire_list_next(&l, &k)) {
		if (kv_get(c->st->kv, k.p, k.len, &v, &n) == -1) {
			store_conn_drop(c, LOG_LVL_WARN,
			    "MULTI_GET of missing key key=%s",
			    store_key_text(kt, sizeof kt, &k));
			return;
		}
		store_send_bytes(c, v, n);
	}
}

/* MULTI_SET: SET each pair in order, no reply. */
static void
op_multi_set(struct store_conn *c, const struct wire_req *r)
{
	struct wire_str l = r->list, k, v;

	while (wire_list_next(&l, &k) && wire_list_next(&l, &v))
		if (kv_set(c->st->kv, k.p, k.len, v.p, v.len) == -1) {
			store_conn_drop(c, LOG_LVL_WARN,
			    "out of memory in MULTI_SET");
			return;
		}
}

/* CANCEL_WAIT: drop this connection's waits, always reply WAIT_CANCELED. */
static void
op_cancel_wait(struct store_conn *c, const struct wire_req *r)
{
	if (c->kc != NULL)
		kv_cancel(c->kc);
	store_send_u8(c, WIRE_WAIT_CANCELED);
}

/* QUEUE_PUSH: append to a queue, no reply. */
static void
op_queue_push(struct store_conn *c, const struct wire_req *r)
{
	if (kv_queue_push(c->st->kv, r->key.p, r->key.len, r->val.p,
	    r->val.len) == -1)
		store_conn_drop(c, LOG_LVL_WARN, "out of memory in QUEUE_PUSH");
}

/* QUEUE_POP: length before the pop, then the head value if there was one. */
static void
op_queue_pop(struct store_conn *c, const struct wire_req *r)
{
	uint8_t *v;
	size_t n;
	int64_t before;

	if (kv_queue_pop(c->st->kv, r->key.p, r->key.len, &before, &v,
	    &n) == -1) {
		store_conn_drop(c, LOG_LVL_WARN, "out of memory in QUEUE_POP");
		return;
	}
	store_send_i64(c, before);
	if (before > 0)
		store_send_bytes(c, v, n);
	free(v);
}

/* QUEUE_LEN: items queued under the key. */
static void
op_queue_len(struct store_conn *c, const struct wire_req *r)
{
	store_send_i64(c, kv_queue_len(c->st->kv, r->key.p, r->key.len));
}

/* kv_foreach() callback of LIST_KEYS. */
static void
store_list_one(const uint8_t *key, size_t klen, void *arg)
{
	store_send_bytes(arg, key, klen);
}

/* LIST_KEYS: count, then every key. */
static void
op_list_keys(struct store_conn *c, const struct wire_req *r)
{
	store_send_i64(c, (int64_t)kv_count(c->st->kv));
	kv_foreach(c->st->kv, store_list_one, c);
}

/* BARRIER: count an arrival; STOP_WAITING when the last one is in. */
static void
op_barrier(struct store_conn *c, const struct wire_req *r)
{
	enum kv_err err;
	int done;

	if (store_conn_kc(c) == NULL)
		return;
	err = kv_barrier(c->st->kv, c->kc, r->key.p, r->key.len, r->num, &done);
	if (err != KV_OK)
		store_conn_drop(c, LOG_LVL_WARN, "BARRIER failed error=%s",
		    err == KV_NOT_NUMBER ? "value-not-a-number" :
		    err == KV_OVERFLOW ? "overflow" : "out-of-memory");
	else if (done)
		store_send_u8(c, WIRE_WAIT_STOP);
}

/* Request handlers by operation. */
static void (*const store_ops[WOP__COUNT])(struct store_conn *,
    const struct wire_req *) = {
	[WOP_VALIDATE] = op_validate, [WOP_SET] = op_set,
	[WOP_COMPARE_SET] = op_compare_set, [WOP_GET] = op_get,
	[WOP_ADD] = op_add, [WOP_CHECK] = op_check, [WOP_WAIT] = op_wait,
	[WOP_GETNUMKEYS] = op_getnumkeys, [WOP_WATCH_KEY] = op_watch,
	[WOP_DELETE_KEY] = op_delete, [WOP_APPEND] = op_append,
	[WOP_MULTI_GET] = op_multi_get, [WOP_MULTI_SET] = op_multi_set,
	[WOP_CANCEL_WAIT] = op_cancel_wait, [WOP_PING] = op_ping,
	[WOP_QUEUE_PUSH] = op_queue_push, [WOP_QUEUE_POP] = op_queue_pop,
	[WOP_QUEUE_LEN] = op_queue_len, [WOP_LIST_KEYS] = op_list_keys,
	[WOP_BARRIER] = op_barrier,
};

/* kv callback: a wait of this connection is over. */
static void
store_kv_wake(void *owner)
{
	store_send_u8(owner, WIRE_WAIT_STOP);
}

/* kv callback: a key this (1.13) connection watches changed. */
static void
store_kv_watch(void *owner, int event, const uint8_t *key, size_t klen,
    const uint8_t *old, size_t olen, const uint8_t *nv, size_t nlen)
{
	store_send_u8(owner, (uint8_t)event);
	store_send_bytes(owner, key, klen);
	store_send_bytes(owner, old, olen);
	store_send_bytes(owner, nv, nlen);
}

static const struct kv_ops store_kv_ops = { store_kv_wake, store_kv_watch };

/* ---- input ---- */

/* Hand native bytes to the rendezvous engine. */
static void
store_native_input(struct store_conn *c, const uint8_t *p, size_t len)
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
store_go_native(struct store_conn *c, const uint8_t *p, size_t len)
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
	log_debug("store: native connection peer=%s", c->peer);
	store_native_input(c, p, len);
}

/* Log and drop c for a request the parser refused. */
static void
store_parse_error(struct store_conn *c, const struct wire_req *r)
{
	store_conn_drop(c, LOG_LVL_WARN, "bad request: %s dialect=%s "
	    "opcode=%u op=%s value=%llu", r->error,
	    c->dialect == WIRE_V2 ? "2.x" : "1.13", (unsigned)r->code,
	    wire_op_name(r->op), (unsigned long long)r->bad);
}

/*
 * Serve every complete request in buf; returns the bytes consumed (the
 * rest is the start of an incomplete request, or the connection died).
 */
static size_t
store_conn_process(struct store_conn *c, const uint8_t *buf, size_t len)
{
	enum wire_status ws;
	size_t off = 0, used;

	while (off < len && !c->dead && c->dialect != WIRE_NATIVE) {
		if (c->dialect == WIRE_UNKNOWN) {
			c->dialect = wire_detect(buf + off, len - off);
			if (c->dialect == WIRE_UNKNOWN)
				break;
			if (c->dialect == WIRE_NATIVE) {
				off += WIRE_NATIVE_MAGIC_LEN;
				store_go_native(c, buf + off, len - off);
				return len;
			}
			if (!c->tcpstore_ok) {
				store_conn_drop(c, LOG_LVL_WARN, "TCPStore client "
				    "refused: not in tcpstore-allow");
				return len;
			}
		}
		ws = wire_parse(c->dialect, buf + off, len - off,
		    &c->st->wlim, &c->req, &used);
		if (ws == WIRE_MORE)
			break;
		if (ws == WIRE_ERROR) {
			store_parse_error(c, &c->req);
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
store_conn_keep(struct store_conn *c, const uint8_t *p, size_t len)
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

/* New bytes from the peer: serve what is complete, keep the rest. */
static void
store_conn_input(struct store_conn *c, const uint8_t *p, size_t len)
{
	size_t used;

	if (c->dialect == WIRE_NATIVE) {
		store_native_input(c, p, len);
		return;
	}
	if (c->ilen == 0) {
		used = store_conn_process(c, p, len);
		if (!c->dead && used < len && c->dialect != WIRE_NATIVE &&
		    store_conn_keep(c, p + used, len - used) == -1)
			store_conn_drop(c, LOG_LVL_WARN, "out of memory for input");
	} else {
		if (store_conn_keep(c, p, len) == -1) {
			store_conn_drop(c, LOG_LVL_WARN, "out of memory for input");
			return;
		}
		if (c->req.need > c->ilen)
			return;		/* the field in transit is not complete */
		used = store_conn_process(c, c->ibuf, c->ilen);
		if (c->dead)
			return;
		if (c->dialect == WIRE_NATIVE)
			used = c->ilen;	/* all handed to the native input */
		memmove(c->ibuf, c->ibuf + used, c->ilen - used);
		c->ilen -= used;
		if (c->ilen == 0 && (c->icap > STORE_RBUF ||
		    c->dialect == WIRE_NATIVE)) {
			free(c->ibuf);
			c->ibuf = NULL;
			c->icap = 0;
		}
	}
}

/* Re-arm or stop the idle timer after input: only a half-sent request
 * counts (a 1.13 client's callback connection stays silent for good). */
static void
store_conn_idle_update(struct store_conn *c)
{
	struct timeval tv;
	unsigned ms = c->st->lim.idle_timeout_ms;

	if (ms == 0 || c->dead)
		return;
	if (c->ilen > 0) {
		tv.tv_sec = ms / 1000;
		tv.tv_usec = (ms % 1000) * 1000;
		event_add(&c->idle, &tv);
	} else if (event_pending(&c->idle, EV_TIMEOUT, NULL))
		event_del(&c->idle);
}

/* The socket is readable: read once, serve, flush everything touched. */
static void
store_conn_readcb(evutil_socket_t fd, short what, void *arg)
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
	store_conn_input(c, st->rbuf, (size_t)n);
	store_conn_idle_update(c);
	st->in_batch--;
	store_flush_all(st);
}

/* Format "addr:port" ("[v6]:port") of a socket address. */
static void
store_addr_text(const struct sockaddr *sa, socklen_t len, char *buf,
    size_t buflen)
{
	const struct sockaddr_in *sin = (const struct sockaddr_in *)(const void *)sa;
	const struct sockaddr_in6 *sin6 =
	    (const struct sockaddr_in6 *)(const void *)sa;
	char host[INET6_ADDRSTRLEN];

	if (sa->sa_family == AF_INET && len >= (socklen_t)sizeof *sin &&
	    inet_ntop(AF_INET, &sin->sin_addr, host, sizeof host) != NULL)
		snprintf(buf, buflen, "%s:%u", host, ntohs(sin->sin_port));
	else if (sa->sa_family == AF_INET6 && len >= (socklen_t)sizeof *sin6 &&
	    inet_ntop(AF_INET6, &sin6->sin6_addr, host, sizeof host) != NULL)
		snprintf(buf, buflen, "[%s]:%u", host, ntohs(sin6->sin6_port));
	else
		snprintf(buf, buflen, "?");
}

/* Set up a connection for an accepted socket; NULL on ENOMEM. */
static struct store_conn *
store_conn_new(struct store *st, int fd, const struct sockaddr *sa,
    socklen_t salen)
{
	struct store_conn *c;
#ifndef __linux__
	int one = 1;
#endif

	if ((c = calloc(1, sizeof *c)) == NULL)
		return NULL;
	if ((c->out = evbuffer_new()) == NULL) {
		free(c);
		return NULL;
	}
	c->st = st;
	c->fd = fd;
	wire_req_init(&c->req);
#ifndef __linux__
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
#endif	/* Linux: inherited from the listener (store_bind_one) */
	store_addr_text(sa, salen, c->peer, sizeof c->peer);
	c->tcpstore_ok = st->tcpstore_allow == NULL ||
	    acl_match(st->tcpstore_allow, sa, salen);
	event_assign(&c->rev, st->base, fd, EV_READ | EV_PERSIST,
	    store_conn_readcb, c);
	event_assign(&c->wev, st->base, fd, EV_WRITE | EV_PERSIST,
	    store_conn_writecb, c);
	event_assign(&c->idle, st->base, -1, 0, store_conn_idlecb, c);
	TAILQ_INSERT_TAIL(&st->conns, c, link);
	st->nconns++;
	st->stats.accepted++;
	event_add(&c->rev, NULL);
	log_debug("store: connection accepted peer=%s conns=%zu", c->peer,
	    st->nconns);
	return c;
}

/* ---- listening ---- */

/* A connection arrived (the listener accepts in a loop). */
static void
store_acceptcb(struct evconnlistener *lev, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct store_listener *l = arg;
	struct store *st = l->st;
	char peer[STORE_PEER_LEN];
	time_t now;

	if (st->nconns >= st->lim.max_conns) {
		now = time(NULL);
		if (now != st->full_logged) {
			store_addr_text(sa, (socklen_t)salen, peer, sizeof peer);
			log_warnx("store: connection refused peer=%s reason="
			    "\"max-connections=%zu reached\"", peer,
			    st->lim.max_conns);
			st->full_logged = now;
		}
		close(fd);
		return;
	}
	if (store_conn_new(st, fd, sa, (socklen_t)salen) == NULL) {
		log_warnx("store: connection refused reason=\"out of memory\"");
		close(fd);
	}
}

/* Accepting again after a pause for EMFILE/ENFILE/ENOBUFS/ENOMEM. */
static void
store_retrycb(evutil_socket_t fd, short what, void *arg)
{
	struct store_listener *l = arg;

	evconnlistener_enable(l->lev);
}

/* accept() failed: pause this listener on resource exhaustion. */
static void
store_accept_errcb(struct evconnlistener *lev, void *arg)
{
	struct store_listener *l = arg;
	struct timeval tv = { 0, STORE_ACCEPT_RETRY_MS * 1000 };
	int err = EVUTIL_SOCKET_ERROR();

	if (err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM) {
		log_warnx("store: accept paused for %dms: %s",
		    STORE_ACCEPT_RETRY_MS, strerror(err));
		evconnlistener_disable(lev);
		evtimer_add(&l->retry, &tv);
		return;
	}
	log_warnx("store: accept: %s", strerror(err));
}

/* Serve a listening socket (takes ownership of fd). */
static int
store_add_listener(struct store *st, int fd, char *err, size_t errlen)
{
	struct store_listener *l;

	if ((l = calloc(1, sizeof *l)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	l->st = st;
	l->lev = evconnlistener_new(st->base, store_acceptcb, l,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC | LEV_OPT_REUSEABLE,
	    0, fd);	/* 0: already listening (-1 would re-listen with 128) */
	if (l->lev == NULL) {
		snprintf(err, errlen, "evconnlistener_new failed");
		free(l);
		return -1;
	}
	evconnlistener_set_error_cb(l->lev, store_accept_errcb);
	evtimer_assign(&l->retry, st->base, store_retrycb, l);
	TAILQ_INSERT_TAIL(&st->listeners, l, link);
	return 0;
}

/* Open, bind and listen one socket for an address; -1 with err set. */
static int
store_bind_one(const struct addrinfo *ai, int port, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	int fd, one = 1;

	memcpy(&ss, ai->ai_addr, ai->ai_addrlen);
	if (ss.ss_family == AF_INET)
		((struct sockaddr_in *)&ss)->sin_port = htons((uint16_t)port);
	else if (ss.ss_family == AF_INET6)
		((struct sockaddr_in6 *)&ss)->sin6_port = htons((uint16_t)port);
	fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, ai->ai_protocol);
	if (fd == -1) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	if (ai->ai_family == AF_INET6)
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
	if (bind(fd, (struct sockaddr *)&ss, ai->ai_addrlen) == -1 ||
	    listen(fd, STORE_BACKLOG) == -1) {
		int saved = errno;

		snprintf(err, errlen, "bind/listen port %d: %s", port,
		    strerror(saved));
		close(fd);
		errno = saved;
		return -1;
	}
	return fd;
}

#define STORE_MAX_ADDRS		16	/* addresses of one host name */
#define STORE_PORT_TRIES	8	/* port 0: retries if a sibling is busy */

/*
 * Bind and listen on every address of res on port; port 0 picks one free
 * port for all of them.  Addresses that cannot be used at all (e.g. IPv6
 * disabled) are skipped, but with port 0 a port that is busy on one
 * address fails the whole try (*busy set) so the caller picks another.
 * Returns the number of sockets in fds.
 */
static int
store_bind_all(const struct addrinfo *res, int *port, int *fds, int *busy,
    char *why, size_t whylen)
{
	const struct addrinfo *ai;
	int fd, n = 0, picked = *port == 0, p = *port;

	*busy = 0;
	for (ai = res; ai != NULL && n < STORE_MAX_ADDRS; ai = ai->ai_next) {
		if ((fd = store_bind_one(ai, p, why, whylen)) == -1) {
			if (picked && p != 0 && errno == EADDRINUSE) {
				*busy = 1;
				break;
			}
			continue;
		}
		if (p == 0)
			p = sock_local_port(fd);
		fds[n++] = fd;
	}
	if (*busy)
		while (n > 0)
			close(fds[--n]);
	*port = p;
	return n;
}

/*
 * Bind every address of host (NULL, "" or "*": all addresses) on port and
 * listen; port 0 picks a free port, the same for all the addresses.  At
 * least one address must succeed.  The sockets listen before this returns.
 */
int
store_listen(struct store *st, const char *host, int port, int *bound_port,
    char *err, size_t errlen)
{
	struct addrinfo hints, *res;
	char serv[16], why[256] = "no usable address";
	int fds[STORE_MAX_ADDRS], i, n = 0, rc, busy = 0, tries, p, ok = 0;

	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	if (host != NULL && (host[0] == '\0' || strcmp(host, "*") == 0))
		host = NULL;
	snprintf(serv, sizeof serv, "%d", port);
	if ((rc = getaddrinfo(host, serv, &hints, &res)) != 0) {
		snprintf(err, errlen, "%s: %s", host ? host : "*",
		    gai_strerror(rc));
		return -1;
	}
	for (tries = 0; tries < STORE_PORT_TRIES; tries++) {
		p = port;
		n = store_bind_all(res, &p, fds, &busy, why, sizeof why);
		if (!busy)
			break;
	}
	freeaddrinfo(res);
	for (i = 0; i < n; i++) {
		if (store_add_listener(st, fds[i], why, sizeof why) == -1)
			close(fds[i]);
		else
			ok++;
	}
	if (ok == 0) {
		snprintf(err, errlen, "%s: %s", host ? host : "*", why);
		return -1;
	}
	if (bound_port != NULL)
		*bound_port = p;
	return 0;
}

/* Serve an already listening socket (systemd socket activation). */
int
store_adopt_listener(struct store *st, int fd, char *err, size_t errlen)
{
	int fl, one = 1;

	if ((fl = fcntl(fd, F_GETFL)) == -1 ||
	    fcntl(fd, F_SETFL, fl | O_NONBLOCK) == -1 ||
	    fcntl(fd, F_SETFD, FD_CLOEXEC) == -1) {
		snprintf(err, errlen, "fd %d: %s", fd, strerror(errno));
		return -1;
	}
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	return store_add_listener(st, fd, err, errlen);
}

/* ---- the store ---- */

/* A store on base with limits (NULL: defaults); NULL on ENOMEM. */
struct store *
store_new(struct event_base *base, const struct store_limits *lim)
{
	struct store *st;

	if ((st = calloc(1, sizeof *st)) == NULL)
		return NULL;
	st->base = base;
	if (lim != NULL)
		st->lim = *lim;
	else
		store_limits_default(&st->lim);
	st->wlim.max_key = st->lim.max_key;
	st->wlim.max_value = st->lim.max_value;
	st->wlim.max_keys = st->lim.max_keys_per_req;
	st->wlim.max_request = st->lim.max_inbuf;
	TAILQ_INIT(&st->listeners);
	TAILQ_INIT(&st->conns);
	TAILQ_INIT(&st->dead);
	TAILQ_INIT(&st->flushq);
	st->kv = kv_new(&store_kv_ops);
	st->reaper = event_new(base, -1, 0, store_reapcb, st);
	if (st->kv == NULL || st->reaper == NULL) {
		kv_free(st->kv);
		if (st->reaper != NULL)
			event_free(st->reaper);
		free(st);
		return NULL;
	}
	return st;
}

/* Close everything and free the store. */
void
store_free(struct store *st)
{
	struct store_listener *l;
	struct store_conn *c;

	if (st == NULL)
		return;
	while ((l = TAILQ_FIRST(&st->listeners)) != NULL) {
		TAILQ_REMOVE(&st->listeners, l, link);
		evtimer_del(&l->retry);
		evconnlistener_free(l->lev);
		free(l);
	}
	while ((c = TAILQ_FIRST(&st->conns)) != NULL)
		store_conn_drop(c, LOG_LVL_DEBUG, "store shut down");
	store_reapcb(-1, 0, st);
	kv_free(st->kv);
	event_free(st->reaper);
	free(st->tcpstore_allow);
	free(st);
}

/*
 * Drop all keys, queues, waiters and TCPStore clients; keep listeners,
 * native connections, and connections whose dialect is not known yet (no
 * TCPStore request from them has been served: they may be agents whose
 * hello is still in flight).
 */
void
store_reset(struct store *st)
{
	struct store_conn *c, *next;

	kv_reset(st->kv);
	for (c = TAILQ_FIRST(&st->conns); c != NULL; c = next) {
		next = TAILQ_NEXT(c, link);
		if (c->dialect == WIRE_V1 || c->dialect == WIRE_V2)
			store_conn_drop(c, LOG_LVL_DEBUG, "store reset");
	}
}

/* Only peers in list may speak the TCPStore dialects (NULL: anyone). */
int
store_set_tcpstore_allow(struct store *st, const char *list, char *err,
    size_t errlen)
{
	struct acl *a = NULL;

	if (list != NULL) {
		if ((a = malloc(sizeof *a)) == NULL) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		if (acl_parse(a, list, err, errlen) == -1) {
			free(a);
			return -1;
		}
	}
	free(st->tcpstore_allow);
	st->tcpstore_allow = a;
	return 0;
}

/* Hand native-protocol connections to ops (NULL: refuse them). */
void
store_set_native(struct store *st, const struct store_native_ops *ops,
    void *arg)
{
	st->has_native = ops != NULL && ops->on_input != NULL;
	if (ops != NULL)
		st->native = *ops;
	st->native_arg = arg;
}

/* Queue bytes to a native connection; -1 if it is gone or over max-output. */
int
store_conn_write(struct store_conn *c, const void *p, size_t len)
{
	if (c->dead || c->closing)
		return -1;
	store_send(c, p, len);
	return c->dead ? -1 : 0;
}

/* Close a native connection once its pending output is written. */
void
store_conn_close(struct store_conn *c)
{
	if (c->dead || c->closing)
		return;
	c->closing = 1;
	event_del(&c->rev);
	store_conn_schedule(c);
}

/* Attach the engine's data to a connection. */
void
store_conn_set_data(struct store_conn *c, void *data)
{
	c->data = data;
}

/* The engine's data of a connection. */
void *
store_conn_get_data(const struct store_conn *c)
{
	return c->data;
}

/* "addr:port" of the peer. */
const char *
store_conn_peer(const struct store_conn *c)
{
	return c->peer;
}

_Static_assert(WOP__COUNT <= STORE_STATS_NOPS, "STORE_STATS_NOPS too small");

/* Counters for /metrics; walks the open connections (scrapes are rare). */
void
store_stats(const struct store *st, struct store_stats *out)
{
	const struct store_conn *c;

	*out = st->stats;
	memset(out->conns, 0, sizeof out->conns);
	out->waiting = 0;
	TAILQ_FOREACH(c, &st->conns, link) {
		if ((unsigned)c->dialect < 4)
			out->conns[c->dialect]++;
		if (c->kc != NULL && kv_client_outstanding(c->kc) > 0)
			out->waiting++;
	}
	out->keys = kv_count(st->kv);
}

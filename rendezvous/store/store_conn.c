/*
 * store_conn.c: a store connection's life (store_impl.h): set up for an
 * accepted socket, moved between states only by store_conn_enter(),
 * dropped with a logged reason, and freed on the next loop turn, never
 * inside a callback that may still use it.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "acl.h"
#include "log.h"
#include "sock.h"
#include "store.h"
#include "store_impl.h"

static const char *const store_cstate_names[] = {
	"NEW", "TCPSTORE", "NATIVE", "CLOSING", "DEAD"
};
static const char *const store_dialect_names[] = {
	"unknown", "1.13", "2.x", "native"
};

_Static_assert(sizeof(store_cstate_names) / sizeof(store_cstate_names[0]) ==
    STORE_C__COUNT, "store_cstate_names does not match enum store_cstate");
_Static_assert(sizeof(store_dialect_names) / sizeof(store_dialect_names[0])
    == WIRE__DIALECTS, "store_dialect_names does not match wire_dialect");

/* The name of a dialect for log lines. */
static const char *
store_conn_dialect(const struct store_conn *c)
{
	return (unsigned)c->dialect < 4 ? store_dialect_names[c->dialect] : "?";
}

/* Move c to state s, logging `old -> new`; the only place c->state changes. */
void
store_conn_enter(struct store_conn *c, enum store_cstate s)
{
	if (c->state == s)
		return;
	log_debug("store: connection peer=%s dialect=%s %s -> %s", c->peer,
	    store_conn_dialect(c), store_cstate_names[c->state],
	    store_cstate_names[s]);
	c->state = s;
}

/* Set up a connection for an accepted socket; NULL on ENOMEM. */
struct store_conn *
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
	c->state = STORE_C_NEW;
	wire_req_init(&c->req);
#ifndef __linux__
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
#endif	/* Linux: inherited from the listener (store_listen_bind_one) */
	sock_addr_text(sa, salen, c->peer, sizeof c->peer);
	c->tcpstore_ok = st->tcpstore_allow == NULL ||
	    acl_match(st->tcpstore_allow, sa, salen);
	event_assign(&c->rev, st->base, fd, EV_READ | EV_PERSIST,
	    store_in_readcb, c);
	event_assign(&c->wev, st->base, fd, EV_WRITE | EV_PERSIST,
	    store_out_writecb, c);
	event_assign(&c->idle, st->base, -1, 0, store_in_idlecb, c);
	event_assign(&c->deadline, st->base, -1, 0, store_in_deadlinecb, c);
	TAILQ_INSERT_TAIL(&st->conns, c, link);
	st->nconns++;
	st->stats.accepted++;
	event_add(&c->rev, NULL);
	log_debug("store: connection accepted peer=%s conns=%zu", c->peer,
	    st->nconns);
	return c;
}

/* Free a dead connection: last best-effort flush, hooks, fd, memory. */
static void
store_conn_free(struct store_conn *c)
{
	struct store *st = c->st;

	if (!c->slow && evbuffer_get_length(c->out) > 0)
		(void)store_out_write(c);
	if (c->dialect == WIRE_NATIVE && st->has_native &&
	    st->native.on_close != NULL)
		st->native.on_close(c, st->native_arg);
	kv_client_free(c->kc);
	event_del(&c->rev);
	event_del(&c->wev);
	event_del(&c->idle);
	event_del(&c->deadline);
	close(c->fd);
	st->outbuf -= evbuffer_get_length(c->out);
	evbuffer_free(c->out);
	if (c->nin != NULL)
		evbuffer_free(c->nin);
	free(c->ibuf);
	store_budget_grow(st, c->icap, 0);
	st->nconns--;
	free(c);
}

/* Next loop turn (the store's reaper event): free every dead connection. */
void
store_conn_reap(evutil_socket_t fd, short what, void *arg)
{
	struct store *st = arg;
	struct store_conn *c;

	while ((c = TAILQ_FIRST(&st->dead)) != NULL) {
		TAILQ_REMOVE(&st->dead, c, link);
		store_conn_free(c);
	}
}

/* Log a line at a log.h level. */
static void
store_conn_log(int level, const char *line)
{
	if (level <= LOG_LVL_WARN)
		log_warnx("%s", line);
	else if (level == LOG_LVL_INFO)
		log_info("%s", line);
	else
		log_debug("%s", line);
}

/* Mark c DEAD with a logged reason; it is freed on the next loop turn. */
void
store_conn_drop(struct store_conn *c, int level, const char *fmt, ...)
{
	struct store *st = c->st;
	char why[512], line[640];
	va_list ap;

	if (c->state == STORE_C_DEAD)
		return;
	if (level <= log_getlevel()) {
		va_start(ap, fmt);
		vsnprintf(why, sizeof why, fmt, ap);
		va_end(ap);
		snprintf(line, sizeof line, "store: connection closed peer=%s "
		    "reason=\"%s\"", c->peer, why);
		store_conn_log(level, line);
	}
	store_conn_enter(c, STORE_C_DEAD);
	event_del(&c->rev);
	event_del(&c->wev);
	event_del(&c->idle);
	event_del(&c->deadline);
	store_budget_forget(c);
	if (c->on_flushq) {
		TAILQ_REMOVE(&st->flushq, c, flink);
		c->on_flushq = 0;
	}
	TAILQ_REMOVE(&st->conns, c, link);
	TAILQ_INSERT_TAIL(&st->dead, c, link);
	event_active(st->reaper, EV_TIMEOUT, 1);
}

/* Queue bytes to a native connection; -1 if it is gone or over max-output. */
int
store_conn_write(struct store_conn *c, const void *p, size_t len)
{
	if (c->state >= STORE_C_CLOSING)
		return -1;
	store_out_send(c, p, len);
	return c->state == STORE_C_DEAD ? -1 : 0;
}

/* Close a native connection once its pending output is written. */
void
store_conn_close(struct store_conn *c)
{
	if (c->state >= STORE_C_CLOSING)
		return;
	store_conn_enter(c, STORE_C_CLOSING);
	event_del(&c->rev);
	store_out_schedule(c);
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

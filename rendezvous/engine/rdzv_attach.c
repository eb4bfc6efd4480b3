/*
 * rdzv_attach.c: serves the rendezvous engine on a store's native
 * connections (those starting with WIRE_NATIVE_MAGIC): frames in through
 * rdzv_peer_input(), replies encoded and written out.  Kept apart from
 * the engine's other files so the engine links without the store.
 */
#include <sys/types.h>

#include <string.h>

#include <event2/buffer.h>

#include "log.h"
#include "rdzv.h"
#include "store.h"

/* Transport over a store's native connections: encode and write. */
static void
store_io_send(void *conn, const struct rdzv_msg *m, void *arg)
{
	unsigned char buf[4 + RDZV_FRAME_MAX];
	ssize_t n;

	if ((n = rdzv_proto_encode(m, buf, sizeof(buf))) < 0) {
		log_warnx("rdzv: cannot encode %s", rdzv_proto_opname(m->op));
		return;
	}
	if (store_conn_write(conn, buf, (size_t)n) == -1)
		log_debug("rdzv: write to %s failed", store_conn_peer(conn));
}

/* The peer's address without its port ("addr:port", "[v6]:port"). */
static const char *
store_io_addr(void *conn, char *buf, size_t len)
{
	const char *peer = store_conn_peer(conn), *colon = strrchr(peer, ':');
	size_t n = colon != NULL ? (size_t)(colon - peer) : strlen(peer);

	if (n > 0 && peer[0] == '[' && peer[n - 1] == ']') {
		peer++;
		n -= 2;
	}
	if (n == 0 || n >= len)
		return NULL;
	memcpy(buf, peer, n);
	buf[n] = '\0';
	return buf;
}

/* Store hook: bytes from a native connection. */
static int
store_on_input(struct store_conn *c, struct evbuffer *in, void *arg)
{
	struct rdzv_peer *p = store_conn_get_data(c);

	if (p == NULL) {
		if ((p = rdzv_peer_new(arg, c)) == NULL)
			return -1;
		store_conn_set_data(c, p);
	}
	return rdzv_peer_input(p, in);
}

/* Store hook: a native connection is going away. */
static void
store_on_close(struct store_conn *c, void *arg)
{
	rdzv_peer_gone(store_conn_get_data(c));
	store_conn_set_data(c, NULL);
}

/* Serve a new engine on the store's native connections. */
struct rdzv *
rdzv_attach(struct store *s, struct event_base *base)
{
	static const struct rdzv_io io = { store_io_send, store_io_addr };
	static const struct store_native_ops ops = { store_on_input,
	    store_on_close };
	struct rdzv *r;

	if ((r = rdzv_new(base, &io, NULL)) == NULL)
		return NULL;
	store_set_native(s, &ops, r);
	return r;
}

/*
 * store.h: the TCPStore-compatible store server, embeddable in any libevent
 * loop.  cgrun-rdzvd runs one on its port; the launcher runs one per job as
 * the workers' store (standalone mode, and the group-rank-0 agent of every
 * multi-node round).
 *
 * Contract:
 *  - store_listen() binds and listens before returning, so the port it
 *    reports is already accepting: publish it without a race.
 *  - store_reset() empties keys, queues and waiters and closes every
 *    TCPStore-dialect client connection, keeping the listeners: each
 *    attempt of a job gets a fresh, empty store on the same port.
 *  - Connections whose first bytes are WIRE_NATIVE_MAGIC are handed to the
 *    native handler (the rendezvous engine) if one is set, else closed.
 *  - Memory for requests is bounded per connection (max_inbuf, raised to
 *    hold one SET of max_key and max_value) and for all connections
 *    (max_inbuf_total: past it, connections in the middle of a request
 *    are not read, back-pressure rather than buffering); a request must
 *    be complete request_timeout_ms after its first byte.
 *  - Memory for replies is bounded per connection (a connection with
 *    out_high unsent bytes is not read until half of that is left; one
 *    with max_outbuf unsent is dropped) and for all connections (past
 *    max_outbuf_total, raised to 16 values of max_value, the connection
 *    with the most unsent bytes is dropped).
 */
#ifndef CGRUN_STORE_H
#define CGRUN_STORE_H

#include <stddef.h>
#include <stdint.h>

struct event_base;
struct evbuffer;
struct store;
struct store_conn;

/* Named limits; defaults at least as large as torch's own store accepts. */
struct store_limits {
	size_t	max_key;		/* bytes in one key */
	size_t	max_value;		/* bytes in one value */
	size_t	max_keys_per_req;	/* keys in CHECK/WAIT/MULTI_* */
	size_t	max_conns;		/* open client connections */
	size_t	max_outbuf;		/* unsent reply bytes per connection */
	size_t	out_high;		/* unsent bytes: stop reading; 0 = never */
	size_t	max_outbuf_total;	/* unsent reply bytes, all connections */
	size_t	max_inbuf;		/* buffered request bytes per connection */
	size_t	max_inbuf_total;	/* buffered request bytes, all connections */
	unsigned idle_timeout_ms;	/* half-sent request; 0 = none */
	unsigned request_timeout_ms;	/* first to last byte of a request; 0 = none */
};

/* Hooks for native-protocol connections (the rendezvous engine). */
struct store_native_ops {
	/* New data in `in` (magic already consumed); return -1 to close. */
	int	(*on_input)(struct store_conn *, struct evbuffer *in, void *arg);
	/* The connection is going away (peer closed, error, or reset). */
	void	(*on_close)(struct store_conn *, void *arg);
};

void	store_limits_default(struct store_limits *);

struct store *store_new(struct event_base *, const struct store_limits *);
void	store_free(struct store *);

/* Bind host:port (port 0: ephemeral), listen, report the bound port;
 * -1 with err and errno (EADDRINUSE: the port is taken). */
int	store_listen(struct store *, const char *host, int port,
	    int *bound_port, char *err, size_t errlen);
/* Serve an already listening socket (systemd socket activation). */
int	store_adopt_listener(struct store *, int fd, char *err, size_t errlen);
/* Drop all keys, queues, waiters and TCPStore clients; keep listeners. */
void	store_reset(struct store *);

void	store_set_native(struct store *, const struct store_native_ops *, void *arg);
/* Only peers in the CIDR list (acl.h) may speak the TCPStore dialects;
 * others are dropped once their first bytes show it (native clients
 * authenticate instead).  NULL: anyone.  -1 with err on a bad list. */
int	store_set_tcpstore_allow(struct store *, const char *list, char *err,
	    size_t errlen);

/* Counters for cgrun-rdzvd's /metrics (http.c); open connections, waiters
 * and keys are counted when asked, the rest as they happen. */
#define STORE_STATS_NOPS 32	/* >= WOP__COUNT (wire.h) */
struct store_stats {
	size_t		conns[4];	/* open, by enum wire_dialect */
	size_t		waiting;	/* connections blocked in WAIT */
	size_t		keys;		/* keys stored */
	uint64_t	accepted;	/* connections accepted, ever */
	uint64_t	requests[STORE_STATS_NOPS];	/* by enum wire_op */
	uint64_t	bytes_in, bytes_out;
	size_t		inbuf;		/* request bytes buffered, all connections */
	size_t		paused;		/* connections not read (input budget) */
	uint64_t	paused_total;	/* times a connection was paused */
	size_t		outbuf;		/* unsent reply bytes, all connections */
	uint64_t	out_paused_total;	/* times paused by output-high-water */
	uint64_t	out_dropped;	/* dropped by max-output-total */
};
void	store_stats(const struct store *, struct store_stats *);

/* Native connection helpers for the rendezvous engine. */
int	store_conn_write(struct store_conn *, const void *, size_t);
void	store_conn_close(struct store_conn *);	/* after pending output */
void	store_conn_set_data(struct store_conn *, void *);
void   *store_conn_get_data(const struct store_conn *);
const char *store_conn_peer(const struct store_conn *);	/* "addr:port" */

#endif /* CGRUN_STORE_H */

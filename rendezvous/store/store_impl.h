/*
 * store_impl.h: the insides of the store server (store.h), shared by the
 * files of rendezvous/store/ and by nothing else:
 *
 *	store.c		the store object: limits, reset, native hook, stats
 *	store_conn.c	a connection's life: accept, states, drop, reap
 *	store_in.c	input: read, dialect detection, framing, native hand-off
 *	store_ops.c	the TCPStore request handlers (op_*) and kv callbacks
 *	store_out.c	output: reply bytes, the end-of-event flush, the
 *			output watermarks and max-output-total
 *	store_listen.c	listening sockets: bind, accept, pause on EMFILE
 *	store_budget.c	the input budget: buffered request bytes of all
 *			connections, pausing readers over max-input-total
 *
 * A connection's life is one enum changed only by store_conn_enter(),
 * which logs `old -> new`:
 *
 *	NEW ------> TCPSTORE ---------------------------> DEAD
 *	 |  first bytes: 1.13 or 2.x, and tcpstore-allow    ^
 *	 +--------> NATIVE ---> CLOSING --------------------+
 *	    "CGRN..." magic    store_conn_close()  output written
 *
 * Any state may go to DEAD (store_conn_drop(): peer closed, error, limit,
 * reset); a DEAD connection is freed on the next loop turn.
 *
 * Apart from its state, a connection in the middle of a request may be
 * paused (store_budget.c: not read while max-input-total is used up); any
 * connection may be out_paused (store_out.c: not read while its unsent
 * output is over output-high-water, until half of that is left; requests
 * it already sent wait in its kept buffer); and it has two timers: idle
 * (restarted by every byte) and deadline (started by a request's first
 * byte, moved only by a request served), both stopped while out_paused.
 */
#ifndef CGRUN_STORE_IMPL_H
#define CGRUN_STORE_IMPL_H

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/queue.h>

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <event2/event.h>
#include <event2/event_struct.h>

#include "kv.h"
#include "wire.h"

/* store.h first (not included here, so the two never include each other). */
#ifndef CGRUN_STORE_H
#error "include store.h before store_impl.h"
#endif

#define STORE_RBUF		(64 * 1024)	/* bytes read per recv() */
#define STORE_PEER_LEN		64		/* "addr:port" of a peer */

/* Where a connection is in its life (see the diagram above). */
enum store_cstate {
	STORE_C_NEW,		/* accepted; dialect not known yet */
	STORE_C_TCPSTORE,	/* serving TCPStore requests (1.13 or 2.x) */
	STORE_C_NATIVE,		/* bytes go to the rendezvous engine */
	STORE_C_CLOSING,	/* no more input; closes once output is out */
	STORE_C_DEAD,		/* marked dead; freed on the next loop turn */
	STORE_C__COUNT
};

struct store_conn {
	TAILQ_ENTRY(store_conn)	 link;	/* st->conns or st->dead */
	TAILQ_ENTRY(store_conn)	 flink;	/* st->flushq */
	TAILQ_ENTRY(store_conn)	 plink;	/* st->paused */
	struct store		*st;
	int			 fd;
	enum store_cstate	 state;	/* only via store_conn_enter() */
	enum wire_dialect	 dialect;
	unsigned		 on_flushq:1,	/* queued for the flush */
				 validated:1,	/* 2.x VALIDATE seen */
				 slow:1,	/* dropped as a slow reader */
				 tcpstore_ok:1,	/* tcpstore-allow */
				 paused:1,	/* on st->paused: not read */
				 out_paused:1;	/* not read: output over high */
	struct event		 rev, wev, idle, deadline;
	uint64_t		 served;	/* requests served (deadline) */
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
TAILQ_HEAD(store_listenerq, store_listener);

struct store {
	struct event_base	*base;
	struct store_limits	 lim;
	struct wire_limits	 wlim;
	struct kv		*kv;
	struct store_native_ops	 native;
	void			*native_arg;
	int			 has_native;
	struct acl		*tcpstore_allow;	/* NULL: anyone */
	struct store_listenerq	 listeners;
	struct store_connq	 conns, dead, flushq, paused;
	size_t			 nconns;
	size_t			 inbuf;		/* sum of every c->icap */
	size_t			 npaused;
	size_t			 outbuf;	/* sum of every c->out's length */
	time_t			 out_logged;	/* rate limit of the pause line */
	struct store_conn	*leader;	/* always read (store_budget.c) */
	time_t			 budget_logged;	/* rate limit of the log line */
	time_t			 deadline_logged;	/* request-timeout's */
	uint64_t		 deadline_quiet;	/* drops not logged since */
	int			 in_batch;
	struct event		*reaper;
	time_t			 full_logged;
	struct store_stats	 stats;		/* counters (store_stats()) */
	uint8_t			 rbuf[STORE_RBUF];
};

/* store_conn.c */
struct store_conn *store_conn_new(struct store *, int fd,
	    const struct sockaddr *, socklen_t);
void	store_conn_enter(struct store_conn *, enum store_cstate);
void	store_conn_drop(struct store_conn *, int level, const char *, ...)
	    __attribute__((format(printf, 3, 4)));
void	store_conn_reap(evutil_socket_t, short, void *);

/* store_in.c */
void	store_in_readcb(evutil_socket_t, short, void *);
void	store_in_idlecb(evutil_socket_t, short, void *);
void	store_in_deadlinecb(evutil_socket_t, short, void *);
void	store_in_resume(struct store_conn *);

/* store_budget.c */
void	store_budget_grow(struct store *, size_t old_cap, size_t new_cap);
int	store_budget_full(const struct store *);
void	store_budget_pause(struct store_conn *);
void	store_budget_forget(struct store_conn *);

/* store_ops.c */
extern void (*const store_ops[WOP__COUNT])(struct store_conn *,
	    const struct wire_req *);
extern const struct kv_ops store_ops_kv;

/* store_out.c */
void	store_out_send(struct store_conn *, const void *, size_t);
void	store_out_u8(struct store_conn *, uint8_t);
void	store_out_i64(struct store_conn *, int64_t);
void	store_out_bytes(struct store_conn *, const uint8_t *, size_t);
void	store_out_schedule(struct store_conn *);
void	store_out_flush_all(struct store *);
int	store_out_write(struct store_conn *);
void	store_out_writecb(evutil_socket_t, short, void *);
int	store_out_watermark(size_t unsent, size_t high, int paused);
int	store_out_over(const struct store_conn *);
void	store_out_pause(struct store_conn *);

/* store_listen.c */
void	store_listen_free_all(struct store *);

#endif /* CGRUN_STORE_IMPL_H */

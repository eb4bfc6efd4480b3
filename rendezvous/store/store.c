/*
 * store.c: the TCPStore-compatible store server (see store.h) on one
 * libevent loop: the store object, its limits, reset, the native hook and
 * the counters.  Its connections, input, requests, output and listeners
 * each have their own file (store_impl.h lists them).
 */
#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "acl.h"
#include "errbuf.h"
#include "log.h"
#include "store.h"
#include "store_impl.h"

/* Defaults of the limits (see docs/store.md). */
#define STORE_DEFAULT_MAX_CONNS		65536
#define STORE_DEFAULT_MAX_OUTBUF	(128u * 1024 * 1024)
#define STORE_DEFAULT_OUT_HIGH		(16u * 1024 * 1024)
#define STORE_DEFAULT_MAX_OUTBUF_TOTAL	(1024u * 1024 * 1024)
/* max-output-total holds at least this many values of max-value-size. */
#define STORE_OUTBUF_TOTAL_VALUES	16
#define STORE_DEFAULT_IDLE_TIMEOUT_MS	60000	/* a half-sent request */
#define STORE_DEFAULT_MAX_INBUF_TOTAL	(64u * 1024 * 1024)
#define STORE_DEFAULT_REQUEST_TIMEOUT_MS 30000	/* first to last byte */
/* Bytes of a SET around its key and value: opcode, two u64 lengths. */
#define STORE_SET_OVERHEAD		17

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
	l->out_high = STORE_DEFAULT_OUT_HIGH;
	l->max_outbuf_total = STORE_DEFAULT_MAX_OUTBUF_TOTAL;
	l->max_inbuf = WIRE_DEFAULT_MAX_REQUEST;
	l->max_inbuf_total = STORE_DEFAULT_MAX_INBUF_TOTAL;
	l->idle_timeout_ms = STORE_DEFAULT_IDLE_TIMEOUT_MS;
	l->request_timeout_ms = STORE_DEFAULT_REQUEST_TIMEOUT_MS;
}

/* The largest request: max-input, but at least one SET of the largest key
 * and the largest value, so a value of exactly max-value-size fits. */
static size_t
store_max_request(const struct store_limits *l)
{
	size_t set = STORE_SET_OVERHEAD + l->max_key + l->max_value;

	return l->max_inbuf > set ? l->max_inbuf : set;
}

/* The reply bytes of all connections: max-output-total, but at least
 * STORE_OUTBUF_TOTAL_VALUES replies of the largest value, so ranks that
 * fetch large values at once are never cut off (0: no limit). */
static size_t
store_max_outbuf_total(const struct store_limits *l)
{
	size_t floor = STORE_OUTBUF_TOTAL_VALUES * l->max_value;

	if (l->max_outbuf_total == 0)
		return 0;
	return l->max_outbuf_total > floor ? l->max_outbuf_total : floor;
}

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
	st->lim.max_outbuf_total = store_max_outbuf_total(&st->lim);
	st->wlim.max_key = st->lim.max_key;
	st->wlim.max_value = st->lim.max_value;
	st->wlim.max_keys = st->lim.max_keys_per_req;
	st->wlim.max_request = store_max_request(&st->lim);
	TAILQ_INIT(&st->listeners);
	TAILQ_INIT(&st->paused);
	TAILQ_INIT(&st->conns);
	TAILQ_INIT(&st->dead);
	TAILQ_INIT(&st->flushq);
	st->kv = kv_new(&store_ops_kv);
	st->reaper = event_new(base, -1, 0, store_conn_reap, st);
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
	struct store_conn *c;

	if (st == NULL)
		return;
	store_listen_free_all(st);
	while ((c = TAILQ_FIRST(&st->conns)) != NULL)
		store_conn_drop(c, LOG_LVL_DEBUG, "store shut down");
	store_conn_reap(-1, 0, st);
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
		if (c->state == STORE_C_TCPSTORE)
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
			errbuf_set(err, errlen, "out of memory");
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
	out->inbuf = st->inbuf;
	out->paused = st->npaused;
	out->outbuf = st->outbuf;
}

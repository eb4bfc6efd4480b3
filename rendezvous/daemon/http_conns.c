/*
 * http_conns.c: an HTTP server's connections, counted through the
 * bufferevents made for evhttp, capped, and accepting paused at the cap
 * or when accept() runs out of descriptors (http_conns.h).
 */
#include <sys/queue.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/listener.h>
#include <event2/util.h>

#include "http_conns.h"
#include "log.h"

struct http_conns {
	LIST_ENTRY(http_conns)	 entry;		/* http_conns_all */
	struct evhttp		*evh;
	struct event		*tick;		/* sweep, accept again */
	struct bufferevent	*bev[HTTP_MAX_CONNS];	/* one ref each */
	size_t			 open;
	int			 failed;	/* accept() failed: pause a tick */
	int			 said_fail;	/* said, until one is accepted */
	int			 said_full;	/* the cap was said once */
};

/* Every server, for the listeners' error callback, which is handed the
 * evhttp (the listener's argument), not its http_conns. */
static LIST_HEAD(, http_conns) http_conns_all =
    LIST_HEAD_INITIALIZER(http_conns_all);

/* Enable or disable one listener (*arg: whether to accept). */
static void
http_conns_listen(struct evhttp_bound_socket *bs, void *arg)
{
	struct evconnlistener *lev = evhttp_bound_socket_get_listener(bs);

	if (*(const int *)arg)
		evconnlistener_enable(lev);
	else
		evconnlistener_disable(lev);
}

/*
 * Accept while below the cap and not pausing after an accept() failure;
 * while not accepting, tick (sweep, try again).  Accepting, the sweep at
 * each new connection suffices: an idle agent scraped over one keep-alive
 * connection is not woken for nothing, and what lingers is bounded by the
 * cap.
 */
static void
http_conns_update(struct http_conns *c)
{
	struct timeval tv = { 0, HTTP_TICK_MS * 1000 };
	int on = c->open < HTTP_MAX_CONNS && !c->failed;

	evhttp_foreach_bound_socket(c->evh, http_conns_listen, &on);
	if (!on && !evtimer_pending(c->tick, NULL))
		evtimer_add(c->tick, &tv);
}

/*
 * Let go of the connections evhttp has freed: bufferevent_decref() frees
 * one (and closes its socket) when ours was the last reference; one still
 * in use gets ours back at once (nothing runs in between).
 */
static void
http_conns_sweep(struct http_conns *c)
{
	size_t i = 0;

	while (i < c->open) {
		if (bufferevent_decref(c->bev[i]) == 1) {
			c->bev[i] = c->bev[--c->open];
			continue;
		}
		bufferevent_incref(c->bev[i]);
		i++;
	}
}

/*
 * evhttp's bufferevent for a new connection, counted: a socket
 * bufferevent that closes its fd when freed, with a reference of ours.
 * NULL when out of memory (evhttp then makes its own, not counted).
 */
static struct bufferevent *
http_conns_bev(struct event_base *base, void *arg)
{
	struct http_conns *c = arg;
	struct bufferevent *bev;

	http_conns_sweep(c);
	if ((bev = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE)) ==
	    NULL)
		return NULL;
	c->said_fail = 0;
	if (c->open < HTTP_MAX_CONNS) {	/* else paused: not reached */
		bufferevent_incref(bev);
		c->bev[c->open++] = bev;
	}
	if (c->open == HTTP_MAX_CONNS && !c->said_full) {
		log_warnx("http: %d connections open: more wait until one "
		    "closes", HTTP_MAX_CONNS);
		c->said_full = 1;
	}
	http_conns_update(c);
	return bev;
}

/*
 * accept() failed, not for a reason libevent retries on its own (EMFILE,
 * ENFILE, ENOBUFS, ENOMEM): stop accepting for a tick, where evhttp would
 * call accept() again at once, for ever.  arg is the listener's: the
 * evhttp.
 */
static void
http_conns_accept_error(struct evconnlistener *lev, void *arg)
{
	int err = EVUTIL_SOCKET_ERROR();
	struct http_conns *c;

	LIST_FOREACH(c, &http_conns_all, entry)
		if (c->evh == arg)
			break;
	if (c == NULL) {
		evconnlistener_disable(lev);
		return;
	}
	if (!c->said_fail)
		log_warnx("http: accept: %s; trying again every %d ms",
		    strerror(err), HTTP_TICK_MS);
	c->said_fail = 1;
	c->failed = 1;
	http_conns_update(c);
}

/* Every HTTP_TICK_MS while needed: sweep, end a pause, accept again. */
static void
http_conns_tick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct http_conns *c = arg;

	c->failed = 0;
	http_conns_sweep(c);
	http_conns_update(c);
}

/* Count and cap evh's connections (see http_conns.h). */
struct http_conns *
http_conns_new(struct event_base *base, struct evhttp *evh)
{
	struct http_conns *c;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	if ((c->tick = evtimer_new(base, http_conns_tick_cb, c)) == NULL) {
		free(c);
		return NULL;
	}
	c->evh = evh;
	LIST_INSERT_HEAD(&http_conns_all, c, entry);
	evhttp_set_bevcb(evh, http_conns_bev, c);
	return c;
}

/* Let go of every connection (evhttp freed them all already). */
void
http_conns_free(struct http_conns *c)
{
	size_t i;

	if (c == NULL)
		return;
	for (i = 0; i < c->open; i++)
		bufferevent_decref(c->bev[i]);
	LIST_REMOVE(c, entry);
	event_free(c->tick);
	free(c);
}

/* Pause bs's listener when its accept() fails (see above). */
void
http_conns_watch(struct http_conns *c, struct evhttp_bound_socket *bs)
{
	evconnlistener_set_error_cb(evhttp_bound_socket_get_listener(bs),
	    http_conns_accept_error);
	http_conns_update(c);
}

/*
 * http_conns.h: the connections an HTTP server (http.c) holds at once.
 * libevent 2.1's evhttp accepts every connection it is offered and keeps
 * it until the client closes it or stays silent for its timeout, so a
 * client that opens many (or a slowloris that trickles a byte now and
 * then) would take the process's file descriptors: cgrun's agent could
 * then start no worker.  Here each connection's bufferevent is made for
 * evhttp (evhttp_set_bevcb) and counted: at HTTP_MAX_CONNS the server
 * stops accepting until one is gone, and after an accept() that failed
 * for want of descriptors or memory it pauses for HTTP_TICK_MS instead
 * of evhttp's busy loop.  The clients beyond wait in the kernel's
 * backlog, costing the process nothing.
 *
 * evhttp 2.1 says nothing when it frees a connection, so each bufferevent
 * carries one reference of ours (bufferevent_incref): a connection is
 * gone when ours is the only one left, which a sweep finds at each new
 * connection and, while the server does not accept, every HTTP_TICK_MS.
 * The bufferevents close their socket when freed (BEV_OPT_CLOSE_ON_FREE,
 * so evhttp leaves it open): until the sweep lets go, the socket of a
 * connection evhttp is done with stays open (at most HTTP_MAX_CONNS of
 * them), and its number cannot be handed to another socket under the
 * events still registered for it.
 */
#ifndef CGRUN_HTTP_CONNS_H
#define CGRUN_HTTP_CONNS_H

struct event_base;
struct evhttp;
struct evhttp_bound_socket;
struct http_conns;

#define HTTP_MAX_CONNS		64	/* connections served at once */
#define HTTP_TICK_MS		100	/* sweep; accept again after EMFILE */

/* Count and cap evh's connections; NULL when out of memory. */
struct http_conns *http_conns_new(struct event_base *, struct evhttp *evh);
/* Let go of every connection; after evhttp_free(evh).  NULL ok. */
void	http_conns_free(struct http_conns *);
/* A listener of evh's: its accept() failures pause it. */
void	http_conns_watch(struct http_conns *, struct evhttp_bound_socket *);

#endif /* CGRUN_HTTP_CONNS_H */

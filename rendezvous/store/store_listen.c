/*
 * store_listen.c: the store server's listening sockets (store_impl.h):
 * bind every address of a host on one port (port 0: one free port for
 * all), adopt a socket from systemd, accept in a loop, refuse beyond
 * max-connections, and pause accepting on EMFILE and friends.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/queue.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <netdb.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/event_struct.h>
#include <event2/listener.h>

#include "errbuf.h"
#include "log.h"
#include "sock.h"
#include "store.h"
#include "store_impl.h"

#define STORE_BACKLOG		65535		/* clamped by somaxconn */
#define STORE_ACCEPT_RETRY_MS	100		/* after EMFILE and friends */

struct store_listener {
	TAILQ_ENTRY(store_listener) link;
	struct store		*st;
	struct evconnlistener	*lev;
	struct event		 retry;
};

/* A connection arrived (the listener accepts in a loop). */
static void
store_listen_acceptcb(struct evconnlistener *lev, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct store_listener *l = arg;
	struct store *st = l->st;
	char peer[STORE_PEER_LEN];
	time_t now;

	if (st->nconns >= st->lim.max_conns) {
		now = time(NULL);
		if (now != st->full_logged) {
			sock_addr_text(sa, (socklen_t)salen, peer, sizeof peer);
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
store_listen_retrycb(evutil_socket_t fd, short what, void *arg)
{
	struct store_listener *l = arg;

	evconnlistener_enable(l->lev);
}

/* accept() failed: pause this listener on resource exhaustion. */
static void
store_listen_errcb(struct evconnlistener *lev, void *arg)
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
store_listen_add(struct store *st, int fd, char *err, size_t errlen)
{
	struct store_listener *l;

	if ((l = calloc(1, sizeof *l)) == NULL) {
		errbuf_set(err, errlen, "out of memory");
		return -1;
	}
	l->st = st;
	l->lev = evconnlistener_new(st->base, store_listen_acceptcb, l,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC | LEV_OPT_REUSEABLE,
	    0, fd);	/* 0: already listening (-1 would re-listen with 128) */
	if (l->lev == NULL) {
		errbuf_set(err, errlen, "evconnlistener_new failed");
		free(l);
		return -1;
	}
	evconnlistener_set_error_cb(l->lev, store_listen_errcb);
	evtimer_assign(&l->retry, st->base, store_listen_retrycb, l);
	TAILQ_INSERT_TAIL(&st->listeners, l, link);
	return 0;
}

/* Open, bind and listen one socket for an address; -1 with err set. */
static int
store_listen_bind_one(const struct addrinfo *ai, int port, char *err,
    size_t errlen)
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
		errbuf_set(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	if (ai->ai_family == AF_INET6)
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
	if (bind(fd, (struct sockaddr *)&ss, ai->ai_addrlen) == -1 ||
	    listen(fd, STORE_BACKLOG) == -1) {
		int saved = errno;

		errbuf_set(err, errlen, "bind/listen port %d: %s", port,
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
store_listen_bind_all(const struct addrinfo *res, int *port, int *fds,
    int *busy, char *why, size_t whylen)
{
	const struct addrinfo *ai;
	int fd, n = 0, picked = *port == 0, p = *port;

	*busy = 0;
	for (ai = res; ai != NULL && n < STORE_MAX_ADDRS; ai = ai->ai_next) {
		if ((fd = store_listen_bind_one(ai, p, why, whylen)) == -1) {
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
 * On failure errno is the last bind's or listen's (EADDRINUSE: taken).
 */
int
store_listen(struct store *st, const char *host, int port, int *bound_port,
    char *err, size_t errlen)
{
	struct addrinfo hints, *res;
	char serv[16], why[256] = "no usable address";
	int fds[STORE_MAX_ADDRS], i, n = 0, rc, busy = 0, tries, p, ok = 0;
	int bind_errno = 0;

	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	if (host != NULL && (host[0] == '\0' || strcmp(host, "*") == 0))
		host = NULL;
	snprintf(serv, sizeof serv, "%d", port);
	if ((rc = getaddrinfo(host, serv, &hints, &res)) != 0) {
		errbuf_set(err, errlen, "%s: %s", host ? host : "*",
		    gai_strerror(rc));
		return -1;
	}
	for (tries = 0; tries < STORE_PORT_TRIES; tries++) {
		p = port;
		n = store_listen_bind_all(res, &p, fds, &busy, why, sizeof why);
		bind_errno = errno;
		if (!busy)
			break;
	}
	freeaddrinfo(res);
	for (i = 0; i < n; i++) {
		if (store_listen_add(st, fds[i], why, sizeof why) == -1)
			close(fds[i]);
		else
			ok++;
	}
	if (ok == 0) {
		errbuf_set(err, errlen, "%s: %s", host ? host : "*", why);
		errno = n == 0 && bind_errno != 0 ? bind_errno : ENOMEM;
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
		errbuf_set(err, errlen, "fd %d: %s", fd, strerror(errno));
		return -1;
	}
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	return store_listen_add(st, fd, err, errlen);
}

/* Close and free every listener of the store. */
void
store_listen_free_all(struct store *st)
{
	struct store_listener *l;

	while ((l = TAILQ_FIRST(&st->listeners)) != NULL) {
		TAILQ_REMOVE(&st->listeners, l, link);
		evtimer_del(&l->retry);
		evconnlistener_free(l->lev);
		free(l);
	}
}

/*
 * c10d_host.c: the rendezvous engine hosted by an agent (c10d_host.h),
 * as torchrun's is_host: when the c10d endpoint is this machine, the
 * agent serves the engine (rendezvous/engine/) on its own store, on the
 * endpoint's port, and the agent's c10d client connects to it like any
 * other node's.  A host name that resolves to loopback here (Debian's
 * "127.0.1.1 myhost") is served on every address, since the other nodes
 * reach this machine by their own resolution of the name.
 */
#include <sys/socket.h>
#include <sys/types.h>

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "c10d_host.h"
#include "errbuf.h"
#include "log.h"
#include "rdzv.h"
#include "store.h"

struct c10d_host {
	struct store	*store;		/* the engine's own store */
	struct rdzv	*engine;
};

/* Is addr one of this machine's interface addresses? */
static int
c10d_host_local_address(const struct sockaddr *sa)
{
	struct ifaddrs *ifs, *i;
	int found = 0;

	if (getifaddrs(&ifs) == -1)
		return 0;
	for (i = ifs; i != NULL && !found; i = i->ifa_next) {
		if (i->ifa_addr == NULL || i->ifa_addr->sa_family != sa->sa_family)
			continue;
		if (sa->sa_family == AF_INET)
			found = memcmp(&((const struct sockaddr_in *)(const void *)
			    sa)->sin_addr, &((struct sockaddr_in *)(void *)
			    i->ifa_addr)->sin_addr, sizeof(struct in_addr)) == 0;
		else if (sa->sa_family == AF_INET6)
			found = memcmp(&((const struct sockaddr_in6 *)
			    (const void *)sa)->sin6_addr, &((struct sockaddr_in6 *)
			    (void *)i->ifa_addr)->sin6_addr,
			    sizeof(struct in6_addr)) == 0;
	}
	freeifaddrs(ifs);
	return found;
}

/* torchrun's heuristic: is the endpoint host this machine? */
static int
c10d_host_is_me(const char *host)
{
	struct addrinfo hints, *res, *ai;
	char me[256];
	int found = 0;

	if (strcmp(host, "localhost") == 0)
		return 1;
	if (gethostname(me, sizeof(me)) == 0 && strcmp(me, host) == 0)
		return 1;
	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(host, NULL, &hints, &res) != 0)
		return 0;
	for (ai = res; ai != NULL && !found; ai = ai->ai_next)
		found = c10d_host_local_address(ai->ai_addr);
	freeaddrinfo(res);
	return found;
}

/* Loopback address (c10d_host.h)? */
int
c10d_host_sa_loopback(const struct sockaddr *sa)
{
	const struct sockaddr_in6 *s6;
	const uint8_t *b;

	if (sa->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)(const void *)sa)->
		    sin_addr.s_addr) >> 24) == 127;
	if (sa->sa_family != AF_INET6)
		return 0;
	s6 = (const struct sockaddr_in6 *)(const void *)sa;
	b = s6->sin6_addr.s6_addr;
	return IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr) ||
	    (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr) && b[12] == 127);
}

/* A name that resolves to loopback only here (c10d_host.h)? */
int
c10d_host_loopback_name(const char *host)
{
	struct addrinfo hints, *res, *ai;
	unsigned char buf[sizeof(struct in6_addr)];
	int all = 1;

	if (strcasecmp(host, "localhost") == 0 ||
	    inet_pton(AF_INET, host, buf) == 1 ||
	    inet_pton(AF_INET6, host, buf) == 1)
		return 0;
	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(host, NULL, &hints, &res) != 0)
		return 0;
	for (ai = res; ai != NULL && all; ai = ai->ai_next)
		all = c10d_host_sa_loopback(ai->ai_addr);
	freeaddrinfo(res);
	return all;
}

/* Serve the engine on host:port if is_host says so (c10d_host.h). */
struct c10d_host *
c10d_host_new(struct event_base *base, const char *host, int port,
    int is_host, const struct auth_key *key, char *err, size_t errlen)
{
	struct c10d_host *h;
	int bound, every, saved;

	if (is_host == 0 || (is_host == -1 && !c10d_host_is_me(host))) {
		errno = 0;
		return NULL;
	}
	errbuf_set(err, errlen, "out of memory");
	if ((h = calloc(1, sizeof(*h))) == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	if ((every = c10d_host_loopback_name(host)))
		log_info("c10d: %s is a loopback address here; the rendezvous "
		    "listens on every address, for the other nodes", host);
	errno = ENOMEM;
	if ((h->store = store_new(base, NULL)) == NULL ||
	    store_listen(h->store, every ? NULL : host, port, &bound, err,
	    errlen) == -1 ||
	    (h->engine = rdzv_attach(h->store, base)) == NULL ||
	    rdzv_set_auth(h->engine, key) == -1) {
		saved = errno != 0 ? errno : ENOMEM;
		log_info("c10d: not hosting the rendezvous on %s:%d: %s",
		    host, port, err);
		c10d_host_free(h);
		errno = saved;
		return NULL;
	}
	log_info("c10d: hosting the rendezvous on %s:%d", host, port);
	return h;
}

/* Jobs the hosted engine still serves. */
size_t
c10d_host_njobs(const struct c10d_host *h)
{
	return h != NULL && h->engine != NULL ? rdzv_njobs(h->engine) : 0;
}

/* Stop serving: the engine first, then its store. */
void
c10d_host_free(struct c10d_host *h)
{
	if (h == NULL)
		return;
	rdzv_free(h->engine);
	if (h->store != NULL)
		store_free(h->store);
	free(h);
}

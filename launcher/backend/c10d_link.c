/*
 * c10d_link.c: the c10d backend's connection to the endpoint (the session
 * it carries is c10d.c's; the state both share is c10d_impl.h's).  It
 * connects, retries with a jittered backoff while the endpoint is not
 * yet listening, bounds a hanging connect, notices a connection to
 * itself, and on a lost connection reconnects within the resume window
 * or ends the job.
 *
 * The connection (c10d_link, logging "old -> new" at -v -v): DOWN ->
 * CONNECTING (TCP connect) -> HELLO (connected, magic + HELLO sent) -> UP
 * (JOIN sent); with an auth token HELLO -> PROOF (CHALLENGE answered,
 * JOIN sent, waiting for the server's AUTHOK) -> UP.  On a new connection
 * after a lost one the JOIN waits for WELCOME (c10d_resume.c): HELLO ->
 * UP when it goes out, or HELLO -> PROOF -> UP (AUTHOK) before it.  A
 * lost connection goes back to DOWN.  A connection lost from PROOF or UP
 * after a JOIN opens the resume window (the server keeps our place for
 * keepalive_ms x keepalive_max): until a JOIN goes out on a new
 * connection the client is resuming, and c10d_resume.c carries our round
 * or repeats what the server may have missed.
 */
#include <sys/socket.h>
#include <sys/types.h>

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/bufferevent.h>
#include <event2/event.h>

#include "c10d_impl.h"
#include "exitcodes.h"
#include "log.h"
#include "monotime.h"

#define C10D_RETRY_FIRST_MS	1	/* first retry after a failed connect */
#define C10D_RETRY_MAX_MS	100	/* the backoff's cap */

static const char *const link_names[] = { "DOWN", "CONNECTING", "HELLO",
	"PROOF", "UP" };

_Static_assert(sizeof(link_names) / sizeof(link_names[0]) == LINK__STATES,
    "link_names does not match enum link");

/* Move the connection to a new state. */
void
c10d_link(struct c10d *c, enum link l)
{
	if (c->link == l)
		return;
	log_debug("c10d link %s -> %s", link_names[c->link], link_names[l]);
	c->link = l;
	if (l == LINK_UP)
		c->retry_ms = 0;	/* the next outage backs off afresh */
}

/*
 * The wait before the next connection attempt.  Agents started together
 * (srun) find the hosting agent not yet listening: the first retry comes
 * after C10D_RETRY_FIRST_MS, each further one waits twice as long up to
 * C10D_RETRY_MAX_MS, and a uniform draw in [step/2, step] keeps agents
 * from retrying in lockstep.  The caller's deadline (read_timeout, or
 * the keep-alive window when resuming) still ends the attempts.
 */
static struct timeval
c10d_backoff(struct c10d *c)
{
	struct timeval tv;
	uint32_t x, us;

	c->retry_ms = c->retry_ms == 0 ? C10D_RETRY_FIRST_MS :
	    c->retry_ms * 2 > C10D_RETRY_MAX_MS ? C10D_RETRY_MAX_MS :
	    c->retry_ms * 2;
	if ((x = c->jitter) == 0) {
		x = ((uint32_t)getpid() * 2654435761u ^
		    (uint32_t)monotime_ts().tv_nsec) | 1;
	}
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	c->jitter = x;
	us = c->retry_ms * 500 + x % (c->retry_ms * 500 + 1);
	tv.tv_sec = us / 1000000;
	tv.tv_usec = us % 1000000;
	return tv;
}

/* Can messages go out (connected, magic sent)? */
int
c10d_live(const struct c10d *c)
{
	return c->link == LINK_HELLO || c->link == LINK_PROOF || c->link == LINK_UP;
}

/* Resuming: joined once, connection lost, no JOIN on a new one yet. */
static int
c10d_resuming(const struct c10d *c)
{
	return c->state != C_CONNECTING && c->state != C_OVER &&
	    c->link != LINK_PROOF && c->link != LINK_UP;
}

/* " within N s (read_timeout)": how long connecting is tried. */
static const char *
c10d_timeout_text(const struct c10d *c)
{
	static char buf[96];

	snprintf(buf, sizeof(buf), " within %.1f s (%s)",
	    c->connect_ms / 1000.0, c->connect_ms == c->conf.read_ms ?
	    "read_timeout" : "join_timeout");
	return buf;
}

/* The first failed connection attempt: say that (and how long) we retry,
 * once, so an unreachable endpoint is never silent. */
static void
c10d_connect_warn(struct c10d *c, short what)
{
	if (c->connect_warned++)
		return;
	log_warnx("rendezvous %s: cannot reach the endpoint %s:%d%s%s; "
	    "retrying, giving up if not connected%s", c->run_id, c->host,
	    c->port, (what & BEV_EVENT_ERROR) && errno ? ": " : "",
	    (what & BEV_EVENT_ERROR) && errno ? strerror(errno) : "",
	    c10d_timeout_text(c));
}

/*
 * TCP's simultaneous open: a connect to a local port nobody listens on
 * that the kernel gave the socket itself as its source port succeeds,
 * connected to itself (more likely the faster the retries sweep the
 * ephemeral range); it also holds the port the hosting agent wants.
 */
static int
c10d_self_connected(const struct c10d *c)
{
	struct sockaddr_storage a, b;
	socklen_t la = sizeof(a), lb = sizeof(b);
	int fd = bufferevent_getfd(c->bev);

	return getsockname(fd, (struct sockaddr *)&a, &la) == 0 &&
	    getpeername(fd, (struct sockaddr *)&b, &lb) == 0 && la == lb &&
	    memcmp(&a, &b, la) == 0;
}

/* Connection events: connected, refused (retry), lost. */
static void
c10d_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct c10d *c = arg;
	struct timeval tv;
	char why[512];
	int joined;

	if ((what & BEV_EVENT_CONNECTED) && c10d_self_connected(c)) {
		log_info("c10d: connected to itself (%s:%d is not listening "
		    "and was this socket's own port); retrying", c->host,
		    c->port);
		what = BEV_EVENT_ERROR;
	} else if (what & BEV_EVENT_CONNECTED) {
		log_info("c10d: connected to %s:%d", c->host, c->port);
		bufferevent_set_timeouts(bev, NULL, NULL);
		c10d_hello(c);
		return;
	}
	if (what & BEV_EVENT_TIMEOUT) {	/* a connect that hangs (no RST),
					 * or no WELCOME (c10d_await_welcome) */
		what |= BEV_EVENT_ERROR;
		errno = ETIMEDOUT;
	}
	if (!(what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)))
		return;
	if (c10d_busy_pending(c) && c10d_live(c)) {
		c10d_busy_fail(c, "closed the connection");
		return;
	}
	/* a JOIN went out on this connection (not when it was lost while
	 * rejoining: the first loss's window goes on) */
	joined = (c->link == LINK_PROOF || c->link == LINK_UP) && !c->rejoining;
	c10d_link(c, LINK_DOWN);
	if (joined && c->state != C_CONNECTING && c->state != C_OVER) {
		/* Lost after joining: the server keeps our place for the
		 * keep-alive window; try to get back within it. */
		c->resume_deadline = monotime_after(c->conf.keepalive_ms *
		    c->conf.keepalive_max);
		log_warnx("rendezvous %s: lost the connection to %s:%d; "
		    "reconnecting for up to %u ms", c->run_id, c->host, c->port,
		    c->conf.keepalive_ms * c->conf.keepalive_max);
	}
	if (c->state == C_CONNECTING && !monotime_passed(&c->connect_deadline))
		c10d_connect_warn(c, what);
	if ((c->state == C_CONNECTING &&
	    !monotime_passed(&c->connect_deadline)) ||
	    (c10d_resuming(c) && !monotime_passed(&c->resume_deadline))) {
		bufferevent_free(c->bev);
		c->bev = NULL;
		tv = c10d_backoff(c);
		evtimer_add(c->retry, &tv);
		return;
	}
	snprintf(why, sizeof(why), "%s rendezvous endpoint %s:%d%s%s%s",
	    c->state == C_CONNECTING ? "cannot reach the" :
	    "lost the connection to the", c->host, c->port,
	    c->state == C_CONNECTING ? c10d_timeout_text(c) : "",
	    (what & BEV_EVENT_ERROR) && errno ? ": " : "",
	    (what & BEV_EVENT_ERROR) && errno ? strerror(errno) : "");
	c10d_over(c, CGRUN_EXIT_RDZV, why);
}

/* A new connection after a lost one: WELCOME must come within what is
 * left of the resume window (a listener that never answers is a lost
 * connection, not a wait without end); c10d_rejoin clears it. */
void
c10d_await_welcome(struct c10d *c)
{
	struct timeval tv = { 0, 1000 };
	int64_t ms = -monotime_since_ms(&c->resume_deadline);

	if (ms > 0) {
		tv.tv_sec = (time_t)(ms / 1000);
		tv.tv_usec = (suseconds_t)(ms % 1000) * 1000;
	}
	bufferevent_set_timeouts(c->bev, &tv, NULL);
}

/* Retry timer. */
void
c10d_retry_cb(evutil_socket_t fd, short what, void *arg)
{
	c10d_connect(arg);
}

/*
 * Small frames go out at once; and a link that is cut (no RST ever comes)
 * must not leave this agent waiting for TCP's 15-minute retransmission
 * limit: keep-alives left unacknowledged for the keep-alive window abort
 * the connection, as the server declares us dead after the same window.
 */
static void
c10d_sockopts(struct c10d *c, int fd)
{
	unsigned int ms = c->conf.keepalive_ms * c->conf.keepalive_max;
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &ms, sizeof(ms));
}

/* A connect hanging (SYNs dropped) ends at the connect deadline: libevent
 * applies the write timeout to a pending connect (cleared once up). */
static void
c10d_connect_timeout(struct c10d *c)
{
	struct timeval tv = { 0, C10D_RETRY_MAX_MS * 1000 };
	int64_t ms;

	if (c->state != C_CONNECTING)
		return;	/* resuming: TCP_USER_TIMEOUT bounds it */
	ms = -monotime_since_ms(&c->connect_deadline);
	if (ms > C10D_RETRY_MAX_MS) {
		tv.tv_sec = (time_t)(ms / 1000);
		tv.tv_usec = (suseconds_t)(ms % 1000) * 1000;
	}
	bufferevent_set_timeouts(c->bev, NULL, &tv);
}

/* Start one connection attempt to the endpoint. */
void
c10d_connect(struct c10d *c)
{
	struct addrinfo hints, *res;
	char port[16];
	int fd, rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	snprintf(port, sizeof(port), "%d", c->port);
	if ((rc = getaddrinfo(c->host, port, &hints, &res)) != 0) {
		char why[512];

		snprintf(why, sizeof(why), "rendezvous endpoint %s: %s",
		    c->host, gai_strerror(rc));
		c10d_over(c, CGRUN_EXIT_RDZV, why);
		return;
	}
	fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0);
	if (fd == -1 || (c->bev = bufferevent_socket_new(c->hdr.base, fd,
	    BEV_OPT_CLOSE_ON_FREE)) == NULL) {
		if (fd != -1)
			close(fd);
		freeaddrinfo(res);
		c10d_over(c, CGRUN_EXIT_INTERNAL, "cannot create a socket");
		return;
	}
	c10d_sockopts(c, fd);
	c10d_link(c, LINK_CONNECTING);
	c10d_connect_timeout(c);
	bufferevent_setcb(c->bev, c10d_read_cb, NULL, c10d_event_cb, c);
	bufferevent_enable(c->bev, EV_READ | EV_WRITE);
	if (bufferevent_socket_connect(c->bev, res->ai_addr,
	    (int)res->ai_addrlen) == -1)
		c10d_event_cb(c->bev, BEV_EVENT_ERROR, c);
	freeaddrinfo(res);
}

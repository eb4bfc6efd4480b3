/*
 * c10d_busy.c: the agent should host the rendezvous (is_host) but the
 * endpoint's port is taken.  That is right when a cgrun rendezvous holds
 * it (another agent of the job won the race, or a cgrun-rdzvd runs
 * there): this agent is then a client.  Anything else there would leave
 * the job waiting for answers that never come, so the client must hear
 * the rendezvous protocol (WELCOME or CHALLENGE to its HELLO) within
 * C10D_BUSY_MS of connecting, else the job ends at once with an error
 * that names the address, the bind error and the ways out.
 */
#include <stdio.h>
#include <string.h>

#include <event2/event.h>

#include "c10d_impl.h"
#include "exitcodes.h"
#include "log.h"

#define C10D_BUSY_MS	5000	/* a cgrun rendezvous answers HELLO at once */

/* How long the listener has to answer: C10D_BUSY_MS, or less when
 * connecting itself is bounded by less. */
static unsigned
c10d_busy_ms(const struct c10d *c)
{
	return c->connect_ms < C10D_BUSY_MS ? (unsigned)c->connect_ms :
	    C10D_BUSY_MS;
}

/* The check's timer: the listener never answered. */
static void
c10d_busy_cb(evutil_socket_t fd, short what, void *arg)
{
	char why[64];

	snprintf(why, sizeof(why), "did not answer within %.1f s",
	    c10d_busy_ms(arg) / 1000.0);
	c10d_busy_fail(arg, why);
}

/* Hosting failed with bind_why (EADDRINUSE): check who listens; -1 no memory. */
int
c10d_busy_start(struct c10d *c, const char *bind_why)
{
	if ((c->busy = evtimer_new(c->hdr.base, c10d_busy_cb, c)) == NULL)
		return -1;
	snprintf(c->busy_why, sizeof(c->busy_why), "%s", bind_why);
	log_info("c10d: %s:%d is taken (%s); joining whoever listens there "
	    "if it is a cgrun rendezvous", c->host, c->port, bind_why);
	return 0;
}

/* Connected (HELLO sent): the listener has C10D_BUSY_MS to answer. */
void
c10d_busy_connected(struct c10d *c)
{
	unsigned ms = c10d_busy_ms(c);
	struct timeval tv = { ms / 1000, (suseconds_t)(ms % 1000) * 1000 };

	if (c->busy != NULL)
		evtimer_add(c->busy, &tv);
}

/* A rendezvous message came: a cgrun rendezvous holds the port. */
void
c10d_busy_answered(struct c10d *c)
{
	if (c->busy == NULL)
		return;
	log_debug("c10d: %s:%d is a cgrun rendezvous; this agent is a client",
	    c->host, c->port);
	c10d_busy_free(c);
}

/* Is the port's listener still unproven (hosting wanted, port taken)? */
int
c10d_busy_pending(const struct c10d *c)
{
	return c->busy != NULL;
}

/* What holds the port is not a cgrun rendezvous: end the job, saying so. */
void
c10d_busy_fail(struct c10d *c, const char *what)
{
	char why[RDZV_TEXT_MAX + 512];

	snprintf(why, sizeof(why), "this agent should host the rendezvous on "
	    "%s:%d but cannot bind it (%s), and what listens there is not a "
	    "cgrun rendezvous (it %s); give --rdzv-endpoint another port, or "
	    "start cgrun-rdzvd there", c->host, c->port, c->busy_why, what);
	c10d_busy_free(c);
	c10d_over(c, CGRUN_EXIT_RDZV, why);
}

/* Stop checking (answered, failed, or the backend is freed). */
void
c10d_busy_free(struct c10d *c)
{
	if (c->busy != NULL)
		event_free(c->busy);
	c->busy = NULL;
}

/*
 * c10d_impl.h: the c10d backend's private state, shared by its files and
 * by nothing else: c10d.c (the session: hello, auth, join, rounds, exit
 * barrier, keep-alive), c10d_link.c (the connection to the endpoint:
 * connect, backoff, retries, the link states), c10d_resume.c (a new
 * connection after a lost one: the round carried, the reports held) and
 * c10d_busy.c.  The rest of the launcher sees only c10d_new() (backend.h).
 */
#ifndef CGRUN_C10D_IMPL_H
#define CGRUN_C10D_IMPL_H

#include <stdint.h>
#include <time.h>

#include <event2/bufferevent.h>
#include <event2/event.h>

#include "auth.h"
#include "backend.h"
#include "c10d_conf.h"
#include "rdzv_proto.h"

/* The session's states (c10d_enter, c10d.c). */
enum cstate { C_CONNECTING, C_JOINING, C_RUNNING, C_STOPPING, C_FAILED,
	C_DONE, C_OVER, C__STATES };

/* The connection's states (c10d_link, c10d_link.c). */
enum link { LINK_DOWN, LINK_CONNECTING, LINK_HELLO, LINK_PROOF, LINK_UP,
	LINK__STATES };

struct c10d_host;

struct c10d {
	struct backend		 hdr;	/* first: a struct backend */
	struct backend_config	 cfg;
	struct c10d_conf	 conf;
	char			 host[RDZV_HOST_MAX + 1];	/* endpoint */
	int			 port;
	char			 run_id[RDZV_RUNID_MAX + 1];
	char			 me[RDZV_HOST_MAX + 1];	/* rank sort key */
	uint32_t		 local_id;	/* which backend of this
						 * process: 0 in cgrun */
	char			 store_addr[RDZV_ADDR_MAX + 1];
	enum cstate		 state;
	enum link		 link;
	struct bufferevent	*bev;
	struct event		*retry;
	unsigned int		 retry_ms;	/* next backoff step; 0: first */
	uint32_t		 jitter;	/* xorshift32 state */
	struct event		*keepalive;
	struct event		*linger;	/* host: wait for peers */
	struct event		*barrier;	/* --exit-barrier-timeout */
	struct timespec		 connect_deadline;
	uint32_t		 connect_ms;	/* min(read, join timeout) */
	int			 connect_warned;	/* said we retry */
	struct timespec		 linger_deadline;
	int			 had_round;	/* a ROUND came once */
	int			 resumed;	/* restored; no ROUND since */
	/* a new connection after a lost one (c10d_resume.c) */
	int			 rejoining;	/* JOIN waits for WELCOME */
	int			 carrying;	/* RESUME sent; reports wait for
						 * the server's ROUND or RESTART */
	int			 unsent;	/* the state's report waits */
	struct timespec		 resume_deadline;
	char			 failed_why[RDZV_TEXT_MAX + 1];
	struct round_info	 info;
	uint32_t		 shown_round, shown_joined, shown_role;
	int			 shown;
	struct c10d_host	*hosted;	/* is_host: the engine here */
	struct event		*busy;	/* is_host, port taken: c10d_busy.c */
	char			 busy_why[256];	/* the bind error */
	/* --auth-token-file: protocol version 2 (auth.h) */
	struct auth_key		*key;
	char			 snonce[AUTH_HEX_LEN + 1];
	char			 cnonce[AUTH_HEX_LEN + 1];
	/* what to tell the agent when lingering ends */
	int			 end_status;	/* 0: finished */
	char			 end_why[RDZV_TEXT_MAX + 1];
};

/* c10d.c: the session. */
/* The job is over for this node: status 0 finished, else fail. */
void	c10d_over(struct c10d *, int status, const char *why);
/* Connected: magic, HELLO, and JOIN unless authenticating. */
void	c10d_hello(struct c10d *);
/* The bufferevent read callback: frames from the server. */
void	c10d_read_cb(struct bufferevent *, void *);
/* Encode and queue one message (dropped when the link is not live). */
void	c10d_send(struct c10d *, const struct rdzv_msg *);
/* Send a message without fields. */
void	c10d_say(struct c10d *, uint8_t op);
/* JOIN (first, or after WELCOME on a new connection), keep-alives on. */
void	c10d_join(struct c10d *);

/* c10d_resume.c: a new connection after a lost one. */
/* WELCOME on it: carry our round (RESUME, version 4) or repeat, and JOIN. */
void	c10d_rejoin(struct c10d *, uint16_t version);
/* Send the report c->state implies (FAILED, STOPPED, DONE), or hold it. */
void	c10d_report(struct c10d *);
/* A ROUND: 1 if our workers' round goes on, 0 if it is to be started. */
int	c10d_round_kept(struct c10d *, const struct rdzv_msg *);

/* c10d_link.c: the connection. */
/* Move the connection to a new state (logged "old -> new"). */
void	c10d_link(struct c10d *, enum link);
/* Start one connection attempt to the endpoint. */
void	c10d_connect(struct c10d *);
/* The retry timer's callback: connect again. */
void	c10d_retry_cb(evutil_socket_t, short, void *);
/* Can messages go out (connected, magic sent)? */
int	c10d_live(const struct c10d *);
/* Rejoining: WELCOME within what is left of the resume window. */
void	c10d_await_welcome(struct c10d *);

/* c10d_busy.c: is_host, but the port is taken: is it a cgrun rendezvous? */
/* Hosting failed with bind_why (EADDRINUSE): check who listens; -1 no memory. */
int	c10d_busy_start(struct c10d *, const char *bind_why);
/* Connected (HELLO sent): the listener must answer soon. */
void	c10d_busy_connected(struct c10d *);
/* A rendezvous message came: the listener is a cgrun rendezvous. */
void	c10d_busy_answered(struct c10d *);
/* Is the port's listener still unproven? */
int	c10d_busy_pending(const struct c10d *);
/* The listener is not a cgrun rendezvous (it did what): end the job. */
void	c10d_busy_fail(struct c10d *, const char *what);
/* Stop checking; no-op when not checking. */
void	c10d_busy_free(struct c10d *);

#endif /* CGRUN_C10D_IMPL_H */

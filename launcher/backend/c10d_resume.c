/*
 * c10d_resume.c: the c10d client on a new connection after a lost one
 * (the server restarted, or only the connection went): what it tells the
 * server, and how it takes the ROUND that follows (docs/protocol.md
 * section 5).  The session is c10d.c's, the connection c10d_link.c's;
 * the state they share is c10d_impl.h's.
 *
 * A client that had joined waits for WELCOME on the new connection, then
 * (c10d_rejoin):
 *
 *  - server version 4: RESUME (its last ROUND and what its workers did)
 *    and JOIN.  Until the server's ROUND or RESTART, the reports that
 *    arise (FAILED, STOPPED, DONE) wait (c10d_report): a ROUND that goes
 *    on with our round sends them; a ROUND of a new round supersedes
 *    them (c10d_round_carried), and the agent starts that round whatever
 *    its workers were doing.  A report never lands in a round it was not
 *    about, and the restart count the server carries never goes back.
 *  - an older server: JOIN, then the last report again (it ignores what
 *    it had), and SPENT after WELCOME(3); a ROUND that gives us the place
 *    we run with keeps the workers running (c10d_round_again).
 */
#include <stdio.h>
#include <string.h>

#include <event2/bufferevent.h>
#include <event2/event.h>

#include "c10d_impl.h"
#include "log.h"
#include "rdzv_proto.h"

/* What our workers of the last round did, as RESUME says it. */
static uint8_t
c10d_workers(const struct c10d *c)
{
	switch (c->state) {
	case C_DONE:
		return RDZV_WORKERS_DONE;
	case C_FAILED:
		return RDZV_WORKERS_FAILED;
	case C_STOPPING:
		return RDZV_WORKERS_STOPPING;
	case C_JOINING:
		return RDZV_WORKERS_STOPPED;
	default:
		return RDZV_WORKERS_RUNNING;
	}
}

/* RESUME: our last ROUND and what its workers did. */
static void
c10d_carry(struct c10d *c)
{
	const struct round_info *ri = &c->info;
	struct rdzv_msg m;

	rdzv_proto_init(&m, RDZV_OP_RESUME);
	m.round = ri->round;
	m.restart_count = (uint32_t)ri->restart_count;
	m.group_rank = ri->group_rank;
	m.group_world_size = (uint32_t)ri->group_world_size;
	m.rank_base = (uint32_t)ri->rank_base;
	m.world_size = (uint32_t)ri->world_size;
	snprintf(m.addr, sizeof(m.addr), "%s", ri->master_addr);
	m.port = (uint16_t)ri->master_port;
	m.workers = c10d_workers(c);
	if (m.workers == RDZV_WORKERS_FAILED)
		snprintf(m.text, sizeof(m.text), "%s", c->failed_why);
	c10d_send(c, &m);
	c->carrying = 1;
	c->unsent = 0;
}

/* The report our state implies: FAILED, STOPPED or DONE, or nothing. */
static void
c10d_state_report(struct c10d *c)
{
	struct rdzv_msg m;

	if (c->state == C_DONE)
		c10d_say(c, RDZV_OP_DONE);
	else if (c->state == C_FAILED) {
		rdzv_proto_init(&m, RDZV_OP_FAILED);
		snprintf(m.text, sizeof(m.text), "%s", c->failed_why);
		c10d_send(c, &m);
	} else if (c->state == C_JOINING && c->had_round)
		c10d_say(c, RDZV_OP_STOPPED);
	c->unsent = 0;
}

/* An older server: the last report again, and the restarts spent
 * (SPENT, after WELCOME(3)), so that a server that forgot the job does
 * not give them back. */
static void
c10d_repeat(struct c10d *c, uint16_t version)
{
	struct rdzv_msg m;

	c->resumed = 1;
	c10d_state_report(c);
	if (version < RDZV_PROTO_VERSION_SPENT || !c->had_round ||
	    c->info.restart_count <= 0)
		return;
	rdzv_proto_init(&m, RDZV_OP_SPENT);
	m.restart_count = (uint32_t)c->info.restart_count;
	c10d_send(c, &m);
}

/* WELCOME on a new connection: carry our round (version 4) or repeat
 * our last report (older servers), and JOIN. */
void
c10d_rejoin(struct c10d *c, uint16_t version)
{
	c->rejoining = 0;
	bufferevent_set_timeouts(c->bev, NULL, NULL);
	log_warnx("rendezvous %s: connection to %s:%d restored%s", c->run_id,
	    c->host, c->port, c->had_round && version >=
	    RDZV_PROTO_VERSION_RESUME ? "; carrying round" : "");
	if (c->had_round && version >= RDZV_PROTO_VERSION_RESUME)
		c10d_carry(c);
	c10d_join(c);
	if (!c->carrying)
		c10d_repeat(c, version);
}

/* A report (FAILED, STOPPED or DONE: what c->state now implies) goes out,
 * or waits: no JOIN on this connection yet, or the server's answer to our
 * RESUME has not come. */
void
c10d_report(struct c10d *c)
{
	if (c->carrying || c->rejoining || !c10d_live(c)) {
		log_debug("c10d: report held until the server answers");
		c->unsent = 1;
		return;
	}
	c10d_state_report(c);
}

/* Does the ROUND give the very place of our last round? */
static int
c10d_same_place(const struct c10d *c, const struct rdzv_msg *m)
{
	const struct round_info *ri = &c->info;

	return c->had_round && m->group_rank == ri->group_rank &&
	    (int)m->group_world_size == ri->group_world_size &&
	    (int)m->rank_base == ri->rank_base &&
	    (int)m->world_size == ri->world_size &&
	    m->port == ri->master_port &&
	    strcmp(m->addr, ri->master_addr) == 0;
}

/* The server's first ROUND after our RESUME: 1 if it goes on with our
 * round (the held report goes out now), 0 if it is a new round (the
 * held report is superseded: the caller starts the round). */
static int
c10d_round_carried(struct c10d *c, const struct rdzv_msg *m)
{
	c->carrying = 0;
	if (m->round != c->info.round || !c10d_same_place(c, m) ||
	    c->state == C_STOPPING || c->state == C_JOINING) {
		if (c->unsent)
			log_info("rendezvous %s: round %u supersedes our "
			    "report of round %u", c->run_id, m->round,
			    c->info.round);
		c->unsent = 0;
		return 0;
	}
	log_warnx("rendezvous %s round %u goes on: workers %s", c->run_id,
	    m->round, c->state == C_RUNNING ? "go on" : c->state == C_DONE ?
	    "done" : "failed, reported now");
	if (c->unsent || c->state == C_FAILED)
		c10d_state_report(c);
	return 1;
}

/* An older server after resuming: the same round again, or a restarted
 * server's round with the place we run with (it numbers rounds from 0
 * again): 1 if the workers go on (a DONE of ours is said again: that
 * server ignored the one we repeated while its round formed). */
static int
c10d_round_again(struct c10d *c, const struct rdzv_msg *m)
{
	struct round_info *ri = &c->info;

	if (!c->had_round || (c->state != C_RUNNING && c->state != C_DONE))
		return 0;
	if (m->round == ri->round)
		log_debug("c10d: round %u again after resuming", m->round);
	else if (c->resumed && c10d_same_place(c, m)) {
		log_warnx("rendezvous %s: the server's round %u is our round "
		    "%u with the same places (the server restarted): workers "
		    "go on", c->run_id, m->round, ri->round);
		ri->round = m->round;
	} else
		return 0;
	if (c->resumed && c->state == C_DONE)
		c10d_say(c, RDZV_OP_DONE);
	c->resumed = 0;
	return 1;
}

/* A ROUND: 1 if it is the round our workers run (they go on), 0 if the
 * caller must start it. */
int
c10d_round_kept(struct c10d *c, const struct rdzv_msg *m)
{
	if (c->carrying)
		return c10d_round_carried(c, m);
	return c10d_round_again(c, m);
}

/*
 * store_budget.c: the input budget of the store server (store_impl.h).
 * Every connection's kept bytes of a half-received request (c->icap) add
 * up in st->inbuf.  Once that reaches max-input-total, a connection that
 * holds part of a request is no longer read (its read event is removed:
 * back-pressure through TCP, nothing more is buffered) until the total
 * falls below the limit again.  One connection, the leader, is always
 * read, so that one request of up to max-input completes even when the
 * others fill the budget (a leader paused for its unsent output, in
 * store_out.c, gives the lead up); connections with nothing kept are
 * always read, so clients with small requests are served throughout.
 */
#include <sys/queue.h>

#include <time.h>

#include <event2/event.h>

#include "log.h"
#include "store.h"
#include "store_impl.h"

/* Wake every paused connection (they pause again on their next read if
 * the budget is still full); one paused for its output stays unread. */
static void
store_budget_resume_all(struct store *st)
{
	struct store_conn *c;

	while ((c = TAILQ_FIRST(&st->paused)) != NULL) {
		TAILQ_REMOVE(&st->paused, c, plink);
		c->paused = 0;
		st->npaused--;
		if (c->state < STORE_C_CLOSING && !c->out_paused)
			event_add(&c->rev, NULL);
	}
}

/* A connection's kept buffer went from old_cap to new_cap bytes. */
void
store_budget_grow(struct store *st, size_t old_cap, size_t new_cap)
{
	st->inbuf += new_cap;
	st->inbuf -= old_cap;
	if (new_cap < old_cap && st->npaused > 0 && !store_budget_full(st))
		store_budget_resume_all(st);
}

/* Is the budget used up (max-input-total; 0: no budget)? */
int
store_budget_full(const struct store *st)
{
	return st->lim.max_inbuf_total != 0 &&
	    st->inbuf >= st->lim.max_inbuf_total;
}

/* Stop reading c until the budget has room (c is not the leader). */
void
store_budget_pause(struct store_conn *c)
{
	struct store *st = c->st;
	time_t now;

	if (st->leader == NULL || st->leader == c) {
		st->leader = c;		/* one request always goes on */
		return;
	}
	if (c->paused)
		return;
	event_del(&c->rev);
	c->paused = 1;
	TAILQ_INSERT_TAIL(&st->paused, c, plink);
	st->npaused++;
	st->stats.paused_total++;
	now = time(NULL);
	if (now != st->budget_logged) {
		log_warnx("store: input budget full: not reading peer=%s "
		    "buffered=%zu max-input-total=%zu paused=%zu", c->peer,
		    st->inbuf, st->lim.max_inbuf_total, st->npaused);
		st->budget_logged = now;
	}
}

/* c holds no partial request any more, or is going away: it is neither
 * paused nor the leader; a new leader may be chosen. */
void
store_budget_forget(struct store_conn *c)
{
	struct store *st = c->st;

	if (c->paused) {
		TAILQ_REMOVE(&st->paused, c, plink);
		c->paused = 0;
		st->npaused--;
	}
	if (st->leader == c) {
		st->leader = NULL;
		store_budget_resume_all(st);	/* one of them leads next */
	}
}

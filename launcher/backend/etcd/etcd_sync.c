/*
 * etcd_sync.c: one agent's session with etcd for one run (etcd_sync.h):
 * lease, keep-alives, the watch on the run's prefix, snapshots of the
 * run's keys, and the writes the backend asks for.  Reads are coalesced:
 * at most one range request is in flight, and a refresh asked meanwhile
 * runs once it answers.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include "errbuf.h"
#include "etcd_conf.h"
#include "etcd_http.h"
#include "etcd_json.h"
#include "etcd_kv.h"
#include "etcd_round.h"
#include "etcd_sync.h"
#include "log.h"
#include "monotime.h"

struct etcd_sync {
	struct event_base *base;
	struct etcd_http *h;
	struct etcd_sync_cb cb;
	char		 prefix[ETCD_KEY_MAX - 128];	/* run id: at most 266 */
	char		 my_key[ETCD_KEY_MAX];
	uint32_t	 ka_ms, ttl_s, read_ms;
	int64_t		 lease;
	struct timespec	 last_ok;	/* monotonic: last keep-alive answered */
	struct timespec	 watch_started;	/* monotonic: the watch's start */
	struct event	*tick, *close_timer, *grant_retry, *grant_deadline;
	struct etcd_req	*grant;		/* the lease request in flight */
	struct etcd_req	*watch;
	int64_t		 rev;		/* of the last snapshot */
	int64_t		 snap_mod;	/* newest mod_revision in it */
	int64_t		 watch_mod;	/* newest the watch reported */
	int		 tick_read;	/* the read in flight is the tick's */
	unsigned	 watch_msgs;	/* messages the watches delivered */
	unsigned	 tick_msgs;	/* watch_msgs at the tick before */
	unsigned	 last_msgs;	/* watch_msgs at the last tick */
	char		 watch_on[ETCD_URL_MAX];	/* the watch's member */
	int		 reading, again, need_watch, writing, lost;
	char		*node_json;	/* our node's value, NULL once put */
	char		*node_last;	/* the value last put */
	struct er_view	*view;
	/* closing */
	void		(*done)(void *);
	void		*done_arg;
	int		 closing;
	int64_t		 state_rev;
	char		 ka_why[400];	/* why the last keep-alive failed */
};

static void sync_read(struct etcd_sync *);

/* This node is gone for the cluster: say it once. */
static void
sync_lost(struct etcd_sync *s, const char *why)
{
	if (s->lost || s->closing)
		return;
	s->lost = 1;
	evtimer_del(s->tick);
	s->cb.lost(s->cb.arg, why);
}

/* An error answer that no retry changes (a refusal: auth, permission,
 * bad request) ends this node's part: 1 if r was one. */
static int
sync_refused(struct etcd_sync *s, const struct etcd_reply *r,
    const char *what)
{
	char msg[ETCD_MSG_MAX + 256];

	if (r == NULL || r->code == 0 || r->code == 14 || r->code == 4)
		return 0;
	snprintf(msg, sizeof(msg), "etcd refused %s: %s%s", what, r->message,
	    strstr(r->message, "user name is empty") ? " (etcd has "
	    "authentication enabled: give --rdzv-conf user=NAME,"
	    "password_file=FILE)" : "");
	sync_lost(s, msg);
	return 1;
}

/* One key of the snapshot into the view; bad values are skipped. */
static void
sync_kv(struct etcd_sync *s, const struct etcd_kv *kv)
{
	struct er_view *v = s->view;
	size_t pl = strlen(s->prefix);
	const char *rest = kv->key + pl;
	char why[ER_WHY_MAX];
	struct er_node *n;

	if (kv->keylen < pl || strncmp(kv->key, s->prefix, pl) != 0)
		return;
	if (strcmp(rest, "state") == 0) {
		/* not cgrun's: v->bad says why, etcd.c ends the job */
		er_state_parse(kv->value, kv->vlen, &v->state, v->bad,
		    sizeof(v->bad));
		v->state.mod_rev = kv->mod_rev;
		return;
	}
	if (strncmp(rest, "nodes/", 6) != 0 || v->nnodes == ER_NODES_MAX ||
	    strlen(rest + 6) > ER_ID_MAX)
		return;
	n = &v->nodes[v->nnodes];
	if (er_node_parse(kv->value, kv->vlen, n, why, sizeof(why)) == -1) {
		log_warnx("etcd %s: %s", kv->key, why);
		return;
	}
	snprintf(n->id, sizeof(n->id), "%s", rest + 6);
	n->create_rev = kv->create_rev;
	v->nnodes++;
}

/* The watch ended: watch again after a fresh read, at once, or, for a
 * watch that failed within ETCD_SYNC_WATCH_MIN_MS of its start (a member
 * or a proxy that breaks every watch), with the next read (the next
 * keep-alive's at the latest), so such a member costs a try per read, not
 * a busy loop. */
static void
sync_watch_ended(struct etcd_sync *s, const struct etcd_reply *r,
    const char *why)
{
	int soon = r != NULL && r->compact_revision > 0;

	if (r != NULL)		/* the stream is still open */
		etcd_http_cancel(s->watch);
	s->watch = NULL;
	s->need_watch = 1;
	etcd_http_next(s->h);
	if (soon)
		log_info("etcd watch on %s: revision compacted away (now %"
		    PRId64 "); reading again", s->prefix, r->compact_revision);
	else {
		soon = monotime_since_ms(&s->watch_started) >=
		    ETCD_SYNC_WATCH_MIN_MS;
		log_info("etcd watch on %s ended: %s; %s", s->prefix, r ?
		    (r->code ? r->message : "canceled") : why, soon ?
		    "reading again" : "watching again with the next read");
	}
	if (soon)
		sync_read(s);
}

/* Watch messages: any change means read again. */
static void
sync_watch_cb(void *arg, const struct etcd_reply *r, const char *why)
{
	struct etcd_sync *s = arg;
	size_t i;

	if (r == NULL || r->canceled || r->code != 0) {
		sync_watch_ended(s, r, why);
		return;
	}
	s->watch_msgs++;
	for (i = 0; i < r->nkvs; i++)
		if (r->kvs[i].mod_rev > s->watch_mod)
			s->watch_mod = r->kvs[i].mod_rev;
	if (r->nkvs > 0)
		sync_read(s);
}

/* (Re)start the watch after the snapshot at s->rev. */
static void
sync_watch(struct etcd_sync *s)
{
	if (s->closing || s->lost)
		return;
	s->need_watch = 0;
	s->watch_mod = s->snap_mod;
	s->watch_started = monotime_ts();
	snprintf(s->watch_on, sizeof(s->watch_on), "%s",
	    etcd_http_member(s->h));
	if (s->watch != NULL)
		etcd_http_cancel(s->watch);
	s->watch = etcd_watch_prefix(s->h, s->prefix, s->rev + 1,
	    sync_watch_cb, s);
}

/* The keep-alive's read found a change the watch never reported, and the
 * watch said nothing since the keep-alive before: its member went quiet
 * (stopped, partitioned); watch through the next one.  A watch that is
 * talking is only behind (catching up after this agent was stopped, say)
 * and is left alone: it catches up, or etcd says it was compacted. */
static void
sync_quiet_watch(struct etcd_sync *s)
{
	int tick = s->tick_read;

	s->tick_read = 0;
	if (!tick || s->watch == NULL || s->snap_mod <= s->watch_mod ||
	    s->watch_msgs != s->tick_msgs)
		return;
	log_info("etcd: the watch on %s missed revision %" PRId64 "; watching "
	    "through the next member", s->watch_on, s->snap_mod);
	if (strcmp(s->watch_on, etcd_http_member(s->h)) == 0)
		etcd_http_next(s->h);
	s->need_watch = 1;
}

/* A snapshot arrived: build the view and hand it over. */
static void
sync_read_cb(void *arg, const struct etcd_reply *r, const char *why)
{
	struct etcd_sync *s = arg;
	size_t i;

	s->reading = 0;
	if (s->closing || sync_refused(s, r, "reading the run's keys"))
		return;
	if (r == NULL || r->code != 0) {
		log_warnx("etcd: reading %s failed: %s", s->prefix, r ?
		    r->message : why);
		return;		/* again at the next keep-alive */
	}
	memset(&s->view->state, 0, sizeof(s->view->state));
	s->view->nnodes = 0;
	s->view->bad[0] = '\0';
	s->view->last_call_over = s->view->join_over = 0;
	s->snap_mod = 0;
	for (i = 0; i < r->nkvs; i++) {
		sync_kv(s, &r->kvs[i]);
		if (r->kvs[i].mod_rev > s->snap_mod)
			s->snap_mod = r->kvs[i].mod_rev;
	}
	s->rev = r->revision;
	sync_quiet_watch(s);
	if (s->need_watch || s->watch == NULL)
		sync_watch(s);
	s->cb.view(s->cb.arg, s->view);
	if (s->again && !s->closing) {
		s->again = 0;
		sync_read(s);
	}
}

/* Read the run's keys (once at a time). */
static void
sync_read(struct etcd_sync *s)
{
	if (s->reading) {
		s->again = 1;
		return;
	}
	s->reading = 1;
	if (etcd_range_prefix(s->h, s->prefix, sync_read_cb, s) == NULL)
		s->reading = 0;
}

/* Read again soon. */
void
etcd_sync_refresh(struct etcd_sync *s)
{
	sync_read(s);
}

/* A put of our node answered. */
static void
sync_put_cb(void *arg, const struct etcd_reply *r, const char *why)
{
	struct etcd_sync *s = arg;

	if (sync_refused(s, r, "this node's key"))
		return;
	if (r == NULL || r->code != 0) {
		log_warnx("etcd: putting %s failed: %s; again at the next "
		    "keep-alive", s->my_key, r ? r->message : why);
		if (s->node_json == NULL)
			s->node_json = s->node_last, s->node_last = NULL;
		return;
	}
	sync_read(s);
}

/* Put what node_json holds. */
static void
sync_put(struct etcd_sync *s)
{
	if (s->node_json == NULL || s->lease == 0 || s->closing)
		return;
	free(s->node_last);
	s->node_last = s->node_json;
	s->node_json = NULL;
	etcd_put(s->h, s->my_key, s->node_last, s->lease, sync_put_cb, s);
}

/* Put this node's key. */
void
etcd_sync_put_node(struct etcd_sync *s, const struct er_node *n)
{
	free(s->node_json);
	s->node_json = er_node_json(n);
	sync_put(s);
}

/* No keep-alive answered for the lease's TTL: this node is lost. */
static void
sync_ka_check(struct etcd_sync *s)
{
	char msg[sizeof(s->ka_why) + 160];

	if (monotime_since_ms(&s->last_ok) <= (int64_t)s->ttl_s * 1000)
		return;
	snprintf(msg, sizeof(msg), "lost the etcd cluster: no keep-alive "
	    "answered for %u s (keep_alive_interval x keep_alive_max_attempt)"
	    "%s%s", s->ttl_s, s->ka_why[0] ? ": " : "", s->ka_why);
	sync_lost(s, msg);
}

/* A keep-alive answered. */
static void
sync_ka_cb(void *arg, const struct etcd_reply *r, const char *why)
{
	struct etcd_sync *s = arg;
	char msg[512];

	if (r != NULL && r->code == 0 && r->ttl > 0) {
		s->last_ok = monotime_ts();
		return;
	}
	if (r != NULL && r->code == 0) {
		snprintf(msg, sizeof(msg), "this node's etcd lease %" PRIx64
		    " expired: etcd heard no keep-alive from it for %u s",
		    (uint64_t)s->lease, s->ttl_s);
		sync_lost(s, msg);
		return;
	}
	snprintf(s->ka_why, sizeof(s->ka_why), "%s", r ? r->message : why);
	sync_ka_check(s);
}

/* Every keep_alive_interval: refresh the lease, retry a failed put,
 * read (the watch's safety net). */
static void
sync_tick(evutil_socket_t fd, short what, void *arg)
{
	struct etcd_sync *s = arg;

	if (s->closing || s->lost)
		return;
	sync_ka_check(s);
	if (s->lost)
		return;
	etcd_lease_keepalive(s->h, s->lease, sync_ka_cb, s);
	sync_put(s);
	if (!s->reading) {
		s->tick_read = 1;
		s->tick_msgs = s->last_msgs;
	}
	s->last_msgs = s->watch_msgs;
	sync_read(s);
}

/* The lease was granted (or not: retry until read_timeout). */
static void
sync_grant_cb(void *arg, const struct etcd_reply *r, const char *why)
{
	struct etcd_sync *s = arg;
	struct timeval tv = { s->ka_ms / 1000, (s->ka_ms % 1000) * 1000 };
	struct timeval again = { 0, 500000 };

	s->grant = NULL;
	if (r != NULL && r->code == 0 && r->lease_id != 0) {
		evtimer_del(s->grant_deadline);
		s->lease = r->lease_id;
		s->last_ok = monotime_ts();
		log_info("etcd: lease %" PRIx64 " ttl=%" PRId64 "s via %s",
		    (uint64_t)s->lease, r->ttl, etcd_http_member(s->h));
		event_add(s->tick, &tv);
		sync_read(s);
		return;
	}
	if (sync_refused(s, r, "this node's lease"))
		return;
	snprintf(s->ka_why, sizeof(s->ka_why), "%s", r ? r->message : why);
	log_info("etcd: no lease yet (%s); retrying", s->ka_why);
	evtimer_add(s->grant_retry, &again);
}

/* read_timeout passed without a lease: give up, whatever is in flight. */
static void
sync_grant_deadline(evutil_socket_t fd, short what, void *arg)
{
	struct etcd_sync *s = arg;
	char msg[sizeof(s->ka_why) + 96];

	if (s->lease != 0)
		return;
	etcd_http_cancel(s->grant);
	s->grant = NULL;
	evtimer_del(s->grant_retry);
	snprintf(msg, sizeof(msg), "cannot reach the etcd cluster within "
	    "read_timeout (%u s): %s", s->read_ms / 1000, s->ka_why[0] ?
	    s->ka_why : "no answer yet");
	sync_lost(s, msg);
}

/* Ask for the lease. */
static void
sync_grant(evutil_socket_t fd, short what, void *arg)
{
	struct etcd_sync *s = arg;

	s->grant = etcd_lease_grant(s->h, s->ttl_s, sync_grant_cb, s);
}

/* Start: the lease first. */
void
etcd_sync_start(struct etcd_sync *s)
{
	struct timeval tv = { s->read_ms / 1000, (s->read_ms % 1000) * 1000 };

	evtimer_add(s->grant_deadline, &tv);
	sync_grant(-1, 0, s);
}

/* A state write answered (won or lost: read either way). */
static void
sync_write_cb(void *arg, const struct etcd_reply *r, const char *why)
{
	struct etcd_sync *s = arg;

	s->writing = 0;
	if (sync_refused(s, r, "the run's state key"))
		return;
	if (r == NULL || r->code != 0)
		log_warnx("etcd: writing %sstate failed: %s", s->prefix,
		    r ? r->message : why);
	else
		log_debug("etcd: state write %s", r->succeeded ? "won" :
		    "lost (another agent decided first)");
	if (!s->closing)
		sync_read(s);
}

/* Write the state if still at mod_rev. */
void
etcd_sync_write_state(struct etcd_sync *s, const struct er_state *st,
    int64_t mod_rev)
{
	char key[ETCD_KEY_MAX], *v;

	if ((v = er_state_json(st)) == NULL)
		return;
	snprintf(key, sizeof(key), "%sstate", s->prefix);
	s->writing = 1;
	if (etcd_put_if(s->h, key, mod_rev, key, v, 0, sync_write_cb, s) ==
	    NULL)
		s->writing = 0;
	free(v);
}

/* Delete the state if still at mod_rev. */
void
etcd_sync_drop_state(struct etcd_sync *s, int64_t mod_rev)
{
	char key[ETCD_KEY_MAX];

	snprintf(key, sizeof(key), "%sstate", s->prefix);
	s->writing = 1;
	if (etcd_delete_if(s->h, key, mod_rev, sync_write_cb, s) == NULL)
		s->writing = 0;
}

/* Is a state write in flight? */
int
etcd_sync_writing(const struct etcd_sync *s)
{
	return s->writing;
}

/* Closing is over (or took too long): tell the backend once. */
static void
sync_closed(evutil_socket_t fd, short what, void *arg)
{
	struct etcd_sync *s = arg;
	void (*done)(void *) = s->done;

	evtimer_del(s->close_timer);
	s->done = NULL;
	if (done != NULL)
		done(s->done_arg);
}

/* Closing, last step answered: the state key is gone (or stays). */
static void
sync_close_drop_cb(void *arg, const struct etcd_reply *r, const char *why)
{
	sync_closed(-1, 0, arg);
}

/* Closing: the nodes left after our lease went; the last removes state. */
static void
sync_close_read_cb(void *arg, const struct etcd_reply *r, const char *why)
{
	struct etcd_sync *s = arg;
	char key[ETCD_KEY_MAX];
	int64_t state_rev = 0;
	size_t i, nodes = 0;

	if (r == NULL || r->code != 0) {
		sync_closed(-1, 0, s);
		return;
	}
	snprintf(key, sizeof(key), "%sstate", s->prefix);
	for (i = 0; i < r->nkvs; i++) {
		if (strcmp(r->kvs[i].key, key) == 0)
			state_rev = r->kvs[i].mod_rev;
		else
			nodes++;
	}
	if (nodes > 0 || state_rev == 0 || state_rev != s->state_rev) {
		sync_closed(-1, 0, s);
		return;
	}
	log_info("etcd: last node of %s: removing its state key", s->prefix);
	if (etcd_delete_if(s->h, key, state_rev, sync_close_drop_cb, s) ==
	    NULL)
		sync_closed(-1, 0, s);
}

/* Closing: our lease (and node key) is gone. */
static void
sync_close_revoke_cb(void *arg, const struct etcd_reply *r, const char *why)
{
	struct etcd_sync *s = arg;

	if (r != NULL && r->code == 0)
		s->lease = 0;
	if (etcd_range_prefix(s->h, s->prefix, sync_close_read_cb, s) == NULL)
		sync_closed(-1, 0, s);
}

/* Leave the run (see etcd_sync.h). */
void
etcd_sync_close(struct etcd_sync *s, void (*done)(void *), void *arg)
{
	struct timeval tv = { ETCD_SYNC_CLOSE_MS / 1000, 0 };

	s->closing = 1;
	s->done = done;
	s->done_arg = arg;
	s->state_rev = s->view->state.mod_rev;
	evtimer_del(s->tick);
	etcd_http_cancel(s->watch);
	s->watch = NULL;
	evtimer_add(s->close_timer, &tv);
	if (s->lost) {		/* etcd is out of reach: nothing to clean */
		event_active(s->close_timer, EV_TIMEOUT, 0);
		return;
	}
	if (s->lease == 0 || etcd_lease_revoke(s->h, s->lease,
	    sync_close_revoke_cb, s) == NULL)
		sync_close_revoke_cb(s, NULL, "no lease");
}

/* The address this host reaches etcd from. */
const char *
etcd_sync_local_ip(const struct etcd_sync *s)
{
	return etcd_http_local_ip(s->h);
}

/* The http client's configuration from --rdzv-conf and the endpoints. */
static int
sync_http_conf(struct etcd_http_conf *hc, const struct etcd_conf *c,
    const char *endpoints, char *err, size_t errlen)
{
	char hostport[ETCD_URL_MAX];
	int i;

	memset(hc, 0, sizeof(*hc));
	if (etcd_http_endpoints(endpoints, hc, err, errlen) == -1)
		return -1;
	for (i = 0; c->https && i < hc->nurls; i++)
		if (strncmp(hc->urls[i], "http://", 7) == 0 &&
		    strstr(endpoints, hc->urls[i]) == NULL) {
			snprintf(hostport, sizeof(hostport), "%s",
			    hc->urls[i] + 7);
			snprintf(hc->urls[i], sizeof(hc->urls[i]), "https://%.*s",
			    (int)sizeof(hostport) - 9, hostport);
		}
	hc->cacert = c->cacert[0] ? c->cacert : NULL;
	hc->cert = c->cert[0] ? c->cert : NULL;
	hc->key = c->key[0] ? c->key : NULL;
	hc->user = c->user[0] ? c->user : NULL;
	hc->password = c->password[0] ? c->password : NULL;
	hc->timeout_ms = c->request_ms;
	hc->connect_ms = c->request_ms < 2000 ? c->request_ms : 2000;
	return 0;
}

/* A new session (nothing sent until etcd_sync_start). */
struct etcd_sync *
etcd_sync_new(struct event_base *base, const struct etcd_conf *c,
    const char *endpoints, const char *prefix, const char *my_id,
    const struct etcd_sync_cb *cb, char *err, size_t errlen)
{
	struct etcd_http_conf hc;
	struct etcd_sync *s;

	if (sync_http_conf(&hc, c, endpoints, err, errlen) == -1)
		return NULL;
	if ((s = calloc(1, sizeof(*s))) == NULL ||
	    (s->view = calloc(1, sizeof(*s->view))) == NULL) {
		free(s);
		errbuf_set(err, errlen, "out of memory");
		return NULL;
	}
	s->base = base;
	s->cb = *cb;
	snprintf(s->prefix, sizeof(s->prefix), "%s", prefix);
	snprintf(s->my_key, sizeof(s->my_key), "%snodes/%s", prefix, my_id);
	s->ka_ms = c->c.keepalive_ms;
	s->ttl_s = (c->c.keepalive_ms * c->c.keepalive_max + 999) / 1000;
	if (s->ttl_s < 2)
		s->ttl_s = 2;
	s->read_ms = c->c.read_ms;
	s->tick = event_new(base, -1, EV_PERSIST, sync_tick, s);
	s->close_timer = evtimer_new(base, sync_closed, s);
	s->grant_retry = evtimer_new(base, sync_grant, s);
	s->grant_deadline = evtimer_new(base, sync_grant_deadline, s);
	if (s->tick == NULL || s->close_timer == NULL ||
	    s->grant_retry == NULL || s->grant_deadline == NULL ||
	    (s->h = etcd_http_new(base, &hc, err, errlen)) == NULL) {
		etcd_sync_free(s);
		return NULL;
	}
	return s;
}

/* Free; a lease still held is revoked (one bounded blocking try). */
void
etcd_sync_free(struct etcd_sync *s)
{
	char body[64];

	if (s == NULL)
		return;
	if (s->h != NULL && s->lease != 0 && !s->lost) {
		snprintf(body, sizeof(body), "{\"ID\":\"%" PRId64 "\"}",
		    s->lease);
		etcd_http_post_blocking(s->h, "/v3/lease/revoke", body, 1000);
	}
	etcd_http_free(s->h);
	if (s->tick)
		event_free(s->tick);
	if (s->close_timer)
		event_free(s->close_timer);
	if (s->grant_retry)
		event_free(s->grant_retry);
	if (s->grant_deadline)
		event_free(s->grant_deadline);
	free(s->node_json);
	free(s->node_last);
	free(s->view);
	free(s);
}

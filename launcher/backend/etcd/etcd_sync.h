/*
 * etcd_sync.h: one agent's session with the etcd cluster for one run
 * (etcd_sync.c): its lease (granted at start, refreshed every
 * keep_alive_interval; the agent's node key lives and dies with it), a
 * watch on the run's prefix, and fresh snapshots of the run's keys
 * (struct er_view) handed to the backend after every change the watch
 * reports, after every write, and once per keep-alive as a safety net for
 * a watch that went quiet on a partitioned member.
 *
 * Named timeouts: reaching etcd at start is retried until read_timeout;
 * once running, no keep-alive answered for keep_alive_interval x
 * keep_alive_max_attempt (the lease's TTL) means this node is lost
 * (lost callback).  Each request is bounded as etcd_http.h says.
 */
#ifndef CGRUN_ETCD_SYNC_H
#define CGRUN_ETCD_SYNC_H

#include <stdint.h>

struct event_base;
struct etcd_conf;
struct er_view;
struct er_state;
struct er_node;
struct etcd_sync;

struct etcd_sync_cb {
	/* A fresh snapshot (the backend may set its flags and decide). */
	void	(*view)(void *arg, struct er_view *);
	/* This node is gone for the cluster (lease lost, etcd unreachable). */
	void	(*lost)(void *arg, const char *why);
	void	*arg;
};

struct etcd_sync *etcd_sync_new(struct event_base *, const struct etcd_conf *,
	    const char *endpoints, const char *prefix, const char *my_id,
	    const struct etcd_sync_cb *, char *err, size_t errlen);
/* Grant the lease, then snapshots start coming. */
void	etcd_sync_start(struct etcd_sync *);
/* Put this node's key (on the lease); retried each keep-alive if it fails. */
void	etcd_sync_put_node(struct etcd_sync *, const struct er_node *);
/* Write the state if it is still at mod_rev (0: absent); then re-read. */
void	etcd_sync_write_state(struct etcd_sync *, const struct er_state *,
	    int64_t mod_rev);
/* Delete the state key if it is still at mod_rev; then re-read. */
void	etcd_sync_drop_state(struct etcd_sync *, int64_t mod_rev);
/* Read the keys again soon. */
void	etcd_sync_refresh(struct etcd_sync *);
/* Is a state write in flight? */
int	etcd_sync_writing(const struct etcd_sync *);
/* Leave: revoke the lease, delete the state key when no node is left,
 * then done(arg) (within ETCD_SYNC_CLOSE_MS whatever etcd does). */
void	etcd_sync_close(struct etcd_sync *, void (*done)(void *), void *arg);
/* The address this host reaches etcd from ("" before the first answer). */
const char *etcd_sync_local_ip(const struct etcd_sync *);
/* Free; revokes the lease first (best effort, bounded) if still held. */
void	etcd_sync_free(struct etcd_sync *);

#define ETCD_SYNC_CLOSE_MS	5000
/* A watch that fails sooner is restarted at the next keep-alive only. */
#define ETCD_SYNC_WATCH_MIN_MS	1000

#endif /* CGRUN_ETCD_SYNC_H */

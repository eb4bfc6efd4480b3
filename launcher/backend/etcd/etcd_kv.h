/*
 * etcd_kv.h: the etcd v3 operations cgrun uses, as JSON gateway requests
 * (etcd_kv.c over etcd_http.c): keys and values are plain strings here and
 * base64 on the wire; int64 fields go out as strings, as the gateway
 * writes them.  Every call returns the request (to cancel) or NULL when out
 * of memory; the answer comes to cb (etcd_http.h).
 */
#ifndef CGRUN_ETCD_KV_H
#define CGRUN_ETCD_KV_H

#include <stdint.h>

#include "etcd_http.h"

/* Every key under prefix (range [prefix, prefix+1)). */
struct etcd_req *etcd_range_prefix(struct etcd_http *, const char *prefix,
	    etcd_http_cb, void *);
/* Put key=value, attached to lease (0: none). */
struct etcd_req *etcd_put(struct etcd_http *, const char *key,
	    const char *value, int64_t lease, etcd_http_cb, void *);
/* Put key=value only if cmpkey's mod_revision is rev (0: cmpkey absent);
 * the answer's succeeded says which. */
struct etcd_req *etcd_put_if(struct etcd_http *, const char *cmpkey,
	    int64_t rev, const char *key, const char *value, int64_t lease,
	    etcd_http_cb, void *);
/* Delete key only if its mod_revision is rev. */
struct etcd_req *etcd_delete_if(struct etcd_http *, const char *key,
	    int64_t rev, etcd_http_cb, void *);
/* Delete every key under prefix. */
struct etcd_req *etcd_delete_prefix(struct etcd_http *, const char *prefix,
	    etcd_http_cb, void *);
/* Leases: grant for ttl seconds, refresh once, revoke. */
struct etcd_req *etcd_lease_grant(struct etcd_http *, int64_t ttl,
	    etcd_http_cb, void *);
struct etcd_req *etcd_lease_keepalive(struct etcd_http *, int64_t id,
	    etcd_http_cb, void *);
struct etcd_req *etcd_lease_revoke(struct etcd_http *, int64_t id,
	    etcd_http_cb, void *);
/* Watch every key under prefix from revision rev on (a stream). */
struct etcd_req *etcd_watch_prefix(struct etcd_http *, const char *prefix,
	    int64_t rev, etcd_http_cb, void *);

#endif

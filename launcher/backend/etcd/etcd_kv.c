/*
 * etcd_kv.c: JSON bodies of the etcd v3 gateway requests cgrun uses (see
 * etcd_kv.h), built with json-c; the transport is etcd_http.c.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "etcd_json.h"
#include "etcd_kv.h"

/* Add "name": base64(s) to o. */
static void
add_b64(json_object *o, const char *name, const char *s, size_t n)
{
	char *b;
	size_t len = 4 * ((n + 2) / 3) + 1;

	if ((b = malloc(len)) == NULL)
		return;
	if (etcd_b64(b, len, s, n) == 0)
		json_object_object_add(o, name, json_object_new_string(b));
	free(b);
}

/* Add "name": "<int64>" to o (the gateway's spelling). */
static void
add_i64(json_object *o, const char *name, int64_t v)
{
	char b[32];

	snprintf(b, sizeof(b), "%" PRId64, v);
	json_object_object_add(o, name, json_object_new_string(b));
}

/* The key just after every key that starts with prefix. */
static size_t
prefix_end(const char *prefix, char *end, size_t len)
{
	size_t n = strlen(prefix);

	if (n == 0 || n >= len)
		return 0;
	memcpy(end, prefix, n);
	while (n > 0 && (unsigned char)end[n - 1] == 0xff)
		n--;
	if (n > 0)
		end[n - 1]++;
	return n;
}

/* Add "key" and "range_end" covering every key under prefix. */
static void
add_prefix(json_object *o, const char *prefix)
{
	char end[ETCD_KEY_MAX + 1];
	size_t n = prefix_end(prefix, end, sizeof(end));

	add_b64(o, "key", prefix, strlen(prefix));
	add_b64(o, "range_end", end, n);
}

/* POST o (then freed) to path. */
static struct etcd_req *
post(struct etcd_http *h, const char *path, json_object *o, int stream,
    etcd_http_cb cb, void *arg)
{
	struct etcd_req *q;

	if (o == NULL)
		return NULL;
	q = etcd_http_post(h, path, json_object_to_json_string_ext(o,
	    JSON_C_TO_STRING_PLAIN), stream, cb, arg);
	json_object_put(o);
	return q;
}

/* A put request object. */
static json_object *
put_obj(const char *key, const char *value, int64_t lease)
{
	json_object *o = json_object_new_object();

	add_b64(o, "key", key, strlen(key));
	add_b64(o, "value", value, strlen(value));
	if (lease != 0)
		add_i64(o, "lease", lease);
	return o;
}

/* Every key under prefix. */
struct etcd_req *
etcd_range_prefix(struct etcd_http *h, const char *prefix, etcd_http_cb cb,
    void *arg)
{
	json_object *o = json_object_new_object();

	add_prefix(o, prefix);
	return post(h, "/v3/kv/range", o, 0, cb, arg);
}

/* Put key=value. */
struct etcd_req *
etcd_put(struct etcd_http *h, const char *key, const char *value,
    int64_t lease, etcd_http_cb cb, void *arg)
{
	return post(h, "/v3/kv/put", put_obj(key, value, lease), 0, cb, arg);
}

/* The compare of a txn: key's mod_revision == rev, or key absent. */
static json_object *
cmp_obj(const char *key, int64_t rev)
{
	json_object *c = json_object_new_object();

	add_b64(c, "key", key, strlen(key));
	json_object_object_add(c, "result", json_object_new_string("EQUAL"));
	json_object_object_add(c, "target", json_object_new_string(rev ?
	    "MOD" : "CREATE"));
	add_i64(c, rev ? "mod_revision" : "create_revision", rev);
	return c;
}

/* A txn: if cmp then op (a request object named what). */
static json_object *
txn_obj(json_object *cmp, const char *what, json_object *op)
{
	json_object *o = json_object_new_object(), *a, *s, *r;

	a = json_object_new_array();
	json_object_array_add(a, cmp);
	json_object_object_add(o, "compare", a);
	r = json_object_new_object();
	json_object_object_add(r, what, op);
	s = json_object_new_array();
	json_object_array_add(s, r);
	json_object_object_add(o, "success", s);
	return o;
}

/* Put only if cmpkey is at revision rev. */
struct etcd_req *
etcd_put_if(struct etcd_http *h, const char *cmpkey, int64_t rev,
    const char *key, const char *value, int64_t lease, etcd_http_cb cb,
    void *arg)
{
	return post(h, "/v3/kv/txn", txn_obj(cmp_obj(cmpkey, rev),
	    "request_put", put_obj(key, value, lease)), 0, cb, arg);
}

/* Delete key only if it is at revision rev. */
struct etcd_req *
etcd_delete_if(struct etcd_http *h, const char *key, int64_t rev,
    etcd_http_cb cb, void *arg)
{
	json_object *d = json_object_new_object();

	add_b64(d, "key", key, strlen(key));
	return post(h, "/v3/kv/txn", txn_obj(cmp_obj(key, rev),
	    "request_delete_range", d), 0, cb, arg);
}

/* Delete every key under prefix. */
struct etcd_req *
etcd_delete_prefix(struct etcd_http *h, const char *prefix, etcd_http_cb cb,
    void *arg)
{
	json_object *o = json_object_new_object();

	add_prefix(o, prefix);
	return post(h, "/v3/kv/deleterange", o, 0, cb, arg);
}

/* A lease of ttl seconds. */
struct etcd_req *
etcd_lease_grant(struct etcd_http *h, int64_t ttl, etcd_http_cb cb,
    void *arg)
{
	json_object *o = json_object_new_object();

	add_i64(o, "TTL", ttl);
	return post(h, "/v3/lease/grant", o, 0, cb, arg);
}

/* A request naming one lease. */
static json_object *
lease_obj(int64_t id)
{
	json_object *o = json_object_new_object();

	add_i64(o, "ID", id);
	return o;
}

/* Refresh a lease once (the gateway answers one message and ends). */
struct etcd_req *
etcd_lease_keepalive(struct etcd_http *h, int64_t id, etcd_http_cb cb,
    void *arg)
{
	return post(h, "/v3/lease/keepalive", lease_obj(id), 0, cb, arg);
}

/* Revoke a lease: its keys go at once. */
struct etcd_req *
etcd_lease_revoke(struct etcd_http *h, int64_t id, etcd_http_cb cb,
    void *arg)
{
	return post(h, "/v3/lease/revoke", lease_obj(id), 0, cb, arg);
}

/* Watch every key under prefix from rev on. */
struct etcd_req *
etcd_watch_prefix(struct etcd_http *h, const char *prefix, int64_t rev,
    etcd_http_cb cb, void *arg)
{
	json_object *o = json_object_new_object(), *c;

	c = json_object_new_object();
	add_prefix(c, prefix);
	if (rev > 0)
		add_i64(c, "start_revision", rev);
	json_object_object_add(o, "create_request", c);
	return post(h, "/v3/watch", o, 1, cb, arg);
}

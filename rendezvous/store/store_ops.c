/*
 * store_ops.c: the TCPStore request handlers, one op_*() per operation of
 * reference/tcpstore-protocol.md, and the kv table's callbacks that wake
 * waiting and watching connections (store_impl.h).  A handler replies
 * through store_out_*() or drops the connection with a logged reason.
 */
#include <stdint.h>
#include <stdlib.h>

#include "log.h"
#include "store.h"
#include "store_impl.h"

/* Log-escaped key of a request, for error lines. */
static const char *
op_key_text(char *buf, size_t len, const struct wire_str *k)
{
	return log_escape(buf, len, k->p, (size_t)k->len);
}

/* VALIDATE: only as the first request of a 2.x connection; no reply. */
static void
op_validate(struct store_conn *c, const struct wire_req *r)
{
	if (c->validated)
		store_conn_drop(c, LOG_LVL_WARN, "VALIDATE after handshake");
	c->validated = 1;
}

/* PING: echo the nonce. */
static void
op_ping(struct store_conn *c, const struct wire_req *r)
{
	uint8_t b[4];

	store_out_send(c, b, wire_enc_u32(b, r->u32));
}

/* SET: store, no reply. */
static void
op_set(struct store_conn *c, const struct wire_req *r)
{
	if (kv_set(c->st->kv, r->key.p, r->key.len, r->val.p, r->val.len) == -1)
		store_conn_drop(c, LOG_LVL_WARN, "out of memory in SET");
}

/* GET: the value; a missing key closes the connection (1.13, 2.x legacy). */
static void
op_get(struct store_conn *c, const struct wire_req *r)
{
	const uint8_t *v;
	size_t n;
	char k[128];

	if (kv_get(c->st->kv, r->key.p, r->key.len, &v, &n) == -1) {
		store_conn_drop(c, LOG_LVL_WARN, "GET of missing key key=%s",
		    op_key_text(k, sizeof k, &r->key));
		return;
	}
	store_out_bytes(c, v, n);
}

/* ADD: add to a decimal counter, reply the new value. */
static void
op_add(struct store_conn *c, const struct wire_req *r)
{
	enum kv_err err;
	int64_t v;
	char k[128];

	err = kv_add(c->st->kv, r->key.p, r->key.len, r->num, &v);
	if (err == KV_OK) {
		store_out_i64(c, v);
		return;
	}
	store_conn_drop(c, LOG_LVL_WARN, "ADD failed key=%s error=%s",
	    op_key_text(k, sizeof k, &r->key),
	    err == KV_NOT_NUMBER ? "value-not-a-number" :
	    err == KV_OVERFLOW ? "overflow" : "out-of-memory");
}

/* COMPARE_SET: the four-case table of kv_compare_set(). */
static void
op_compare_set(struct store_conn *c, const struct wire_req *r)
{
	const uint8_t *v;
	size_t n;

	if (kv_compare_set(c->st->kv, r->key.p, r->key.len, r->val.p,
	    r->val.len, r->val2.p, r->val2.len, &v, &n) == -1) {
		store_conn_drop(c, LOG_LVL_WARN, "out of memory in COMPARE_SET");
		return;
	}
	store_out_bytes(c, v, n);
}

/* CHECK: READY if every key exists. */
static void
op_check(struct store_conn *c, const struct wire_req *r)
{
	struct wire_str l = r->list, k;

	while (wire_list_next(&l, &k))
		if (!kv_exists(c->st->kv, k.p, k.len)) {
			store_out_u8(c, WIRE_CHECK_NOT_READY);
			return;
		}
	store_out_u8(c, WIRE_CHECK_READY);
}

/* c's table client, made on first use (most connections never wait). */
static struct kv_client *
op_kv_client(struct store_conn *c)
{
	if (c->kc == NULL && (c->kc = kv_client_new(c->st->kv, c)) == NULL)
		store_conn_drop(c, LOG_LVL_WARN, "out of memory for waits");
	return c->kc;
}

/* WAIT: STOP_WAITING now or when the last missing key appears. */
static void
op_wait(struct store_conn *c, const struct wire_req *r)
{
	if (op_kv_client(c) == NULL)
		return;
	switch (kv_wait(c->st->kv, c->kc, r->list.p, r->list.len)) {
	case 1:
		store_out_u8(c, WIRE_WAIT_STOP);
		break;
	case -1:
		store_conn_drop(c, LOG_LVL_WARN, "out of memory in WAIT");
		break;
	}
}

/* GETNUMKEYS: number of keys. */
static void
op_getnumkeys(struct store_conn *c, const struct wire_req *r)
{
	store_out_i64(c, (int64_t)kv_count(c->st->kv));
}

/* WATCH_KEY (1.13): register, reply KEY_CALLBACK_REGISTERED. */
static void
op_watch(struct store_conn *c, const struct wire_req *r)
{
	if (op_kv_client(c) == NULL)
		return;
	if (kv_watch(c->st->kv, c->kc, r->key.p, r->key.len) == -1) {
		store_conn_drop(c, LOG_LVL_WARN, "out of memory in WATCH_KEY");
		return;
	}
	store_out_u8(c, WIRE_WATCH_REGISTERED);
}

/* DELETE_KEY: 1 if it existed, else 0. */
static void
op_delete(struct store_conn *c, const struct wire_req *r)
{
	store_out_i64(c, kv_delete(c->st->kv, r->key.p, r->key.len));
}

/* APPEND: concatenate, no reply. */
static void
op_append(struct store_conn *c, const struct wire_req *r)
{
	if (kv_append(c->st->kv, r->key.p, r->key.len, r->val.p,
	    r->val.len) == -1)
		store_conn_drop(c, LOG_LVL_WARN, "out of memory in APPEND");
}

/* MULTI_GET: values in order; a missing key closes after the ones before. */
static void
op_multi_get(struct store_conn *c, const struct wire_req *r)
{
	struct wire_str l = r->list, k;
	const uint8_t *v;
	size_t n;
	char kt[128];

	while (c->state != STORE_C_DEAD && wire_list_next(&l, &k)) {
		if (kv_get(c->st->kv, k.p, k.len, &v, &n) == -1) {
			store_conn_drop(c, LOG_LVL_WARN,
			    "MULTI_GET of missing key key=%s",
			    op_key_text(kt, sizeof kt, &k));
			return;
		}
		store_out_bytes(c, v, n);
	}
}

/* MULTI_SET: SET each pair in order, no reply. */
static void
op_multi_set(struct store_conn *c, const struct wire_req *r)
{
	struct wire_str l = r->list, k, v;

	while (wire_list_next(&l, &k) && wire_list_next(&l, &v))
		if (kv_set(c->st->kv, k.p, k.len, v.p, v.len) == -1) {
			store_conn_drop(c, LOG_LVL_WARN,
			    "out of memory in MULTI_SET");
			return;
		}
}

/* CANCEL_WAIT: drop this connection's waits, always reply WAIT_CANCELED. */
static void
op_cancel_wait(struct store_conn *c, const struct wire_req *r)
{
	if (c->kc != NULL)
		kv_cancel(c->kc);
	store_out_u8(c, WIRE_WAIT_CANCELED);
}

/* QUEUE_PUSH: append to a queue, no reply. */
static void
op_queue_push(struct store_conn *c, const struct wire_req *r)
{
	if (kv_queue_push(c->st->kv, r->key.p, r->key.len, r->val.p,
	    r->val.len) == -1)
		store_conn_drop(c, LOG_LVL_WARN, "out of memory in QUEUE_PUSH");
}

/* QUEUE_POP: length before the pop, then the head value if there was one. */
static void
op_queue_pop(struct store_conn *c, const struct wire_req *r)
{
	uint8_t *v;
	size_t n;
	int64_t before;

	if (kv_queue_pop(c->st->kv, r->key.p, r->key.len, &before, &v,
	    &n) == -1) {
		store_conn_drop(c, LOG_LVL_WARN, "out of memory in QUEUE_POP");
		return;
	}
	store_out_i64(c, before);
	if (before > 0)
		store_out_bytes(c, v, n);
	free(v);
}

/* QUEUE_LEN: items queued under the key. */
static void
op_queue_len(struct store_conn *c, const struct wire_req *r)
{
	store_out_i64(c, kv_queue_len(c->st->kv, r->key.p, r->key.len));
}

/* kv_foreach() callback of LIST_KEYS. */
static void
op_list_one(const uint8_t *key, size_t klen, void *arg)
{
	store_out_bytes(arg, key, klen);
}

/* LIST_KEYS: count, then every key. */
static void
op_list_keys(struct store_conn *c, const struct wire_req *r)
{
	store_out_i64(c, (int64_t)kv_count(c->st->kv));
	kv_foreach(c->st->kv, op_list_one, c);
}

/* BARRIER: count an arrival; STOP_WAITING when the last one is in. */
static void
op_barrier(struct store_conn *c, const struct wire_req *r)
{
	enum kv_err err;
	int done;

	if (op_kv_client(c) == NULL)
		return;
	err = kv_barrier(c->st->kv, c->kc, r->key.p, r->key.len, r->num, &done);
	if (err != KV_OK)
		store_conn_drop(c, LOG_LVL_WARN, "BARRIER failed error=%s",
		    err == KV_NOT_NUMBER ? "value-not-a-number" :
		    err == KV_OVERFLOW ? "overflow" : "out-of-memory");
	else if (done)
		store_out_u8(c, WIRE_WAIT_STOP);
}

/* Request handlers by operation. */
void (*const store_ops[WOP__COUNT])(struct store_conn *,
    const struct wire_req *) = {
	[WOP_VALIDATE] = op_validate, [WOP_SET] = op_set,
	[WOP_COMPARE_SET] = op_compare_set, [WOP_GET] = op_get,
	[WOP_ADD] = op_add, [WOP_CHECK] = op_check, [WOP_WAIT] = op_wait,
	[WOP_GETNUMKEYS] = op_getnumkeys, [WOP_WATCH_KEY] = op_watch,
	[WOP_DELETE_KEY] = op_delete, [WOP_APPEND] = op_append,
	[WOP_MULTI_GET] = op_multi_get, [WOP_MULTI_SET] = op_multi_set,
	[WOP_CANCEL_WAIT] = op_cancel_wait, [WOP_PING] = op_ping,
	[WOP_QUEUE_PUSH] = op_queue_push, [WOP_QUEUE_POP] = op_queue_pop,
	[WOP_QUEUE_LEN] = op_queue_len, [WOP_LIST_KEYS] = op_list_keys,
	[WOP_BARRIER] = op_barrier,
};

/* kv callback: a wait of this connection is over. */
static void
op_kv_wake(void *owner)
{
	store_out_u8(owner, WIRE_WAIT_STOP);
}

/* kv callback: a key this (1.13) connection watches changed. */
static void
op_kv_watch(void *owner, int event, const uint8_t *key, size_t klen,
    const uint8_t *old, size_t olen, const uint8_t *nv, size_t nlen)
{
	store_out_u8(owner, (uint8_t)event);
	store_out_bytes(owner, key, klen);
	store_out_bytes(owner, old, olen);
	store_out_bytes(owner, nv, nlen);
}

const struct kv_ops store_ops_kv = { op_kv_wake, op_kv_watch };

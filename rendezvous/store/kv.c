/*
 * kv.c: the store's key/value table (see kv.h).
 *
 * One chained hash table (SipHash-1-3 with a random key, so clients cannot
 * choose colliding keys) holds an entry per name that has a value, waiters,
 * watchers or a queue; an entry with none of these is freed at once.
 * Waits are nodes linked both into the entry's list (wake order) and the
 * client's list (cancel and close), so every operation touches only the
 * keys and clients involved: nothing scans all clients.
 */
#include <sys/queue.h>
#include <sys/random.h>

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kv.h"
#include "wire.h"

struct kv_entry;

/* One registration of a client waiting for a key (or watching it). */
struct kv_node {
	TAILQ_ENTRY(kv_node)	 by_entry;
	LIST_ENTRY(kv_node)	 by_client;
	struct kv_entry		*entry;
	struct kv_client	*client;
};
TAILQ_HEAD(kv_nodeq, kv_node);
LIST_HEAD(kv_nodel, kv_node);

/* One queued value. */
struct kv_qitem {
	struct kv_qitem	*next;
	size_t		 len;
	uint8_t		 data[];
};

struct kv_entry {
	struct kv_entry	*next;		/* hash chain */
	uint64_t	 hash;
	int		 present;	/* has a value */
	uint8_t		*val;
	size_t		 vlen, vcap;
	struct kv_nodeq	 waiters;
	struct kv_nodeq	 watchers;
	struct kv_qitem	*qhead, **qtail;
	size_t		 qlen;
	size_t		 klen;
	uint8_t		 key[];
};

struct kv_client {
	struct kv	*kv;
	void		*owner;
	long		 outstanding;
	struct kv_nodel	 waits;
	struct kv_nodel	 watches;
	LIST_ENTRY(kv_client) link;
};

struct kv {
	struct kv_ops	 ops;
	struct kv_entry	**buckets;
	size_t		 nbuckets;	/* power of two */
	size_t		 nentries;	/* all entries */
	size_t		 npresent;	/* entries with a value */
	uint64_t	 sipkey[2];
	LIST_HEAD(, kv_client) clients;
};

#define KV_MIN_BUCKETS	1024

/* Rotate left. */
static inline uint64_t
kv_rotl(uint64_t x, int b)
{
	return (x << b) | (x >> (64 - b));
}

#define SIPROUND do {							\
	v0 += v1; v1 = kv_rotl(v1, 13); v1 ^= v0; v0 = kv_rotl(v0, 32);	\
	v2 += v3; v3 = kv_rotl(v3, 16); v3 ^= v2;			\
	v0 += v3; v3 = kv_rotl(v3, 21); v3 ^= v0;			\
	v2 += v1; v1 = kv_rotl(v1, 17); v1 ^= v2; v2 = kv_rotl(v2, 32);	\
} while (0)

/* SipHash-1-3 of a key under the table's random key. */
static uint64_t
kv_hash(const struct kv *kv, const uint8_t *p, size_t n)
{
	uint64_t v0 = 0x736f6d6570736575ULL ^ kv->sipkey[0];
	uint64_t v1 = 0x646f72616e646f6dULL ^ kv->sipkey[1];
	uint64_t v2 = 0x6c7967656e657261ULL ^ kv->sipkey[0];
	uint64_t v3 = 0x7465646279746573ULL ^ kv->sipkey[1];
	uint64_t m, b = (uint64_t)n << 56;
	size_t i, left = n & 7;

	for (i = 0; i + 8 <= n; i += 8) {
		m = wire_get_u64(p + i);
		v3 ^= m;
		SIPROUND;
		v0 ^= m;
	}
	for (m = 0; left > 0; left--)
		m |= (uint64_t)p[i + left - 1] << (8 * (left - 1));
	b |= m;
	v3 ^= b;
	SIPROUND;
	v0 ^= b;
	v2 ^= 0xff;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	return v0 ^ v1 ^ v2 ^ v3;
}

/* A new, empty table; NULL on ENOMEM. */
struct kv *
kv_new(const struct kv_ops *ops)
{
	struct kv *kv;

	if ((kv = calloc(1, sizeof *kv)) == NULL)
		return NULL;
	kv->ops = *ops;
	kv->nbuckets = KV_MIN_BUCKETS;
	if ((kv->buckets = calloc(kv->nbuckets, sizeof *kv->buckets)) == NULL) {
		free(kv);
		return NULL;
	}
	if (getrandom(kv->sipkey, sizeof kv->sipkey, GRND_NONBLOCK) !=
	    (ssize_t)sizeof kv->sipkey) {
		kv->sipkey[0] = (uint64_t)time(NULL) ^ (uint64_t)(uintptr_t)kv;
		kv->sipkey[1] = (uint64_t)getpid() * 0x9E3779B97F4A7C15ULL;
	}
	LIST_INIT(&kv->clients);
	return kv;
}

/* The entry for key, or NULL. */
static struct kv_entry *
kv_find(const struct kv *kv, const uint8_t *key, size_t klen)
{
	uint64_t h = kv_hash(kv, key, klen);
	struct kv_entry *e;

	for (e = kv->buckets[h & (kv->nbuckets - 1)]; e != NULL; e = e->next)
		if (e->hash == h && e->klen == klen &&
		    (klen == 0 || memcmp(e->key, key, klen) == 0))
			return e;
	return NULL;
}

/* Double the bucket array when the table gets crowded (best effort). */
static void
kv_grow(struct kv *kv)
{
	struct kv_entry **nb, *e, *next;
	size_t i, n = kv->nbuckets * 2;

	if (kv->nentries <= kv->nbuckets || n > SIZE_MAX / sizeof *nb)
		return;
	if ((nb = calloc(n, sizeof *nb)) == NULL)
		return;
	for (i = 0; i < kv->nbuckets; i++)
		for (e = kv->buckets[i]; e != NULL; e = next) {
			next = e->next;
			e->next = nb[e->hash & (n - 1)];
			nb[e->hash & (n - 1)] = e;
		}
	free(kv->buckets);
	kv->buckets = nb;
	kv->nbuckets = n;
}

/* The entry for key, created empty if missing; NULL on ENOMEM. */
static struct kv_entry *
kv_lookup(struct kv *kv, const uint8_t *key, size_t klen)
{
	struct kv_entry *e, **b;

	if ((e = kv_find(kv, key, klen)) != NULL)
		return e;
	if (klen > SIZE_MAX - sizeof *e ||
	    (e = calloc(1, sizeof *e + klen)) == NULL)
		return NULL;
	e->hash = kv_hash(kv, key, klen);
	e->klen = klen;
	if (klen > 0)
		memcpy(e->key, key, klen);
	TAILQ_INIT(&e->waiters);
	TAILQ_INIT(&e->watchers);
	e->qtail = &e->qhead;
	b = &kv->buckets[e->hash & (kv->nbuckets - 1)];
	e->next = *b;
	*b = e;
	kv->nentries++;
	kv_grow(kv);
	return e;
}

/* Free an entry that has nothing left: no value, waiter, watcher, queue. */
static void
kv_gc(struct kv *kv, struct kv_entry *e)
{
	struct kv_entry **pp;

	if (e->present || e->qlen > 0 || !TAILQ_EMPTY(&e->waiters) ||
	    !TAILQ_EMPTY(&e->watchers))
		return;
	for (pp = &kv->buckets[e->hash & (kv->nbuckets - 1)]; *pp != e;
	    pp = &(*pp)->next)
		;
	*pp = e->next;
	kv->nentries--;
	free(e->val);
	free(e);
}

/* Unlink and free one wait node. */
static void
kv_node_drop(struct kv_node *n, struct kv_nodeq *q)
{
	TAILQ_REMOVE(q, n, by_entry);
	LIST_REMOVE(n, by_client);
	free(n);
}

/* Wake waiters of e: all of them, or (one) until one client is released. */
static void
kv_wake(struct kv *kv, struct kv_entry *e, int one)
{
	struct kv_node *n;
	struct kv_client *c;

	while ((n = TAILQ_FIRST(&e->waiters)) != NULL) {
		c = n->client;
		kv_node_drop(n, &e->waiters);
		if (--c->outstanding == 0) {
			kv->ops.wake(c->owner);
			if (one)
				break;
		}
	}
}

/* Tell every watcher of e about a change. */
static void
kv_notify(struct kv *kv, struct kv_entry *e, int event, const uint8_t *old,
    size_t olen)
{
	struct kv_node *n;
	const uint8_t *nv = event == WIRE_WATCH_DELETED ? NULL : e->val;
	size_t nlen = event == WIRE_WATCH_DELETED ? 0 : e->vlen;

	TAILQ_FOREACH(n, &e->watchers, by_entry)
		kv->ops.watch(n->client->owner, event, e->key, e->klen, old,
		    olen, nv, nlen);
}

/* Replace e's value with a copy of val, notify watchers, maybe wake. */
static int
kv_store(struct kv *kv, struct kv_entry *e, const uint8_t *val, size_t vlen,
    int wake)
{
	uint8_t *nv = NULL, *old = e->val;
	size_t olen = e->vlen;
	int was = e->present;

	if (TAILQ_EMPTY(&e->watchers) && vlen > 0 && vlen <= e->vcap &&
	    e->vcap <= 2 * vlen + 64) {
		/* Reuse the buffer: nobody needs the old value. */
		memmove(e->val, val, vlen);
		e->vlen = vlen;
		if (!was)
			kv->npresent++;
		e->present = 1;
		if (wake)
			kv_wake(kv, e, 0);
		return 0;
	}
	if (vlen > 0 && (nv = malloc(vlen)) == NULL)
		return -1;
	if (vlen > 0)
		memcpy(nv, val, vlen);
	e->val = nv;
	e->vlen = e->vcap = vlen;
	if (!was)
		kv->npresent++;
	e->present = 1;
	if (!TAILQ_EMPTY(&e->watchers))
		kv_notify(kv, e, was ? WIRE_WATCH_UPDATED : WIRE_WATCH_CREATED,
		    was ? old : NULL, was ? olen : 0);
	free(old);
	if (wake)
		kv_wake(kv, e, 0);
	return 0;
}

/* SET: store (overwrite) a value, wake waiters, notify watchers. */
int
kv_set(struct kv *kv, const uint8_t *key, size_t klen, const uint8_t *val,
    size_t vlen)
{
	struct kv_entry *e;

	if ((e = kv_lookup(kv, key, klen)) == NULL)
		return -1;
	if (kv_store(kv, e, val, vlen, 1) == -1) {
		kv_gc(kv, e);
		return -1;
	}
	return 0;
}

/* Concatenate val to e's present value, copying (watchers see old/new). */
static int
kv_append_copy(struct kv *kv, struct kv_entry *e, const uint8_t *val,
    size_t vlen)
{
	uint8_t *nv;
	int rc;

	if ((nv = malloc(e->vlen + vlen + 1)) == NULL)
		return -1;
	if (e->vlen > 0)
		memcpy(nv, e->val, e->vlen);
	if (vlen > 0)
		memcpy(nv + e->vlen, val, vlen);
	rc = kv_store(kv, e, nv, e->vlen + vlen, 1);
	free(nv);
	return rc;
}

/* APPEND: create the key with val or concatenate val to its value. */
int
kv_append(struct kv *kv, const uint8_t *key, size_t klen, const uint8_t *val,
    size_t vlen)
{
	struct kv_entry *e;
	uint8_t *nv;
	size_t cap;

	if ((e = kv_lookup(kv, key, klen)) == NULL)
		return -1;
	if (!e->present) {
		if (kv_store(kv, e, val, vlen, 1) == -1) {
			kv_gc(kv, e);
			return -1;
		}
		return 0;
	}
	if (!TAILQ_EMPTY(&e->watchers))
		return kv_append_copy(kv, e, val, vlen);
	if (vlen > e->vcap - e->vlen) {
		cap = e->vcap * 2 > e->vlen + vlen ? e->vcap * 2 : e->vlen + vlen;
		if ((nv = realloc(e->val, cap)) == NULL)
			return -1;
		e->val = nv;
		e->vcap = cap;
	}
	if (vlen > 0)
		memcpy(e->val + e->vlen, val, vlen);
	e->vlen += vlen;
	kv_wake(kv, e, 0);
	return 0;
}

/* GET: the value of a present key, borrowed. */
int
kv_get(struct kv *kv, const uint8_t *key, size_t klen, const uint8_t **val,
    size_t *vlen)
{
	struct kv_entry *e = kv_find(kv, key, klen);

	if (e == NULL || !e->present)
		return -1;
	*val = e->val;
	*vlen = e->vlen;
	return 0;
}

/* Whether c is a C isspace() character. */
static int
kv_isspace(uint8_t c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

/* Parse a counter like std::stoll: blanks, a sign, digits, junk ignored. */
enum kv_err
kv_parse_i64(const uint8_t *s, size_t len, int64_t *out)
{
	size_t i = 0;
	int neg = 0, digits = 0;
	uint64_t v = 0, lim;

	while (i < len && kv_isspace(s[i]))
		i++;
	if (i < len && (s[i] == '+' || s[i] == '-'))
		neg = s[i++] == '-';
	lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	for (; i < len && s[i] >= '0' && s[i] <= '9'; i++, digits++) {
		if (v > (lim - (uint64_t)(s[i] - '0')) / 10)
			return KV_OVERFLOW;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (digits == 0)
		return KV_NOT_NUMBER;
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return KV_OK;
}

/* Write v in decimal at the end of buf[24]; returns the digit count. */
static size_t
kv_format_i64(char buf[24], int64_t v)
{
	uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	size_t n = 0;

	do {
		buf[23 - n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u != 0);
	if (v < 0)
		buf[23 - n++] = '-';
	return n;
}

/* Add delta to the decimal counter at e (missing counts as 0). */
static enum kv_err
kv_incr(struct kv *kv, struct kv_entry *e, int64_t delta, int64_t *result,
    int wake)
{
	char buf[24];
	int64_t v = 0;
	enum kv_err err;
	size_t n;

	if (e->present && (err = kv_parse_i64(e->val, e->vlen, &v)) != KV_OK)
		return err;
	if (__builtin_add_overflow(v, delta, &v))
		return KV_OVERFLOW;
	n = kv_format_i64(buf, v);
	if (kv_store(kv, e, (const uint8_t *)buf + sizeof buf - n, n, wake) == -1)
		return KV_ENOMEM;
	*result = v;
	return KV_OK;
}

/* ADD: add delta to a decimal counter; a missing key counts as 0. */
enum kv_err
kv_add(struct kv *kv, const uint8_t *key, size_t klen, int64_t delta,
    int64_t *result)
{
	struct kv_entry *e;
	enum kv_err err;

	if ((e = kv_lookup(kv, key, klen)) == NULL)
		return KV_ENOMEM;
	if ((err = kv_incr(kv, e, delta, result, 1)) != KV_OK)
		kv_gc(kv, e);
	return err;
}

/*
 * COMPARE_SET, torch's four cases: missing + empty expected creates the
 * key (reply desired); missing + non-empty expected replies expected;
 * present and equal stores desired (reply desired); else the current value.
 * When it stores a value it wakes the key's waiters (libuv does; 1.13 and
 * the 2.x legacy server never wake), but unlike libuv it does not release
 * waiters of a key that is still missing.
 */
int
kv_compare_set(struct kv *kv, const uint8_t *key, size_t klen,
    const uint8_t *exp, size_t elen, const uint8_t *des, size_t dlen,
    const uint8_t **reply, size_t *rlen)
{
	struct kv_entry *e = kv_find(kv, key, klen);

	if ((e == NULL || !e->present) && elen > 0) {
		*reply = exp;
		*rlen = elen;
		return 0;
	}
	if (e != NULL && e->present &&
	    (e->vlen != elen || (elen > 0 && memcmp(e->val, exp, elen) != 0))) {
		*reply = e->val;
		*rlen = e->vlen;
		return 0;
	}
	if (e == NULL && (e = kv_lookup(kv, key, klen)) == NULL)
		return -1;
	if (kv_store(kv, e, des, dlen, 1) == -1) {
		kv_gc(kv, e);
		return -1;
	}
	*reply = e->val;
	*rlen = e->vlen;
	return 0;
}

/* DELETE_KEY: 1 if the key existed; waiters stay, watchers hear of it. */
int
kv_delete(struct kv *kv, const uint8_t *key, size_t klen)
{
	struct kv_entry *e = kv_find(kv, key, klen);

	if (e == NULL || !e->present)
		return 0;
	e->present = 0;
	kv->npresent--;
	if (!TAILQ_EMPTY(&e->watchers))
		kv_notify(kv, e, WIRE_WATCH_DELETED, e->val, e->vlen);
	free(e->val);
	e->val = NULL;
	e->vlen = e->vcap = 0;
	kv_gc(kv, e);
	return 1;
}

/* Whether an entry counts as existing for CHECK and WAIT. */
static int
kv_entry_exists(const struct kv_entry *e)
{
	return e != NULL && (e->present || e->qlen > 0);
}

/* 1 if the key exists or a queue of that name is not empty. */
int
kv_exists(struct kv *kv, const uint8_t *key, size_t klen)
{
	return kv_entry_exists(kv_find(kv, key, klen));
}

/* Number of keys with a value. */
size_t
kv_count(const struct kv *kv)
{
	return kv->npresent;
}

/* A new client of the table; NULL on ENOMEM. */
struct kv_client *
kv_client_new(struct kv *kv, void *owner)
{
	struct kv_client *c;

	if ((c = calloc(1, sizeof *c)) == NULL)
		return NULL;
	c->kv = kv;
	c->owner = owner;
	LIST_INIT(&c->waits);
	LIST_INIT(&c->watches);
	LIST_INSERT_HEAD(&kv->clients, c, link);
	return c;
}

/* Register c as waiting on (or watching) key once more. */
static int
kv_register(struct kv *kv, struct kv_client *c, const uint8_t *key,
    size_t klen, int watch)
{
	struct kv_entry *e;
	struct kv_node *n;

	if ((e = kv_lookup(kv, key, klen)) == NULL)
		return -1;
	if ((n = calloc(1, sizeof *n)) == NULL) {
		kv_gc(kv, e);
		return -1;
	}
	n->entry = e;
	n->client = c;
	if (watch) {
		TAILQ_INSERT_TAIL(&e->watchers, n, by_entry);
		LIST_INSERT_HEAD(&c->watches, n, by_client);
	} else {
		TAILQ_INSERT_TAIL(&e->waiters, n, by_entry);
		LIST_INSERT_HEAD(&c->waits, n, by_client);
	}
	return 0;
}

/*
 * WAIT: 1 if every key exists now.  Otherwise the client is registered on
 * every missing key (twice if listed twice), its outstanding count is set
 * to the number of registrations (overwriting an older count, as torch
 * does), and 0 is returned.  -1 on ENOMEM (caller drops the client).
 */
int
kv_wait(struct kv *kv, struct kv_client *c, const uint8_t *list,
    size_t listlen)
{
	struct wire_str l = { list, listlen }, k;
	long n = 0;

	while (wire_list_next(&l, &k))
		if (!kv_exists(kv, k.p, k.len))
			n++;
	if (n == 0)
		return 1;
	l.p = list;
	l.len = listlen;
	while (wire_list_next(&l, &k))
		if (!kv_exists(kv, k.p, k.len) &&
		    kv_register(kv, c, k.p, k.len, 0) == -1)
			return -1;
	c->outstanding = n;
	return 0;
}

/* Drop every wait registration of the client. */
void
kv_cancel(struct kv_client *c)
{
	struct kv_node *n;
	struct kv_entry *e;

	while ((n = LIST_FIRST(&c->waits)) != NULL) {
		e = n->entry;
		kv_node_drop(n, &e->waiters);
		kv_gc(c->kv, e);
	}
	c->outstanding = 0;
}

/* Drop every watch of the client. */
static void
kv_unwatch(struct kv_client *c)
{
	struct kv_node *n;
	struct kv_entry *e;

	while ((n = LIST_FIRST(&c->watches)) != NULL) {
		e = n->entry;
		kv_node_drop(n, &e->watchers);
		kv_gc(c->kv, e);
	}
}

/* Free a client and everything it registered. */
void
kv_client_free(struct kv_client *c)
{
	if (c == NULL)
		return;
	kv_cancel(c);
	kv_unwatch(c);
	LIST_REMOVE(c, link);
	free(c);
}

/* Keys the client still waits for. */
long
kv_client_outstanding(const struct kv_client *c)
{
	return c->outstanding;
}

/* WATCH_KEY: the client hears of every change of key from now on. */
int
kv_watch(struct kv *kv, struct kv_client *c, const uint8_t *key, size_t klen)
{
	return kv_register(kv, c, key, klen, 1);
}

/*
 * BARRIER: add one to the counter at key.  When it reaches world every
 * waiter of key is woken and *done = 1; else the client waits on key
 * (outstanding 1) and *done = 0.
 */
enum kv_err
kv_barrier(struct kv *kv, struct kv_client *c, const uint8_t *key,
    size_t klen, int64_t world, int *done)
{
	struct kv_entry *e;
	enum kv_err err;
	int64_t v;

	if ((e = kv_lookup(kv, key, klen)) == NULL)
		return KV_ENOMEM;
	if ((err = kv_incr(kv, e, 1, &v, 0)) != KV_OK) {
		kv_gc(kv, e);
		return err;
	}
	*done = v >= world;
	if (*done) {
		kv_wake(kv, e, 0);
		return KV_OK;
	}
	if (kv_register(kv, c, key, klen, 0) == -1)
		return KV_ENOMEM;
	c->outstanding = 1;
	return KV_OK;
}

/* QUEUE_PUSH: append to the queue of key and release one waiter. */
int
kv_queue_push(struct kv *kv, const uint8_t *key, size_t klen,
    const uint8_t *val, size_t vlen)
{
	struct kv_entry *e;
	struct kv_qitem *q;

	if ((e = kv_lookup(kv, key, klen)) == NULL)
		return -1;
	if (vlen > SIZE_MAX - sizeof *q || (q = malloc(sizeof *q + vlen)) == NULL) {
		kv_gc(kv, e);
		return -1;
	}
	q->next = NULL;
	q->len = vlen;
	if (vlen > 0)
		memcpy(q->data, val, vlen);
	*e->qtail = q;
	e->qtail = &q->next;
	e->qlen++;
	kv_wake(kv, e, 1);
	return 0;
}

/* QUEUE_POP: length before the pop and, if it was > 0, the head value. */
int
kv_queue_pop(struct kv *kv, const uint8_t *key, size_t klen, int64_t *before,
    uint8_t **val, size_t *vlen)
{
	struct kv_entry *e = kv_find(kv, key, klen);
	struct kv_qitem *q;

	*val = NULL;
	*vlen = 0;
	*before = e != NULL ? (int64_t)e->qlen : 0;
	if (e == NULL || e->qlen == 0)
		return 0;
	q = e->qhead;
	if ((*val = malloc(q->len > 0 ? q->len : 1)) == NULL)
		return -1;
	memcpy(*val, q->data, q->len);
	*vlen = q->len;
	if ((e->qhead = q->next) == NULL)
		e->qtail = &e->qhead;
	e->qlen--;
	free(q);
	kv_gc(kv, e);
	return 0;
}

/* QUEUE_LEN: items in the queue of key (0 if none). */
int64_t
kv_queue_len(struct kv *kv, const uint8_t *key, size_t klen)
{
	struct kv_entry *e = kv_find(kv, key, klen);

	return e != NULL ? (int64_t)e->qlen : 0;
}

/* Call fn for every present key. */
void
kv_foreach(struct kv *kv, void (*fn)(const uint8_t *, size_t, void *),
    void *arg)
{
	struct kv_entry *e;
	size_t i;

	for (i = 0; i < kv->nbuckets; i++)
		for (e = kv->buckets[i]; e != NULL; e = e->next)
			if (e->present)
				fn(e->key, e->klen, arg);
}

/* Free an entry's value and queue. */
static void
kv_entry_free(struct kv_entry *e)
{
	struct kv_qitem *q;

	while ((q = e->qhead) != NULL) {
		e->qhead = q->next;
		free(q);
	}
	free(e->val);
	free(e);
}

/* Drop every key, queue, wait and watch; clients stay valid. */
void
kv_reset(struct kv *kv)
{
	struct kv_client *c;
	struct kv_node *n;
	struct kv_entry *e, *next;
	size_t i;

	LIST_FOREACH(c, &kv->clients, link) {
		while ((n = LIST_FIRST(&c->waits)) != NULL)
			kv_node_drop(n, &n->entry->waiters);
		while ((n = LIST_FIRST(&c->watches)) != NULL)
			kv_node_drop(n, &n->entry->watchers);
		c->outstanding = 0;
	}
	for (i = 0; i < kv->nbuckets; i++) {
		for (e = kv->buckets[i]; e != NULL; e = next) {
			next = e->next;
			kv_entry_free(e);
		}
		kv->buckets[i] = NULL;
	}
	kv->nentries = kv->npresent = 0;
}

/* Free the table; its clients must be freed first. */
void
kv_free(struct kv *kv)
{
	struct kv_client *c;

	if (kv == NULL)
		return;
	kv_reset(kv);
	while ((c = LIST_FIRST(&kv->clients)) != NULL)
		kv_client_free(c);
	free(kv->buckets);
	free(kv);
}

/* Check counts, chains and registration links (tests). */
int
kv_validate(const struct kv *kv)
{
	const struct kv_entry *e;
	const struct kv_node *n;
	const struct kv_client *c;
	size_t i, ne = 0, np = 0, nq;

	for (i = 0; i < kv->nbuckets; i++)
		for (e = kv->buckets[i]; e != NULL; e = e->next) {
			if ((e->hash & (kv->nbuckets - 1)) != i ||
			    e->hash != kv_hash(kv, e->key, e->klen))
				return -1;
			ne++;
			np += e->present != 0;
			if (!e->present && e->qlen == 0 &&
			    TAILQ_EMPTY(&e->waiters) && TAILQ_EMPTY(&e->watchers))
				return -1;
			nq = 0;
			for (const struct kv_qitem *q = e->qhead; q; q = q->next)
				nq++;
			if (nq != e->qlen)
				return -1;
			TAILQ_FOREACH(n, &e->waiters, by_entry)
				if (n->entry != e)
					return -1;
		}
	if (ne != kv->nentries || np != kv->npresent)
		return -1;
	LIST_FOREACH(c, &kv->clients, link)
		LIST_FOREACH(n, &c->waits, by_client)
			if (n->client != c)
				return -1;
	return 0;
}

/*
 * kv.h: the store's key/value table with TCPStore semantics: binary-safe
 * keys and values, ADD on decimal text, COMPARE_SET's four cases, per-key
 * lists of waiting clients with a per-client outstanding count, WATCH_KEY
 * watchers (torch 1.13) and FIFO queues in a separate namespace.
 *
 * No I/O: the table tells its owner through kv_ops when a client's wait is
 * over or a watched key changed.  Callbacks must not call back into the
 * table (queue the bytes and return).
 */
#ifndef CGRUN_KV_H
#define CGRUN_KV_H

#include <stddef.h>
#include <stdint.h>

struct kv;
struct kv_client;

/* What the table reports to its owner. */
struct kv_ops {
	/* The client's outstanding wait count reached zero: STOP_WAITING. */
	void	(*wake)(void *owner);
	/* A key watched by the client changed (WIRE_WATCH_* event). */
	void	(*watch)(void *owner, int event, const uint8_t *key,
		    size_t klen, const uint8_t *old, size_t olen,
		    const uint8_t *new_, size_t nlen);
};

/* Why kv_add() or kv_barrier() refused. */
enum kv_err { KV_OK = 0, KV_ENOMEM, KV_NOT_NUMBER, KV_OVERFLOW };

struct kv *kv_new(const struct kv_ops *);
void	kv_free(struct kv *);
/* Drop every key, queue, wait and watch; clients stay valid and idle. */
void	kv_reset(struct kv *);

struct kv_client *kv_client_new(struct kv *, void *owner);
/* Drop the client's waits and watches, then the client; NULL is a no-op. */
void	kv_client_free(struct kv_client *);
/* Keys the client still waits for (may be negative after a stale wake). */
long	kv_client_outstanding(const struct kv_client *);

/* Number of keys (GETNUMKEYS: queues not counted). */
size_t	kv_count(const struct kv *);

int	kv_set(struct kv *, const uint8_t *key, size_t klen,
	    const uint8_t *val, size_t vlen);
int	kv_append(struct kv *, const uint8_t *key, size_t klen,
	    const uint8_t *val, size_t vlen);
/* 0 and the value (borrowed until the next change) or -1 if missing. */
int	kv_get(struct kv *, const uint8_t *key, size_t klen,
	    const uint8_t **val, size_t *vlen);
enum kv_err kv_add(struct kv *, const uint8_t *key, size_t klen,
	    int64_t delta, int64_t *result);
/* Reply bytes are borrowed (from the table or the request) until the next
 * change.  Returns -1 only on ENOMEM. */
int	kv_compare_set(struct kv *, const uint8_t *key, size_t klen,
	    const uint8_t *exp, size_t elen, const uint8_t *des, size_t dlen,
	    const uint8_t **reply, size_t *rlen);
/* 1 if the key existed (and is now gone), 0 if not. */
int	kv_delete(struct kv *, const uint8_t *key, size_t klen);
/* 1 if the key exists or a queue of that name is not empty. */
int	kv_exists(struct kv *, const uint8_t *key, size_t klen);

/* WAIT on a list of keys (wire_list_next encoding, n items): 1 all present
 * now, 0 registered (wake comes later), -1 ENOMEM. */
int	kv_wait(struct kv *, struct kv_client *, const uint8_t *list,
	    size_t listlen);
/* Drop every wait registration of the client. */
void	kv_cancel(struct kv_client *);
/* WATCH_KEY: events for key go to the client until it is freed. */
int	kv_watch(struct kv *, struct kv_client *, const uint8_t *key,
	    size_t klen);
/* BARRIER: count an arrival; 1 complete (everybody woken), 0 this client
 * waits, or an error. */
enum kv_err kv_barrier(struct kv *, struct kv_client *, const uint8_t *key,
	    size_t klen, int64_t world, int *done);

int	kv_queue_push(struct kv *, const uint8_t *key, size_t klen,
	    const uint8_t *val, size_t vlen);
/* Pop the head: *before = length before the pop; when it was > 0 the
 * value is returned in *val (malloc'd, caller frees; NULL if empty). */
int	kv_queue_pop(struct kv *, const uint8_t *key, size_t klen,
	    int64_t *before, uint8_t **val, size_t *vlen);
int64_t	kv_queue_len(struct kv *, const uint8_t *key, size_t klen);

/* Call fn for every present key (LIST_KEYS). */
void	kv_foreach(struct kv *, void (*fn)(const uint8_t *key, size_t klen,
	    void *arg), void *arg);

/* Check internal invariants (tests); 0 if consistent, else -1. */
int	kv_validate(const struct kv *);

/* std::stoll-like parse of a stored counter; 0 or a KV_* error. */
enum kv_err kv_parse_i64(const uint8_t *s, size_t len, int64_t *out);

#endif /* CGRUN_KV_H */

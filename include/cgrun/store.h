/*
 * store.h: a client for TCPStore-compatible key/value stores (cgrun-rdzvd,
 * and torch 2.x's own TCPStore server), wire-compatible with PyTorch's C++
 * TCPStore client so C and Python workers share keys.
 *
 * Dialect: only torch 2.x's (VALIDATE + PING handshake, CANCEL_WAIT).  The
 * 1.13 dialect has no way to cancel a timed-out WAIT (the connection is then
 * one byte out of step for ever), no APPEND/MULTI_GET/MULTI_SET, and
 * cgrun-rdzvd speaks both dialects anyway; a client that cannot recover from
 * a timeout would break the "connection stays usable" contract below.
 *
 * Keys: every key is a NUL-terminated string.  As torch's C++ client does,
 * the key sent on the wire is "/" + key.  A prefix behaves exactly like
 * torch's PrefixStore: with prefix P, key k becomes P + "/" + k (so the wire
 * key is "/" + P + "/" + k), and prefixes nest: cgrun_store_prefixed(s, "b")
 * on a handle with prefix "a" maps k to "a/b/k".  An empty prefix "" is a
 * real prefix (k -> "/k", wire "//k"), as in PrefixStore("", store); NULL
 * means no prefix.
 *
 * Values are byte strings (may be empty, may contain NUL).  Values returned
 * by the library are malloc'd, carry one extra NUL byte after `len` bytes
 * for convenience, and are freed by the caller with free().
 *
 * Timeouts: every call is bounded.  The store timeout (given to
 * cgrun_store_connect, changed with cgrun_store_set_timeout) bounds
 * connecting, get()'s implicit wait and every reply (resolving a host name
 * is left to the system resolver and its own timeouts).  When a wait times out
 * the client cancels it on the server (CANCEL_WAIT) and the connection stays
 * usable; the call returns -1 with errno ETIMEDOUT.  Any other failure
 * (server closed the connection, e.g. on GET of a missing key; a reply that
 * did not arrive in time; a malformed reply) breaks the connection: later
 * calls on it (and on every handle sharing it) fail with errno ENOTCONN.
 *
 * Errors: functions return -1 (or NULL) with errno set and never print,
 * exit or abort; cgrun_store_errmsg() returns a sentence describing the
 * last failure on that handle.
 *
 * Threads: a connection (a handle and all handles made from it with
 * cgrun_store_prefixed) must be used by one thread at a time.
 */
#ifndef CGRUN_STORE_H_PUBLIC
#define CGRUN_STORE_H_PUBLIC

#include <stddef.h>
#include <stdint.h>

#include "cgrun/cgrun.h"

#ifdef __cplusplus
extern "C" {
#endif

struct cgrun_store;

/* Use the store's own timeout (argument of cgrun_store_wait). */
#define CGRUN_STORE_DEFAULT_TIMEOUT	(-1)

/* Longest key (after prefixing) and value the client will send or accept. */
#define CGRUN_STORE_MAX_KEY	(64u * 1024)
#define CGRUN_STORE_MAX_VALUE	(1024u * 1024 * 1024)
/* Most keys in one check/wait/multi_get/multi_set. */
#define CGRUN_STORE_MAX_KEYS	(128u * 1024)

/*
 * Connect to host:port (name or numeric address) and do the 2.x handshake.
 * Refused, reset or unanswered attempts are retried with exponential
 * backoff and jitter until timeout_ms (> 0) has passed, so a client may
 * start before its server.  timeout_ms also becomes the store timeout.
 * On failure returns NULL with errno set and a message in err (a buffer of
 * CGRUN_ERRLEN bytes; may be NULL).
 */
CGRUN_EXPORT struct cgrun_store *cgrun_store_connect(const char *host,
    int port, int timeout_ms, char *err);

/* Release a handle; the connection closes with its last handle.  NULL ok. */
CGRUN_EXPORT void cgrun_store_free(struct cgrun_store *);

/* Replace this handle's prefix (NULL: none).  0, or -1 with errno. */
CGRUN_EXPORT int cgrun_store_set_prefix(struct cgrun_store *,
    const char *prefix);

/*
 * A new handle on the parent's connection whose keys go through
 * PrefixStore(prefix, parent): parent's prefix (if any) + "/" + prefix.
 * The handles may be freed in any order.  NULL with errno on failure.
 */
CGRUN_EXPORT struct cgrun_store *cgrun_store_prefixed(struct cgrun_store *parent,
    const char *prefix);

/* The handle's prefix, or NULL if it has none (errno untouched), or NULL
 * with EINVAL for a NULL handle. */
CGRUN_EXPORT const char *cgrun_store_prefix(const struct cgrun_store *);

/* Set the store timeout in milliseconds (> 0).  0, or -1 with EINVAL. */
CGRUN_EXPORT int cgrun_store_set_timeout(struct cgrun_store *, int timeout_ms);

/* The store timeout in milliseconds (-1 with EINVAL for a NULL handle). */
CGRUN_EXPORT int cgrun_store_timeout(const struct cgrun_store *);

/* Text of the last failure on this handle ("" if none; a fixed sentence
 * for a NULL handle).  Never changes errno. */
CGRUN_EXPORT const char *cgrun_store_errmsg(const struct cgrun_store *);

/* Store len bytes under key (overwrite).  0 or -1. */
CGRUN_EXPORT int cgrun_store_set(struct cgrun_store *, const char *key,
    const void *val, size_t len);

/*
 * Wait (store timeout) until key exists, then fetch it into a malloc'd
 * *val of *len bytes (plus a NUL).  0, or -1 (ETIMEDOUT: key never came).
 */
CGRUN_EXPORT int cgrun_store_get(struct cgrun_store *, const char *key,
    void **val, size_t *len);

/* Add delta to the decimal counter under key (missing = 0); *result gets
 * the new value (result may be NULL).  0 or -1. */
CGRUN_EXPORT int cgrun_store_add(struct cgrun_store *, const char *key,
    int64_t delta, int64_t *result);

/*
 * Set key to desired if its value equals expected (a missing key matches
 * only an empty expected).  *val gets what torch returns: the new value on
 * success, else the current value (or expected, if the key is missing).
 * val/len may be NULL.  0 or -1.
 */
CGRUN_EXPORT int cgrun_store_compare_set(struct cgrun_store *, const char *key,
    const void *expected, size_t elen, const void *desired, size_t dlen,
    void **val, size_t *len);

/* 1 if all n keys exist, 0 if not, -1 on error. */
CGRUN_EXPORT int cgrun_store_check(struct cgrun_store *,
    const char *const *keys, size_t n);

/*
 * Block until all n keys exist or timeout_ms passes
 * (CGRUN_STORE_DEFAULT_TIMEOUT or <= 0: the store timeout).  0, or -1 with
 * ETIMEDOUT after cancelling the wait (the connection stays usable).
 */
CGRUN_EXPORT int cgrun_store_wait(struct cgrun_store *,
    const char *const *keys, size_t n, int timeout_ms);

/* 1 if key existed and was deleted, 0 if it did not exist, -1 on error. */
CGRUN_EXPORT int cgrun_store_delete(struct cgrun_store *, const char *key);

/* Number of keys on the server (all prefixes, internal keys too). */
CGRUN_EXPORT int cgrun_store_num_keys(struct cgrun_store *, int64_t *n);

/* Append len bytes to key's value, creating it if missing.  0 or -1. */
CGRUN_EXPORT int cgrun_store_append(struct cgrun_store *, const char *key,
    const void *val, size_t len);

/*
 * Wait (store timeout) for all n keys, then fetch them: vals[i]/lens[i]
 * receive malloc'd copies in key order.  On failure nothing is allocated.
 */
CGRUN_EXPORT int cgrun_store_multi_get(struct cgrun_store *,
    const char *const *keys, size_t n, void **vals, size_t *lens);

/* Set n keys at once (in order).  0 or -1. */
CGRUN_EXPORT int cgrun_store_multi_set(struct cgrun_store *,
    const char *const *keys, const void *const *vals, const size_t *lens,
    size_t n);

#ifdef __cplusplus
}
#endif

#endif /* CGRUN_STORE_H_PUBLIC */

/*
 * store_ops.c: the libcgrun store operations (include/cgrun/store.h), each
 * one request of torch 2.x's dialect built by the shared codec
 * (wire_codec.h) and its reply, through client_call.c.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "cgrun/store.h"
#include "client_call.h"

/* SET: no reply. */
CGRUN_EXPORT int
cgrun_store_set(struct cgrun_store *s, const char *key, const void *val,
    size_t len)
{
	struct wire_request r = {
	    .op = WOP_SET, .key = key, .val = val, .val_len = len };

	if (client_call_ready(s) == -1 || client_call_check_key(s, key) == -1 ||
	    client_call_check_value(s, val, len) == -1)
		return -1;
	return client_call_send(s, &r, "set");
}

/* WAIT [key] with the store timeout, then GET. */
CGRUN_EXPORT int
cgrun_store_get(struct cgrun_store *s, const char *key, void **val,
    size_t *len)
{
	struct wire_request r = { .op = WOP_GET, .key = key };
	const char *keys[1] = { key };

	if (val == NULL || len == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (client_call_ready(s) == -1 || client_call_check_key(s, key) == -1)
		return -1;
	if (client_call_wait(s, keys, 1, s->conn->timeout_ms) == -1)
		return -1;
	if (client_call_send(s, &r, "get") == -1)
		return -1;
	return client_call_read_value(s, val, len, "get");
}

/* ADD: reply is the new value. */
CGRUN_EXPORT int
cgrun_store_add(struct cgrun_store *s, const char *key, int64_t delta,
    int64_t *result)
{
	struct wire_request r = { .op = WOP_ADD, .key = key, .num = delta };
	int64_t v;

	if (client_call_ready(s) == -1 || client_call_check_key(s, key) == -1)
		return -1;
	if (client_call_send(s, &r, "add") == -1 ||
	    client_call_read_i64(s, &v, "add") == -1)
		return -1;
	if (result != NULL)
		*result = v;
	return 0;
}

/* COMPARE_SET: reply is a value (see store.h for which). */
CGRUN_EXPORT int
cgrun_store_compare_set(struct cgrun_store *s, const char *key,
    const void *expected, size_t elen, const void *desired, size_t dlen,
    void **val, size_t *len)
{
	struct wire_request r = {
	    .op = WOP_COMPARE_SET, .key = key, .val = expected,
	    .val_len = elen, .val2 = desired, .val2_len = dlen };
	void *v;
	size_t n;

	if (client_call_ready(s) == -1 || client_call_check_key(s, key) == -1 ||
	    client_call_check_value(s, expected, elen) == -1 ||
	    client_call_check_value(s, desired, dlen) == -1)
		return -1;
	if (client_call_send(s, &r, "compare_set") == -1 ||
	    client_call_read_value(s, &v, &n, "compare_set") == -1)
		return -1;
	if (val != NULL)
		*val = v;
	else
		free(v);
	if (len != NULL)
		*len = n;
	return 0;
}

/* CHECK: 1 ready, 0 not. */
CGRUN_EXPORT int
cgrun_store_check(struct cgrun_store *s, const char *const *keys, size_t n)
{
	struct wire_request r = { .op = WOP_CHECK, .keys = keys, .count = n };
	uint8_t code;

	if (client_call_ready(s) == -1 ||
	    client_call_check_keys(s, keys, n) == -1)
		return -1;
	if (client_call_send(s, &r, "check") == -1 ||
	    client_call_read_code(s, &code, "check") == -1)
		return -1;
	return code == WIRE_CHECK_READY;
}

/* WAIT with a timeout; cancels on expiry. */
CGRUN_EXPORT int
cgrun_store_wait(struct cgrun_store *s, const char *const *keys, size_t n,
    int timeout_ms)
{
	if (client_call_ready(s) == -1 ||
	    client_call_check_keys(s, keys, n) == -1)
		return -1;
	if (timeout_ms <= 0)
		timeout_ms = s->conn->timeout_ms;
	return client_call_wait(s, keys, n, timeout_ms);
}

/* DELETE_KEY: 1 deleted, 0 absent. */
CGRUN_EXPORT int
cgrun_store_delete(struct cgrun_store *s, const char *key)
{
	struct wire_request r = { .op = WOP_DELETE_KEY, .key = key };
	int64_t v;

	if (client_call_ready(s) == -1 || client_call_check_key(s, key) == -1)
		return -1;
	if (client_call_send(s, &r, "delete") == -1 ||
	    client_call_read_i64(s, &v, "delete") == -1)
		return -1;
	return v == 1;
}

/* GETNUMKEYS. */
CGRUN_EXPORT int
cgrun_store_num_keys(struct cgrun_store *s, int64_t *n)
{
	struct wire_request r = { .op = WOP_GETNUMKEYS };

	if (n == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (client_call_ready(s) == -1)
		return -1;
	if (client_call_send(s, &r, "num_keys") == -1)
		return -1;
	return client_call_read_i64(s, n, "num_keys");
}

/* APPEND: no reply. */
CGRUN_EXPORT int
cgrun_store_append(struct cgrun_store *s, const char *key, const void *val,
    size_t len)
{
	struct wire_request r = {
	    .op = WOP_APPEND, .key = key, .val = val, .val_len = len };

	if (client_call_ready(s) == -1 || client_call_check_key(s, key) == -1 ||
	    client_call_check_value(s, val, len) == -1)
		return -1;
	return client_call_send(s, &r, "append");
}

/* WAIT for all keys, then MULTI_GET; all or nothing. */
CGRUN_EXPORT int
cgrun_store_multi_get(struct cgrun_store *s, const char *const *keys,
    size_t n, void **vals, size_t *lens)
{
	struct wire_request r = {
	    .op = WOP_MULTI_GET, .keys = keys, .count = n };
	size_t i;

	if (n > 0 && (vals == NULL || lens == NULL)) {
		errno = EINVAL;
		return -1;
	}
	if (client_call_ready(s) == -1 ||
	    client_call_check_keys(s, keys, n) == -1)
		return -1;
	if (client_call_wait(s, keys, n, s->conn->timeout_ms) == -1)
		return -1;
	if (client_call_send(s, &r, "multi_get") == -1)
		return -1;
	for (i = 0; i < n; i++) {
		if (client_call_read_value(s, &vals[i], &lens[i],
		    "multi_get") == -1) {
			while (i > 0) {
				free(vals[--i]);
				vals[i] = NULL;
			}
			return -1;
		}
	}
	return 0;
}

/* MULTI_SET: no reply. */
CGRUN_EXPORT int
cgrun_store_multi_set(struct cgrun_store *s, const char *const *keys,
    const void *const *vals, const size_t *lens, size_t n)
{
	struct wire_request r = {
	    .op = WOP_MULTI_SET, .keys = keys, .vals = vals, .lens = lens,
	    .count = n };
	size_t i;

	if (client_call_ready(s) == -1 ||
	    client_call_check_keys(s, keys, n) == -1)
		return -1;
	if (n > 0 && (vals == NULL || lens == NULL)) {
		errno = EINVAL;
		return -1;
	}
	for (i = 0; i < n; i++)
		if (client_call_check_value(s, vals[i], lens[i]) == -1)
			return -1;
	return client_call_send(s, &r, "multi_set");
}

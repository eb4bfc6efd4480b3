/*
 * client_call.h: one call of the store client (libcgrun) on a handle:
 * the handle and connection types, argument checks, sending a request
 * encoded by the shared codec (wire_codec.h), reading its fixed-shape
 * reply with a deadline, WAIT with cancellation.  Internal header: not
 * installed.
 *
 * A connection (struct store_conn, shared by a handle and its prefixed
 * views, reference counted) owns a non-blocking socket and a request
 * buffer.  Reads never consume more bytes than the reply being read, so no
 * reply is ever split between two calls.  Any failure other than a
 * cancelled wait leaves the byte stream in an unknown state, so the
 * connection is closed and later calls fail with ENOTCONN.
 */
#ifndef CGRUN_CLIENT_CALL_H
#define CGRUN_CLIENT_CALL_H

#include <stddef.h>
#include <stdint.h>

#include "cgrun/store.h"
#include "wire_codec.h"

struct store_conn {
	int		 refs;
	int		 fd;		/* -1 once broken or closed */
	int		 timeout_ms;	/* store timeout */
	uint8_t		*buf;		/* request being encoded */
	size_t		 cap;
};

struct cgrun_store {
	struct store_conn *conn;
	char		*prefix;	/* NULL: none */
	char		 err[CGRUN_ERRLEN];
};

/* Record a message on the handle; errno is preserved. */
void	client_call_err(struct cgrun_store *, const char *, ...)
	    __attribute__((format(printf, 2, 3)));
/* Close the connection's socket: its byte stream can no longer be trusted. */
void	client_call_break(struct store_conn *);
/* Make sure the handle's connection is usable (0), else -1 with errno. */
int	client_call_ready(struct cgrun_store *);
/* Argument checks: 0, or -1 with EINVAL and a message on the handle. */
int	client_call_check_key(struct cgrun_store *, const char *key);
int	client_call_check_keys(struct cgrun_store *, const char *const *keys,
	    size_t n);
int	client_call_check_value(struct cgrun_store *, const void *val,
	    size_t len);
/* Encode r (the handle's prefix added) and send it; what names it in errors. */
int	client_call_send(struct cgrun_store *, struct wire_request *r,
	    const char *what);
/* Read an i64 reply. */
int	client_call_read_i64(struct cgrun_store *, int64_t *, const char *what);
/* Read a u64-length value reply into a malloc'd, NUL-ended copy. */
int	client_call_read_value(struct cgrun_store *, void **val, size_t *len,
	    const char *what);
/* Read one status byte, which must be 0 or 1. */
int	client_call_read_code(struct cgrun_store *, uint8_t *,
	    const char *what);
/* WAIT for keys until STOP_WAITING (0) or timeout_ms (cancelled: -1,
 * ETIMEDOUT, the connection still usable). */
int	client_call_wait(struct cgrun_store *, const char *const *keys,
	    size_t n, int timeout_ms);

#endif /* CGRUN_CLIENT_CALL_H */

/*
 * store.c: the libcgrun store handle (include/cgrun/store.h): connect,
 * free, prefixed views sharing one connection, timeout, last error.  The
 * operations are in store_ops.c, one call's mechanics in client_call.c,
 * connection set-up in client_dial.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgrun/store.h"
#include "client_call.h"
#include "client_dial.h"

/* Connect to host:port, 2.x handshake, retrying until timeout_ms. */
CGRUN_EXPORT struct cgrun_store *
cgrun_store_connect(const char *host, int port, int timeout_ms, char *err)
{
	struct cgrun_store *s;
	int fd;

	if (err != NULL)
		err[0] = '\0';
	if (host == NULL || port <= 0 || port > 65535 || timeout_ms <= 0) {
		if (err != NULL)
			snprintf(err, CGRUN_ERRLEN, "store: bad address or "
			    "timeout (port %d, timeout %dms)", port, timeout_ms);
		errno = EINVAL;
		return NULL;
	}
	if ((s = calloc(1, sizeof(*s))) == NULL ||
	    (s->conn = calloc(1, sizeof(*s->conn))) == NULL) {
		free(s);
		if (err != NULL)
			snprintf(err, CGRUN_ERRLEN, "store: out of memory");
		errno = ENOMEM;
		return NULL;
	}
	if ((fd = client_dial(host, port, timeout_ms, err)) == -1) {
		int e = errno;

		free(s->conn);
		free(s);
		errno = e;
		return NULL;
	}
	s->conn->refs = 1;
	s->conn->fd = fd;
	s->conn->timeout_ms = timeout_ms;
	return s;
}

/* Release a handle and, with the last handle, the connection. */
CGRUN_EXPORT void
cgrun_store_free(struct cgrun_store *s)
{
	int saved = errno;

	if (s == NULL)
		return;
	if (--s->conn->refs == 0) {
		client_call_break(s->conn);
		free(s->conn->buf);
		free(s->conn);
	}
	free(s->prefix);
	free(s);
	errno = saved;
}

/* Replace this handle's prefix. */
CGRUN_EXPORT int
cgrun_store_set_prefix(struct cgrun_store *s, const char *prefix)
{
	char *p = NULL;

	if (s == NULL || (prefix != NULL &&
	    strlen(prefix) >= CGRUN_STORE_MAX_KEY)) {
		errno = EINVAL;
		return -1;
	}
	if (prefix != NULL && (p = strdup(prefix)) == NULL)
		return -1;
	free(s->prefix);
	s->prefix = p;
	return 0;
}

/* A new handle on the parent's connection, PrefixStore(prefix, parent). */
CGRUN_EXPORT struct cgrun_store *
cgrun_store_prefixed(struct cgrun_store *parent, const char *prefix)
{
	struct cgrun_store *s;
	size_t n;

	if (parent == NULL || prefix == NULL) {
		errno = EINVAL;
		return NULL;
	}
	n = strlen(prefix) + 1;
	if (parent->prefix != NULL)
		n += strlen(parent->prefix) + 1;
	if (n > CGRUN_STORE_MAX_KEY) {
		client_call_err(parent, "prefix longer than %u bytes",
		    CGRUN_STORE_MAX_KEY);
		errno = EINVAL;
		return NULL;
	}
	if ((s = calloc(1, sizeof(*s))) == NULL ||
	    (s->prefix = malloc(n)) == NULL) {
		free(s);
		errno = ENOMEM;
		return NULL;
	}
	if (parent->prefix != NULL)
		snprintf(s->prefix, n, "%s/%s", parent->prefix, prefix);
	else
		memcpy(s->prefix, prefix, n);
	s->conn = parent->conn;
	s->conn->refs++;
	return s;
}

/* The handle's prefix, or NULL. */
CGRUN_EXPORT const char *
cgrun_store_prefix(const struct cgrun_store *s)
{
	if (s == NULL) {
		errno = EINVAL;
		return NULL;
	}
	return s->prefix;
}

/* Set the store timeout. */
CGRUN_EXPORT int
cgrun_store_set_timeout(struct cgrun_store *s, int timeout_ms)
{
	if (s == NULL || timeout_ms <= 0) {
		errno = EINVAL;
		return -1;
	}
	s->conn->timeout_ms = timeout_ms;
	return 0;
}

/* The store timeout. */
CGRUN_EXPORT int
cgrun_store_timeout(const struct cgrun_store *s)
{
	if (s == NULL) {
		errno = EINVAL;
		return -1;
	}
	return s->conn->timeout_ms;
}

/* Text of the last failure on this handle. */
CGRUN_EXPORT const char *
cgrun_store_errmsg(const struct cgrun_store *s)
{
	/* errno untouched even for NULL: callers read it with the message */
	return s != NULL ? s->err : "no store handle";
}

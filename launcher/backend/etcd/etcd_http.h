/*
 * etcd_http.h: requests to the etcd v3 JSON gateway over libcurl's multi
 * interface driven by the caller's libevent loop (etcd_http.c): the loop
 * never blocks.  One request is a POST of a JSON body to a path
 * ("/v3/kv/range") on the current member; on a transport error, a timeout,
 * a gateway "unavailable" answer, or an answer that is not the gateway's
 * JSON or is over ETCD_BODY_MAX, it moves to the next member and tries
 * again, each member at most ETCD_HTTP_ROUNDS times with ETCD_HTTP_PAUSE_MS
 * between rounds, each try bounded by the request timeout (connecting by
 * the connect timeout: a member whose packets vanish costs no more).
 * A stream (a watch) has no timeout; each of its lines is bounded by
 * ETCD_BODY_MAX, and curl is paused while complete lines wait to be
 * handed out, so a backlog of any size is read in bounded memory.  TLS (CA file,
 * client certificate and key) and etcd user/password authentication
 * (/v3/auth/authenticate, the token sent in every request, renewed when
 * etcd says it expired) are set up once in etcd_http_new().
 */
#ifndef CGRUN_ETCD_HTTP_H
#define CGRUN_ETCD_HTTP_H

#include <stddef.h>

#include "etcd_limits.h"

#define ETCD_HTTP_ROUNDS	3	/* tries per member per request */
#define ETCD_HTTP_PAUSE_MS	250	/* after every member failed once */

struct event_base;
struct etcd_reply;
struct etcd_http;
struct etcd_req;

struct etcd_http_conf {
	char		 urls[ETCD_ENDPOINTS_MAX][ETCD_URL_MAX];	/* base URLs */
	int		 nurls;
	const char	*cacert, *cert, *key;	/* TLS files, or NULL */
	const char	*user, *password;	/* etcd auth, or NULL */
	unsigned	 timeout_ms;		/* one try of a request */
	unsigned	 connect_ms;		/* connecting to one member */
};

/*
 * Called once per answer (a stream: once per message) with r, or once with
 * r == NULL and why when the request failed on every member or a stream
 * ended.  r->code != 0 is an error answer from etcd.  The callback may
 * start and cancel requests; r is freed after it returns.
 */
typedef void (*etcd_http_cb)(void *arg, const struct etcd_reply *r,
	    const char *why);

struct etcd_http *etcd_http_new(struct event_base *,
	    const struct etcd_http_conf *, char *err, size_t errlen);
/* Cancels every request in flight without calling back. */
void	etcd_http_free(struct etcd_http *);

/* POST body to path; stream: a watch (no timeout, one callback per line).
 * NULL when out of memory. */
struct etcd_req *etcd_http_post(struct etcd_http *, const char *path,
	    const char *body, int stream, etcd_http_cb, void *arg);
/* One POST waiting at most timeout_ms, answer ignored (at exit only). */
void	etcd_http_post_blocking(struct etcd_http *, const char *path,
	    const char *body, unsigned timeout_ms);
/* Cancel a request without calling back (NULL: nothing). */
void	etcd_http_cancel(struct etcd_req *);
/* The member requests go to now (for messages). */
const char *etcd_http_member(const struct etcd_http *);
/* This host's address on its last answered request ("" if none yet). */
const char *etcd_http_local_ip(const struct etcd_http *);
/* Move to the next member (a stream that went quiet, say). */
void	etcd_http_next(struct etcd_http *);

/* Split "a:1,http://b:2,https://c:3" into base URLs; -1 with err. */
int	etcd_http_endpoints(const char *, struct etcd_http_conf *, char *err,
	    size_t errlen);

#endif

/*
 * etcd_http.c: POSTs to the etcd v3 JSON gateway with libcurl's multi
 * interface on the caller's libevent loop (curl_multi_socket_action: curl
 * names the sockets and timeouts it needs, libevent watches them), member
 * failover, TLS and etcd's token authentication.  See etcd_http.h.
 *
 * User callbacks never run inside a curl callback: answers are collected
 * by the write callback and handed out after curl_multi_socket_action
 * returns.  A request cancelled while the loop is inside this file is
 * only marked dead and freed when the file's work for that turn is done.
 */
#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <json-c/json.h>

#include "curl_dl.h"
#include "errbuf.h"
#include "etcd_http.h"
#include "etcd_json.h"
#include "log.h"

struct etcd_req {
	TAILQ_ENTRY(etcd_req) entry;
	struct etcd_http *h;
	CURL		*easy;
	struct curl_slist *hdrs;
	char		*path, *body;
	int		 stream;
	etcd_http_cb	 cb;
	void		*arg;
	char		*buf;		/* the answer so far */
	size_t		 len;
	int		 tries, ep;	/* tries made; member of this try */
	int		 overflow, dead, active, held, reauthed, is_auth;
	int		 paused;	/* a stream's buffer is full of lines */
	char		 why[CURL_ERROR_SIZE + 64];
	char		 errbuf[CURL_ERROR_SIZE];
};

struct etcd_http {
	struct event_base *base;
	CURLM		*multi;
	struct event	*timer;
	struct event	*pause;		/* retries after a pause */
	struct etcd_http_conf conf;
	int		 cur;		/* member requests go to */
	int		 busy;		/* inside this file: defer frees */
	char		 token[ETCD_TOKEN_MAX + 1];
	int		 authing;
	char		 local_ip[64];	/* of the last answered request */
	TAILQ_HEAD(, etcd_req) reqs;
};

static void req_start(struct etcd_req *);
static void http_reap(struct etcd_http *);

/* Take a request out of curl and mark it dead (freed by http_reap). */
static void
req_kill(struct etcd_req *q)
{
	if (q->active)
		curl_multi_remove_handle(q->h->multi, q->easy);
	q->active = 0;
	q->dead = 1;
}

/* Free dead requests (when no caller up the stack can still use them). */
static void
http_reap(struct etcd_http *h)
{
	struct etcd_req *q, *t;

	if (h->busy)
		return;
	for (q = TAILQ_FIRST(&h->reqs); q != NULL; q = t) {
		t = TAILQ_NEXT(q, entry);
		if (!q->dead)
			continue;
		TAILQ_REMOVE(&h->reqs, q, entry);
		curl_easy_cleanup(q->easy);
		curl_slist_free_all(q->hdrs);
		free(q->path);
		free(q->body);
		free(q->buf);
		free(q);
	}
}

/* Hand one answer (or a failure) to the owner; the request lives on only
 * for a stream that did not fail. */
static void
req_deliver(struct etcd_req *q, const struct etcd_reply *r, const char *why)
{
	if (q->dead)
		return;
	if (r == NULL || !q->stream)
		req_kill(q);
	q->h->busy++;
	q->cb(q->arg, r, why);
	q->h->busy--;
}

/* Give up: every member was tried ETCD_HTTP_ROUNDS times. */
static void
req_fail(struct etcd_req *q)
{
	char why[sizeof(q->why) + 128];

	snprintf(why, sizeof(why), "etcd %s: no member answered (%d tries "
	    "over %d member(s)): %s", q->path, q->tries, q->h->conf.nurls,
	    q->why);
	req_deliver(q, NULL, why);
}

/* Try again on the next member, after a pause once every member failed. */
static void
req_retry(struct etcd_req *q, const char *why)
{
	struct etcd_http *h = q->h;
	struct timeval tv = { 0, ETCD_HTTP_PAUSE_MS * 1000 };

	snprintf(q->why, sizeof(q->why), "%s: %s", h->conf.urls[q->ep], why);
	log_debug("etcd %s failed on %s: %s", q->path, h->conf.urls[q->ep],
	    why);
	if (q->active)
		curl_multi_remove_handle(h->multi, q->easy);
	q->active = 0;
	if (h->cur == q->ep)
		h->cur = (h->cur + 1) % h->conf.nurls;
	if (++q->tries >= h->conf.nurls * ETCD_HTTP_ROUNDS || q->stream) {
		if (q->stream)
			snprintf(q->why, sizeof(q->why), "watch on %s ended: "
			    "%s", h->conf.urls[q->ep], why);
		q->stream ? req_deliver(q, NULL, q->why) : req_fail(q);
		return;
	}
	q->held = 1;
	if (q->tries % h->conf.nurls == 0)
		evtimer_add(h->pause, &tv);
	else
		event_active(h->pause, EV_TIMEOUT, 0);
}

/* Release held requests (after a pause, or once authenticated). */
static void
http_pause_cb(evutil_socket_t fd, short what, void *arg)
{
	struct etcd_http *h = arg;
	struct etcd_req *q;

	h->busy++;
	TAILQ_FOREACH(q, &h->reqs, entry)
		if (q->held && !q->dead) {
			q->held = 0;
			req_start(q);
		}
	h->busy--;
	http_reap(h);
}

/* Authentication finished: keep the token and release what waited. */
static void
http_auth_cb(void *arg, const struct etcd_reply *r, const char *why)
{
	struct etcd_http *h = arg;
	struct etcd_reply refused;
	struct etcd_req *q;
	char msg[ETCD_MSG_MAX];

	h->authing = 0;
	if (r != NULL && r->code == 0 && r->token[0] != '\0') {
		snprintf(h->token, sizeof(h->token), "%s", r->token);
		event_active(h->pause, EV_TIMEOUT, 0);
		return;
	}
	snprintf(msg, sizeof(msg), "etcd refused user %.64s: %.*s",
	    h->conf.user, (int)sizeof(msg) - 96, r != NULL ? (r->code ?
	    r->message : "no token in the answer") : why);
	/* etcd said no: an answer (final); no member answered: a failure */
	memset(&refused, 0, sizeof(refused));
	refused.code = r != NULL && r->code != 0 ? r->code : 16;
	snprintf(refused.message, sizeof(refused.message), "%s", msg);
	TAILQ_FOREACH(q, &h->reqs, entry)
		if (q->held && !q->dead && !q->is_auth)
			req_deliver(q, r != NULL && !q->stream ? &refused :
			    NULL, msg);
}

/* Ask etcd for a token (requests wait, held, until it comes). */
static void
http_auth(struct etcd_http *h)
{
	struct etcd_req *q;
	json_object *o;

	if (h->authing)
		return;
	if ((o = json_object_new_object()) == NULL)
		return;
	json_object_object_add(o, "name", json_object_new_string(h->conf.user));
	json_object_object_add(o, "password",
	    json_object_new_string(h->conf.password ? h->conf.password : ""));
	h->authing = 1;
	q = etcd_http_post(h, "/v3/auth/authenticate",
	    json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN), 0,
	    http_auth_cb, h);
	json_object_put(o);
	if (q == NULL)
		h->authing = 0;
}

/* Is this gateway error worth another member ("unavailable": no leader,
 * request timed out, member stopping)? */
static int
reply_retryable(const struct etcd_reply *r)
{
	return r->code == 14 || r->code == 4;	/* UNAVAILABLE, DEADLINE */
}

/* A unary request ended: deliver, retry, or re-authenticate. */
static void
req_done(struct etcd_req *q, CURLcode rc)
{
	struct etcd_reply r;
	char why[ETCD_JSON_ERRLEN];
	char msg[ETCD_JSON_ERRLEN + 64], *ip = NULL;
	long status = 0;

	curl_easy_getinfo(q->easy, CURLINFO_RESPONSE_CODE, &status);
	if (rc == CURLE_OK && curl_easy_getinfo(q->easy, CURLINFO_LOCAL_IP,
	    &ip) == CURLE_OK && ip != NULL)
		snprintf(q->h->local_ip, sizeof(q->h->local_ip), "%s", ip);
	if (q->overflow) {	/* a non-etcd member, say: try the next */
		req_retry(q, "answer longer than 1 MiB (ETCD_BODY_MAX)");
		return;
	}
	if (rc != CURLE_OK || q->stream) {
		req_retry(q, rc != CURLE_OK ? (q->errbuf[0] ? q->errbuf :
		    curl_easy_strerror(rc)) : "the member closed the stream");
		return;
	}
	if (etcd_json_parse(q->buf ? q->buf : "", q->len, &r, why,
	    sizeof(why)) == -1) {
		snprintf(msg, sizeof(msg), "not an etcd v3 gateway answer "
		    "(HTTP %ld, %s)", status, why);
		req_retry(q, msg);
		return;
	}
	if (reply_retryable(&r)) {
		req_retry(q, r.message);
	} else if (r.code == 16 && q->h->conf.user != NULL && !q->reauthed &&
	    !q->is_auth) {
		q->reauthed = 1;	/* the token expired: once more */
		q->h->token[0] = '\0';
		curl_multi_remove_handle(q->h->multi, q->easy);
		q->active = 0;
		req_start(q);
	} else
		req_deliver(q, &r, NULL);
	etcd_reply_clear(&r);
}

/* Hand out every complete line a stream has received. */
static void
stream_lines(struct etcd_req *q)
{
	struct etcd_reply r;
	char why[ETCD_JSON_ERRLEN];
	char *nl;
	size_t n;

	while (!q->dead && q->buf != NULL &&
	    (nl = memchr(q->buf, '\n', q->len)) != NULL) {
		n = (size_t)(nl - q->buf) + 1;
		if (n > 1 && etcd_json_parse(q->buf, n - 1, &r, why,
		    sizeof(why)) == -1) {
			snprintf(q->why, sizeof(q->why), "%s: not an etcd v3 "
			    "gateway answer (%s)", q->h->conf.urls[q->ep], why);
			req_deliver(q, NULL, q->why);
			return;
		}
		memmove(q->buf, q->buf + n, q->len - n);
		q->len -= n;
		if (n > 1) {
			req_deliver(q, &r, NULL);
			etcd_reply_clear(&r);
		}
	}
}

/* A stream paused because its buffer was full of complete lines: they
 * were handed out, so let curl go on (it hands over the bytes it held
 * now, and may pause again on them: each pass hands out a line). */
static void
stream_resume(struct etcd_req *q)
{
	while (q->paused && !q->dead && q->active) {
		q->paused = 0;
		curl_easy_pause(q->easy, CURLPAUSE_CONT);
		stream_lines(q);
	}
}

/* After curl ran: finished transfers and stream lines. */
static void
http_check(struct etcd_http *h)
{
	struct etcd_req *q;
	CURLMsg *m;
	int left;

	h->busy++;
	while ((m = curl_multi_info_read(h->multi, &left)) != NULL) {
		if (m->msg != CURLMSG_DONE)
			continue;
		curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, &q);
		if (q->stream)
			stream_lines(q);
		req_done(q, m->data.result);
	}
	TAILQ_FOREACH(q, &h->reqs, entry)
		if (q->stream && q->active) {
			stream_lines(q);
			stream_resume(q);
		}
	h->busy--;
	http_reap(h);
}

/* libevent: a socket curl watches is ready. */
static void
http_sock_ev(evutil_socket_t fd, short what, void *arg)
{
	struct etcd_http *h = arg;
	int running, act = ((what & EV_READ) ? CURL_CSELECT_IN : 0) |
	    ((what & EV_WRITE) ? CURL_CSELECT_OUT : 0);

	curl_multi_socket_action(h->multi, fd, act, &running);
	http_check(h);
}

/* libevent: curl's timeout passed. */
static void
http_timer_ev(evutil_socket_t fd, short what, void *arg)
{
	struct etcd_http *h = arg;
	int running;

	curl_multi_socket_action(h->multi, CURL_SOCKET_TIMEOUT, 0, &running);
	http_check(h);
}

/* curl: watch socket s for what (or stop watching it). */
static int
http_sock_cb(CURL *e, curl_socket_t s, int what, void *userp, void *sockp)
{
	struct etcd_http *h = userp;
	struct event *ev = sockp;
	short kind = EV_PERSIST;

	if (ev != NULL)
		event_free(ev);
	if (what == CURL_POLL_REMOVE) {
		curl_multi_assign(h->multi, s, NULL);
		return 0;
	}
	kind |= (what & CURL_POLL_IN) ? EV_READ : 0;
	kind |= (what & CURL_POLL_OUT) ? EV_WRITE : 0;
	ev = event_new(h->base, s, kind, http_sock_ev, h);
	curl_multi_assign(h->multi, s, ev);
	if (ev != NULL)
		event_add(ev, NULL);
	return 0;
}

/* curl: call back in ms (-1: never). */
static int
http_timer_cb(CURLM *m, long ms, void *userp)
{
	struct etcd_http *h = userp;
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

	if (ms < 0)
		evtimer_del(h->timer);
	else
		evtimer_add(h->timer, &tv);
	return 0;
}

/*
 * May a stream take n more bytes at p?  0: yes; 1: not before the complete
 * lines it holds are handed out (pause curl); -1: a line over the bound.
 * The bound is one line (ETCD_BODY_MAX without its newline): curl may
 * read many lines in one go (a watch catching up after the agent was
 * stopped), and the bytes that end a line may bring the start of the next
 * (at most CURL_MAX_WRITE_SIZE in all), so the buffer holds at most the
 * bound plus one of curl's writes.
 */
static int
stream_room(const struct etcd_req *q, const char *p, size_t n)
{
	const char *nl;

	if (q->len + n <= ETCD_BODY_MAX)
		return 0;
	if (q->buf != NULL && memchr(q->buf, '\n', q->len) != NULL)
		return 1;
	nl = memchr(p, '\n', n);
	return nl != NULL && q->len + (size_t)(nl - p) <= ETCD_BODY_MAX ? 0 : -1;
}

/* curl: bytes of the answer; a unary answer over the bound aborts, a
 * stream is bounded by stream_room(). */
static size_t
http_write_cb(char *p, size_t size, size_t n, void *arg)
{
	struct etcd_req *q = arg;
	size_t add = size * n;
	char *nb;
	int room = q->stream ? stream_room(q, p, add) : q->len + add >
	    ETCD_BODY_MAX ? -1 : 0;

	if (room == 1) {
		q->paused = 1;
		return CURL_WRITEFUNC_PAUSE;
	}
	if (room == -1 || (nb = realloc(q->buf, q->len + add + 1)) == NULL) {
		q->overflow = 1;
		return 0;
	}
	q->buf = nb;
	memcpy(q->buf + q->len, p, add);
	q->len += add;
	q->buf[q->len] = '\0';
	return add;
}

/* Set up one try on the current member. */
static void
req_start(struct etcd_req *q)
{
	struct etcd_http *h = q->h;
	char url[ETCD_URL_MAX + ETCD_PATH_MAX], auth[ETCD_TOKEN_MAX + 32];

	if (h->conf.user != NULL && h->token[0] == '\0' && !q->is_auth) {
		q->held = 1;
		http_auth(h);
		return;
	}
	q->ep = h->cur;
	q->len = 0;
	q->overflow = q->paused = 0;
	q->errbuf[0] = '\0';
	snprintf(url, sizeof(url), "%s%s", h->conf.urls[q->ep], q->path);
	curl_easy_setopt(q->easy, CURLOPT_URL, url);
	curl_slist_free_all(q->hdrs);
	q->hdrs = curl_slist_append(NULL, "Content-Type: application/json");
	if (h->token[0] != '\0' && !q->is_auth) {
		snprintf(auth, sizeof(auth), "Authorization: %s", h->token);
		q->hdrs = curl_slist_append(q->hdrs, auth);
	}
	curl_easy_setopt(q->easy, CURLOPT_HTTPHEADER, q->hdrs);
	if (curl_multi_add_handle(h->multi, q->easy) != CURLM_OK) {
		req_retry(q, "curl refused the request");
		return;
	}
	q->active = 1;
}

/* The TLS files of the configuration on one handle. */
static void
req_tls(struct etcd_req *q, const struct etcd_http_conf *c)
{
	if (c->cacert != NULL)
		curl_easy_setopt(q->easy, CURLOPT_CAINFO, c->cacert);
	if (c->cert != NULL)
		curl_easy_setopt(q->easy, CURLOPT_SSLCERT, c->cert);
	if (c->key != NULL)
		curl_easy_setopt(q->easy, CURLOPT_SSLKEY, c->key);
}

/* POST body to path (see etcd_http.h). */
struct etcd_req *
etcd_http_post(struct etcd_http *h, const char *path, const char *body,
    int stream, etcd_http_cb cb, void *arg)
{
	struct etcd_req *q;

	if ((q = calloc(1, sizeof(*q))) == NULL)
		return NULL;
	q->h = h;
	q->cb = cb;
	q->arg = arg;
	q->stream = stream;
	q->is_auth = cb == http_auth_cb;
	if ((q->easy = curl_easy_init()) == NULL ||
	    (q->path = strdup(path)) == NULL || (q->body = strdup(body)) ==
	    NULL) {
		curl_easy_cleanup(q->easy);
		free(q->path);
		free(q);
		return NULL;
	}
	curl_easy_setopt(q->easy, CURLOPT_POSTFIELDS, q->body);
	curl_easy_setopt(q->easy, CURLOPT_WRITEFUNCTION, http_write_cb);
	curl_easy_setopt(q->easy, CURLOPT_WRITEDATA, q);
	curl_easy_setopt(q->easy, CURLOPT_PRIVATE, q);
	curl_easy_setopt(q->easy, CURLOPT_ERRORBUFFER, q->errbuf);
	curl_easy_setopt(q->easy, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(q->easy, CURLOPT_CONNECTTIMEOUT_MS,
	    (long)h->conf.connect_ms);
	if (!stream)
		curl_easy_setopt(q->easy, CURLOPT_TIMEOUT_MS,
		    (long)h->conf.timeout_ms);
	curl_easy_setopt(q->easy, CURLOPT_PROTOCOLS_STR, "http,https");
	req_tls(q, &h->conf);
	TAILQ_INSERT_TAIL(&h->reqs, q, entry);
	req_start(q);
	return q;
}

/* One POST to the current member, waiting at most timeout_ms, answer
 * ignored: for the agent's exit, when no loop runs any more. */
void
etcd_http_post_blocking(struct etcd_http *h, const char *path,
    const char *body, unsigned timeout_ms)
{
	struct etcd_req q;
	char url[ETCD_URL_MAX + ETCD_PATH_MAX], auth[ETCD_TOKEN_MAX + 32];

	memset(&q, 0, sizeof(q));
	if ((q.easy = curl_easy_init()) == NULL)
		return;
	snprintf(url, sizeof(url), "%s%s", h->conf.urls[h->cur], path);
	q.hdrs = curl_slist_append(NULL, "Content-Type: application/json");
	if (h->token[0] != '\0') {
		snprintf(auth, sizeof(auth), "Authorization: %s", h->token);
		q.hdrs = curl_slist_append(q.hdrs, auth);
	}
	curl_easy_setopt(q.easy, CURLOPT_URL, url);
	curl_easy_setopt(q.easy, CURLOPT_HTTPHEADER, q.hdrs);
	curl_easy_setopt(q.easy, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(q.easy, CURLOPT_WRITEFUNCTION, http_write_cb);
	curl_easy_setopt(q.easy, CURLOPT_WRITEDATA, &q);
	curl_easy_setopt(q.easy, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(q.easy, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
	req_tls(&q, &h->conf);
	curl_easy_perform(q.easy);
	curl_easy_cleanup(q.easy);
	curl_slist_free_all(q.hdrs);
	free(q.buf);
}

/* Cancel a request without calling back. */
void
etcd_http_cancel(struct etcd_req *q)
{
	if (q == NULL || q->dead)
		return;
	req_kill(q);
	http_reap(q->h);
}

/* The member requests go to now. */
const char *
etcd_http_member(const struct etcd_http *h)
{
	return h->conf.urls[h->cur];
}

/* This host's address on its last answered request ("" if none yet). */
const char *
etcd_http_local_ip(const struct etcd_http *h)
{
	return h->local_ip;
}

/* Move to the next member. */
void
etcd_http_next(struct etcd_http *h)
{
	h->cur = (h->cur + 1) % h->conf.nurls;
}

/* Copy a conf string into the http object's own storage. */
static const char *
conf_dup(const char *s)
{
	return s != NULL ? strdup(s) : NULL;
}

/* A new client of the members in conf; NULL with err. */
struct etcd_http *
etcd_http_new(struct event_base *base, const struct etcd_http_conf *conf,
    char *err, size_t errlen)
{
	struct etcd_http *h;

	if (curl_dl_load(err, errlen) == -1)
		return NULL;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK ||
	    (h = calloc(1, sizeof(*h))) == NULL) {
		errbuf_set(err, errlen, "cannot initialise libcurl");
		return NULL;
	}
	h->base = base;
	h->conf = *conf;
	h->conf.cacert = conf_dup(conf->cacert);
	h->conf.cert = conf_dup(conf->cert);
	h->conf.key = conf_dup(conf->key);
	h->conf.user = conf_dup(conf->user);
	h->conf.password = conf_dup(conf->password);
	TAILQ_INIT(&h->reqs);
	h->multi = curl_multi_init();
	h->timer = evtimer_new(base, http_timer_ev, h);
	h->pause = evtimer_new(base, http_pause_cb, h);
	if (h->multi == NULL || h->timer == NULL || h->pause == NULL) {
		errbuf_set(err, errlen, "out of memory");
		etcd_http_free(h);
		return NULL;
	}
	curl_multi_setopt(h->multi, CURLMOPT_SOCKETFUNCTION, http_sock_cb);
	curl_multi_setopt(h->multi, CURLMOPT_SOCKETDATA, h);
	curl_multi_setopt(h->multi, CURLMOPT_TIMERFUNCTION, http_timer_cb);
	curl_multi_setopt(h->multi, CURLMOPT_TIMERDATA, h);
	return h;
}

/* Cancel everything and free the client. */
void
etcd_http_free(struct etcd_http *h)
{
	struct etcd_req *q;

	if (h == NULL)
		return;
	TAILQ_FOREACH(q, &h->reqs, entry)
		req_kill(q);
	h->busy = 0;
	http_reap(h);
	if (h->multi != NULL)
		curl_multi_cleanup(h->multi);
	if (h->timer != NULL)
		event_free(h->timer);
	if (h->pause != NULL)
		event_free(h->pause);
	free((char *)(uintptr_t)h->conf.cacert);
	free((char *)(uintptr_t)h->conf.cert);
	free((char *)(uintptr_t)h->conf.key);
	free((char *)(uintptr_t)h->conf.user);
	if (h->conf.password != NULL)
		explicit_bzero((char *)(uintptr_t)h->conf.password,
		    strlen(h->conf.password));
	free((char *)(uintptr_t)h->conf.password);
	free(h);
}

/* One member: "host:port" gets http://; http:// and https:// are kept. */
static int
endpoint_one(const char *s, size_t n, char *url, char *err, size_t errlen)
{
	const char *scheme = "http://";

	if (n >= 7 && strncmp(s, "http://", 7) == 0)
		scheme = "";
	else if (n >= 8 && strncmp(s, "https://", 8) == 0)
		scheme = "";
	else if (memchr(s, '/', n) != NULL) {
		errbuf_set(err, errlen, "--rdzv-endpoint: %.*s: expected "
		    "HOST:PORT, http://HOST:PORT or https://HOST:PORT", (int)n,
		    s);
		return -1;
	}
	while (n > 0 && s[n - 1] == '/')
		n--;
	if (n == 0 || strlen(scheme) + n >= ETCD_URL_MAX) {
		errbuf_set(err, errlen, "--rdzv-endpoint: an empty or too long "
		    "member");
		return -1;
	}
	snprintf(url, ETCD_URL_MAX, "%s%.*s", scheme, (int)n, s);
	return 0;
}

/* Split a comma-separated member list into base URLs. */
int
etcd_http_endpoints(const char *list, struct etcd_http_conf *c, char *err,
    size_t errlen)
{
	const char *p = list, *comma;
	size_t n;

	c->nurls = 0;
	if (list == NULL || *list == '\0') {
		errbuf_set(err, errlen, "--rdzv-backend=etcd-v3 needs "
		    "--rdzv-endpoint: the etcd members, comma-separated");
		return -1;
	}
	for (; *p != '\0'; p = *comma ? comma + 1 : comma) {
		comma = strchrnul(p, ',');
		if ((n = (size_t)(comma - p)) == 0)
			continue;
		if (c->nurls == ETCD_ENDPOINTS_MAX) {
			errbuf_set(err, errlen, "--rdzv-endpoint: more than %d "
			    "etcd members", ETCD_ENDPOINTS_MAX);
			return -1;
		}
		if (endpoint_one(p, n, c->urls[c->nurls], err, errlen) == -1)
			return -1;
		c->nurls++;
	}
	if (c->nurls == 0) {
		errbuf_set(err, errlen, "--rdzv-endpoint: no etcd member "
		    "given");
		return -1;
	}
	return 0;
}

/*
 * client_dial.c: how the store client gets a connection: resolve the
 * address, connect without blocking past the deadline, send torch 2.x's
 * opening (VALIDATE then PING, wire_codec.h) and check the echoed nonce,
 * and retry with jittered exponential backoff until the timeout.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cgrun/cgrun.h"
#include "client_dial.h"
#include "client_io.h"
#include "monotime.h"
#include "wire_codec.h"

/* Backoff between connection attempts: first delay, cap (milliseconds). */
#define CLIENT_BACKOFF_MIN_MS	10
#define CLIENT_BACKOFF_MAX_MS	1000

/* Next pseudo-random 32 bits from *seed (xorshift; for jitter only). */
static uint32_t
client_dial_rand(uint32_t *seed)
{
	uint32_t x = *seed ? *seed : 0x9e3779b9u;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return *seed = x;
}

/* Open a socket to ai and wait for its non-blocking connect (fd / -1). */
static int
client_dial_fd(const struct addrinfo *ai, int64_t deadline)
{
	int fd, e, one = 1;
	socklen_t elen = sizeof(e);

	fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC |
	    SOCK_NONBLOCK, ai->ai_protocol);
	if (fd == -1)
		return -1;
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) == -1) {
		if (errno != EINPROGRESS)
			goto fail;
		if (client_io_poll(fd, POLLOUT, deadline) == -1)
			goto fail;
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &elen) == -1)
			goto fail;
		if (e != 0) {
			errno = e;
			goto fail;
		}
	}
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
fail:
	e = errno;
	close(fd);
	errno = e;
	return -1;
}

/* VALIDATE + PING on a fresh socket; the echoed nonce must match. */
static int
client_dial_handshake(int fd, uint32_t nonce, int64_t deadline)
{
	struct wire_request validate = { .op = WOP_VALIDATE, .u32 = WIRE_MAGIC };
	struct wire_request ping = { .op = WOP_PING, .u32 = nonce };
	uint8_t m[WIRE_HELLO_LEN], r[4];
	size_t n;

	n = wire_encode(WIRE_V2, &validate, m, sizeof(m));
	n += wire_encode(WIRE_V2, &ping, m + n, sizeof(m) - n);
	if (client_io_send(fd, m, n, deadline) == -1 ||
	    client_io_recv(fd, r, sizeof(r), deadline) == -1)
		return -1;
	if (memcmp(r, m + n - sizeof(r), sizeof(r)) != 0) {
		errno = EPROTO;
		return -1;
	}
	return 0;
}

/* One connection attempt over every resolved address; fd or -1. */
static int
client_dial_once(const struct addrinfo *res, uint32_t nonce,
    int64_t deadline)
{
	const struct addrinfo *ai;
	int fd, e = ECONNREFUSED;

	for (ai = res; ai != NULL; ai = ai->ai_next) {
		if ((fd = client_dial_fd(ai, deadline)) == -1) {
			e = errno;
			continue;
		}
		if (client_dial_handshake(fd, nonce, deadline) == 0)
			return fd;
		e = errno;
		close(fd);
	}
	errno = e;
	return -1;
}

/* Sleep for about delay ms (50-100% jitter), not past the deadline. */
static void
client_dial_backoff(int delay, uint32_t *seed, int64_t deadline)
{
	struct timespec ts;
	int ms = delay / 2 +
	    (int)(client_dial_rand(seed) % (uint32_t)(delay / 2 + 1));
	int left = client_io_left_ms(deadline);

	if (ms > left)
		ms = left;
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (long)(ms % 1000) * 1000000;
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

/* Resolve host:port for TCP; 0, or -1 with err filled. */
static int
client_dial_resolve(const char *host, int port, struct addrinfo **res,
    char *err)
{
	struct addrinfo hints;
	char serv[16];
	int r;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	/* No AI_ADDRCONFIG: in a namespace with only loopback it would
	 * hide 127.0.0.1 itself. */
	snprintf(serv, sizeof(serv), "%d", port);
	r = getaddrinfo(host, serv, &hints, res);
	if (r != 0) {
		if (err != NULL)
			snprintf(err, CGRUN_ERRLEN, "store %s:%d: cannot "
			    "resolve: %s", host, port, gai_strerror(r));
		errno = r == EAI_SYSTEM ? errno : (r == EAI_MEMORY ? ENOMEM :
		    (r == EAI_AGAIN ? EAGAIN : ENOENT));
		return -1;
	}
	return 0;
}

/* Connect with retries until the deadline; fd or -1 with err filled. */
int
client_dial(const char *host, int port, int timeout_ms, char *err)
{
	struct addrinfo *res = NULL;
	int64_t deadline = monotime_ms() + timeout_ms;
	uint32_t seed = (uint32_t)getpid() ^ (uint32_t)monotime_ms() ^
	    (uint32_t)(uintptr_t)&res;
	int fd, delay = CLIENT_BACKOFF_MIN_MS, attempts = 0;

	for (;;) {
		if (res == NULL &&
		    client_dial_resolve(host, port, &res, err) == -1) {
			if (errno != EAGAIN || client_io_left_ms(deadline) == 0)
				return -1;
		} else {
			attempts++;
			fd = client_dial_once(res, client_dial_rand(&seed),
			    deadline);
			if (fd != -1) {
				freeaddrinfo(res);
				return fd;
			}
			if (err != NULL)
				snprintf(err, CGRUN_ERRLEN, "store %s:%d: no "
				    "connection after %d attempt(s) in %dms: %s",
				    host, port, attempts, timeout_ms,
				    strerror(errno));
		}
		if (client_io_left_ms(deadline) == 0)
			break;
		client_dial_backoff(delay, &seed, deadline);
		delay = delay * 2 > CLIENT_BACKOFF_MAX_MS ?
		    CLIENT_BACKOFF_MAX_MS : delay * 2;
	}
	if (res != NULL)
		freeaddrinfo(res);
	errno = ETIMEDOUT;
	return -1;
}

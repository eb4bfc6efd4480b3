/*
 * floor.c: the least CPU a TCPStore server can spend per request on this
 * kernel, measured the same way as the real servers by bench/store.sh.
 *
 * usage: floor [-u]
 *
 * Not a store.  It speaks the 2.x dialect only, splits requests with the
 * server's own parser (wire_parse) and answers each with canned bytes of
 * the right shape: PING its nonce, ADD a running count, GET and COMPARE_SET
 * a value, CHECK READY, WAIT STOP_WAITING, SET and VALIDATE nothing.  What
 * is left per request is what any server must do: read it and send one
 * reply segment.
 *
 *   (default)  epoll: one recv and one send per readable connection
 *   -u         io_uring (when built with liburing): recv and send as
 *              submissions, one io_uring_enter per batch of completions
 *
 * Prints "listening on 127.0.0.1:PORT" like cgrun-rdzvd, then serves until
 * killed.
 */
#include <sys/epoll.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef HAVE_LIBURING
#include <liburing.h>
#endif

#include "wire.h"

#define BUFSZ	4096
#define NEVENTS	256

struct conn {
	int		 fd;
	size_t		 len;		/* bytes of a partial request in buf */
	uint8_t		 buf[BUFSZ];
	uint8_t		 out[BUFSZ];
};

static struct wire_limits limits;
static int64_t counter;

static void
die(const char *what)
{
	perror(what);
	exit(1);
}

/* Canned reply for one request; bytes written to out. */
static size_t
reply(const struct wire_req *r, uint8_t *out)
{
	static const char value[] = "0123456789abcdef";
	size_t n = 0;

	switch (r->op) {
	case WOP_PING:
		return wire_enc_u32(out, r->u32);
	case WOP_ADD:
		counter += r->num;
		return wire_enc_i64(out, counter);
	case WOP_GET:
		n = wire_enc_u64(out, sizeof(value) - 1);
		memcpy(out + n, value, sizeof(value) - 1);
		return n + sizeof(value) - 1;
	case WOP_COMPARE_SET:
		if (r->val2.len > BUFSZ / 4)
			return 0;
		n = wire_enc_u64(out, r->val2.len);
		memcpy(out + n, r->val2.p, r->val2.len);
		return n + r->val2.len;
	case WOP_CHECK:
		out[0] = WIRE_CHECK_READY;
		return 1;
	case WOP_WAIT:
		out[0] = WIRE_WAIT_STOP;
		return 1;
	default:
		return 0;
	}
}

/*
 * Answer every whole request in c->buf into c->out, keep the partial rest.
 * Returns the reply bytes, or -1 for a request this server does not take.
 */
static ssize_t
answer(struct conn *c)
{
	struct wire_req r;
	size_t off = 0, o = 0, used;
	enum wire_status st;

	for (;;) {
		wire_req_init(&r);
		st = wire_parse(WIRE_V2, c->buf + off, c->len - off, &limits,
		    &r, &used);
		if (st == WIRE_MORE)
			break;
		if (st == WIRE_ERROR || o > BUFSZ / 2)
			return -1;
		off += used;
		o += reply(&r, c->out + o);
	}
	if (off == 0 && c->len == BUFSZ)
		return -1;	/* a request larger than the buffer */
	memmove(c->buf, c->buf + off, c->len - off);
	c->len -= off;
	return (ssize_t)o;
}

static int
listen_loopback(void)
{
	struct sockaddr_in a;
	socklen_t alen = sizeof(a);
	int fd, one = 1;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0)) < 0)
		die("socket");
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    listen(fd, 4096) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &alen) < 0)
		die("bind/listen");
	printf("listening on 127.0.0.1:%d\n", ntohs(a.sin_port));
	fflush(stdout);
	return fd;
}

static struct conn *
conn_new(int fd)
{
	struct conn *c;
	int one = 1;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		die("calloc");
	c->fd = fd;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return c;
}

static void
conn_free(struct conn *c)
{
	close(c->fd);
	free(c);
}

/* epoll: level-triggered, one recv and at most one send per event. */
static void
serve_epoll(int lfd)
{
	struct epoll_event ev, evs[NEVENTS];
	struct conn *c;
	ssize_t r, o;
	int ep, n, i, fd;

	if ((ep = epoll_create1(0)) < 0)
		die("epoll_create1");
	ev.events = EPOLLIN;
	ev.data.ptr = NULL;
	epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev);
	for (;;) {
		if ((n = epoll_wait(ep, evs, NEVENTS, -1)) < 0 && errno != EINTR)
			die("epoll_wait");
		for (i = 0; i < n; i++) {
			if ((c = evs[i].data.ptr) == NULL) {
				while ((fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
					ev.data.ptr = conn_new(fd);
					epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
				}
				continue;
			}
			r = recv(c->fd, c->buf + c->len, BUFSZ - c->len, 0);
			if (r < 0 && (errno == EAGAIN || errno == EINTR))
				continue;
			if (r <= 0) {
				conn_free(c);
				continue;
			}
			c->len += (size_t)r;
			if ((o = answer(c)) < 0)
				conn_free(c);
			else if (o > 0)
				send(c->fd, c->out, (size_t)o, MSG_NOSIGNAL);
		}
	}
}

#ifdef HAVE_LIBURING
enum { T_ACCEPT = 1, T_RECV = 2, T_SEND = 3 };

static struct io_uring ring;

static struct io_uring_sqe *
sqe_get(void)
{
	struct io_uring_sqe *s;

	while ((s = io_uring_get_sqe(&ring)) == NULL)
		io_uring_submit(&ring);
	return s;
}

static void
arm_recv(struct conn *c)
{
	struct io_uring_sqe *s = sqe_get();

	io_uring_prep_recv(s, c->fd, c->buf + c->len, BUFSZ - c->len, 0);
	io_uring_sqe_set_data(s, (void *)((uintptr_t)c | T_RECV));
}

/* The reply goes out before the next recv is armed (same submission). */
static void
on_recv(struct conn *c, int res)
{
	struct io_uring_sqe *s;
	ssize_t o;

	if (res <= 0) {
		conn_free(c);
		return;
	}
	c->len += (size_t)res;
	if ((o = answer(c)) < 0) {
		conn_free(c);
		return;
	}
	if (o > 0) {
		s = sqe_get();
		io_uring_prep_send(s, c->fd, c->out, (size_t)o, MSG_NOSIGNAL);
		io_uring_sqe_set_data(s, (void *)(uintptr_t)T_SEND);
		s->flags |= IOSQE_CQE_SKIP_SUCCESS;
	}
	arm_recv(c);
}

static void
serve_uring(int lfd)
{
	struct io_uring_params p;
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *s;
	unsigned head, n;
	uintptr_t u;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
	if ((errno = -io_uring_queue_init_params(4096, &ring, &p)) != 0)
		die("io_uring_queue_init_params");
	s = sqe_get();
	io_uring_prep_multishot_accept(s, lfd, NULL, NULL, 0);
	io_uring_sqe_set_data(s, (void *)(uintptr_t)T_ACCEPT);
	for (;;) {
		io_uring_submit_and_wait(&ring, 1);
		n = 0;
		io_uring_for_each_cqe(&ring, head, cqe) {
			n++;
			u = (uintptr_t)io_uring_cqe_get_data(cqe);
			if ((u & 3) == T_ACCEPT && cqe->res >= 0)
				arm_recv(conn_new(cqe->res));
			else if ((u & 3) == T_RECV)
				on_recv((struct conn *)(u & ~(uintptr_t)3), cqe->res);
		}
		io_uring_cq_advance(&ring, n);
	}
}
#endif

int
main(int argc, char **argv)
{
	int lfd, uring = argc == 2 && strcmp(argv[1], "-u") == 0;

	if (argc > 2 || (argc == 2 && !uring)) {
		fprintf(stderr, "usage: floor [-u]\n");
		return 2;
	}
#ifndef HAVE_LIBURING
	if (uring) {
		fprintf(stderr, "floor: built without liburing; -u unavailable\n");
		return 77;
	}
#endif
	wire_limits_default(&limits);
	lfd = listen_loopback();
#ifdef HAVE_LIBURING
	if (uring)
		serve_uring(lfd);
#endif
	serve_epoll(lfd);
	return 0;
}

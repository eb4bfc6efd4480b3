/*
 * client_io.c: deadline I/O for the store client: poll, send and receive
 * on a non-blocking socket until done or until an absolute deadline.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <errno.h>
#include <poll.h>
#include <stdint.h>

#include "client_io.h"
#include "monotime.h"

/* Milliseconds left until deadline, at least 0, at most INT32_MAX. */
int
client_io_left_ms(int64_t deadline)
{
	int64_t left = deadline - monotime_ms();

	if (left < 0)
		return 0;
	return left > INT32_MAX ? INT32_MAX : (int)left;
}

/* Wait until fd is ready for events or the deadline passes (0 / -1). */
int
client_io_poll(int fd, short events, int64_t deadline)
{
	struct pollfd pfd;
	int r;

	for (;;) {
		pfd.fd = fd;
		pfd.events = events;
		pfd.revents = 0;
		r = poll(&pfd, 1, client_io_left_ms(deadline));
		if (r > 0)
			return 0;
		if (r == 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		if (errno != EINTR)
			return -1;
	}
}

/* Send n bytes from p before the deadline. */
int
client_io_send(int fd, const void *p, size_t n, int64_t deadline)
{
	const unsigned char *b = p;
	ssize_t w;

	while (n > 0) {
		w = send(fd, b, n, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w > 0) {
			b += w;
			n -= (size_t)w;
			continue;
		}
		if (w == -1 && errno == EINTR)
			continue;
		if (w == -1 && errno != EAGAIN && errno != EWOULDBLOCK)
			return -1;
		if (client_io_poll(fd, POLLOUT, deadline) == -1)
			return -1;
	}
	return 0;
}

/* Receive exactly n bytes into p before the deadline (EOF: ECONNRESET). */
int
client_io_recv(int fd, void *p, size_t n, int64_t deadline)
{
	unsigned char *b = p;
	ssize_t r;

	while (n > 0) {
		r = recv(fd, b, n, MSG_DONTWAIT);
		if (r > 0) {
			b += r;
			n -= (size_t)r;
			continue;
		}
		if (r == 0) {
			errno = ECONNRESET;
			return -1;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -1;
		if (client_io_poll(fd, POLLIN, deadline) == -1)
			return -1;
	}
	return 0;
}

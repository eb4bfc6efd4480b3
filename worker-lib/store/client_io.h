/*
 * client_io.h: deadline I/O on the store client's non-blocking sockets
 * (libcgrun).  Deadlines are absolute, on monotime_ms()'s clock (monotime.h).
 * Internal header: not installed.
 */
#ifndef CGRUN_CLIENT_IO_H
#define CGRUN_CLIENT_IO_H

#include <stddef.h>
#include <stdint.h>

/* Milliseconds left until deadline, at least 0, at most INT32_MAX. */
int	client_io_left_ms(int64_t deadline);
/* Wait until fd is ready for events; 0, or -1 (ETIMEDOUT at the deadline). */
int	client_io_poll(int fd, short events, int64_t deadline);
/* Send n bytes from p before the deadline; 0 or -1 with errno. */
int	client_io_send(int fd, const void *p, size_t n, int64_t deadline);
/* Receive exactly n bytes before the deadline; 0 or -1 (EOF: ECONNRESET). */
int	client_io_recv(int fd, void *p, size_t n, int64_t deadline);

#endif /* CGRUN_CLIENT_IO_H */

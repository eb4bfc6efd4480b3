/*
 * sock.h: socket helpers shared by the rendezvous servers (store, http).
 * Internal.
 */
#ifndef CGRUN_SOCK_H
#define CGRUN_SOCK_H

#include <sys/socket.h>
#include <stddef.h>

/* The local port of a socket (IPv4 or IPv6), or -1. */
int	sock_local_port(int fd);
/* "addr:port" ("[v6]:port") of a socket address into buf; "?" if unknown. */
void	sock_addr_text(const struct sockaddr *, socklen_t, char *buf,
	    size_t buflen);

#endif /* CGRUN_SOCK_H */

/*
 * sock.h: socket helpers shared by the rendezvous servers (store, http).
 * Internal.
 */
#ifndef CGRUN_SOCK_H
#define CGRUN_SOCK_H

/* The local port of a socket (IPv4 or IPv6), or -1. */
int	sock_local_port(int fd);

#endif /* CGRUN_SOCK_H */

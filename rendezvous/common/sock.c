/*
 * sock.c: socket helpers shared by the rendezvous servers.
 */
#include <sys/socket.h>
#include <sys/types.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <stdio.h>

#include "sock.h"

/* The local port of a socket, or -1. */
int
sock_local_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof ss;

	if (getsockname(fd, (struct sockaddr *)&ss, &len) == -1)
		return -1;
	if (ss.ss_family == AF_INET)
		return ntohs(((struct sockaddr_in *)&ss)->sin_port);
	if (ss.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	return -1;
}

/* Format "addr:port" ("[v6]:port") of a socket address; "?" if unknown. */
void
sock_addr_text(const struct sockaddr *sa, socklen_t len, char *buf,
    size_t buflen)
{
	const struct sockaddr_in *sin = (const struct sockaddr_in *)(const void *)sa;
	const struct sockaddr_in6 *sin6 =
	    (const struct sockaddr_in6 *)(const void *)sa;
	char host[INET6_ADDRSTRLEN];

	if (sa->sa_family == AF_INET && len >= (socklen_t)sizeof *sin &&
	    inet_ntop(AF_INET, &sin->sin_addr, host, sizeof host) != NULL)
		snprintf(buf, buflen, "%s:%u", host, ntohs(sin->sin_port));
	else if (sa->sa_family == AF_INET6 && len >= (socklen_t)sizeof *sin6 &&
	    inet_ntop(AF_INET6, &sin6->sin6_addr, host, sizeof host) != NULL)
		snprintf(buf, buflen, "[%s]:%u", host, ntohs(sin6->sin6_port));
	else
		snprintf(buf, buflen, "?");
}

/*
 * c10d_host.h: torchrun's is_host for the c10d backend (c10d_host.c): the
 * agent whose machine the endpoint names serves the rendezvous engine
 * in-process, on the endpoint's port.  An endpoint named by a host name
 * that resolves to loopback only on its own machine (Debian's and Ubuntu's
 * "127.0.1.1 myhost" in /etc/hosts) is served on every address and
 * advertised by that name, as the other machines resolve it.
 */
#ifndef CGRUN_C10D_HOST_H
#define CGRUN_C10D_HOST_H

#include <stddef.h>

struct auth_key;
struct sockaddr;
struct event_base;
struct c10d_host;

/*
 * Serve the engine on host:port in this process when is_host says so (1
 * yes, 0 no, -1 torchrun's heuristic: the endpoint is this machine).
 * NULL with errno 0 when not hosting; NULL with errno set and err filled
 * when hosting failed: EADDRINUSE when the port is taken (by a daemon or
 * another agent, or by something else: the caller checks, c10d_busy.c).
 */
struct c10d_host *c10d_host_new(struct event_base *, const char *host,
	    int port, int is_host, const struct auth_key *, char *err,
	    size_t errlen);
/* 1 if host is a name (not "localhost", not an address literal) whose
 * addresses on this machine are all loopback; 0 otherwise. */
int	c10d_host_loopback_name(const char *host);
/* 1 if sa is a loopback address (127.0.0.0/8, ::1, v4-mapped 127/8). */
int	c10d_host_sa_loopback(const struct sockaddr *sa);
/* Jobs the hosted engine still serves (0 for NULL). */
size_t	c10d_host_njobs(const struct c10d_host *);
/* Stop serving; NULL is a no-op. */
void	c10d_host_free(struct c10d_host *);

#endif /* CGRUN_C10D_HOST_H */

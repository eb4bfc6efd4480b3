/*
 * acl.h: address lists in CIDR notation ("127.0.0.1,10.0.0.0/8,fd00::/8"),
 * cgrun-rdzvd's --tcpstore-allow: which peers may speak the TCPStore
 * dialect (PyTorch clients cannot authenticate).  Pure: no I/O, no logs.
 */
#ifndef CGRUN_ACL_H
#define CGRUN_ACL_H

#include <sys/socket.h>

#include <stddef.h>

#define ACL_MAX		32	/* entries in one list */
#define ACL_ITEM_MAX	63	/* bytes of one ADDR[/PREFIX] */

struct acl_entry {
	int		family;		/* AF_INET or AF_INET6 */
	unsigned char	addr[16];	/* network byte order, host bits 0 */
	unsigned	prefix;		/* leading bits that must match */
};

struct acl {
	size_t		 n;
	struct acl_entry e[ACL_MAX];
};

/* Parse a comma-separated list of ADDR or ADDR/PREFIX (IPv4 or IPv6;
 * spaces around items allowed).  0, or -1 with the bad item in err. */
int	acl_parse(struct acl *, const char *list, char *err, size_t errlen);

/* 1 if the address is in the list (an IPv4-mapped IPv6 address matches
 * IPv4 entries); 0 otherwise, also for other families. */
int	acl_match(const struct acl *, const struct sockaddr *, socklen_t);

#endif /* CGRUN_ACL_H */

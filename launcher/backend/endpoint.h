/*
 * endpoint.h: --rdzv-endpoint's HOST[:PORT] (endpoint.c), as the c10d
 * backend reads it (port optional) and as the static backend does (port
 * required, torchrun's MASTER_ADDR:MASTER_PORT).
 */
#ifndef CGRUN_ENDPOINT_H
#define CGRUN_ENDPOINT_H

#include <stddef.h>

/* Split "host", "host:port", "[v6]" or "[v6]:port" (a bare IPv6 address
 * has no port); *port is defport when none is given.  0, or -1 if
 * malformed. */
int	endpoint_parse(const char *ep, char *host, size_t hostlen, int *port,
	    int defport);
/* "host:port" or "[v6]:port" with a port in 1..65535; 0, or -1 with err
 * naming what is wrong. */
int	endpoint_parse_hostport(const char *ep, char *host, size_t hostlen,
	    int *port, char *err, size_t errlen);

#endif /* CGRUN_ENDPOINT_H */

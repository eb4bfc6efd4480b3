/*
 * endpoint.c: --rdzv-endpoint parsers (endpoint.h).  Pure functions over
 * a string; fuzzed by tests/fuzz/fuzz_options.c.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "endpoint.h"
#include "errbuf.h"

/* Is s one to five decimal digits (torchrun's port syntax)? */
static int
endpoint_digits(const char *s)
{
	size_t n = strspn(s, "0123456789");

	return n > 0 && n <= 5 && s[n] == '\0';
}

/* Whether host (in brackets or with a ':') is an IPv6 address. */
static int
endpoint_is_v6(const char *host)
{
	struct in6_addr a;

	return inet_pton(AF_INET6, host, &a) == 1;
}

/*
 * Split "host", "host:port" or "[v6]:port"; 0, or -1.  The port, when
 * given, is one to five digits in 1..65535 (port 0 would make every node
 * pick its own); a host with a ':' must be an IPv6 address, so "a:b:c"
 * and "::1:32100" (an IPv6 address with a port but no brackets) are
 * refused here rather than failing to connect later.
 */
int
endpoint_parse(const char *ep, char *host, size_t hostlen, int *port,
    int defport)
{
	const char *colon, *close;
	size_t n;
	int v6 = ep != NULL && ep[0] == '[';

	*port = defport;
	if (ep == NULL || *ep == '\0')
		return -1;
	if (ep[0] == '[') {
		if ((close = strchr(ep, ']')) == NULL)
			return -1;
		n = (size_t)(close - ep - 1);
		colon = close[1] == ':' ? close + 1 : NULL;
		if (close[1] != '\0' && colon == NULL)
			return -1;
		ep++;
	} else {
		colon = strrchr(ep, ':');
		if (colon != NULL && strchr(ep, ':') != colon)
			colon = NULL;	/* a bare IPv6 address */
		n = colon ? (size_t)(colon - ep) : strlen(ep);
	}
	if (n == 0 || n >= hostlen)
		return -1;
	memcpy(host, ep, n);
	host[n] = '\0';
	if ((v6 || strchr(host, ':') != NULL) && !endpoint_is_v6(host))
		return -1;
	if (colon != NULL) {
		if (!endpoint_digits(colon + 1) || atoi(colon + 1) < 1 ||
		    atoi(colon + 1) > 65535)
			return -1;
		*port = atoi(colon + 1);
	}
	return 0;
}

/*
 * The static backend's endpoint: HOST:PORT (IPv6: [ADDR]:PORT), the port
 * given, all digits, 1..65535 (torchrun accepts port 0, which no other
 * node could ever reach).
 */
int
endpoint_parse_hostport(const char *ep, char *host, size_t hostlen,
    int *port, char *err, size_t errlen)
{
	const char *colon;

	if (ep == NULL || *ep == '\0') {
		errbuf_set(err, errlen, "--rdzv-endpoint: empty; expected "
		    "HOST:PORT");
		return -1;
	}
	if (endpoint_parse(ep, host, hostlen, port, -1) == -1 || *port == -1) {
		errbuf_set(err, errlen, "--rdzv-endpoint %s: expected "
		    "HOST:PORT (IPv6: [ADDR]:PORT), the port a number in "
		    "1-65535", ep);
		return -1;
	}
	colon = strrchr(ep, ':');
	if (!endpoint_digits(colon + 1) || *port == 0) {
		errbuf_set(err, errlen, "--rdzv-endpoint %s: the port must be "
		    "a number in 1-65535", ep);
		return -1;
	}
	return 0;
}

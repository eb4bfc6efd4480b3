/*
 * acl.c: CIDR address lists (acl.h).
 */
#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl.h"
#include "errbuf.h"

/* Clear the bits of addr after the first prefix bits. */
static void
acl_mask(unsigned char *addr, size_t len, unsigned prefix)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (prefix >= 8) {
			prefix -= 8;
			continue;
		}
		addr[i] &= (unsigned char)(0xFF00 >> prefix);
		prefix = 0;
	}
}

/* Parse one ADDR[/PREFIX] (NUL-terminated) into e. */
static int
acl_item(struct acl_entry *e, char *item)
{
	char *slash, *end;
	unsigned long p;
	unsigned max;

	memset(e, 0, sizeof *e);
	if ((slash = strchr(item, '/')) != NULL)
		*slash++ = '\0';
	if (inet_pton(AF_INET, item, e->addr) == 1)
		e->family = AF_INET, max = 32;
	else if (inet_pton(AF_INET6, item, e->addr) == 1)
		e->family = AF_INET6, max = 128;
	else
		return -1;
	e->prefix = max;
	if (slash != NULL) {
		if (*slash < '0' || *slash > '9')
			return -1;
		p = strtoul(slash, &end, 10);
		if (*end != '\0' || p > max)
			return -1;
		e->prefix = (unsigned)p;
	}
	acl_mask(e->addr, max / 8, e->prefix);
	return 0;
}

/* Parse a comma-separated list into a. */
int
acl_parse(struct acl *a, const char *list, char *err, size_t errlen)
{
	char item[ACL_ITEM_MAX + 1];
	const char *p = list, *q;
	size_t len;

	memset(a, 0, sizeof *a);
	for (;;) {
		while (*p == ' ' || *p == '\t')
			p++;
		q = p + strcspn(p, ",");
		len = (size_t)(q - p);
		while (len > 0 && (p[len - 1] == ' ' || p[len - 1] == '\t'))
			len--;
		if (len == 0 || len > ACL_ITEM_MAX)
			return errbuf_set(err, errlen,
			    "address list \"%.80s\": %s item", list,
			    len == 0 ? "empty" : "too long an");
		if (a->n == ACL_MAX)
			return errbuf_set(err, errlen, "address list: over %d "
			    "items", ACL_MAX);
		memcpy(item, p, len);
		item[len] = '\0';
		if (acl_item(&a->e[a->n], item) == -1)
			return errbuf_set(err, errlen, "address list: "
			    "\"%.*s\" is not ADDR or ADDR/PREFIX", (int)len, p);
		a->n++;
		if (*q == '\0')
			return 0;
		p = q + 1;
	}
}

/* 1 if the first prefix bits of x and y agree. */
static int
acl_prefix_eq(const unsigned char *x, const unsigned char *y, unsigned prefix)
{
	unsigned char m;

	for (; prefix >= 8; prefix -= 8, x++, y++)
		if (*x != *y)
			return 0;
	if (prefix == 0)
		return 1;
	m = (unsigned char)(0xFF00 >> prefix);
	return (*x & m) == (*y & m);
}

/* 1 if the address is in the list. */
int
acl_match(const struct acl *a, const struct sockaddr *sa, socklen_t salen)
{
	static const unsigned char mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0,
	    0, 0xFF, 0xFF };
	const unsigned char *b4 = NULL, *b6 = NULL;
	size_t i;

	if (sa->sa_family == AF_INET && salen >= sizeof(struct sockaddr_in))
		b4 = (const unsigned char *)
		    &((const struct sockaddr_in *)(const void *)sa)->sin_addr;
	else if (sa->sa_family == AF_INET6 &&
	    salen >= sizeof(struct sockaddr_in6)) {
		b6 = (const unsigned char *)
		    &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
		if (memcmp(b6, mapped, sizeof mapped) == 0)
			b4 = b6 + 12;
	}
	for (i = 0; i < a->n; i++) {
		if (a->e[i].family == AF_INET && b4 != NULL &&
		    acl_prefix_eq(a->e[i].addr, b4, a->e[i].prefix))
			return 1;
		if (a->e[i].family == AF_INET6 && b6 != NULL &&
		    acl_prefix_eq(a->e[i].addr, b6, a->e[i].prefix))
			return 1;
	}
	return 0;
}

/*
 * c10d_conf.c: --rdzv-conf for the c10d backend (c10d_conf.h): "k=v,k=v"
 * over torchrun's defaults.  A pure parser over a bounded copy of the
 * string; fuzzed by tests/fuzz/fuzz_options.c.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "c10d_conf.h"
#include "errbuf.h"
#include "log.h"
#include "options.h"
#include "rdzv_proto.h"

/* One --rdzv-conf duration in seconds (decimals allowed) as ms. */
static int
c10d_conf_seconds(const char *v, uint32_t *ms)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(v, &end);
	if (errno != 0 || end == v || *end != '\0' || !(d >= 0) ||
	    d * 1000 > RDZV_TIMEOUT_MAX)
		return -1;
	*ms = (uint32_t)(d * 1000 + 0.5);
	return 0;
}

/* A torchrun boolean: 1,true,t,yes,y / 0,false,f,no,n. */
static int
c10d_conf_bool(const char *v)
{
	static const char *yes[] = { "1", "true", "t", "yes", "y" };
	static const char *no[] = { "0", "false", "f", "no", "n" };
	size_t i;

	for (i = 0; i < 5; i++) {
		if (strcasecmp(v, yes[i]) == 0)
			return 1;
		if (strcasecmp(v, no[i]) == 0)
			return 0;
	}
	return -1;
}

/* Apply one key=value of --rdzv-conf; 0, or -1 with err. */
static int
c10d_conf_apply(struct c10d_conf *cf, const char *k, const char *v, char *err,
    size_t errlen)
{
	static const struct { const char *key; size_t off; } durations[] = {
		{ "join_timeout", offsetof(struct c10d_conf, join_ms) },
		{ "last_call_timeout", offsetof(struct c10d_conf, last_call_ms) },
		{ "close_timeout", offsetof(struct c10d_conf, close_ms) },
		{ "keep_alive_interval", offsetof(struct c10d_conf, keepalive_ms) },
		{ "heartbeat_timeout", offsetof(struct c10d_conf, heartbeat_ms) },
		{ "read_timeout", offsetof(struct c10d_conf, read_ms) },
	};
	static const char *ignored[] = { "timeout", "use_libuv", "rank",
	    "store_type" };
	unsigned long n;
	char *end;
	size_t i;

	for (i = 0; i < sizeof(durations) / sizeof(durations[0]); i++)
		if (strcmp(k, durations[i].key) == 0) {
			if (c10d_conf_seconds(v, (uint32_t *)(void *)((char *)cf +
			    durations[i].off)) == -1)
				goto bad;
			return 0;
		}
	if (strcmp(k, "keep_alive_max_attempt") == 0) {
		n = strtoul(v, &end, 10);
		if (*v == '\0' || *end != '\0' || n < 1 || n > 1000)
			goto bad;
		cf->keepalive_max = (uint32_t)n;
		return 0;
	}
	if (strcmp(k, "is_host") == 0) {
		if ((cf->is_host = c10d_conf_bool(v)) == -1)
			goto bad;
		return 0;
	}
	if (strcmp(k, "store_type") == 0 && strcmp(v, "tcp") != 0) {
		errbuf_set(err, errlen, "--rdzv-conf store_type=%s: only tcp "
		    "is supported", v);
		return -1;
	}
	for (i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
		if (strcmp(k, ignored[i]) == 0)
			return 0;
	log_warnx("--rdzv-conf: unknown key %s ignored", k);
	return 0;
bad:
	errbuf_set(err, errlen, "--rdzv-conf %s=%s: not a valid value", k, v);
	return -1;
}

/* Parse --rdzv-conf (k=v,k=v) over torchrun's defaults. */
int
c10d_conf_parse(const char *s, struct c10d_conf *cf, char *err, size_t errlen)
{
	char buf[OPTIONS_STR_MAX], *p, *tok, *eq;

	cf->join_ms = 600000;
	cf->last_call_ms = 30000;
	cf->close_ms = 30000;
	cf->keepalive_ms = 5000;
	cf->keepalive_max = 3;
	cf->heartbeat_ms = 5000;
	cf->read_ms = 60000;
	cf->is_host = -1;
	if (s == NULL)
		return 0;
	snprintf(buf, sizeof(buf), "%s", s);
	for (p = buf; (tok = strsep(&p, ",")) != NULL;) {
		if (*tok == '\0')
			continue;
		if ((eq = strchr(tok, '=')) == NULL) {
			errbuf_set(err, errlen, "--rdzv-conf: %s: expected "
			    "key=value", tok);
			return -1;
		}
		*eq = '\0';
		if (c10d_conf_apply(cf, tok, eq + 1, err, errlen) == -1)
			return -1;
	}
	if (cf->keepalive_ms == 0) {
		errbuf_set(err, errlen, "--rdzv-conf keep_alive_interval must "
		    "be positive");
		return -1;
	}
	return 0;
}

/*
 * config.c: the option table of cgrun-rdzvd, shared by the configuration
 * file parser and the command line (see config.h for the syntax).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "acl.h"
#include "config.h"
#include "errbuf.h"
#include "log.h"

#define KIB 1024ULL
#define GIB (1024ULL * 1024 * 1024)

#define OFF(f) offsetof(struct rdzvd_config, f)

const struct config_opt config_opts[] = {
	{ "host", CONFIG_T_HOSTS, OFF(hosts), 0, 0, "ADDR[,ADDR]",
	  "listen address; repeat or comma-separate (default: all)" },
	{ "port", CONFIG_T_INT, OFF(port), 0, 65535, "PORT",
	  "store and rendezvous port (default 29400; 0: any free port)" },
	{ "max-key-size", CONFIG_T_SIZE, OFF(limits.max_key), 1, GIB, "BYTES",
	  "largest key accepted" },
	{ "max-value-size", CONFIG_T_SIZE, OFF(limits.max_value), 1, 4 * GIB,
	  "BYTES", "largest value accepted" },
	{ "max-keys-per-request", CONFIG_T_SIZE, OFF(limits.max_keys_per_req),
	  1, 1000000000ULL, "N", "most keys in one CHECK/WAIT/MULTI_* request" },
	{ "max-connections", CONFIG_T_SIZE, OFF(limits.max_conns), 1,
	  10000000ULL, "N", "most open client connections" },
	{ "max-output", CONFIG_T_SIZE, OFF(limits.max_outbuf), 4 * KIB,
	  64 * GIB, "BYTES", "unsent reply bytes per connection before it is dropped" },
	{ "output-high-water", CONFIG_T_SIZE, OFF(limits.out_high), 0,
	  64 * GIB, "BYTES", "unsent reply bytes per connection before it is not read, until half is left (0: never)" },
	{ "max-output-total", CONFIG_T_SIZE, OFF(limits.max_outbuf_total), 0,
	  1024 * GIB, "BYTES", "unsent reply bytes of all connections before the largest is dropped (at least 16 x max-value-size; 0: no limit)" },
	{ "max-input", CONFIG_T_SIZE, OFF(limits.max_inbuf), 4 * KIB,
	  64 * GIB, "BYTES", "buffered request bytes per connection" },
	{ "max-input-total", CONFIG_T_SIZE, OFF(limits.max_inbuf_total), 0,
	  64 * GIB, "BYTES", "buffered request bytes of all connections before readers pause (0: no limit)" },
	{ "idle-timeout", CONFIG_T_UINT, OFF(limits.idle_timeout_ms), 0,
	  86400000ULL, "MS", "drop a connection that leaves a request half-sent this long (0: never)" },
	{ "request-timeout", CONFIG_T_UINT, OFF(limits.request_timeout_ms), 0,
	  86400000ULL, "MS", "drop a connection whose request is not complete this long after its first byte (0: never)" },
	{ "max-jobs", CONFIG_T_SIZE, OFF(rdzv_limits.max_jobs), 0,
	  10000000ULL, "N", "most open rendezvous jobs (0: no limit)" },
	{ "max-jobs-per-address", CONFIG_T_SIZE,
	  OFF(rdzv_limits.max_jobs_per_addr), 0, 10000000ULL, "N",
	  "most jobs created from one client address without auth-token-file (0: no limit)" },
	{ "job-orphan-timeout", CONFIG_T_UINT, OFF(rdzv_limits.orphan_ms), 0,
	  604800000ULL, "MS", "forget a job none of whose agents is connected after this long (0: their keep-alive only)" },
	{ "http-host", CONFIG_T_STR, OFF(http_host), 0, 0, "ADDR",
	  "address of the HTTP /metrics and /status server (default 127.0.0.1)" },
	{ "http-port", CONFIG_T_INT, OFF(http_port), 0, 65535, "PORT",
	  "serve /metrics and /status on this port (default: off; 0: any free port)" },
	{ "log-level", CONFIG_T_LEVEL, OFF(log_level), 0, 2, "warn|info|debug",
	  "how much to log (default warn; -v: info, -vv: debug)" },
	{ "shutdown-timeout", CONFIG_T_UINT, OFF(shutdown_timeout_ms), 0,
	  600000ULL, "MS", "time given to flush goodbyes to peers on SIGTERM" },
	{ "auth-token-file", CONFIG_T_STR, OFF(auth_token_file), 0, 0, "FILE",
	  "agents must prove they know the secret in FILE (mode 600)" },
	{ "tcpstore-allow", CONFIG_T_STR, OFF(tcpstore_allow), 0, 0,
	  "CIDR[,CIDR]", "only these addresses may use the TCPStore protocol" },
};
const size_t config_nopts = sizeof config_opts / sizeof config_opts[0];

/* Defaults: every address, port 29400, store_limits_default(), no HTTP. */
void
config_defaults(struct rdzvd_config *cfg)
{
	memset(cfg, 0, sizeof *cfg);
	cfg->port = CONFIG_DEFAULT_PORT;
	store_limits_default(&cfg->limits);
	rdzv_limits_default(&cfg->rdzv_limits);
	snprintf(cfg->http_host, sizeof cfg->http_host, "127.0.0.1");
	cfg->http_port = -1;
	cfg->log_level = LOG_LVL_WARN;
	cfg->shutdown_timeout_ms = 2000;
}

/* Compare a key (dashes or underscores) with a table key (dashes). */
static int
config_key_eq(const char *tkey, const char *key, size_t keylen)
{
	size_t i;

	for (i = 0; i < keylen; i++) {
		char c = key[i] == '_' ? '-' : key[i];

		if (tkey[i] == '\0' || tkey[i] != c)
			return 0;
	}
	return tkey[keylen] == '\0';
}

/* The table row for key ("max_key_size" and "max-key-size" alike), or NULL. */
const struct config_opt *
config_find(const char *key, size_t keylen)
{
	size_t i;

	for (i = 0; i < config_nopts; i++)
		if (config_key_eq(config_opts[i].key, key, keylen))
			return &config_opts[i];
	return NULL;
}

/* Parse an unsigned number with an optional k/M/G (x1024) suffix. */
static int
config_number(const char *s, int suffixes, unsigned long long *out)
{
	unsigned long long v, mul = 1;
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0)
		return -1;
	if (suffixes && *end != '\0' && end[1] == '\0') {
		switch (*end) {
		case 'k': case 'K': mul = KIB; break;
		case 'm': case 'M': mul = KIB * KIB; break;
		case 'g': case 'G': mul = GIB; break;
		default: return -1;
		}
		end++;
	}
	if (*end != '\0' || (v != 0 && mul > ULLONG_MAX / v))
		return -1;
	*out = v * mul;
	return 0;
}

/* Parse an int that may be negative only for -1 (http-port "off"). */
static int
config_set_int(const struct config_opt *o, int *dst, const char *v,
    char *err, size_t errlen)
{
	unsigned long long n;

	if (strcmp(o->key, "http-port") == 0 &&
	    (strcmp(v, "off") == 0 || strcmp(v, "-1") == 0)) {
		*dst = -1;
		return 0;
	}
	if (config_number(v, 0, &n) == -1)
		return errbuf_set(err, errlen, "%s: \"%s\" is not a number",
		    o->key, v);
	if (n < o->min || n > o->max)
		return errbuf_set(err, errlen, "%s: %llu is outside %llu..%llu",
		    o->key, n, o->min, o->max);
	*dst = (int)n;
	return 0;
}

/* Parse a size or an unsigned count within the row's bounds. */
static int
config_set_unsigned(const struct config_opt *o, void *dst, const char *v,
    char *err, size_t errlen)
{
	unsigned long long n;

	if (config_number(v, o->type == CONFIG_T_SIZE, &n) == -1)
		return errbuf_set(err, errlen, "%s: \"%s\" is not a %s",
		    o->key, v, o->type == CONFIG_T_SIZE ?
		    "size (N, Nk, NM or NG)" : "number");
	if (n < o->min || n > o->max)
		return errbuf_set(err, errlen, "%s: %llu is outside %llu..%llu",
		    o->key, n, o->min, o->max);
	if (o->type == CONFIG_T_SIZE)
		*(size_t *)dst = (size_t)n;
	else
		*(unsigned *)dst = (unsigned)n;
	return 0;
}

/* Parse a log level by name or number. */
static int
config_set_level(const struct config_opt *o, int *dst, const char *v,
    char *err, size_t errlen)
{
	static const char *names[] = { "warn", "info", "debug" };
	int i;

	for (i = 0; i < 3; i++)
		if (strcmp(v, names[i]) == 0 || (v[0] == '0' + i && v[1] == '\0')) {
			*dst = i;
			return 0;
		}
	return errbuf_set(err, errlen, "%s: \"%s\" is not warn, info or debug",
	    o->key, v);
}

/* Copy one string value, refusing empty or oversized ones. */
static int
config_set_str(const struct config_opt *o, char *dst, const char *v,
    size_t vlen, char *err, size_t errlen)
{
	if (vlen == 0)
		return errbuf_set(err, errlen, "%s: empty value", o->key);
	if (vlen >= CONFIG_HOST_MAX)
		return errbuf_set(err, errlen, "%s: value longer than %d bytes",
		    o->key, CONFIG_HOST_MAX - 1);
	memcpy(dst, v, vlen);
	dst[vlen] = '\0';
	return 0;
}

/* Append a comma-separated address list; flags replace the file's list. */
static int
config_set_hosts(struct rdzvd_config *cfg, const struct config_opt *o,
    const char *v, int from_file, char *err, size_t errlen)
{
	const char *p = v, *comma;
	size_t n;

	if (!from_file && cfg->hosts_from_file) {
		cfg->nhosts = 0;
		cfg->hosts_from_file = 0;
	} else if (from_file)
		cfg->hosts_from_file = 1;
	for (;;) {
		comma = strchr(p, ',');
		n = comma != NULL ? (size_t)(comma - p) : strlen(p);
		if (cfg->nhosts == CONFIG_MAX_HOSTS)
			return errbuf_set(err, errlen,
			    "%s: more than %d addresses", o->key,
			    CONFIG_MAX_HOSTS);
		if (config_set_str(o, cfg->hosts[cfg->nhosts], p, n, err,
		    errlen) == -1)
			return -1;
		cfg->nhosts++;
		if (comma == NULL)
			return 0;
		p = comma + 1;
	}
}

/* Set one key from its text value; from_file marks file-given hosts. */
int
config_set(struct rdzvd_config *cfg, const char *key, const char *value,
    int from_file, char *err, size_t errlen)
{
	const struct config_opt *o = config_find(key, strlen(key));
	char *dst = (char *)cfg;

	if (o == NULL)
		return errbuf_set(err, errlen, "unknown key \"%.64s\"", key);
	dst += o->offset;
	switch (o->type) {
	case CONFIG_T_HOSTS:
		return config_set_hosts(cfg, o, value, from_file, err, errlen);
	case CONFIG_T_STR:
		return config_set_str(o, dst, value, strlen(value), err, errlen);
	case CONFIG_T_INT:
		return config_set_int(o, (int *)(void *)dst, value, err, errlen);
	case CONFIG_T_SIZE:
	case CONFIG_T_UINT:
		return config_set_unsigned(o, dst, value, err, errlen);
	case CONFIG_T_LEVEL:
		return config_set_level(o, (int *)(void *)dst, value, err, errlen);
	}
	return errbuf_set(err, errlen, "%s: bad table entry", key);
}

/* Trim blanks at both ends of [*s, *e). */
static void
config_trim(const char **s, const char **e)
{
	while (*s < *e && (**s == ' ' || **s == '\t' || **s == '\r'))
		(*s)++;
	while (*e > *s && ((*e)[-1] == ' ' || (*e)[-1] == '\t' ||
	    (*e)[-1] == '\r'))
		(*e)--;
}

/* Split a value: strip "quotes", or cut an unquoted " # comment". */
static int
config_value(const char **s, const char **e, char *err, size_t errlen)
{
	const char *p, *q;

	config_trim(s, e);
	if (*s < *e && **s == '"') {
		p = memchr(*s + 1, '"', (size_t)(*e - *s - 1));
		if (p == NULL)
			return errbuf_set(err, errlen, "unterminated quote");
		for (q = p + 1; q < *e && (*q == ' ' || *q == '\t'); q++)
			;
		if (q < *e && *q != '#')
			return errbuf_set(err, errlen,
			    "text after closing quote");
		(*s)++;
		*e = p;
		return 0;
	}
	for (p = *s; p < *e; p++)
		if (*p == '#' && (p == *s || p[-1] == ' ' || p[-1] == '\t')) {
			*e = p;
			break;
		}
	config_trim(s, e);
	return 0;
}

/* Parse one line (without its newline) into cfg. */
static int
config_line(struct rdzvd_config *cfg, const char *s, const char *e,
    char *err, size_t errlen)
{
	const char *eq, *ks, *ke, *vs, *ve;
	char key[CONFIG_KEY_MAX], val[CONFIG_LINE_MAX];

	config_trim(&s, &e);
	if (s == e || *s == '#')
		return 0;
	if (memchr(s, '\0', (size_t)(e - s)) != NULL)
		return errbuf_set(err, errlen, "NUL byte");
	eq = memchr(s, '=', (size_t)(e - s));
	if (eq == NULL)
		return errbuf_set(err, errlen, "expected \"key = value\"");
	ks = s, ke = eq, vs = eq + 1, ve = e;
	config_trim(&ks, &ke);
	if (ks == ke)
		return errbuf_set(err, errlen, "missing key before '='");
	if ((size_t)(ke - ks) >= sizeof key)
		return errbuf_set(err, errlen, "key longer than %d bytes",
		    CONFIG_KEY_MAX - 1);
	memcpy(key, ks, (size_t)(ke - ks));
	key[ke - ks] = '\0';
	if (config_find(key, strlen(key)) == NULL)
		return errbuf_set(err, errlen, "unknown key \"%s\"", key);
	if (config_value(&vs, &ve, err, errlen) == -1)
		return -1;
	memcpy(val, vs, (size_t)(ve - vs));
	val[ve - vs] = '\0';
	return config_set(cfg, key, val, 1, err, errlen);
}

/*
 * Parse a whole configuration text into cfg.  Contract: reads only
 * buf[0..len), allocates nothing, stops at the first bad line and names it.
 */
int
config_parse(struct rdzvd_config *cfg, const char *buf, size_t len,
    char *err, size_t errlen)
{
	const char *p = buf, *end = buf + len, *nl;
	char why[256];
	unsigned lineno = 0;

	if (len > CONFIG_FILE_MAX)
		return errbuf_set(err, errlen, "larger than %d bytes",
		    CONFIG_FILE_MAX);
	while (p < end) {
		lineno++;
		nl = memchr(p, '\n', (size_t)(end - p));
		if (nl == NULL)
			nl = end;
		if (nl - p >= CONFIG_LINE_MAX)
			return errbuf_set(err, errlen,
			    "line %u: longer than %d bytes", lineno,
			    CONFIG_LINE_MAX - 1);
		if (config_line(cfg, p, nl, why, sizeof why) == -1)
			return errbuf_set(err, errlen, "line %u: %s", lineno,
			    why);
		p = nl + 1;
	}
	return 0;
}

/* Read a whole file of at most CONFIG_FILE_MAX bytes into buf. */
static ssize_t
config_read(int fd, char *buf, size_t size)
{
	size_t off = 0;
	ssize_t n;

	for (;;) {
		n = read(fd, buf + off, size - off);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return n == 0 ? (ssize_t)off : -1;
		off += (size_t)n;
		if (off == size)
			return (ssize_t)off;	/* one byte over: too big */
	}
}

/* Read and parse a file; missing_ok: a missing file is not an error. */
int
config_load(struct rdzvd_config *cfg, const char *path, int missing_ok,
    char *err, size_t errlen)
{
	static char buf[CONFIG_FILE_MAX + 1];
	char why[320];
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd == -1) {
		if (errno == ENOENT && missing_ok)
			return 0;
		return errbuf_set(err, errlen, "%s: %s", path, strerror(errno));
	}
	n = config_read(fd, buf, sizeof buf);
	close(fd);
	if (n == -1)
		return errbuf_set(err, errlen, "%s: %s", path, strerror(errno));
	if (config_parse(cfg, buf, (size_t)n, why, sizeof why) == -1)
		return errbuf_set(err, errlen, "%s: %s", path, why);
	return 0;
}

/* Cross-key checks done after file and flags. */
int
config_check(const struct rdzvd_config *cfg, char *err, size_t errlen)
{
	const struct store_limits *l = &cfg->limits;
	struct acl acl;

	if (l->max_inbuf < l->max_key || l->max_inbuf < 64)
		return errbuf_set(err, errlen, "max-input (%zu) must be at "
		    "least max-key-size (%zu)", l->max_inbuf, l->max_key);
	if (cfg->http_port > 0 && cfg->http_port == cfg->port)
		return errbuf_set(err, errlen, "http-port and port are both %d",
		    cfg->port);
	if (cfg->tcpstore_allow[0] != '\0' &&
	    acl_parse(&acl, cfg->tcpstore_allow, err, errlen) == -1)
		return -1;
	return 0;
}

/* Write the configuration in file syntax (for -n -v). */
void
config_dump(const struct rdzvd_config *cfg, FILE *fp)
{
	const struct store_limits *l = &cfg->limits;
	static const char *levels[] = { "warn", "info", "debug" };
	size_t i;

	for (i = 0; i < cfg->nhosts; i++)
		fprintf(fp, "host = %s\n", cfg->hosts[i]);
	if (cfg->nhosts == 0)
		fprintf(fp, "# host = (all addresses)\n");
	fprintf(fp, "port = %d\n", cfg->port);
	fprintf(fp, "max-key-size = %zu\nmax-value-size = %zu\n"
	    "max-keys-per-request = %zu\nmax-connections = %zu\n"
	    "max-output = %zu\nmax-input = %zu\nmax-input-total = %zu\n"
	    "idle-timeout = %u\nrequest-timeout = %u\n",
	    l->max_key, l->max_value, l->max_keys_per_req, l->max_conns,
	    l->max_outbuf, l->max_inbuf, l->max_inbuf_total,
	    l->idle_timeout_ms, l->request_timeout_ms);
	fprintf(fp, "output-high-water = %zu\nmax-output-total = %zu\n",
	    l->out_high, l->max_outbuf_total);
	fprintf(fp, "max-jobs = %zu\nmax-jobs-per-address = %zu\n"
	    "job-orphan-timeout = %u\n", cfg->rdzv_limits.max_jobs,
	    cfg->rdzv_limits.max_jobs_per_addr, cfg->rdzv_limits.orphan_ms);
	fprintf(fp, "http-host = %s\n", cfg->http_host);
	if (cfg->http_port < 0)
		fprintf(fp, "http-port = off\n");
	else
		fprintf(fp, "http-port = %d\n", cfg->http_port);
	fprintf(fp, "log-level = %s\nshutdown-timeout = %u\n",
	    levels[cfg->log_level >= 0 && cfg->log_level <= 2 ?
	    cfg->log_level : 0], cfg->shutdown_timeout_ms);
	if (cfg->auth_token_file[0] != '\0')
		fprintf(fp, "auth-token-file = %s\n", cfg->auth_token_file);
	if (cfg->tcpstore_allow[0] != '\0')
		fprintf(fp, "tcpstore-allow = %s\n", cfg->tcpstore_allow);
}

/* One "--key=ARG  help" line per table row, for --help. */
void
config_usage(FILE *fp)
{
	char flag[CONFIG_KEY_MAX + 32];
	size_t i;

	for (i = 0; i < config_nopts; i++) {
		snprintf(flag, sizeof flag, "--%s=%s", config_opts[i].key,
		    config_opts[i].argname);
		fprintf(fp, "  %-30s %s\n", flag, config_opts[i].help);
	}
}

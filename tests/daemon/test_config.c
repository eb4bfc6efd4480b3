/*
 * test_config.c: cgrun-rdzvd's configuration file parser and option table.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "helper_main.h"

/* Whether two limit sets are the same, field by field (no padding). */
static int
limits_eq(const struct store_limits *a, const struct store_limits *b)
{
	return a->max_key == b->max_key && a->max_value == b->max_value &&
	    a->max_keys_per_req == b->max_keys_per_req &&
	    a->max_conns == b->max_conns && a->max_outbuf == b->max_outbuf &&
	    a->max_inbuf == b->max_inbuf &&
	    a->max_inbuf_total == b->max_inbuf_total &&
	    a->out_high == b->out_high &&
	    a->max_outbuf_total == b->max_outbuf_total &&
	    a->idle_timeout_ms == b->idle_timeout_ms &&
	    a->request_timeout_ms == b->request_timeout_ms;
}

/* Whether two sets of rendezvous limits are equal. */
static int
rdzv_limits_eq(const struct rdzv_limits *a, const struct rdzv_limits *b)
{
	return a->max_jobs == b->max_jobs &&
	    a->max_jobs_per_addr == b->max_jobs_per_addr &&
	    a->orphan_ms == b->orphan_ms;
}

/* Parse text into a fresh default configuration; return config_parse's. */
static int
parse(struct rdzvd_config *cfg, const char *text, char *err, size_t errlen)
{
	config_defaults(cfg);
	err[0] = '\0';
	return config_parse(cfg, text, strlen(text), err, errlen);
}

START_TEST(test_defaults)
{
	struct rdzvd_config cfg;
	struct store_limits l;

	config_defaults(&cfg);
	store_limits_default(&l);
	ck_assert_int_eq(cfg.port, 29400);
	ck_assert_uint_eq(cfg.nhosts, 0);
	ck_assert_int_eq(cfg.http_port, -1);
	ck_assert_str_eq(cfg.http_host, "127.0.0.1");
	ck_assert(limits_eq(&cfg.limits, &l));
}
END_TEST

START_TEST(test_every_key)
{
	struct rdzvd_config cfg;
	char err[256];
	const char *text =
	    "# a comment\n"
	    "\n"
	    "   host = 10.0.0.1 \n"
	    "host=10.0.0.2,::1\n"
	    "port = 29500\n"
	    "max-key-size = 4k\n"
	    "max_value_size = 2M   # inline comment\n"
	    "max-keys-per-request = 100\n"
	    "max-connections = 5000\n"
	    "max-output = 1G\n"
	    "max-input = 8M\n"
	    "max-input-total = 32M\n"
	    "output-high-water = 4M\n"
	    "max-output-total = 2G\n"
	    "idle-timeout = 30000\n"
	    "request-timeout = 5000\n"
	    "max-jobs = 10\n"
	    "max_jobs_per_address = 0\n"
	    "job-orphan-timeout = 1500\n"
	    "http-host = \"::1\"\n"
	    "http-port = 9400\n"
	    "log-level = debug\n"
	    "shutdown-timeout = 500";	/* no final newline */

	ck_assert_msg(parse(&cfg, text, err, sizeof err) == 0, "%s", err);
	ck_assert_uint_eq(cfg.nhosts, 3);
	ck_assert_str_eq(cfg.hosts[0], "10.0.0.1");
	ck_assert_str_eq(cfg.hosts[1], "10.0.0.2");
	ck_assert_str_eq(cfg.hosts[2], "::1");
	ck_assert_int_eq(cfg.port, 29500);
	ck_assert_uint_eq(cfg.limits.max_key, 4096);
	ck_assert_uint_eq(cfg.limits.max_value, 2 * 1024 * 1024);
	ck_assert_uint_eq(cfg.limits.max_keys_per_req, 100);
	ck_assert_uint_eq(cfg.limits.max_conns, 5000);
	ck_assert_uint_eq(cfg.limits.max_outbuf, 1024ULL * 1024 * 1024);
	ck_assert_uint_eq(cfg.limits.max_inbuf, 8 * 1024 * 1024);
	ck_assert_uint_eq(cfg.limits.idle_timeout_ms, 30000);
	ck_assert_uint_eq(cfg.limits.max_inbuf_total, 32 * 1024 * 1024);
	ck_assert_uint_eq(cfg.limits.out_high, 4 * 1024 * 1024);
	ck_assert_uint_eq(cfg.limits.max_outbuf_total, 2ULL * 1024 * 1024 * 1024);
	ck_assert_uint_eq(cfg.limits.request_timeout_ms, 5000);
	ck_assert_uint_eq(cfg.rdzv_limits.max_jobs, 10);
	ck_assert_uint_eq(cfg.rdzv_limits.max_jobs_per_addr, 0);
	ck_assert_uint_eq(cfg.rdzv_limits.orphan_ms, 1500);
	ck_assert_str_eq(cfg.http_host, "::1");
	ck_assert_int_eq(cfg.http_port, 9400);
	ck_assert_int_eq(cfg.log_level, LOG_LVL_DEBUG);
	ck_assert_uint_eq(cfg.shutdown_timeout_ms, 500);
	ck_assert_msg(config_check(&cfg, err, sizeof err) == 0, "%s", err);
}
END_TEST

/* Each bad text, and the words its error must contain. */
static const struct {
	const char *text, *want;
} bad[] = {
	{ "nosuchkey = 1\n", "line 1: unknown key \"nosuchkey\"" },
	{ "\n\nport\n", "line 3: expected \"key = value\"" },
	{ "= 5\n", "line 1: missing key" },
	{ "port = 65536\n", "port: 65536 is outside 0..65535" },
	{ "port = -1\n", "port: \"-1\" is not a number" },
	{ "port = 12abc\n", "not a number" },
	{ "port = \n", "not a number" },
	{ "max-connections = 0\n", "max-connections: 0 is outside" },
	{ "max-key-size = 5X\n", "not a size" },
	{ "max-key-size = 99999999999999999999\n", "not a size" },
	{ "max-value-size = 16777216G\n", "outside" },
	{ "log-level = loud\n", "not warn, info or debug" },
	{ "http-host = \"::1\n", "unterminated quote" },
	{ "http-host = \"::1\" x\n", "text after closing quote" },
	{ "http-host =\n", "http-host: empty value" },
	{ "host = a,,b\n", "host: empty value" },
	{ "host = a\nport = 1\nport = x\n", "line 3:" },
	{ "idle-timeout = 1e3\n", "not a number" },
	{ "request-timeout = 86400001\n", "request-timeout: 86400001 is outside" },
	{ "max-jobs = many\n", "max-jobs: \"many\" is not a size" },
	{ "job-orphan-timeout = -5\n", "not a number" },
};

START_TEST(test_bad)
{
	struct rdzvd_config cfg;
	char err[256];

	ck_assert_int_eq(parse(&cfg, bad[_i].text, err, sizeof err), -1);
	ck_assert_msg(strstr(err, bad[_i].want) != NULL,
	    "case %d: error \"%s\" lacks \"%s\"", _i, err, bad[_i].want);
}
END_TEST

START_TEST(test_bounds)
{
	struct rdzvd_config cfg;
	char err[256], *big;
	size_t i;

	/* A line one byte too long, then a file one byte too big. */
	big = malloc(CONFIG_FILE_MAX + 2);
	ck_assert_ptr_nonnull(big);
	memset(big, '#', CONFIG_LINE_MAX);
	big[CONFIG_LINE_MAX] = '\0';
	ck_assert_int_eq(parse(&cfg, big, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "line 1: longer than") != NULL, "%s", err);
	big[CONFIG_LINE_MAX - 1] = '\0';	/* exactly the maximum: fine */
	ck_assert_msg(parse(&cfg, big, err, sizeof err) == 0, "%s", err);
	for (i = 0; i < CONFIG_FILE_MAX + 1; i++)
		big[i] = i % 64 == 63 ? '\n' : '#';
	big[CONFIG_FILE_MAX + 1] = '\0';
	ck_assert_int_eq(parse(&cfg, big, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "larger than") != NULL, "%s", err);
	free(big);

	/* Too many addresses; an address too long; an embedded NUL. */
	ck_assert_int_eq(parse(&cfg, "host = a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q\n",
	    err, sizeof err), -1);
	ck_assert_msg(strstr(err, "more than 16 addresses") != NULL, "%s", err);
	{
		char line[CONFIG_HOST_MAX + 32];

		snprintf(line, sizeof line, "host = %0*d\n", CONFIG_HOST_MAX, 0);
		ck_assert_int_eq(parse(&cfg, line, err, sizeof err), -1);
		ck_assert_msg(strstr(err, "longer than") != NULL, "%s", err);
	}
	config_defaults(&cfg);
	ck_assert_int_eq(config_parse(&cfg, "port = 1\0\n", 10, err,
	    sizeof err), -1);
	ck_assert_msg(strstr(err, "NUL") != NULL, "%s", err);
}
END_TEST

START_TEST(test_flags_override_file)
{
	struct rdzvd_config cfg;
	char err[256];

	ck_assert(parse(&cfg, "host = 10.0.0.1\nhost = 10.0.0.2\nport = 1\n",
	    err, sizeof err) == 0);
	/* The first --host replaces the file's list; later ones append. */
	ck_assert_int_eq(config_set(&cfg, "host", "127.0.0.1", 0, err,
	    sizeof err), 0);
	ck_assert_int_eq(config_set(&cfg, "host", "127.0.0.2", 0, err,
	    sizeof err), 0);
	ck_assert_uint_eq(cfg.nhosts, 2);
	ck_assert_str_eq(cfg.hosts[0], "127.0.0.1");
	ck_assert_str_eq(cfg.hosts[1], "127.0.0.2");
	ck_assert_int_eq(config_set(&cfg, "port", "2", 0, err, sizeof err), 0);
	ck_assert_int_eq(cfg.port, 2);
	ck_assert_int_eq(config_set(&cfg, "http-port", "off", 0, err,
	    sizeof err), 0);
	ck_assert_int_eq(cfg.http_port, -1);
	ck_assert_int_eq(config_set(&cfg, "bogus", "1", 0, err, sizeof err), -1);
	ck_assert_ptr_nonnull(config_find("max_key_size", 12));
	ck_assert_ptr_null(config_find("max-key-siz", 11));
	ck_assert_ptr_null(config_find("max-key-size-", 13));
}
END_TEST

START_TEST(test_check)
{
	struct rdzvd_config cfg;
	char err[256];

	ck_assert(parse(&cfg, "max-key-size = 1M\nmax-input = 64k\n", err,
	    sizeof err) == 0);
	ck_assert_int_eq(config_check(&cfg, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "max-input") != NULL, "%s", err);
	ck_assert(parse(&cfg, "port = 9000\nhttp-port = 9000\n", err,
	    sizeof err) == 0);
	ck_assert_int_eq(config_check(&cfg, err, sizeof err), -1);
}
END_TEST

/* Feed the parser every prefix of a valid text: never crashes, never reads
 * past len (valgrind/ASan would see it), and every prefix that ends at a
 * line boundary parses. */
START_TEST(test_prefixes)
{
	static const char text[] = "host = 10.0.0.1\nport = 29500\n"
	    "http-host = \"127.0.0.1\"\nlog-level = info\n";
	struct rdzvd_config cfg;
	char err[256], *copy;
	size_t n;

	for (n = 0; n <= sizeof text - 1; n++) {
		copy = malloc(n + 1);
		ck_assert_ptr_nonnull(copy);
		memcpy(copy, text, n);
		config_defaults(&cfg);
		if (config_parse(&cfg, copy, n, err, sizeof err) == -1)
			ck_assert_msg(n > 0 && text[n - 1] != '\n',
			    "prefix %zu failed: %s", n, err);
		free(copy);
	}
}
END_TEST

/* The shipped example documents every key, with its true default. */
START_TEST(test_example_matches_defaults)
{
	const char *top = getenv("CGRUN_TOP");
	char path[4096], line[CONFIG_LINE_MAX + 2], err[320];
	struct rdzvd_config cfg, def;
	size_t i, seen[64] = { 0 };
	FILE *fp;

	snprintf(path, sizeof path, "%s/rendezvous/rdzvd.conf.example",
	    top != NULL ? top : ".");
	fp = fopen(path, "r");
	ck_assert_msg(fp != NULL, "cannot open %s", path);
	ck_assert_msg(config_load(&cfg, path, 0, err, sizeof err) == 0, "%s",
	    err);
	config_defaults(&cfg);
	config_defaults(&def);
	/* "#key = value" lines are the defaults: uncommented, they change
	 * nothing. */
	while (fgets(line, sizeof line, fp) != NULL) {
		const struct config_opt *o;
		char *k = line + 1, *eq = strchr(line, '=');
		size_t klen;

		if (line[0] != '#' || line[1] == ' ' || line[1] == '#' ||
		    eq == NULL)
			continue;
		for (klen = (size_t)(eq - k); klen > 0 && k[klen - 1] == ' ';)
			klen--;
		o = config_find(k, klen);
		ck_assert_msg(o != NULL, "example: unknown key in %s", line);
		seen[o - config_opts] = 1;
		if (o->type == CONFIG_T_HOSTS)
			continue;	/* the default is "all addresses" */
		ck_assert_msg(config_parse(&cfg, k, strlen(k), err,
		    sizeof err) == 0, "example line %s: %s", line, err);
	}
	fclose(fp);
	for (i = 0; i < config_nopts; i++)
		ck_assert_msg(seen[i], "example lacks %s", config_opts[i].key);
	ck_assert_msg(limits_eq(&cfg.limits, &def.limits),
	    "example's limits differ from the defaults");
	ck_assert_msg(rdzv_limits_eq(&cfg.rdzv_limits, &def.rdzv_limits),
	    "example's job limits differ from the defaults");
	ck_assert_int_eq(cfg.port, def.port);
	ck_assert_int_eq(cfg.http_port, def.http_port);
	ck_assert_str_eq(cfg.http_host, def.http_host);
	ck_assert_int_eq(cfg.log_level, def.log_level);
	ck_assert_uint_eq(cfg.shutdown_timeout_ms, def.shutdown_timeout_ms);
}
END_TEST

START_TEST(test_load_missing)
{
	struct rdzvd_config cfg;
	char err[320];

	config_defaults(&cfg);
	ck_assert_int_eq(config_load(&cfg, "/nonexistent/rdzvd.conf", 1, err,
	    sizeof err), 0);
	ck_assert_int_eq(config_load(&cfg, "/nonexistent/rdzvd.conf", 0, err,
	    sizeof err), -1);
	ck_assert_msg(strstr(err, "No such file") != NULL, "%s", err);
}
END_TEST

/* The Check suite of config.c. */
Suite *
test_suite(void)
{
	Suite *s = suite_create("config");
	TCase *tc = tcase_create("parse");

	tcase_set_timeout(tc, 10);
	tcase_add_test(tc, test_defaults);
	tcase_add_test(tc, test_every_key);
	tcase_add_loop_test(tc, test_bad, 0, (int)(sizeof bad / sizeof bad[0]));
	tcase_add_test(tc, test_bounds);
	tcase_add_test(tc, test_flags_override_file);
	tcase_add_test(tc, test_check);
	tcase_add_test(tc, test_prefixes);
	tcase_add_test(tc, test_example_matches_defaults);
	tcase_add_test(tc, test_load_missing);
	suite_add_tcase(s, tc);
	return s;
}

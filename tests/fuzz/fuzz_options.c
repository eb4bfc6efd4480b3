/*
 * fuzz_options.c: libFuzzer target for cgrun's command line and the
 * option values parsed later: options_parse() (launcher/cli/options.c and
 * options_check.c), the site file and site defaults (launcher/cli/site.c),
 * --rdzv-conf and --rdzv-endpoint (launcher/backend/c10d_conf.c,
 * endpoint.c: c10d's HOST[:PORT] and the static backend's HOST:PORT).
 * Input: the site file's text, a NUL, then the arguments separated by
 * NULs.  An error always says why.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "c10d_conf.h"
#include "endpoint.h"
#include "options.h"
#include "site.h"

#define FO_ARGS		64

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Abort (a finding) unless cond holds. */
static void
fo_assert(int cond)
{
	if (!cond)
		abort();
}

/* Replace path's content with len bytes of p. */
static void
fo_write(const char *path, const char *p, size_t len)
{
	FILE *f;

	if ((f = fopen(path, "we")) == NULL)
		abort();
	if (len > 0 && fwrite(p, 1, len, f) != len)
		abort();
	fclose(f);
}

/* The values checked after the command line, as the agent parses them. */
static void
fo_values(const struct cgrun_options *o)
{
	struct c10d_conf cf;
	char err[512], host[256];
	int port;

	err[0] = '\0';
	if (c10d_conf_parse(o->rdzv_conf, &cf, err, sizeof(err)) == -1)
		fo_assert(err[0] != '\0');
	if (o->rdzv_endpoint != NULL &&
	    endpoint_parse(o->rdzv_endpoint, host, sizeof(host), &port,
	    29400) == 0)
		fo_assert(port >= 0 && port <= 65535 && strlen(host) < sizeof(host));
	err[0] = '\0';
	if (endpoint_parse_hostport(o->rdzv_endpoint, host, sizeof(host), &port,
	    err, sizeof(err)) == 0)
		fo_assert(port > 0 && port <= 65535 && strlen(host) < sizeof(host));
	else
		fo_assert(err[0] != '\0');
}

/* libFuzzer entry: one site file and command line. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char path[64], *copy;
	struct cgrun_options o;
	char *argv[FO_ARGS + 1], err[512], *p, *end;
	int argc = 0;
	enum options_result rc;

	if (path[0] == '\0') {
		snprintf(path, sizeof(path), "%s/cgrun-fuzz-site.%ld",
		    access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp",
		    (long)getpid());
		setenv("CGRUN_CONFIG", path, 1);
		unsetenv("SLURM_JOB_ID");
		unsetenv("SLURM_NNODES");
		unsetenv("SLURM_JOB_NODELIST");
		unsetenv("CGRUN_RDZV_ENDPOINT");
	}
	if ((copy = malloc(size + 1)) == NULL)
		abort();
	memcpy(copy, data, size);
	copy[size] = '\0';
	end = copy + size;
	p = copy + strlen(copy);
	fo_write(path, copy, (size_t)(p - copy));
	argv[argc++] = (char *)"cgrun";
	while (p < end && argc < FO_ARGS) {
		p++;
		argv[argc++] = p;
		p += strlen(p);
	}
	argv[argc] = NULL;
	err[0] = '\0';
	rc = options_parse(&o, argc, argv, err, sizeof(err));
	if (rc == OPTIONS_ERROR)
		fo_assert(err[0] != '\0');
	if (rc == OPTIONS_OK) {
		err[0] = '\0';
		if (site_apply(&o, err, sizeof(err)) == -1)
			fo_assert(err[0] != '\0');
		else
			fo_values(&o);
	}
	options_free(&o);
	free(copy);
	return 0;
}

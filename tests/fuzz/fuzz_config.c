/*
 * fuzz_config.c: libFuzzer target for cgrun-rdzvd's configuration file
 * parser (rendezvous/daemon/config.c): config_parse() on the bytes, then the
 * cross-key checks and the dump a parsed configuration goes through.
 * The parser's contract is checked too: an error always says why.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* libFuzzer entry: one configuration file. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct rdzvd_config cfg;
	static FILE *devnull;
	char err[512];

	if (devnull == NULL && (devnull = fopen("/dev/null", "we")) == NULL)
		abort();
	config_defaults(&cfg);
	err[0] = '\0';
	if (config_parse(&cfg, (const char *)data, size, err,
	    sizeof(err)) == -1) {
		if (err[0] == '\0' || memchr(err, '\0', sizeof(err)) == NULL)
			abort();
		return 0;
	}
	if (config_check(&cfg, err, sizeof(err)) == -1 && err[0] == '\0')
		abort();
	config_dump(&cfg, devnull);
	return 0;
}

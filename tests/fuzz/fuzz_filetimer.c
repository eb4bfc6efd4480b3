/*
 * fuzz_filetimer.c: libFuzzer target for torch's FileTimer request lines
 * (the FIFO any local process may write to, so untrusted) as the agent
 * parses them (launcher/hang/filetimer.c, filetimer_parse): the
 * whole input as one line, then every "\n"-separated piece of it, as the
 * FIFO reader splits them.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "filetimer.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Parse one line; check what an accepted request promises. */
static void
ff_line(const char *p, size_t n)
{
	struct filetimer_req r;
	char err[128];

	if (filetimer_parse(p, n, &r, err, sizeof(err)) != FILETIMER_OK)
		return;
	if (r.pid <= 0 || strlen(r.scope) > FILETIMER_SCOPE_MAX ||
	    r.version != 1 || n > FILETIMER_LINE_MAX)
		abort();
}

/* libFuzzer entry. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *nl;
	size_t n = size;

	ff_line(p, n);
	while (n > 0 && (nl = memchr(p, '\n', n)) != NULL) {
		ff_line(p, (size_t)(nl - p));
		n -= (size_t)(nl - p) + 1;
		p = nl + 1;
	}
	return 0;
}

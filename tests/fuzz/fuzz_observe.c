/*
 * fuzz_observe.c: libFuzzer target for the pure parsers and the escaper of
 * launcher/observe/: --event-log's destination (evlog_dest_parse),
 * --metrics-port's [HOST:]PORT (observe_listen_parse) and a metric label
 * value (metrics_label, fed run ids and host names).  Input: one byte of
 * output room for the label (1 to 256), then the string (cut at its first
 * NUL).  Checked: fd:N gives 0..65535 and only for "fd:" and digits; a
 * parsed port is 0..65535 with a non-empty host that fits; the label ends
 * within its room, has no raw newline, and every '"' and '\' in it is
 * escaped.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "evlog.h"
#include "metrics.h"
#include "observe.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Whether a parsed label value is escaped as the text format wants. */
static int
label_ok(const char *s, size_t room)
{
	size_t i, n = strlen(s);

	if (n >= room)
		return 0;
	for (i = 0; i < n; i++) {
		if (s[i] == '\n')
			return 0;
		if (s[i] == '"')
			return 0;	/* a bare quote: never after the escapes */
		if (s[i] == '\\') {
			if (s[i + 1] != '\\' && s[i + 1] != '"' && s[i + 1] != 'n')
				return 0;
			i++;
		}
	}
	return 1;
}

/* One input: the three functions on the same string. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char s[1024], out[256], host[64];
	size_t room, n;
	int fd = -1, port = -1, kind;

	if (size < 1)
		return 0;
	room = (size_t)data[0] % sizeof(out) + 1;
	n = size - 1 < sizeof(s) - 1 ? size - 1 : sizeof(s) - 1;
	memcpy(s, data + 1, n);
	s[n] = '\0';

	kind = evlog_dest_parse(s, &fd);
	if (kind == 1 && (fd < 0 || fd > 65535 || strncmp(s, "fd:", 3) != 0 ||
	    strspn(s + 3, "0123456789") != strlen(s + 3)))
		abort();
	if (kind == 0 && strncmp(s, "fd:", 3) == 0)
		abort();
	if (observe_listen_parse(s, host, sizeof(host), &port) == 0 &&
	    (port < 0 || port > 65535 || host[0] == '\0' ||
	    strlen(host) >= sizeof(host)))
		abort();
	if (!label_ok(metrics_label(s, out, room), room))
		abort();
	return 0;
}

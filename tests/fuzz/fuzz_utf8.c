/*
 * fuzz_utf8.c: libFuzzer target for rendezvous/common/utf8.c, which makes
 * client-chosen strings (run ids, host names) valid UTF-8 before they go
 * into cgrun-rdzvd's /status JSON.  Input: one byte of output room (1 to
 * 256), then the string (cut at its first NUL).  Checked: the output is
 * NUL-terminated within the room, is valid UTF-8 by an independent
 * decoder, and is the input unchanged when the input was valid and fits.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Independent check: is s (n bytes) valid UTF-8 (RFC 3629)? */
static int
valid(const unsigned char *s, size_t n)
{
	size_t i = 0, k, len;
	uint32_t cp;

	while (i < n) {
		if (s[i] < 0x80) {
			i++;
			continue;
		}
		if ((s[i] & 0xE0) == 0xC0)
			len = 2, cp = s[i] & 0x1F;
		else if ((s[i] & 0xF0) == 0xE0)
			len = 3, cp = s[i] & 0x0F;
		else if ((s[i] & 0xF8) == 0xF0)
			len = 4, cp = s[i] & 0x07;
		else
			return 0;
		if (i + len > n)
			return 0;
		for (k = 1; k < len; k++) {
			if ((s[i + k] & 0xC0) != 0x80)
				return 0;
			cp = cp << 6 | (s[i + k] & 0x3F);
		}
		if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) ||
		    (len == 4 && cp < 0x10000) || cp > 0x10FFFF ||
		    (cp >= 0xD800 && cp <= 0xDFFF))
			return 0;
		i += len;
	}
	return 1;
}

/* libFuzzer entry. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *in, *out;
	size_t room, inlen, outlen;

	if (size < 1)
		return 0;
	room = (size_t)data[0] + 1;
	if ((in = malloc(size)) == NULL || (out = malloc(room)) == NULL)
		abort();
	memcpy(in, data + 1, size - 1);
	in[size - 1] = '\0';
	inlen = strlen(in);
	if (utf8_valid(in, out, room) != out)
		abort();
	outlen = strnlen(out, room);
	if (outlen == room || !valid((unsigned char *)out, outlen))
		abort();
	if (valid((unsigned char *)in, inlen) && inlen < room &&
	    strcmp(in, out) != 0)
		abort();
	free(in);
	free(out);
	return 0;
}

/*
 * utf8.c: replace invalid UTF-8 (utf8.h).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "utf8.h"

/*
 * Length of the valid UTF-8 sequence at p (1 to 4), or 0 when the bytes
 * there do not form one (RFC 3629's table: no overlong forms, no
 * surrogates, nothing above U+10FFFF).
 */
static size_t
utf8_seq(const unsigned char *p)
{
	unsigned char c = p[0], lo = 0x80, hi = 0xBF;
	size_t n, i;

	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		n = 2;
	else if (c >= 0xE0 && c <= 0xEF)
		n = 3;
	else if (c >= 0xF0 && c <= 0xF4)
		n = 4;
	else
		return 0;
	if (c == 0xE0)
		lo = 0xA0;
	else if (c == 0xED)
		hi = 0x9F;
	else if (c == 0xF0)
		lo = 0x90;
	else if (c == 0xF4)
		hi = 0x8F;
	if (p[1] < lo || p[1] > hi)	/* also stops at the NUL */
		return 0;
	for (i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xBF)
			return 0;
	return n;
}

/* Copy s into out with every invalid byte replaced by U+FFFD. */
const char *
utf8_valid(const char *s, char *out, size_t outlen)
{
	static const char repl[] = "\xEF\xBF\xBD";
	const unsigned char *p = (const unsigned char *)s;
	size_t o = 0, n;

	while (*p != '\0') {
		n = utf8_seq(p);
		if (o + (n != 0 ? n : 3) >= outlen)
			break;
		if (n == 0) {
			memcpy(out + o, repl, 3);
			o += 3;
			p++;
			continue;
		}
		memcpy(out + o, p, n);
		o += n;
		p += n;
	}
	out[o] = '\0';
	return out;
}

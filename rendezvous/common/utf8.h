/*
 * utf8.h: make peer-given bytes valid UTF-8 before they go into JSON
 * (/status): json-c copies a string's bytes as they are, so a run id or a
 * host name with invalid sequences would make the whole document invalid.
 */
#ifndef CGRUN_UTF8_H
#define CGRUN_UTF8_H

#include <stddef.h>

/* Bytes utf8_valid() needs for an input of len bytes, NUL included. */
#define UTF8_VALID_SIZE(len)	(3 * (len) + 1)

/*
 * Copy the NUL-terminated s into out (outlen bytes), every byte that does
 * not start or continue a valid UTF-8 sequence (overlong forms,
 * surrogates, beyond U+10FFFF and truncated sequences included) replaced
 * by U+FFFD.  Pure and bounded: stops at outlen - 1 bytes, always
 * NUL-terminates (outlen >= 1), never splits a sequence.  Returns out.
 */
const char *utf8_valid(const char *s, char *out, size_t outlen);

#endif /* CGRUN_UTF8_H */

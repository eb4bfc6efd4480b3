/*
 * template.c: string.Template-style substitution ($name, ${name}, $$).
 */
#include <ctype.h>
#include <string.h>

#include "template.h"

/* Length of the identifier at s ([A-Za-z_][A-Za-z0-9_]*), 0 if none. */
static size_t
template_ident(const char *s)
{
	size_t n = 0;

	if (!isalpha((unsigned char)s[0]) && s[0] != '_')
		return 0;
	while (isalnum((unsigned char)s[n]) || s[n] == '_')
		n++;
	return n;
}

/* The value of variable name[0..n), or NULL when unknown. */
static const char *
template_lookup(const struct template_var *vars, size_t nvars,
    const char *name, size_t n)
{
	size_t i;

	for (i = 0; i < nvars; i++)
		if (strlen(vars[i].name) == n &&
		    memcmp(vars[i].name, name, n) == 0)
			return vars[i].value;
	return NULL;
}

/* Append n bytes of s to out at *pos; 0, or -1 when it does not fit. */
static int
template_put(char *out, size_t outlen, size_t *pos, const char *s, size_t n)
{
	if (*pos + n >= outlen) {
		n = outlen - 1 - *pos;
		memcpy(out + *pos, s, n);
		*pos += n;
		return -1;
	}
	memcpy(out + *pos, s, n);
	*pos += n;
	return 0;
}

/*
 * Contract: out is always NUL-terminated (outlen > 0); unknown or malformed
 * placeholders are copied unchanged, like Python's safe_substitute.
 */
int
template_expand(const char *tmpl, const struct template_var *vars,
    size_t nvars, char *out, size_t outlen)
{
	const char *p = tmpl, *val, *name;
	size_t pos = 0, n, skip;
	int rc = 0;

	while (*p != '\0' && rc == 0) {
		if (*p != '$') {
			rc = template_put(out, outlen, &pos, p++, 1);
			continue;
		}
		if (p[1] == '$') {
			rc = template_put(out, outlen, &pos, "$", 1);
			p += 2;
			continue;
		}
		if (p[1] == '{') {
			name = p + 2;
			n = template_ident(name);
			skip = (n > 0 && name[n] == '}') ? n + 3 : 0;
		} else {
			name = p + 1;
			n = template_ident(name);
			skip = n > 0 ? n + 1 : 0;
		}
		if (skip == 0 || (val = template_lookup(vars, nvars, name,
		    n)) == NULL) {
			rc = template_put(out, outlen, &pos, p++, 1);
			continue;
		}
		rc = template_put(out, outlen, &pos, val, strlen(val));
		p += skip;
	}
	out[pos] = '\0';
	return rc == 0 ? (int)pos : -1;
}

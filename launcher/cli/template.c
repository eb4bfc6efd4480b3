/*
 * template.c: string.Template-style substitution ($name, ${name}, $$).
 */
#include <ctype.h>
#include <stdio.h>
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
 * The placeholder at p (a '$'): "$name" or "${name}", its name at *name,
 * the length of the name returned and of the whole in *skip; "$$" is
 * 0 with *skip 2; anything else (a '$' that is text) 0 with *skip 0.
 */
static size_t
template_at(const char *p, const char **name, size_t *skip)
{
	size_t n;

	*skip = 0;
	if (p[1] == '$') {
		*skip = 2;
		return 0;
	}
	if (p[1] == '{') {
		*name = p + 2;
		n = template_ident(*name);
		if (n == 0 || (*name)[n] != '}')
			return 0;
		*skip = n + 3;
		return n;
	}
	*name = p + 1;
	if ((n = template_ident(*name)) > 0)
		*skip = n + 1;
	return n;
}

/*
 * Contract: out is always NUL-terminated (outlen > 0); unknown or malformed
 * placeholders are copied unchanged, like Python's safe_substitute.
 */
int
template_expand(const char *tmpl, const struct template_var *vars,
    size_t nvars, char *out, size_t outlen)
{
	const char *p = tmpl, *val, *name = NULL;
	size_t pos = 0, n, skip;
	int rc = 0;

	while (*p != '\0' && rc == 0) {
		if (*p != '$') {
			rc = template_put(out, outlen, &pos, p++, 1);
			continue;
		}
		n = template_at(p, &name, &skip);
		if (skip == 2 && n == 0) {	/* "$$" */
			rc = template_put(out, outlen, &pos, "$", 1);
			p += 2;
			continue;
		}
		if (n == 0 || (val = template_lookup(vars, nvars, name,
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

/* The first placeholder naming no variable (see template.h).  Pure. */
int
template_unknown(const char *tmpl, const struct template_var *vars,
    size_t nvars, char *name, size_t namelen)
{
	const char *p = tmpl, *at = NULL;
	size_t n, skip;

	while ((p = strchr(p, '$')) != NULL) {
		n = template_at(p, &at, &skip);
		if (n > 0 && template_lookup(vars, nvars, at, n) == NULL) {
			snprintf(name, namelen, "%.*s", (int)n, at);
			return 1;
		}
		p += skip > 0 ? skip : 1;
	}
	return 0;
}

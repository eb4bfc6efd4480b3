/*
 * template.h: Python string.Template.safe_substitute for cgrun's templates
 * (the ${local_rank} macro in worker arguments, the console line prefix):
 * "$name" and "${name}" are replaced when name is known, "$$" becomes "$",
 * anything else is kept as written.
 */
#ifndef CGRUN_TEMPLATE_H
#define CGRUN_TEMPLATE_H

#include <stddef.h>

struct template_var {
	const char	*name;
	const char	*value;
};

/*
 * Expand tmpl into out (at most outlen - 1 bytes and a NUL).  Returns the
 * length written, or -1 when the result did not fit (out is then cut).
 */
int	template_expand(const char *tmpl, const struct template_var *vars,
	    size_t nvars, char *out, size_t outlen);

/*
 * Whether tmpl has a placeholder ("$name", "${name}") that names none of
 * vars (their values unused): 1 with the first such name in name (cut to
 * namelen), else 0.  "$$" and a '$' starting no name are text.  Pure.
 */
int	template_unknown(const char *tmpl, const struct template_var *vars,
	    size_t nvars, char *name, size_t namelen);

#endif

/*
 * shebang.c: the "#!" line of a worker script, read as the kernel (and
 * env -S) split it: interpreter path, then words separated by blanks.
 */
#include <string.h>

#include "shebang.h"

#define SHEBANG_WORDS_MAX	8	/* words of a #! line looked at */

struct shebang_word {
	const char	*p;
	size_t		 len;
};

/* Split the #! line buf[2..len) at blanks into at most max words. */
static int
shebang_split(const char *buf, size_t len, struct shebang_word *w, int max)
{
	size_t i = 2, start;
	int n = 0;

	while (i < len && buf[i] != '\n' && n < max) {
		while (i < len && (buf[i] == ' ' || buf[i] == '\t'))
			i++;
		start = i;
		while (i < len && buf[i] != ' ' && buf[i] != '\t' &&
		    buf[i] != '\n' && buf[i] != '\r')
			i++;
		if (i > start) {
			w[n].p = buf + start;
			w[n].len = i - start;
			n++;
		}
		if (i < len && buf[i] == '\r')
			break;
	}
	return n;
}

/* The last path component of a word. */
static struct shebang_word
shebang_base(struct shebang_word w)
{
	const char *s = memrchr(w.p, '/', w.len);

	if (s != NULL) {
		w.len -= (size_t)(s + 1 - w.p);
		w.p = s + 1;
	}
	return w;
}

/* Whether word (a base name) is "python" followed by digits and dots. */
static int
shebang_is_python(struct shebang_word w)
{
	size_t i;

	if (w.len < 6 || memcmp(w.p, "python", 6) != 0)
		return 0;
	for (i = 6; i < w.len; i++)
		if ((w.p[i] < '0' || w.p[i] > '9') && w.p[i] != '.')
			return 0;
	return 1;
}

/* After "env": the index of the program word, skipping options and
 * NAME=VALUE settings (-u and -C take an argument); -1 if none. */
static int
shebang_env_program(const struct shebang_word *w, int n)
{
	int i;

	for (i = 1; i < n; i++) {
		if (w[i].len == 2 && w[i].p[0] == '-' &&
		    (w[i].p[1] == 'u' || w[i].p[1] == 'C')) {
			i++;
			continue;
		}
		if (w[i].p[0] == '-' || memchr(w[i].p, '=', w[i].len) != NULL)
			continue;
		return i;
	}
	return -1;
}

/* Whether the #! line in buf names python (shebang.h). */
int
shebang_names_python(const char *buf, size_t len)
{
	struct shebang_word w[SHEBANG_WORDS_MAX], b;
	int n, i;

	if (len > SHEBANG_LINE_MAX)
		len = SHEBANG_LINE_MAX;
	if (len < 2 || buf[0] != '#' || buf[1] != '!')
		return 0;
	if (memchr(buf, '\n', len) == NULL && len == SHEBANG_LINE_MAX)
		return 0;
	if ((n = shebang_split(buf, len, w, SHEBANG_WORDS_MAX)) == 0)
		return 0;
	b = shebang_base(w[0]);
	if (b.len == 3 && memcmp(b.p, "env", 3) == 0) {
		if ((i = shebang_env_program(w, n)) == -1)
			return 0;
		b = shebang_base(w[i]);
	}
	return shebang_is_python(b);
}

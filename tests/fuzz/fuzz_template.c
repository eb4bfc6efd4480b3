/*
 * fuzz_template.c: libFuzzer target for launcher/cli/template.c, the
 * string.Template expansion of the user's text: worker arguments
 * (${local_rank}) and the console line prefix
 * (TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE or the option: $rank,
 * $local_rank, $role_name, $group_rank).  Input: one byte for the
 * output room (1..256 bytes), then the template.
 *
 * Checked beyond crashes and UB: with room enough the result is its
 * length and NUL-terminated; with less room the result is -1 exactly when
 * the full expansion does not fit, and what was written is its prefix;
 * text without '$' comes out unchanged; expansion never adds a '$'
 * (values hold at most as many as the placeholders they replace).
 * template_unknown: a name it reports is an identifier, none of the
 * variables' (unless cut to its room), found after a '$' of the template;
 * text without '$' has none.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "template.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Variables like the agent's, one empty and one holding a '$'. */
static const struct template_var ft_vars[] = {
	{ "local_rank", "3" }, { "rank", "12" }, { "role_name", "trainer" },
	{ "group_rank", "1" }, { "empty", "" }, { "d", "$d" },
};
#define FT_NVARS	(sizeof(ft_vars) / sizeof(ft_vars[0]))

/* Abort (a finding) unless cond holds. */
static void
ft_assert(int cond)
{
	if (!cond)
		abort();
}

/* Count of c in s. */
static size_t
ft_count(const char *s, char c)
{
	size_t n = 0;

	for (; *s != '\0'; s++)
		n += *s == c;
	return n;
}

/* What template_unknown says of tmpl holds (see above). */
static void
ft_unknown(const char *tmpl)
{
	static const char ident[] = "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789";
	char name[16], dollar[20], brace[20];
	size_t i, n;

	if (!template_unknown(tmpl, ft_vars, FT_NVARS, name, sizeof(name)))
		return;
	n = strlen(name);
	ft_assert(strchr(tmpl, '$') != NULL && n > 0 &&
	    strspn(name, ident) == n && (name[0] < '0' || name[0] > '9'));
	for (i = 0; i < FT_NVARS && n < sizeof(name) - 1; i++)
		ft_assert(strcmp(name, ft_vars[i].name) != 0);
	snprintf(dollar, sizeof(dollar), "$%s", name);
	snprintf(brace, sizeof(brace), "${%s", name);
	ft_assert(strstr(tmpl, dollar) != NULL || strstr(tmpl, brace) != NULL);
}

/* libFuzzer entry: one template and one output size. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *tmpl, *full, *cut;
	size_t room, fullroom;
	int n, m;

	if (size < 1)
		return 0;
	room = 1 + data[0];
	if ((tmpl = malloc(size)) == NULL)
		abort();
	memcpy(tmpl, data + 1, size - 1);
	tmpl[size - 1] = '\0';
	/* every value is shorter than its "$name" but "$d" -> "$d" */
	fullroom = strlen(tmpl) + 1;
	if ((full = malloc(fullroom)) == NULL || (cut = malloc(room)) == NULL)
		abort();
	n = template_expand(tmpl, ft_vars, FT_NVARS, full, fullroom);
	ft_assert(n >= 0 && (size_t)n == strlen(full));
	if (strchr(tmpl, '$') == NULL)
		ft_assert(strcmp(full, tmpl) == 0);
	ft_assert(ft_count(full, '$') <= ft_count(tmpl, '$'));
	m = template_expand(tmpl, ft_vars, FT_NVARS, cut, room);
	ft_assert(strlen(cut) < room);
	if ((size_t)n < room)
		ft_assert(m == n && strcmp(cut, full) == 0);
	else
		ft_assert(m == -1 && strlen(cut) == room - 1 &&
		    memcmp(cut, full, room - 1) == 0);
	ft_unknown(tmpl);
	free(tmpl);
	free(full);
	free(cut);
	return 0;
}

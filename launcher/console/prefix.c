/*
 * prefix.c: the console line prefix of a worker stream (prefix.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"
#include "prefix.h"
#include "template.h"

#define PREFIX_TORCHRUN_TAG	"[${role_name}${local_rank}]:"
#define PREFIX_RANK_TAG		"[rank${rank}]:"

/* Expand tmpl with the worker's ids into buf. */
static void
prefix_expand(const struct cgrun_options *o, const struct prefix_ids *id,
    const char *tmpl, char *buf, size_t len)
{
	char rank[16], lr[16], gr[16];
	struct template_var v[4];

	snprintf(rank, sizeof(rank), "%d", id->rank);
	snprintf(lr, sizeof(lr), "%d", id->local_rank);
	snprintf(gr, sizeof(gr), "%d", id->group_rank);
	v[0].name = "rank", v[0].value = rank;
	v[1].name = "local_rank", v[1].value = lr;
	v[2].name = "role_name", v[2].value = o->role ? o->role : "default";
	v[3].name = "group_rank", v[3].value = gr;
	template_expand(tmpl, v, 4, buf, len);
}

/* The console and filter-file prefixes of one stream (prefix.h). */
void
prefix_for(const struct cgrun_options *o, const struct prefix_ids *id,
    int teed, char *console, size_t clen, char *filter, size_t flen)
{
	const char *mode = o->log_prefix, *tag;

	if ((tag = getenv("TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE")) == NULL)
		tag = PREFIX_TORCHRUN_TAG;
	if (mode != NULL && strcmp(mode, "torchrun") == 0)
		mode = NULL;
	else if (mode != NULL && strcmp(mode, "rank") == 0)
		mode = PREFIX_RANK_TAG;
	else if (mode != NULL && strcmp(mode, "none") == 0)
		mode = "";
	prefix_expand(o, id, mode != NULL && *mode != '\0' ? mode : tag,
	    filter, flen);
	if (mode == NULL && !teed)
		mode = "";
	prefix_expand(o, id, mode != NULL ? mode : tag, console, clen);
}

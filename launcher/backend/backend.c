/*
 * backend.c: the registry of rendezvous backends (name -> constructor)
 * and the rule that picks one from the options (backend.h).
 */
#include <stdio.h>
#include <string.h>

#include "backend.h"
#include "errbuf.h"
#include "options.h"

/*
 * Rendezvous backends by name; "standalone" is only ever picked (one
 * node), never a --rdzv-backend value.
 */
static const struct {
	const char	*name;
	backend_new_fn	 fn;
	int		 option;	/* a --rdzv-backend value */
} backend_table[] = {
	{ "standalone", local_new_standalone, 0 },	/* local.c */
	{ "static", local_new_static, 1 },		/* local.c */
	{ "c10d", c10d_new, 1 },			/* c10d.c */
	{ "etcd-v3", etcd_new, 1 },			/* etcd/etcd.c */
	{ "etcd", etcd_new, 1 },		/* the same: v3 API */
	{ "etcd-v2", etcd_new, 1 },		/* the same: v3 API */
};
#define NBACKENDS (sizeof(backend_table) / sizeof(backend_table[0]))

/* The i-th name --rdzv-backend accepts, in the table's order; NULL after. */
const char *
backend_name(size_t i)
{
	size_t k;

	for (k = 0; k < NBACKENDS; k++)
		if (backend_table[k].option && i-- == 0)
			return backend_table[k].name;
	return NULL;
}

/*
 * The backend the options ask for:
 *   --standalone, or one node (--nnodes N with N = 1) with no
 *   --rdzv-endpoint                                  -> "standalone"
 *   --standalone with --nnodes MAX > 1               -> "c10d" (as
 *                                                       torchrun)
 *   otherwise --rdzv-backend (default "static")      -> that backend
 * (site.c may have set --rdzv-endpoint and --rdzv-backend before.)
 */
const char *
backend_pick(const struct cgrun_options *o)
{
	if (!options_multinode(o))
		return "standalone";
	if (o->standalone)
		return "c10d";
	return o->rdzv_backend ? o->rdzv_backend : "static";
}

/* Create the backend the options ask for; NULL with err. */
struct backend *
backend_new(struct event_base *base, const struct backend_config *cfg,
    const struct backend_cb *cb, char *err, size_t errlen)
{
	const char *name = backend_pick(cfg->opts);
	size_t i;

	for (i = 0; i < NBACKENDS; i++)
		if (strcmp(backend_table[i].name, name) == 0)
			return backend_table[i].fn(base, cfg, cb, err, errlen);
	errbuf_set(err, errlen, "--rdzv-backend: \"%s\" is not available "
	    "(cgrun has c10d, static and etcd-v3)", name);
	return NULL;
}

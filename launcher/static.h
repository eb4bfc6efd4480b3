/*
 * static.h: the static rendezvous backend (static.c): --node-rank,
 * --nnodes, --master-addr, --master-port; node 0 hosts the store.
 */
#ifndef CGRUN_STATIC_H
#define CGRUN_STATIC_H

#include <stddef.h>

struct event_base;
struct agent_config;
struct backend_cb;

struct backend *static_new(struct event_base *, const struct agent_config *,
	    const struct backend_cb *, char *err, size_t errlen);

#endif /* CGRUN_STATIC_H */

/*
 * discovery.h: the topology and GPU list found once per agent and handed
 * from --nproc-per-node's resolution to the plan (discovery.c).
 */
#ifndef CGRUN_DISCOVERY_H
#define CGRUN_DISCOVERY_H

#include <stddef.h>

#include <hwloc.h>

struct gpu_list;

/*
 * The topology and the GPUs workers will see: the kept ones when the
 * variables that shape them (HWLOC_XMLFILE, CGRUN_NVML_LIBRARY,
 * CUDA_VISIBLE_DEVICES, ...) are unchanged, else discovered now with
 * gpu_discover's flags (GPU_NO_NVML).  The caller owns both.  0, or -1
 * with err set.
 */
int	discovery_take(hwloc_topology_t *, struct gpu_list **, int flags,
	    char *err, size_t errlen);
/* Keep a discovery for the next discovery_take; ownership passes. */
void	discovery_keep(hwloc_topology_t, struct gpu_list *);

#endif /* CGRUN_DISCOVERY_H */

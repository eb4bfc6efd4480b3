/*
 * topology.h: load the hardware topology for placement (topology.c).
 */
#ifndef CGRUN_TOPOLOGY_H
#define CGRUN_TOPOLOGY_H

#include <stddef.h>

#include <hwloc.h>

/*
 * The machine's topology, or the one HWLOC_XMLFILE names (tests), with
 * PCI devices kept only when the topology is not the live machine's (on
 * the machine itself sysfs gives GPUs and their locality: gpu.c).  NULL
 * with err set when it cannot be loaded.
 */
hwloc_topology_t topology_load(char *err, size_t errlen);

#endif /* CGRUN_TOPOLOGY_H */

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
 * the machine itself sysfs gives GPUs and their locality: gpu_scan.c).
 * NULL with err set when it cannot be loaded.
 */
hwloc_topology_t topology_load(char *err, size_t errlen);

/* Whether the topology holds PCI devices (a capture, not the live one). */
int	topology_has_io(hwloc_topology_t);

/* A kernel cpu list file (local_cpulist, cpu/online) into set; 0 or -1. */
int	topology_cpulist_read(const char *path, hwloc_bitmap_t set);

#endif /* CGRUN_TOPOLOGY_H */

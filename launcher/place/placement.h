/*
 * placement.h: where each local rank runs; what the rest of the launcher
 * includes from launcher/place/.  The room: topology.c loads the hardware
 * topology; gpu_scan.c finds the GPUs (sysfs or hwloc's PCI devices,
 * NVML through nvml_dl.c where only it can answer) and gpu_visible.c
 * numbers them as CUDA does (CUDA_DEVICE_ORDER, CUDA_VISIBLE_DEVICES);
 * discovery.c keeps both from --nproc-per-node to the plan; placement.c
 * resolves --nproc-per-node; plan.c (plan.h) builds the per-rank plan: the
 * rank's GPU and PCI bus id, its cpuset (plan_cpus.c), its NUMA node(s),
 * what each rank learns of it (plan_rank_env: the data worker_env.c names
 * as CGRUN_* variables); plan_apply.c binds the child before exec;
 * plan_print.c shows the plan.
 *
 * Use from the launcher:
 *
 *   n = placement_nproc("gpu", err, sizeof(err));   // --nproc-per-node
 *   p = plan_new(n, &opts, err, sizeof(err));        // NULL: err says why
 *   if (dry_run) { plan_print(p, stdout, json); exit(0); }
 *   plan_log(p);                                     // -v start-up log
 *   for each local rank r:
 *     plan_rank_env(p, r, &e);      // parent: data for r's environment
 *     fork(); in the child: plan_apply_child(p, r); exec
 *   plan_free(p);
 *
 * The topology is the real machine, or the hwloc XML file named by
 * HWLOC_XMLFILE (tests); the NVML library is libnvidia-ml.so.1, or
 * CGRUN_NVML_LIBRARY (tests: a fake), or none with CGRUN_NVML_LIBRARY=none.
 * Cost: the topology is loaded once per agent (never per restart), without
 * hwloc's GL/OpenCL/libxml2 plugins, and with PCI devices only when the
 * topology is not the live machine's (HWLOC_XMLFILE and friends): on the
 * machine itself GPUs and the CPUs near them come from sysfs.  NVML is
 * loaded only when the plan needs something only NVML knows (gpu.h,
 * gpu_discover): never for an empty CUDA_VISIBLE_DEVICES; for UUIDs only
 * when the driver's /proc/driver/nvidia/gpus does not give them.
 */
#ifndef CGRUN_PLACEMENT_H
#define CGRUN_PLACEMENT_H

#include <stddef.h>

#include "plan.h"

/*
 * Number of GPUs the workers will see (CUDA_VISIBLE_DEVICES applied): 0
 * when none, -1 with err set on error (e.g. a malformed
 * CUDA_VISIBLE_DEVICES).
 */
int	placement_gpu_count(char *err, size_t errlen);

/*
 * Resolve --nproc-per-node: a positive number, "gpu" (GPU count; -1 with
 * "no GPU found ..." in err when there is none), "cpu" (online CPUs),
 * "auto" (GPUs if any, else CPUs).  -1 with err set on a bad value.
 */
int	placement_nproc(const char *spec, char *err, size_t errlen);

#endif /* CGRUN_PLACEMENT_H */

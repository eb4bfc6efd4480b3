/*
 * placement.h: where each local rank runs.  GPU discovery (gpu.c: NVML
 * loaded with dlopen, else hwloc's PCI devices; CUDA_VISIBLE_DEVICES and
 * CUDA_DEVICE_ORDER honoured) and the per-rank plan (placement.c): the
 * rank's GPU and PCI bus id, its cpuset (local to the GPU, split without
 * overlap among ranks that share it), its NUMA node(s); the binding done in
 * the child before exec; the CGRUN_* variables workers get.
 *
 * Use from the launcher:
 *
 *   n = placement_nproc("gpu", err, sizeof(err));   // --nproc-per-node
 *   p = plan_new(n, &opts, err, sizeof(err));        // NULL: err says why
 *   if (dry_run) { plan_print(p, stdout, json); exit(0); }
 *   plan_log(p);                                     // -v start-up log
 *   for each local rank r:
 *     plan_env(p, r, cb, arg);      // parent, when building r's environment
 *     fork(); in the child: plan_apply_child(p, r); exec
 *   plan_free(p);
 *
 * The topology is the real machine, or the hwloc XML file named by
 * HWLOC_XMLFILE (tests); the NVML library is libnvidia-ml.so.1, or
 * CGRUN_NVML_LIBRARY (tests: a fake), or none with CGRUN_NVML_LIBRARY=none.
 * Cost: the topology is loaded once per agent (never per restart), without
 * hwloc's GL/OpenCL/libxml2 plugins, and with PCI devices only when sysfs
 * shows an NVIDIA GPU or the topology is not the live machine's
 * (HWLOC_XMLFILE and friends); without such a GPU NVML is not tried unless
 * CGRUN_NVML_LIBRARY names a library.
 */
#ifndef CGRUN_PLACEMENT_H
#define CGRUN_PLACEMENT_H

#include <stddef.h>
#include <stdio.h>

struct plan;

struct plan_opts {
	/*
	 * "none", "gpu", "numa", "cores", or NULL for the default: "gpu" when
	 * every rank has a GPU, else "none".  See docs/placement.md.
	 */
	const char	*cpu_bind;
	/*
	 * torchrun's --numa-binding: "node", "socket", "exclusive",
	 * "core-complex", or NULL.  Overrides cpu_bind when set.
	 */
	const char	*numa_binding;
	/* "all" (NULL: default, CUDA_VISIBLE_DEVICES untouched) or "own". */
	const char	*gpu_visibility;
	/*
	 * Memory policy of bound ranks, toward the NUMA node(s) of the rank's
	 * cpuset: "preferred" (NULL: default; spills to other nodes when
	 * full), "bind" (strict: allocations fail rather than spill), "none".
	 */
	const char	*mem_bind;
};

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

/* Validate the option values alone (for early usage errors): 0 or -1+err. */
int	plan_opts_check(const struct plan_opts *, char *err, size_t errlen);

/* Plan nproc local ranks; NULL with err set (bad options, no topology). */
struct plan *plan_new(int nproc, const struct plan_opts *, char *err,
	    size_t errlen);
void	plan_free(struct plan *);

/*
 * In the child after fork, before exec: bind CPU and memory as planned.
 * 0, or -1 with errno (the caller decides whether that is fatal; a plan
 * with cpu-bind none does nothing).  May allocate: the parent is
 * single-threaded when it forks.
 */
int	plan_apply_child(const struct plan *, int local_rank);

/*
 * Call setenv_cb(arg, name, value) for each variable rank local_rank gets:
 * CGRUN_CPU_BIND, CGRUN_MEM_BIND, and when known CGRUN_GPU,
 * CGRUN_GPU_BUS_ID, CGRUN_GPU_UUID, CGRUN_LOCAL_DEVICE, CGRUN_NUMA_NODE,
 * CGRUN_CPUSET; CUDA_VISIBLE_DEVICES with gpu-visibility "own".
 * Stops at and returns the first nonzero callback result; else 0.
 */
int	plan_env(const struct plan *, int local_rank,
	    int (*setenv_cb)(void *arg, const char *name, const char *value),
	    void *arg);

/* One line per local rank (json=0) or one JSON document (json=1). */
void	plan_print(const struct plan *, FILE *, int json);
/* The same lines through log_info (the -v start-up log). */
void	plan_log(const struct plan *);

/* Number of ranks planned, and whether rank r has a GPU (-1: none). */
int	plan_nproc(const struct plan *);
int	plan_gpu(const struct plan *, int local_rank);
/*
 * How rank r's GPU is named in CUDA_VISIBLE_DEVICES for a worker that
 * should see only it (--virtual-local-rank, gpu-visibility own): the
 * agent's own CUDA_VISIBLE_DEVICES entry when set (index, GPU- or MIG-
 * UUID), else its UUID (NVML), else its CUDA ordinal.  NULL: no GPU.
 */
const char *plan_gpu_token(const struct plan *, int local_rank);

#endif

/*
 * plan.h: the per-rank placement plan (plan.c): each local rank's GPU and
 * PCI bus id, its cpuset (local to the GPU, split without overlap among
 * ranks that share it; plan_cpus.c), its NUMA node(s); the binding done
 * in the child before exec (plan_apply.c); what a rank learns of it (the
 * data worker_env.c writes as CGRUN_* variables); the plan shown by
 * --dry-run and -v (plan_print.c).  Usage: see placement.h.
 */
#ifndef CGRUN_PLAN_H
#define CGRUN_PLAN_H

#include <stddef.h>
#include <stdio.h>

#define PLAN_NPROC_MAX	4096	/* local ranks per node */

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
	/*
	 * The cpus ranks may be bound to, as a cpu list ("0-3,8"), or NULL:
	 * on the live machine the cpus cgrun itself may run on (its inherited
	 * affinity within its cgroup cpuset), else all.  See plan_allowed.c.
	 */
	const char	*allowed_cpus;
};

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

/* Bytes of a cpu or NUMA node list as text ("0-5,48-53"). */
#define PLAN_LIST_MAX	4096

/*
 * What a rank learns of its placement, as data: worker_env.c names the
 * variables (CGRUN_CPU_BIND, CGRUN_MEM_BIND, CGRUN_GPU, CGRUN_GPU_BUS_ID,
 * CGRUN_GPU_UUID, CGRUN_LOCAL_DEVICE, CUDA_VISIBLE_DEVICES,
 * CGRUN_NUMA_NODE, CGRUN_CPUSET).  Strings point into the plan.
 */
struct plan_rank_env {
	const char	*cpu_bind;	/* binding mode: "none", "gpu"... */
	const char	*mem_bind;	/* memory policy; "none": unbound */
	int		 gpu;		/* CUDA ordinal (agent's); -1 */
	const char	*gpu_busid;	/* with a GPU */
	const char	*gpu_uuid;	/* with a GPU whose UUID is known */
	int		 local_device;	/* its cuda:N (0: only it) */
	/*
	 * With gpu-visibility own (and --virtual-local-rank): the rank's
	 * whole CUDA_VISIBLE_DEVICES, its GPU as the agent's own
	 * CUDA_VISIBLE_DEVICES names it (index, GPU- or MIG- UUID), else its
	 * UUID (NVML), else its CUDA ordinal.  NULL: the agent's list stays.
	 */
	const char	*visible;
	char		 numa[PLAN_LIST_MAX];	/* NUMA nodes; "" */
	char		 cpus[PLAN_LIST_MAX];	/* bound cpus; "" */
};

/* Describe local_rank's placement into *e: 0, or -1 (EINVAL: no rank). */
int	plan_rank_env(const struct plan *, int local_rank,
	    struct plan_rank_env *e);

/* One line per local rank (json=0) or one JSON document (json=1). */
void	plan_print(const struct plan *, FILE *, int json);
/* The same lines through log_info (the -v start-up log). */
void	plan_log(const struct plan *);

/* Number of ranks planned, and whether rank r has a GPU (-1: none). */
int	plan_nproc(const struct plan *);
int	plan_gpu(const struct plan *, int local_rank);

#endif /* CGRUN_PLAN_H */

/*
 * plan_priv.h: the plan's insides, shared by the files that build it
 * (plan.c, plan_cpus.c), apply it (plan_apply.c) and show it
 * (plan_print.c).  Nothing outside launcher/place/ includes it.
 */
#ifndef CGRUN_PLAN_PRIV_H
#define CGRUN_PLAN_PRIV_H

#include <stddef.h>

#include <hwloc.h>

#include "gpu.h"

enum bind_mode {
	BIND_NONE, BIND_GPU, BIND_NUMA, BIND_CORES,		/* --cpu-bind */
	BIND_SOCKET, BIND_EXCLUSIVE, BIND_CCX,			/* --numa-binding */
};
#define BIND_NMODES	(BIND_CCX + 1)

enum mem_mode { MEM_BIND, MEM_PREFERRED, MEM_NONE };
#define MEM_NMODES	(MEM_NONE + 1)

/* A binding mode: option spelling, name shown, needs a GPU, split. */
struct bind_desc {
	const char	*cpu_bind;	/* --cpu-bind value, or NULL */
	const char	*numa_binding;	/* --numa-binding value, or NULL */
	const char	*name;		/* CGRUN_CPU_BIND, plan output */
	int		 needs_gpu;
	int		 split;		/* ranks sharing an anchor split it */
};

/* The binding modes (plan.c), indexed by enum bind_mode. */
extern const struct bind_desc plan_modes[BIND_NMODES];
/* Memory policy names, indexed by enum mem_mode. */
extern const char *const plan_mem_names[MEM_NMODES];

struct rank_plan {
	int		 gpu;		/* CUDA ordinal in the agent's view; -1 */
	char		 busid[GPU_BUSID_MAX];
	char		 uuid[GPU_UUID_MAX];
	char		 token[GPU_UUID_MAX];	/* CUDA_VISIBLE_DEVICES for "own" */
	hwloc_bitmap_t	 local;		/* cpus near its GPU (with a GPU) */
	hwloc_bitmap_t	 anchor;	/* cpus the rank's share comes from */
	hwloc_bitmap_t	 cpuset;	/* bound cpus; NULL: unbound */
	hwloc_bitmap_t	 nodeset;	/* NUMA nodes: memory, or GPU locality */
	int		 shared;	/* cpuset overlaps another rank's */
};

struct plan {
	hwloc_topology_t	 topo;
	int			 nproc;
	int			 ngpu;		/* visible GPUs */
	const char		*source;	/* GPU discovery: nvml, hwloc */
	enum bind_mode		 mode;
	enum mem_mode		 mem;
	int			 own;		/* gpu-visibility own */
	int			 mem_asked;	/* --mem-bind given explicitly */
	int			 nnuma;		/* NUMA nodes of the machine */
	hwloc_bitmap_t		 allowed;	/* cpus ranks may use; NULL: all */
	const char		*allowed_why;	/* what limited them */
	int			 allowed_live;	/* they are the live machine's */
	struct rank_plan	*r;
};

/* Find the cpus ranks may use, limit anchors to them (plan_allowed.c). */
int	plan_allowed(struct plan *, const char *list, char *err, size_t errlen);
void	plan_allowed_limit(struct plan *);

/* Give every rank its anchor, cpuset and memory nodes (plan_cpus.c). */
void	plan_cpus(struct plan *);

/* Whether bound ranks get a memory policy (plan.c). */
int	plan_binds_memory(const struct plan *);

/* A bitmap in list form ("0-5,48-53", "-" when empty) into buf. */
const char *plan_list(hwloc_const_bitmap_t, char *buf, size_t len);

#endif /* CGRUN_PLAN_PRIV_H */

/*
 * plan_apply.c: the plan applied in a worker's process after fork, before
 * exec: its CPU binding and memory policy, through hwloc.
 */
#include <errno.h>

#include <hwloc.h>

#include "plan.h"
#include "plan_priv.h"

/*
 * Set the memory policy: strict (MPOL_BIND) or preferred.  hwloc maps
 * BIND + STRICT to MPOL_BIND and BIND alone to MPOL_PREFERRED; where the
 * kernel cannot prefer several nodes, prefer the first one.  THREAD, not
 * PROCESS: Linux has per-thread policies only (hwloc answers ENOSYS to
 * PROCESS); the child is single-threaded here, and the policy is inherited
 * by the threads it creates later and kept across exec.  EPERM: a
 * container without CAP_SYS_NICE (Docker's seccomp profile).
 */
static int
plan_apply_membind(const struct plan *p, hwloc_const_nodeset_t nodes)
{
	int flags = HWLOC_MEMBIND_THREAD | HWLOC_MEMBIND_BYNODESET, rc;
	hwloc_nodeset_t first;

	if (p->mem == MEM_BIND)
		flags |= HWLOC_MEMBIND_STRICT;
	rc = hwloc_set_membind(p->topo, nodes, HWLOC_MEMBIND_BIND, flags);
	if (rc == -1 && p->mem == MEM_PREFERRED &&
	    hwloc_bitmap_weight(nodes) > 1 &&
	    (first = hwloc_bitmap_alloc()) != NULL) {
		hwloc_bitmap_only(first, (unsigned)hwloc_bitmap_first(nodes));
		rc = hwloc_set_membind(p->topo, first, HWLOC_MEMBIND_BIND,
		    flags);
		hwloc_bitmap_free(first);
	}
	return rc;
}

/* Bind this (child) process as planned for rank r. */
int
plan_apply_child(const struct plan *p, int r)
{
	const struct rank_plan *rp;

	if (r < 0 || r >= p->nproc) {
		errno = EINVAL;
		return -1;
	}
	rp = &p->r[r];
	if (rp->cpuset == NULL)
		return 0;
	/* single-threaded between fork and exec: the thread is the process */
	if (hwloc_set_cpubind(p->topo, rp->cpuset, HWLOC_CPUBIND_THREAD) == -1)
		return -1;
	if (!plan_binds_memory(p) || hwloc_bitmap_iszero(rp->nodeset))
		return 0;
	return plan_apply_membind(p, rp->nodeset);
}

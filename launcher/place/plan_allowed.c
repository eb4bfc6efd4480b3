/*
 * plan_allowed.c: the cpus a plan may bind ranks to.  On the live machine
 * these are the cpus the launcher itself may run on: its inherited
 * affinity (taskset, numactl, srun --cpu-bind, a container runtime) within
 * the cgroup cpuset (which hwloc already leaves out of a live topology).
 * Binding a rank outside them would fail (sched_setaffinity: EINVAL) or
 * take cpus Slurm gave another step.  A topology that is not this
 * machine's (HWLOC_XMLFILE and the like) numbers its cpus its own way, so
 * the inherited affinity says nothing about it.
 */
#include <stdlib.h>
#include <string.h>

#include <hwloc.h>

#include "log.h"
#include "plan_priv.h"

/* Whether the topology is the live machine's, numbered as the kernel does. */
static int
plan_allowed_live(hwloc_topology_t topo)
{
	static const char *const vars[] = { "HWLOC_XMLFILE",
	    "HWLOC_SYNTHETIC", "HWLOC_FSROOT" };
	size_t i;

	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		if (getenv(vars[i]) != NULL)
			return 0;
	return hwloc_topology_is_thissystem(topo);
}

/* The calling thread's inherited affinity within the cgroup's cpus, or NULL. */
static hwloc_bitmap_t
plan_allowed_inherited(hwloc_topology_t topo)
{
	hwloc_bitmap_t set;

	if (!plan_allowed_live(topo)) {
		log_debug("placement: topology is not this machine's; the "
		    "inherited cpu affinity does not limit the plan");
		return NULL;
	}
	if ((set = hwloc_bitmap_alloc()) == NULL)
		return NULL;
	if (hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_THREAD) == -1) {
		log_debug("placement: inherited cpu affinity unknown");
		hwloc_bitmap_free(set);
		return NULL;
	}
	hwloc_bitmap_and(set, set, hwloc_topology_get_allowed_cpuset(topo));
	return set;
}

/*
 * The cpus that limit p's ranks: list when given (a cpu list, in the
 * topology's numbering), else the inherited affinity on the live machine.
 * Sets p->allowed (NULL: the whole topology, no limit) and
 * p->allowed_why; -1 with err when list is not a cpu list of the machine.
 */
int
plan_allowed(struct plan *p, const char *list, char *err, size_t errlen)
{
	hwloc_const_cpuset_t all = hwloc_topology_get_topology_cpuset(p->topo);
	hwloc_bitmap_t set;

	p->allowed = NULL;
	if (list != NULL) {
		if ((set = hwloc_bitmap_alloc()) == NULL ||
		    hwloc_bitmap_list_sscanf(set, list) == -1 ||
		    !hwloc_bitmap_intersects(set, all)) {
			snprintf(err, errlen, "allowed cpus \"%.64s\" are not "
			    "a list of this machine's cpus", list);
			hwloc_bitmap_free(set);
			return -1;
		}
		p->allowed_why = "given";
	} else {
		if ((set = plan_allowed_inherited(p->topo)) == NULL)
			return 0;
		p->allowed_why = "inherited affinity";
	}
	hwloc_bitmap_and(set, set, all);
	if (hwloc_bitmap_iszero(set) || hwloc_bitmap_isincluded(all, set)) {
		hwloc_bitmap_free(set);		/* no limit, or nothing known */
		return 0;
	}
	p->allowed = set;
	return 0;
}

/*
 * Limit every rank's anchor to the allowed cpus.  A rank whose anchor lies
 * wholly outside them (the cpus near its GPU were not given to the job)
 * takes the allowed cpus instead, and the log says so.
 */
void
plan_allowed_limit(struct plan *p)
{
	char a[1024], b[1024];
	struct rank_plan *rp;
	int r;

	if (p->allowed == NULL)
		return;
	for (r = 0; r < p->nproc; r++) {
		rp = &p->r[r];
		if (hwloc_bitmap_intersects(rp->anchor, p->allowed)) {
			hwloc_bitmap_and(rp->anchor, rp->anchor, p->allowed);
			continue;
		}
		log_warnx("placement local_rank=%d: its cpus %s are outside "
		    "the allowed cpus %s (%s); bound within the allowed cpus",
		    r, plan_list(rp->anchor, a, sizeof(a)),
		    plan_list(p->allowed, b, sizeof(b)), p->allowed_why);
		hwloc_bitmap_copy(rp->anchor, p->allowed);
	}
}

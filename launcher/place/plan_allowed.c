/*
 * plan_allowed.c: the cpus a plan may bind ranks to.  On the live machine
 * these are the cpus the launcher itself may run on: its inherited
 * affinity (taskset, numactl, srun --cpu-bind, a container runtime) within
 * the cgroup cpuset (which hwloc already leaves out of a live topology;
 * the plan still says that the cgroup limited it).
 * Binding a rank outside them would fail (sched_setaffinity: EINVAL) or
 * take cpus Slurm gave another step.  A topology that is not this
 * machine's (HWLOC_XMLFILE and the like) numbers its cpus its own way, so
 * the inherited affinity says nothing about it.
 */
#include <stdio.h>
#include <stdlib.h>

#include <hwloc.h>

#include "errbuf.h"
#include "gpu.h"
#include "log.h"
#include "plan_priv.h"
#include "topology.h"

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

/*
 * Whether the cgroup cpuset left cpus out of the live topology: hwloc
 * drops the cpus the cgroup does not allow, so a topology smaller than the
 * kernel's online cpus was cut down by it.  0 when unknown.
 */
static int
plan_allowed_cgroup(hwloc_const_cpuset_t all)
{
	hwloc_bitmap_t online;
	int cut;

	if ((online = hwloc_bitmap_alloc()) == NULL)
		return 0;
	cut = topology_cpulist_read("/sys/devices/system/cpu/online",
	    online) == 0 && !hwloc_bitmap_isincluded(online, all);
	hwloc_bitmap_free(online);
	return cut;
}

/* What limits set, the inherited cpus of a live topology, or NULL: nothing. */
static const char *
plan_allowed_by(hwloc_topology_t topo, hwloc_const_cpuset_t set)
{
	hwloc_const_cpuset_t all = hwloc_topology_get_topology_cpuset(topo);
	int aff = !hwloc_bitmap_isincluded(all, set);
	int cg = plan_allowed_cgroup(all);

	if (aff && cg)
		return "cgroup cpuset and inherited affinity";
	return aff ? "inherited affinity" : cg ? "cgroup cpuset" : NULL;
}

/*
 * The calling thread's inherited affinity within the cgroup's cpus (what
 * the workers forked by this thread inherit), and in *why what limits it;
 * NULL when the topology is not live or nothing limits it.
 */
static hwloc_bitmap_t
plan_allowed_inherited(hwloc_topology_t topo, const char **why)
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
	hwloc_bitmap_and(set, set, hwloc_topology_get_topology_cpuset(topo));
	if (hwloc_bitmap_iszero(set) ||
	    (*why = plan_allowed_by(topo, set)) == NULL) {
		hwloc_bitmap_free(set);		/* nothing known, or no limit */
		return NULL;
	}
	return set;
}

/*
 * The cpus that limit p's ranks: list when given (a cpu list, in the
 * topology's numbering), else on the live machine what cgrun inherited.
 * Sets p->allowed (NULL: the whole topology, no limit) and
 * p->allowed_why; -1 with err when list is not a cpu list of the machine.
 */
int
plan_allowed(struct plan *p, const char *list, char *err, size_t errlen)
{
	hwloc_const_cpuset_t all = hwloc_topology_get_topology_cpuset(p->topo);
	hwloc_bitmap_t set;

	p->allowed = NULL;
	if (list == NULL) {
		p->allowed = plan_allowed_inherited(p->topo, &p->allowed_why);
		p->allowed_live = p->allowed != NULL;
		return 0;
	}
	if ((set = hwloc_bitmap_alloc()) == NULL ||
	    hwloc_bitmap_list_sscanf(set, list) == -1 ||
	    !hwloc_bitmap_intersects(set, all)) {
		errbuf_set(err, errlen, "allowed cpus \"%.64s\" are not a list "
		    "of this machine's cpus", list);
		hwloc_bitmap_free(set);
		return -1;
	}
	p->allowed_why = "given";
	hwloc_bitmap_and(set, set, all);
	if (hwloc_bitmap_isincluded(all, set))
		hwloc_bitmap_free(set);		/* the whole machine: no limit */
	else
		p->allowed = set;
	return 0;
}

/*
 * The cpus near rank rp into near: its anchor, or on the live machine the
 * cpus sysfs calls local to its GPU when none of them is allowed (the
 * topology lacks the cpus a cgroup forbids, and a GPU none of whose cpus
 * are left gets the whole topology as its locality, plan_gpu_local: the
 * anchor alone would hide that its cpus were not given to the job).
 */
static void
plan_allowed_near(const struct plan *p, const struct rank_plan *rp,
    hwloc_bitmap_t near)
{
	hwloc_bitmap_t local;

	hwloc_bitmap_copy(near, rp->anchor);
	if (!p->allowed_live || rp->gpu < 0 || rp->busid[0] == '\0' ||
	    (local = hwloc_bitmap_alloc()) == NULL)
		return;
	if (gpu_sysfs_local_cpus("/sys/bus/pci/devices", rp->busid,
	    local) == 0 && !hwloc_bitmap_intersects(local, p->allowed))
		hwloc_bitmap_copy(near, local);
	hwloc_bitmap_free(local);
}

/*
 * Limit every rank's anchor to the allowed cpus.  A rank whose cpus lie
 * wholly outside them (the cpus near its GPU were not given to the job)
 * takes the allowed cpus instead, and the log says so.
 */
void
plan_allowed_limit(struct plan *p)
{
	char a[1024], b[1024];
	struct rank_plan *rp;
	hwloc_const_bitmap_t cpus;
	hwloc_bitmap_t near;
	int r;

	if (p->allowed == NULL)
		return;
	near = hwloc_bitmap_alloc();
	for (r = 0; r < p->nproc; r++) {
		rp = &p->r[r];
		cpus = rp->anchor;	/* without memory for near: the anchor */
		if (near != NULL) {
			plan_allowed_near(p, rp, near);
			cpus = near;
		}
		if (hwloc_bitmap_intersects(cpus, p->allowed)) {
			hwloc_bitmap_and(rp->anchor, rp->anchor, p->allowed);
			continue;
		}
		log_warnx("placement local_rank=%d: its cpus %s are outside "
		    "the allowed cpus %s (%s); bound within the allowed cpus",
		    r, plan_list(cpus, a, sizeof(a)),
		    plan_list(p->allowed, b, sizeof(b)), p->allowed_why);
		hwloc_bitmap_copy(rp->anchor, p->allowed);
	}
	hwloc_bitmap_free(near);
}

/*
 * plan_cpus.c: each rank's CPUs and memory nodes.  An anchor cpuset chosen
 * by the binding mode (the GPU's non-I/O ancestor, its NUMA node(s), its
 * package, one L3 complex, or the whole machine), then a share of that
 * anchor split by whole cores among the ranks that share it, and the NUMA
 * nodes of the resulting cpuset for its memory.  Anchors are first limited
 * to the cpus the job may use (plan_allowed.c).
 */
#include <stdlib.h>

#include <hwloc.h>

#include "plan_priv.h"

/* The non-I/O ancestor of the rank's GPU (or the whole machine). */
static hwloc_obj_t
plan_cpus_gpu_ancestor(const struct plan *p, const struct rank_plan *rp)
{
	hwloc_obj_t a;

	if (rp->pci == NULL ||
	    (a = hwloc_get_non_io_ancestor_obj(p->topo, rp->pci)) == NULL)
		return hwloc_get_root_obj(p->topo);
	return a;
}

/* The cpuset local to the rank's GPU. */
static hwloc_const_cpuset_t
plan_cpus_gpu_local(const struct plan *p, const struct rank_plan *rp)
{
	return plan_cpus_gpu_ancestor(p, rp)->cpuset;
}

/* NUMA nodes local to the rank's GPU into set (all nodes if unknown). */
static void
plan_cpus_gpu_nodes(const struct plan *p, const struct rank_plan *rp,
    hwloc_nodeset_t set)
{
	static const unsigned long flags[] = { 0,
	    HWLOC_LOCAL_NUMANODE_FLAG_LARGER_LOCALITY,
	    HWLOC_LOCAL_NUMANODE_FLAG_SMALLER_LOCALITY };
	struct hwloc_location loc;
	hwloc_obj_t nodes[64];
	unsigned n = 0, i, f;

	hwloc_bitmap_zero(set);
	loc.type = HWLOC_LOCATION_TYPE_OBJECT;
	loc.location.object = plan_cpus_gpu_ancestor(p, rp);
	for (f = 0; f < 3 && n == 0; f++) {
		n = 64;
		if (hwloc_get_local_numanode_objs(p->topo, &loc, &n, nodes,
		    flags[f]) == -1)
			n = 0;
	}
	for (i = 0; i < n && i < 64; i++)
		hwloc_bitmap_set(set, nodes[i]->os_index);
	if (hwloc_bitmap_iszero(set))
		hwloc_bitmap_copy(set,
		    hwloc_topology_get_topology_nodeset(p->topo));
}

/* Cpus of the NUMA nodes in nodeset into cpuset. */
static void
plan_cpus_of_nodes(const struct plan *p, hwloc_const_nodeset_t nodes,
    hwloc_cpuset_t cpus)
{
	hwloc_cpuset_from_nodeset(p->topo, cpus, nodes);
	if (hwloc_bitmap_iszero(cpus))
		hwloc_bitmap_copy(cpus,
		    hwloc_topology_get_topology_cpuset(p->topo));
}

/* The package around the rank's GPU, its cpuset into cpus. */
static void
plan_cpus_socket(const struct plan *p, const struct rank_plan *rp,
    hwloc_cpuset_t cpus)
{
	hwloc_const_cpuset_t g = plan_cpus_gpu_local(p, rp);
	hwloc_obj_t pkg;

	hwloc_bitmap_zero(cpus);
	pkg = NULL;
	while ((pkg = hwloc_get_next_obj_by_type(p->topo, HWLOC_OBJ_PACKAGE,
	    pkg)) != NULL)
		if (hwloc_bitmap_intersects(pkg->cpuset, g))
			hwloc_bitmap_or(cpus, cpus, pkg->cpuset);
	if (hwloc_bitmap_iszero(cpus))
		hwloc_bitmap_copy(cpus, g);
}

/*
 * Core complex: the L3 caches (else the cores) inside the GPU's NUMA
 * cpus; the i-th rank of k sharing that node gets L3 number i % nl3.
 */
static void
plan_cpus_ccx(const struct plan *p, hwloc_const_cpuset_t numa, int i,
    hwloc_cpuset_t cpus)
{
	int n = hwloc_get_nbobjs_inside_cpuset_by_type(p->topo, numa,
	    HWLOC_OBJ_L3CACHE);
	hwloc_obj_t o;

	hwloc_bitmap_copy(cpus, numa);
	if (n <= 0)
		return;
	o = hwloc_get_obj_inside_cpuset_by_type(p->topo, numa,
	    HWLOC_OBJ_L3CACHE, (unsigned)(i % n));
	if (o != NULL)
		hwloc_bitmap_and(cpus, o->cpuset, numa);
}

/* For a CPU-only rank under "numa": NUMA node number r*nnuma/nproc. */
static void
plan_cpus_block_numa(const struct plan *p, int r, hwloc_cpuset_t cpus)
{
	int n = hwloc_get_nbobjs_by_type(p->topo, HWLOC_OBJ_NUMANODE);
	hwloc_obj_t o;

	hwloc_bitmap_copy(cpus, hwloc_topology_get_topology_cpuset(p->topo));
	if (n <= 0)
		return;
	o = hwloc_get_obj_by_type(p->topo, HWLOC_OBJ_NUMANODE,
	    (unsigned)((long)r * n / p->nproc));
	if (o != NULL && !hwloc_bitmap_iszero(o->cpuset))
		hwloc_bitmap_copy(cpus, o->cpuset);
}

/* Set every rank's anchor cpuset for the plan's mode (no split yet). */
static void
plan_cpus_anchors(struct plan *p)
{
	hwloc_bitmap_t nodes = hwloc_bitmap_alloc();
	struct rank_plan *rp;
	int r;

	for (r = 0; r < p->nproc; r++) {
		rp = &p->r[r];
		if (rp->gpu >= 0)
			plan_cpus_gpu_nodes(p, rp, nodes);
		switch (p->mode) {
		case BIND_GPU:
			hwloc_bitmap_copy(rp->anchor, plan_cpus_gpu_local(p, rp));
			break;
		case BIND_NUMA:
			if (rp->gpu >= 0)
				plan_cpus_of_nodes(p, nodes, rp->anchor);
			else
				plan_cpus_block_numa(p, r, rp->anchor);
			break;
		case BIND_EXCLUSIVE:
		case BIND_CCX:
			plan_cpus_of_nodes(p, nodes, rp->anchor);
			break;
		case BIND_SOCKET:
			plan_cpus_socket(p, rp, rp->anchor);
			break;
		case BIND_CORES:
		case BIND_NONE:
			hwloc_bitmap_copy(rp->anchor,
			    hwloc_topology_get_topology_cpuset(p->topo));
			break;
		}
		if (rp->gpu >= 0)
			hwloc_bitmap_copy(rp->nodeset, nodes);
	}
	hwloc_bitmap_free(nodes);
}

/*
 * Where anchors nest (a GPU under a sub-NUMA group, another under the
 * whole package), the larger one leaves the smaller one's cpus to its
 * ranks, unless nothing would be left.
 */
static void
plan_cpus_unnest(struct plan *p)
{
	hwloc_bitmap_t *eff;
	int r, s;

	if ((eff = calloc((size_t)p->nproc, sizeof(*eff))) == NULL)
		return;
	for (r = 0; r < p->nproc; r++) {
		eff[r] = hwloc_bitmap_dup(p->r[r].anchor);
		for (s = 0; s < p->nproc && eff[r] != NULL; s++)
			if (hwloc_bitmap_isincluded(p->r[s].anchor,
			    p->r[r].anchor) && !hwloc_bitmap_isequal(
			    p->r[s].anchor, p->r[r].anchor))
				hwloc_bitmap_andnot(eff[r], eff[r],
				    p->r[s].anchor);
	}
	for (r = 0; r < p->nproc; r++)
		if (eff[r] != NULL && !hwloc_bitmap_iszero(eff[r]))
			hwloc_bitmap_copy(p->r[r].anchor, eff[r]);
	for (r = 0; r < p->nproc; r++)
		hwloc_bitmap_free(eff[r]);
	free(eff);
}

/* Rank r's position (by GPU, then rank) and count among ranks sharing its anchor. */
static void
plan_cpus_peer_index(const struct plan *p, int r, int *idx, int *cnt)
{
	const struct rank_plan *a = &p->r[r], *b;
	int s;

	*idx = 0;
	*cnt = 0;
	for (s = 0; s < p->nproc; s++) {
		b = &p->r[s];
		if (!hwloc_bitmap_isequal(a->anchor, b->anchor))
			continue;
		(*cnt)++;
		if (b->gpu < a->gpu || (b->gpu == a->gpu && s < r))
			(*idx)++;
	}
}

/*
 * Share i of k of the anchor's cpus: whole cores when there are at least
 * k, else single PUs, else (more ranks than PUs) PU i % npu, shared.
 */
static int
plan_cpus_split(const struct plan *p, hwloc_const_cpuset_t anchor, int i, int k,
    hwloc_cpuset_t out)
{
	hwloc_obj_type_t type = HWLOC_OBJ_CORE;
	int n, j, lo, hi;
	hwloc_obj_t o;

	n = hwloc_get_nbobjs_inside_cpuset_by_type(p->topo, anchor, type);
	if (n < k) {
		type = HWLOC_OBJ_PU;
		n = hwloc_get_nbobjs_inside_cpuset_by_type(p->topo, anchor,
		    type);
	}
	hwloc_bitmap_zero(out);
	if (n <= 0) {
		hwloc_bitmap_copy(out, anchor);
		return k > 1;
	}
	lo = n >= k ? (int)((long)i * n / k) : i % n;
	hi = n >= k ? (int)((long)(i + 1) * n / k) : lo + 1;
	for (j = lo; j < hi; j++) {
		o = hwloc_get_obj_inside_cpuset_by_type(p->topo, anchor, type,
		    (unsigned)j);
		if (o != NULL)
			hwloc_bitmap_or(out, out, o->cpuset);
	}
	hwloc_bitmap_and(out, out, anchor);
	return n < k;
}

/* Give every rank its anchor, cpuset (a share of it) and memory nodes. */
void
plan_cpus(struct plan *p)
{
	struct rank_plan *rp;
	int r, i, k;

	plan_cpus_anchors(p);
	if (p->mode == BIND_NONE)
		return;
	plan_allowed_limit(p);
	if (plan_modes[p->mode].split && p->mode != BIND_CORES)
		plan_cpus_unnest(p);
	for (r = 0; r < p->nproc; r++) {
		rp = &p->r[r];
		rp->cpuset = hwloc_bitmap_alloc();
		plan_cpus_peer_index(p, r, &i, &k);
		if (plan_modes[p->mode].split)
			rp->shared = plan_cpus_split(p, rp->anchor, i, k,
			    rp->cpuset);
		else if (p->mode == BIND_CCX)
			plan_cpus_ccx(p, rp->anchor, i, rp->cpuset);
		else
			hwloc_bitmap_copy(rp->cpuset, rp->anchor);
		hwloc_cpuset_to_nodeset(p->topo, rp->cpuset, rp->nodeset);
	}
}

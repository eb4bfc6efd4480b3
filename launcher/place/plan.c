/*
 * plan.c: the per-rank placement plan.  Each local rank gets a GPU (round
 * robin over the visible GPUs: rank r uses cuda:(r % ngpus), the same as
 * the common LOCAL_RANK % device_count() idiom) and its CPUs and memory
 * nodes (plan_cpus.c); the child applies it before exec (plan_apply.c);
 * what a rank learns of it is described here (plan_rank_env) and named
 * CGRUN_* by worker_env.c; --dry-run and -v show it (plan_print.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <hwloc.h>

#include "discovery.h"
#include "errbuf.h"
#include "gpu.h"
#include "log.h"
#include "plan.h"
#include "plan_priv.h"
#include "topology.h"

/* Binding modes: option spelling, name shown, needs a GPU, split. */
const struct bind_desc plan_modes[BIND_NMODES] = {
	[BIND_NONE]	 = { "none",  NULL,		"none",		0, 0 },
	[BIND_GPU]	 = { "gpu",   NULL,		"gpu",		1, 1 },
	[BIND_NUMA]	 = { "numa",  "node",		"numa",		0, 0 },
	[BIND_CORES]	 = { "cores", NULL,		"cores",	0, 1 },
	[BIND_SOCKET]	 = { NULL,    "socket",		"socket",	1, 0 },
	[BIND_EXCLUSIVE] = { NULL,    "exclusive",	"exclusive",	1, 1 },
	[BIND_CCX]	 = { NULL,    "core-complex",	"core-complex",	1, 0 },
};

const char *const plan_mem_names[MEM_NMODES] = {
	[MEM_BIND] = "bind", [MEM_PREFERRED] = "preferred", [MEM_NONE] = "none",
};

/* Look the binding mode up from the options; -1 with err on a bad value. */
static int
plan_mode(const struct plan_opts *o, int *mode, char *err, size_t errlen)
{
	int i;

	*mode = -1;
	for (i = 0; i < BIND_NMODES; i++) {
		if (o->numa_binding != NULL && plan_modes[i].numa_binding &&
		    strcmp(o->numa_binding, plan_modes[i].numa_binding) == 0)
			*mode = i;
		if (o->numa_binding == NULL && o->cpu_bind != NULL &&
		    plan_modes[i].cpu_bind &&
		    strcmp(o->cpu_bind, plan_modes[i].cpu_bind) == 0)
			*mode = i;
	}
	if (*mode != -1 || (o->numa_binding == NULL && o->cpu_bind == NULL))
		return 0;
	if (o->numa_binding != NULL)
		errbuf_set(err, errlen, "--numa-binding: \"%.32s\" is not "
		    "node, socket, exclusive or core-complex", o->numa_binding);
	else
		errbuf_set(err, errlen, "--cpu-bind: \"%.32s\" is not none, "
		    "gpu, numa or cores", o->cpu_bind);
	return -1;
}

/* Look up the memory policy and GPU visibility; -1 with err. */
static int
plan_mem_vis(const struct plan_opts *o, int *mem, int *own, char *err,
    size_t errlen)
{
	int i;

	*mem = MEM_PREFERRED;
	if (o->mem_bind != NULL) {
		for (i = 0; i < MEM_NMODES; i++)
			if (strcmp(o->mem_bind, plan_mem_names[i]) == 0)
				*mem = i;
		if (strcmp(o->mem_bind, plan_mem_names[*mem]) != 0) {
			errbuf_set(err, errlen, "--mem-bind: \"%.32s\" is not "
			    "bind, preferred or none", o->mem_bind);
			return -1;
		}
	}
	*own = o->gpu_visibility != NULL &&
	    strcmp(o->gpu_visibility, "own") == 0;
	if (o->gpu_visibility != NULL && !*own &&
	    strcmp(o->gpu_visibility, "all") != 0) {
		errbuf_set(err, errlen, "--gpu-visibility: \"%.32s\" is not "
		    "all or own", o->gpu_visibility);
		return -1;
	}
	return 0;
}

/* Validate option values. */
int
plan_opts_check(const struct plan_opts *o, char *err, size_t errlen)
{
	int mode, mem, own;

	if (plan_mode(o, &mode, err, errlen) == -1)
		return -1;
	return plan_mem_vis(o, &mem, &own, err, errlen);
}

/*
 * The CPUs near GPU g into set: those of its non-I/O ancestor in a
 * topology with PCI devices (a capture), else, on the machine itself, its
 * local_cpulist in sysfs (where hwloc attaches it), within the topology's
 * CPUs.  0, or -1 when unknown.
 */
static int
plan_gpu_local(const struct plan *p, const struct gpu_info *g,
    hwloc_bitmap_t set)
{
	hwloc_obj_t o;

	if (topology_has_io(p->topo)) {
		if ((o = hwloc_get_pcidev_by_busid(p->topo, g->domain, g->bus,
		    g->dev, g->func)) == NULL ||
		    (o = hwloc_get_non_io_ancestor_obj(p->topo, o)) == NULL)
			return -1;
		hwloc_bitmap_copy(set, o->cpuset);
		return 0;
	}
	if (!hwloc_topology_is_thissystem(p->topo) ||
	    gpu_sysfs_local_cpus("/sys/bus/pci/devices", g->busid, set) == -1)
		return -1;
	hwloc_bitmap_and(set, set, hwloc_topology_get_topology_cpuset(p->topo));
	if (hwloc_bitmap_iszero(set))	/* none of them ours: as hwloc does */
		hwloc_bitmap_copy(set,
		    hwloc_topology_get_topology_cpuset(p->topo));
	return 0;
}

/* Assign rank r its GPU: cuda:(r % ngpu) of the visible list. */
static void
plan_assign_gpu(struct plan *p, const struct gpu_list *l, int r)
{
	struct rank_plan *rp = &p->r[r];
	const struct gpu_info *g;
	const struct gpu_vis *v;

	rp->gpu = -1;
	if (l->nvis == 0)
		return;
	rp->gpu = r % l->nvis;
	v = &l->vis[rp->gpu];
	g = &l->gpu[v->phys];
	snprintf(rp->busid, sizeof(rp->busid), "%s", g->busid);
	snprintf(rp->uuid, sizeof(rp->uuid), "%s", g->uuid);
	snprintf(rp->token, sizeof(rp->token), "%s", v->token);
	if (plan_gpu_local(p, g, rp->local) == -1) {
		log_warnx("gpu locality unknown bus_id=%s local_rank=%d (%s); "
		    "its locality is the whole machine", g->busid, r,
		    topology_has_io(p->topo) ? "not in the hwloc topology" :
		    "no local_cpulist in /sys/bus/pci/devices");
		hwloc_bitmap_copy(rp->local,
		    hwloc_topology_get_topology_cpuset(p->topo));
	}
}

/* Check mode against the GPUs found; -1 with err. */
static int
plan_check_gpus(const struct plan *p, char *err, size_t errlen)
{
	if (p->ngpu > 0 || !plan_modes[p->mode].needs_gpu)
		return 0;
	errbuf_set(err, errlen, "%s=%s binds ranks near their GPU but no GPU "
	    "was found; use --cpu-bind=numa, cores or none",
	    plan_modes[p->mode].cpu_bind != NULL ? "--cpu-bind" :
	    "--numa-binding", plan_modes[p->mode].cpu_bind != NULL ?
	    plan_modes[p->mode].cpu_bind : plan_modes[p->mode].numa_binding);
	return -1;
}

/* Allocate the rank table and its bitmaps; -1 on no memory. */
static int
plan_alloc_ranks(struct plan *p)
{
	int r;

	if ((p->r = calloc((size_t)p->nproc, sizeof(*p->r))) == NULL)
		return -1;
	for (r = 0; r < p->nproc; r++) {
		p->r[r].anchor = hwloc_bitmap_alloc();
		p->r[r].nodeset = hwloc_bitmap_alloc();
		p->r[r].local = hwloc_bitmap_alloc();
		if (p->r[r].anchor == NULL || p->r[r].nodeset == NULL ||
		    p->r[r].local == NULL)
			return -1;
	}
	return 0;
}

/* Log what the plan means for ranks and GPUs that do not pair up. */
static void
plan_note_counts(const struct plan *p)
{
	if (p->ngpu > 0 && p->nproc > p->ngpu)
		log_info("placement ranks=%d gpus=%d: ranks share GPUs "
		    "round robin (local rank r uses cuda:r%%%d)", p->nproc,
		    p->ngpu, p->ngpu);
	else if (p->ngpu > p->nproc)
		log_info("placement ranks=%d gpus=%d: GPUs %d-%d unused",
		    p->nproc, p->ngpu, p->nproc, p->ngpu - 1);
}

/*
 * GPU discovery failed (e.g. CUDA_VISIBLE_DEVICES names UUIDs and NVML is
 * missing): with an explicit binding that needs no GPU, go on without
 * GPUs; otherwise it stays an error, with a hint.  0 or -1 with err.
 */
static int
plan_without_gpus(struct plan *p, int mode, struct gpu_list **l, char *err,
    size_t errlen)
{
	size_t len;

	if (mode == -1 || plan_modes[mode].needs_gpu) {
		len = strlen(err);
		if (p->topo == NULL && len + 1 < errlen)
			snprintf(err + len, errlen - len, "; --cpu-bind=none, "
			    "cores or numa places ranks without GPUs");
		return -1;
	}
	if (p->topo == NULL && (p->topo = topology_load(err,
	    errlen)) == NULL)
		return -1;
	log_warnx("placement: %s; ranks get no GPU", err);
	if ((*l = calloc(1, sizeof(**l))) == NULL) {
		errbuf_set(err, errlen, "out of memory");
		return -1;
	}
	(*l)->source = "none";
	return 0;
}

/*
 * What GPU discovery may skip: a binding that needs no GPU locality
 * (--cpu-bind=none, numa, cores) needs nothing that only NVML knows
 * beyond what gpu_discover checks itself.
 */
static int
plan_discovery_flags(int mode)
{
	return mode != -1 && !plan_modes[mode].needs_gpu ? GPU_NO_NVML : 0;
}

/* Build the plan. */
struct plan *
plan_new(int nproc, const struct plan_opts *o, char *err, size_t errlen)
{
	struct gpu_list *l = NULL;
	struct plan *p;
	int mode, mem, own, r;

	if (nproc < 1 || nproc > PLAN_NPROC_MAX) {
		errbuf_set(err, errlen, "bad number of local ranks %d", nproc);
		return NULL;
	}
	if (plan_mode(o, &mode, err, errlen) == -1 ||
	    plan_mem_vis(o, &mem, &own, err, errlen) == -1)
		return NULL;
	if ((p = calloc(1, sizeof(*p))) == NULL) {
		errbuf_set(err, errlen, "out of memory");
		return NULL;
	}
	p->nproc = nproc;
	p->mem = mem;
	p->mem_asked = o->mem_bind != NULL;
	p->own = own;
	if (discovery_take(&p->topo, &l, plan_discovery_flags(mode), err,
	    errlen) == -1 &&
	    plan_without_gpus(p, mode, &l, err, errlen) == -1)
		goto fail;
	p->ngpu = l->nvis;
	p->source = l->source;
	p->mode = mode != -1 ? mode : p->ngpu > 0 ? BIND_GPU : BIND_NONE;
	p->nnuma = hwloc_get_nbobjs_by_type(p->topo, HWLOC_OBJ_NUMANODE);
	if (plan_check_gpus(p, err, errlen) == -1)
		goto fail;
	if (plan_allowed(p, o->allowed_cpus, err, errlen) == -1)
		goto fail;
	if (plan_alloc_ranks(p) == -1) {
		errbuf_set(err, errlen, "out of memory");
		goto fail;
	}
	for (r = 0; r < nproc; r++)
		plan_assign_gpu(p, l, r);
	plan_cpus(p);
	plan_note_counts(p);
	gpu_list_free(l);
	return p;
fail:
	gpu_list_free(l);
	plan_free(p);
	return NULL;
}

/* Free a plan; NULL is a no-op. */
void
plan_free(struct plan *p)
{
	int r;

	if (p == NULL)
		return;
	for (r = 0; p->r != NULL && r < p->nproc; r++) {
		hwloc_bitmap_free(p->r[r].anchor);
		hwloc_bitmap_free(p->r[r].cpuset);
		hwloc_bitmap_free(p->r[r].nodeset);
		hwloc_bitmap_free(p->r[r].local);
	}
	free(p->r);
	hwloc_bitmap_free(p->allowed);
	if (p->topo != NULL)
		hwloc_topology_destroy(p->topo);
	free(p);
}

/* Number of planned ranks. */
int
plan_nproc(const struct plan *p)
{
	return p->nproc;
}

/* The CUDA ordinal (agent's view) of rank r's GPU, or -1. */
int
plan_gpu(const struct plan *p, int r)
{
	return r >= 0 && r < p->nproc ? p->r[r].gpu : -1;
}

/*
 * Whether bound ranks get a memory policy: by default only where there is
 * a choice (several NUMA nodes); always when --mem-bind was given.
 */
int
plan_binds_memory(const struct plan *p)
{
	return p->mode != BIND_NONE && p->mem != MEM_NONE &&
	    (p->nnuma > 1 || p->mem_asked);
}

/* A bitmap in list form ("0-5,48-53") into buf. */
const char *
plan_list(hwloc_const_bitmap_t b, char *buf, size_t len)
{
	if (b == NULL || hwloc_bitmap_iszero(b))
		snprintf(buf, len, "-");
	else if (hwloc_bitmap_list_snprintf(buf, len, b) < 0)
		snprintf(buf, len, "?");
	return buf;
}

/*
 * What rank r's placement tells the rank: its binding, GPU and cpus as
 * data, for worker_env.c, which names the variables.  0, or -1 (errno
 * EINVAL) for a rank outside the plan.
 */
int
plan_rank_env(const struct plan *p, int r, struct plan_rank_env *e)
{
	const struct rank_plan *rp;

	if (r < 0 || r >= p->nproc) {
		errno = EINVAL;
		return -1;
	}
	rp = &p->r[r];
	memset(e, 0, sizeof(*e));
	e->cpu_bind = plan_modes[p->mode].name;
	e->mem_bind = plan_binds_memory(p) ? plan_mem_names[p->mem] : "none";
	e->gpu = rp->gpu;
	if (rp->gpu >= 0) {
		e->gpu_busid = rp->busid;
		e->gpu_uuid = rp->uuid[0] != '\0' ? rp->uuid : NULL;
		e->local_device = p->own ? 0 : rp->gpu;
		e->visible = p->own ? rp->token : NULL;
	}
	if (!hwloc_bitmap_iszero(rp->nodeset))
		plan_list(rp->nodeset, e->numa, sizeof(e->numa));
	if (rp->cpuset != NULL)
		plan_list(rp->cpuset, e->cpus, sizeof(e->cpus));
	return 0;
}

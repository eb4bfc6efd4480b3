/*
 * placement.c: the per-rank placement plan.  Each local rank gets a GPU
 * (round robin over the visible GPUs: rank r uses cuda:(r % ngpus), the
 * same as the common LOCAL_RANK % device_count() idiom), an anchor cpuset
 * chosen by the binding mode (the GPU's non-I/O ancestor, its NUMA
 * node(s), its package, one L3 complex, or the whole machine), a share of
 * that anchor split by whole cores among the ranks that share it, and the
 * NUMA nodes of the resulting cpuset for its memory.  The child applies it
 * with hwloc before exec; workers learn it from CGRUN_* variables.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hwloc.h>
#include <json.h>

#include "gpu.h"
#include "log.h"
#include "placement.h"

#define PLAN_NPROC_MAX	4096	/* local ranks per node */

enum bind_mode {
	BIND_NONE, BIND_GPU, BIND_NUMA, BIND_CORES,		/* --cpu-bind */
	BIND_SOCKET, BIND_EXCLUSIVE, BIND_CCX,			/* --numa-binding */
};

enum mem_mode { MEM_BIND, MEM_PREFERRED, MEM_NONE };

/* Binding modes: option spelling, name shown, needs a GPU, split. */
static const struct bind_desc {
	const char	*cpu_bind;	/* --cpu-bind value, or NULL */
	const char	*numa_binding;	/* --numa-binding value, or NULL */
	const char	*name;		/* CGRUN_CPU_BIND, plan output */
	int		 needs_gpu;
	int		 split;		/* ranks sharing an anchor split it */
} bind_modes[] = {
	[BIND_NONE]	 = { "none",  NULL,		"none",		0, 0 },
	[BIND_GPU]	 = { "gpu",   NULL,		"gpu",		1, 1 },
	[BIND_NUMA]	 = { "numa",  "node",		"numa",		0, 0 },
	[BIND_CORES]	 = { "cores", NULL,		"cores",	0, 1 },
	[BIND_SOCKET]	 = { NULL,    "socket",		"socket",	1, 0 },
	[BIND_EXCLUSIVE] = { NULL,    "exclusive",	"exclusive",	1, 1 },
	[BIND_CCX]	 = { NULL,    "core-complex",	"core-complex",	1, 0 },
};
#define NBIND_MODES ((int)(sizeof(bind_modes) / sizeof(bind_modes[0])))

static const char *const mem_names[] = {
	[MEM_BIND] = "bind", [MEM_PREFERRED] = "preferred", [MEM_NONE] = "none",
};

struct rank_plan {
	int		 gpu;		/* CUDA ordinal in the agent's view; -1 */
	char		 busid[GPU_BUSID_MAX];
	char		 uuid[GPU_UUID_MAX];
	char		 token[GPU_UUID_MAX];	/* CUDA_VISIBLE_DEVICES for "own" */
	hwloc_obj_t	 pci;		/* the GPU in the topology, or NULL */
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
	struct rank_plan	*r;
};

/*
 * Whether the topology needs I/O objects: always for a topology that is not
 * this machine's live one (HWLOC_XMLFILE fixtures and the like, or hwloc's
 * components chosen by the user), else only when sysfs shows an NVIDIA GPU
 * (or cannot be read).  hwloc's PCI discovery costs tens of ms; GPUs found
 * through NVML are in sysfs too.
 */
static int
placement_need_io(void)
{
	static const char *const vars[] = { "HWLOC_XMLFILE", "HWLOC_SYNTHETIC",
	    "HWLOC_FSROOT", "HWLOC_COMPONENTS", "HWLOC_THISSYSTEM" };
	size_t i;

	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		if (getenv(vars[i]) != NULL)
			return 1;
	return gpu_sysfs_present("/sys/bus/pci/devices") != 0;
}

/*
 * hwloc_topology_init() dlopens every hwloc plugin (hwloc_gl pulls in X11,
 * hwloc_opencl the OpenCL loader, hwloc_xml_libxml libxml2 and ICU: ~3 MB
 * of RSS and ~4 ms), before hwloc_topology_set_components() can refuse
 * them; only HWLOC_PLUGINS_BLACKLIST, read at that moment, keeps them out.
 * Set it (added to the user's) around the init, then restore the user's.
 */
static int
placement_init(hwloc_topology_t *topo, int io)
{
	const char *user = getenv("HWLOC_PLUGINS_BLACKLIST");
	char *saved = user != NULL ? strdup(user) : NULL, *v = NULL;
	int rc;

	if (asprintf(&v, "%s%shwloc_gl,hwloc_opencl,hwloc_xml_libxml%s",
	    user != NULL ? user : "", user != NULL && *user != '\0' ? "," : "",
	    io ? "" : ",hwloc_pci") == -1)
		v = NULL;
	if (v != NULL)
		setenv("HWLOC_PLUGINS_BLACKLIST", v, 1);
	rc = hwloc_topology_init(topo);
	if (saved != NULL)
		setenv("HWLOC_PLUGINS_BLACKLIST", saved, 1);
	else
		unsetenv("HWLOC_PLUGINS_BLACKLIST");
	free(saved);
	free(v);
	return rc;
}

/* Refuse hwloc components cgrun never needs (built in or already loaded). */
static void
placement_components(hwloc_topology_t topo, int io)
{
	static const char *const always[] = { "gl", "opencl", "xml_libxml",
	    "cuda", "nvml", "rsmi", "levelzero" };
	static const char *const noio[] = { "pci", "linuxio" };
	size_t i;

	for (i = 0; i < sizeof(always) / sizeof(always[0]); i++)
		hwloc_topology_set_components(topo,
		    HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, always[i]);
	for (i = 0; !io && i < sizeof(noio) / sizeof(noio[0]); i++)
		hwloc_topology_set_components(topo,
		    HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, noio[i]);
}

/*
 * Load the machine's topology (or HWLOC_XMLFILE's), with its PCI devices
 * when there may be GPUs to place ranks near (placement_need_io).
 */
static hwloc_topology_t
placement_topology(char *err, size_t errlen)
{
	hwloc_topology_t topo;
	int io = placement_need_io();

	if (placement_init(&topo, io) == -1) {
		snprintf(err, errlen, "hwloc_topology_init: %s",
		    strerror(errno));
		return NULL;
	}
	if (getenv("HWLOC_COMPONENTS") == NULL)
		placement_components(topo, io);
	/* I/O is dropped by default; keep every PCI function so that the
	 * vendor/class test, not hwloc's idea of "important", picks GPUs. */
	if (io) {
		hwloc_topology_set_io_types_filter(topo,
		    HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
		hwloc_topology_set_type_filter(topo, HWLOC_OBJ_PCI_DEVICE,
		    HWLOC_TYPE_FILTER_KEEP_ALL);
	}
	log_debug("placement topology io=%d", io);
	if (hwloc_topology_load(topo) == -1) {
		snprintf(err, errlen, "cannot load the hardware topology%s: %s",
		    getenv("HWLOC_XMLFILE") != NULL ? " (HWLOC_XMLFILE)" : "",
		    strerror(errno));
		hwloc_topology_destroy(topo);
		return NULL;
	}
	return topo;
}

/*
 * Discovery done for --nproc-per-node, kept for the plan_new() that follows
 * so that NVML (slow to initialise on big machines) and the topology are
 * loaded once.  Valid only while the variables that shape it are unchanged.
 */
static struct {
	char			*key;
	hwloc_topology_t	 topo;
	struct gpu_list		*l;
} found;

/* The variables discovery depends on, as one string (caller frees). */
static char *
placement_key(void)
{
	static const char *const vars[] = { "HWLOC_XMLFILE", "HWLOC_THISSYSTEM",
	    "CGRUN_NVML_LIBRARY", "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER" };
	char *key = NULL, *k;
	const char *v;
	size_t i;

	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		v = getenv(vars[i]);
		if (asprintf(&k, "%s%s=%s%c", key != NULL ? key : "", vars[i],
		    v != NULL ? v : "", v != NULL ? '1' : '0') == -1)
			k = NULL;
		free(key);
		if ((key = k) == NULL)
			return NULL;
	}
	return key;
}

/* Forget the kept discovery. */
static void
placement_forget(void)
{
	gpu_list_free(found.l);
	if (found.topo != NULL)
		hwloc_topology_destroy(found.topo);
	free(found.key);
	memset(&found, 0, sizeof(found));
}

/* Topology and GPUs: the kept ones when still valid (ownership passes). */
static int
placement_discover(hwloc_topology_t *topo, struct gpu_list **l, char *err,
    size_t errlen)
{
	char *key = placement_key();

	if (key != NULL && found.key != NULL && strcmp(key, found.key) == 0) {
		*topo = found.topo;
		*l = found.l;
		found.topo = NULL;
		found.l = NULL;
		placement_forget();
		free(key);
		return 0;
	}
	placement_forget();
	free(key);
	*l = NULL;
	if ((*topo = placement_topology(err, errlen)) == NULL)
		return -1;
	if ((*l = gpu_discover(*topo, err, errlen)) == NULL) {
		hwloc_topology_destroy(*topo);
		*topo = NULL;
		return -1;
	}
	return 0;
}

/* Count the GPUs workers will see (the discovery is kept for plan_new). */
int
placement_gpu_count(char *err, size_t errlen)
{
	hwloc_topology_t topo;
	struct gpu_list *l;

	if (placement_discover(&topo, &l, err, errlen) == -1)
		return -1;
	found.topo = topo;
	found.l = l;
	found.key = placement_key();
	return l->nvis;
}

/* Online CPUs, as Python's os.cpu_count(). */
static int
placement_cpu_count(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 && n <= PLAN_NPROC_MAX ? (int)n : n > 0 ?
	    PLAN_NPROC_MAX : 1;
}

/* Resolve --nproc-per-node (number, gpu, cpu, auto). */
int
placement_nproc(const char *spec, char *err, size_t errlen)
{
	char *end;
	long v;
	int n;

	if (strcmp(spec, "cpu") == 0)
		return placement_cpu_count();
	if (strcmp(spec, "gpu") == 0 || strcmp(spec, "auto") == 0) {
		if ((n = placement_gpu_count(err, errlen)) == -1)
			return -1;
		if (n > 0)
			return n;
		if (spec[0] == 'a')
			return placement_cpu_count();
		snprintf(err, errlen, "--nproc-per-node=gpu: no GPU found%s "
		    "(NVML and hwloc see no NVIDIA GPU); give a number, cpu "
		    "or auto", getenv("CUDA_VISIBLE_DEVICES") != NULL ?
		    " among CUDA_VISIBLE_DEVICES" : "");
		return -1;
	}
	errno = 0;
	v = strtol(spec, &end, 10);
	if (spec[0] < '0' || spec[0] > '9' || *end != '\0' || errno != 0 ||
	    v < 1 || v > PLAN_NPROC_MAX) {
		snprintf(err, errlen, "--nproc-per-node: \"%.32s\" is not a "
		    "number from 1 to %d, gpu, cpu or auto", spec,
		    PLAN_NPROC_MAX);
		return -1;
	}
	return (int)v;
}

/* Look the binding mode up from the options; -1 with err on a bad value. */
static int
plan_mode(const struct plan_opts *o, int *mode, char *err, size_t errlen)
{
	int i;

	*mode = -1;
	for (i = 0; i < NBIND_MODES; i++) {
		if (o->numa_binding != NULL && bind_modes[i].numa_binding &&
		    strcmp(o->numa_binding, bind_modes[i].numa_binding) == 0)
			*mode = i;
		if (o->numa_binding == NULL && o->cpu_bind != NULL &&
		    bind_modes[i].cpu_bind &&
		    strcmp(o->cpu_bind, bind_modes[i].cpu_bind) == 0)
			*mode = i;
	}
	if (*mode != -1 || (o->numa_binding == NULL && o->cpu_bind == NULL))
		return 0;
	if (o->numa_binding != NULL)
		snprintf(err, errlen, "--numa-binding: \"%.32s\" is not node, "
		    "socket, exclusive or core-complex", o->numa_binding);
	else
		snprintf(err, errlen, "--cpu-bind: \"%.32s\" is not none, gpu, "
		    "numa or cores", o->cpu_bind);
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
		for (i = 0; i < 3; i++)
			if (strcmp(o->mem_bind, mem_names[i]) == 0)
				*mem = i;
		if (strcmp(o->mem_bind, mem_names[*mem]) != 0) {
			snprintf(err, errlen, "--mem-bind: \"%.32s\" is not "
			    "bind, preferred or none", o->mem_bind);
			return -1;
		}
	}
	*own = o->gpu_visibility != NULL &&
	    strcmp(o->gpu_visibility, "own") == 0;
	if (o->gpu_visibility != NULL && !*own &&
	    strcmp(o->gpu_visibility, "all") != 0) {
		snprintf(err, errlen, "--gpu-visibility: \"%.32s\" is not all "
		    "or own", o->gpu_visibility);
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
	rp->pci = hwloc_get_pcidev_by_busid(p->topo, g->domain, g->bus,
	    g->dev, g->func);
	if (rp->pci == NULL)
		log_warnx("gpu not in hwloc topology bus_id=%s local_rank=%d; "
		    "its locality is the whole machine", g->busid, r);
}

/* The non-I/O ancestor of the rank's GPU (or the whole machine). */
static hwloc_obj_t
plan_gpu_ancestor(const struct plan *p, const struct rank_plan *rp)
{
	hwloc_obj_t a;

	if (rp->pci == NULL ||
	    (a = hwloc_get_non_io_ancestor_obj(p->topo, rp->pci)) == NULL)
		return hwloc_get_root_obj(p->topo);
	return a;
}

/* The cpuset local to the rank's GPU. */
static hwloc_const_cpuset_t
plan_gpu_cpuset(const struct plan *p, const struct rank_plan *rp)
{
	return plan_gpu_ancestor(p, rp)->cpuset;
}

/* NUMA nodes local to the rank's GPU into set (all nodes if unknown). */
static void
plan_gpu_nodes(const struct plan *p, const struct rank_plan *rp,
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
	loc.location.object = plan_gpu_ancestor(p, rp);
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
plan_nodes_cpus(const struct plan *p, hwloc_const_nodeset_t nodes,
    hwloc_cpuset_t cpus)
{
	hwloc_cpuset_from_nodeset(p->topo, cpus, nodes);
	if (hwloc_bitmap_iszero(cpus))
		hwloc_bitmap_copy(cpus,
		    hwloc_topology_get_topology_cpuset(p->topo));
}

/* The package around the rank's GPU, its cpuset into cpus. */
static void
plan_socket_cpus(const struct plan *p, const struct rank_plan *rp,
    hwloc_cpuset_t cpus)
{
	hwloc_const_cpuset_t g = plan_gpu_cpuset(p, rp);
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
plan_ccx_cpus(const struct plan *p, hwloc_const_cpuset_t numa, int i,
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
plan_block_numa(const struct plan *p, int r, hwloc_cpuset_t cpus)
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
plan_anchors(struct plan *p)
{
	hwloc_bitmap_t nodes = hwloc_bitmap_alloc();
	struct rank_plan *rp;
	int r;

	for (r = 0; r < p->nproc; r++) {
		rp = &p->r[r];
		if (rp->gpu >= 0)
			plan_gpu_nodes(p, rp, nodes);
		switch (p->mode) {
		case BIND_GPU:
			hwloc_bitmap_copy(rp->anchor, plan_gpu_cpuset(p, rp));
			break;
		case BIND_NUMA:
			if (rp->gpu >= 0)
				plan_nodes_cpus(p, nodes, rp->anchor);
			else
				plan_block_numa(p, r, rp->anchor);
			break;
		case BIND_EXCLUSIVE:
		case BIND_CCX:
			plan_nodes_cpus(p, nodes, rp->anchor);
			break;
		case BIND_SOCKET:
			plan_socket_cpus(p, rp, rp->anchor);
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
plan_unnest(struct plan *p)
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
plan_peer_index(const struct plan *p, int r, int *idx, int *cnt)
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
plan_split(const struct plan *p, hwloc_const_cpuset_t anchor, int i, int k,
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

/* Give every rank its cpuset (a share of its anchor) and memory nodes. */
static void
plan_cpusets(struct plan *p)
{
	struct rank_plan *rp;
	int r, i, k;

	if (p->mode == BIND_NONE)
		return;
	if (bind_modes[p->mode].split && p->mode != BIND_CORES)
		plan_unnest(p);
	for (r = 0; r < p->nproc; r++) {
		rp = &p->r[r];
		rp->cpuset = hwloc_bitmap_alloc();
		plan_peer_index(p, r, &i, &k);
		if (bind_modes[p->mode].split)
			rp->shared = plan_split(p, rp->anchor, i, k,
			    rp->cpuset);
		else if (p->mode == BIND_CCX)
			plan_ccx_cpus(p, rp->anchor, i, rp->cpuset);
		else
			hwloc_bitmap_copy(rp->cpuset, rp->anchor);
		hwloc_cpuset_to_nodeset(p->topo, rp->cpuset, rp->nodeset);
	}
}

/* Check mode against the GPUs found; -1 with err. */
static int
plan_check_gpus(const struct plan *p, char *err, size_t errlen)
{
	if (p->ngpu > 0 || !bind_modes[p->mode].needs_gpu)
		return 0;
	snprintf(err, errlen, "%s=%s binds ranks near their GPU but no GPU "
	    "was found; use --cpu-bind=numa, cores or none",
	    bind_modes[p->mode].cpu_bind != NULL ? "--cpu-bind" :
	    "--numa-binding", bind_modes[p->mode].cpu_bind != NULL ?
	    bind_modes[p->mode].cpu_bind : bind_modes[p->mode].numa_binding);
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
		if (p->r[r].anchor == NULL || p->r[r].nodeset == NULL)
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

	if (mode == -1 || bind_modes[mode].needs_gpu) {
		len = strlen(err);
		if (p->topo == NULL && len + 1 < errlen)
			snprintf(err + len, errlen - len, "; --cpu-bind=none, "
			    "cores or numa places ranks without GPUs");
		return -1;
	}
	if (p->topo == NULL && (p->topo = placement_topology(err,
	    errlen)) == NULL)
		return -1;
	log_warnx("placement: %s; ranks get no GPU", err);
	if ((*l = calloc(1, sizeof(**l))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	(*l)->source = "none";
	return 0;
}

/* Build the plan. */
struct plan *
plan_new(int nproc, const struct plan_opts *o, char *err, size_t errlen)
{
	struct gpu_list *l = NULL;
	struct plan *p;
	int mode, mem, own, r;

	if (nproc < 1 || nproc > PLAN_NPROC_MAX) {
		snprintf(err, errlen, "bad number of local ranks %d", nproc);
		return NULL;
	}
	if (plan_mode(o, &mode, err, errlen) == -1 ||
	    plan_mem_vis(o, &mem, &own, err, errlen) == -1)
		return NULL;
	if ((p = calloc(1, sizeof(*p))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	p->nproc = nproc;
	p->mem = mem;
	p->mem_asked = o->mem_bind != NULL;
	p->own = own;
	if (placement_discover(&p->topo, &l, err, errlen) == -1 &&
	    plan_without_gpus(p, mode, &l, err, errlen) == -1)
		goto fail;
	p->ngpu = l->nvis;
	p->source = l->source;
	p->mode = mode != -1 ? mode : p->ngpu > 0 ? BIND_GPU : BIND_NONE;
	p->nnuma = hwloc_get_nbobjs_by_type(p->topo, HWLOC_OBJ_NUMANODE);
	if (plan_check_gpus(p, err, errlen) == -1)
		goto fail;
	if (plan_alloc_ranks(p) == -1) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	for (r = 0; r < nproc; r++)
		plan_assign_gpu(p, l, r);
	plan_anchors(p);
	plan_cpusets(p);
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
	}
	free(p->r);
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

/* Rank r's GPU as a CUDA_VISIBLE_DEVICES entry, or NULL. */
const char *
plan_gpu_token(const struct plan *p, int r)
{
	return r >= 0 && r < p->nproc && p->r[r].gpu >= 0 ? p->r[r].token :
	    NULL;
}

/*
 * Whether bound ranks get a memory policy: by default only where there is
 * a choice (several NUMA nodes); always when --mem-bind was given.
 */
static int
plan_binds_memory(const struct plan *p)
{
	return p->mode != BIND_NONE && p->mem != MEM_NONE &&
	    (p->nnuma > 1 || p->mem_asked);
}

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
plan_membind(const struct plan *p, hwloc_const_nodeset_t nodes)
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
	return plan_membind(p, rp->nodeset);
}

/* A bitmap in list form ("0-5,48-53") into buf. */
static const char *
plan_list(hwloc_const_bitmap_t b, char *buf, size_t len)
{
	if (b == NULL || hwloc_bitmap_iszero(b))
		snprintf(buf, len, "-");
	else if (hwloc_bitmap_list_snprintf(buf, len, b) < 0)
		snprintf(buf, len, "?");
	return buf;
}

/* Call cb for each CGRUN_* variable of rank r. */
int
plan_env(const struct plan *p, int r,
    int (*cb)(void *, const char *, const char *), void *arg)
{
	const struct rank_plan *rp;
	char buf[4096], num[16];
	int rc;

	if (r < 0 || r >= p->nproc)
		return -1;
	rp = &p->r[r];
#define PLAN_SET(name, value) do {					\
	if ((rc = cb(arg, (name), (value))) != 0)			\
		return rc;						\
} while (0)
	PLAN_SET("CGRUN_CPU_BIND", bind_modes[p->mode].name);
	PLAN_SET("CGRUN_MEM_BIND", plan_binds_memory(p) ? mem_names[p->mem] :
	    "none");
	if (rp->gpu >= 0) {
		snprintf(num, sizeof(num), "%d", rp->gpu);
		PLAN_SET("CGRUN_GPU", num);
		PLAN_SET("CGRUN_GPU_BUS_ID", rp->busid);
		if (rp->uuid[0] != '\0')
			PLAN_SET("CGRUN_GPU_UUID", rp->uuid);
		PLAN_SET("CGRUN_LOCAL_DEVICE", p->own ? "0" : num);
		if (p->own)
			PLAN_SET("CUDA_VISIBLE_DEVICES", rp->token);
	}
	if (!hwloc_bitmap_iszero(rp->nodeset))
		PLAN_SET("CGRUN_NUMA_NODE", plan_list(rp->nodeset, buf,
		    sizeof(buf)));
	if (rp->cpuset != NULL)
		PLAN_SET("CGRUN_CPUSET", plan_list(rp->cpuset, buf,
		    sizeof(buf)));
#undef PLAN_SET
	return 0;
}

/* Rank r's plan as one text line (no newline) into line. */
static void
plan_line(const struct plan *p, int r, char *line, size_t len)
{
	const struct rank_plan *rp = &p->r[r];
	char gpu[16], cpus[2048], nodes[256];

	if (rp->gpu >= 0)
		snprintf(gpu, sizeof(gpu), "%d", rp->gpu);
	else
		snprintf(gpu, sizeof(gpu), "none");
	snprintf(line, len, "local_rank=%d gpu=%s bus_id=%s numa=%s cpus=%s%s",
	    r, gpu, rp->gpu >= 0 ? rp->busid : "none",
	    plan_list(rp->nodeset, nodes, sizeof(nodes)),
	    rp->cpuset != NULL ? plan_list(rp->cpuset, cpus, sizeof(cpus)) :
	    "unbound", rp->shared ? " shared=yes" : "");
}

/* The summary line of the plan into line. */
static void
plan_header(const struct plan *p, char *line, size_t len)
{
	snprintf(line, len, "placement nproc=%d gpus=%d gpu_source=%s "
	    "cpu_bind=%s mem_bind=%s gpu_visibility=%s", p->nproc, p->ngpu,
	    p->source, bind_modes[p->mode].name, plan_binds_memory(p) ?
	    mem_names[p->mem] : "none", p->own ? "own" : "all");
}

/* A bitmap as a JSON array of its indexes. */
static json_object *
plan_json_list(hwloc_const_bitmap_t b)
{
	json_object *a = json_object_new_array();
	int i;

	hwloc_bitmap_foreach_begin(i, b)
		json_object_array_add(a, json_object_new_int(i));
	hwloc_bitmap_foreach_end();
	return a;
}

/* Rank r's plan as a JSON object. */
static json_object *
plan_json_rank(const struct plan *p, int r)
{
	const struct rank_plan *rp = &p->r[r];
	json_object *o = json_object_new_object();
	char buf[2048];
	int g = rp->gpu >= 0;

	json_object_object_add(o, "local_rank", json_object_new_int(r));
	json_object_object_add(o, "gpu", g ? json_object_new_int(rp->gpu) :
	    NULL);
	json_object_object_add(o, "bus_id", g ?
	    json_object_new_string(rp->busid) : NULL);
	json_object_object_add(o, "uuid", g && rp->uuid[0] ?
	    json_object_new_string(rp->uuid) : NULL);
	json_object_object_add(o, "cuda_visible_devices", g && p->own ?
	    json_object_new_string(rp->token) : NULL);
	json_object_object_add(o, "local_device", g ?
	    json_object_new_int(p->own ? 0 : rp->gpu) : NULL);
	json_object_object_add(o, "numa", plan_json_list(rp->nodeset));
	json_object_object_add(o, "cpuset", rp->cpuset != NULL ?
	    json_object_new_string(plan_list(rp->cpuset, buf, sizeof(buf))) :
	    NULL);
	json_object_object_add(o, "cpus", rp->cpuset != NULL ?
	    plan_json_list(rp->cpuset) : NULL);
	json_object_object_add(o, "shared", json_object_new_boolean(
	    rp->shared));
	return o;
}

/* The whole plan as a JSON object. */
static json_object *
plan_json(const struct plan *p)
{
	json_object *o = json_object_new_object(), *a;
	int r;

	json_object_object_add(o, "nproc", json_object_new_int(p->nproc));
	json_object_object_add(o, "gpus", json_object_new_int(p->ngpu));
	json_object_object_add(o, "gpu_source",
	    json_object_new_string(p->source));
	json_object_object_add(o, "cpu_bind",
	    json_object_new_string(bind_modes[p->mode].name));
	json_object_object_add(o, "mem_bind", json_object_new_string(
	    plan_binds_memory(p) ? mem_names[p->mem] : "none"));
	json_object_object_add(o, "gpu_visibility",
	    json_object_new_string(p->own ? "own" : "all"));
	a = json_object_new_array();
	for (r = 0; r < p->nproc; r++)
		json_object_array_add(a, plan_json_rank(p, r));
	json_object_object_add(o, "ranks", a);
	return o;
}

/* Print the plan: a "# " summary then one line per rank, or one JSON line. */
void
plan_print(const struct plan *p, FILE *fp, int json)
{
	char line[4096];
	json_object *o;
	int r;

	if (json) {
		o = plan_json(p);
		fprintf(fp, "%s\n", json_object_to_json_string_ext(o,
		    JSON_C_TO_STRING_PLAIN));
		json_object_put(o);
		return;
	}
	plan_header(p, line, sizeof(line));
	fprintf(fp, "# %s\n", line);
	for (r = 0; r < p->nproc; r++) {
		plan_line(p, r, line, sizeof(line));
		fprintf(fp, "%s\n", line);
	}
}

/* The plan through log_info, for the -v start-up log. */
void
plan_log(const struct plan *p)
{
	char line[4096];
	int r;

	if (log_getlevel() < LOG_LVL_INFO)
		return;
	plan_header(p, line, sizeof(line));
	log_info("%s", line);
	for (r = 0; r < p->nproc; r++) {
		plan_line(p, r, line, sizeof(line));
		log_info("placement %s", line);
	}
}

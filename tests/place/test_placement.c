/*
 * test_placement.c: the per-rank plan on the fixture machines
 * (tests/place/topologies, loaded through HWLOC_XMLFILE): one rank per GPU, two
 * per GPU, fewer ranks than GPUs, CUDA_VISIBLE_DEVICES subsets and
 * reorders, uneven GPUs, sub-NUMA groups, a CPU-only machine, more ranks
 * than CPUs; torchrun's --numa-binding modes; gpu-visibility own; the
 * text and JSON plans; and, on the real machine, that a child bound with
 * plan_apply_child reads back (sched_getaffinity) the cpuset it was given.
 *
 * Expected cpus and NUMA nodes come from the fixtures' documented facts
 * (tests/place/topologies/README.md), not from the code under test.
 */
#include <check.h>
#include <errno.h>
#include <json.h>
#include <libgen.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hwloc.h>

#include "gpu.h"
#include "helper_gpu.h"
#include "options.h"
#include "placement.h"
#include "round.h"
#include "topology.h"
#include "worker_env.h"
#include "helper_main.h"

/* Facts of the fixtures. */
#define G4_PKG0	"0-23,48-71"
#define G4_PKG1	"24-47,72-95"
static const char *const g4_bus[] = { "0000:18:00.0", "0000:19:00.0",
    "0000:35:00.0", "0000:36:00.0", "0000:e7:00.0", "0000:e8:00.0",
    "0000:f4:00.0", "0000:f5:00.0" };

static char err[512];

/* Each test starts from a clean environment: no NVML, no CUDA variables. */
static void
setup(void)
{
	setenv("CGRUN_NVML_LIBRARY", "none", 1);
	unsetenv("CUDA_VISIBLE_DEVICES");
	unsetenv("CUDA_DEVICE_ORDER");
	unsetenv("HWLOC_XMLFILE");
	unsetenv("FAKE_NVML_GPUS");
}

/* A plan of nproc ranks on a fixture machine (NULL: the real one). */
static struct plan *
mkplan(const char *machine, int nproc, const char *cpu_bind,
    const char *numa_binding, const char *vis)
{
	struct plan_opts o;
	struct plan *p;

	memset(&o, 0, sizeof(o));
	o.cpu_bind = cpu_bind;
	o.numa_binding = numa_binding;
	o.gpu_visibility = vis;
	if (machine != NULL)
		setenv("HWLOC_XMLFILE", gpu_fixture(machine), 1);
	p = plan_new(nproc, &o, err, sizeof(err));
	ck_assert_msg(p != NULL, "plan_new: %s", err);
	ck_assert_int_eq(plan_nproc(p), nproc);
	return p;
}

/*
 * The value rank r gets for a variable, or NULL: the plan's description
 * of the rank, named as workers see it (worker_env.c, only the rank's own
 * variables).  The value is a copy that stays valid for the next three
 * calls (callers compare one value with another).
 */
static const char *
env(const struct plan *p, int r, const char *name)
{
	static char ring[4][PLAN_LIST_MAX];
	static int next;
	struct plan_rank_env pe;
	struct cgrun_options o;
	struct round_info ri;
	struct worker_env_in in;
	size_t n = strlen(name);
	char **vars, **v, *found = NULL;

	memset(&o, 0, sizeof(o));
	memset(&ri, 0, sizeof(ri));
	memset(&in, 0, sizeof(in));
	ri.local_world_size = plan_nproc(p);
	in.opts = &o;
	in.round = &ri;
	in.lr = r;
	in.error_file = "";
	in.place = &pe;
	ck_assert_int_eq(plan_rank_env(p, r, &pe), 0);
	ck_assert_ptr_nonnull(vars = worker_env_rank(&in));
	for (v = vars; *v != NULL && found == NULL; v++)
		if (strncmp(*v, name, n) == 0 && (*v)[n] == '=') {
			found = ring[next++ % 4];
			snprintf(found, PLAN_LIST_MAX, "%s", *v + n + 1);
		}
	worker_env_free(vars);
	return found;
}

/* A cpu list as a bitmap (caller frees). */
static hwloc_bitmap_t
bits(const char *list)
{
	hwloc_bitmap_t b = hwloc_bitmap_alloc();

	ck_assert_ptr_nonnull(list);
	ck_assert_int_eq(hwloc_bitmap_list_sscanf(b, list), 0);
	return b;
}

/* Rank r's cpuset as a bitmap. */
static hwloc_bitmap_t
cpus_of(const struct plan *p, int r)
{
	const char *v = env(p, r, "CGRUN_CPUSET");

	ck_assert_msg(v != NULL, "rank %d has no CGRUN_CPUSET", r);
	return bits(v);
}

/* Rank r's GPU bus id and NUMA node are as expected; cpus inside within. */
static void
expect_rank(const struct plan *p, int r, const char *bus, const char *numa,
    const char *within, int npu)
{
	hwloc_bitmap_t c = cpus_of(p, r), w = bits(within);
	const char *v;

	if (bus != NULL) {
		v = env(p, r, "CGRUN_GPU_BUS_ID");
		ck_assert_msg(v != NULL && strcmp(v, bus) == 0,
		    "rank %d bus %s, want %s", r, v ? v : "none", bus);
	}
	v = env(p, r, "CGRUN_NUMA_NODE");
	ck_assert_msg(v != NULL && strcmp(v, numa) == 0,
	    "rank %d numa %s, want %s", r, v ? v : "none", numa);
	ck_assert_msg(hwloc_bitmap_isincluded(c, w), "rank %d cpus %s not "
	    "within %s", r, env(p, r, "CGRUN_CPUSET"), within);
	if (npu > 0)
		ck_assert_msg(hwloc_bitmap_weight(c) == npu, "rank %d has %d "
		    "cpus, want %d", r, hwloc_bitmap_weight(c), npu);
	hwloc_bitmap_free(c);
	hwloc_bitmap_free(w);
}

/* Invariant: no two ranks' cpusets overlap. */
static void
expect_disjoint(const struct plan *p)
{
	hwloc_bitmap_t a, b;
	int r, s;

	for (r = 0; r < plan_nproc(p); r++)
		for (s = r + 1; s < plan_nproc(p); s++) {
			a = cpus_of(p, r);
			b = cpus_of(p, s);
			ck_assert_msg(!hwloc_bitmap_intersects(a, b), "ranks %d "
			    "and %d overlap", r, s);
			hwloc_bitmap_free(a);
			hwloc_bitmap_free(b);
		}
}

/* The union of ranks [lo, hi)'s cpusets equals list. */
static void
expect_union(const struct plan *p, int lo, int hi, const char *list)
{
	hwloc_bitmap_t u = hwloc_bitmap_alloc(), c, w = bits(list);
	int r;

	for (r = lo; r < hi; r++) {
		c = cpus_of(p, r);
		hwloc_bitmap_or(u, u, c);
		hwloc_bitmap_free(c);
	}
	ck_assert_msg(hwloc_bitmap_isequal(u, w), "ranks %d-%d do not cover "
	    "%s", lo, hi - 1, list);
	hwloc_bitmap_free(u);
	hwloc_bitmap_free(w);
}

START_TEST(g4dn_one_per_gpu)
{
	struct plan *p = mkplan("g4dn-2socket-8gpu", 8, NULL, NULL, NULL);
	int r;

	ck_assert_str_eq(env(p, 0, "CGRUN_CPU_BIND"), "gpu");
	for (r = 0; r < 8; r++) {
		expect_rank(p, r, g4_bus[r], r < 4 ? "0" : "1",
		    r < 4 ? G4_PKG0 : G4_PKG1, 12);
		ck_assert_int_eq(plan_gpu(p, r), r);
	}
	expect_disjoint(p);
	expect_union(p, 0, 4, G4_PKG0);
	expect_union(p, 4, 8, G4_PKG1);
	/* whole cores: both hyperthreads of a core go to the same rank */
	ck_assert_str_eq(env(p, 0, "CGRUN_CPUSET"), "0-5,48-53");
	plan_free(p);
}
END_TEST

START_TEST(g4dn_two_per_gpu)
{
	struct plan *p = mkplan("g4dn-2socket-8gpu", 16, NULL, NULL, NULL);
	int r;

	for (r = 0; r < 16; r++) {
		ck_assert_int_eq(plan_gpu(p, r), r % 8);
		expect_rank(p, r, g4_bus[r % 8], r % 8 < 4 ? "0" : "1",
		    r % 8 < 4 ? G4_PKG0 : G4_PKG1, 6);
	}
	expect_disjoint(p);
	plan_free(p);
}
END_TEST

START_TEST(g4dn_fewer_ranks)
{
	struct plan *p = mkplan("g4dn-2socket-8gpu", 2, NULL, NULL, NULL);

	expect_rank(p, 0, g4_bus[0], "0", G4_PKG0, 24);
	expect_rank(p, 1, g4_bus[1], "0", G4_PKG0, 24);
	expect_disjoint(p);
	expect_union(p, 0, 2, G4_PKG0);
	plan_free(p);
}
END_TEST

START_TEST(g4dn_cvd_subset_reorder)
{
	struct plan *p;
	char e[256];

	setenv("CUDA_VISIBLE_DEVICES", "5,1,4", 1);
	setenv("HWLOC_XMLFILE", gpu_fixture("g4dn-2socket-8gpu"), 1);
	ck_assert_int_eq(placement_nproc("gpu", e, sizeof(e)), 3);
	p = mkplan("g4dn-2socket-8gpu", 3, NULL, NULL, NULL);
	expect_rank(p, 0, g4_bus[5], "1", G4_PKG1, 24);
	expect_rank(p, 1, g4_bus[1], "0", G4_PKG0, 48);
	expect_rank(p, 2, g4_bus[4], "1", G4_PKG1, 24);
	expect_disjoint(p);
	/* CGRUN_GPU is the ordinal the worker sees, not the physical one */
	ck_assert_str_eq(env(p, 2, "CGRUN_GPU"), "2");
	ck_assert_ptr_null(env(p, 2, "CUDA_VISIBLE_DEVICES"));
	plan_free(p);
}
END_TEST

START_TEST(g4dn_cvd_cut)
{
	struct plan *p;
	char e[256];

	/* CUDA stops at the out-of-range 9: two GPUs */
	setenv("CUDA_VISIBLE_DEVICES", "7,6,9,0", 1);
	setenv("HWLOC_XMLFILE", gpu_fixture("g4dn-2socket-8gpu"), 1);
	ck_assert_int_eq(placement_nproc("gpu", e, sizeof(e)), 2);
	p = mkplan("g4dn-2socket-8gpu", 2, NULL, NULL, NULL);
	expect_rank(p, 0, g4_bus[7], "1", G4_PKG1, 24);
	expect_rank(p, 1, g4_bus[6], "1", G4_PKG1, 24);
	plan_free(p);
	setenv("CUDA_VISIBLE_DEVICES", "", 1);
	ck_assert_int_eq(placement_nproc("gpu", e, sizeof(e)), -1);
	ck_assert_ptr_nonnull(strstr(e, "no GPU found"));
}
END_TEST

START_TEST(xeon_uneven)
{
	struct plan *p;
	char e[256];

	setenv("HWLOC_XMLFILE", gpu_fixture("xeon-2socket-3gpu-uneven"), 1);
	ck_assert_int_eq(placement_nproc("gpu", e, sizeof(e)), 3);
	ck_assert_int_eq(placement_nproc("auto", e, sizeof(e)), 3);
	p = mkplan("xeon-2socket-3gpu-uneven", 3, NULL, NULL, NULL);
	/* by bus id, not by the fixture's cuda0 OS device on 84:00.0 */
	expect_rank(p, 0, "0000:03:00.0", "0", "0-7,16-23", 16);
	expect_rank(p, 1, "0000:83:00.0", "1", "8-15,24-31", 8);
	expect_rank(p, 2, "0000:84:00.0", "1", "8-15,24-31", 8);
	expect_disjoint(p);
	expect_union(p, 1, 3, "8-15,24-31");
	plan_free(p);
	setenv("CUDA_VISIBLE_DEVICES", "2", 1);
	p = mkplan("xeon-2socket-3gpu-uneven", 1, NULL, NULL, NULL);
	expect_rank(p, 0, "0000:84:00.0", "1", "8-15,24-31", 16);
	plan_free(p);
}
END_TEST

START_TEST(snc_groups)
{
	struct plan *p = mkplan("snc-2socket-4numa-4gpu", 4, NULL, NULL, NULL);

	/* GPU under NUMA 0's group */
	expect_rank(p, 0, "0000:10:00.0", "0", "0-6", 7);
	/* GPU on package 0 itself: the package minus NUMA 0's GPU cpus */
	expect_rank(p, 1, "0000:20:00.0", "1", "7-13", 7);
	/* two GPUs under NUMA 3 share its 7 cores */
	expect_rank(p, 2, "0000:c1:00.0", "3", "21-27", 0);
	expect_rank(p, 3, "0000:c2:00.0", "3", "21-27", 0);
	expect_disjoint(p);
	expect_union(p, 2, 4, "21-27");
	plan_free(p);
}
END_TEST

START_TEST(numa_binding_modes)
{
	struct plan *p;
	int r;

	p = mkplan("g4dn-2socket-8gpu", 8, NULL, "node", NULL);
	ck_assert_str_eq(env(p, 0, "CGRUN_CPU_BIND"), "numa");
	for (r = 0; r < 8; r++)
		expect_rank(p, r, g4_bus[r], r < 4 ? "0" : "1",
		    r < 4 ? G4_PKG0 : G4_PKG1, 48);
	plan_free(p);
	p = mkplan("snc-2socket-4numa-4gpu", 4, NULL, "socket", NULL);
	expect_rank(p, 0, "0000:10:00.0", "0-1", "0-13", 14);
	expect_rank(p, 3, "0000:c2:00.0", "2-3", "14-27", 14);
	plan_free(p);
	p = mkplan("snc-2socket-4numa-4gpu", 4, NULL, "node", NULL);
	expect_rank(p, 1, "0000:20:00.0", "0-1", "0-13", 14);
	expect_rank(p, 2, "0000:c1:00.0", "3", "21-27", 7);
	plan_free(p);
	p = mkplan("g4dn-2socket-8gpu", 8, NULL, "exclusive", NULL);
	for (r = 0; r < 8; r++)
		expect_rank(p, r, g4_bus[r], r < 4 ? "0" : "1",
		    r < 4 ? G4_PKG0 : G4_PKG1, 12);
	expect_disjoint(p);
	plan_free(p);
	/* g4dn has one L3 per package: the complex is the package */
	p = mkplan("g4dn-2socket-8gpu", 2, NULL, "core-complex", NULL);
	expect_rank(p, 0, g4_bus[0], "0", G4_PKG0, 48);
	plan_free(p);
	/* --cpu-bind=numa is --numa-binding=node */
	p = mkplan("xeon-2socket-3gpu-uneven", 3, "numa", NULL, NULL);
	expect_rank(p, 2, "0000:84:00.0", "1", "8-15,24-31", 16);
	plan_free(p);
}
END_TEST

START_TEST(cpu_only_machine)
{
	struct plan_opts o;
	struct plan *p;
	char e[256];
	int r;

	setenv("HWLOC_XMLFILE", gpu_fixture("haswell-2socket-4numa-cpuonly"), 1);
	ck_assert_int_eq(placement_nproc("gpu", e, sizeof(e)), -1);
	ck_assert_ptr_nonnull(strstr(e, "no GPU found"));
	ck_assert_int_eq(placement_nproc("auto", e, sizeof(e)),
	    (int)sysconf(_SC_NPROCESSORS_ONLN));
	ck_assert_int_eq(placement_nproc("cpu", e, sizeof(e)),
	    (int)sysconf(_SC_NPROCESSORS_ONLN));
	/* default: no binding, no GPU variables */
	p = mkplan("haswell-2socket-4numa-cpuonly", 4, NULL, NULL, NULL);
	ck_assert_str_eq(env(p, 0, "CGRUN_CPU_BIND"), "none");
	ck_assert_ptr_null(env(p, 0, "CGRUN_CPUSET"));
	ck_assert_ptr_null(env(p, 0, "CGRUN_GPU"));
	ck_assert_int_eq(plan_gpu(p, 0), -1);
	plan_free(p);
	/* cores: an even, exclusive share each (7 cores = one NUMA node) */
	p = mkplan("haswell-2socket-4numa-cpuonly", 4, "cores", NULL, NULL);
	expect_rank(p, 0, NULL, "0", "0-6", 7);
	expect_rank(p, 1, NULL, "1", "7-13", 7);
	expect_rank(p, 2, NULL, "2", "14-20", 7);
	expect_rank(p, 3, NULL, "3", "21-27", 7);
	plan_free(p);
	/* numa: ranks spread over the nodes in blocks */
	p = mkplan("haswell-2socket-4numa-cpuonly", 2, "numa", NULL, NULL);
	expect_rank(p, 0, NULL, "0", "0-6", 7);
	expect_rank(p, 1, NULL, "2", "14-20", 7);
	plan_free(p);
	/* GPU-based modes: a clear error */
	memset(&o, 0, sizeof(o));
	o.cpu_bind = "gpu";
	ck_assert_ptr_null(plan_new(2, &o, err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "no GPU"));
	o.cpu_bind = NULL;
	o.numa_binding = "exclusive";
	ck_assert_ptr_null(plan_new(2, &o, err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "--numa-binding=exclusive"));
	/* more ranks than cpus: every rank still gets one, flagged shared */
	p = mkplan("haswell-2socket-4numa-cpuonly", 30, "cores", NULL, NULL);
	for (r = 0; r < 30; r++)
		expect_rank(p, r, NULL, r % 28 < 7 ? "0" : r % 28 < 14 ? "1" :
		    r % 28 < 21 ? "2" : "3", "0-27", 1);
	ck_assert_str_eq(env(p, 0, "CGRUN_CPUSET"), "0");
	ck_assert_str_eq(env(p, 28, "CGRUN_CPUSET"), "0");
	ck_assert_str_eq(env(p, 29, "CGRUN_CPUSET"), "1");
	expect_union(p, 0, 28, "0-27");
	plan_free(p);
}
END_TEST

START_TEST(visibility_own)
{
	struct plan_rank_env pe;
	struct plan *p;

	setenv("CUDA_VISIBLE_DEVICES", "5,1", 1);
	p = mkplan("g4dn-2socket-8gpu", 4, NULL, NULL, "own");
	ck_assert_int_eq(plan_rank_env(p, 4, &pe), -1);	/* no rank 4 */
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(plan_rank_env(p, -1, &pe), -1);
	ck_assert_str_eq(env(p, 0, "CUDA_VISIBLE_DEVICES"), "5");
	ck_assert_str_eq(env(p, 1, "CUDA_VISIBLE_DEVICES"), "1");
	ck_assert_str_eq(env(p, 2, "CUDA_VISIBLE_DEVICES"), "5");
	ck_assert_str_eq(env(p, 3, "CGRUN_LOCAL_DEVICE"), "0");
	ck_assert_str_eq(env(p, 3, "CGRUN_GPU"), "1");
	plan_free(p);
	/* all: the worker picks cuda:LOCAL_RANK (round robin) */
	p = mkplan("g4dn-2socket-8gpu", 4, NULL, NULL, "all");
	ck_assert_ptr_null(env(p, 0, "CUDA_VISIBLE_DEVICES"));
	ck_assert_str_eq(env(p, 3, "CGRUN_LOCAL_DEVICE"), "1");
	plan_free(p);
	/* with NVML: named by UUID, independent of the device order */
	unsetenv("CUDA_VISIBLE_DEVICES");
	setenv("CGRUN_NVML_LIBRARY", gpu_fake_nvml(), 1);
	p = mkplan("g4dn-2socket-8gpu", 8, NULL, NULL, "own");
	ck_assert_str_eq(env(p, 6, "CUDA_VISIBLE_DEVICES"),
	    "GPU-fake0000-0000-0000-0000-000000000006");
	ck_assert_str_eq(env(p, 6, "CGRUN_GPU_UUID"),
	    "GPU-fake0000-0000-0000-0000-000000000006");
	expect_rank(p, 6, g4_bus[6], "1", G4_PKG1, 12);
	plan_free(p);
}
END_TEST

START_TEST(nvml_order_places)
{
	struct plan *p;

	/* FASTEST_FIRST: 84 (9.0), 83 (8.0), then 03 (7.0) */
	setenv("CGRUN_NVML_LIBRARY", gpu_fake_nvml(), 1);
	setenv("FAKE_NVML_GPUS", "00000000:03:00.0,GPU-a,7.0,448;"
	    "00000000:83:00.0,GPU-b,8.0,448;00000000:84:00.0,GPU-c,9.0,448", 1);
	p = mkplan("xeon-2socket-3gpu-uneven", 3, NULL, NULL, NULL);
	expect_rank(p, 0, "0000:84:00.0", "1", "8-15,24-31", 8);
	expect_rank(p, 1, "0000:83:00.0", "1", "8-15,24-31", 8);
	expect_rank(p, 2, "0000:03:00.0", "0", "0-7,16-23", 16);
	plan_free(p);
	setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID", 1);
	p = mkplan("xeon-2socket-3gpu-uneven", 3, NULL, NULL, NULL);
	expect_rank(p, 0, "0000:03:00.0", "0", "0-7,16-23", 16);
	expect_rank(p, 2, "0000:84:00.0", "1", "8-15,24-31", 8);
	plan_free(p);
}
END_TEST

/* Lines in a file. */
static int
count_lines(const char *path)
{
	FILE *fp = fopen(path, "r");
	int c, n = 0;

	if (fp == NULL)
		return 0;
	while ((c = fgetc(fp)) != EOF)
		n += c == '\n';
	fclose(fp);
	return n;
}

START_TEST(discovery_once)
{
	char log[] = "/tmp/cgrun-nvml-init.XXXXXX", e[256];
	struct plan *p;
	int fd = mkstemp(log);

	ck_assert_int_ge(fd, 0);
	close(fd);
	setenv("FAKE_NVML_INITLOG", log, 1);
	setenv("CGRUN_NVML_LIBRARY", gpu_fake_nvml(), 1);
	setenv("HWLOC_XMLFILE", gpu_fixture("g4dn-2socket-8gpu"), 1);
	/* --nproc-per-node=gpu then the plan: NVML initialised once */
	ck_assert_int_eq(placement_nproc("gpu", e, sizeof(e)), 8);
	p = mkplan("g4dn-2socket-8gpu", 8, NULL, NULL, NULL);
	ck_assert_int_eq(count_lines(log), 1);
	plan_free(p);
	/* what discovery depends on changed in between: discovered again */
	ck_assert_int_eq(placement_nproc("gpu", e, sizeof(e)), 8);
	setenv("CUDA_VISIBLE_DEVICES", "3", 1);
	p = mkplan("g4dn-2socket-8gpu", 1, NULL, NULL, NULL);
	ck_assert_int_eq(count_lines(log), 3);
	expect_rank(p, 0, g4_bus[3], "0", G4_PKG0, 48);
	plan_free(p);
	unlink(log);
}
END_TEST

START_TEST(gpus_unknowable)
{
	struct plan *p;
	char e[256];

	/* UUIDs without NVML: GPU placement is impossible, and says so */
	setenv("CUDA_VISIBLE_DEVICES", "GPU-1234abcd", 1);
	setenv("HWLOC_XMLFILE", gpu_fixture("xeon-2socket-3gpu-uneven"), 1);
	ck_assert_int_eq(placement_nproc("gpu", e, sizeof(e)), -1);
	ck_assert_ptr_nonnull(strstr(e, "UUID"));
	{
		struct plan_opts o;

		memset(&o, 0, sizeof(o));
		ck_assert_ptr_null(plan_new(2, &o, err, sizeof(err)));
		ck_assert_ptr_nonnull(strstr(err, "--cpu-bind=none"));
	}
	/* a binding that needs no GPU still works, ranks get none */
	p = mkplan("xeon-2socket-3gpu-uneven", 2, "cores", NULL, NULL);
	ck_assert_int_eq(plan_gpu(p, 0), -1);
	expect_rank(p, 1, NULL, "1", "8-15,24-31", 16);
	plan_free(p);
	p = mkplan("xeon-2socket-3gpu-uneven", 2, "none", NULL, NULL);
	ck_assert_ptr_null(env(p, 1, "CGRUN_CPUSET"));
	plan_free(p);
}
END_TEST

START_TEST(bad_options)
{
	struct plan_opts o;
	char e[256];

	memset(&o, 0, sizeof(o));
	ck_assert_int_eq(plan_opts_check(&o, e, sizeof(e)), 0);
	o.cpu_bind = "cores";
	o.gpu_visibility = "own";
	o.mem_bind = "preferred";
	ck_assert_int_eq(plan_opts_check(&o, e, sizeof(e)), 0);
	o.cpu_bind = "sockets";
	ck_assert_int_eq(plan_opts_check(&o, e, sizeof(e)), -1);
	ck_assert_ptr_nonnull(strstr(e, "--cpu-bind"));
	o.cpu_bind = NULL;
	o.numa_binding = "nodes";
	ck_assert_int_eq(plan_opts_check(&o, e, sizeof(e)), -1);
	ck_assert_ptr_nonnull(strstr(e, "--numa-binding"));
	o.numa_binding = "core-complex";
	o.gpu_visibility = "mine";
	ck_assert_int_eq(plan_opts_check(&o, e, sizeof(e)), -1);
	ck_assert_ptr_nonnull(strstr(e, "--gpu-visibility"));
	o.gpu_visibility = NULL;
	o.mem_bind = "strict";
	ck_assert_int_eq(plan_opts_check(&o, e, sizeof(e)), -1);
	ck_assert_ptr_nonnull(strstr(e, "--mem-bind"));
	ck_assert_int_eq(placement_nproc("0", e, sizeof(e)), -1);
	ck_assert_int_eq(placement_nproc("-3", e, sizeof(e)), -1);
	ck_assert_int_eq(placement_nproc("4x", e, sizeof(e)), -1);
	ck_assert_int_eq(placement_nproc("99999999999", e, sizeof(e)), -1);
	ck_assert_int_eq(placement_nproc("gpus", e, sizeof(e)), -1);
	ck_assert_int_eq(placement_nproc("12", e, sizeof(e)), 12);
	ck_assert_ptr_null(plan_new(0, &o, e, sizeof(e)));
}
END_TEST

/* Print the plan into a string (caller frees). */
static char *
printed(const struct plan *p, int json)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(fp);
	plan_print(p, fp, json);
	fclose(fp);
	return buf;
}

START_TEST(print_text_and_json)
{
	struct plan *p = mkplan("xeon-2socket-3gpu-uneven", 4, NULL, NULL,
	    NULL);
	json_object *o, *ranks, *r, *v;
	char *text = printed(p, 0), *js = printed(p, 1), *line, *save = NULL;
	int n = 0, i;

	for (line = strtok_r(text, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save), n++)
		if (n > 0)
			ck_assert_int_eq(strncmp(line, "local_rank=", 11), 0);
	ck_assert_int_eq(n, 5);		/* "# placement ..." + 4 ranks */
	ck_assert_ptr_nonnull(strstr(js, "\"nproc\""));
	o = json_tokener_parse(js);
	ck_assert_ptr_nonnull(o);
	ck_assert(json_object_object_get_ex(o, "ranks", &ranks));
	ck_assert_int_eq(json_object_array_length(ranks), 4);
	for (i = 0; i < 4; i++) {
		r = json_object_array_get_idx(ranks, i);
		ck_assert(json_object_object_get_ex(r, "bus_id", &v));
		ck_assert_str_eq(json_object_get_string(v),
		    env(p, i, "CGRUN_GPU_BUS_ID"));
		ck_assert(json_object_object_get_ex(r, "cpuset", &v));
		ck_assert_str_eq(json_object_get_string(v),
		    env(p, i, "CGRUN_CPUSET"));
		ck_assert(json_object_object_get_ex(r, "gpu", &v));
		ck_assert_int_eq(json_object_get_int(v), i % 3);
	}
	/* rank 3 shares GPU 0 with rank 0: each gets half of NUMA 0 */
	r = json_object_array_get_idx(ranks, 3);
	ck_assert(json_object_object_get_ex(r, "cpus", &v));
	ck_assert_int_eq(json_object_array_length(v), 8);
	json_object_put(o);
	free(text);
	free(js);
	plan_free(p);
}
END_TEST

/* The plan's "gpu_source=..." as --dry-run prints it; true if it is src. */
static int
source_is(const struct plan *p, const char *src)
{
	char want[64], *text = printed(p, 0);
	int yes;

	snprintf(want, sizeof(want), " gpu_source=%s ", src);
	yes = strstr(text, want) != NULL;
	free(text);
	return yes;
}

/* A copy of the g4dn fixture whose first GPU is another model (A100). */
static void
mixed_fixture(char *path, size_t len)
{
	FILE *in = fopen(gpu_fixture("g4dn-2socket-8gpu"), "r"), *out;
	char line[4096], *at;
	int done = 0, fd;

	snprintf(path, len, "/tmp/cgrun-mixed-gpus.XXXXXX");
	ck_assert_ptr_nonnull(in);
	ck_assert_int_ge(fd = mkstemp(path), 0);
	ck_assert_ptr_nonnull(out = fdopen(fd, "w"));
	while (fgets(line, sizeof(line), in) != NULL) {
		if (!done && (at = strstr(line, "[10de:1eb8]")) != NULL) {
			memcpy(at, "[10de:20b0]", 11);
			done = 1;
		}
		fputs(line, out);
	}
	fclose(in);
	fclose(out);
	ck_assert(done);
}

/*
 * NVML (slow to start, megabytes of RSS) is loaded only when the plan
 * needs what only it knows: not for a binding that needs no GPU locality
 * with a numeric --nproc-per-node, nor for an empty CUDA_VISIBLE_DEVICES;
 * yes for UUIDs in CUDA_VISIBLE_DEVICES, the default GPU binding,
 * --nproc-per-node=gpu, and GPUs of several models (CUDA's fastest-first
 * order).  The fake NVML counts its nvmlInit calls.
 */
START_TEST(nvml_only_when_needed)
{
	static const char *const lean[] = { "none", "cores", "numa" };
	char log[] = "/tmp/cgrun-nvml-init.XXXXXX", e[256], mixed[64];
	struct plan *p;
	size_t i;
	int fd = mkstemp(log);

	ck_assert_int_ge(fd, 0);
	close(fd);
	setenv("FAKE_NVML_INITLOG", log, 1);
	setenv("CGRUN_NVML_LIBRARY", gpu_fake_nvml(), 1);
	for (i = 0; i < sizeof(lean) / sizeof(lean[0]); i++) {
		p = mkplan("g4dn-2socket-8gpu", 2, lean[i], NULL, NULL);
		ck_assert_int_eq(count_lines(log), 0);
		ck_assert(source_is(p, "hwloc"));
		ck_assert_str_eq(env(p, 1, "CGRUN_GPU_BUS_ID"), g4_bus[1]);
		plan_free(p);
	}
	p = mkplan("g4dn-2socket-8gpu", 2, NULL, "node", NULL);
	ck_assert_int_eq(count_lines(log), 0);
	plan_free(p);
	/* an empty CUDA_VISIBLE_DEVICES: no GPU, nothing asked */
	setenv("CUDA_VISIBLE_DEVICES", "", 1);
	p = mkplan("g4dn-2socket-8gpu", 2, NULL, NULL, NULL);
	ck_assert_int_eq(plan_gpu(p, 0), -1);
	ck_assert(source_is(p, "none"));
	plan_free(p);
	ck_assert_int_eq(placement_nproc("gpu", e, sizeof(e)), -1);
	ck_assert_int_eq(count_lines(log), 0);
	/* a UUID only NVML can resolve */
	setenv("CUDA_VISIBLE_DEVICES",
	    "GPU-fake0000-0000-0000-0000-000000000003", 1);
	p = mkplan("g4dn-2socket-8gpu", 1, "none", NULL, NULL);
	ck_assert_int_eq(count_lines(log), 1);
	ck_assert_str_eq(env(p, 0, "CGRUN_GPU_BUS_ID"), g4_bus[3]);
	plan_free(p);
	unsetenv("CUDA_VISIBLE_DEVICES");
	/* the default binding; --nproc-per-node=gpu (then kept) */
	p = mkplan("g4dn-2socket-8gpu", 2, NULL, NULL, NULL);
	ck_assert_int_eq(count_lines(log), 2);
	ck_assert(source_is(p, "nvml"));
	plan_free(p);
	ck_assert_int_eq(placement_nproc("gpu", e, sizeof(e)), 8);
	p = mkplan("g4dn-2socket-8gpu", 8, "none", NULL, NULL);
	ck_assert_int_eq(count_lines(log), 3);
	plan_free(p);
	/* two models: fastest-first order needs NVML, bus-id order not */
	mixed_fixture(mixed, sizeof(mixed));
	setenv("HWLOC_XMLFILE", mixed, 1);
	p = mkplan(NULL, 2, "none", NULL, NULL);
	ck_assert_int_eq(count_lines(log), 4);
	plan_free(p);
	setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID", 1);
	p = mkplan(NULL, 2, "none", NULL, NULL);
	ck_assert_int_eq(count_lines(log), 4);
	plan_free(p);
	unlink(mixed);
	unlink(log);
}
END_TEST

/* In a child: bind as rank r, return its affinity as a list. */
static void
child_affinity(const struct plan *p, int r, char *out, size_t len)
{
	hwloc_bitmap_t b = hwloc_bitmap_alloc();
	cpu_set_t set;
	int fd[2], c, st;
	ssize_t n;
	pid_t pid;

	ck_assert_int_eq(pipe(fd), 0);
	ck_assert_int_ne(pid = fork(), -1);
	if (pid == 0) {
		char buf[1024] = "";

		close(fd[0]);
		CPU_ZERO(&set);
		if (plan_apply_child(p, r) == 0 &&
		    sched_getaffinity(0, sizeof(set), &set) == 0) {
			for (c = 0; c < CPU_SETSIZE; c++)
				if (CPU_ISSET(c, &set))
					hwloc_bitmap_set(b, (unsigned)c);
			hwloc_bitmap_list_snprintf(buf, sizeof(buf), b);
		}
		(void)!write(fd[1], buf, strlen(buf));
		_exit(0);
	}
	close(fd[1]);
	n = read(fd[0], out, len - 1);
	out[n > 0 ? n : 0] = '\0';
	close(fd[0]);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	hwloc_bitmap_free(b);
}

/* In a child: bind as rank r, return "mode=M nodes=0x..." or "errno=E". */
static void
child_mempolicy(const struct plan *p, int r, char *out, size_t len)
{
	int fd[2], st;
	ssize_t n;
	pid_t pid;

	ck_assert_int_eq(pipe(fd), 0);
	ck_assert_int_ne(pid = fork(), -1);
	if (pid == 0) {
		unsigned long mask[16] = { 0 };
		char buf[128];
		int mode = -1;

		close(fd[0]);
		if (plan_apply_child(p, r) == -1 ||
		    syscall(SYS_get_mempolicy, &mode, mask,
		    sizeof(mask) * 8, NULL, 0UL) == -1)
			snprintf(buf, sizeof(buf), "errno=%d", errno);
		else
			snprintf(buf, sizeof(buf), "mode=%d nodes=0x%lx", mode,
			    mask[0]);
		(void)!write(fd[1], buf, strlen(buf));
		_exit(0);
	}
	close(fd[1]);
	n = read(fd[0], out, len - 1);
	out[n > 0 ? n : 0] = '\0';
	close(fd[0]);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
}

/*
 * The child's memory policy (get_mempolicy) is the one planned: MPOL_BIND
 * (2) for --mem-bind=bind, MPOL_PREFERRED (1) or, on kernels that have it,
 * MPOL_PREFERRED_MANY (5) for preferred, the default (0) for none, each
 * toward the rank's NUMA node.  An explicit --mem-bind
 * applies even on a machine with one NUMA node, so this runs anywhere but
 * in a container that refuses set_mempolicy (EPERM) or on a kernel without
 * NUMA (ENOSYS), where it is skipped.
 */
START_TEST(real_machine_mempolicy)
{
	static const struct {
		const char *mem, *want, *alt;
	} c[] = {
		{ "bind", "mode=2 ", NULL },
		{ "preferred", "mode=1 ", "mode=5 " },
		{ "none", "mode=0 ", NULL },
	};
	struct plan_opts o;
	struct plan *p;
	char got[128], want[64];
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		memset(&o, 0, sizeof(o));
		o.cpu_bind = "cores";
		o.mem_bind = c[i].mem;
		p = plan_new(1, &o, err, sizeof(err));
		ck_assert_msg(p != NULL, "%s", err);
		ck_assert_str_eq(env(p, 0, "CGRUN_MEM_BIND"), c[i].mem);
		child_mempolicy(p, 0, got, sizeof(got));
		if (strcmp(got, "errno=1") == 0 || strcmp(got, "errno=38") == 0) {
			plan_free(p);
			SKIP_CASE("set_mempolicy refused here (%s): --mem-bind=%s "
			    "not checked", got, c[i].mem);
		}
		ck_assert_msg(strncmp(got, c[i].want, strlen(c[i].want)) == 0 ||
		    (c[i].alt != NULL && strncmp(got, c[i].alt,
		    strlen(c[i].alt)) == 0), "--mem-bind=%s: %s", c[i].mem, got);
		if (i < 2) {
			snprintf(want, sizeof(want), "nodes=0x%lx", 1UL <<
			    atoi(env(p, 0, "CGRUN_NUMA_NODE")));
			ck_assert_msg(strstr(got, want) != NULL, "%s: %s, want "
			    "%s", c[i].mem, got, want);
		}
		plan_free(p);
	}
}
END_TEST

START_TEST(real_machine_binding)
{
	int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN), n = ncpu < 2 ? 2 : ncpu;
	struct plan *p;
	char got[1024], e[256];
	hwloc_bitmap_t b;
	cpu_set_t before;
	int r;

	/* no GPU here: gpu is a clear error, auto is the CPU count */
	ck_assert_int_eq(placement_nproc("gpu", e, sizeof(e)), -1);
	ck_assert_ptr_nonnull(strstr(e, "no GPU found"));
	p = mkplan(NULL, n, "cores", NULL, NULL);
	for (r = 0; r < n; r++) {
		child_affinity(p, r, got, sizeof(got));
		ck_assert_msg(strcmp(got, env(p, r, "CGRUN_CPUSET")) == 0,
		    "rank %d: sched_getaffinity %s, plan %s", r, got,
		    env(p, r, "CGRUN_CPUSET"));
	}
	if (ncpu >= 2)
		expect_disjoint(p);
	plan_free(p);
	/* none: the child keeps the parent's affinity */
	ck_assert_int_eq(sched_getaffinity(0, sizeof(before), &before), 0);
	p = mkplan(NULL, 2, "none", NULL, NULL);
	child_affinity(p, 1, got, sizeof(got));
	b = bits(got);
	ck_assert_int_eq(hwloc_bitmap_weight(b), CPU_COUNT(&before));
	hwloc_bitmap_free(b);
	plan_free(p);
}
END_TEST

/* Whether /proc/self/maps names a library containing name. */
static int
mapped(const char *name)
{
	char line[1024];
	FILE *f = fopen("/proc/self/maps", "r");
	int found = 0;

	ck_assert_ptr_nonnull(f);
	while (!found && fgets(line, sizeof(line), f) != NULL)
		found = strstr(line, name) != NULL;
	fclose(f);
	return found;
}

/*
 * The live machine's topology never loads hwloc's GL, OpenCL or libxml2
 * plugins (X11, OpenCL loader, libxml2: megabytes of RSS), leaves the
 * caller's HWLOC_PLUGINS_BLACKLIST as it was, and never runs hwloc's PCI
 * discovery (sysfs gives GPUs and their locality), with GPUs or without,
 * whatever the binding.
 */
/* Whether topology_load() keeps PCI devices (runs hwloc's PCI discovery). */
static int
loaded_has_io(void)
{
	enum hwloc_type_filter_e f = HWLOC_TYPE_FILTER_KEEP_NONE;
	hwloc_topology_t t = topology_load(err, sizeof(err));
	int io;

	ck_assert_msg(t != NULL, "topology_load: %s", err);
	ck_assert_int_eq(hwloc_topology_get_type_filter(t,
	    HWLOC_OBJ_PCI_DEVICE, &f), 0);
	io = topology_has_io(t);
	hwloc_topology_destroy(t);
	return io;
}

START_TEST(real_machine_lean)
{
	static const char *const never[] = { "hwloc_gl", "hwloc_opencl",
	    "hwloc_xml_libxml", "libX11", "libxml2", "libOpenCL" };
	struct plan *p;
	size_t i;

	unsetenv("HWLOC_PLUGINS_BLACKLIST");
	p = mkplan(NULL, 2, "cores", NULL, NULL);
	for (i = 0; i < sizeof(never) / sizeof(never[0]); i++)
		ck_assert_msg(!mapped(never[i]), "%s is loaded", never[i]);
	ck_assert_msg(!mapped("hwloc_pci"), "hwloc_pci loaded");
	ck_assert_ptr_null(getenv("HWLOC_PLUGINS_BLACKLIST"));
	plan_free(p);
	ck_assert(!loaded_has_io());
	setenv("HWLOC_THISSYSTEM", "1", 1);	/* hwloc's own choice: kept */
	ck_assert(loaded_has_io());
	unsetenv("HWLOC_THISSYSTEM");
	setenv("HWLOC_PLUGINS_BLACKLIST", "hwloc_foo", 1);
	p = mkplan(NULL, 1, "none", NULL, NULL);
	ck_assert_str_eq(getenv("HWLOC_PLUGINS_BLACKLIST"), "hwloc_foo");
	for (i = 0; i < sizeof(never) / sizeof(never[0]); i++)
		ck_assert_msg(!mapped(never[i]), "%s is loaded", never[i]);
	plan_free(p);
	unsetenv("HWLOC_PLUGINS_BLACKLIST");
}
END_TEST

/* A plan whose ranks may use only the cpus of list (plan_opts.allowed_cpus). */
static struct plan *
mkplan_allowed(const char *machine, int nproc, const char *cpu_bind,
    const char *list)
{
	struct plan_opts o;
	struct plan *p;

	memset(&o, 0, sizeof(o));
	o.cpu_bind = cpu_bind;
	o.allowed_cpus = list;
	setenv("HWLOC_XMLFILE", gpu_fixture(machine), 1);
	p = plan_new(nproc, &o, err, sizeof(err));
	ck_assert_msg(p != NULL, "plan_new: %s", err);
	return p;
}

/*
 * Slurm gave the step half of package 1 (24-35,72-83): ranks of package
 * 1's GPUs split those cpus; ranks whose GPU is on package 0 (nothing of
 * it allowed) are bound within the allowed cpus too, never outside.
 */
START_TEST(g4dn_allowed_cpus)
{
	static const char allowed[] = "24-35,72-83";
	struct plan *p = mkplan_allowed("g4dn-2socket-8gpu", 8, NULL, allowed);
	int r;

	for (r = 0; r < 8; r++)
		expect_rank(p, r, g4_bus[r], "1", allowed, 0);
	expect_disjoint(p);
	expect_union(p, 0, 8, allowed);
	plan_free(p);
	/* only the package-1 GPUs' ranks: each a share of the allowed cpus */
	p = mkplan_allowed("g4dn-2socket-8gpu", 8, "numa", "24-47,72-95");
	for (r = 0; r < 8; r++)
		expect_rank(p, r, g4_bus[r], "1", G4_PKG1, 48);
	plan_free(p);
	/* not cpus of this machine: a clear error */
	setenv("HWLOC_XMLFILE", gpu_fixture("g4dn-2socket-8gpu"), 1);
	{
		struct plan_opts o;

		memset(&o, 0, sizeof(o));
		o.allowed_cpus = "500-510";
		ck_assert_ptr_null(plan_new(2, &o, err, sizeof(err)));
		ck_assert_ptr_nonnull(strstr(err, "allowed cpus \"500-510\""));
		o.allowed_cpus = "zero";
		ck_assert_ptr_null(plan_new(2, &o, err, sizeof(err)));
		ck_assert_ptr_nonnull(strstr(err, "allowed cpus"));
	}
}
END_TEST

/* Invariant under a limit: every rank has cpus, all allowed, all used. */
static void
expect_within_all(const struct plan *p, const char *allowed)
{
	int r;

	for (r = 0; r < plan_nproc(p); r++) {
		ck_assert_msg(env(p, r, "CGRUN_CPUSET") != NULL &&
		    *env(p, r, "CGRUN_CPUSET") != '\0', "rank %d has no cpus", r);
		expect_rank(p, r, NULL, env(p, r, "CGRUN_NUMA_NODE"), allowed,
		    0);
	}
	expect_union(p, 0, plan_nproc(p), allowed);
}

/*
 * Fewer allowed cpus than ranks, or than the split wants: whole cores
 * while there are enough (both hyperthreads of a core to one rank), then
 * single cpus, then ranks share (shared=yes in the plan), never one
 * without cpus, never one outside them, in every binding mode.
 */
START_TEST(allowed_fewer_cpus)
{
	static const char *const modes[] = { NULL, "numa", "cores" };
	struct plan *p;
	char *text;
	size_t i;
	int r;

	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		p = mkplan_allowed("g4dn-2socket-8gpu", 8, modes[i], "5");
		expect_within_all(p, "5");
		plan_free(p);
		p = mkplan_allowed("g4dn-2socket-8gpu", 3, modes[i], "0,48");
		expect_within_all(p, "0,48");
		plan_free(p);
		p = mkplan_allowed("g4dn-2socket-8gpu", 4, modes[i],
		    "0-1,48-49");
		expect_within_all(p, "0-1,48-49");
		plan_free(p);
	}
	/* two ranks, two cores: one whole core each */
	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		if (modes[i] != NULL && strcmp(modes[i], "numa") == 0)
			continue;	/* numa does not split: both get all */
		p = mkplan_allowed("g4dn-2socket-8gpu", 2, modes[i],
		    "0-1,48-49");
		ck_assert_str_eq(env(p, 0, "CGRUN_CPUSET"), "0,48");
		ck_assert_str_eq(env(p, 1, "CGRUN_CPUSET"), "1,49");
		plan_free(p);
	}
	/* eight ranks on one cpu: all share it, and the plan says so */
	p = mkplan_allowed("g4dn-2socket-8gpu", 8, "cores", "5");
	for (r = 0; r < 8; r++)
		ck_assert_str_eq(env(p, r, "CGRUN_CPUSET"), "5");
	text = printed(p, 0);
	ck_assert_msg(strstr(text, "cpus_allowed=5 cpus_allowed_by=\"given\"")
	    != NULL && strstr(text, "local_rank=7 gpu=7 bus_id=0000:f5:00.0 numa=0 "
	    "cpus=5 shared=yes") != NULL, "plan: %s", text);
	free(text);
	plan_free(p);
}
END_TEST

/*
 * On the live machine a plan stays within the affinity cgrun inherited
 * (taskset, srun --cpu-bind): with only the last cpu allowed, both ranks
 * share it and the JSON plan says why; a fixture topology, numbered
 * otherwise, is not limited by it.
 */
START_TEST(real_machine_inherited)
{
	cpu_set_t before, one;
	int last;
	char got[64], want[16];
	struct plan *p;
	FILE *f;
	char buf[8192];
	size_t n;

	ck_assert_int_eq(sched_getaffinity(0, sizeof(before), &before), 0);
	if (CPU_COUNT(&before) < 2)
		SKIP_CASE("this process may use one cpu: nothing to limit");
	for (last = CPU_SETSIZE - 1; !CPU_ISSET(last, &before); last--)
		continue;	/* the last cpu this process may use */
	CPU_ZERO(&one);
	CPU_SET(last, &one);
	ck_assert_int_eq(sched_setaffinity(0, sizeof(one), &one), 0);
	snprintf(want, sizeof(want), "%d", last);
	p = mkplan(NULL, 2, "cores", NULL, NULL);
	ck_assert_str_eq(env(p, 0, "CGRUN_CPUSET"), want);
	ck_assert_str_eq(env(p, 1, "CGRUN_CPUSET"), want);
	child_affinity(p, 1, got, sizeof(got));
	ck_assert_str_eq(got, want);
	f = tmpfile();
	ck_assert_ptr_nonnull(f);
	plan_print(p, f, 1);
	rewind(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	ck_assert_msg(strstr(buf, "\"cpus_allowed_by\":\"") != NULL &&
	    strstr(buf, "inherited affinity\"") != NULL, "plan JSON: %s", buf);
	plan_free(p);
	p = mkplan("g4dn-2socket-8gpu", 8, NULL, NULL, NULL);
	ck_assert_str_eq(env(p, 0, "CGRUN_CPUSET"), "0-5,48-53");
	plan_free(p);
	ck_assert_int_eq(sched_setaffinity(0, sizeof(before), &before), 0);
}
END_TEST

/* FAKE_NVML_GPUS for the g4dn fixture's 8 GPUs (all alike, by bus id). */
static void
g4dn_fake_nvml(void)
{
	char gpus[1024];
	size_t n = 0;
	int i;

	for (i = 0; i < 8; i++)
		n += (size_t)snprintf(gpus + n, sizeof(gpus) - n,
		    "%s0000%s,GPU-g4-%d,7.5,2560", i > 0 ? ";" : "", g4_bus[i],
		    i);
	setenv("CGRUN_NVML_LIBRARY", gpu_fake_nvml(), 1);
	setenv("FAKE_NVML_GPUS", gpus, 1);
}

/*
 * What srun --gres=gpu:N leaves: CUDA_VISIBLE_DEVICES "1,3" or "0" (the
 * step's GPUs by index, no CUDA_DEVICE_ORDER), often with a cpuset.
 * --nproc-per-node=gpu starts one rank per listed GPU and local rank k
 * gets the k-th of them (CGRUN_GPU k, the bus id of physical GPU 1, 3...),
 * with NVML and with hwloc alone; with the step's cpus both ranks stay in
 * them.
 */
START_TEST(slurm_gres_cvd)
{
	static const char *const lib[] = { NULL, "none" };
	struct plan *p;
	char e[256];
	size_t i;

	setenv("HWLOC_XMLFILE", gpu_fixture("g4dn-2socket-8gpu"), 1);
	for (i = 0; i < sizeof(lib) / sizeof(lib[0]); i++) {
		if (lib[i] == NULL)
			g4dn_fake_nvml();
		else
			setenv("CGRUN_NVML_LIBRARY", lib[i], 1);
		setenv("CUDA_VISIBLE_DEVICES", "1,3", 1);
		ck_assert_int_eq(placement_nproc("gpu", e, sizeof(e)), 2);
		p = mkplan("g4dn-2socket-8gpu", 2, NULL, NULL, NULL);
		ck_assert(source_is(p, lib[i] == NULL ? "nvml" : "hwloc"));
		expect_rank(p, 0, g4_bus[1], "0", G4_PKG0, 24);
		expect_rank(p, 1, g4_bus[3], "0", G4_PKG0, 24);
		ck_assert_str_eq(env(p, 0, "CGRUN_GPU"), "0");
		ck_assert_str_eq(env(p, 1, "CGRUN_GPU"), "1");
		expect_disjoint(p);
		plan_free(p);
		p = mkplan_allowed("g4dn-2socket-8gpu", 2, NULL, "0-5,48-53");
		expect_rank(p, 0, g4_bus[1], "0", "0-5,48-53", 6);
		expect_rank(p, 1, g4_bus[3], "0", "0-5,48-53", 6);
		expect_disjoint(p);
		plan_free(p);
		setenv("CUDA_VISIBLE_DEVICES", "0", 1);
		ck_assert_int_eq(placement_nproc("gpu", e, sizeof(e)), 1);
		p = mkplan("g4dn-2socket-8gpu", 1, NULL, NULL, NULL);
		expect_rank(p, 0, g4_bus[0], "0", G4_PKG0, 48);
		ck_assert_str_eq(env(p, 0, "CGRUN_GPU"), "0");
		plan_free(p);
	}
}
END_TEST

/* The suite. */
Suite *
test_suite(void)
{
	Suite *s = suite_create("placement");
	TCase *tc = tcase_create("placement");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, g4dn_one_per_gpu);
	tcase_add_test(tc, g4dn_two_per_gpu);
	tcase_add_test(tc, g4dn_fewer_ranks);
	tcase_add_test(tc, g4dn_cvd_subset_reorder);
	tcase_add_test(tc, g4dn_cvd_cut);
	tcase_add_test(tc, xeon_uneven);
	tcase_add_test(tc, snc_groups);
	tcase_add_test(tc, numa_binding_modes);
	tcase_add_test(tc, cpu_only_machine);
	tcase_add_test(tc, visibility_own);
	tcase_add_test(tc, nvml_order_places);
	tcase_add_test(tc, discovery_once);
	tcase_add_test(tc, nvml_only_when_needed);
	tcase_add_test(tc, gpus_unknowable);
	tcase_add_test(tc, bad_options);
	tcase_add_test(tc, print_text_and_json);
	tcase_add_test(tc, real_machine_binding);
	tcase_add_test(tc, real_machine_mempolicy);
	tcase_add_test(tc, real_machine_lean);
	tcase_add_test(tc, g4dn_allowed_cpus);
	tcase_add_test(tc, real_machine_inherited);
	tcase_add_test(tc, slurm_gres_cvd);
	tcase_add_test(tc, allowed_fewer_cpus);
	suite_add_tcase(s, tc);
	return s;
}

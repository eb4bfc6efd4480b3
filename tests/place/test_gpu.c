/*
 * test_gpu.c: GPU discovery.  The pure parts (PCI bus ids, CUDA's device
 * order, CUDA_VISIBLE_DEVICES with indices, UUIDs, MIG ids, cut-offs and
 * hostile input), hwloc's PCI scan on the fixture machines (NVIDIA GPUs
 * only: not their audio/USB functions, NVSwitches, AMD or Matrox GPUs),
 * and the NVML path through a fake libnvidia-ml.so.1 loaded by the same
 * dlopen code (tests/place/fake_nvml/fake_nvml.c).
 */
#include <sys/stat.h>

#include <check.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu.h"
#include "gpu_driver.h"
#include "helper_gpu.h"
#include "helper_main.h"

static struct gpu_info gi[GPU_MAX];
static struct gpu_vis vis[GPU_MAX];
static char warn[256], err[256];

/* A GPU with a bus id, UUID and speed. */
static void
mk(struct gpu_info *g, const char *busid, const char *uuid, int major,
    int minor, int cores)
{
	memset(g, 0, sizeof(*g));
	ck_assert_int_eq(gpu_busid_parse(busid, &g->domain, &g->bus, &g->dev,
	    &g->func), 0);
	snprintf(g->busid, sizeof(g->busid), "%s", busid);
	snprintf(g->uuid, sizeof(g->uuid), "%s", uuid);
	g->cc_major = major;
	g->cc_minor = minor;
	g->cores = cores;
}

/* Four identical GPUs with UUIDs GPU-aaaa0000-..., GPU-bbbb... etc. */
static int
four(void)
{
	mk(&gi[0], "0000:18:00.0", "GPU-aaaa0000-1111", 8, 0, 6912);
	mk(&gi[1], "0000:19:00.0", "GPU-bbbb0000-2222", 8, 0, 6912);
	mk(&gi[2], "0000:35:00.0", "GPU-abab0000-3333", 8, 0, 6912);
	mk(&gi[3], "0000:36:00.0", "GPU-cccc0000-4444", 8, 0, 6912);
	return 4;
}

/* Parse cvd against the four GPUs; the physical indexes as "a,b,c". */
static const char *
vis_of(const char *cvd, int n)
{
	static char out[256];
	size_t len = 0;
	int k, i;

	k = gpu_visible_parse(cvd, gi, n, vis, GPU_MAX, warn, sizeof(warn),
	    err, sizeof(err));
	if (k < 0)
		return "ERROR";
	out[0] = '\0';
	for (i = 0; i < k; i++)
		len += (size_t)snprintf(out + len, sizeof(out) - len, "%s%d",
		    i ? "," : "", vis[i].phys);
	return out;
}

START_TEST(busid_forms)
{
	unsigned d, b, v, f;

	ck_assert_int_eq(gpu_busid_parse("0000:18:00.0", &d, &b, &v, &f), 0);
	ck_assert_uint_eq(d, 0);
	ck_assert_uint_eq(b, 0x18);
	ck_assert_uint_eq(v, 0);
	ck_assert_uint_eq(f, 0);
	/* NVML's 8-digit domain, upper case */
	ck_assert_int_eq(gpu_busid_parse("00000001:E7:1F.7", &d, &b, &v, &f), 0);
	ck_assert_uint_eq(d, 1);
	ck_assert_uint_eq(b, 0xe7);
	ck_assert_uint_eq(v, 0x1f);
	ck_assert_uint_eq(f, 7);
	/* no domain */
	ck_assert_int_eq(gpu_busid_parse("84:00.1", &d, &b, &v, &f), 0);
	ck_assert_uint_eq(d, 0);
	ck_assert_uint_eq(b, 0x84);
	ck_assert_uint_eq(f, 1);
}
END_TEST

START_TEST(busid_bad)
{
	static const char *const bad[] = { "", ":", "0000:18:00", "0000:18:00.",
	    "0000:18:00.8", "0000:18:20.0", "0000:118:00.0", "000000000:18:00.0",
	    "0000:18:00.0 ", "0000:18:00.0x", "zz:00.0", "0000::00.0",
	    "0000:18.00.0", "-1:18:00.0", "0000:18:00.0.0" };
	unsigned d, b, v, f;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(gpu_busid_parse(bad[i], &d, &b, &v, &f) == -1,
		    "accepted \"%s\"", bad[i]);
}
END_TEST

START_TEST(order_bus_and_fastest)
{
	/* given in NVML order = bus order; the fastest is the last */
	mk(&gi[0], "0000:e7:00.0", "GPU-e7", 7, 5, 2560);
	mk(&gi[1], "0000:18:00.0", "GPU-18", 7, 0, 5120);
	mk(&gi[2], "0000:35:00.0", "GPU-35", 7, 5, 2560);
	mk(&gi[3], "0001:01:00.0", "GPU-d1", 8, 0, 6912);
	gpu_order(gi, 4, 0);
	ck_assert_str_eq(gi[0].uuid, "GPU-18");
	ck_assert_str_eq(gi[1].uuid, "GPU-35");
	ck_assert_str_eq(gi[2].uuid, "GPU-e7");
	ck_assert_str_eq(gi[3].uuid, "GPU-d1");
	/* FASTEST_FIRST: 8.0, then 7.5 twice in bus order, then 7.0 */
	gpu_order(gi, 4, 1);
	ck_assert_str_eq(gi[0].uuid, "GPU-d1");
	ck_assert_str_eq(gi[1].uuid, "GPU-35");
	ck_assert_str_eq(gi[2].uuid, "GPU-e7");
	ck_assert_str_eq(gi[3].uuid, "GPU-18");
	/* unknown speeds (hwloc): fastest first keeps bus order */
	mk(&gi[0], "0000:84:00.0", "", -1, -1, -1);
	mk(&gi[1], "0000:03:00.0", "", -1, -1, -1);
	mk(&gi[2], "0000:83:00.0", "", -1, -1, -1);
	gpu_order(gi, 3, 1);
	ck_assert_str_eq(gi[0].busid, "0000:03:00.0");
	ck_assert_str_eq(gi[1].busid, "0000:83:00.0");
	ck_assert_str_eq(gi[2].busid, "0000:84:00.0");
}
END_TEST

START_TEST(cvd_indices)
{
	int n = four();

	ck_assert_str_eq(vis_of(NULL, n), "0,1,2,3");
	ck_assert_str_eq(warn, "");
	ck_assert_str_eq(vis_of("", n), "");
	ck_assert_str_eq(vis_of("2", n), "2");
	ck_assert_str_eq(vis_of("3,1", n), "3,1");
	ck_assert_str_eq(vis[0].token, "3");
	ck_assert_str_eq(vis_of(" 1 , 0", n), "1,0");
	ck_assert_str_eq(vis[1].token, "0");
	ck_assert_str_eq(warn, "");
	/* trailing comma: nothing after it */
	ck_assert_str_eq(vis_of("0,", n), "0");
	/* unset lists every GPU by UUID (for gpu-visibility own) */
	ck_assert_str_eq(vis_of(NULL, n), "0,1,2,3");
	ck_assert_str_eq(vis[2].token, "GPU-abab0000-3333");
}
END_TEST

START_TEST(cvd_cut_like_cuda)
{
	int n = four();

	/* out of range: the list ends there */
	ck_assert_str_eq(vis_of("1,4,2", n), "1");
	ck_assert_ptr_nonnull(strstr(warn, "entry 2"));
	ck_assert_ptr_nonnull(strstr(warn, "no such device"));
	/* -1 hides every GPU */
	ck_assert_str_eq(vis_of("-1", n), "");
	ck_assert_ptr_nonnull(strstr(warn, "entry 1"));
	/* repeated device */
	ck_assert_str_eq(vis_of("2,0,2,1", n), "2,0");
	ck_assert_ptr_nonnull(strstr(warn, "twice"));
	/* junk, empty entry, sign, trailing letters, huge number */
	ck_assert_str_eq(vis_of("0,x,1", n), "0");
	ck_assert_str_eq(vis_of("0,,1", n), "0");
	ck_assert_str_eq(vis_of("+1", n), "");
	ck_assert_str_eq(vis_of("1a", n), "");
	ck_assert_str_eq(vis_of("99999999999999999999999", n), "");
	ck_assert_str_eq(vis_of("3,0", 0), "");
}
END_TEST

START_TEST(cvd_uuids)
{
	int n = four();

	ck_assert_str_eq(vis_of("GPU-cccc0000-4444,GPU-aaaa0000-1111", n),
	    "3,0");
	ck_assert_str_eq(vis[0].token, "GPU-cccc0000-4444");
	/* a unique prefix is enough; case does not matter */
	ck_assert_str_eq(vis_of("GPU-bb,gpu-CC", n), "1,3");
	/* ambiguous prefix (GPU-a matches aaaa and abab): cut */
	ck_assert_str_eq(vis_of("2,GPU-a,1", n), "2");
	ck_assert_ptr_nonnull(strstr(warn, "ambiguous"));
	ck_assert_str_eq(vis_of("GPU-ab,GPU-dddd", n), "2");
	ck_assert_ptr_nonnull(strstr(warn, "unknown UUID"));
	/* mixed indices and UUIDs */
	ck_assert_str_eq(vis_of("3,GPU-aaaa", n), "3,0");
	ck_assert_str_eq(vis_of("GPU-aaaa,0", n), "0");
}
END_TEST

START_TEST(cvd_mig)
{
	int n = four();

	snprintf(gi[1].mig[0], GPU_UUID_MAX, "MIG-1111aaaa-0000");
	snprintf(gi[1].mig[1], GPU_UUID_MAX, "MIG-2222bbbb-0000");
	gi[1].nmig = 2;
	snprintf(gi[3].mig[0], GPU_UUID_MAX, "MIG-3333cccc-0000");
	gi[3].nmig = 1;
	ck_assert_str_eq(vis_of("MIG-3333cccc-0000", n), "3");
	ck_assert_str_eq(vis[0].token, "MIG-3333cccc-0000");
	ck_assert_str_eq(vis_of("MIG-2222,1", n), "1");
	ck_assert_str_eq(vis_of("MIG-9999", n), "");
	/* legacy MIG-GPU-<uuid>/gi/ci names the parent GPU */
	ck_assert_str_eq(vis_of("MIG-GPU-cccc0000-4444/1/0", n), "3");
}
END_TEST

START_TEST(cvd_unresolvable_and_hostile)
{
	char big[GPU_CVD_MAX + 2];
	int n = four(), i, k;

	/* no UUID known (hwloc fallback): a UUID cannot be resolved here */
	for (i = 0; i < n; i++)
		gi[i].uuid[0] = '\0';
	ck_assert_str_eq(vis_of("GPU-aaaa", n), "ERROR");
	ck_assert_ptr_nonnull(strstr(err, "UUID"));
	ck_assert_str_eq(vis_of(NULL, n), "0,1,2,3");
	ck_assert_str_eq(vis[0].token, "0");
	/* too long */
	memset(big, '0', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	ck_assert_str_eq(vis_of(big, n), "ERROR");
	/* long entry, many entries, control bytes: bounded, no crash */
	memset(big, '1', GPU_CVD_MAX);
	big[GPU_CVD_MAX] = '\0';
	ck_assert_str_eq(vis_of(big, n), "");
	for (i = 0; i < GPU_CVD_MAX - 1; i += 2) {
		big[i] = (char)('0' + (i / 2) % 4);
		big[i + 1] = ',';
	}
	big[GPU_CVD_MAX - 1] = '\0';
	ck_assert_str_eq(vis_of(big, n), "0,1,2,3");
	k = gpu_visible_parse("0,1,2,3", gi, n, vis, 2, warn, sizeof(warn),
	    err, sizeof(err));
	ck_assert_int_eq(k, 2);
	ck_assert_str_eq(vis_of("\x01\xff,0", n), "");
	ck_assert_ptr_nonnull(strstr(warn, "\\x01\\xff"));
}
END_TEST

/*
 * Random CUDA_VISIBLE_DEVICES values built from the alphabet that matters
 * (digits, commas, signs, blanks, UUID prefixes, junk bytes): the result
 * always stays within bounds, names distinct GPUs, and agrees with a
 * simple model for index-only lists.
 */
START_TEST(cvd_random)
{
	static const char *const parts[] = { "0", "1", "2", "3", "4", "9",
	    "-1", ",", ",", ",", " ", "GPU-a", "GPU-bb", "GPU-cccc0000-4444",
	    "MIG-", "x", "\x80", "", "00", "+2", "1 ", "\t3" };
	char cvd[128];
	unsigned seed = 12345;
	int n = four(), iter, i, j, k, np;
	size_t len;

	for (iter = 0; iter < 20000; iter++) {
		len = 0;
		cvd[0] = '\0';
		np = (int)(rand_r(&seed) % 8);
		for (i = 0; i < np; i++) {
			const char *pp = parts[rand_r(&seed) %
			    (sizeof(parts) / sizeof(parts[0]))];
			if (len + strlen(pp) + 1 >= sizeof(cvd))
				break;
			memcpy(cvd + len, pp, strlen(pp) + 1);
			len += strlen(pp);
		}
		k = gpu_visible_parse(cvd, gi, n, vis, GPU_MAX, warn,
		    sizeof(warn), err, sizeof(err));
		ck_assert_msg(k >= 0 && k <= n, "\"%s\" -> %d", cvd, k);
		for (i = 0; i < k; i++) {
			ck_assert_int_ge(vis[i].phys, 0);
			ck_assert_int_lt(vis[i].phys, n);
			for (j = 0; j < i; j++)
				ck_assert_int_ne(vis[i].phys, vis[j].phys);
		}
		/* a list that was not cut used every entry */
		if (warn[0] == '\0' && cvd[0] != '\0' &&
		    cvd[strlen(cvd) - 1] != ',') {
			for (i = 0, j = 1; cvd[i] != '\0'; i++)
				j += cvd[i] == ',';
			ck_assert_msg(j == k, "\"%s\": %d entries, %d visible",
			    cvd, j, k);
		}
	}
}
END_TEST

/* hwloc scan of a fixture: the bus ids as "a b c". */
static const char *
scan_fixture(const char *name)
{
	static char out[1024];
	hwloc_topology_t t;
	size_t len = 0;
	int n, i;

	ck_assert_int_eq(hwloc_topology_init(&t), 0);
	ck_assert_int_eq(hwloc_topology_set_xml(t, gpu_fixture(name)), 0);
	hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_ALL);
	ck_assert_int_eq(hwloc_topology_load(t), 0);
	n = gpu_hwloc_scan(t, gi, GPU_MAX);
	gpu_order(gi, n, 1);
	out[0] = '\0';
	for (i = 0; i < n; i++)
		len += (size_t)snprintf(out + len, sizeof(out) - len, "%s%s",
		    i ? " " : "", gi[i].busid);
	hwloc_topology_destroy(t);
	return out;
}

START_TEST(hwloc_fixtures)
{
	ck_assert_str_eq(scan_fixture("g4dn-2socket-8gpu"),
	    "0000:18:00.0 0000:19:00.0 0000:35:00.0 0000:36:00.0 "
	    "0000:e7:00.0 0000:e8:00.0 0000:f4:00.0 0000:f5:00.0");
	/* AMD Radeon 84:00.1 and Matrox VGA 05:03.0 are not NVIDIA */
	ck_assert_str_eq(scan_fixture("xeon-2socket-3gpu-uneven"),
	    "0000:03:00.0 0000:83:00.0 0000:84:00.0");
	/* NVIDIA audio 10:00.1, USB c2:00.2, NVSwitch c3:00.0, AMD c4:00.0 */
	ck_assert_str_eq(scan_fixture("snc-2socket-4numa-4gpu"),
	    "0000:10:00.0 0000:20:00.0 0000:c1:00.0 0000:c2:00.0");
	ck_assert_str_eq(scan_fixture("haswell-2socket-4numa-cpuonly"), "");
}
END_TEST

START_TEST(nvml_fake_default)
{
	int n;

	unsetenv("FAKE_NVML_GPUS");
	unsetenv("FAKE_NVML_FAIL");
	n = gpu_nvml_scan(gpu_fake_nvml(), gi, GPU_MAX, err, sizeof(err));
	ck_assert_msg(n == 8, "n=%d err=%s", n, err);
	ck_assert_str_eq(gi[0].busid, "0000:18:00.0");
	ck_assert_str_eq(gi[7].busid, "0000:f5:00.0");
	ck_assert_str_eq(gi[5].uuid, "GPU-fake0000-0000-0000-0000-000000000005");
	ck_assert_int_eq(gi[3].cc_major, 7);
	ck_assert_int_eq(gi[3].cc_minor, 5);
	ck_assert_int_eq(gi[3].cores, 2560);
	ck_assert_int_eq(gi[3].nmig, 0);
}
END_TEST

START_TEST(nvml_fake_machine)
{
	int n;

	setenv("FAKE_NVML_GPUS", "00000000:3B:00.0,GPU-slow,7.0,5120;"
	    "00000000:5E:00.0,GPU-fast,9.0,16896,MIG-m1|MIG-m2;"
	    "00000001:01:00.0,GPU-mid,8.0,6912", 1);
	n = gpu_nvml_scan(gpu_fake_nvml(), gi, GPU_MAX, err, sizeof(err));
	ck_assert_msg(n == 3, "n=%d err=%s", n, err);
	ck_assert_str_eq(gi[1].busid, "0000:5e:00.0");
	ck_assert_str_eq(gi[2].busid, "0001:01:00.0");
	ck_assert_int_eq(gi[1].nmig, 2);
	ck_assert_str_eq(gi[1].mig[1], "MIG-m2");
	/* limited to max */
	ck_assert_int_eq(gpu_nvml_scan(gpu_fake_nvml(), gi, 2, err, sizeof(err)), 2);
}
END_TEST

START_TEST(nvml_fake_errors)
{
	setenv("FAKE_NVML_FAIL", "init", 1);
	ck_assert_int_eq(gpu_nvml_scan(gpu_fake_nvml(), gi, GPU_MAX, err,
	    sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "Driver Not Loaded"));
	unsetenv("FAKE_NVML_FAIL");
	ck_assert_int_eq(gpu_nvml_scan("/nonexistent/libnvidia-ml.so.1", gi,
	    GPU_MAX, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "cannot load"));
	/* a library without NVML's functions */
	ck_assert_int_eq(gpu_nvml_scan("libm.so.6", gi, GPU_MAX, err,
	    sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "lacks"));
}
END_TEST

START_TEST(discover_nvml_order_and_cvd)
{
	struct gpu_list *l;

	setenv("CGRUN_NVML_LIBRARY", gpu_fake_nvml(), 1);
	setenv("FAKE_NVML_GPUS", "00000000:3B:00.0,GPU-slow,7.0,5120;"
	    "00000000:5E:00.0,GPU-fast,9.0,16896,MIG-m1|MIG-m2;"
	    "00000001:01:00.0,GPU-mid,8.0,6912", 1);
	unsetenv("CUDA_VISIBLE_DEVICES");
	unsetenv("CUDA_DEVICE_ORDER");
	/* default FASTEST_FIRST */
	l = gpu_discover(NULL, 0, err, sizeof(err));
	ck_assert_msg(l != NULL, "%s", err);
	ck_assert_str_eq(l->source, "nvml");
	ck_assert_int_eq(l->nvis, 3);
	ck_assert_str_eq(l->gpu[l->vis[0].phys].uuid, "GPU-fast");
	ck_assert_str_eq(l->gpu[l->vis[1].phys].uuid, "GPU-mid");
	ck_assert_str_eq(l->gpu[l->vis[2].phys].uuid, "GPU-slow");
	gpu_list_free(l);
	/* PCI_BUS_ID, and indices refer to that order */
	setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID", 1);
	setenv("CUDA_VISIBLE_DEVICES", "2,0", 1);
	l = gpu_discover(NULL, 0, err, sizeof(err));
	ck_assert_msg(l != NULL, "%s", err);
	ck_assert_int_eq(l->nvis, 2);
	ck_assert_str_eq(l->gpu[l->vis[0].phys].busid, "0001:01:00.0");
	ck_assert_str_eq(l->gpu[l->vis[1].phys].busid, "0000:3b:00.0");
	gpu_list_free(l);
	/* MIG and UUID entries */
	setenv("CUDA_VISIBLE_DEVICES", "MIG-m2,GPU-slow", 1);
	l = gpu_discover(NULL, 0, err, sizeof(err));
	ck_assert_msg(l != NULL, "%s", err);
	ck_assert_int_eq(l->nvis, 2);
	ck_assert_str_eq(l->gpu[l->vis[0].phys].busid, "0000:5e:00.0");
	ck_assert_str_eq(l->vis[0].token, "MIG-m2");
	ck_assert_str_eq(l->gpu[l->vis[1].phys].uuid, "GPU-slow");
	gpu_list_free(l);
	/* an explicit library that cannot be used is an error */
	setenv("FAKE_NVML_FAIL", "init", 1);
	ck_assert_ptr_null(gpu_discover(NULL, 0, err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "CGRUN_NVML_LIBRARY"));
}
END_TEST

START_TEST(discover_hwloc_fallback)
{
	hwloc_topology_t t;
	struct gpu_list *l;

	setenv("CGRUN_NVML_LIBRARY", "none", 1);
	unsetenv("CUDA_DEVICE_ORDER");
	setenv("CUDA_VISIBLE_DEVICES", "2,0", 1);
	ck_assert_int_eq(hwloc_topology_init(&t), 0);
	ck_assert_int_eq(hwloc_topology_set_xml(t,
	    gpu_fixture("xeon-2socket-3gpu-uneven")), 0);
	hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_ALL);
	ck_assert_int_eq(hwloc_topology_load(t), 0);
	l = gpu_discover(t, 0, err, sizeof(err));
	ck_assert_msg(l != NULL, "%s", err);
	ck_assert_str_eq(l->source, "hwloc");
	ck_assert_int_eq(l->n, 3);
	ck_assert_int_eq(l->nvis, 2);
	ck_assert_str_eq(l->gpu[l->vis[0].phys].busid, "0000:84:00.0");
	ck_assert_str_eq(l->gpu[l->vis[1].phys].busid, "0000:03:00.0");
	gpu_list_free(l);
	/* UUIDs cannot be resolved without NVML */
	setenv("CUDA_VISIBLE_DEVICES", "GPU-1234", 1);
	ck_assert_ptr_null(gpu_discover(t, 0, err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "UUID"));
	hwloc_topology_destroy(t);
}
END_TEST

/* Write text to dir/dev/attr, creating dir/dev. */
static void
sysfs_put(const char *dir, const char *dev, const char *attr,
    const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, dev);
	ck_assert(mkdir(path, 0755) == 0 || errno == EEXIST);
	snprintf(path, sizeof(path), "%s/%s/%s", dir, dev, attr);
	ck_assert_ptr_nonnull(f = fopen(path, "w"));
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

START_TEST(sysfs_present)
{
	char dir[] = "/tmp/test_gpu_sysfs.XXXXXX", cmd[PATH_MAX + 16];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(gpu_sysfs_present(dir), 0);		/* empty bus */
	/* virtio, Intel host bridge, an NVIDIA HDMI audio function */
	sysfs_put(dir, "0000:00:01.0", "vendor", "0x1af4\n");
	sysfs_put(dir, "0000:00:01.0", "class", "0x020000\n");
	sysfs_put(dir, "0000:00:00.0", "vendor", "0x8086\n");
	sysfs_put(dir, "0000:00:00.0", "class", "0x060000\n");
	sysfs_put(dir, "0000:3b:00.1", "vendor", "0x10de\n");
	sysfs_put(dir, "0000:3b:00.1", "class", "0x040300\n");
	sysfs_put(dir, "0000:3c:00.0", "vendor", "garbage");	/* no class */
	ck_assert_int_eq(gpu_sysfs_present(dir), 0);
	/* an NVIDIA 3D controller (0302) */
	sysfs_put(dir, "0000:3b:00.0", "vendor", "0x10de\n");
	sysfs_put(dir, "0000:3b:00.0", "class", "0x030200\n");
	ck_assert_int_eq(gpu_sysfs_present(dir), 1);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
	ck_assert_int_eq(gpu_sysfs_present(dir), -1);		/* unreadable */
}
END_TEST

/*
 * The GPUs listed from sysfs alone (a plan that needs no GPU locality on
 * the live machine): NVIDIA display/3D functions only, with bus id and
 * model (device id); at most max; an unreadable root is -1.  Their
 * locality: local_cpulist as a cpuset, -1 when missing.
 */
START_TEST(sysfs_scan)
{
	char dir[] = "/tmp/test_gpu_sysfs.XXXXXX", cmd[PATH_MAX + 16];
	struct gpu_info g[4];
	hwloc_bitmap_t set;
	char list[64];
	int n, i, seen = 0;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(gpu_sysfs_scan(dir, g, 4), 0);
	sysfs_put(dir, "0000:3b:00.1", "vendor", "0x10de\n");	/* HDMI audio */
	sysfs_put(dir, "0000:3b:00.1", "class", "0x040300\n");
	sysfs_put(dir, "0000:18:00.0", "vendor", "0x1002\n");	/* AMD GPU */
	sysfs_put(dir, "0000:18:00.0", "class", "0x030000\n");
	sysfs_put(dir, "0000:3b:00.0", "vendor", "0x10de\n");	/* H100 */
	sysfs_put(dir, "0000:3b:00.0", "class", "0x030200\n");
	sysfs_put(dir, "0000:3b:00.0", "device", "0x2330\n");
	sysfs_put(dir, "0000:3b:00.0", "local_cpulist", "0-11,48-59\n");
	sysfs_put(dir, "0001:c1:00.0", "vendor", "0x10de\n");	/* no node */
	sysfs_put(dir, "0001:c1:00.0", "class", "0x030000\n");
	sysfs_put(dir, "0001:c1:00.0", "device", "0x1eb8\n");
	ck_assert_int_eq(n = gpu_sysfs_scan(dir, g, 4), 2);
	for (i = 0; i < n; i++) {
		if (strcmp(g[i].busid, "0000:3b:00.0") == 0) {
			ck_assert_uint_eq(g[i].model, 0x2330);
			ck_assert_uint_eq(g[i].bus, 0x3b);
			seen |= 1;
		} else {
			ck_assert_str_eq(g[i].busid, "0001:c1:00.0");
			ck_assert_uint_eq(g[i].model, 0x1eb8);
			ck_assert_uint_eq(g[i].domain, 1);
			seen |= 2;
		}
		ck_assert_int_eq(g[i].cc_major, -1);
		ck_assert_str_eq(g[i].uuid, "");
	}
	ck_assert_int_eq(seen, 3);
	ck_assert_int_eq(gpu_sysfs_scan(dir, g, 1), 1);		/* max */
	ck_assert_ptr_nonnull(set = hwloc_bitmap_alloc());
	ck_assert_int_eq(gpu_sysfs_local_cpus(dir, "0000:3b:00.0", set), 0);
	ck_assert_int_gt(hwloc_bitmap_list_snprintf(list, sizeof(list), set),
	    0);
	ck_assert_str_eq(list, "0-11,48-59");
	ck_assert_int_eq(gpu_sysfs_local_cpus(dir, "0001:c1:00.0", set), -1);
	sysfs_put(dir, "0001:c1:00.0", "local_cpulist", "\n");
	ck_assert_int_eq(gpu_sysfs_local_cpus(dir, "0001:c1:00.0", set), -1);
	sysfs_put(dir, "0001:c1:00.0", "local_cpulist", "x-y\n");
	ck_assert_int_eq(gpu_sysfs_local_cpus(dir, "0001:c1:00.0", set), -1);
	hwloc_bitmap_free(set);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
	ck_assert_int_eq(gpu_sysfs_scan(dir, g, 4), -1);	/* unreadable */
}
END_TEST

/*
 * The driver's GPU list (/proc/driver/nvidia/gpus/<bus id>/) against the
 * GPUs on the bus: the same set agrees, a container's subset or another
 * GPU does not, no list at all agrees (no driver: NVML cannot answer).
 */
START_TEST(driver_agrees)
{
	char dir[] = "/tmp/test_gpu_driver.XXXXXX", cmd[PATH_MAX + 16];
	int n;

	setenv("FAKE_NVML_GPUS", "00000000:3B:00.0,GPU-a,8.0,6912;"
	    "00000000:5E:00.0,GPU-b,8.0,6912", 1);
	unsetenv("FAKE_NVML_FAIL");
	n = gpu_nvml_scan(gpu_fake_nvml(), gi, GPU_MAX, err, sizeof(err));
	ck_assert_int_eq(n, 2);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(gpu_driver_agrees(dir, gi, 0), 1);	/* none, none */
	ck_assert_int_eq(gpu_driver_agrees(dir, gi, n), 0);
	sysfs_put(dir, "0000:3b:00.0", "information", "Model: A100\n");
	ck_assert_int_eq(gpu_driver_agrees(dir, gi, n), 0);	/* a subset */
	sysfs_put(dir, "0000:5e:00.0", "information", "Model: A100\n");
	ck_assert_int_eq(gpu_driver_agrees(dir, gi, n), 1);
	sysfs_put(dir, "0000:af:00.0", "information", "Model: A100\n");
	ck_assert_int_eq(gpu_driver_agrees(dir, gi, n), 0);	/* one more */
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
	ck_assert_int_eq(gpu_driver_agrees(dir, gi, n), 1);	/* no driver */
	unsetenv("FAKE_NVML_GPUS");
}
END_TEST

/*
 * On the machine itself GPU locality comes from sysfs instead of hwloc's
 * PCI discovery: for every PCI device hwloc finds on this machine, the
 * CPUs of its non-I/O ancestor (where hwloc attached it) are its
 * local_cpulist within the topology's CPUs.  (On a GPU host run
 * bench/gpu_host.sh, which compares whole plans both ways.)
 */
START_TEST(sysfs_locality_is_hwlocs)
{
	hwloc_bitmap_t set = hwloc_bitmap_alloc();
	hwloc_obj_t o = NULL, a;
	hwloc_topology_t t;
	char busid[GPU_BUSID_MAX], l1[256], l2[256];
	int n = 0;

	ck_assert_int_eq(hwloc_topology_init(&t), 0);
	hwloc_topology_set_type_filter(t, HWLOC_OBJ_PCI_DEVICE,
	    HWLOC_TYPE_FILTER_KEEP_ALL);
	ck_assert_int_eq(hwloc_topology_load(t), 0);
	while ((o = hwloc_get_next_pcidev(t, o)) != NULL) {
		snprintf(busid, sizeof(busid), "%04x:%02x:%02x.%x",
		    o->attr->pcidev.domain, o->attr->pcidev.bus,
		    o->attr->pcidev.dev, o->attr->pcidev.func);
		ck_assert_ptr_nonnull(a = hwloc_get_non_io_ancestor_obj(t, o));
		ck_assert_msg(gpu_sysfs_local_cpus("/sys/bus/pci/devices",
		    busid, set) == 0, "%s: no local_cpulist", busid);
		hwloc_bitmap_and(set, set,
		    hwloc_topology_get_topology_cpuset(t));
		hwloc_bitmap_list_snprintf(l1, sizeof(l1), set);
		hwloc_bitmap_list_snprintf(l2, sizeof(l2), a->cpuset);
		ck_assert_msg(hwloc_bitmap_isequal(set, a->cpuset),
		    "%s: sysfs %s, hwloc %s", busid, l1, l2);
		n++;
	}
	hwloc_topology_destroy(t);
	hwloc_bitmap_free(set);
	if (n == 0)
		SKIP_CASE("no PCI device with a locality here: nothing to "
		    "compare");
}
END_TEST

/*
 * UUIDs from the driver's information files instead of NVML: the "GPU
 * UUID:" line, trimmed; none, the driver's "?" placeholders (GPU not yet
 * initialised), other text or too little room is -1; a GPU's file is
 * found by its bus id.
 */
START_TEST(driver_uuids)
{
	static const char info[] = "Model:           NVIDIA H100 80GB HBM3\n"
	    "IRQ:             10\n"
	    "GPU UUID:        GPU-9221d5d1-b60b-a624-bf14-0a1819cfda3b  \n"
	    "Bus Location:    0000:62:00.0\n";
	static const char *const bad[] = { "Model: H100\n",
	    "GPU UUID:  GPU-?\?\?\?\?\?\?\?-?\?\?\?-?\?\?\?-?\?\?\?-"
	    "?\?\?\?\?\?\?\?\?\?\?\?\n",
	    "GPU UUID:  MIG-9221d5d1\n", "GPU UUID:  GPU-\n",
	    "GPU UUID:  GPU-12 34\n", " GPU UUID:  GPU-1234\n" };
	char dir[] = "/tmp/test_gpu_driver.XXXXXX", cmd[PATH_MAX + 16];
	char uuid[GPU_UUID_MAX];
	size_t i;

	ck_assert_int_eq(gpu_driver_uuid_parse(info, strlen(info), uuid,
	    sizeof(uuid)), 0);
	ck_assert_str_eq(uuid, "GPU-9221d5d1-b60b-a624-bf14-0a1819cfda3b");
	ck_assert_int_eq(gpu_driver_uuid_parse(info, strlen(info), uuid,
	    40), -1);					/* 40 bytes + NUL */
	ck_assert_int_eq(gpu_driver_uuid_parse(info, strlen(info), uuid,
	    41), 0);
	ck_assert_int_eq(gpu_driver_uuid_parse("GPU UUID:\tGPU-0a1b",
	    strlen("GPU UUID:\tGPU-0a1b"), uuid, sizeof(uuid)), 0);
							/* no newline */
	ck_assert_str_eq(uuid, "GPU-0a1b");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(gpu_driver_uuid_parse(bad[i], strlen(bad[i]),
		    uuid, sizeof(uuid)) == -1, "accepted %s", bad[i]);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	sysfs_put(dir, "0000:62:00.0", "information", info);
	sysfs_put(dir, "0001:c1:00.0", "information", bad[1]);
	ck_assert_int_eq(gpu_driver_uuid(dir, "0000:62:00.0", uuid,
	    sizeof(uuid)), 0);
	ck_assert_str_eq(uuid, "GPU-9221d5d1-b60b-a624-bf14-0a1819cfda3b");
	ck_assert_int_eq(gpu_driver_uuid(dir, "0001:c1:00.0", uuid,
	    sizeof(uuid)), -1);				/* placeholder */
	ck_assert_int_eq(gpu_driver_uuid(dir, "0000:63:00.0", uuid,
	    sizeof(uuid)), -1);				/* no such GPU */
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* The suite. */
Suite *
test_suite(void)
{
	Suite *s = suite_create("gpu");
	TCase *tc = tcase_create("gpu");

	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, busid_forms);
	tcase_add_test(tc, busid_bad);
	tcase_add_test(tc, order_bus_and_fastest);
	tcase_add_test(tc, cvd_indices);
	tcase_add_test(tc, cvd_cut_like_cuda);
	tcase_add_test(tc, cvd_uuids);
	tcase_add_test(tc, cvd_mig);
	tcase_add_test(tc, cvd_unresolvable_and_hostile);
	tcase_add_test(tc, cvd_random);
	tcase_add_test(tc, hwloc_fixtures);
	tcase_add_test(tc, nvml_fake_default);
	tcase_add_test(tc, nvml_fake_machine);
	tcase_add_test(tc, nvml_fake_errors);
	tcase_add_test(tc, discover_nvml_order_and_cvd);
	tcase_add_test(tc, discover_hwloc_fallback);
	tcase_add_test(tc, sysfs_present);
	tcase_add_test(tc, sysfs_scan);
	tcase_add_test(tc, sysfs_locality_is_hwlocs);
	tcase_add_test(tc, driver_agrees);
	tcase_add_test(tc, driver_uuids);
	suite_add_tcase(s, tc);
	return s;
}

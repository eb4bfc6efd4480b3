/*
 * gpu_scan.c: finding the GPUs (gpu.h): the PCI bus from sysfs or hwloc,
 * the driver's /proc list (gpu_driver.c), NVML (nvml_dl.c) only where
 * they cannot answer; then gpu_discover() puts them in CUDA's order and
 * applies CUDA_VISIBLE_DEVICES (gpu_visible.c).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "errbuf.h"
#include "gpu.h"
#include "gpu_driver.h"
#include "log.h"
#include "nvml_dl.h"
#include "topology.h"

#define NVIDIA_VENDOR	0x10de
#define PCI_CLASS_DISPLAY 0x03	/* 0300 VGA, 0302 3D controller, 0380 other */

/* Parse n hex digits (1..max) at *sp into *v, advancing *sp; 0 or -1. */
static int
gpu_hex(const char **sp, unsigned max, unsigned *v)
{
	const char *s = *sp;
	unsigned n = 0, x = 0;

	while (isxdigit((unsigned char)s[n]) && n < max) {
		x = x * 16 + (unsigned)(isdigit((unsigned char)s[n]) ?
		    s[n] - '0' : tolower((unsigned char)s[n]) - 'a' + 10);
		n++;
	}
	if (n == 0 || isxdigit((unsigned char)s[n]))
		return -1;
	*sp = s + n;
	*v = x;
	return 0;
}

/* Parse "[domain:]bus:dev.func" (hex); domain up to 8 digits. */
int
gpu_busid_parse(const char *s, unsigned *domain, unsigned *bus,
    unsigned *dev, unsigned *func)
{
	const char *p = s;
	unsigned a, b;

	*domain = 0;
	if (gpu_hex(&p, 8, &a) == -1 || *p++ != ':' ||
	    gpu_hex(&p, 8, &b) == -1)
		return -1;
	if (*p == ':') {		/* domain:bus:dev.func */
		p++;
		*domain = a;
		if (b > 0xff || gpu_hex(&p, 2, dev) == -1)
			return -1;
		*bus = b;
	} else {			/* bus:dev.func */
		if (a > 0xff)
			return -1;
		*bus = a;
		*dev = b;
	}
	if (*dev > 0x1f || *p++ != '.' || gpu_hex(&p, 1, func) == -1 ||
	    *func > 7 || *p != '\0')
		return -1;
	return 0;
}

/* The UUID hwloc's NVML backend recorded for a PCI device, if any. */
static void
gpu_hwloc_uuid(hwloc_obj_t pci, char *uuid, size_t len)
{
	hwloc_obj_t os;
	const char *v;

	uuid[0] = '\0';
	for (os = pci->io_first_child; os != NULL; os = os->next_sibling) {
		if (os->type != HWLOC_OBJ_OS_DEVICE)
			continue;
		if ((v = hwloc_obj_get_info_by_name(os, "NVIDIAUUID")) != NULL) {
			snprintf(uuid, len, "%s", v);
			return;
		}
	}
}

/* Whether a PCI object is an NVIDIA GPU (not its audio or USB function). */
static int
gpu_hwloc_is_gpu(hwloc_obj_t o)
{
	return o->attr->pcidev.vendor_id == NVIDIA_VENDOR &&
	    (o->attr->pcidev.class_id >> 8) == PCI_CLASS_DISPLAY;
}

/* List the NVIDIA GPUs among hwloc's PCI devices. */
int
gpu_hwloc_scan(hwloc_topology_t topo, struct gpu_info *out, int max)
{
	hwloc_obj_t o = NULL;
	struct gpu_info *g;
	int n = 0;

	while (n < max && (o = hwloc_get_next_pcidev(topo, o)) != NULL) {
		if (!gpu_hwloc_is_gpu(o))
			continue;
		g = &out[n++];
		memset(g, 0, sizeof(*g));
		g->domain = o->attr->pcidev.domain;
		g->bus = o->attr->pcidev.bus;
		g->dev = o->attr->pcidev.dev;
		g->func = o->attr->pcidev.func;
		g->cc_major = g->cc_minor = g->cores = -1;
		g->model = o->attr->pcidev.device_id;
		snprintf(g->busid, sizeof(g->busid), "%04x:%02x:%02x.%x",
		    g->domain, g->bus, g->dev, g->func);
		gpu_hwloc_uuid(o, g->uuid, sizeof(g->uuid));
	}
	return n;
}

/*
 * Read a sysfs hex attribute ("0x10de\n") of PCI device dir; -2 when it
 * cannot be read or parsed.
 */
static long
gpu_sysfs_attr(int dirfd, const char *dev, const char *attr)
{
	char path[512], buf[32], *end;
	ssize_t n;
	long v;
	int fd;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dev, attr) >=
	    sizeof(path) || (fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC)) ==
	    -1)
		return -2;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -2;
	buf[n] = '\0';
	errno = 0;
	v = strtol(buf, &end, 16);
	return errno != 0 || end == buf ? -2 : v;
}

/* Whether PCI device dir (under dirfd) is an NVIDIA display/3D function. */
static int
gpu_sysfs_is_gpu(int dirfd, const char *dev)
{
	return gpu_sysfs_attr(dirfd, dev, "vendor") == NVIDIA_VENDOR &&
	    (gpu_sysfs_attr(dirfd, dev, "class") >> 16) ==
	    PCI_CLASS_DISPLAY;
}

/* Fill g from sysfs PCI device dir, named by its bus id; 0 or -1. */
static int
gpu_sysfs_info(int dirfd, const char *dev, struct gpu_info *g)
{
	long v;

	memset(g, 0, sizeof(*g));
	if (gpu_busid_parse(dev, &g->domain, &g->bus, &g->dev,
	    &g->func) == -1)
		return -1;
	snprintf(g->busid, sizeof(g->busid), "%04x:%02x:%02x.%x", g->domain,
	    g->bus, g->dev, g->func);
	g->cc_major = g->cc_minor = g->cores = -1;
	v = gpu_sysfs_attr(dirfd, dev, "device");
	g->model = v >= 0 && v <= 0xffff ? (unsigned)v : 0;
	return 0;
}

/* The CPUs near PCI device busid (its local_cpulist) into set. */
int
gpu_sysfs_local_cpus(const char *root, const char *busid, hwloc_bitmap_t set)
{
	char path[512];

	if ((size_t)snprintf(path, sizeof(path), "%s/%s/local_cpulist", root,
	    busid) >= sizeof(path))
		return -1;
	return topology_cpulist_read(path, set);
}

/*
 * List the NVIDIA display/3D functions under root (normally
 * "/sys/bus/pci/devices"), in directory order, at most max: count, or -1
 * when root cannot be read.  A few small reads per device, where hwloc's
 * PCI discovery costs about 10 ms even on a bus of a few functions.
 */
int
gpu_sysfs_scan(const char *root, struct gpu_info *out, int max)
{
	struct dirent *e;
	DIR *d;
	int n = 0;

	if ((d = opendir(root)) == NULL)
		return -1;
	while (n < max && (e = readdir(d)) != NULL)
		if (e->d_name[0] != '.' && gpu_sysfs_is_gpu(dirfd(d),
		    e->d_name) && gpu_sysfs_info(dirfd(d), e->d_name,
		    &out[n]) == 0)
			n++;
	closedir(d);
	return n;
}

/*
 * Whether the PCI bus under sysfs (root: "/sys/bus/pci/devices") has an
 * NVIDIA display/3D function: 1, 0, or -1 when it cannot be read.
 */
int
gpu_sysfs_present(const char *root)
{
	struct gpu_info g;
	int n = gpu_sysfs_scan(root, &g, 1);

	return n > 0 ? 1 : n;
}

/*
 * gpu_sysfs_present for this machine's bus, read once per process (a bus
 * of hundreds of functions costs hundreds of small reads).
 */
int
gpu_on_bus(void)
{
	static int found = -2;

	if (found == -2)
		found = gpu_sysfs_present("/sys/bus/pci/devices");
	return found;
}

/* A GPU remembers everything NVML reports about it. */
_Static_assert(GPU_UUID_MAX >= NVML_DL_UUID_MAX &&
    GPU_MIG_MAX >= NVML_DL_MIG_MAX, "gpu_info too small for NVML's fields");

/* Where gpu_nvml_scan's callback writes: the array and its fill. */
struct gpu_fill {
	struct gpu_info	*out;
	int		 n;
};

/* nvml_dl_scan's callback: one NVML device into the next gpu_info. */
static int
gpu_from_nvml(void *arg, const struct nvml_dl_gpu *d, char *err,
    size_t errlen)
{
	struct gpu_fill *f = arg;
	struct gpu_info *g = &f->out[f->n];
	int k;

	memset(g, 0, sizeof(*g));
	if (gpu_busid_parse(d->busid, &g->domain, &g->bus, &g->dev,
	    &g->func) == -1) {
		errbuf_set(err, errlen, "NVML device %u: bad PCI bus id",
		    d->index);
		return -1;
	}
	snprintf(g->busid, sizeof(g->busid), "%04x:%02x:%02x.%x", g->domain,
	    g->bus, g->dev, g->func);
	snprintf(g->uuid, sizeof(g->uuid), "%s", d->uuid);
	g->cc_major = d->cc_major;
	g->cc_minor = d->cc_minor;
	g->cores = d->cores;
	for (k = 0; k < d->nmig; k++)
		snprintf(g->mig[k], sizeof(g->mig[k]), "%s", d->mig[k]);
	g->nmig = d->nmig;
	f->n++;
	return 0;
}

/* Fill out[] with the GPUs NVML (loaded from path) lists; count or -1. */
int
gpu_nvml_scan(const char *path, struct gpu_info *out, int max, char *err,
    size_t errlen)
{
	struct gpu_fill f = { out, 0 };

	return nvml_dl_scan(path, max, gpu_from_nvml, &f, err, errlen);
}

/*
 * The NVIDIA GPUs on the bus into l->gpu, with l->source: hwloc's PCI
 * devices, or sysfs's when the topology is the live machine's and was
 * loaded without I/O objects (topology.c: always on the machine itself).
 */
static int
gpu_bus_scan(struct gpu_list *l, hwloc_topology_t topo)
{
	int n;

	l->source = "hwloc";
	if (topo == NULL)
		return 0;
	if (!hwloc_topology_is_thissystem(topo) || topology_has_io(topo))
		return gpu_hwloc_scan(topo, l->gpu, GPU_MAX);
	l->source = "sysfs";
	n = gpu_sysfs_scan("/sys/bus/pci/devices", l->gpu, GPU_MAX);
	return n > 0 ? n : 0;
}

/*
 * Physical GPUs from NVML (unless sysfs shows no NVIDIA GPU), else hwloc;
 * sets l->source.  Count or -1.
 */
static int
gpu_scan(struct gpu_list *l, hwloc_topology_t topo, char *err,
    size_t errlen)
{
	const char *lib = getenv("CGRUN_NVML_LIBRARY");
	char why[256];
	int n;

	if ((lib == NULL || *lib == '\0') && gpu_on_bus() == 0) {
		/* no driver can list a GPU that is not on the bus: skip the
		 * dlopen search through every library directory */
		log_debug("gpu discovery nvml=skipped reason=\"no NVIDIA "
		    "display device in /sys/bus/pci/devices\"");
		lib = "none";
	}
	if (lib == NULL || *lib == '\0' || strcmp(lib, "none") != 0) {
		n = gpu_nvml_scan(lib != NULL && *lib != '\0' ? lib :
		    "libnvidia-ml.so.1", l->gpu, GPU_MAX, why, sizeof(why));
		if (n >= 0) {
			log_debug("gpu discovery nvml=loaded gpus=%d", n);
			l->source = "nvml";
			return n;
		}
		if (lib != NULL && *lib != '\0') {
			errbuf_set(err, errlen, "CGRUN_NVML_LIBRARY: %s", why);
			return -1;
		}
		log_debug("gpu discovery nvml=unavailable reason=\"%s\"", why);
	}
	return gpu_bus_scan(l, topo);
}

/* Whether the GPUs are of more than one model (PCI device id). */
static int
gpu_models_differ(const struct gpu_info *g, int n)
{
	int i;

	for (i = 1; i < n; i++)
		if (g[i].model != g[0].model)
			return 1;
	return 0;
}

/* Whether GPU g is the one at bus id domain:bus:dev.func. */
static int
gpu_at(const struct gpu_info *g, unsigned domain, unsigned bus,
    unsigned dev, unsigned func)
{
	return g->domain == domain && g->bus == bus && g->dev == dev &&
	    g->func == func;
}

/*
 * Whether the driver's list of GPUs (root: "/proc/driver/nvidia/gpus",
 * one directory per bus id, trimmed by the NVIDIA container runtime to the
 * container's GPUs) names exactly g[0..n).  No list (no driver loaded:
 * NVML could not answer either) counts as agreement.
 */
int
gpu_driver_agrees(const char *root, const struct gpu_info *g, int n)
{
	unsigned domain, bus, dev, func;
	struct dirent *e;
	int i, seen = 0, matched = 0;
	DIR *d;

	if ((d = opendir(root)) == NULL)
		return 1;
	while ((e = readdir(d)) != NULL) {
		if (gpu_busid_parse(e->d_name, &domain, &bus, &dev,
		    &func) == -1)
			continue;
		seen++;
		for (i = 0; i < n; i++)
			if (gpu_at(&g[i], domain, bus, dev, func)) {
				matched++;
				break;
			}
	}
	closedir(d);
	return seen == n && matched == n;
}

/*
 * Why the GPUs' UUIDs cannot come from the driver's information files
 * (only for this machine's topology, and not when a library was named),
 * or NULL when they did.
 */
static const char *
gpu_lean_uuids(struct gpu_list *l, hwloc_topology_t topo)
{
	const char *lib = getenv("CGRUN_NVML_LIBRARY");
	int i;

	if (lib != NULL && *lib != '\0' && strcmp(lib, "none") != 0)
		return "CGRUN_NVML_LIBRARY names a library";
	if (topo == NULL || !hwloc_topology_is_thissystem(topo))
		return "UUIDs of a topology that is not this machine's";
	for (i = 0; i < l->n; i++)
		if (gpu_driver_uuid("/proc/driver/nvidia/gpus", l->gpu[i].busid,
		    l->gpu[i].uuid, sizeof(l->gpu[i].uuid)) == -1)
			return "a GPU UUID is not in /proc/driver/nvidia/gpus";
	return NULL;
}

/*
 * The physical GPUs without NVML: 0, or -1 when only NVML can answer: a
 * UUID in CUDA_VISIBLE_DEVICES, models that fastest-first order could
 * reorder, a driver that shows this process other GPUs than the PCI bus
 * has, or (uuids: the caller reports them) UUIDs the driver's files do not
 * give (gpu_lean_uuids).
 */
static int
gpu_scan_lean(struct gpu_list *l, hwloc_topology_t topo, const char *cvd,
    int fastest_first, int uuids)
{
	const char *why = NULL;

	if (gpu_visible_names_uuid(cvd))
		why = "CUDA_VISIBLE_DEVICES names a UUID";
	else if ((l->n = gpu_bus_scan(l, topo)) > 1 && fastest_first &&
	    gpu_models_differ(l->gpu, l->n))
		why = "GPUs of different models in fastest-first order";
	else if (topo != NULL && hwloc_topology_is_thissystem(topo) &&
	    !gpu_driver_agrees("/proc/driver/nvidia/gpus", l->gpu, l->n))
		why = "the driver lists other GPUs than the PCI bus";
	else if (uuids)
		why = gpu_lean_uuids(l, topo);
	if (why != NULL) {
		log_debug("gpu discovery nvml=needed reason=\"%s\"", why);
		return -1;
	}
	log_debug("gpu discovery nvml=skipped reason=\"%s is enough%s\"",
	    l->source, uuids ? ", UUIDs from the driver" : "");
	return 0;
}

/* Discover, order and select the GPUs workers will see. */
struct gpu_list *
gpu_discover(hwloc_topology_t topo, int flags, char *err, size_t errlen)
{
	const char *order = getenv("CUDA_DEVICE_ORDER");
	const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
	int fastest = order == NULL || strcmp(order, "PCI_BUS_ID") != 0;
	struct gpu_list *l;
	char warn[256];

	if ((l = calloc(1, sizeof(*l))) == NULL ||
	    (l->gpu = calloc(GPU_MAX, sizeof(*l->gpu))) == NULL ||
	    (l->vis = calloc(GPU_MAX, sizeof(*l->vis))) == NULL) {
		errbuf_set(err, errlen, "out of memory");
		gpu_list_free(l);
		return NULL;
	}
	if (cvd != NULL && *cvd == '\0') {	/* CUDA shows no GPU at all */
		log_debug("gpu discovery nvml=skipped "
		    "reason=\"CUDA_VISIBLE_DEVICES is empty\"");
		l->source = "none";
		return l;
	}
	if (gpu_scan_lean(l, topo, cvd, fastest, !(flags & GPU_NO_NVML)) ==
	    -1 && (l->n = gpu_scan(l, topo, err, errlen)) == -1) {
		gpu_list_free(l);
		return NULL;
	}
	gpu_order(l->gpu, l->n, fastest);
	l->nvis = gpu_visible_parse(cvd, l->gpu, l->n, l->vis, GPU_MAX, warn,
	    sizeof(warn), err, errlen);
	if (l->nvis == -1) {
		gpu_list_free(l);
		return NULL;
	}
	if (warn[0] != '\0')
		log_warnx("%s", warn);
	return l;
}

/* Free a discovery result; NULL is a no-op. */
void
gpu_list_free(struct gpu_list *l)
{
	if (l == NULL)
		return;
	free(l->gpu);
	free(l->vis);
	free(l);
}

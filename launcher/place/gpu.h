/*
 * gpu.h: which GPUs a worker will see, in the order CUDA numbers them.
 *
 * Discovery reads the PCI bus (sysfs on the machine itself, hwloc's PCI
 * devices in a capture: vendor 0x10de, class display/3D) and the driver's
 * /proc files (gpu_driver.c), and asks NVML (nvml_dl.c: libnvidia-ml.so.1
 * loaded with dlopen, never linked) only where they cannot answer.  The
 * physical list is put in CUDA's order (CUDA_DEVICE_ORDER=PCI_BUS_ID: bus
 * id; default FASTEST_FIRST: compute capability then core count, highest
 * first, ties in bus-id order), then CUDA_VISIBLE_DEVICES selects and
 * reorders it exactly as the CUDA runtime does: indices, GPU-/MIG- UUIDs
 * and unique UUID prefixes; the list ends at the first entry that is
 * invalid, out of range or repeated; empty means no GPU.
 *
 * Two files: gpu_visible.c (CUDA's order and CUDA_VISIBLE_DEVICES, pure
 * functions over a list) and gpu_scan.c (finding the GPUs on the bus, in
 * the driver's files and through NVML; gpu_discover ties both together).
 */
#ifndef CGRUN_GPU_H
#define CGRUN_GPU_H

#include <stddef.h>

#include <hwloc.h>

#define GPU_MAX		256	/* GPUs per node considered */
#define GPU_BUSID_MAX	32	/* "dddd:bb:dd.f", with room for NVML's 8-digit domain */
#define GPU_UUID_MAX	96	/* "GPU-8a7e...", "MIG-..." (NVML: 80) */
#define GPU_MIG_MAX	8	/* MIG devices remembered per GPU */
#define GPU_CVD_MAX	4096	/* bytes of CUDA_VISIBLE_DEVICES parsed */

struct gpu_info {
	char		busid[GPU_BUSID_MAX];	/* canonical dddd:bb:dd.f, lower case */
	char		uuid[GPU_UUID_MAX];	/* "GPU-..." or "" when unknown */
	unsigned	domain, bus, dev, func;
	int		cc_major, cc_minor;	/* compute capability; -1: unknown */
	int		cores;			/* CUDA cores; -1: unknown */
	unsigned	model;			/* PCI device id (hwloc); 0: unknown */
	int		nmig;
	char		mig[GPU_MIG_MAX][GPU_UUID_MAX];
};

/* One GPU as a worker sees it: CUDA ordinal = position in the list. */
struct gpu_vis {
	int	phys;			/* index into gpu_list.gpu */
	char	token[GPU_UUID_MAX];	/* how to name it in CUDA_VISIBLE_DEVICES */
};

struct gpu_list {
	const char	*source;	/* "nvml", "hwloc", "sysfs", "none" */
	int		 n;		/* physical GPUs, in CUDA order */
	struct gpu_info	*gpu;
	int		 nvis;
	struct gpu_vis	*vis;
};

/* gpu_visible.c: CUDA's order and CUDA_VISIBLE_DEVICES. */

/* Sort GPUs into CUDA's order: bus id, or fastest first when asked. */
void	gpu_order(struct gpu_info *, int n, int fastest_first);

/*
 * Apply CUDA_VISIBLE_DEVICES (cvd; NULL = unset: every GPU) to the n GPUs
 * in CUDA order, filling out[0..outmax).  Returns the number visible, or -1
 * with err set when an entry cannot be resolved here (a UUID while no UUID
 * is known).  When the list was cut short as CUDA cuts it, the count is
 * returned and warn says where and why.  Pure.
 */
int	gpu_visible_parse(const char *cvd, const struct gpu_info *, int n,
	    struct gpu_vis *out, int outmax, char *warn, size_t warnlen,
	    char *err, size_t errlen);

/*
 * Whether an entry of CUDA_VISIBLE_DEVICES (NULL: unset) names a GPU or a
 * MIG device by UUID (then only NVML can resolve it).  Pure.
 */
int	gpu_visible_names_uuid(const char *cvd);

/* gpu_scan.c: finding the GPUs. */

/*
 * Parse a PCI bus id "[dddd[dddd]:]bb:dd.f" (hex, any case): 0, or -1 when
 * malformed.  Pure.
 */
int	gpu_busid_parse(const char *, unsigned *domain, unsigned *bus,
	    unsigned *dev, unsigned *func);

/* Fill out[] with the NVIDIA GPUs hwloc sees (I/O objects loaded). */
int	gpu_hwloc_scan(hwloc_topology_t, struct gpu_info *out, int max);

/*
 * Fill out[] (at most max) with the NVIDIA display/3D functions sysfs
 * (root, normally "/sys/bus/pci/devices") lists, with bus id and model;
 * -1 when root cannot be read.
 */
int	gpu_sysfs_scan(const char *root, struct gpu_info *out, int max);

/*
 * The CPUs near the PCI device busid as the kernel gives them
 * (root/busid/local_cpulist, the file hwloc's PCI discovery reads to
 * attach the device) into set: 0, or -1 when it cannot be read.
 */
int	gpu_sysfs_local_cpus(const char *root, const char *busid,
	    hwloc_bitmap_t set);

/*
 * Whether sysfs (root, normally "/sys/bus/pci/devices") lists an NVIDIA
 * display/3D PCI function: 1, 0, or -1 when it cannot be read.
 */
int	gpu_sysfs_present(const char *root);
/* gpu_sysfs_present("/sys/bus/pci/devices"), read once per process. */
int	gpu_on_bus(void);

/*
 * Whether the driver's GPU list (root, normally "/proc/driver/nvidia/gpus":
 * a directory per bus id) names exactly the n GPUs given; 1 when there is
 * no such list.
 */
int	gpu_driver_agrees(const char *root, const struct gpu_info *, int n);

/*
 * NVML: fill out[] from the library at path (nvml_dl.c).  Returns the
 * count, or -1 with err set when the library cannot be loaded or
 * initialised or reports a malformed PCI bus id.
 */
int	gpu_nvml_scan(const char *path, struct gpu_info *out, int max,
	    char *err, size_t errlen);

/*
 * gpu_discover's flags.  GPU_NO_NVML: the caller reports no GPU UUIDs (no
 * GPU binding).  Either way NVML is loaded only where the bus (sysfs or
 * hwloc) cannot answer: CUDA_VISIBLE_DEVICES names UUIDs, GPUs of
 * different models that CUDA's fastest-first order could reorder, the
 * driver lists other GPUs than the PCI bus (a container given some GPUs),
 * or, without GPU_NO_NVML, a UUID the driver's /proc files do not give
 * (gpu_driver.c; always for a capture or a named CGRUN_NVML_LIBRARY).
 */
#define GPU_NO_NVML	0x1

/*
 * Everything above: the bus (sysfs on the machine itself, else hwloc's PCI
 * devices) unless only NVML can answer, then NVML (CGRUN_NVML_LIBRARY,
 * default libnvidia-ml.so.1; "none" skips it) else hwloc (topo may be
 * NULL: no fallback), CUDA order,
 * CUDA_VISIBLE_DEVICES.  An empty CUDA_VISIBLE_DEVICES means no GPU and
 * nothing is asked (source "none").  NULL with err set on error.
 */
struct gpu_list *gpu_discover(hwloc_topology_t, int flags, char *err,
	    size_t errlen);
void	gpu_list_free(struct gpu_list *);

#endif

/*
 * nvml_dl.h: GPU enumeration through NVML, the NVIDIA driver's management
 * library, loaded at run time with dlopen (nvml_dl.c) so that cgrun never
 * links CUDA.  Named nvml_dl.h, not nvml.h, so that it never shadows
 * NVIDIA's own header.  It knows nothing of cgrun's GPU list: it reports
 * each device as NVML describes it and gpu_scan.c turns that into a
 * gpu_info.
 */
#ifndef CGRUN_NVML_DL_H
#define CGRUN_NVML_DL_H

#include <stddef.h>

#define NVML_DL_BUSID_MAX	32	/* nvmlPciInfo_t.busId */
#define NVML_DL_UUID_MAX	96	/* "GPU-...", "MIG-..." (NVML: 80) */
#define NVML_DL_MIG_MAX		8	/* MIG devices reported per GPU */

/* One device as NVML reports it. */
struct nvml_dl_gpu {
	unsigned	index;			/* NVML index (bus order) */
	char		busid[NVML_DL_BUSID_MAX]; /* as NVML writes it */
	char		uuid[NVML_DL_UUID_MAX];	/* "" when unknown */
	int		cc_major, cc_minor;	/* compute capability; -1 */
	int		cores;			/* CUDA cores; -1: unknown */
	int		nmig;			/* MIG devices, when MIG is on */
	char		mig[NVML_DL_MIG_MAX][NVML_DL_UUID_MAX];
};

/*
 * Load NVML from path (dlopen), initialise it, and call each(arg, dev,
 * err, errlen) for its first max devices in NVML's order.  Returns the
 * number of devices reported, or -1 with err set when the library cannot
 * be loaded or initialised, a device cannot be read, or each returned -1
 * (each sets err then).  NVML is shut down and unloaded before returning.
 */
int	nvml_dl_scan(const char *path, int max,
	    int (*each)(void *arg, const struct nvml_dl_gpu *, char *err,
	    size_t errlen), void *arg, char *err, size_t errlen);

#endif /* CGRUN_NVML_DL_H */

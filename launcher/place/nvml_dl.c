/*
 * nvml_dl.c: GPU enumeration through NVML, loaded at run time with dlopen
 * so that cgrun never links CUDA (nvml_dl.h).  Only a few functions are used; their
 * types are declared here (NVML's ABI is stable; the versioned _v2/_v3
 * symbols are the ones nvml.h maps its names to).  Tests load a fake
 * library through the same code (CGRUN_NVML_LIBRARY).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "errbuf.h"
#include "nvml_dl.h"

typedef int nvml_ret;
typedef struct nvml_dev *nvml_dev;

/* nvmlPciInfo_t as of NVML 2.285+ (nvmlDeviceGetPciInfo_v2/_v3). */
struct nvml_pci {
	char		busIdLegacy[16];
	unsigned	domain;
	unsigned	bus;
	unsigned	device;
	unsigned	pciDeviceId;
	unsigned	pciSubSystemId;
	char		busId[32];
};

#define NVML_OK			0
#define NVML_FEATURE_ENABLED	1

struct nvml {
	void		*dl;
	nvml_ret	(*init)(void);
	nvml_ret	(*shutdown)(void);
	const char	*(*strerror)(nvml_ret);
	nvml_ret	(*count)(unsigned *);
	nvml_ret	(*handle)(unsigned, nvml_dev *);
	nvml_ret	(*pci)(nvml_dev, struct nvml_pci *);
	nvml_ret	(*uuid)(nvml_dev, char *, unsigned);
	nvml_ret	(*cc)(nvml_dev, int *, int *);
	nvml_ret	(*cores)(nvml_dev, unsigned *);
	nvml_ret	(*mig_mode)(nvml_dev, unsigned *, unsigned *);
	nvml_ret	(*mig_max)(nvml_dev, unsigned *);
	nvml_ret	(*mig_handle)(nvml_dev, unsigned, nvml_dev *);
};

/* Look up the first of two symbol names that the library exports. */
static void *
nvml_sym(void *dl, const char *name, const char *alt)
{
	void *p = dlsym(dl, name);

	if (p == NULL && alt != NULL)
		p = dlsym(dl, alt);
	return p;
}

/* Store a looked-up symbol in a function pointer without type punning. */
#define NVML_BIND(m, field, name, alt) do {				\
	void *sym_ = nvml_sym((m)->dl, (name), (alt));			\
	memcpy(&(m)->field, &sym_, sizeof(sym_));			\
} while (0)

/* Resolve the functions used; 0, or -1 when a required one is missing. */
static int
nvml_bind(struct nvml *m, char *err, size_t errlen)
{
	NVML_BIND(m, init, "nvmlInit_v2", "nvmlInit");
	NVML_BIND(m, shutdown, "nvmlShutdown", NULL);
	NVML_BIND(m, strerror, "nvmlErrorString", NULL);
	NVML_BIND(m, count, "nvmlDeviceGetCount_v2",
	    "nvmlDeviceGetCount");
	NVML_BIND(m, handle, "nvmlDeviceGetHandleByIndex_v2",
	    "nvmlDeviceGetHandleByIndex");
	NVML_BIND(m, pci, "nvmlDeviceGetPciInfo_v3",
	    "nvmlDeviceGetPciInfo_v2");
	NVML_BIND(m, uuid, "nvmlDeviceGetUUID", NULL);
	NVML_BIND(m, cc, "nvmlDeviceGetCudaComputeCapability", NULL);
	NVML_BIND(m, cores, "nvmlDeviceGetNumGpuCores", NULL);
	NVML_BIND(m, mig_mode, "nvmlDeviceGetMigMode", NULL);
	NVML_BIND(m, mig_max, "nvmlDeviceGetMaxMigDeviceCount", NULL);
	NVML_BIND(m, mig_handle, "nvmlDeviceGetMigDeviceHandleByIndex", NULL);
	if (m->init == NULL || m->shutdown == NULL || m->count == NULL ||
	    m->handle == NULL || m->pci == NULL) {
		errbuf_set(err, errlen, "NVML library lacks nvmlInit_v2, "
		    "nvmlDeviceGetCount_v2, nvmlDeviceGetHandleByIndex_v2 or "
		    "nvmlDeviceGetPciInfo_v3");
		return -1;
	}
	return 0;
}

/* NVML's text for an error code, or the number. */
static const char *
nvml_err(const struct nvml *m, nvml_ret r)
{
	static char buf[32];
	const char *s = m->strerror != NULL ? m->strerror(r) : NULL;

	if (s != NULL)
		return s;
	snprintf(buf, sizeof(buf), "error %d", r);
	return buf;
}

/* Record the UUIDs of a GPU's MIG devices, when MIG is enabled. */
static void
nvml_migs(const struct nvml *m, nvml_dev d, struct nvml_dl_gpu *g)
{
	unsigned cur = 0, pend = 0, max = 0, i;
	nvml_dev md;

	if (m->mig_mode == NULL || m->mig_max == NULL ||
	    m->mig_handle == NULL || m->uuid == NULL)
		return;
	if (m->mig_mode(d, &cur, &pend) != NVML_OK ||
	    cur != NVML_FEATURE_ENABLED || m->mig_max(d, &max) != NVML_OK)
		return;
	for (i = 0; i < max && g->nmig < NVML_DL_MIG_MAX; i++) {
		if (m->mig_handle(d, i, &md) != NVML_OK)
			continue;
		if (m->uuid(md, g->mig[g->nmig], NVML_DL_UUID_MAX) == NVML_OK)
			g->mig[g->nmig++][NVML_DL_UUID_MAX - 1] = '\0';
	}
}

/* Read device i into g; 0, or -1 with err set. */
static int
nvml_device(const struct nvml *m, unsigned i, struct nvml_dl_gpu *g,
    char *err, size_t errlen)
{
	struct nvml_pci pci;
	nvml_dev d;
	nvml_ret r;
	unsigned cores;

	memset(g, 0, sizeof(*g));
	g->index = i;
	g->cc_major = g->cc_minor = g->cores = -1;
	if ((r = m->handle(i, &d)) != NVML_OK ||
	    (r = m->pci(d, &pci)) != NVML_OK) {
		errbuf_set(err, errlen, "NVML device %u: "
		    "%s", i, nvml_err(m, r));
		return -1;
	}
	memcpy(g->busid, pci.busId, sizeof(g->busid));
	g->busid[sizeof(g->busid) - 1] = '\0';
	if (m->uuid != NULL && m->uuid(d, g->uuid, sizeof(g->uuid)) != NVML_OK)
		g->uuid[0] = '\0';
	g->uuid[sizeof(g->uuid) - 1] = '\0';
	if (m->cc != NULL && m->cc(d, &g->cc_major, &g->cc_minor) != NVML_OK)
		g->cc_major = g->cc_minor = -1;
	if (m->cores != NULL && m->cores(d, &cores) == NVML_OK)
		g->cores = (int)cores;
	nvml_migs(m, d, g);
	return 0;
}

/* Report the devices of an initialised NVML to each; count or -1. */
static int
nvml_enumerate(const struct nvml *m, int max,
    int (*each)(void *, const struct nvml_dl_gpu *, char *, size_t),
    void *arg, char *err, size_t errlen)
{
	struct nvml_dl_gpu g;
	unsigned n, i;
	nvml_ret r;

	if ((r = m->count(&n)) != NVML_OK) {
		errbuf_set(err, errlen, "nvmlDeviceGetCount: "
		    "%s", nvml_err(m, r));
		return -1;
	}
	if (n > (unsigned)max)
		n = (unsigned)max;
	for (i = 0; i < n; i++)
		if (nvml_device(m, i, &g, err, errlen) == -1 ||
		    each(arg, &g, err, errlen) == -1)
			return -1;
	return (int)n;
}

/* Load NVML from path and report its GPUs (NVML index order = bus order). */
int
nvml_dl_scan(const char *path, int max,
    int (*each)(void *, const struct nvml_dl_gpu *, char *, size_t),
    void *arg, char *err, size_t errlen)
{
	struct nvml m;
	nvml_ret r;
	int n;

	memset(&m, 0, sizeof(m));
	if ((m.dl = dlopen(path, RTLD_NOW | RTLD_LOCAL)) == NULL) {
		errbuf_set(err, errlen, "cannot load %s: %s", path, dlerror());
		return -1;
	}
	if (nvml_bind(&m, err, errlen) == -1) {
		dlclose(m.dl);
		return -1;
	}
	if ((r = m.init()) != NVML_OK) {
		errbuf_set(err, errlen, "nvmlInit: %s", nvml_err(&m, r));
		dlclose(m.dl);
		return -1;
	}
	n = nvml_enumerate(&m, max, each, arg, err, errlen);
	m.shutdown();
	dlclose(m.dl);
	return n;
}

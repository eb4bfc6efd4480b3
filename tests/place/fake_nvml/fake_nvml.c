/*
 * fake_nvml.c: a stand-in for the NVIDIA driver's libnvidia-ml.so.1, built
 * by the Makefile as $(BUILD)/tests/place/fake_nvml/libnvidia-ml.so.1 and loaded
 * by cgrun's GPU discovery through CGRUN_NVML_LIBRARY, with the same
 * dlopen code as the real one.  It exports the few NVML functions cgrun
 * uses and describes a fixed machine:
 *
 *   default: the 8 Tesla T4 of tests/place/topologies/g4dn-2socket-8gpu.xml
 *   (bus ids 18,19,35,36,e7,e8,f4,f5; UUIDs GPU-fake0000-...-00000000000N;
 *   compute capability 7.5; 2560 cores)
 *   FAKE_NVML_GPUS="busid,uuid,major.minor,cores[,MIG-a|MIG-b];...":
 *   another machine (MIG devices listed mean MIG mode is on)
 *   FAKE_NVML_FAIL=init: nvmlInit fails as with no driver loaded
 *   FAKE_NVML_INITLOG=FILE: each nvmlInit appends a line to FILE
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAKE_MAX	32
#define FAKE_MIG_MAX	7
#define EXPORT		__attribute__((visibility("default")))

enum {
	NVML_SUCCESS = 0, NVML_ERROR_UNINITIALIZED = 1,
	NVML_ERROR_INVALID_ARGUMENT = 2, NVML_ERROR_NOT_SUPPORTED = 3,
	NVML_ERROR_INSUFFICIENT_SIZE = 7, NVML_ERROR_DRIVER_NOT_LOADED = 9,
	NVML_ERROR_NOT_FOUND = 6,
};

struct nvml_pci {
	char		busIdLegacy[16];
	unsigned	domain, bus, device, pciDeviceId, pciSubSystemId;
	char		busId[32];
};

struct fake_dev {
	char		busid[32];
	char		uuid[96];
	int		major, minor, cores;
	int		nmig;
	char		mig[FAKE_MIG_MAX][96];
	struct fake_dev	*parent;		/* MIG handles */
	struct fake_dev	*migdev;		/* FAKE_MIG_MAX handles */
};

static struct fake_dev devs[FAKE_MAX];
static struct fake_dev migs[FAKE_MAX][FAKE_MIG_MAX];
static int ndev, inited;

static const char *const g4dn_bus[] = { "18", "19", "35", "36", "e7", "e8",
    "f4", "f5" };

/* The default machine: g4dn.metal's eight T4s. */
static void
fake_default(void)
{
	int i;

	for (i = 0; i < 8; i++) {
		snprintf(devs[i].busid, sizeof(devs[i].busid),
		    "00000000:%s:00.0", g4dn_bus[i]);
		snprintf(devs[i].uuid, sizeof(devs[i].uuid),
		    "GPU-fake0000-0000-0000-0000-%012d", i);
		devs[i].major = 7;
		devs[i].minor = 5;
		devs[i].cores = 2560;
	}
	ndev = 8;
}

/* Parse the MIG list "MIG-a|MIG-b" of device d. */
static void
fake_migs(struct fake_dev *d, char *list)
{
	char *save = NULL, *m;

	for (m = strtok_r(list, "|", &save); m != NULL && d->nmig <
	    FAKE_MIG_MAX; m = strtok_r(NULL, "|", &save))
		snprintf(d->mig[d->nmig++], sizeof(d->mig[0]), "%s", m);
}

/* Parse FAKE_NVML_GPUS. */
static void
fake_parse(const char *spec)
{
	char buf[4096], *save = NULL, *e, *f[5], *fs;
	struct fake_dev *d;
	int k;

	snprintf(buf, sizeof(buf), "%s", spec);
	for (e = strtok_r(buf, ";", &save); e != NULL && ndev < FAKE_MAX;
	    e = strtok_r(NULL, ";", &save)) {
		d = &devs[ndev++];
		for (k = 0; k < 5; k++) {
			f[k] = e;
			if (e != NULL && (fs = strchr(e, ',')) != NULL) {
				*fs = '\0';
				e = fs + 1;
			} else
				e = NULL;
		}
		snprintf(d->busid, sizeof(d->busid), "%s", f[0]);
		snprintf(d->uuid, sizeof(d->uuid), "%s", f[1] ? f[1] : "");
		if (f[2] == NULL || sscanf(f[2], "%d.%d", &d->major,
		    &d->minor) != 2)
			d->major = d->minor = 8;
		d->cores = f[3] ? atoi(f[3]) : 1000;
		if (f[4] != NULL)
			fake_migs(d, f[4]);
	}
}

EXPORT int nvmlInit_v2(void);
EXPORT int nvmlShutdown(void);
EXPORT const char *nvmlErrorString(int);
EXPORT int nvmlDeviceGetCount_v2(unsigned *);
EXPORT int nvmlDeviceGetHandleByIndex_v2(unsigned, struct fake_dev **);
EXPORT int nvmlDeviceGetPciInfo_v3(struct fake_dev *, struct nvml_pci *);
EXPORT int nvmlDeviceGetUUID(struct fake_dev *, char *, unsigned);
EXPORT int nvmlDeviceGetCudaComputeCapability(struct fake_dev *, int *, int *);
EXPORT int nvmlDeviceGetNumGpuCores(struct fake_dev *, unsigned *);
EXPORT int nvmlDeviceGetMigMode(struct fake_dev *, unsigned *, unsigned *);
EXPORT int nvmlDeviceGetMaxMigDeviceCount(struct fake_dev *, unsigned *);
EXPORT int nvmlDeviceGetMigDeviceHandleByIndex(struct fake_dev *, unsigned,
    struct fake_dev **);

/* Start: read the machine description. */
int
nvmlInit_v2(void)
{
	const char *fail = getenv("FAKE_NVML_FAIL"), *spec;
	const char *log = getenv("FAKE_NVML_INITLOG");
	FILE *fp;
	int i, k;

	if (log != NULL && (fp = fopen(log, "a")) != NULL) {
		fputs("init\n", fp);
		fclose(fp);
	}
	if (fail != NULL && strcmp(fail, "init") == 0)
		return NVML_ERROR_DRIVER_NOT_LOADED;
	memset(devs, 0, sizeof(devs));
	ndev = 0;
	if ((spec = getenv("FAKE_NVML_GPUS")) != NULL)
		fake_parse(spec);
	else
		fake_default();
	for (i = 0; i < ndev; i++) {
		devs[i].migdev = migs[i];
		for (k = 0; k < devs[i].nmig; k++) {
			migs[i][k] = devs[i];
			snprintf(migs[i][k].uuid, sizeof(migs[i][k].uuid), "%s",
			    devs[i].mig[k]);
			migs[i][k].parent = &devs[i];
			migs[i][k].nmig = 0;
		}
	}
	inited = 1;
	return NVML_SUCCESS;
}

/* Stop. */
int
nvmlShutdown(void)
{
	if (!inited)
		return NVML_ERROR_UNINITIALIZED;
	inited = 0;
	return NVML_SUCCESS;
}

/* Text of an error code. */
const char *
nvmlErrorString(int r)
{
	switch (r) {
	case NVML_SUCCESS: return "Success";
	case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
	case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
	case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
	default: return "Unknown Error";
	}
}

/* Number of GPUs. */
int
nvmlDeviceGetCount_v2(unsigned *n)
{
	if (!inited)
		return NVML_ERROR_UNINITIALIZED;
	*n = (unsigned)ndev;
	return NVML_SUCCESS;
}

/* Handle of GPU i. */
int
nvmlDeviceGetHandleByIndex_v2(unsigned i, struct fake_dev **d)
{
	if (!inited)
		return NVML_ERROR_UNINITIALIZED;
	if (i >= (unsigned)ndev)
		return NVML_ERROR_INVALID_ARGUMENT;
	*d = &devs[i];
	return NVML_SUCCESS;
}

/* PCI information, as the real library fills it. */
int
nvmlDeviceGetPciInfo_v3(struct fake_dev *d, struct nvml_pci *p)
{
	unsigned dom = 0, bus = 0, dev = 0, fn = 0;

	if (!inited)
		return NVML_ERROR_UNINITIALIZED;
	memset(p, 0, sizeof(*p));
	sscanf(d->busid, "%x:%x:%x.%x", &dom, &bus, &dev, &fn);
	p->domain = dom;
	p->bus = bus;
	p->device = dev;
	p->pciDeviceId = 0x1eb810de;
	snprintf(p->busId, sizeof(p->busId), "%s", d->busid);
	snprintf(p->busIdLegacy, sizeof(p->busIdLegacy), "%04x:%02x:%02x.%x",
	    dom & 0xffff, bus, dev, fn);
	return NVML_SUCCESS;
}

/* UUID of a GPU or MIG device. */
int
nvmlDeviceGetUUID(struct fake_dev *d, char *buf, unsigned len)
{
	if (!inited)
		return NVML_ERROR_UNINITIALIZED;
	if (strlen(d->uuid) >= len)
		return NVML_ERROR_INSUFFICIENT_SIZE;
	strcpy(buf, d->uuid);
	return NVML_SUCCESS;
}

/* Compute capability. */
int
nvmlDeviceGetCudaComputeCapability(struct fake_dev *d, int *major, int *minor)
{
	if (!inited)
		return NVML_ERROR_UNINITIALIZED;
	*major = d->major;
	*minor = d->minor;
	return NVML_SUCCESS;
}

/* CUDA core count. */
int
nvmlDeviceGetNumGpuCores(struct fake_dev *d, unsigned *n)
{
	if (!inited)
		return NVML_ERROR_UNINITIALIZED;
	*n = (unsigned)d->cores;
	return NVML_SUCCESS;
}

/* MIG mode: on when the description lists MIG devices. */
int
nvmlDeviceGetMigMode(struct fake_dev *d, unsigned *cur, unsigned *pend)
{
	if (!inited)
		return NVML_ERROR_UNINITIALIZED;
	*cur = *pend = d->nmig > 0;
	return NVML_SUCCESS;
}

/* Number of MIG device slots. */
int
nvmlDeviceGetMaxMigDeviceCount(struct fake_dev *d, unsigned *n)
{
	if (!inited)
		return NVML_ERROR_UNINITIALIZED;
	*n = (unsigned)d->nmig;
	return NVML_SUCCESS;
}

/* Handle of MIG device i of GPU d. */
int
nvmlDeviceGetMigDeviceHandleByIndex(struct fake_dev *d, unsigned i,
    struct fake_dev **m)
{
	if (!inited)
		return NVML_ERROR_UNINITIALIZED;
	if (i >= (unsigned)d->nmig || d->migdev == NULL)
		return NVML_ERROR_NOT_FOUND;
	*m = &d->migdev[i];
	return NVML_SUCCESS;
}

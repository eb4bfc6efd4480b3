/*
 * topology.c: the machine's hwloc topology (or HWLOC_XMLFILE's), loaded
 * as cheaply as cgrun can: without hwloc's GL/OpenCL/libxml2 plugins and
 * GPU backends, and with PCI devices only for a topology that is not the
 * machine's own (sysfs tells the rest).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hwloc.h>

#include "errbuf.h"
#include "log.h"
#include "topology.h"

#define TOPOLOGY_CPULIST_MAX	4096	/* bytes of a cpu list file read */

/*
 * Whether the topology needs I/O objects: only a topology that is not this
 * machine's live one (HWLOC_XMLFILE fixtures and the like, or hwloc's
 * components chosen by the user).  On the machine itself, GPUs, their bus
 * ids and the CPUs near them come from sysfs (gpu_scan.c), the files
 * hwloc's PCI discovery reads too, in a few reads instead of its 10 ms or
 * more.
 */
static int
topology_need_io(void)
{
	static const char *const vars[] = { "HWLOC_XMLFILE", "HWLOC_SYNTHETIC",
	    "HWLOC_FSROOT", "HWLOC_COMPONENTS", "HWLOC_THISSYSTEM" };
	size_t i;

	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		if (getenv(vars[i]) != NULL)
			return 1;
	return 0;
}

/*
 * hwloc_topology_init() dlopens every hwloc plugin (hwloc_gl pulls in X11,
 * hwloc_opencl the OpenCL loader, hwloc_xml_libxml libxml2 and ICU: ~3 MB
 * of RSS and ~4 ms), before hwloc_topology_set_components() can refuse
 * them; only HWLOC_PLUGINS_BLACKLIST, read at that moment, keeps them out.
 * Set it (added to the user's) around the init, then restore the user's.
 */
static int
topology_init(hwloc_topology_t *topo, int io)
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
topology_components(hwloc_topology_t topo, int io)
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
 * Load the machine's topology (or HWLOC_XMLFILE's, with its PCI devices:
 * topology_need_io).
 */
hwloc_topology_t
topology_load(char *err, size_t errlen)
{
	hwloc_topology_t topo;
	int io = topology_need_io();

	if (topology_init(&topo, io) == -1) {
		errbuf_set(err, errlen, "hwloc_topology_init: %s",
		    strerror(errno));
		return NULL;
	}
	if (getenv("HWLOC_COMPONENTS") == NULL)
		topology_components(topo, io);
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
		errbuf_set(err, errlen, "cannot load the hardware topology%s: "
		    "%s",
		    getenv("HWLOC_XMLFILE") != NULL ? " (HWLOC_XMLFILE)" : "",
		    strerror(errno));
		hwloc_topology_destroy(topo);
		return NULL;
	}
	return topo;
}

/* Whether topo holds PCI devices (hwloc's I/O discovery kept them). */
int
topology_has_io(hwloc_topology_t topo)
{
	enum hwloc_type_filter_e f = HWLOC_TYPE_FILTER_KEEP_NONE;

	return hwloc_topology_get_type_filter(topo, HWLOC_OBJ_PCI_DEVICE,
	    &f) == 0 && f != HWLOC_TYPE_FILTER_KEEP_NONE;
}

/*
 * A kernel cpu list file ("0-5,48-53\n": sysfs local_cpulist,
 * /sys/devices/system/cpu/online) into set: 0, or -1 when it cannot be
 * read, is empty, longer than cgrun reads, or not a cpu list.
 */
int
topology_cpulist_read(const char *path, hwloc_bitmap_t set)
{
	char buf[TOPOLOGY_CPULIST_MAX];
	ssize_t n;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0 || n == (ssize_t)sizeof(buf) - 1)
		return -1;		/* empty, or longer than cgrun reads */
	buf[n] = '\0';
	return hwloc_bitmap_list_sscanf(set, buf) == 0 &&
	    !hwloc_bitmap_iszero(set) ? 0 : -1;
}

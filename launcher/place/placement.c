/*
 * placement.c: how many local ranks --nproc-per-node means (a number, or
 * the GPUs, CPUs or either found on this machine).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "discovery.h"
#include "errbuf.h"
#include "gpu.h"
#include "placement.h"

/* Count the GPUs workers will see (the discovery is kept for plan_new). */
int
placement_gpu_count(char *err, size_t errlen)
{
	hwloc_topology_t topo;
	struct gpu_list *l;
	int n;

	if (discovery_take(&topo, &l, 0, err, errlen) == -1)
		return -1;
	n = l->nvis;
	discovery_keep(topo, l);
	return n;
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
		errbuf_set(err, errlen, "--nproc-per-node=gpu: no GPU found%s "
		    "(NVML and hwloc see no NVIDIA GPU); give a number, cpu "
		    "or auto", getenv("CUDA_VISIBLE_DEVICES") != NULL ?
		    " among CUDA_VISIBLE_DEVICES" : "");
		return -1;
	}
	errno = 0;
	v = strtol(spec, &end, 10);
	if (spec[0] < '0' || spec[0] > '9' || *end != '\0' || errno != 0 ||
	    v < 1 || v > PLAN_NPROC_MAX) {
		errbuf_set(err, errlen, "--nproc-per-node: \"%.32s\" is not a "
		    "number from 1 to %d, gpu, cpu or auto", spec,
		    PLAN_NPROC_MAX);
		return -1;
	}
	return (int)v;
}

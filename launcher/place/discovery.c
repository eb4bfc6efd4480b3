/*
 * discovery.c: the topology and GPU list that --nproc-per-node's discovery
 * found, kept for the plan that follows, so that NVML (slow to initialise
 * on big machines) and the topology are loaded once per agent.
 */
#include <stdlib.h>
#include <string.h>

#include <hwloc.h>

#include "discovery.h"
#include "gpu.h"
#include "topology.h"

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
discovery_key(void)
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
discovery_forget(void)
{
	gpu_list_free(found.l);
	if (found.topo != NULL)
		hwloc_topology_destroy(found.topo);
	free(found.key);
	memset(&found, 0, sizeof(found));
}

/* Topology and GPUs: the kept ones when still valid (ownership passes). */
int
discovery_take(hwloc_topology_t *topo, struct gpu_list **l, int flags,
    char *err, size_t errlen)
{
	char *key = discovery_key();

	if (key != NULL && found.key != NULL && strcmp(key, found.key) == 0) {
		*topo = found.topo;
		*l = found.l;
		found.topo = NULL;
		found.l = NULL;
		discovery_forget();
		free(key);
		return 0;
	}
	discovery_forget();
	free(key);
	*l = NULL;
	if ((*topo = topology_load(err, errlen)) == NULL)
		return -1;
	if ((*l = gpu_discover(*topo, flags, err, errlen)) == NULL) {
		hwloc_topology_destroy(*topo);
		*topo = NULL;
		return -1;
	}
	return 0;
}

/* Keep a discovery for the next discovery_take (ownership passes). */
void
discovery_keep(hwloc_topology_t topo, struct gpu_list *l)
{
	discovery_forget();
	found.topo = topo;
	found.l = l;
	found.key = discovery_key();
}

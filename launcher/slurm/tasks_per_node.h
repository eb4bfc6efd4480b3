/*
 * tasks_per_node.h: Slurm's per-node task counts (tasks_per_node.c), the
 * format of SLURM_STEP_TASKS_PER_NODE and SLURM_TASKS_PER_NODE: counts in
 * node order, comma-separated, a run of equal counts written "N(xR)":
 * "2(x3),1" is 2 tasks on each of nodes 0-2 and 1 on node 3.  A pure,
 * bounded parser: every number is checked against the maxima below.
 */
#ifndef CGRUN_TASKS_PER_NODE_H
#define CGRUN_TASKS_PER_NODE_H

#include <stddef.h>

#define TASKS_PER_NODE_INPUT_MAX	65536	/* bytes of one value */
#define TASKS_PER_NODE_TASKS_MAX	65535	/* tasks on one node */
#define TASKS_PER_NODE_NODES_MAX	65536	/* nodes one value covers */

/* Tasks on node (0-based) into *tasks; -1 with err if the value is
 * malformed, past a maximum, or has no entry for that node. */
int	tasks_per_node_at(const char *s, size_t len, size_t node, int *tasks,
	    char *err, size_t errlen);

#endif /* CGRUN_TASKS_PER_NODE_H */

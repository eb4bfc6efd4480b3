/*
 * slurm.h: what Slurm's environment says about this agent's job (slurm.c,
 * slurm_port.c), for the site defaults (site.c) to apply where the command
 * line, PET_* and the site file left a value out.
 *
 * Under a Slurm step (SLURM_STEP_ID of an srun step): nodes, node list and
 * node rank are the step's (SLURM_STEP_NUM_NODES, SLURM_STEP_NODELIST,
 * SLURM_NODEID); the run id is "JOB.STEP" (JOB is "ARRAYJOB_TASK" in a job
 * array, "HETJOB+OFFSET" for a heterogeneous job's component where Slurm
 * sets them); the endpoint is the step's first host on a port that is the
 * same on every node of the step and differs between concurrent steps
 * (slurm_port.c).  Several tasks of the step on one node are refused.
 * SLURM_NODEID also orders the step's group ranks (the c10d backend sends
 * it as the JOIN's node rank, so node 0 is group rank 0 and hosts the
 * workers' store) and, when the endpoint is the step's first host, says
 * which agent hosts the rendezvous: node 0, whatever the host names say
 * (slurm_is_host).
 * Outside a step (an sbatch script's own shell, salloc) the job's
 * variables: SLURM_JOB_NUM_NODES, the first host of SLURM_JOB_NODELIST on
 * port 29400, run id SLURM_JOB_ID.  CGRUN_SLURM=0 ignores Slurm entirely.
 */
#ifndef CGRUN_SLURM_H
#define CGRUN_SLURM_H

#include <stddef.h>

#include "hostlist.h"

#define SLURM_VALUE_MAX		(HOSTLIST_NAME_MAX + 16) /* host:port, id */
#define SLURM_FROM_MAX		192	/* "where it came from" text */
#define SLURM_JOB_PORT		29400	/* outside a step, as before */

/* What Slurm says; a value is "" (a count 0) when Slurm does not say. */
struct slurm_info {
	int	in_job;				/* SLURM_JOB_ID is set */
	int	in_step;			/* inside an srun step */
	int	nnodes;
	char	nnodes_from[SLURM_FROM_MAX];
	char	host[HOSTLIST_NAME_MAX + 1];	/* the first node */
	int	port;
	char	endpoint[SLURM_VALUE_MAX];	/* host:port */
	char	endpoint_from[SLURM_FROM_MAX];
	char	run_id[SLURM_VALUE_MAX];
	char	run_id_from[SLURM_FROM_MAX];
	int	node_id;			/* SLURM_NODEID; -1: unknown */
	int	tasks_here;			/* the step's tasks on this node */
};

/* Read the SLURM_* variables into si; -1 with err for a usage error (a
 * malformed step variable, several tasks of the step on this node). */
int	slurm_read(struct slurm_info *si, char *err, size_t errlen);
/* is_host for an endpoint on endpoint_host: 1 on the step's node 0, 0 on
 * its other nodes when endpoint_host is the step's first host; -1 (no
 * opinion: torchrun's heuristic) outside a step, without SLURM_NODEID,
 * or for an endpoint elsewhere. */
int	slurm_is_host(const struct slurm_info *si, const char *endpoint_host);
/* First host of a Slurm node list into host; -1 (err set when given) if
 * the list is malformed, the name does not fit, or is all digits. */
int	slurm_first_host(const char *list, char *host, size_t len, char *err,
	    size_t errlen);

/* slurm_port.c: the step's rendezvous port (see there for the formula). */
#define SLURM_PORT_BASE		20000
#define SLURM_PORT_SPAN		9000	/* ports 20000-28999 */
#define SLURM_PORT_STEPS	16	/* a job's steps before the next job's */

/* The port of step `step` of job `job`. */
int	slurm_port_derive(unsigned long job, unsigned long step);
/* The port for si: CGRUN_SLURM_PORT, the first of SLURM_STEP_RESV_PORTS,
 * else derived; its source in from.  -1 with err if a value is bad. */
int	slurm_port_pick(unsigned long job, unsigned long step, char *from,
	    size_t fromlen, char *err, size_t errlen);
/* 0 if host:port can be bound here (or host is not this machine); -1 with
 * a readable err if another program holds the port. */
int	slurm_port_check(const struct slurm_info *si, char *err, size_t errlen);

#endif /* CGRUN_SLURM_H */

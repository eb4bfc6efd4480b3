/*
 * slurm.c: reads Slurm's environment into a struct slurm_info (the rules
 * are in slurm.h; the port in slurm_port.c).  Every value keeps where it
 * came from, so `cgrun -v` can say it.  A step variable that is malformed,
 * or several tasks of the step on this node, is a usage error: guessing
 * there makes agents wait for nodes that never come or fight each other.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "errbuf.h"
#include "log.h"
#include "slurm.h"
#include "tasks_per_node.h"

#define SLURM_STEP_SPECIAL	0xfffffff0UL	/* batch, extern, interactive */

/* Parse a decimal number (digits only, at most max) into *out; 0 or -1. */
static int
slurm_num(const char *v, unsigned long max, unsigned long *out)
{
	size_t i;

	*out = 0;
	if (v == NULL || *v == '\0' || strlen(v) > 10)
		return -1;
	for (i = 0; v[i] != '\0'; i++) {
		if (v[i] < '0' || v[i] > '9')
			return -1;
		*out = *out * 10 + (unsigned long)(v[i] - '0');
	}
	return *out <= max ? 0 : -1;
}

/* The first of two variables that is set and not empty; its name in *name. */
static const char *
slurm_env2(const char *a, const char *b, const char **name)
{
	const char *v;

	*name = a;
	if ((v = getenv(a)) != NULL && *v != '\0')
		return v;
	*name = b;
	if (b != NULL && (v = getenv(b)) != NULL && *v != '\0')
		return v;
	return NULL;
}

/* First host of a Slurm node list (see slurm.h). */
int
slurm_first_host(const char *list, char *host, size_t len, char *err,
    size_t errlen)
{
	char e[256];

	if (hostlist_nth(list, strlen(list), 0, host, len, e, sizeof(e)) !=
	    HOSTLIST_OK) {
		if (err != NULL)
			errbuf_set(err, errlen, "%s", e);
		return -1;
	}
	if (strspn(host, "0123456789") == strlen(host)) {
		if (err != NULL)
			errbuf_set(err, errlen, "first host \"%s\" is all "
			    "digits (it would be read as an address)", host);
		return -1;
	}
	return 0;
}

/*
 * Whether this process runs inside an srun step: 1 with the step id in
 * *step, 0 if not (no step id, or the batch script's, salloc's
 * interactive or the extern step, which Slurm numbers from 0xfffffffa or
 * prints as negative), -1 with err if the id is not a number.
 */
static int
slurm_step_id(unsigned long *step, const char **name, char *err,
    size_t errlen)
{
	const char *v = slurm_env2("SLURM_STEP_ID", "SLURM_STEPID", name);

	if (v == NULL || v[0] == '-')
		return 0;
	if (slurm_num(v, 0xffffffffUL, step) == -1) {
		errbuf_set(err, errlen, "%s=\"%.32s\" is not a Slurm step id",
		    *name, v);
		return -1;
	}
	return *step < SLURM_STEP_SPECIAL;
}

/* Outside a step: the job's node count, first host (port 29400) and id. */
static void
slurm_job_shell(struct slurm_info *si, const char *job)
{
	const char *v, *name;
	unsigned long n;
	char e[256];

	if ((v = slurm_env2("SLURM_JOB_NUM_NODES", "SLURM_NNODES", &name)) !=
	    NULL && slurm_num(v, HOSTLIST_HOSTS_MAX, &n) == 0 && n > 0) {
		si->nnodes = (int)n;
		snprintf(si->nnodes_from, sizeof(si->nnodes_from), "%s", name);
	}
	if ((v = slurm_env2("SLURM_JOB_NODELIST", "SLURM_NODELIST", &name)) !=
	    NULL) {
		if (slurm_first_host(v, si->host, sizeof(si->host), e,
		    sizeof(e)) == 0) {
			si->port = SLURM_JOB_PORT;
			snprintf(si->endpoint_from, sizeof(si->endpoint_from),
			    "the first host of %s", name);
		} else
			log_warnx("slurm: %s not used: %s", name, e);
	}
	snprintf(si->run_id, sizeof(si->run_id), "%s", job);
	snprintf(si->run_id_from, sizeof(si->run_id_from), "SLURM_JOB_ID");
}

/*
 * The step's node count and first host: SLURM_STEP_NUM_NODES (or srun's
 * SLURM_NNODES, or the list's length) and SLURM_STEP_NODELIST.
 */
static int
slurm_step_nodes(struct slurm_info *si, char *err, size_t errlen)
{
	const char *list, *lname, *v, *name;
	unsigned long n;
	size_t count;
	char e[256];

	if ((list = slurm_env2("SLURM_STEP_NODELIST", NULL, &lname)) == NULL &&
	    (list = slurm_env2("SLURM_JOB_NODELIST", "SLURM_NODELIST",
	    &lname)) == NULL) {
		errbuf_set(err, errlen, "Slurm step without a node list "
		    "(SLURM_STEP_NODELIST)");
		return -1;
	}
	if (slurm_first_host(list, si->host, sizeof(si->host), e,
	    sizeof(e)) == -1 || hostlist_count(list, strlen(list), &count, e,
	    sizeof(e)) != HOSTLIST_OK) {
		errbuf_set(err, errlen, "%s: %s", lname, e);
		return -1;
	}
	snprintf(si->endpoint_from, sizeof(si->endpoint_from),
	    "the first host of %s", lname);
	si->nnodes = (int)count;
	snprintf(si->nnodes_from, sizeof(si->nnodes_from), "the length of %s",
	    lname);
	if ((v = slurm_env2("SLURM_STEP_NUM_NODES", "SLURM_NNODES", &name)) ==
	    NULL)
		return 0;
	if (slurm_num(v, HOSTLIST_HOSTS_MAX, &n) == -1 || n == 0) {
		errbuf_set(err, errlen, "%s=\"%.32s\" is not a node "
		    "count", name,
		    v);
		return -1;
	}
	if (n != count)
		log_warnx("slurm: %s=%lu but %s names %zu nodes; using %s",
		    name, n, lname, count, name);
	si->nnodes = (int)n;
	snprintf(si->nnodes_from, sizeof(si->nnodes_from), "%s", name);
	return 0;
}

/* The step's run id (see slurm.h) from its job id and step id. */
static void
slurm_step_run_id(struct slurm_info *si, const char *job, unsigned long step,
    const char *stepvar)
{
	const char *aj = getenv("SLURM_ARRAY_JOB_ID"),
	    *at = getenv("SLURM_ARRAY_TASK_ID"),
	    *hj = getenv("SLURM_HET_JOB_ID"),
	    *ho = getenv("SLURM_HET_JOB_OFFSET");
	unsigned long a, t;

	if (slurm_num(aj, 0xffffffffUL, &a) == 0 &&
	    slurm_num(at, 0xffffffffUL, &t) == 0) {
		snprintf(si->run_id, sizeof(si->run_id), "%lu_%lu.%lu", a, t,
		    step);
		snprintf(si->run_id_from, sizeof(si->run_id_from),
		    "SLURM_ARRAY_JOB_ID, SLURM_ARRAY_TASK_ID and %s", stepvar);
	} else if (slurm_num(hj, 0xffffffffUL, &a) == 0 &&
	    slurm_num(ho, 0xffffffffUL, &t) == 0) {
		snprintf(si->run_id, sizeof(si->run_id), "%lu+%lu.%lu", a, t,
		    step);
		snprintf(si->run_id_from, sizeof(si->run_id_from),
		    "SLURM_HET_JOB_ID, SLURM_HET_JOB_OFFSET and %s", stepvar);
	} else {
		snprintf(si->run_id, sizeof(si->run_id), "%s.%lu", job, step);
		snprintf(si->run_id_from, sizeof(si->run_id_from),
		    "SLURM_JOB_ID and %s", stepvar);
	}
}

/* This node's id in the step (SLURM_NODEID), checked against the count. */
static int
slurm_step_node_id(struct slurm_info *si, char *err, size_t errlen)
{
	const char *v = getenv("SLURM_NODEID");
	unsigned long n;

	si->node_id = -1;
	if (v == NULL)
		return 0;
	if (slurm_num(v, HOSTLIST_HOSTS_MAX, &n) == -1 ||
	    n >= (unsigned long)si->nnodes) {
		errbuf_set(err, errlen, "SLURM_NODEID=\"%.32s\" is not a node "
		    "of this step (%d nodes, %s)",
		    v, si->nnodes, si->nnodes_from);
		return -1;
	}
	si->node_id = (int)n;
	return 0;
}

/*
 * How many tasks of the step run on this node: this node's entry of
 * SLURM_STEP_TASKS_PER_NODE (else SLURM_TASKS_PER_NODE), else
 * SLURM_NTASKS_PER_NODE; its source in *name.  0 if nobody says.
 */
static int
slurm_step_tasks(const struct slurm_info *si, char *val, size_t vallen,
    const char **name)
{
	const char *v;
	unsigned long n;
	char e[128];
	int tasks;

	if ((v = slurm_env2("SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE",
	    name)) != NULL) {
		snprintf(val, vallen, "%s", v);
		if (tasks_per_node_at(v, strlen(v), si->node_id < 0 ? 0 :
		    (size_t)si->node_id, &tasks, e, sizeof(e)) == 0)
			return tasks;
		log_warnx("slurm: %s not used: %s", *name, e);
	}
	if ((v = slurm_env2("SLURM_NTASKS_PER_NODE", NULL, name)) != NULL &&
	    slurm_num(v, TASKS_PER_NODE_TASKS_MAX, &n) == 0) {
		snprintf(val, vallen, "%s", v);
		return (int)n;
	}
	return 0;
}

/* Refuse a step that runs several tasks (agents) on this node. */
static int
slurm_step_one_task(struct slurm_info *si, char *err, size_t errlen)
{
	const char *name = "", *lid = getenv("SLURM_LOCALID");
	unsigned long local = 0;
	char val[64] = "";

	si->tasks_here = slurm_step_tasks(si, val, sizeof(val), &name);
	if (lid != NULL && slurm_num(lid, TASKS_PER_NODE_TASKS_MAX,
	    &local) == -1)
		local = 0;
	if (si->tasks_here <= 1 && local == 0)
		return 0;
	errbuf_set(err, errlen, "Slurm started %d tasks of this step on this "
	    "node (%s=%.32s, this is SLURM_LOCALID=%lu): cgrun is one agent "
	    "per node and starts the node's workers itself; launch it with "
	    "`srun --ntasks-per-node=1 cgrun --nproc-per-node=N ...`, or set "
	    "CGRUN_SLURM=0 to ignore Slurm", si->tasks_here > 1 ?
	    si->tasks_here : (int)local + 1, *val ? name : "SLURM_LOCALID",
	    *val ? val : lid, local);
	return -1;
}

/* Inside a step: nodes, node id, one task per node, run id, endpoint. */
static int
slurm_step(struct slurm_info *si, const char *job, unsigned long step,
    const char *stepvar, char *err, size_t errlen)
{
	const char *off = getenv("SLURM_HET_JOB_OFFSET");
	unsigned long jobnum, o;
	char from[SLURM_FROM_MAX];
	int port;

	if (slurm_num(job, 0xffffffffUL, &jobnum) == -1) {
		errbuf_set(err, errlen, "SLURM_JOB_ID=\"%.32s\" is not a Slurm "
		    "job id", job);
		return -1;
	}
	if (slurm_num(off, 0xffffffffUL, &o) == 0)	/* the component's id */
		jobnum += o;
	if (slurm_step_nodes(si, err, errlen) == -1 ||
	    slurm_step_node_id(si, err, errlen) == -1 ||
	    slurm_step_one_task(si, err, errlen) == -1 ||
	    (port = slurm_port_pick(jobnum, step, from, sizeof(from), err,
	    errlen)) == -1)
		return -1;
	si->port = port;
	slurm_step_run_id(si, job, step, stepvar);
	snprintf(si->endpoint_from + strlen(si->endpoint_from),
	    sizeof(si->endpoint_from) - strlen(si->endpoint_from),
	    ", port %s", from);
	log_info("slurm: step run_id=%s nodes=%d node_id=%d tasks_here=%d",
	    si->run_id, si->nnodes, si->node_id, si->tasks_here);
	return 0;
}

/* is_host under a Slurm step (see slurm.h). */
int
slurm_is_host(const struct slurm_info *si, const char *endpoint_host)
{
	if (!si->in_step || si->node_id < 0 || si->host[0] == '\0' ||
	    endpoint_host == NULL || strcasecmp(endpoint_host, si->host) != 0)
		return -1;
	return si->node_id == 0;
}

/* Read what Slurm says (see slurm.h). */
int
slurm_read(struct slurm_info *si, char *err, size_t errlen)
{
	const char *job = getenv("SLURM_JOB_ID"), *off = getenv("CGRUN_SLURM"),
	    *stepvar;
	unsigned long step;
	int r;

	memset(si, 0, sizeof(*si));
	si->node_id = -1;
	if (off != NULL && (strcmp(off, "0") == 0 ||
	    strcasecmp(off, "off") == 0 || strcasecmp(off, "no") == 0)) {
		log_info("slurm: ignored (CGRUN_SLURM=%s)", off);
		return 0;
	}
	if (job == NULL || *job == '\0')
		return 0;
	si->in_job = 1;
	if ((r = slurm_step_id(&step, &stepvar, err, errlen)) == -1)
		return -1;
	si->in_step = r;
	if (!r)
		slurm_job_shell(si, job);
	else if (slurm_step(si, job, step, stepvar, err, errlen) == -1)
		return -1;
	if (si->port > 0)
		snprintf(si->endpoint, sizeof(si->endpoint), "%s:%d", si->host,
		    si->port);
	return 0;
}

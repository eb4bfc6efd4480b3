/*
 * site.c: site defaults for multi-node jobs, so that
 *	cgrun --nproc-per-node=gpu --nnodes=2 train.py
 * works as typed on a cluster whose administrator runs cgrun-rdzvd:
 *
 *   --rdzv-endpoint  CGRUN_RDZV_ENDPOINT, else rdzv_endpoint in the site
 *                    file (CGRUN_CONFIG, default /etc/cgrun/cgrun.conf),
 *                    else under Slurm the first host of the step (or of
 *                    the allocation) on the step's port (slurm/slurm.h);
 *                    such an endpoint also makes the backend c10d unless
 *                    --rdzv-backend (or rdzv_backend in the site file)
 *                    says otherwise
 *   --rdzv-id        the batch system's id: Slurm's job and step
 *                    (slurm/slurm.h), PBS_JOBID, LSB_JOBID, FLUX_JOB_ID
 *   --nnodes         under Slurm, the step's (or the job's) node count
 *   --rdzv-conf      rdzv_conf in the site file
 *   group ranks      under a Slurm step, in SLURM_NODEID order, and the
 *                    agent of SLURM_NODEID 0 hosts an endpoint on the
 *                    step's first host (c10d backend; slurm/slurm.h)
 *   --hang-timeout   hang_timeout in the site file (single-node jobs too)
 *   --event-log      event_log in the site file (every job; a path with
 *                    $run_id, $node, $pid, observe/observe.c), unless
 *                    --event-log-handler was given
 *   --metrics-file   metrics_file in the site file (every job)
 *                    (of these two, one that cannot be written is warned
 *                    about and the job runs: observe.c)
 *
 * Command-line options (and torchrun's PET_* variables) always win; -v logs
 * where each value came from.  The site file has "key = value" lines,
 * '#' comments and optional double quotes around the value.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "endpoint.h"
#include "errbuf.h"
#include "evlog.h"
#include "log.h"
#include "observe.h"
#include "options.h"
#include "site.h"
#include "slurm.h"

#define SITE_CONFIG		"/etc/cgrun/cgrun.conf"
#define SITE_LINE_MAX		4096

/* What the site file says (NULL: not set). */
struct site_file {
	char	*endpoint, *backend, *conf, *hang, *evlog, *mfile;
	char	 where[SITE_LINE_MAX];	/* "file:line" of the endpoint */
	char	 hang_where[SITE_LINE_MAX];	/* "file:line" of hang_timeout */
	char	 evlog_where[SITE_LINE_MAX];	/* of event_log */
	char	 mfile_where[SITE_LINE_MAX];	/* of metrics_file */
};

/* Trim spaces at both ends, and one pair of double quotes. */
static char *
site_trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	if (e - s >= 2 && s[0] == '"' && e[-1] == '"') {
		e[-1] = '\0';
		s++;
	}
	return s;
}

/* Apply one "key = value" line of the site file; -1 with err. */
static int
site_line(struct site_file *sf, char *line, const char *path, int n,
    char *err, size_t errlen)
{
	char *eq, *k, *v, **dst = NULL;

	if ((eq = strchr(line, '#')) != NULL && strchr(line, '"') == NULL)
		*eq = '\0';
	k = site_trim(line);
	if (*k == '\0' || *k == '#')
		return 0;
	if ((eq = strchr(k, '=')) == NULL) {
		errbuf_set(err, errlen, "%s:%d: expected key = value", path, n);
		return -1;
	}
	*eq = '\0';
	k = site_trim(k);
	v = site_trim(eq + 1);
	if (strcmp(k, "rdzv_endpoint") == 0 || strcmp(k, "rdzv-endpoint") == 0) {
		dst = &sf->endpoint;
		snprintf(sf->where, sizeof(sf->where), "%s:%d", path, n);
	} else if (strcmp(k, "rdzv_backend") == 0 ||
	    strcmp(k, "rdzv-backend") == 0)
		dst = &sf->backend;
	else if (strcmp(k, "rdzv_conf") == 0 || strcmp(k, "rdzv-conf") == 0)
		dst = &sf->conf;
	else if (strcmp(k, "hang_timeout") == 0 ||
	    strcmp(k, "hang-timeout") == 0) {
		dst = &sf->hang;
		snprintf(sf->hang_where, sizeof(sf->hang_where), "%s:%d", path,
		    n);
	} else if (strcmp(k, "event_log") == 0 || strcmp(k, "event-log") == 0) {
		dst = &sf->evlog;
		snprintf(sf->evlog_where, sizeof(sf->evlog_where), "%s:%d",
		    path, n);
	} else if (strcmp(k, "metrics_file") == 0 ||
	    strcmp(k, "metrics-file") == 0) {
		dst = &sf->mfile;
		snprintf(sf->mfile_where, sizeof(sf->mfile_where), "%s:%d",
		    path, n);
	} else {
		log_warnx("%s:%d: unknown key %s ignored", path, n, k);
		return 0;
	}
	free(*dst);
	if ((*dst = strdup(v)) == NULL) {
		errbuf_set(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

/* Read the site file; a missing default file is no error. */
static int
site_read(struct site_file *sf, char *err, size_t errlen)
{
	const char *path = getenv("CGRUN_CONFIG");
	char line[SITE_LINE_MAX];
	FILE *f;
	int n = 0, rc = 0;

	if (path == NULL || *path == '\0')
		path = SITE_CONFIG;
	if ((f = fopen(path, "re")) == NULL) {
		if (errno == ENOENT && getenv("CGRUN_CONFIG") == NULL)
			return 0;
		errbuf_set(err, errlen, "site configuration %s: %s", path,
		    strerror(errno));
		return -1;
	}
	while (rc == 0 && fgets(line, sizeof(line), f) != NULL) {
		n++;
		line[strcspn(line, "\n")] = '\0';
		rc = site_line(sf, line, path, n, err, errlen);
	}
	fclose(f);
	return rc;
}

/* Replace a string option. */
static int
site_set(char **dst, const char *v, const char *name, const char *from)
{
	char *s;

	if ((s = strdup(v)) == NULL)
		return -1;
	free(*dst);
	*dst = s;
	log_info("site: %s=%s from %s", name, v, from);
	return 0;
}

/* --nnodes from Slurm, when not given. */
static int
site_nnodes(struct cgrun_options *o, const struct slurm_info *si)
{
	char v[16];

	if (o->nnodes != NULL || si->nnodes < 1)
		return 0;
	snprintf(v, sizeof(v), "%d", si->nnodes);
	if (site_set(&o->nnodes, v, "nnodes", si->nnodes_from) == -1)
		return -1;
	o->nnodes_min = o->nnodes_max = si->nnodes;
	return 0;
}

/* --rdzv-endpoint from the environment, the site file or Slurm (*set 2). */
static int
site_endpoint(struct cgrun_options *o, const struct site_file *sf,
    const struct slurm_info *si, int *set)
{
	const char *v = getenv("CGRUN_RDZV_ENDPOINT");

	*set = 0;
	if (o->rdzv_endpoint != NULL || o->standalone)
		return 0;
	if (v != NULL && *v != '\0') {
		*set = 1;
		return site_set(&o->rdzv_endpoint, v, "rdzv_endpoint",
		    "CGRUN_RDZV_ENDPOINT");
	}
	if (sf->endpoint != NULL) {
		*set = 1;
		return site_set(&o->rdzv_endpoint, sf->endpoint,
		    "rdzv_endpoint", sf->where);
	}
	if (si->endpoint[0] != '\0') {
		*set = 2;
		return site_set(&o->rdzv_endpoint, si->endpoint,
		    "rdzv_endpoint", si->endpoint_from);
	}
	return 0;
}

/* --rdzv-id from Slurm or the batch system's job id; -1 with err if none. */
static int
site_run_id(struct cgrun_options *o, const struct slurm_info *si, char *err,
    size_t errlen)
{
	static const char *vars[] = { "PBS_JOBID", "LSB_JOBID", "FLUX_JOB_ID" };
	const char *v;
	size_t i;

	if (o->rdzv_id != NULL)
		return 0;
	if (si->run_id[0] != '\0')
		return site_set(&o->rdzv_id, si->run_id, "rdzv_id",
		    si->run_id_from);
	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		if ((v = getenv(vars[i])) != NULL && *v != '\0')
			return site_set(&o->rdzv_id, v, "rdzv_id", vars[i]);
	errbuf_set(err, errlen, "a multi-node job needs --rdzv-id: none given "
	    "and no batch system job id (SLURM_JOB_ID, PBS_JOBID, LSB_JOBID, "
	    "FLUX_JOB_ID) is set");
	return -1;
}

/*
 * Under a Slurm step, for the c10d backend: the step's SLURM_NODEID orders
 * group ranks, and says whether this agent hosts the endpoint (when that
 * is the step's first host and --rdzv-conf has no is_host).
 */
static void
site_slurm_node(struct cgrun_options *o, const struct slurm_info *si)
{
	char host[HOSTLIST_NAME_MAX + 1];
	int port;

	if (!si->in_step || si->node_id < 0)
		return;
	o->slurm_step = 1;
	o->slurm_node_id = si->node_id;
	o->slurm_is_host = endpoint_parse(o->rdzv_endpoint, host, sizeof(host),
	    &port, 0) == 0 ? slurm_is_host(si, host) : -1;
	log_info("site: group rank order from SLURM_NODEID=%d; is_host %s",
	    si->node_id, o->slurm_is_host == -1 ? "by torchrun's heuristic "
	    "(the endpoint is not the step's first host)" : o->slurm_is_host ?
	    "yes (SLURM_NODEID 0 of the step)" : "no (not SLURM_NODEID 0)");
}

/*
 * Under a Slurm step, for the static backend: --node-rank, when not given,
 * is the step's SLURM_NODEID (torchrun's default 0 would make every node
 * rank 0).
 */
static void
site_static_node_rank(struct cgrun_options *o, const struct slurm_info *si)
{
	if (!si->in_step || si->node_id < 0 || o->explicit_node_rank ||
	    (o->rdzv_backend != NULL && strcmp(o->rdzv_backend, "static") != 0))
		return;
	o->node_rank = si->node_id;
	log_info("site: node_rank=%d from SLURM_NODEID", si->node_id);
}

/* --hang-timeout from the site file, when not given; -1 with err. */
static int
site_hang(struct cgrun_options *o, const struct site_file *sf, char *err,
    size_t errlen)
{
	if (!isnan(o->hang_timeout) || sf->hang == NULL)
		return 0;
	if (options_parse_duration(sf->hang, &o->hang_timeout) == -1) {
		errbuf_set(err, errlen, "%s: hang_timeout: expected a duration "
		    "(10, 90s, 30m, 1h), got \"%.100s\"", sf->hang_where,
		    sf->hang);
		return -1;
	}
	log_info("site: hang_timeout=%s from %s", sf->hang, sf->hang_where);
	return 0;
}

/*
 * One of the site's sinks (event_log, metrics_file) into *dst with where
 * it came from in *where_dst; -1 when out of memory.
 */
static int
site_sink(char **dst, char **where_dst, const char *v, const char *key,
    const char *where)
{
	if (site_set(dst, v, key, where) == -1)
		return -1;
	free(*where_dst);
	return (*where_dst = strdup(where)) != NULL ? 0 : -1;
}

/*
 * --event-log and --metrics-file from the site file, when not given; an
 * explicit --event-log-handler (console: stderr, null: none) wins too.
 * A malformed event_log is a usage error naming its line; one that cannot
 * be written is only warned about (observe.c).
 */
static int
site_observe(struct cgrun_options *o, const struct site_file *sf, char *err,
    size_t errlen)
{
	char what[SITE_LINE_MAX + 16];
	int fd;

	if (o->event_log == NULL && o->event_log_handler == NULL &&
	    sf->evlog != NULL && *sf->evlog != '\0') {
		if (evlog_dest_parse(sf->evlog, &fd) == -1) {
			errbuf_set(err, errlen, "%s: event_log: expected a file "
			    "or fd:N, got \"%.100s\"", sf->evlog_where,
			    sf->evlog);
			return -1;
		}
		snprintf(what, sizeof(what), "%s: event_log", sf->evlog_where);
		if (observe_path_check(what, sf->evlog, err, errlen) == -1)
			return -1;
		if (site_sink(&o->event_log, &o->event_log_site, sf->evlog,
		    "event_log", sf->evlog_where) == -1)
			goto oom;
	}
	if (o->metrics_file == NULL && sf->mfile != NULL &&
	    *sf->mfile != '\0') {
		snprintf(what, sizeof(what), "%s: metrics_file",
		    sf->mfile_where);
		if (observe_path_check(what, sf->mfile, err, errlen) == -1)
			return -1;
		if (site_sink(&o->metrics_file, &o->metrics_file_site,
		    sf->mfile, "metrics_file", sf->mfile_where) == -1)
			goto oom;
	}
	return 0;
oom:
	errbuf_set(err, errlen, "out of memory");
	return -1;
}

/* Fill what the command line left out from the site's defaults. */
int
site_apply(struct cgrun_options *o, char *err, size_t errlen)
{
	struct slurm_info si;
	struct site_file sf;
	int rc = -1, from_site;

	memset(&sf, 0, sizeof(sf));
	if (site_read(&sf, err, errlen) == -1 ||
	    slurm_read(&si, err, errlen) == -1 ||
	    site_hang(o, &sf, err, errlen) == -1 ||
	    site_observe(o, &sf, err, errlen) == -1)
		goto out;
	if (site_nnodes(o, &si) == -1 ||
	    site_endpoint(o, &sf, &si, &from_site) == -1)
		goto oom;
	if (!options_multinode(o)) {
		rc = 0;
		goto out;
	}
	if (o->rdzv_backend == NULL && (from_site || sf.backend != NULL) &&
	    site_set(&o->rdzv_backend, sf.backend ? sf.backend : "c10d",
	    "rdzv_backend", sf.backend ? "the site file" :
	    "the site's endpoint") == -1)
		goto oom;
	if (o->rdzv_conf == NULL && sf.conf != NULL &&
	    site_set(&o->rdzv_conf, sf.conf, "rdzv_conf", "the site file") == -1)
		goto oom;
	if (o->rdzv_backend != NULL && strcmp(o->rdzv_backend, "c10d") == 0 &&
	    (site_run_id(o, &si, err, errlen) == -1 ||
	    (from_site == 2 && slurm_port_check(&si, err, errlen) == -1)))
		goto out;
	if (o->rdzv_backend != NULL && strcmp(o->rdzv_backend, "c10d") == 0)
		site_slurm_node(o, &si);
	else if (o->rdzv_backend != NULL &&
	    strncmp(o->rdzv_backend, "etcd", 4) == 0 && si.in_step &&
	    si.node_id >= 0) {
		o->slurm_step = 1;
		o->slurm_node_id = si.node_id;
		log_info("site: group rank order from SLURM_NODEID=%d",
		    si.node_id);
	}
	site_static_node_rank(o, &si);
	rc = 0;
	goto out;
oom:
	errbuf_set(err, errlen, "out of memory");
out:
	free(sf.endpoint);
	free(sf.backend);
	free(sf.conf);
	free(sf.hang);
	free(sf.evlog);
	free(sf.mfile);
	return rc;
}

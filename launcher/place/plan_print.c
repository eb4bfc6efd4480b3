/*
 * plan_print.c: the plan shown to people: --dry-run's lines or JSON
 * document, and the same lines in the -v start-up log.
 */
#include <stdio.h>

#include <hwloc.h>
#include <json.h>

#include "log.h"
#include "plan.h"
#include "plan_priv.h"

/* Rank r's plan as one text line (no newline) into line. */
static void
plan_print_line(const struct plan *p, int r, char *line, size_t len)
{
	const struct rank_plan *rp = &p->r[r];
	char gpu[16], cpus[2048], nodes[256];

	if (rp->gpu >= 0)
		snprintf(gpu, sizeof(gpu), "%d", rp->gpu);
	else
		snprintf(gpu, sizeof(gpu), "none");
	snprintf(line, len, "local_rank=%d gpu=%s bus_id=%s numa=%s cpus=%s%s",
	    r, gpu, rp->gpu >= 0 ? rp->busid : "none",
	    plan_list(rp->nodeset, nodes, sizeof(nodes)),
	    rp->cpuset != NULL ? plan_list(rp->cpuset, cpus, sizeof(cpus)) :
	    "unbound", rp->shared ? " shared=yes" : "");
}

/* The summary line of the plan into line. */
static void
plan_print_header(const struct plan *p, char *line, size_t len)
{
	char cpus[1024];
	int n;

	n = snprintf(line, len, "placement nproc=%d gpus=%d gpu_source=%s "
	    "cpu_bind=%s mem_bind=%s gpu_visibility=%s", p->nproc, p->ngpu,
	    p->source, plan_modes[p->mode].name, plan_binds_memory(p) ?
	    plan_mem_names[p->mem] : "none", p->own ? "own" : "all");
	if (p->allowed != NULL && n > 0 && (size_t)n < len)
		snprintf(line + n, len - (size_t)n, " cpus_allowed=%s "
		    "cpus_allowed_by=\"%s\"", plan_list(p->allowed, cpus,
		    sizeof(cpus)), p->allowed_why);
}

/* A bitmap as a JSON array of its indexes. */
static json_object *
plan_print_json_list(hwloc_const_bitmap_t b)
{
	json_object *a = json_object_new_array();
	int i;

	hwloc_bitmap_foreach_begin(i, b)
		json_object_array_add(a, json_object_new_int(i));
	hwloc_bitmap_foreach_end();
	return a;
}

/* Rank r's plan as a JSON object. */
static json_object *
plan_print_json_rank(const struct plan *p, int r)
{
	const struct rank_plan *rp = &p->r[r];
	json_object *o = json_object_new_object();
	char buf[2048];
	int g = rp->gpu >= 0;

	json_object_object_add(o, "local_rank", json_object_new_int(r));
	json_object_object_add(o, "gpu", g ? json_object_new_int(rp->gpu) :
	    NULL);
	json_object_object_add(o, "bus_id", g ?
	    json_object_new_string(rp->busid) : NULL);
	json_object_object_add(o, "uuid", g && rp->uuid[0] ?
	    json_object_new_string(rp->uuid) : NULL);
	json_object_object_add(o, "cuda_visible_devices", g && p->own ?
	    json_object_new_string(rp->token) : NULL);
	json_object_object_add(o, "local_device", g ?
	    json_object_new_int(p->own ? 0 : rp->gpu) : NULL);
	json_object_object_add(o, "numa", plan_print_json_list(rp->nodeset));
	json_object_object_add(o, "cpuset", rp->cpuset != NULL ?
	    json_object_new_string(plan_list(rp->cpuset, buf, sizeof(buf))) :
	    NULL);
	json_object_object_add(o, "cpus", rp->cpuset != NULL ?
	    plan_print_json_list(rp->cpuset) : NULL);
	json_object_object_add(o, "shared", json_object_new_boolean(
	    rp->shared));
	return o;
}

/* The whole plan as a JSON object. */
static json_object *
plan_print_json(const struct plan *p)
{
	json_object *o = json_object_new_object(), *a;
	int r;

	json_object_object_add(o, "nproc", json_object_new_int(p->nproc));
	json_object_object_add(o, "gpus", json_object_new_int(p->ngpu));
	json_object_object_add(o, "gpu_source",
	    json_object_new_string(p->source));
	json_object_object_add(o, "cpu_bind",
	    json_object_new_string(plan_modes[p->mode].name));
	json_object_object_add(o, "mem_bind", json_object_new_string(
	    plan_binds_memory(p) ? plan_mem_names[p->mem] : "none"));
	json_object_object_add(o, "gpu_visibility",
	    json_object_new_string(p->own ? "own" : "all"));
	json_object_object_add(o, "cpus_allowed", p->allowed != NULL ?
	    plan_print_json_list(p->allowed) : NULL);
	json_object_object_add(o, "cpus_allowed_by", p->allowed != NULL ?
	    json_object_new_string(p->allowed_why) : NULL);
	a = json_object_new_array();
	for (r = 0; r < p->nproc; r++)
		json_object_array_add(a, plan_print_json_rank(p, r));
	json_object_object_add(o, "ranks", a);
	return o;
}

/* Print the plan: a "# " summary then one line per rank, or one JSON line. */
void
plan_print(const struct plan *p, FILE *fp, int json)
{
	char line[4096];
	json_object *o;
	int r;

	if (json) {
		o = plan_print_json(p);
		fprintf(fp, "%s\n", json_object_to_json_string_ext(o,
		    JSON_C_TO_STRING_PLAIN));
		json_object_put(o);
		return;
	}
	plan_print_header(p, line, sizeof(line));
	fprintf(fp, "# %s\n", line);
	for (r = 0; r < p->nproc; r++) {
		plan_print_line(p, r, line, sizeof(line));
		fprintf(fp, "%s\n", line);
	}
}

/* The plan through log_info, for the -v start-up log. */
void
plan_log(const struct plan *p)
{
	char line[4096];
	int r;

	if (log_getlevel() < LOG_LVL_INFO)
		return;
	plan_print_header(p, line, sizeof(line));
	log_info("%s", line);
	for (r = 0; r < p->nproc; r++) {
		plan_print_line(p, r, line, sizeof(line));
		log_info("placement %s", line);
	}
}

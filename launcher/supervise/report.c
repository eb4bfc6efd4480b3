/*
 * report.c: the failure report.  Error files are PyTorch's @record JSON:
 * {"message": {"message": "...", "extraInfo": {"py_callstack": "...",
 * "timestamp": "..."}}}, or a plain string message with a top-level
 * timestamp; read with json-c, anything else is ignored.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "options.h"
#include "report.h"

#define REPORT_TRACE_MAX	(16 * 1024)	/* traceback bytes shown */

/* The exit status cgrun reports for one failure. */
int
report_exit_status(const struct report_failure *f)
{
	if (WIFSIGNALED(f->status))
		return 128 + WTERMSIG(f->status);
	if (WIFEXITED(f->status))
		return WEXITSTATUS(f->status) ? WEXITSTATUS(f->status) : 1;
	return 1;
}

/* Describe a wait status in words. */
void
report_describe(char *buf, size_t len, int status)
{
	const char *name;

	if (WIFSIGNALED(status)) {
		name = options_signame(WTERMSIG(status));
		snprintf(buf, len, "killed by signal %d (SIG%s)%s",
		    WTERMSIG(status), name ? name : "?",
		    WCOREDUMP(status) ? ", core dumped" : "");
	} else
		snprintf(buf, len, "exited with status %d",
		    WEXITSTATUS(status));
}

/* Format ms since the epoch as UTC with milliseconds. */
static void
report_time(char *buf, size_t len, long long ms)
{
	struct tm tm;
	time_t t = (time_t)(ms / 1000);

	gmtime_r(&t, &tm);
	snprintf(buf, len, "%04d-%02d-%02d %02d:%02d:%02d.%03d UTC",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
	    tm.tm_min, tm.tm_sec, (int)(ms % 1000));
}

/* A string member of obj, or NULL. */
static const char *
report_str(struct json_object *obj, const char *key)
{
	struct json_object *v;

	if (obj == NULL || !json_object_object_get_ex(obj, key, &v) ||
	    !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

/* Print text with each line indented. */
static void
report_indented(FILE *fp, const char *indent, const char *text)
{
	size_t n = 0, ll;
	const char *nl;

	while (*text != '\0' && n < REPORT_TRACE_MAX) {
		nl = strchr(text, '\n');
		ll = nl ? (size_t)(nl - text) : strlen(text);
		fprintf(fp, "%s%.*s\n", indent, (int)ll, text);
		n += ll + 1;
		text += ll + (nl != NULL);
	}
	if (*text != '\0')
		fprintf(fp, "%s... (cut; see the error file)\n", indent);
}

/* The message and traceback from a worker's error file, if it wrote one. */
static void
report_error_file(FILE *fp, const struct report_failure *f)
{
	struct json_object *root, *msg, *extra = NULL;
	const char *text = NULL, *trace = NULL;

	if (f->error_file[0] == '\0' || access(f->error_file, R_OK) == -1 ||
	    (root = json_object_from_file(f->error_file)) == NULL)
		return;
	if (json_object_object_get_ex(root, "message", &msg)) {
		if (json_object_is_type(msg, json_type_string))
			text = json_object_get_string(msg);
		else if (json_object_is_type(msg, json_type_object)) {
			text = report_str(msg, "message");
			if (json_object_object_get_ex(msg, "extraInfo", &extra))
				trace = report_str(extra, "py_callstack");
		}
	}
	if (text != NULL)
		report_indented(fp, "  message: ", text);
	if (trace != NULL) {
		fprintf(fp, "  traceback:\n");
		report_indented(fp, "    ", trace);
	}
	fprintf(fp, "  error file: %s\n", f->error_file);
	json_object_put(root);
}

/* One failure's headline. */
static void
report_line(FILE *fp, const char *lead, const struct report_failure *f,
    const struct report *r)
{
	char how[128], when[64];

	report_time(when, sizeof(when), f->when_ms);
	if (f->exec_errno != 0)
		snprintf(how, sizeof(how), "could not execute %s: %s "
		    "(status %d)", r->program ? r->program : r->name,
		    strerror(f->exec_errno), WEXITSTATUS(f->status));
	else
		report_describe(how, sizeof(how), f->status);
	if (f->hung[0] != '\0') {
		fprintf(fp, "%srank %d (local_rank %d, node %d) %s\n", lead,
		    f->rank, f->local_rank, f->group_rank, f->hung);
		lead = "  then: ";
	}
	fprintf(fp, "%srank %d (local_rank %d, node %d) %s%s at %s (pid %d, "
	    "attempt %d)\n", lead, f->rank, f->local_rank, f->group_rank, how,
	    f->after_stop ? " after cgrun stopped it" : "", when, (int)f->pid,
	    f->attempt);
}

/* The whole report: headline, root cause with details, other failures. */
void
report_print(FILE *fp, const struct report *r)
{
	int i;

	if (r->n == 0)
		return;
	fprintf(fp, "cgrun: %s failed on %s after %d of %d restarts\n",
	    r->name, r->host, r->restarts, r->max_restarts);
	report_line(fp, "root cause: ", &r->f[0], r);
	report_error_file(fp, &r->f[0]);
	if (r->f[0].log_file[0] != '\0')
		fprintf(fp, "  log: %s\n", r->f[0].log_file);
	if (r->n > 1)
		fprintf(fp, "other failures:\n");
	for (i = 1; i < r->n; i++)
		report_line(fp, "  ", &r->f[i], r);
	fflush(fp);
}

/* The hang diagnosis in cgrun's own lines (stacks.c). */
void
report_hang(FILE *fp, int node, const char *summary, int culprit,
    const char *where, int all_waiting, const char *path)
{
	fprintf(fp, "cgrun: hang on node %d: stacks: %s\n", node, summary);
	if (culprit >= 0)
		fprintf(fp, "cgrun: hang on node %d: root cause: rank %d in "
		    "%s\n", node, culprit, where);
	else if (all_waiting)
		fprintf(fp, "cgrun: hang on node %d: every rank of this node "
		    "waits in a collective: the hung rank is on another "
		    "node\n", node);
	else
		fprintf(fp, "cgrun: hang on node %d: no rank of this node "
		    "stands out\n", node);
	if (path != NULL && path[0] != '\0')
		fprintf(fp, "cgrun: hang on node %d: every rank's stacks: %s\n",
		    node, path);
	fflush(fp);
}

/* Copy the root cause's error file for a scheduler, with errorCode set. */
int
report_copy_error_file(const struct report_failure *f, const char *path)
{
	struct json_object *root, *msg;
	int rc;

	if (f->error_file[0] == '\0' || access(f->error_file, R_OK) == -1 ||
	    (root = json_object_from_file(f->error_file)) == NULL)
		return -1;
	if (json_object_object_get_ex(root, "message", &msg) &&
	    json_object_is_type(msg, json_type_object))
		json_object_object_add(msg, "errorCode",
		    json_object_new_int(report_exit_status(f)));
	rc = json_object_to_file_ext(path, root, JSON_C_TO_STRING_PLAIN);
	json_object_put(root);
	return rc == 0 ? 0 : -1;
}

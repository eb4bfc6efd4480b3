/*
 * test_options.c: cgrun's command line (options.c) and templates
 * (template.c): every torchrun option in both spellings, --opt=value and
 * --opt value, unique prefixes, PET_* fallbacks and their precedence,
 * value checks and impossible combinations, --redirects/--tee maps,
 * --local-ranks-filter, signal lists, the script and its arguments; and
 * --help names every option of the table, each once, and every backend
 * the registry accepts (backend.c) on --rdzv-backend's line.
 */
#include <check.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "options.h"
#include "template.h"
#include "helper_main.h"

static struct cgrun_options o;
static char err[512];

/* Parse a NULL-terminated list of arguments (argv[0] added). */
static enum options_result
parse(const char *first, ...)
{
	static char buf[64][256];	/* argv must outlive the call */
	char *argv[64];
	const char *a;
	va_list ap;
	int argc = 0;

	snprintf(buf[0], sizeof(buf[0]), "cgrun");
	argv[argc++] = buf[0];
	va_start(ap, first);
	for (a = first; a != NULL && argc < 63; a = va_arg(ap, const char *)) {
		snprintf(buf[argc], sizeof(buf[argc]), "%s", a);
		argv[argc] = buf[argc];
		argc++;
	}
	va_end(ap);
	argv[argc] = NULL;
	options_free(&o);
	return options_parse(&o, argc, argv, err, sizeof(err));
}

#define P(...) parse(__VA_ARGS__, (const char *)NULL)

/* No PET_* variable leaks in from the test's environment. */
static void
setup(void)
{
	static const char *const pet[] = { "PET_NNODES", "PET_NPROC_PER_NODE",
	    "PET_MAX_RESTARTS", "PET_STANDALONE", "PET_RDZV_ENDPOINT",
	    "PET_ROLE", "PET_NO_PYTHON", "PET_REDIRECTS", "PET_MASTER_PORT",
	    "TORCH_ELASTIC_SHUTDOWN_TIMEOUT", NULL };
	int i;

	for (i = 0; pet[i] != NULL; i++)
		unsetenv(pet[i]);
	memset(&o, 0, sizeof(o));
}

static void
teardown(void)
{
	options_free(&o);
}

START_TEST(defaults)
{
	ck_assert_int_eq(P("train.py"), OPTIONS_OK);
	ck_assert_str_eq(o.script, "train.py");
	ck_assert_int_eq(o.nscript_args, 0);
	ck_assert_str_eq(o.nproc_per_node, "1");
	ck_assert_int_eq(o.nnodes_min, 1);
	ck_assert_int_eq(o.nnodes_max, 1);
	ck_assert_int_eq(o.max_restarts, 0);
	ck_assert(o.shutdown_timeout == 30);
	ck_assert(o.monitor_interval == 0.1);
	ck_assert_int_eq(o.master_port, -1);
	ck_assert_int_eq(o.redirects.all, 0);
	ck_assert_ptr_null(o.log_prefix);
	ck_assert_int_eq(options_multinode(&o), 0);
	/* TERM INT HUP QUIT (torchrun) plus USR1 USR2 */
	ck_assert_int_eq(o.signals[0], SIGTERM);
	ck_assert_int_eq(o.signals[4], SIGUSR1);
	ck_assert_int_eq(o.signals[5], SIGUSR2);
	ck_assert_int_eq(o.signals[6], 0);
}
END_TEST

START_TEST(both_spellings_and_forms)
{
	ck_assert_int_eq(P("--nproc-per-node=4", "--max_restarts", "3",
	    "--rdzv_backend=c10d", "--rdzv-endpoint", "h:29400",
	    "--rdzv-id=j", "--rdzv_conf", "join_timeout=5", "--nnodes=1:2",
	    "--node_rank=1", "--master-addr", "a", "--master_port=1234",
	    "--local-addr=b", "--monitor_interval=5", "--start-method=fork",
	    "--role", "trainer", "--log_dir=/x", "--logs-specs=default",
	    "--numa-binding=node", "--shutdown_timeout=2.5",
	    "--virtual-local-rank", "--event-log-handler=null",
	    "x.py", NULL), OPTIONS_OK);
	ck_assert_str_eq(o.nproc_per_node, "4");
	ck_assert_int_eq(o.max_restarts, 3);
	ck_assert_str_eq(o.rdzv_backend, "c10d");
	ck_assert_str_eq(o.rdzv_endpoint, "h:29400");
	ck_assert_str_eq(o.rdzv_id, "j");
	ck_assert_str_eq(o.rdzv_conf, "join_timeout=5");
	ck_assert_int_eq(o.nnodes_min, 1);
	ck_assert_int_eq(o.nnodes_max, 2);
	ck_assert_int_eq(o.node_rank, 1);
	ck_assert_str_eq(o.master_addr, "a");
	ck_assert_int_eq(o.master_port, 1234);
	ck_assert_int_eq(o.explicit_master_port, 1);
	ck_assert_str_eq(o.local_addr, "b");
	ck_assert(o.monitor_interval == 5);
	ck_assert_str_eq(o.start_method, "fork");
	ck_assert_str_eq(o.role, "trainer");
	ck_assert_str_eq(o.log_dir, "/x");
	ck_assert_str_eq(o.numa_binding, "node");
	ck_assert(o.shutdown_timeout == 2.5);
	ck_assert_int_eq(o.virtual_local_rank, 1);
	ck_assert_int_eq(options_multinode(&o), 1);
}
END_TEST

START_TEST(short_options_and_script_args)
{
	ck_assert_int_eq(P("-m", "-r3", "-t", "1", "-vv", "pkg.mod", "--lr",
	    "1", "-m", "--nproc-per-node=9"), OPTIONS_OK);
	ck_assert_int_eq(o.module, 1);
	ck_assert_int_eq(o.redirects.all, 3);
	ck_assert_int_eq(o.tee.all, 1);
	ck_assert_int_eq(o.verbose, 2);
	ck_assert_str_eq(o.script, "pkg.mod");
	/* everything after the script is the script's */
	ck_assert_int_eq(o.nscript_args, 4);
	ck_assert_str_eq(o.script_args[0], "--lr");
	ck_assert_str_eq(o.script_args[3], "--nproc-per-node=9");
	ck_assert_str_eq(o.nproc_per_node, "1");
	/* "--" ends the options */
	ck_assert_int_eq(P("--", "--weird-name.py", "a"), OPTIONS_OK);
	ck_assert_str_eq(o.script, "--weird-name.py");
}
END_TEST

START_TEST(prefixes)
{
	ck_assert_int_eq(P("--nproc=2", "--standal", "--max_r", "1", "t.py"),
	    OPTIONS_OK);
	ck_assert_str_eq(o.nproc_per_node, "2");
	ck_assert_int_eq(o.standalone, 1);
	ck_assert_int_eq(o.max_restarts, 1);
	ck_assert_int_eq(P("--r=1", "t.py"), OPTIONS_ERROR);
	ck_assert(strstr(err, "ambiguous option --r") != NULL);
	ck_assert_int_eq(P("--rdzv=1", "t.py"), OPTIONS_ERROR);
}
END_TEST

START_TEST(pet_fallbacks)
{
	setenv("PET_NPROC_PER_NODE", "3", 1);
	setenv("PET_MAX_RESTARTS", "2", 1);
	setenv("PET_STANDALONE", "1", 1);
	setenv("PET_ROLE", "r", 1);
	ck_assert_int_eq(P("t.py"), OPTIONS_OK);
	ck_assert_str_eq(o.nproc_per_node, "3");
	ck_assert_int_eq(o.max_restarts, 2);
	ck_assert_int_eq(o.standalone, 1);
	ck_assert_str_eq(o.role, "r");
	/* the command line wins */
	ck_assert_int_eq(P("--nproc-per-node=5", "--max-restarts=0", "t.py"),
	    OPTIONS_OK);
	ck_assert_str_eq(o.nproc_per_node, "5");
	ck_assert_int_eq(o.max_restarts, 0);
	/* booleans are integers, as torchrun's bool(int(...)) */
	setenv("PET_STANDALONE", "0", 1);
	ck_assert_int_eq(P("t.py"), OPTIONS_OK);
	ck_assert_int_eq(o.standalone, 0);
	setenv("PET_STANDALONE", "true", 1);
	ck_assert_int_eq(P("t.py"), OPTIONS_ERROR);
	ck_assert(strstr(err, "PET_STANDALONE") != NULL);
	unsetenv("PET_STANDALONE");
	setenv("PET_MAX_RESTARTS", "x", 1);
	ck_assert_int_eq(P("t.py"), OPTIONS_ERROR);
	ck_assert(strstr(err, "PET_MAX_RESTARTS") != NULL);
	/* cgrun's own options have no PET_ fallback */
	setenv("PET_LOG_PREFIX", "x", 1);
	unsetenv("PET_MAX_RESTARTS");
	ck_assert_int_eq(P("t.py"), OPTIONS_OK);
	ck_assert_ptr_null(o.log_prefix);
	unsetenv("PET_LOG_PREFIX");
}
END_TEST

START_TEST(shutdown_timeout_env)
{
	setenv("TORCH_ELASTIC_SHUTDOWN_TIMEOUT", "7", 1);
	ck_assert_int_eq(P("t.py"), OPTIONS_OK);
	ck_assert(o.shutdown_timeout == 7);
	ck_assert_int_eq(P("--shutdown-timeout=1", "t.py"), OPTIONS_OK);
	ck_assert(o.shutdown_timeout == 1);
	setenv("TORCH_ELASTIC_SHUTDOWN_TIMEOUT", "soon", 1);
	ck_assert_int_eq(P("t.py"), OPTIONS_ERROR);
	unsetenv("TORCH_ELASTIC_SHUTDOWN_TIMEOUT");
}
END_TEST

START_TEST(bad_values)
{
	static const char *const bad[][2] = {
		{ "--nnodes=0", "--nnodes" }, { "--nnodes=3:2", "--nnodes" },
		{ "--nnodes=a", "--nnodes" }, { "--nnodes=1:", "--nnodes" },
		{ "--nproc-per-node=0", "--nproc-per-node" },
		{ "--nproc-per-node=-2", "--nproc-per-node" },
		{ "--nproc-per-node=xpu9", "--nproc-per-node" },
		{ "--max-restarts=-1", "--max-restarts" },
		{ "--max-restarts=1.5", "--max-restarts" },
		{ "--monitor-interval=0", "--monitor-interval" },
		{ "--shutdown-timeout=-3", "--shutdown-timeout" },
		{ "--master-port=70000", "--master-port" },
		{ "--node-rank=-1", "--node-rank" },
		{ "--redirects=4", "--redirects" }, { "--tee=0:4", "--tee" },
		{ "--tee=0:1,", "--tee" }, { "--redirects=a:1", "--redirects" },
		{ "--start-method=x", "--start-method" },
		{ "--gpu-visibility=some", "--gpu-visibility" },
		{ "--rdzv-conf=a", "--rdzv-conf" },
		{ "--rdzv-backend=zookeeper", "--rdzv-backend" },
		{ "--rdzv-conf=a=1,b=", "--rdzv-conf" },
		{ "--signals-to-handle=SIGKILL", "--signals-to-handle" },
		{ "--signals-to-handle=NOPE", "--signals-to-handle" },
		{ "--local-ranks-filter=1,x", "--local-ranks-filter" },
		{ "--role=", "--role" }, { "--standalone=1", "takes no value" },
		{ "--json", "--json needs --dry-run" },
		{ "--logs-specs=mine", "--logs-specs: no logs specs \"mine\"" },
		{ "--event-log=fd:x", "--event-log: expected a file or fd:N" },
		{ "--event-log=", "--event-log" },
		{ "--event-log-handler=bogus", "--event-log-handler" },
		{ "--metrics-file=", "--metrics-file" },
		{ "--metrics-port=70000", "--metrics-port" },
		{ "--metrics-port=::1:80", "--metrics-port" },
		{ "--metrics-port=host:", "--metrics-port" },
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(P(bad[i][0], "t.py") == OPTIONS_ERROR, "%s "
		    "accepted", bad[i][0]);
		ck_assert_msg(strstr(err, bad[i][1]) != NULL, "%s: error "
		    "\"%s\" does not name %s", bad[i][0], err, bad[i][1]);
		ck_assert_msg(strchr(err, '\n') == NULL, "multi-line error");
	}
	ck_assert_int_eq(P("-m", "--no-python", "t"), OPTIONS_ERROR);
	ck_assert(strstr(err, "--module and --no-python") != NULL);
	ck_assert_int_eq(P("--nnodes"), OPTIONS_ERROR);
	ck_assert(strstr(err, "needs a value") != NULL);
	ck_assert_int_eq(P("-r"), OPTIONS_ERROR);
	ck_assert_int_eq(P("--nproc-per-node=2"), OPTIONS_ERROR);
	ck_assert(strstr(err, "missing the training script") != NULL);
	ck_assert_int_eq(P("-x", "t.py"), OPTIONS_ERROR);
	ck_assert(strstr(err, "unknown option -x") != NULL);
}
END_TEST

START_TEST(combinations)
{
	/* --run-path overrides --no-python, also with -m */
	ck_assert_int_eq(P("--run-path", "--no-python", "t.py"), OPTIONS_OK);
	ck_assert_int_eq(o.no_python, 0);
	ck_assert_int_eq(P("--dry-run", "--json"), OPTIONS_OK);
	ck_assert_ptr_null(o.script);
	ck_assert_int_eq(P("--standalone", "--nnodes=1", "t.py"), OPTIONS_OK);
	ck_assert_int_eq(options_multinode(&o), 0);
	ck_assert_int_eq(P("--standalone", "--nnodes=2", "t.py"), OPTIONS_OK);
	ck_assert_int_eq(options_multinode(&o), 1);
	ck_assert_int_eq(P("--rdzv-endpoint=h", "t.py"), OPTIONS_OK);
	ck_assert_int_eq(options_multinode(&o), 1);
	ck_assert_int_eq(P("--standalone", "--rdzv-endpoint=h", "t.py"),
	    OPTIONS_OK);
	ck_assert_int_eq(options_multinode(&o), 0);
	ck_assert_int_eq(P("--nproc-per-node=gpu", "t.py"), OPTIONS_OK);
	ck_assert_int_eq(P("--nproc-per-node=cpu", "t.py"), OPTIONS_OK);
	ck_assert_int_eq(P("--nproc-per-node=auto", "t.py"), OPTIONS_OK);
	ck_assert_int_eq(P("--help", "--bogus"), OPTIONS_HELP);
	ck_assert_int_eq(P("--version"), OPTIONS_VERSION);
	ck_assert_int_eq(P("-h"), OPTIONS_HELP);
}
END_TEST

START_TEST(std_maps_and_filter)
{
	ck_assert_int_eq(P("-r", "0:1,3:2", "--tee=2", "--local-ranks-filter",
	    "0,3", "t.py"), OPTIONS_OK);
	ck_assert_int_eq(options_std_for(&o.redirects, 0), OPTIONS_STD_OUT);
	ck_assert_int_eq(options_std_for(&o.redirects, 1), 0);
	ck_assert_int_eq(options_std_for(&o.redirects, 3), OPTIONS_STD_ERR);
	ck_assert_int_eq(options_std_for(&o.tee, 7), OPTIONS_STD_ERR);
	ck_assert_int_eq(options_rank_shown(&o, 0), 1);
	ck_assert_int_eq(options_rank_shown(&o, 1), 0);
	ck_assert_int_eq(options_rank_shown(&o, 3), 1);
	ck_assert_int_eq(options_rank_shown(&o, 30), 0);
	/* two-digit local ranks work too (torchrun's regex: one digit) */
	ck_assert_int_eq(P("-t", "12:3", "--local-ranks-filter=", "t.py"),
	    OPTIONS_OK);
	ck_assert_int_eq(options_std_for(&o.tee, 12), 3);
	ck_assert_int_eq(options_rank_shown(&o, 5), 1);
}
END_TEST

START_TEST(signals)
{
	ck_assert_int_eq(options_signum("SIGTERM"), SIGTERM);
	ck_assert_int_eq(options_signum("usr1"), SIGUSR1);
	ck_assert_int_eq(options_signum("2"), 2);
	ck_assert_int_eq(options_signum("SIGNOPE"), -1);
	ck_assert_int_eq(options_signum("999"), -1);
	ck_assert_str_eq(options_signame(SIGKILL), "KILL");
	ck_assert_int_eq(P("--signals-to-handle=SIGUSR1,SIGTERM", "t.py"),
	    OPTIONS_OK);
	ck_assert_int_eq(o.signals[0], SIGUSR1);
	ck_assert_int_eq(o.signals[1], SIGTERM);
	ck_assert_int_eq(o.signals[2], 0);
}
END_TEST

/* Expand tmpl with local_rank=3 and rank=11. */
static const char *
expand(const char *tmpl, size_t outlen)
{
	static char out[256];
	static const struct template_var v[] = { { "local_rank", "3" },
	    { "rank", "11" } };

	ck_assert_uint_le(outlen, sizeof(out));
	template_expand(tmpl, v, 2, out, outlen);
	return out;
}

START_TEST(templates)
{
	ck_assert_str_eq(expand("--r=${local_rank}", 256), "--r=3");
	ck_assert_str_eq(expand("$local_rank/$rank", 256), "3/11");
	ck_assert_str_eq(expand("[rank${rank}]:", 256), "[rank11]:");
	/* safe_substitute: unknown names and stray $ stay; $$ is $ */
	ck_assert_str_eq(expand("${nope} $nope $ ${ $1 $$", 256),
	    "${nope} $nope $ ${ $1 $");
	ck_assert_str_eq(expand("${local_rankx}", 256), "${local_rankx}");
	ck_assert_str_eq(expand("$local_rankx", 256), "$local_rankx");
	ck_assert_str_eq(expand("${local_rank", 256), "${local_rank");
	/* cut, always terminated */
	ck_assert_str_eq(expand("abcdef${rank}", 5), "abcd");
	ck_assert_int_eq(template_expand("abc", NULL, 0, (char[4]){0}, 4), 3);
	ck_assert_int_eq(template_expand("abcd", NULL, 0, (char[4]){0}, 4), -1);
}
END_TEST

/* The first placeholder naming no variable, as template_expand reads them. */
START_TEST(templates_unknown)
{
	static const struct template_var v[] = { { "run_id", "" },
	    { "node", "" } };
	char name[8];

	ck_assert_int_eq(template_unknown("/x/$run_id-${node}.jsonl", v, 2,
	    name, sizeof(name)), 0);
	ck_assert_int_eq(template_unknown("$$ $ ${ $1 a$", v, 2, name,
	    sizeof(name)), 0);	/* text, as template_expand keeps it */
	ck_assert_int_eq(template_unknown("/x/$runid.jsonl", v, 2, name,
	    sizeof(name)), 1);
	ck_assert_str_eq(name, "runid");
	ck_assert_int_eq(template_unknown("${node}/${RUN_ID}", v, 2, name,
	    sizeof(name)), 1);
	ck_assert_str_eq(name, "RUN_ID");
	ck_assert_int_eq(template_unknown("$run_id_x", v, 2, name,
	    sizeof(name)), 1);
	ck_assert_str_eq(name, "run_id_");	/* cut to 8 bytes */
	ck_assert_int_eq(template_unknown("$$runid", v, 2, name,
	    sizeof(name)), 0);	/* "$$" then text */
}
END_TEST

/* The full --help text (caller frees). */
static char *
help_text(void)
{
	char *text = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&text, &len);

	ck_assert_ptr_nonnull(fp);
	options_usage(fp, 1);
	ck_assert_int_eq(fclose(fp), 0);
	return text;
}

/* The option named in the left column of one --help line, or "". */
static void
help_option(const char *line, char *name, size_t len)
{
	const char *p = strstr(line, "--");
	size_t n;

	name[0] = '\0';
	if (line[0] != ' ' || p == NULL || p - line > 8)
		return;		/* a heading, or an option in the text */
	p += 2;
	n = strcspn(p, " \n");
	snprintf(name, len, "%.*s", (int)n, p);
}

/*
 * --help names every option of the table exactly once (in the left
 * column), and nothing else there; --rdzv-backend's line names every
 * backend the registry accepts, and each is accepted, where "standalone"
 * (picked for one node, never named) is not.
 */
START_TEST(help_complete)
{
	char *text = help_text(), *line, *save = NULL, name[64], sh;
	char *backend_line = NULL;
	const char *b, *row, *meta;
	size_t i, n = 0, j;
	int seen[128];

	memset(seen, 0, sizeof(seen));
	for (line = strtok_r(text, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		help_option(line, name, sizeof(name));
		if (name[0] == '\0')
			continue;
		for (i = 0; options_row(i, &row, &sh, &meta) == 0; i++)
			if (strcmp(row, name) == 0)
				break;
		ck_assert_msg(options_row(i, &row, &sh, &meta) == 0, "--help "
		    "lists --%s, which is not an option", name);
		ck_assert_int_lt(i, sizeof(seen) / sizeof(seen[0]));
		ck_assert_msg(seen[i]++ == 0, "--help lists --%s twice", name);
		if (strcmp(name, "rdzv-backend") == 0)
			backend_line = line;
	}
	for (i = 0; options_row(i, &row, &sh, &meta) == 0; i++, n++)
		ck_assert_msg(seen[i] == 1, "--help lacks --%s", row);
	ck_assert_int_ge(n, 40);
	ck_assert_ptr_nonnull(backend_line);
	for (j = 0; (b = backend_name(j)) != NULL; j++) {
		ck_assert_msg(strstr(backend_line, b) != NULL, "--help's "
		    "--rdzv-backend line lacks %s: %s", b, backend_line);
		ck_assert_int_eq(P("--rdzv-backend", b, "--nnodes=2",
		    "--rdzv-endpoint=h:1", "x.py"), OPTIONS_OK);
	}
	ck_assert_int_eq(j, 5);	/* static c10d etcd-v3 etcd etcd-v2 */
	ck_assert_int_eq(P("--rdzv-backend=standalone", "x.py"),
	    OPTIONS_ERROR);
	ck_assert_str_eq(err, "--rdzv-backend: unknown value \"standalone\"");
	free(text);
}
END_TEST

/* Whether tok is a fixed value (a lower-case word) or a range "0-3". */
static int
literal(const char *tok, size_t n, int *lo, int *hi)
{
	size_t i;

	*lo = *hi = -1;
	if (n >= 3 && sscanf(tok, "%d-%d", lo, hi) == 2 && *lo <= *hi)
		return 1;
	if (n == 0 || tok[0] < 'a' || tok[0] > 'z')
		return 0;
	for (i = 0; i < n; i++)
		if (!((tok[i] >= 'a' && tok[i] <= 'z') || (tok[i] >= '0' &&
		    tok[i] <= '9') || tok[i] == '-' || tok[i] == '_'))
			return 0;
	return 1;
}

/*
 * bash completion offers an option's fixed values from its metavariable
 * in --help (completion/cgrun.bash): every one of them, in both
 * spellings of the option, is a value the parser accepts.
 */
START_TEST(metavar_values)
{
	const char *name, *meta, *p, *end;
	char opt[160], under[160], val[64];
	int lo, hi, v, n = 0;
	size_t i, k;
	char sh;

	for (i = 0; options_row(i, &name, &sh, &meta) == 0; i++) {
		for (p = meta; p != NULL && *p != '\0'; p = *end ? end + 1 : end) {
			end = p + strcspn(p, "|");
			if (!literal(p, (size_t)(end - p), &lo, &hi))
				continue;
			for (v = lo; v <= hi; v++) {
				if (lo >= 0)
					snprintf(val, sizeof(val), "%d", v);
				else
					snprintf(val, sizeof(val), "%.*s",
					    (int)(end - p), p);
				snprintf(opt, sizeof(opt), "--%s=%s", name, val);
				snprintf(under, sizeof(under), "%s", opt);
				for (k = 2; under[k] != '=' && under[k]; k++)
					under[k] = under[k] == '-' ? '_' :
					    under[k];
				ck_assert_msg(P(opt, "t.py") == OPTIONS_OK,
				    "%s offered but refused: %s", opt, err);
				ck_assert_msg(P(under, "t.py") == OPTIONS_OK,
				    "%s offered but refused: %s", under, err);
				n++;
			}
		}
	}
	ck_assert_int_ge(n, 30);	/* the table has that many fixed values */
}
END_TEST

/* The suite. */
Suite *
test_suite(void)
{
	Suite *s = suite_create("options");
	TCase *tc = tcase_create("parse");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, defaults);
	tcase_add_test(tc, both_spellings_and_forms);
	tcase_add_test(tc, short_options_and_script_args);
	tcase_add_test(tc, prefixes);
	tcase_add_test(tc, pet_fallbacks);
	tcase_add_test(tc, shutdown_timeout_env);
	tcase_add_test(tc, bad_values);
	tcase_add_test(tc, combinations);
	tcase_add_test(tc, std_maps_and_filter);
	tcase_add_test(tc, signals);
	tcase_add_test(tc, templates);
	tcase_add_test(tc, templates_unknown);
	tcase_add_test(tc, help_complete);
	tcase_add_test(tc, metavar_values);
	suite_add_tcase(s, tc);
	return s;
}

/*
 * test_slurm.c: Slurm's environment (launcher/slurm/slurm.c,
 * slurm_port.c) and the site defaults that apply it (launcher/cli/site.c),
 * driven with controlled environments: job versus step variables, the
 * run id forms, the port's determinism and distinctness across steps, the
 * tasks-per-node refusal, malformed variables, and the precedence of the
 * command line, PET_*, CGRUN_RDZV_ENDPOINT and the site file.
 */
#include <check.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "options.h"
#include "site.h"
#include "slurm.h"
#include "helper_main.h"

extern char **environ;

static struct slurm_info si;
static char err[512];

/* Unset every SLURM_*, PET_* and CGRUN_* variable; no site file. */
static void
setup(void)
{
	char name[256];
	size_t i, n;

	for (i = 0; environ[i] != NULL; ) {
		n = strcspn(environ[i], "=");
		if (n < sizeof(name) && (strncmp(environ[i], "SLURM_", 6) == 0 ||
		    strncmp(environ[i], "PET_", 4) == 0 ||
		    strncmp(environ[i], "CGRUN_", 6) == 0)) {
			memcpy(name, environ[i], n);
			name[n] = '\0';
			unsetenv(name);
			continue;
		}
		i++;
	}
	setenv("CGRUN_CONFIG", "/dev/null", 1);
	err[0] = '\0';
}

/* A step of job 4242: step 3 on n[02-03] of a 3-node allocation. */
static void
step_env(const char *nodeid)
{
	setenv("SLURM_JOB_ID", "4242", 1);
	setenv("SLURM_JOB_NUM_NODES", "3", 1);
	setenv("SLURM_JOB_NODELIST", "n[01-03]", 1);
	setenv("SLURM_STEP_ID", "3", 1);
	setenv("SLURM_STEP_NUM_NODES", "2", 1);
	setenv("SLURM_STEP_NODELIST", "n[02-03]", 1);
	setenv("SLURM_STEP_TASKS_PER_NODE", "1(x2)", 1);
	setenv("SLURM_NODEID", nodeid, 1);
	setenv("SLURM_LOCALID", "0", 1);
}

/* slurm_read must succeed. */
static void
read_ok(void)
{
	ck_assert_msg(slurm_read(&si, err, sizeof(err)) == 0, "%s", err);
}

/* slurm_read must fail with an error containing what. */
static void
read_fails(const char *what)
{
	ck_assert_int_eq(slurm_read(&si, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, what) != NULL, "\"%s\" lacks \"%s\"", err,
	    what);
}

START_TEST(first_host)
{
	char h[32];

	ck_assert_int_eq(slurm_first_host("gpu[03-07,9],cpu1", h, sizeof(h),
	    NULL, 0), 0);
	ck_assert_str_eq(h, "gpu03");
	ck_assert_int_eq(slurm_first_host("node7,node8", h, sizeof(h), NULL,
	    0), 0);
	ck_assert_str_eq(h, "node7");
	ck_assert_int_eq(slurm_first_host("solo", h, sizeof(h), NULL, 0), 0);
	ck_assert_str_eq(h, "solo");
	ck_assert_int_eq(slurm_first_host("r[1-2]n[01-02]", h, sizeof(h), NULL,
	    0), 0);
	ck_assert_str_eq(h, "r1n01");
	ck_assert_int_eq(slurm_first_host("[1-2]", h, sizeof(h), err,
	    sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "all digits"));
	ck_assert_int_eq(slurm_first_host("n[x]", h, sizeof(h), NULL, 0), -1);
	ck_assert_int_eq(slurm_first_host("n[1-3],m[", h, sizeof(h), NULL, 0),
	    -1);
	ck_assert_int_eq(slurm_first_host("averyveryverylonghostnamethatdoesnotfit",
	    h, sizeof(h), NULL, 0), -1);
	ck_assert_int_eq(slurm_first_host("", h, sizeof(h), NULL, 0), -1);
}
END_TEST

START_TEST(outside_slurm)
{
	read_ok();
	ck_assert_int_eq(si.in_job, 0);
	ck_assert_int_eq(si.nnodes, 0);
	ck_assert_str_eq(si.endpoint, "");
	ck_assert_str_eq(si.run_id, "");
	/* CGRUN_SLURM=0: a step's variables are not read at all */
	step_env("0");
	setenv("SLURM_STEP_TASKS_PER_NODE", "8(x2)", 1);
	setenv("CGRUN_SLURM", "0", 1);
	read_ok();
	ck_assert_int_eq(si.in_job, 0);
	ck_assert_str_eq(si.run_id, "");
}
END_TEST

START_TEST(job_shell)
{
	setenv("SLURM_JOB_ID", "4242", 1);
	setenv("SLURM_JOB_NUM_NODES", "3", 1);
	setenv("SLURM_JOB_NODELIST", "n[01-03]", 1);
	read_ok();
	ck_assert_int_eq(si.in_job, 1);
	ck_assert_int_eq(si.in_step, 0);
	ck_assert_int_eq(si.nnodes, 3);
	ck_assert_str_eq(si.nnodes_from, "SLURM_JOB_NUM_NODES");
	ck_assert_str_eq(si.endpoint, "n01:29400");
	ck_assert_str_eq(si.endpoint_from, "the first host of SLURM_JOB_NODELIST");
	ck_assert_str_eq(si.run_id, "4242");
	ck_assert_str_eq(si.run_id_from, "SLURM_JOB_ID");
	/* the batch script's own step, and salloc's interactive step */
	setenv("SLURM_STEP_ID", "4294967291", 1);
	read_ok();
	ck_assert_int_eq(si.in_step, 0);
	ck_assert_str_eq(si.run_id, "4242");
	setenv("SLURM_STEP_ID", "-6", 1);
	read_ok();
	ck_assert_int_eq(si.in_step, 0);
	/* older names */
	unsetenv("SLURM_STEP_ID");
	unsetenv("SLURM_JOB_NUM_NODES");
	unsetenv("SLURM_JOB_NODELIST");
	setenv("SLURM_NNODES", "2", 1);
	setenv("SLURM_NODELIST", "gpu-[07-08]-ib", 1);
	read_ok();
	ck_assert_int_eq(si.nnodes, 2);
	ck_assert_str_eq(si.nnodes_from, "SLURM_NNODES");
	ck_assert_str_eq(si.endpoint, "gpu-07-ib:29400");
	/* a job shell with a bad list keeps going without an endpoint */
	setenv("SLURM_NODELIST", "n[1-", 1);
	read_ok();
	ck_assert_str_eq(si.endpoint, "");
	ck_assert_str_eq(si.run_id, "4242");
}
END_TEST

START_TEST(step_not_job)
{
	char want[64];

	step_env("1");
	read_ok();
	ck_assert_int_eq(si.in_step, 1);
	ck_assert_int_eq(si.nnodes, 2);
	ck_assert_str_eq(si.nnodes_from, "SLURM_STEP_NUM_NODES");
	ck_assert_int_eq(si.node_id, 1);
	ck_assert_int_eq(si.tasks_here, 1);
	ck_assert_str_eq(si.host, "n02");
	snprintf(want, sizeof(want), "n02:%d", slurm_port_derive(4242, 3));
	ck_assert_str_eq(si.endpoint, want);
	ck_assert_ptr_nonnull(strstr(si.endpoint_from,
	    "the first host of SLURM_STEP_NODELIST, port 20000 + (16 * 4242 + "
	    "3) mod 9000"));
	ck_assert_str_eq(si.run_id, "4242.3");
	ck_assert_str_eq(si.run_id_from, "SLURM_JOB_ID and SLURM_STEP_ID");
	/* without SLURM_STEP_NUM_NODES: srun's SLURM_NNODES, then the list */
	unsetenv("SLURM_STEP_NUM_NODES");
	setenv("SLURM_NNODES", "2", 1);
	read_ok();
	ck_assert_str_eq(si.nnodes_from, "SLURM_NNODES");
	unsetenv("SLURM_NNODES");
	read_ok();
	ck_assert_int_eq(si.nnodes, 2);
	ck_assert_str_eq(si.nnodes_from, "the length of SLURM_STEP_NODELIST");
	/* the old SLURM_STEPID alone */
	unsetenv("SLURM_STEP_ID");
	setenv("SLURM_STEPID", "5", 1);
	read_ok();
	ck_assert_str_eq(si.run_id, "4242.5");
	ck_assert_str_eq(si.run_id_from, "SLURM_JOB_ID and SLURM_STEPID");
}
END_TEST

START_TEST(run_id_forms)
{
	step_env("0");
	setenv("SLURM_STEP_ID", "0", 1);
	setenv("SLURM_JOB_ID", "1007", 1);
	setenv("SLURM_ARRAY_JOB_ID", "1000", 1);
	setenv("SLURM_ARRAY_TASK_ID", "7", 1);
	read_ok();
	ck_assert_str_eq(si.run_id, "1000_7.0");
	ck_assert_str_eq(si.run_id_from,
	    "SLURM_ARRAY_JOB_ID, SLURM_ARRAY_TASK_ID and SLURM_STEP_ID");
	unsetenv("SLURM_ARRAY_JOB_ID");
	unsetenv("SLURM_ARRAY_TASK_ID");
	setenv("SLURM_JOB_ID", "500", 1);
	setenv("SLURM_HET_JOB_ID", "500", 1);
	setenv("SLURM_HET_JOB_OFFSET", "1", 1);
	setenv("SLURM_STEP_ID", "2", 1);
	read_ok();
	ck_assert_str_eq(si.run_id, "500+1.2");
	ck_assert_int_eq(si.port, slurm_port_derive(501, 2));
	/* an array task id that is not a number is not used */
	unsetenv("SLURM_HET_JOB_ID");
	unsetenv("SLURM_HET_JOB_OFFSET");
	setenv("SLURM_ARRAY_JOB_ID", "1000", 1);
	setenv("SLURM_ARRAY_TASK_ID", "x", 1);
	read_ok();
	ck_assert_str_eq(si.run_id, "500.2");
}
END_TEST

START_TEST(port_rule)
{
	static unsigned char seen[SLURM_PORT_SPAN];
	unsigned long j, s;
	int p, p0;

	ck_assert_int_eq(slurm_port_derive(4242, 3),
	    20000 + (16 * 4242 + 3) % 9000);
	ck_assert_int_eq(slurm_port_derive(0, 0), 20000);
	ck_assert_int_eq(slurm_port_derive(0xffffffffUL, 0xffffffefUL),
	    (int)(20000 + (16ULL * 0xffffffffUL + 0xffffffefUL) % 9000));
	/* steps 0-15 of 562 jobs in a row: every port different, in range */
	memset(seen, 0, sizeof(seen));
	for (j = 777000; j < 777000 + 562; j++)
		for (s = 0; s < 16; s++) {
			p = slurm_port_derive(j, s);
			ck_assert(p >= 20000 && p <= 28999);
			ck_assert_int_eq(seen[p - 20000], 0);
			seen[p - 20000] = 1;
		}
	/* 9000 steps of one job: every port different */
	memset(seen, 0, sizeof(seen));
	for (s = 0; s < 9000; s++) {
		p = slurm_port_derive(4242, s);
		ck_assert_int_eq(seen[p - 20000], 0);
		seen[p - 20000] = 1;
	}
	/* the same on every node of one step */
	step_env("0");
	read_ok();
	p0 = si.port;
	setenv("SLURM_NODEID", "1", 1);
	read_ok();
	ck_assert_int_eq(si.port, p0);
	/* and another for the next step (srun --overlap twice) */
	setenv("SLURM_STEP_ID", "4", 1);
	read_ok();
	ck_assert_int_ne(si.port, p0);
}
END_TEST

START_TEST(port_overrides)
{
	step_env("1");
	setenv("SLURM_STEP_RESV_PORTS", "12000-12003", 1);
	read_ok();
	ck_assert_int_eq(si.port, 12000);
	ck_assert_str_eq(si.endpoint, "n02:12000");
	ck_assert_ptr_nonnull(strstr(si.endpoint_from, "SLURM_STEP_RESV_PORTS"));
	setenv("SLURM_STEP_RESV_PORTS", "12005,12007", 1);
	read_ok();
	ck_assert_int_eq(si.port, 12005);
	setenv("SLURM_STEP_RESV_PORTS", "junk", 1);	/* warned, not used */
	read_ok();
	ck_assert_int_eq(si.port, slurm_port_derive(4242, 3));
	setenv("CGRUN_SLURM_PORT", "23456", 1);
	read_ok();
	ck_assert_str_eq(si.endpoint, "n02:23456");
	ck_assert_ptr_nonnull(strstr(si.endpoint_from, "CGRUN_SLURM_PORT"));
	setenv("CGRUN_SLURM_PORT", "70000", 1);
	read_fails("CGRUN_SLURM_PORT");
	setenv("CGRUN_SLURM_PORT", "12a", 1);
	read_fails("expected a port");
}
END_TEST

START_TEST(tasks_per_node_refused)
{
	step_env("1");
	setenv("SLURM_STEP_TASKS_PER_NODE", "8(x2)", 1);
	setenv("SLURM_LOCALID", "3", 1);
	read_fails("Slurm started 8 tasks of this step on this node");
	ck_assert_ptr_nonnull(strstr(err, "SLURM_STEP_TASKS_PER_NODE=8(x2)"));
	ck_assert_ptr_nonnull(strstr(err, "--ntasks-per-node=1"));
	setenv("SLURM_LOCALID", "0", 1);	/* local task 0 too */
	read_fails("8 tasks");
	/* uneven: this node (1) has one task, node 0 two */
	setenv("SLURM_STEP_TASKS_PER_NODE", "2,1", 1);
	read_ok();
	ck_assert_int_eq(si.tasks_here, 1);
	setenv("SLURM_NODEID", "0", 1);
	read_fails("2 tasks");
	/* the job's count when the step's is missing */
	unsetenv("SLURM_STEP_TASKS_PER_NODE");
	setenv("SLURM_TASKS_PER_NODE", "4(x3)", 1);
	read_fails("SLURM_TASKS_PER_NODE=4(x3)");
	unsetenv("SLURM_TASKS_PER_NODE");
	setenv("SLURM_NTASKS_PER_NODE", "4", 1);
	read_fails("SLURM_NTASKS_PER_NODE=4");
	unsetenv("SLURM_NTASKS_PER_NODE");
	/* a local id above 0 is proof enough */
	setenv("SLURM_LOCALID", "1", 1);
	read_fails("this is SLURM_LOCALID=1");
	setenv("SLURM_LOCALID", "0", 1);
	read_ok();
	/* outside a step the job's counts do not matter */
	unsetenv("SLURM_STEP_ID");
	setenv("SLURM_TASKS_PER_NODE", "8(x3)", 1);
	read_ok();
}
END_TEST

START_TEST(malformed_step)
{
	step_env("1");
	setenv("SLURM_STEP_ID", "abc", 1);
	read_fails("SLURM_STEP_ID=\"abc\" is not a Slurm step id");
	step_env("5");
	read_fails("SLURM_NODEID=\"5\" is not a node of this step (2 nodes");
	step_env("1");
	setenv("SLURM_STEP_NODELIST", "n[02-", 1);
	read_fails("SLURM_STEP_NODELIST: hostlist: '[' at offset 1 is not closed");
	step_env("1");
	setenv("SLURM_STEP_NUM_NODES", "two", 1);
	read_fails("SLURM_STEP_NUM_NODES=\"two\" is not a node count");
	step_env("1");
	setenv("SLURM_JOB_ID", "4242x", 1);
	read_fails("SLURM_JOB_ID=\"4242x\" is not a Slurm job id");
	step_env("1");
	unsetenv("SLURM_STEP_NODELIST");
	unsetenv("SLURM_JOB_NODELIST");
	read_fails("without a node list");
	/* no step list: the job's, with its source said */
	setenv("SLURM_JOB_NODELIST", "n[01-02]", 1);
	read_ok();
	ck_assert_str_eq(si.host, "n01");
	ck_assert_ptr_nonnull(strstr(si.endpoint_from, "SLURM_JOB_NODELIST"));
}
END_TEST

/* Parse argv (NULL-ended, script added) and apply the site defaults. */
static int
apply(struct cgrun_options *o, ...)
{
	char *argv[16];
	const char *a;
	va_list ap;
	int argc = 0;

	argv[argc++] = (char *)(uintptr_t)"cgrun";
	va_start(ap, o);
	while ((a = va_arg(ap, const char *)) != NULL && argc < 14)
		argv[argc++] = (char *)(uintptr_t)a;
	va_end(ap);
	argv[argc++] = (char *)(uintptr_t)"train.py";
	argv[argc] = NULL;
	ck_assert_int_eq(options_parse(o, argc, argv, err, sizeof(err)),
	    OPTIONS_OK);
	return site_apply(o, err, sizeof(err));
}

START_TEST(site_precedence)
{
	struct cgrun_options o;
	char want[64];
	FILE *f;
	char path[] = "/tmp/cgrun-test-slurm.XXXXXX";
	int fd;

	step_env("1");
	ck_assert_int_eq(apply(&o, NULL), 0);
	snprintf(want, sizeof(want), "n02:%d", slurm_port_derive(4242, 3));
	ck_assert_str_eq(o.rdzv_endpoint, want);
	ck_assert_str_eq(o.rdzv_id, "4242.3");
	ck_assert_str_eq(o.rdzv_backend, "c10d");
	ck_assert_int_eq(o.nnodes_min, 2);
	ck_assert_int_eq(o.nnodes_max, 2);
	options_free(&o);
	/* the command line wins */
	ck_assert_int_eq(apply(&o, "--nnodes=1:4", "--rdzv-endpoint=h:7",
	    "--rdzv-id=mine", "--rdzv-backend=c10d", NULL), 0);
	ck_assert_str_eq(o.rdzv_endpoint, "h:7");
	ck_assert_str_eq(o.rdzv_id, "mine");
	ck_assert_int_eq(o.nnodes_min, 1);
	ck_assert_int_eq(o.nnodes_max, 4);
	options_free(&o);
	/* PET_* win */
	setenv("PET_RDZV_ID", "pet", 1);
	setenv("PET_NNODES", "3", 1);
	ck_assert_int_eq(apply(&o, NULL), 0);
	ck_assert_str_eq(o.rdzv_id, "pet");
	ck_assert_int_eq(o.nnodes_max, 3);
	options_free(&o);
	unsetenv("PET_RDZV_ID");
	unsetenv("PET_NNODES");
	/* CGRUN_RDZV_ENDPOINT and the site file win over Slurm's endpoint */
	setenv("CGRUN_RDZV_ENDPOINT", "daemon:29400", 1);
	ck_assert_int_eq(apply(&o, NULL), 0);
	ck_assert_str_eq(o.rdzv_endpoint, "daemon:29400");
	ck_assert_str_eq(o.rdzv_id, "4242.3");	/* still unique per step */
	options_free(&o);
	unsetenv("CGRUN_RDZV_ENDPOINT");
	ck_assert_int_ne(fd = mkstemp(path), -1);
	ck_assert_ptr_nonnull(f = fdopen(fd, "w"));
	fprintf(f, "rdzv_endpoint = site:29400\n");
	fclose(f);
	setenv("CGRUN_CONFIG", path, 1);
	ck_assert_int_eq(apply(&o, NULL), 0);
	ck_assert_str_eq(o.rdzv_endpoint, "site:29400");
	options_free(&o);
	unlink(path);
	setenv("CGRUN_CONFIG", "/dev/null", 1);
	/* several tasks per node: refused whatever the options say */
	setenv("SLURM_STEP_TASKS_PER_NODE", "8(x2)", 1);
	ck_assert_int_eq(apply(&o, "--rdzv-id=x", NULL), -1);
	ck_assert_ptr_nonnull(strstr(err, "8 tasks"));
	options_free(&o);
}
END_TEST

START_TEST(port_taken)
{
	struct sockaddr_in sa;
	struct cgrun_options o;
	socklen_t len = sizeof(sa);
	char port[16];
	int fd;

	ck_assert_int_ne(fd = socket(AF_INET, SOCK_STREAM, 0), -1);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(listen(fd, 1), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	snprintf(port, sizeof(port), "%d", ntohs(sa.sin_port));
	step_env("0");
	setenv("SLURM_STEP_NODELIST", "localhost,n03", 1);
	setenv("CGRUN_SLURM_PORT", port, 1);
	ck_assert_int_eq(apply(&o, NULL), -1);
	ck_assert_ptr_nonnull(strstr(err, "is already in use by another "
	    "program"));
	ck_assert_ptr_nonnull(strstr(err, "Slurm step 4242.3"));
	options_free(&o);
	/* node 1 does not host the rendezvous: it does not look */
	setenv("SLURM_NODEID", "1", 1);
	ck_assert_int_eq(apply(&o, NULL), 0);
	options_free(&o);
	close(fd);
	/* free again: node 0 goes ahead */
	setenv("SLURM_NODEID", "0", 1);
	ck_assert_msg(apply(&o, NULL) == 0, "%s", err);
	options_free(&o);
}
END_TEST

/* is_host follows SLURM_NODEID 0 for an endpoint on the step's first host. */
START_TEST(is_host_rule)
{
	step_env("0");
	read_ok();
	ck_assert_int_eq(slurm_is_host(&si, "n02"), 1);
	ck_assert_int_eq(slurm_is_host(&si, "N02"), 1);	/* DNS ignores case */
	ck_assert_int_eq(slurm_is_host(&si, "n03"), -1);	/* not the first */
	ck_assert_int_eq(slurm_is_host(&si, "daemon"), -1);
	ck_assert_int_eq(slurm_is_host(&si, NULL), -1);
	step_env("1");
	read_ok();
	ck_assert_int_eq(slurm_is_host(&si, "n02"), 0);	/* whatever DNS says */
	unsetenv("SLURM_NODEID");
	read_ok();
	ck_assert_int_eq(slurm_is_host(&si, "n02"), -1);
	/* outside a step: the heuristic */
	setup();
	setenv("SLURM_JOB_ID", "4242", 1);
	setenv("SLURM_JOB_NODELIST", "n[01-03]", 1);
	setenv("SLURM_NODEID", "0", 1);
	read_ok();
	ck_assert_int_eq(slurm_is_host(&si, "n01"), -1);
}
END_TEST

/* site_apply hands the c10d backend the step's node id and is_host. */
START_TEST(site_node_order)
{
	struct cgrun_options o;

	step_env("1");
	ck_assert_msg(apply(&o, NULL) == 0, "%s", err);
	ck_assert_int_eq(o.slurm_step, 1);
	ck_assert_int_eq(o.slurm_node_id, 1);
	ck_assert_int_eq(o.slurm_is_host, 0);
	options_free(&o);
	step_env("0");
	ck_assert_msg(apply(&o, NULL) == 0, "%s", err);
	ck_assert_int_eq(o.slurm_node_id, 0);
	ck_assert_int_eq(o.slurm_is_host, 1);
	options_free(&o);
	/* the user's own port on the step's first host: still node 0 */
	ck_assert_msg(apply(&o, "--rdzv-backend=c10d",
	    "--rdzv-endpoint=n02:29500", NULL) == 0, "%s", err);
	ck_assert_int_eq(o.slurm_step, 1);
	ck_assert_int_eq(o.slurm_is_host, 1);
	options_free(&o);
	/* a site daemon: the node order still, is_host by the heuristic */
	setenv("CGRUN_RDZV_ENDPOINT", "daemon:29400", 1);
	ck_assert_msg(apply(&o, NULL) == 0, "%s", err);
	ck_assert_int_eq(o.slurm_step, 1);
	ck_assert_int_eq(o.slurm_node_id, 0);
	ck_assert_int_eq(o.slurm_is_host, -1);
	options_free(&o);
	unsetenv("CGRUN_RDZV_ENDPOINT");
	/* not c10d: nothing */
	ck_assert_msg(apply(&o, "--rdzv-backend=static", "--node-rank=0", NULL)
	    == 0, "%s", err);
	ck_assert_int_eq(o.slurm_step, 0);
	options_free(&o);
	/* static on node 1 of the step: --node-rank from SLURM_NODEID,
	 * unless given (0 given stays 0) */
	step_env("1");
	ck_assert_msg(apply(&o, "--rdzv-endpoint=n02:29500", NULL) == 0, "%s",
	    err);
	ck_assert_ptr_null(o.rdzv_backend);
	ck_assert_int_eq(o.node_rank, 1);
	options_free(&o);
	ck_assert_msg(apply(&o, "--rdzv-backend=static", "--node-rank=0",
	    "--rdzv-endpoint=n02:29500", NULL) == 0, "%s", err);
	ck_assert_int_eq(o.node_rank, 0);
	options_free(&o);
	ck_assert_msg(apply(&o, "--rdzv-backend=c10d",
	    "--rdzv-endpoint=n02:29500", NULL) == 0, "%s", err);
	ck_assert_int_eq(o.node_rank, 0);
	options_free(&o);
	step_env("0");
	/* CGRUN_SLURM=0, or outside a step: nothing */
	setenv("CGRUN_SLURM", "0", 1);
	ck_assert_msg(apply(&o, "--nnodes=2", "--rdzv-backend=c10d",
	    "--rdzv-endpoint=n02:1", "--rdzv-id=x", NULL) == 0, "%s", err);
	ck_assert_int_eq(o.slurm_step, 0);
	options_free(&o);
	unsetenv("CGRUN_SLURM");
	unsetenv("SLURM_STEP_ID");
	ck_assert_msg(apply(&o, NULL) == 0, "%s", err);
	ck_assert_str_eq(o.rdzv_id, "4242");
	ck_assert_int_eq(o.slurm_step, 0);
	options_free(&o);
}
END_TEST

/* The suite. */
Suite *
test_suite(void)
{
	Suite *s = suite_create("slurm");
	TCase *tc = tcase_create("env");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, first_host);
	tcase_add_test(tc, outside_slurm);
	tcase_add_test(tc, job_shell);
	tcase_add_test(tc, step_not_job);
	tcase_add_test(tc, run_id_forms);
	tcase_add_test(tc, port_rule);
	tcase_add_test(tc, port_overrides);
	tcase_add_test(tc, tasks_per_node_refused);
	tcase_add_test(tc, malformed_step);
	tcase_add_test(tc, site_precedence);
	tcase_add_test(tc, port_taken);
	tcase_add_test(tc, is_host_rule);
	tcase_add_test(tc, site_node_order);
	suite_add_tcase(s, tc);
	return s;
}

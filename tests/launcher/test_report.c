/*
 * test_report.c: the failure report (launcher report.c, through
 * report.h): cgrun's exit status for a root cause (its code, 128 + signal,
 * 1 for a 0 or odd status), the words for a wait status, the report's
 * exact lines (headline, root cause with time, pid and attempt, the error
 * file's message and traceback, the log, the other failures) and the copy
 * of the root cause's error file with errorCode for schedulers.
 */
#include <sys/wait.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "helper_main.h"
#include "report.h"

static char tmpdir[64];

/* A fresh directory for error files. */
static void
setup(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/cgrun-report.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

/* Remove it. */
static void
teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
}

/* A failure of rank at 2023-11-14 22:13:20.123 UTC with wait status st. */
static struct report_failure
failure(int rank, int st)
{
	struct report_failure f;

	memset(&f, 0, sizeof(f));
	f.rank = rank;
	f.local_rank = rank % 4;
	f.group_rank = rank / 4;
	f.pid = 1000 + rank;
	f.status = st;
	f.when_ms = 1700000000123LL;
	f.attempt = 1;
	return f;
}

/* The report of n failures, as text (malloc'd). */
static char *
print(const struct report_failure *f, int n)
{
	struct report r;
	char *text = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&text, &len);

	ck_assert_ptr_nonnull(fp);
	memset(&r, 0, sizeof(r));
	r.name = "train.py";
	r.host = "node0";
	r.program = "python3";
	r.restarts = 1;
	r.max_restarts = 3;
	r.f = f;
	r.n = n;
	report_print(fp, &r);
	fclose(fp);
	return text;
}

/* Write an error file into the test directory; its path into f. */
static void
error_file(struct report_failure *f, const char *json)
{
	FILE *fp;

	snprintf(f->error_file, sizeof(f->error_file), "%s/error.json", tmpdir);
	ck_assert_ptr_nonnull(fp = fopen(f->error_file, "w"));
	fputs(json, fp);
	fclose(fp);
}

/* Exit codes pass through; signals are 128 + N; 0 or odd statuses are 1. */
START_TEST(exit_status_mapping)
{
	struct report_failure f = failure(0, W_EXITCODE(7, 0));

	ck_assert_int_eq(report_exit_status(&f), 7);
	f.status = W_EXITCODE(255, 0);
	ck_assert_int_eq(report_exit_status(&f), 255);
	f.status = W_EXITCODE(127, 0);
	ck_assert_int_eq(report_exit_status(&f), 127);
	f.status = W_EXITCODE(0, SIGKILL);
	ck_assert_int_eq(report_exit_status(&f), 137);
	f.status = W_EXITCODE(0, SIGSEGV) | WCOREFLAG;
	ck_assert_int_eq(report_exit_status(&f), 139);
	f.status = W_EXITCODE(0, 0);	/* exit 0 is no success of the job */
	ck_assert_int_eq(report_exit_status(&f), 1);
	f.status = W_STOPCODE(SIGSTOP);	/* not an end: still a failure */
	ck_assert_int_eq(report_exit_status(&f), 1);
}
END_TEST

/* How a worker ended, in words. */
START_TEST(describe_status)
{
	char buf[128];

	report_describe(buf, sizeof(buf), W_EXITCODE(3, 0));
	ck_assert_str_eq(buf, "exited with status 3");
	report_describe(buf, sizeof(buf), W_EXITCODE(0, SIGKILL));
	ck_assert_str_eq(buf, "killed by signal 9 (SIGKILL)");
	report_describe(buf, sizeof(buf), W_EXITCODE(0, SIGSEGV) | WCOREFLAG);
	ck_assert_str_eq(buf, "killed by signal 11 (SIGSEGV), core dumped");
	report_describe(buf, 12, W_EXITCODE(0, SIGTERM));	/* cut, ended */
	ck_assert_str_eq(buf, "killed by s");
}
END_TEST

/* Root cause first with every detail, then the others; exact lines. */
START_TEST(report_lines)
{
	struct report_failure f[3];
	char *text, want[8192];

	f[0] = failure(5, W_EXITCODE(7, 0));
	snprintf(f[0].log_file, sizeof(f[0].log_file), "/logs/r/1/stderr.log");
	error_file(&f[0], "{\"message\": {\"message\": \"ValueError: boom\", "
	    "\"extraInfo\": {\"py_callstack\": \"Traceback:\\n  File \\\"t.py\\\"\\n"
	    "ValueError: boom\\n\", \"timestamp\": \"1\"}}}");
	f[1] = failure(4, W_EXITCODE(0, SIGTERM));
	f[1].after_stop = 1;
	f[2] = failure(6, W_EXITCODE(0, SIGKILL));
	f[2].after_stop = 1;
	f[2].when_ms += 2500;
	text = print(f, 3);
	snprintf(want, sizeof(want),
	    "cgrun: train.py failed on node0 after 1 of 3 restarts\n"
	    "root cause: rank 5 (local_rank 1, node 1) exited with status 7 at "
	    "2023-11-14 22:13:20.123 UTC (pid 1005, attempt 1)\n"
	    "  message: ValueError: boom\n"
	    "  traceback:\n"
	    "    Traceback:\n"
	    "      File \"t.py\"\n"
	    "    ValueError: boom\n"
	    "  error file: %s\n"
	    "  log: /logs/r/1/stderr.log\n"
	    "other failures:\n"
	    "  rank 4 (local_rank 0, node 1) killed by signal 15 (SIGTERM) after "
	    "cgrun stopped it at 2023-11-14 22:13:20.123 UTC (pid 1004, attempt 1)\n"
	    "  rank 6 (local_rank 2, node 1) killed by signal 9 (SIGKILL) after "
	    "cgrun stopped it at 2023-11-14 22:13:22.623 UTC (pid 1006, attempt 1)\n",
	    f[0].error_file);
	ck_assert_str_eq(text, want);
	free(text);
}
END_TEST

/* One failure: no "other failures"; no error file or log: no such lines. */
START_TEST(report_single_plain)
{
	struct report_failure f = failure(0, W_EXITCODE(0, SIGSEGV));
	char *text = print(&f, 1);

	ck_assert_str_eq(text,
	    "cgrun: train.py failed on node0 after 1 of 3 restarts\n"
	    "root cause: rank 0 (local_rank 0, node 0) killed by signal 11 "
	    "(SIGSEGV) at 2023-11-14 22:13:20.123 UTC (pid 1000, attempt 1)\n");
	free(text);
	text = print(&f, 0);	/* nothing failed: nothing printed */
	ck_assert_str_eq(text, "");
	free(text);
}
END_TEST

/* A program that could not be executed is named, with errno and status. */
START_TEST(report_exec_failure)
{
	struct report_failure f = failure(2, W_EXITCODE(127, 0));
	char *text;

	f.exec_errno = ENOENT;
	text = print(&f, 1);
	ck_assert_msg(strstr(text, "root cause: rank 2 (local_rank 2, node 0) "
	    "could not execute python3: No such file or directory (status 127) "
	    "at ") != NULL, "%s", text);
	ck_assert_int_eq(report_exit_status(&f), 127);
	free(text);
}
END_TEST

/* A plain-string message; unreadable or malformed files add nothing. */
START_TEST(report_error_file_shapes)
{
	struct report_failure f = failure(0, W_EXITCODE(1, 0));
	char *text;

	error_file(&f, "{\"message\": \"plain words\", \"timestamp\": 5}");
	text = print(&f, 1);
	ck_assert_msg(strstr(text, "\n  message: plain words\n  error file: ") !=
	    NULL, "%s", text);
	ck_assert_ptr_null(strstr(text, "traceback"));
	free(text);
	error_file(&f, "not json {");
	text = print(&f, 1);
	ck_assert_ptr_null(strstr(text, "message:"));
	ck_assert_ptr_null(strstr(text, "error file:"));
	free(text);
	snprintf(f.error_file, sizeof(f.error_file), "%s/missing.json", tmpdir);
	text = print(&f, 1);
	ck_assert_ptr_null(strstr(text, "error file:"));
	free(text);
}
END_TEST

/* A traceback longer than the report shows is cut with a pointer. */
START_TEST(report_long_traceback_cut)
{
	struct report_failure f = failure(0, W_EXITCODE(1, 0));
	size_t n = 40000, i;
	char *json = malloc(n + 200), *text, *p;
	int lines = 0;

	ck_assert_ptr_nonnull(json);
	p = json + sprintf(json, "{\"message\": {\"message\": \"x\", "
	    "\"extraInfo\": {\"py_callstack\": \"");
	for (i = 0; i < n / 10; i++)
		p += sprintf(p, "line %03zu\\n", i % 1000);
	sprintf(p, "\"}}}");
	error_file(&f, json);
	text = print(&f, 1);
	ck_assert_msg(strstr(text, "    ... (cut; see the error file)\n") != NULL,
	    "%s", text);
	for (p = text; (p = strstr(p, "\n    line ")) != NULL; p++)
		lines++;
	ck_assert_int_gt(lines, 1000);
	ck_assert_int_lt(lines, (int)(n / 10));
	free(text);
	free(json);
}
END_TEST

/* The scheduler's copy: the root cause's file with errorCode = status. */
START_TEST(copy_error_file)
{
	struct report_failure f = failure(0, W_EXITCODE(0, SIGKILL));
	char out[128], buf[512];
	FILE *fp;
	size_t n;

	snprintf(out, sizeof(out), "%s/agent.json", tmpdir);
	ck_assert_int_eq(report_copy_error_file(&f, out), -1);	/* none */
	ck_assert_int_eq(access(out, F_OK), -1);
	error_file(&f, "{\"message\": {\"message\": \"m\"}}");
	ck_assert_int_eq(report_copy_error_file(&f, out), 0);
	ck_assert_ptr_nonnull(fp = fopen(out, "r"));
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	buf[n] = '\0';
	fclose(fp);
	ck_assert_msg(strstr(buf, "\"errorCode\":137") != NULL, "%s", buf);
	ck_assert_msg(strstr(buf, "\"message\":\"m\"") != NULL, "%s", buf);
}
END_TEST

/* The suite. */
Suite *
test_suite(void)
{
	Suite *s = suite_create("report");
	TCase *tc = tcase_create("report");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, exit_status_mapping);
	tcase_add_test(tc, describe_status);
	tcase_add_test(tc, report_lines);
	tcase_add_test(tc, report_single_plain);
	tcase_add_test(tc, report_exec_failure);
	tcase_add_test(tc, report_error_file_shapes);
	tcase_add_test(tc, report_long_traceback_cut);
	tcase_add_test(tc, copy_error_file);
	suite_add_tcase(s, tc);
	return s;
}

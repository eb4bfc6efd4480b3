/*
 * test_spawn.c: the worker command and fork/exec of one worker (launcher
 * spawn.c, through spawn.h): how a script is run (python -u, -m,
 * --no-python, a program or #! script run directly, PYTHON_EXEC), and
 * what the child gets: its own process group, exactly the given
 * environment, fds 0-2 only, default signal handling and an empty mask,
 * SIGHUP ignored only under nohup, and 126/127 with the exec errno when
 * the program cannot run.
 */
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "helper_main.h"
#include "options.h"
#include "shebang.h"
#include "spawn.h"

static char tmpdir[64];

/* A fresh directory to work in, and the current directory there. */
static void
setup(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/cgrun-spawn.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	ck_assert_int_eq(chdir(tmpdir), 0);
}

/* Remove the directory and what the tests wrote in it. */
static void
teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (chdir("/") != 0 || system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
}

/* Write a file with content and mode. */
static void
write_file(const char *path, const char *content, mode_t mode)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fputs(content, f);
	fclose(f);
	ck_assert_int_eq(chmod(path, mode), 0);
}

/* Build the command for script (with no_python / module flags). */
static void
cmd_for(struct spawn_cmd *c, char *script, int no_python, int module)
{
	static char arg1[] = "--lr", arg2[] = "0.1";
	static char *args[] = { arg1, arg2, NULL };
	struct cgrun_options o;
	char err[256] = "";

	memset(&o, 0, sizeof(o));
	o.script = script;
	o.script_args = args;
	o.nscript_args = 2;
	o.no_python = no_python;
	o.module = module;
	ck_assert_msg(spawn_cmd_build(c, &o, err, sizeof(err)) == 0, "%s", err);
}

/* Assert the command's argv. */
static void
expect_argv(const struct spawn_cmd *c, const char *const *want, int n)
{
	int i;

	ck_assert_int_eq(c->argc, n);
	for (i = 0; i < n; i++)
		ck_assert_str_eq(c->argv[i], want[i]);
	ck_assert_ptr_null(c->argv[n]);
}

/* A .py script runs as python3 -u SCRIPT ARGS; PYTHON_EXEC picks python. */
START_TEST(python_script)
{
	static const char *const want[] = { "python3", "-u", "train.py",
	    "--lr", "0.1" };
	static const char *const want_py[] = { "/opt/py/bin/python", "-u",
	    "train.py", "--lr", "0.1" };
	char script[] = "train.py";
	struct spawn_cmd c;

	unsetenv("PYTHON_EXEC");
	cmd_for(&c, script, 0, 0);
	expect_argv(&c, want, 5);
	ck_assert_int_eq(c.direct, 0);
	ck_assert_ptr_null(c.path);
	ck_assert_str_eq(spawn_cmd_name(&c), "train.py");
	spawn_cmd_free(&c);
	setenv("PYTHON_EXEC", "/opt/py/bin/python", 1);
	cmd_for(&c, script, 0, 0);
	expect_argv(&c, want_py, 5);
	spawn_cmd_free(&c);
}
END_TEST

/* -m runs python3 -u -m MODULE; the name is the module's. */
START_TEST(python_module)
{
	static const char *const want[] = { "python3", "-u", "-m",
	    "pkg.train", "--lr", "0.1" };
	char script[] = "pkg.train";
	struct spawn_cmd c;

	unsetenv("PYTHON_EXEC");
	cmd_for(&c, script, 0, 1);
	expect_argv(&c, want, 6);
	ck_assert_str_eq(spawn_cmd_name(&c), "pkg.train");
	spawn_cmd_free(&c);
}
END_TEST

/* --no-python, and a program or #! script found here, run directly. */
START_TEST(direct_programs)
{
	static const char *const want[] = { "worker", "--lr", "0.1" };
	char script[] = "worker", data[] = "data", sh[] = "run.sh";
	struct spawn_cmd c;

	cmd_for(&c, script, 1, 0);
	expect_argv(&c, want, 3);
	ck_assert_int_eq(c.direct, 1);
	ck_assert_str_eq(spawn_cmd_name(&c), "worker");
	spawn_cmd_free(&c);
	write_file("run.sh", "#!/bin/sh\nexit 0\n", 0755);
	cmd_for(&c, sh, 0, 0);
	ck_assert_int_eq(c.direct, 1);
	ck_assert_str_eq(c.path, "./run.sh");
	ck_assert_str_eq(c.argv[0], "run.sh");
	spawn_cmd_free(&c);
	/* not executable, or no ELF/#! magic: python runs it */
	write_file("data", "print(1)\n", 0755);
	cmd_for(&c, data, 0, 0);
	ck_assert_int_eq(c.direct, 0);
	ck_assert_str_eq(c.argv[2], "data");
	spawn_cmd_free(&c);
	ck_assert_int_eq(spawn_is_program("/bin/sh"), 1);
	ck_assert_int_eq(spawn_is_program("data"), 0);
	ck_assert_int_eq(spawn_is_program("/"), 0);
	ck_assert_int_eq(spawn_is_program("/nonexistent"), 0);
}
END_TEST

/* An executable script whose #! line names python runs under python. */
START_TEST(python_shebang)
{
	static const char *const want[] = { "/opt/py/bin/python", "-u",
	    "train", "--lr", "0.1" };
	char script[] = "train";
	struct spawn_cmd c;

	setenv("PYTHON_EXEC", "/opt/py/bin/python", 1);
	write_file("train", "#!/usr/bin/env python3\nprint(1)\n", 0755);
	cmd_for(&c, script, 0, 0);
	expect_argv(&c, want, 5);
	ck_assert_int_eq(c.direct, 0);
	spawn_cmd_free(&c);
	ck_assert_int_eq(spawn_is_program("train"), SPAWN_PYTHON_SCRIPT);
	cmd_for(&c, script, 1, 0);	/* --no-python: its own #! line */
	ck_assert_int_eq(c.direct, 1);
	spawn_cmd_free(&c);
	unsetenv("PYTHON_EXEC");
}
END_TEST

/* Which #! lines name a Python interpreter. */
START_TEST(shebang_lines)
{
	static const char *const yes[] = { "#!/usr/bin/env python3\n",
	    "#!/usr/bin/python\n", "#! /opt/v/bin/python3.12 -u\n",
	    "#!/usr/bin/env -S python3 -X dev\n",
	    "#!/usr/bin/env -u HOME A=1 python\r\n", "#!python3" };
	static const char *const no[] = { "#!/bin/sh\n",
	    "#!/usr/bin/env perl\n", "#!/usr/bin/env\n", "#!\n",
	    "#!/usr/bin/pythonista\n", "#!/bin/sh python3\n",
	    "# !/usr/bin/python\n", "\177ELF", "" };
	size_t i;

	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		ck_assert_msg(shebang_names_python(yes[i], strlen(yes[i])),
		    "%s", yes[i]);
	for (i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		ck_assert_msg(!shebang_names_python(no[i], strlen(no[i])),
		    "%s", no[i]);
}
END_TEST

/* Read all of fd into buf (NUL-terminated) and close it. */
static void
slurp(int fd, char *buf, size_t len)
{
	size_t got = 0;
	ssize_t n;

	while (got + 1 < len && (n = read(fd, buf + got, len - 1 - got)) > 0)
		got += (size_t)n;
	buf[got] = '\0';
	close(fd);
}

/* How a test starts a worker. */
struct start {
	const char	*path;		/* what to execute; NULL: argv[0] */
	char		**argv, **envp;
	int		 local_rank, hup, out_fd;	/* out_fd -1: ours */
};

/* Start one worker as st says; its pid, the exec pipe in *efd. */
static pid_t
start(const struct start *st, int *efd)
{
	struct spawn_cmd cmd;
	struct spawn_req req;
	char err[256] = "";
	pid_t pid;

	memset(&cmd, 0, sizeof(cmd));
	cmd.path = (char *)(uintptr_t)st->path;
	cmd.argv = st->argv;
	while (st->argv[cmd.argc] != NULL)
		cmd.argc++;
	cmd.direct = 1;
	memset(&req, 0, sizeof(req));
	req.cmd = &cmd;
	req.local_rank = st->local_rank;
	req.envp = st->envp;
	req.out_fd = req.err_fd = st->out_fd;
	req.hup_ignored = st->hup;
	pid = spawn_worker(&req, efd, err, sizeof(err));
	ck_assert_msg(pid > 0, "%s", err);
	return pid;
}

/*
 * Run a worker to its end with its stdout and stderr into *out (a pipe's
 * read end; out NULL: the test's own): its wait status, the exec errno
 * in *eno.
 */
static int
run_st(struct start *st, int *out, int *eno)
{
	int p[2] = { -1, -1 }, efd = -1, status = -1;
	pid_t pid;

	if (out != NULL)
		ck_assert_int_eq(pipe(p), 0);
	st->out_fd = p[1];
	pid = start(st, &efd);
	if (out != NULL) {
		close(p[1]);
		*out = p[0];
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	*eno = spawn_exec_errno(efd);
	return status;
}

/* run_st for local rank 0. */
static int
run(const char *path, char **argv, char **envp, int hup, int *out, int *eno)
{
	struct start st = { path, argv, envp, 0, hup, -1 };

	return run_st(&st, out, eno);
}

/* Exit codes pass through; an exec that worked reports errno 0. */
START_TEST(exit_status_and_exec_ok)
{
	char a0[] = "sh", a1[] = "-c", a2[] = "exit 7", *argv[] = { a0, a1, a2, NULL };
	char *envp[] = { NULL };
	int st, eno = -1;

	st = run("/bin/sh", argv, envp, 0, NULL, &eno);
	ck_assert(WIFEXITED(st));
	ck_assert_int_eq(WEXITSTATUS(st), 7);
	ck_assert_int_eq(eno, 0);
}
END_TEST

/* A program that is not there: 127 and ENOENT, by path or on PATH. */
START_TEST(exec_not_found_127)
{
	char a0[] = "/nonexistent/worker", *argv[] = { a0, NULL };
	char b0[] = "cgrun-no-such-program-here", *argv2[] = { b0, NULL };
	char e0[] = "PATH=/usr/bin:/bin", *envp[] = { e0, NULL };
	char buf[512];
	int st, eno = 0, out;

	st = run(NULL, argv, envp, 0, &out, &eno);
	slurp(out, buf, sizeof(buf));
	ck_assert(WIFEXITED(st));
	ck_assert_int_eq(WEXITSTATUS(st), 127);
	ck_assert_int_eq(eno, ENOENT);
	ck_assert_str_eq(buf, "cgrun: cannot execute /nonexistent/worker: No "
	    "such file or directory\n");
	st = run(NULL, argv2, envp, 0, &out, &eno);
	close(out);
	ck_assert_int_eq(WEXITSTATUS(st), 127);
	ck_assert_int_eq(eno, ENOENT);
}
END_TEST

/* A program that is there but cannot run: 126 and the exec's errno. */
START_TEST(exec_not_executable_126)
{
	char a0[] = "./plain", *argv[] = { a0, NULL };
	char d0[] = "/tmp", *argv2[] = { d0, NULL };
	char *envp[] = { NULL };
	int st, eno = 0, out;

	write_file("plain", "not a program\n", 0644);
	st = run("./plain", argv, envp, 0, &out, &eno);
	close(out);
	ck_assert(WIFEXITED(st));
	ck_assert_int_eq(WEXITSTATUS(st), 126);
	ck_assert_int_eq(eno, EACCES);
	st = run("/tmp", argv2, envp, 0, &out, &eno);	/* a directory */
	close(out);
	ck_assert_int_eq(WEXITSTATUS(st), 126);
	ck_assert_int_eq(eno, EACCES);
	write_file("noformat", "\x01\x02\x03\x04garbage\n", 0755);
	st = run("./noformat", argv, envp, 0, &out, &eno);
	close(out);
	ck_assert_int_eq(WEXITSTATUS(st), 126);
	ck_assert_int_eq(eno, ENOEXEC);
}
END_TEST

/* Exactly envp, fds 0-2 only, stdout where asked. */
START_TEST(environment_and_fds)
{
	char a0[] = "sh", a1[] = "-c",
	    a2[] = "env | sort; ls /proc/self/fd | sort -n | tr '\\n' ' '";
	char *argv[] = { a0, a1, a2, NULL };
	char e0[] = "PATH=/usr/bin:/bin", e1[] = "RANK=3";
	char *envp[] = { e0, e1, NULL };
	char buf[4096];
	int out, eno, st, stray;

	stray = open("/dev/null", O_RDONLY);	/* inheritable on purpose */
	ck_assert_int_ge(stray, 3);
	st = run("/bin/sh", argv, envp, 0, &out, &eno);
	slurp(out, buf, sizeof(buf));
	close(stray);
	ck_assert_int_eq(WEXITSTATUS(st), 0);
	/* sh adds PWD; nothing of this process's environment leaks in */
	ck_assert_msg(strstr(buf, "PATH=/usr/bin:/bin\n") != NULL, "%s", buf);
	ck_assert_msg(strstr(buf, "RANK=3\n") != NULL, "%s", buf);
	ck_assert_msg(strstr(buf, "CK_") == NULL && strstr(buf, "HOME=") == NULL,
	    "%s", buf);
	/* ls's own directory fd is 3: the stray descriptor is not inherited */
	ck_assert_msg(strstr(buf, "\n0 1 2 3 ") != NULL, "%s", buf);
	ck_assert_msg(strstr(buf, " 4 ") == NULL, "%s", buf);
}
END_TEST

/* The value of a "Name:\tHEX" line of /proc/self/status text. */
static unsigned long long
status_hex(const char *text, const char *name)
{
	const char *p = strstr(text, name);

	ck_assert_msg(p != NULL, "no %s in %s", name, text);
	return strtoull(p + strlen(name), NULL, 16);
}

/*
 * Signal state of a worker started while the agent blocks and ignores
 * signals: nothing blocked, only SIGHUP ignored and only under nohup
 * (glibc's reserved signals 32 and 33 cannot be reset; make ignores them).
 */
static void
check_signals(int hup)
{
	char a0[] = "/bin/cat", a1[] = "/proc/self/status";
	char *argv[] = { a0, a1, NULL }, *envp[] = { NULL };
	char buf[8192];
	unsigned long long ign, reserved = 3ULL << 31;
	sigset_t set;
	int out, eno, st;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	st = run(NULL, argv, envp, hup, &out, &eno);
	slurp(out, buf, sizeof(buf));
	ck_assert_int_eq(WEXITSTATUS(st), 0);
	ck_assert_int_eq(status_hex(buf, "SigBlk:"), 0);
	ign = status_hex(buf, "SigIgn:") & ~reserved;
	ck_assert_msg(ign == (hup ? 1ULL << (SIGHUP - 1) : 0),
	    "SigIgn %llx (hup %d)", ign, hup);
}

/* Default handlers and an empty mask, whatever the agent had. */
START_TEST(signals_reset)
{
	check_signals(0);
}
END_TEST

/* Under nohup the workers keep SIGHUP ignored, nothing else. */
START_TEST(signals_hup_ignored)
{
	check_signals(1);
}
END_TEST

/*
 * The worker leads its own session and process group (killpg of the
 * group; the terminal is not its controlling one), from its exec on (the
 * exec pipe's write end closes at exec).
 */
START_TEST(own_process_group)
{
	char a0[] = "sleep", a1[] = "5", *argv[] = { a0, a1, NULL };
	char e0[] = "PATH=/usr/bin:/bin", *envp[] = { e0, NULL };
	struct start st = { NULL, argv, envp, 0, 0, -1 };
	int efd, status;
	pid_t pid = start(&st, &efd);
	struct pollfd pfd = { efd, POLLIN, 0 };

	ck_assert_int_eq(poll(&pfd, 1, 5000), 1);
	ck_assert_int_eq(getpgid(pid), pid);
	ck_assert_int_eq(getsid(pid), pid);
	ck_assert_int_ne(getpgid(0), pid);
	ck_assert_int_eq(killpg(pid, SIGKILL), 0);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	ck_assert_int_eq(spawn_exec_errno(efd), 0);
}
END_TEST

/* ${local_rank} in the arguments is the worker's local rank. */
START_TEST(local_rank_substituted)
{
	char a0[] = "sh", a1[] = "-c", a2[] = "echo \"$0\"", a3[] = "r${local_rank}.log";
	char *argv[] = { a0, a1, a2, a3, NULL }, *envp[] = { NULL };
	struct start st = { "/bin/sh", argv, envp, 6, 0, -1 };
	char buf[64];
	int out, eno;

	ck_assert_int_eq(WEXITSTATUS(run_st(&st, &out, &eno)), 0);
	slurp(out, buf, sizeof(buf));
	ck_assert_str_eq(buf, "r6.log\n");
	ck_assert_str_eq(argv[3], "r${local_rank}.log");	/* not changed */
}
END_TEST

/* The suite. */
Suite *
test_suite(void)
{
	Suite *s = suite_create("spawn");
	TCase *tc = tcase_create("command");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, python_script);
	tcase_add_test(tc, python_module);
	tcase_add_test(tc, direct_programs);
	tcase_add_test(tc, python_shebang);
	tcase_add_test(tc, shebang_lines);
	suite_add_tcase(s, tc);
	tc = tcase_create("worker");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, exit_status_and_exec_ok);
	tcase_add_test(tc, exec_not_found_127);
	tcase_add_test(tc, exec_not_executable_126);
	tcase_add_test(tc, environment_and_fds);
	tcase_add_test(tc, signals_reset);
	tcase_add_test(tc, signals_hup_ignored);
	tcase_add_test(tc, own_process_group);
	tcase_add_test(tc, local_rank_substituted);
	suite_add_tcase(s, tc);
	return s;
}

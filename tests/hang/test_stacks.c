/*
 * test_stacks.c: the hang diagnosis (launcher/supervise/): the dump parser
 * (stackdump.c) on real outputs of Python 3.11's fault handler, gdb 13,
 * eu-stack, py-spy and cgrun's /proc text, fed whole and one line at a
 * time, with its limits (threads, frames, field lengths, a line past
 * STACKDUMP_LINE_MAX); the grouping and summary (stackgroup.c): groups
 * by function names only, the odd rank out (3 + 1) and nobody (2 + 2),
 * rank runs, ranks without stack, a cut summary; and the collection on a
 * real event loop (stacks.c) of a native process through /proc and gdb,
 * done() called once on a later loop turn, stacks.txt written.
 */
#include <sys/stat.h>
#include <sys/wait.h>

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <event2/event.h>

#include "helper_main.h"
#include "stackdump.h"
#include "stackgroup.h"
#include "stacks.h"

static const char fh_dump[] =
    "Fatal Python error: Aborted\n"
    "\n"
    "Thread 0x00007fb9f29976c0 (most recent call first):\n"
    "  File \"/usr/lib/python3.11/threading.py\", line 320 in wait\n"
    "  File \"/usr/lib/python3.11/threading.py\", line 1002 in _bootstrap\n"
    "\n"
    "Current thread 0x00007fb9f37dbb80 (most recent call first):\n"
    "  File \"/w/hang.py\", line 31 in hang_here\n"
    "  File \"/w/hang.py\", line 48 in train_step\n"
    "  File \"/w/hang.py\", line 60 in main\n"
    "  File \"/w/hang.py\", line 70 in <module>\n"
    "\n"
    "Extension modules: numpy.core._multiarray_umath, torch._C (total: 2)\n";

static const char gdb_dump[] =
    "[New LWP 14131]\n"
    "0x00007ff441c36df2 in __libc_pause () at pause.c:29\n"
    "29\t../sysdeps/unix/sysv/linux/pause.c: No such file or directory.\n"
    "\n"
    "Thread 2 (Thread 0x7ff441b5f6c0 (LWP 14131) \"hang\"):\n"
    "#0  0x00007ff441c36df2 in __libc_pause () at pause.c:29\n"
    "#1  0x000055d69b77015a in th (a=0x0) at /tmp/hang.c:3\n"
    "#2  0x00007ff441bec1f5 in start_thread (arg=<optimized out>) at "
    "./nptl/pthread_create.c:442\n"
    "#3  0x00007ff441c6c8ec in clone3 () at clone3.S:81\n"
    "\n"
    "Thread 1 (Thread 0x7ff441b60740 (LWP 14129) \"hang\"):\n"
    "#0  0x00007ff441c36df2 in __libc_pause () at "
    "../sysdeps/unix/sysv/linux/pause.c:29\n"
    "#1  0x000055d69b770165 in hang_here () at /tmp/hang.c:4\n"
    "#2  main () at /tmp/hang.c:5\n"
    "#3  0x00007f0000000000 in gloo::wait(std::chrono::duration<long>) () "
    "from /lib/libgloo.so\n"
    "#4  0x00007f0000000001 in ?? ()\n"
    "[Inferior 1 (process 14129) detached]\n";

static const char eu_dump[] =
    "PID 77 - process\n"
    "TID 78:\n"
    "#0  0x00007f3c5e8e3df2 __libc_pause\n"
    "#1  0x000055c3a1e0015a th\n"
    "TID 77:\n"
    "#0  0x00007f3c5e8e3df2 __libc_pause\n"
    "#1  0x000055c3a1e00165 hang_here\n"
    "#2  0x000055c3a1e00191 main\n";

static const char pyspy_dump[] =
    "Process 4242: python3 hang.py\n"
    "Python v3.11.2 (/usr/bin/python3.11)\n"
    "\n"
    "Thread 4242 (idle): \"MainThread\"\n"
    "    hang_here (hang.py:31)\n"
    "    main (hang.py:60)\n"
    "    <module> (hang.py:70)\n"
    "Thread 4250 (idle): \"Thread-1\"\n"
    "    wait (threading.py:320)\n";

/* A fresh dump of text. */
static struct stackdump *
parse(const char *text)
{
	struct stackdump *d = malloc(sizeof(*d));

	ck_assert_ptr_nonnull(d);
	stackdump_init(d);
	stackdump_text(d, text, strlen(text));
	return d;
}

/* Frame i of the main thread of d (pid). */
static const struct stackdump_frame *
mainf(const struct stackdump *d, long pid, int i)
{
	const struct stackdump_frame *f = stackdump_frame(d,
	    stackdump_main(d, pid), i);

	ck_assert_ptr_nonnull(f);
	return f;
}

START_TEST(faulthandler_output)
{
	struct stackdump *d = parse(fh_dump);

	ck_assert_int_eq(d->fmt, STACKDUMP_FAULTHANDLER);
	ck_assert_int_eq(d->nthreads, 2);
	ck_assert_int_eq(d->ended, 1);
	ck_assert_str_eq(d->threads[0].name, "0x00007fb9f29976c0");
	ck_assert_int_eq(d->threads[1].current, 1);
	ck_assert_int_eq(stackdump_main(d, 0), 1);
	ck_assert_str_eq(mainf(d, 0, 0)->func, "hang_here");
	ck_assert_str_eq(mainf(d, 0, 0)->file, "/w/hang.py");
	ck_assert_int_eq(mainf(d, 0, 0)->line, 31);
	ck_assert_str_eq(mainf(d, 0, 3)->func, "<module>");
	ck_assert_ptr_null(stackdump_frame(d, 1, 4));
	free(d);
}
END_TEST

/* Lines that are not a dump's are ignored; "???" is unknown. */
START_TEST(faulthandler_noise)
{
	struct stackdump *d = malloc(sizeof(*d));
	static const char *const lines[] = { "step 11 loss 0.25",
	    "Stack (most recent call first):",
	    "  File \"a \\\", line 9 in x.py\", line ??? in ???",
	    "  <no Python frame>", "  File \"x.py\" line 3", "  ...", "" };
	size_t i;
	int n = 0;

	stackdump_init(d);
	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		n += stackdump_line(d, lines[i], strlen(lines[i]));
	ck_assert_int_eq(n, 5);
	ck_assert_int_eq(d->nthreads, 1);
	ck_assert_int_eq(d->threads[0].nframes, 1);
	ck_assert_str_eq(d->frames[0].file, "a \\\", line 9 in x.py");
	ck_assert_int_eq(d->frames[0].line, 0);
	ck_assert_str_eq(d->frames[0].func, "");
	free(d);
}
END_TEST

START_TEST(gdb_output)
{
	struct stackdump *d = parse(gdb_dump);

	ck_assert_int_eq(d->fmt, STACKDUMP_GDB);
	ck_assert_int_eq(d->nthreads, 2);
	ck_assert_int_eq(d->threads[0].tid, 14131);
	ck_assert_int_eq(d->threads[1].nframes, 5);
	ck_assert_int_eq(stackdump_main(d, 14129), 1);
	ck_assert_int_eq(stackdump_main(d, 1), 1);	/* the last one */
	ck_assert_str_eq(mainf(d, 14129, 0)->func, "__libc_pause");
	ck_assert_str_eq(mainf(d, 14129, 1)->func, "hang_here");
	ck_assert_str_eq(mainf(d, 14129, 1)->file, "/tmp/hang.c");
	ck_assert_int_eq(mainf(d, 14129, 1)->line, 4);
	ck_assert_str_eq(mainf(d, 14129, 2)->func, "main");
	ck_assert_str_eq(mainf(d, 14129, 3)->func, "gloo::wait");
	ck_assert_str_eq(mainf(d, 14129, 4)->func, "");
	free(d);
}
END_TEST

START_TEST(eustack_pyspy_dump)
{
	struct stackdump *d = parse(eu_dump);

	ck_assert_int_eq(d->fmt, STACKDUMP_EUSTACK);
	ck_assert_int_eq(d->nthreads, 2);
	ck_assert_int_eq(stackdump_main(d, 77), 1);
	ck_assert_str_eq(mainf(d, 77, 1)->func, "hang_here");
	free(d);
	d = parse(pyspy_dump);
	ck_assert_int_eq(d->fmt, STACKDUMP_PYSPY);
	ck_assert_int_eq(d->nthreads, 2);
	ck_assert_int_eq(stackdump_main(d, 0), 0);
	ck_assert_str_eq(mainf(d, 0, 0)->func, "hang_here");
	ck_assert_str_eq(mainf(d, 0, 0)->file, "hang.py");
	ck_assert_int_eq(mainf(d, 0, 0)->line, 31);
	free(d);
}
END_TEST

/* The limits: threads, frames, a line's length, a field's length. */
START_TEST(limits)
{
	struct stackdump *d = malloc(sizeof(*d));
	char line[STACKDUMP_LINE_MAX + 64];
	int i;

	stackdump_init(d);
	for (i = 0; i < STACKDUMP_THREADS_MAX + 3; i++)
		ck_assert_int_eq(stackdump_line(d, "TID 5:", 6), 1);
	ck_assert_int_eq(d->nthreads, STACKDUMP_THREADS_MAX);
	ck_assert_int_eq(d->cut_threads, 3);
	stackdump_init(d);
	stackdump_line(d, "TID 5:", 6);
	for (i = 0; i < STACKDUMP_FRAMES_MAX + 2; i++)
		stackdump_line(d, "#1  0x1 f", 9);
	ck_assert_int_eq(d->nframes, STACKDUMP_FRAMES_MAX);
	ck_assert_int_eq(d->threads[0].cut, 2);
	/* a thread after the frames ran out keeps none */
	stackdump_line(d, "TID 6:", 6);
	stackdump_line(d, "#0  0x1 g", 9);
	ck_assert_int_eq(d->threads[1].nframes, 0);
	ck_assert_int_eq(d->threads[1].cut, 1);
	stackdump_init(d);
	memset(line, 'x', sizeof(line));
	memcpy(line, "  File \"", 8);
	memcpy(line + STACKDUMP_LINE_MAX, "\", line 3 in f", 14);
	stackdump_line(d, "Stack (most recent call first):", 31);
	ck_assert_int_eq(stackdump_line(d, line, sizeof(line)), 0);
	memcpy(line + 300, "\", line 3 in f", 14);
	ck_assert_int_eq(stackdump_line(d, line, 314), 1);
	ck_assert_int_eq(strlen(d->frames[0].file), STACKDUMP_FILE_MAX - 1);
	free(d);
}
END_TEST

/* A rank of the group test: a fault handler dump with these frames. */
static struct stackdump *
pyrank(const char *f0, const char *f1, int line)
{
	char text[512];

	snprintf(text, sizeof(text), "Stack (most recent call first):\n"
	    "  File \"/x/t.py\", line %d in %s\n"
	    "  File \"/x/t.py\", line 9 in %s\n"
	    "  File \"/x/t.py\", line 99 in <module>\n", line, f0, f1);
	return parse(text);
}

START_TEST(group_odd_one_out)
{
	struct stackgroup_rank r[4];
	char buf[STACKS_SUMMARY_MAX];
	int i;

	memset(r, 0, sizeof(r));
	for (i = 0; i < 4; i++) {
		r[i].rank = 4 + i;
		r[i].d = i == 2 ? pyrank("hang_here", "main", 31) :
		    pyrank("backward", "train_step", 10 + i);
	}
	ck_assert_int_eq(stackgroup_summary(r, 4, buf, sizeof(buf)), 6);
	ck_assert_str_eq(buf, "ranks 4,5,7 in backward (t.py:10) <- "
	    "train_step <- <module>; rank 6 in hang_here (t.py:31) <- main "
	    "<- <module>");
	ck_assert(stackgroup_same(&r[0], &r[3]));
	ck_assert(!stackgroup_same(&r[0], &r[2]));
	/* the detector's guess does not beat the odd one out */
	r[0].flagged = 1;
	ck_assert_int_eq(stackgroup_summary(r, 4, buf, sizeof(buf)), 6);
	/* 2 + 2: nobody stands out, but the flagged rank is named */
	free((void *)(uintptr_t)r[1].d);
	r[1].d = pyrank("hang_here", "main", 31);
	ck_assert_int_eq(stackgroup_summary(r, 4, buf, sizeof(buf)), 4);
	r[0].flagged = 0;
	ck_assert_int_eq(stackgroup_summary(r, 4, buf, sizeof(buf)), -1);
	ck_assert_str_eq(buf, "ranks 4,7 in backward (t.py:10) <- "
	    "train_step <- <module>; ranks 5,6 in hang_here (t.py:31) <- "
	    "main <- <module>");
	for (i = 0; i < 4; i++)
		free((void *)(uintptr_t)r[i].d);
}
END_TEST

START_TEST(group_runs_missing_cut)
{
	struct stackgroup_rank r[6];
	char buf[STACKS_SUMMARY_MAX], small[40];
	int i;

	memset(r, 0, sizeof(r));
	for (i = 0; i < 6; i++) {
		r[i].rank = i;
		r[i].d = i == 5 ? NULL : pyrank("wait", "loop", 5);
	}
	r[5].missing = "timed out";
	ck_assert_int_eq(stackgroup_summary(r, 6, buf, sizeof(buf)), 5);
	ck_assert_str_eq(buf, "ranks 0-4 in wait (t.py:5) <- loop <- "
	    "<module>; rank 5: no stack (timed out)");
	ck_assert_int_eq(stackgroup_summary(r, 5, buf, sizeof(buf)), -1);
	ck_assert_int_eq(stackgroup_summary(r, 1, buf, sizeof(buf)), -1);
	ck_assert_str_eq(buf, "rank 0 in wait (t.py:5) <- loop <- <module>");
	stackgroup_summary(r, 6, small, sizeof(small));
	ck_assert_int_eq(strlen(small), sizeof(small) - 1);
	ck_assert_str_eq(small + sizeof(small) - 4, "...");
	for (i = 0; i < 5; i++)
		free((void *)(uintptr_t)r[i].d);
}
END_TEST

/* 1 + 1 (two ranks of a node): the one outside a collective is named. */
START_TEST(group_outside_collective)
{
	static const char waits[] = "Stack (most recent call first):\n"
	    "  File \"/usr/lib/python3/dist-packages/torch/autograd/"
	    "__init__.py\", line 197 in backward\n"
	    "  File \"/w/train.py\", line 244 in main\n";
	struct stackgroup_rank r[2];
	char buf[512];

	memset(r, 0, sizeof(r));
	r[0].rank = 2;
	r[0].d = pyrank("hang_here", "main", 31);
	r[1].rank = 3;
	r[1].d = parse(waits);
	ck_assert(!stackgroup_in_collective(&r[0]));
	ck_assert(stackgroup_in_collective(&r[1]));
	ck_assert_int_eq(stackgroup_summary(r, 2, buf, sizeof(buf)), 2);
	/* both wait: the hung rank is elsewhere; nobody here is named */
	free((void *)(uintptr_t)r[0].d);
	r[0].d = parse(waits);
	ck_assert_int_eq(stackgroup_summary(r, 2, buf, sizeof(buf)), -1);
	ck_assert_str_eq(buf, "ranks 2,3 in backward <- main (train.py:244)");
	free((void *)(uintptr_t)r[0].d);
	free((void *)(uintptr_t)r[1].d);
}
END_TEST

/* The file and line shown are the first frame of the user's code. */
START_TEST(group_user_frame)
{
	struct stackgroup_rank r;
	char buf[256];

	memset(&r, 0, sizeof(r));
	r.d = parse("Stack (most recent call first):\n"
	    "  File \"/usr/lib/python3.11/threading.py\", line 320 in wait\n"
	    "  File \"/opt/v/lib/python3.13/site-packages/t/x.py\", line 2 in w\n"
	    "  File \"<frozen importlib._bootstrap>\", line 1 in f\n"
	    "  File \"/w/hang.py\", line 31 in hang_here\n"
	    "  File \"/w/hang.py\", line 60 in main\n");
	stackgroup_where(&r, buf, sizeof(buf));
	ck_assert_str_eq(buf, "wait <- w <- f <- hang_here (hang.py:31) <- main");
	free((void *)(uintptr_t)r.d);
	r.d = parse(gdb_dump);
	r.pid = 14129;
	stackgroup_where(&r, buf, sizeof(buf));
	ck_assert_str_eq(buf, "__libc_pause <- hang_here (hang.c:4) <- main <- "
	    "gloo::wait <- ??");
	free((void *)(uintptr_t)r.d);
}
END_TEST

/* A native process that waits in a function of its own. */
static void __attribute__((noinline, noreturn))
stacks_test_hang_here(void)
{
	for (;;)
		pause();
}

struct done_rec {
	int	 calls;
	int	 in_collect;
	char	 summary[STACKS_SUMMARY_MAX];
};

/* done(): record, stop the loop. */
static void
done_cb(void *arg, const char *summary)
{
	struct done_rec *d = arg;

	ck_assert_int_eq(d->in_collect, 0);
	d->calls++;
	snprintf(d->summary, sizeof(d->summary), "%s", summary);
}

/* Collect the stack of a forked native child with the given tools. */
static void
collect_native(const char *tools, const char *want, const char *want_text)
{
	struct event_base *base = event_base_new();
	struct stacks_target t;
	struct done_rec rec;
	struct stacks *s;
	char dir[] = "/tmp/cgrun-stacks.XXXXXX", path[128], text[8192];
	FILE *fp;
	size_t n;
	pid_t pid;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	if ((pid = fork()) == 0)
		stacks_test_hang_here();
	usleep(100000);
	setenv("CGRUN_STACK_TOOLS", tools, 1);
	memset(&t, 0, sizeof(t));
	memset(&rec, 0, sizeof(rec));
	t.pid = pid;
	t.rank = 3;
	rec.in_collect = 1;
	s = stacks_collect(base, &t, 1, dir, 20000, done_cb, &rec);
	rec.in_collect = 0;
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(rec.calls, 0);
	while (rec.calls == 0)
		event_base_loop(base, EVLOOP_ONCE);
	ck_assert_int_eq(rec.calls, 1);
	ck_assert_msg(strstr(rec.summary, want) != NULL, "%s", rec.summary);
	ck_assert_str_eq(stacks_summary(s), rec.summary);
	snprintf(path, sizeof(path), "%s/stacks.txt", dir);
	ck_assert_str_eq(stacks_path(s), path);
	ck_assert_ptr_nonnull(fp = fopen(path, "r"));
	n = fread(text, 1, sizeof(text) - 1, fp);
	text[n] = '\0';
	fclose(fp);
	ck_assert_msg(strstr(text, "=== rank 3 (local_rank 0") != NULL, "%s",
	    text);
	ck_assert_msg(strstr(text, want_text) != NULL, "%s", text);
	stacks_free(s);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	unlink(path);
	rmdir(dir);
	unsetenv("CGRUN_STACK_TOOLS");
	event_base_free(base);
}

START_TEST(collect_proc)
{
	collect_native("none", "rank 3 in ", "syscall:pause");
}
END_TEST

START_TEST(collect_gdb)
{
	if (access("/usr/bin/gdb", X_OK) != 0)
		SKIP_CASE("/usr/bin/gdb not installed (apt-get install gdb)");
	collect_native("gdb", "stacks_test_hang_here", "gdb ===");
}
END_TEST

/* A gdb that cannot attach (prints no stack): /proc is read instead. */
START_TEST(collect_gdb_fails)
{
	char dir[] = "/tmp/cgrun-fakegdb.XXXXXX", path[128], *old;
	FILE *fp;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/gdb", dir);
	ck_assert_ptr_nonnull(fp = fopen(path, "w"));
	fprintf(fp, "#!/bin/sh\necho 'ptrace: Operation not permitted.'\n");
	fclose(fp);
	chmod(path, 0755);
	old = strdup(getenv("PATH"));
	setenv("PATH", dir, 1);
	collect_native("gdb", "rank 3 in ", "Operation not permitted");
	collect_native("gdb", "rank 3 in ", "), /proc ===");
	setenv("PATH", old, 1);
	free(old);
	unlink(path);
	rmdir(dir);
}
END_TEST

/* Nothing to collect: done() still comes once, later. */
START_TEST(collect_none)
{
	struct event_base *base = event_base_new();
	struct done_rec rec;
	struct stacks *s;

	memset(&rec, 0, sizeof(rec));
	rec.in_collect = 1;
	s = stacks_collect(base, NULL, 0, NULL, 100, done_cb, &rec);
	rec.in_collect = 0;
	ck_assert_ptr_nonnull(s);
	event_base_loop(base, EVLOOP_ONCE);
	ck_assert_int_eq(rec.calls, 1);
	ck_assert_int_eq(stacks_culprit(s), -1);
	ck_assert_str_eq(stacks_path(s), "");
	stacks_free(s);
	stacks_free(NULL);
	event_base_free(base);
}
END_TEST

Suite *
test_suite(void)
{
	Suite *s = suite_create("stacks");
	TCase *tc = tcase_create("stacks");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, faulthandler_output);
	tcase_add_test(tc, faulthandler_noise);
	tcase_add_test(tc, gdb_output);
	tcase_add_test(tc, eustack_pyspy_dump);
	tcase_add_test(tc, limits);
	tcase_add_test(tc, group_odd_one_out);
	tcase_add_test(tc, group_runs_missing_cut);
	tcase_add_test(tc, group_user_frame);
	tcase_add_test(tc, group_outside_collective);
	tcase_add_test(tc, collect_proc);
	tcase_add_test(tc, collect_gdb);
	tcase_add_test(tc, collect_gdb_fails);
	tcase_add_test(tc, collect_none);
	suite_add_tcase(s, tc);
	return s;
}

/*
 * test_watchdog.c: the hang watchdog's pieces: the duration parser of
 * --hang-timeout and friends (options.h), torch's FileTimer request parser
 * (filetimer.h: valid, release, every missing or mistyped field, version,
 * trailing bytes, nesting, NUL bytes, overlong lines), and the watchdog
 * itself on a real event loop (watchdog.h): a silent rank is hung after
 * its first-progress timeout, a beating rank never is, a FileTimer
 * request that expires names the requester and its signal, a released one
 * does nothing, a request from a foreign pid is ignored, and a regular
 * file where the FIFO should be is refused and left alone.
 */
#include <sys/socket.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <event2/event.h>

#include "filetimer.h"
#include "helper_main.h"
#include "options.h"
#include "watchdog.h"

START_TEST(duration_ok)
{
	static const struct { const char *s; double v; } ok[] = {
		{ "0", 0 }, { "10", 10 }, { "90s", 90 }, { "30m", 1800 },
		{ "1h", 3600 }, { "1.5", 1.5 }, { "0.5m", 30 }, { "2h", 7200 },
	};
	size_t i;
	double v;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		v = -1;
		ck_assert_msg(options_parse_duration(ok[i].s, &v) == 0, "%s",
		    ok[i].s);
		ck_assert_msg(fabs(v - ok[i].v) < 1e-9, "%s: %f", ok[i].s, v);
	}
}
END_TEST

START_TEST(duration_bad)
{
	static const char *bad[] = { "", "-1", "+5", " 5", "5 ", "s", "m",
	    "10x", "10ms", "10sec", "1h30m", "nan", "inf", "1e300",
	    "99999999999", "10ss", "abc", "0x", "--1" };
	size_t i;
	double v = 42;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(options_parse_duration(bad[i], &v) == -1,
		    "accepted \"%s\"", bad[i]);
	ck_assert(v == 42);	/* untouched on error */
}
END_TEST

/* Parse a C string as one FileTimer line. */
static enum filetimer_parse_result
ftp(const char *s, struct filetimer_req *r, char *err)
{
	return filetimer_parse(s, strlen(s), r, err, 128);
}

START_TEST(ft_parse_valid)
{
	struct filetimer_req r;
	char err[128];

	ck_assert_int_eq(ftp("{\"version\": 1, \"pid\": 1234, \"scope_id\": "
	    "\"train.py#12\", \"expiration_time\": 1700000010.5, \"signal\": 9}",
	    &r, err), FILETIMER_OK);
	ck_assert_int_eq(r.pid, 1234);
	ck_assert_str_eq(r.scope, "train.py#12");
	ck_assert(r.expiration == 1700000010.5);
	ck_assert_int_eq(r.signal, 9);
	/* release: integer -1 and signal 0; no version; a "\r" at the end */
	ck_assert_int_eq(ftp("{\"pid\": 7, \"scope_id\": \"s\", "
	    "\"expiration_time\": -1, \"signal\": 0}\r", &r, err), FILETIMER_OK);
	ck_assert(r.expiration < 0);
	ck_assert_int_eq(r.signal, 0);
}
END_TEST

START_TEST(ft_parse_bad)
{
	static const char *bad[] = {
		"", "{", "[]", "1", "\"x\"", "null",
		"{\"pid\": 1, \"scope_id\": \"s\", \"expiration_time\": 1}",
		"{\"pid\": 1, \"scope_id\": \"s\", \"signal\": 9}",
		"{\"pid\": 1, \"expiration_time\": 1, \"signal\": 9}",
		"{\"scope_id\": \"s\", \"expiration_time\": 1, \"signal\": 9}",
		"{\"pid\": 0, \"scope_id\": \"s\", \"expiration_time\": 1, \"signal\": 9}",
		"{\"pid\": -5, \"scope_id\": \"s\", \"expiration_time\": 1, \"signal\": 9}",
		"{\"pid\": 99999999999, \"scope_id\": \"s\", \"expiration_time\": 1, \"signal\": 9}",
		"{\"pid\": \"1\", \"scope_id\": \"s\", \"expiration_time\": 1, \"signal\": 9}",
		"{\"pid\": 1.5, \"scope_id\": \"s\", \"expiration_time\": 1, \"signal\": 9}",
		"{\"pid\": 1, \"scope_id\": 3, \"expiration_time\": 1, \"signal\": 9}",
		"{\"pid\": 1, \"scope_id\": \"s\", \"expiration_time\": \"1\", \"signal\": 9}",
		"{\"pid\": 1, \"scope_id\": \"s\", \"expiration_time\": NaN, \"signal\": 9}",
		"{\"pid\": 1, \"scope_id\": \"s\", \"expiration_time\": 1, \"signal\": \"KILL\"}",
		"{\"pid\": 1, \"scope_id\": \"s\", \"expiration_time\": 1, \"signal\": 9.5}",
		"{\"version\": 2, \"pid\": 1, \"scope_id\": \"s\", \"expiration_time\": 1, \"signal\": 9}",
		"{\"pid\": 1, \"scope_id\": \"s\", \"expiration_time\": 1, \"signal\": 9} x",
		"{\"pid\": 1, \"scope_id\": \"s\", \"expiration_time\": 1, \"signal\": 9}{}",
		"{\"a\": [[[[[[1]]]]]], \"pid\": 1, \"scope_id\": \"s\", \"expiration_time\": 1, \"signal\": 9}",
	};
	struct filetimer_req r;
	char err[128];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		ck_assert_msg(ftp(bad[i], &r, err) == FILETIMER_ERROR,
		    "accepted %s", bad[i]);
		ck_assert_msg(err[0] != '\0', "no reason for %s", bad[i]);
	}
}
END_TEST

START_TEST(ft_parse_bytes)
{
	const char ok[] = "{\"pid\": 1, \"scope_id\": \"s\", "
	    "\"expiration_time\": 1, \"signal\": 9}";
	char line[FILETIMER_LINE_MAX + 2], err[128];
	struct filetimer_req r;
	size_t n = sizeof(ok) - 1;

	/* a NUL inside the line: not one JSON value */
	memcpy(line, ok, n);
	line[n] = '\0';
	line[n + 1] = 'x';
	ck_assert_int_eq(filetimer_parse(line, n + 2, &r, err, sizeof(err)),
	    FILETIMER_ERROR);
	/* FILETIMER_LINE_MAX bytes (spaces before the object) is fine ... */
	memset(line, ' ', sizeof(line));
	memcpy(line + FILETIMER_LINE_MAX - n, ok, n);
	ck_assert_int_eq(filetimer_parse(line, FILETIMER_LINE_MAX, &r, err,
	    sizeof(err)), FILETIMER_OK);
	/* ... one more is refused before any JSON is read */
	memset(line, ' ', sizeof(line));
	memcpy(line + FILETIMER_LINE_MAX + 1 - n, ok, n);
	ck_assert_int_eq(filetimer_parse(line, FILETIMER_LINE_MAX + 1, &r, err,
	    sizeof(err)), FILETIMER_ERROR);
	ck_assert_ptr_nonnull(strstr(err, "longer"));
	/* a long scope is cut, not refused */
	{
		char big[1100];

		memset(big, 'a', 1000);
		snprintf(big + 1000, sizeof(big) - 1000, "\", \"pid\": 2, "
		    "\"expiration_time\": 1, \"signal\": 9}");
		snprintf(line, sizeof(line), "{\"scope_id\": \"%s", big);
		ck_assert_int_eq(filetimer_parse(line, strlen(line), &r, err,
		    sizeof(err)), FILETIMER_OK);
		ck_assert_uint_eq(strlen(r.scope), FILETIMER_SCOPE_MAX);
	}
}
END_TEST

/* What the watchdog told the test. */
static struct watchdog_hang got;
static int ngot;
static struct event_base *base;

/* on_hung: record, end the loop. */
static void
hung_cb(void *arg, const struct watchdog_hang *h)
{
	got = *h;
	ngot++;
	event_base_loopbreak(base);
}

/* A beat on fd every 50 ms (the test's "worker"). */
static void
beat_cb(evutil_socket_t fd, short what, void *arg)
{
	ck_assert_int_eq(send(*(int *)arg, "step\n", 5, MSG_DONTWAIT), 5);
}

/* Stop the loop (the deadline of a test). */
static void
stop_cb(evutil_socket_t fd, short what, void *arg)
{
	event_base_loopbreak(base);
}

/* A watchdog on a fresh loop with these timeouts. */
static struct watchdog *
wd_make(double hang, double first, int filetimer, const char *path)
{
	struct watchdog_conf c;
	struct watchdog *wd;
	char err[256];

	ck_assert_ptr_nonnull(base = event_base_new());
	memset(&c, 0, sizeof(c));
	c.base = base;
	c.hang_timeout = hang;
	c.first_timeout = first;
	c.filetimer = filetimer;
	c.timer_path = path;
	c.dir = "/tmp";
	c.on_hung = hung_cb;
	ngot = 0;
	wd = watchdog_new(&c, err, sizeof(err));
	ck_assert_msg(wd != NULL, "%s", err);
	return wd;
}

/* Run the loop until on_hung or secs. */
static void
wd_run(double secs)
{
	struct event *stop = evtimer_new(base, stop_cb, NULL);
	struct timeval tv = { (time_t)secs, (suseconds_t)((secs -
	    (double)(time_t)secs) * 1e6) };

	evtimer_add(stop, &tv);
	event_base_dispatch(base);
	event_free(stop);
}

START_TEST(wd_silent_vs_beating)
{
	struct watchdog *wd = wd_make(0.3, 0.6, 0, NULL);
	struct timeval every = { 0, 50000 };
	struct event *beat;
	char err[256];
	int fd1;

	ck_assert_int_eq(watchdog_begin(wd, 2, err, sizeof(err)), 0);
	ck_assert_int_ge(watchdog_child_fd(wd, 0), 3);
	ck_assert_int_ge(fd1 = dup(watchdog_child_fd(wd, 1)), 3);
	watchdog_started(wd, 0, 100001);	/* never beats */
	watchdog_started(wd, 1, 100002);	/* beats every 50 ms */
	ck_assert_int_eq(watchdog_child_fd(wd, 1), -1);	/* closed here */
	beat = event_new(base, -1, EV_PERSIST, beat_cb, &fd1);
	event_add(beat, &every);
	wd_run(5);
	ck_assert_int_eq(ngot, 1);
	ck_assert_int_eq(got.lr, 0);
	ck_assert(got.timeout == 0.6);		/* its first timeout */
	ck_assert(got.idle >= 0.6 && got.idle < 2);
	ck_assert_str_eq(got.source, "heartbeat");
	ck_assert_ptr_nonnull(strstr(got.why, "since it started"));
	/* once per attempt: nothing more while the beats go on */
	wd_run(0.8);
	ck_assert_int_eq(ngot, 1);
	/* a new attempt: rank 1 beats, then stops; its section is known */
	watchdog_end(wd);
	ck_assert_int_eq(watchdog_begin(wd, 2, err, sizeof(err)), 0);
	close(fd1);
	ck_assert_int_ge(fd1 = dup(watchdog_child_fd(wd, 1)), 3);
	watchdog_started(wd, 0, 100003);
	watchdog_started(wd, 1, 100004);
	watchdog_reaped(wd, 100003);		/* rank 0 exited: not watched */
	wd_run(0.4);
	ck_assert_int_eq(ngot, 1);		/* beating: never hung */
	event_del(beat);
	wd_run(3);
	ck_assert_int_eq(ngot, 2);
	ck_assert_int_eq(got.lr, 1);
	ck_assert(got.timeout == 0.3);
	ck_assert_str_eq(got.section, "step");
	ck_assert_ptr_nonnull(strstr(got.why, "no progress for"));
	event_free(beat);
	close(fd1);
	watchdog_free(wd);
	event_base_free(base);
}
END_TEST

/* Write one line to the FIFO as torch's client does. */
static void
ft_send(const char *path, const char *line)
{
	int fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, line, strlen(line)), (ssize_t)strlen(line));
	close(fd);
}

START_TEST(wd_filetimer)
{
	char dir[] = "/tmp/cgrun-wdft.XXXXXX", path[128], line[512], err[256];
	struct watchdog *wd;
	struct stat st;
	double now = (double)time(NULL);

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/fifo", dir);
	wd = wd_make(0, 0, 1, path);
	ck_assert_str_eq(watchdog_timer_file(wd), path);
	ck_assert_int_eq(watchdog_begin(wd, 1, err, sizeof(err)), 0);
	ck_assert_int_eq(watchdog_child_fd(wd, 0), -1);	/* no hang timeout */
	watchdog_started(wd, 0, getpid());
	/* released before it expires: nothing; a foreign pid: ignored;
	 * garbage and an overlong line: ignored; then one that expires */
	snprintf(line, sizeof(line), "{\"version\": 1, \"pid\": %d, "
	    "\"scope_id\": \"a\", \"expiration_time\": %.1f, \"signal\": 9}\n"
	    "{\"version\": 1, \"pid\": %d, \"scope_id\": \"a\", "
	    "\"expiration_time\": -1, \"signal\": 0}\n"
	    "{\"pid\": 1, \"scope_id\": \"x\", \"expiration_time\": 1, "
	    "\"signal\": 9}\nnot json\n", (int)getpid(), now + 0.5,
	    (int)getpid());
	ft_send(path, line);
	{
		char big[FILETIMER_LINE_MAX + 100];

		memset(big, 'x', sizeof(big) - 1);
		big[sizeof(big) - 2] = '\n';
		big[sizeof(big) - 1] = '\0';
		ft_send(path, big);
	}
	wd_run(1.5);
	ck_assert_int_eq(ngot, 0);
	snprintf(line, sizeof(line), "{\"version\": 1, \"pid\": %d, "
	    "\"scope_id\": \"train.py#3\", \"expiration_time\": %.3f, "
	    "\"signal\": 10}\n", (int)getpid(), (double)time(NULL) + 0.3);
	ft_send(path, line);
	wd_run(5);
	ck_assert_int_eq(ngot, 1);
	ck_assert_int_eq(got.lr, 0);
	ck_assert_int_eq(got.kill_pid, getpid());
	ck_assert_int_eq(got.kill_sig, 10);
	ck_assert_str_eq(got.source, "filetimer");
	ck_assert_ptr_nonnull(strstr(got.why, "train.py#3"));
	watchdog_free(wd);
	event_base_free(base);
	ck_assert_int_eq(stat(path, &st), -1);	/* the FIFO is removed */
	/* a regular file at the path: refused, not replaced */
	ck_assert_int_ge(close(open(path, O_WRONLY | O_CREAT, 0600)), 0);
	{
		struct watchdog_conf c;

		memset(&c, 0, sizeof(c));
		ck_assert_ptr_nonnull(c.base = event_base_new());
		c.filetimer = 1;
		c.timer_path = path;
		c.on_hung = hung_cb;
		ck_assert_ptr_null(watchdog_new(&c, err, sizeof(err)));
		ck_assert_ptr_nonnull(strstr(err, "not a FIFO"));
		ck_assert_int_eq(stat(path, &st), 0);
		ck_assert(S_ISREG(st.st_mode));
		event_base_free(c.base);
	}
	unlink(path);
	rmdir(dir);
}
END_TEST

Suite *
test_suite(void)
{
	Suite *s = suite_create("watchdog");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, duration_ok);
	tcase_add_test(tc, duration_bad);
	tcase_add_test(tc, ft_parse_valid);
	tcase_add_test(tc, ft_parse_bad);
	tcase_add_test(tc, ft_parse_bytes);
	tcase_add_test(tc, wd_silent_vs_beating);
	tcase_add_test(tc, wd_filetimer);
	suite_add_tcase(s, tc);
	return s;
}

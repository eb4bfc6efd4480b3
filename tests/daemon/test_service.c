/*
 * test_service.c: systemd integration of cgrun-rdzvd (service.c): journal
 * detection and priorities, sd_notify messages, LISTEN_FDS adoption.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <netinet/in.h>

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include <event2/event.h>

#include "log.h"
#include "service.h"
#include "store.h"
#include "helper_main.h"

/*
 * LISTEN_FDS sockets start at fd 3, where Check keeps its own files: those
 * cases run in a child of the test that reports through a pipe of its own,
 * never through Check.  CHILD_CHECK fails the child with a message.
 */
static int child_fd = -1;
#define CHILD_CHECK(cond, ...) do {					\
	if (!(cond)) {							\
		dprintf(child_fd, "line %d: ", __LINE__);		\
		dprintf(child_fd, __VA_ARGS__);				\
		_exit(1);						\
	}								\
} while (0)

/* Run fn in a child; fail the test with the child's message. */
static void
run_child(void (*fn)(void))
{
	char msg[512] = "";
	int p[2], status;
	ssize_t n;
	pid_t pid;

	ck_assert_int_eq(pipe(p), 0);
	child_fd = fcntl(p[1], F_DUPFD_CLOEXEC, 20);
	ck_assert_int_ge(child_fd, 20);
	close(p[1]);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		fn();
		_exit(0);
	}
	close(child_fd);
	n = read(p[0], msg, sizeof msg - 1);
	msg[n > 0 ? n : 0] = '\0';
	close(p[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	    "child failed: %s", msg);
}

/* A TCP (or UDP) socket on 127.0.0.1 moved to fd `at`; its port. */
static int
listen_at(int at, int type, int *port)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof sin;
	int fd = socket(AF_INET, type, 0);

	CHILD_CHECK(fd >= 0, "socket: %s", strerror(errno));
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CHILD_CHECK(bind(fd, (struct sockaddr *)&sin, sizeof sin) == 0, "bind");
	if (type == SOCK_STREAM)
		CHILD_CHECK(listen(fd, 16) == 0, "listen");
	CHILD_CHECK(getsockname(fd, (struct sockaddr *)&sin, &len) == 0, "name");
	*port = ntohs(sin.sin_port);
	if (fd != at) {
		CHILD_CHECK(dup2(fd, at) == at, "dup2");
		close(fd);
	}
	return at;
}

/* Set LISTEN_PID/LISTEN_FDS(/LISTEN_FDNAMES) as systemd would for us. */
static void
set_listen_env(int n, const char *names)
{
	char buf[32];

	snprintf(buf, sizeof buf, "%d", (int)getpid());
	setenv("LISTEN_PID", buf, 1);
	snprintf(buf, sizeof buf, "%d", n);
	setenv("LISTEN_FDS", buf, 1);
	if (names != NULL)
		setenv("LISTEN_FDNAMES", names, 1);
	else
		unsetenv("LISTEN_FDNAMES");
}

START_TEST(test_priority)
{
	ck_assert_int_eq(service_priority(LOG_LVL_WARN), LOG_WARNING);
	ck_assert_int_eq(service_priority(LOG_LVL_INFO), LOG_INFO);
	ck_assert_int_eq(service_priority(LOG_LVL_DEBUG), LOG_DEBUG);
}
END_TEST

START_TEST(test_journal_detect)
{
	char path[] = "/tmp/cgrun-svc-XXXXXX", env[64];
	struct stat st;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	unlink(path);
	ck_assert_int_eq(dup2(fd, STDERR_FILENO), STDERR_FILENO);
	ck_assert_int_eq(fstat(fd, &st), 0);
	unsetenv("JOURNAL_STREAM");
	ck_assert_int_eq(service_stderr_is_journal(), 0);
	snprintf(env, sizeof env, "%llu:%llu", (unsigned long long)st.st_dev,
	    (unsigned long long)st.st_ino + 1);
	setenv("JOURNAL_STREAM", env, 1);	/* someone else's stream */
	ck_assert_int_eq(service_stderr_is_journal(), 0);
	ck_assert_int_eq(service_log_to_journal(), 0);
	setenv("JOURNAL_STREAM", "garbage", 1);
	ck_assert_int_eq(service_stderr_is_journal(), 0);
	snprintf(env, sizeof env, "%llu:%llu", (unsigned long long)st.st_dev,
	    (unsigned long long)st.st_ino);
	setenv("JOURNAL_STREAM", env, 1);
	ck_assert_int_eq(service_stderr_is_journal(), 1);
}
END_TEST

/* With stderr as "the journal" but no journald socket, lines still reach
 * stderr, with the "<N>" priority prefix the journal understands. */
START_TEST(test_journal_fallback)
{
	char path[] = "/tmp/cgrun-svc-XXXXXX", env[64], buf[256];
	struct stat st;
	ssize_t n;
	int fd;

	if (access("/run/systemd/journal/socket", F_OK) == 0)
		SKIP_CASE("a journald runs here (/run/systemd/journal/socket): "
		    "it would take the line");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	unlink(path);
	ck_assert_int_eq(dup2(fd, STDERR_FILENO), STDERR_FILENO);
	ck_assert_int_eq(fstat(fd, &st), 0);
	snprintf(env, sizeof env, "%llu:%llu", (unsigned long long)st.st_dev,
	    (unsigned long long)st.st_ino);
	setenv("JOURNAL_STREAM", env, 1);
	log_init("test", LOG_LVL_INFO);
	ck_assert_int_eq(service_log_to_journal(), 1);
	log_warnx("disk on fire id=%d", 7);
	log_info("all is well");
	log_debug("not shown");
	log_set_sink(NULL, NULL);
	n = pread(fd, buf, sizeof buf - 1, 0);
	ck_assert_int_gt(n, 0);
	buf[n] = '\0';
	ck_assert_str_eq(buf, "<4>disk on fire id=7\n<6>all is well\n");
}
END_TEST

START_TEST(test_notify)
{
	struct sockaddr_un sun;
	char buf[512];
	ssize_t n;
	int s;

	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof sun.sun_path, "/tmp/cgrun-notify-%d",
	    (int)getpid());
	unlink(sun.sun_path);
	s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(s, 0);
	ck_assert_int_eq(bind(s, (struct sockaddr *)&sun, sizeof sun), 0);
	setenv("NOTIFY_SOCKET", sun.sun_path, 1);
	service_ready("serving port=%d\nINJECTED=1", 29400);
	n = recv(s, buf, sizeof buf - 1, MSG_DONTWAIT);
	ck_assert_int_gt(n, 0);
	buf[n] = '\0';
	/* A newline in the status cannot smuggle in another assignment. */
	ck_assert_str_eq(buf, "READY=1\nSTATUS=serving port=29400");
	service_status("%d jobs", 3);
	n = recv(s, buf, sizeof buf - 1, MSG_DONTWAIT);
	ck_assert_int_gt(n, 0);
	buf[n] = '\0';
	ck_assert_str_eq(buf, "STATUS=3 jobs");
	service_stopping();
	n = recv(s, buf, sizeof buf - 1, MSG_DONTWAIT);
	ck_assert_int_gt(n, 0);
	buf[n] = '\0';
	ck_assert_str_eq(buf, "STOPPING=1\nSTATUS=shutting down");
	unsetenv("NOTIFY_SOCKET");
	service_ready("nobody listens");	/* no socket: a no-op */
	unlink(sun.sun_path);
	close(s);
}
END_TEST

START_TEST(test_listen_fds_none)
{
	struct event_base *base = event_base_new();
	struct store *st = store_new(base, NULL);
	char err[256];
	int http_fd = 7;

	ck_assert_ptr_nonnull(st);
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_PID");
	ck_assert_int_eq(service_listen_fds(st, &http_fd, err, sizeof err), 0);
	ck_assert_int_eq(http_fd, -1);
	/* For another process: not ours to take. */
	setenv("LISTEN_PID", "1", 1);
	setenv("LISTEN_FDS", "1", 1);
	ck_assert_int_eq(service_listen_fds(st, &http_fd, err, sizeof err), 0);
	store_free(st);
	event_base_free(base);
}
END_TEST

/* Child: a store socket and an http socket passed, by name. */
static void
child_adopt(void)
{
	struct event_base *base = event_base_new();
	struct store *st = store_new(base, NULL);
	struct store_stats ss;
	struct sockaddr_in sin;
	char err[256];
	int http_fd, sport, hport, c, i, n;

	CHILD_CHECK(st != NULL, "store_new");
	listen_at(3, SOCK_STREAM, &sport);
	listen_at(4, SOCK_STREAM, &hport);
	set_listen_env(2, "store:http");
	n = service_listen_fds(st, &http_fd, err, sizeof err);
	CHILD_CHECK(n == 1, "service_listen_fds gave %d: %s", n, err);
	CHILD_CHECK(http_fd == 4, "http fd %d", http_fd);
	CHILD_CHECK(getenv("LISTEN_FDS") == NULL, "LISTEN_FDS still set");
	CHILD_CHECK(fcntl(3, F_GETFD) & FD_CLOEXEC, "fd 3 inheritable");
	/* The store serves the adopted socket: a connection is accepted. */
	c = socket(AF_INET, SOCK_STREAM, 0);
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = htons((uint16_t)sport);
	CHILD_CHECK(connect(c, (struct sockaddr *)&sin, sizeof sin) == 0,
	    "connect: %s", strerror(errno));
	for (i = 0; i < 200; i++) {	/* deadline: 2 s */
		event_base_loop(base, EVLOOP_NONBLOCK);
		store_stats(st, &ss);
		if (ss.accepted == 1)
			break;
		usleep(10000);
	}
	CHILD_CHECK(ss.accepted == 1, "adopted listener never accepted");
	close(c);
	store_free(st);
	event_base_free(base);
}

START_TEST(test_listen_fds_adopt)
{
	run_child(child_adopt);
}
END_TEST

/* Child: a datagram socket, then two sockets named http. */
static void
child_refused(void)
{
	struct event_base *base = event_base_new();
	struct store *st = store_new(base, NULL);
	char err[256];
	int http_fd, port;

	listen_at(3, SOCK_DGRAM, &port);
	set_listen_env(1, NULL);
	CHILD_CHECK(service_listen_fds(st, &http_fd, err, sizeof err) == -1,
	    "datagram socket accepted");
	CHILD_CHECK(strstr(err, "not a listening stream socket") != NULL,
	    "%s", err);
	close(3);
	listen_at(3, SOCK_STREAM, &port);
	listen_at(4, SOCK_STREAM, &port);
	set_listen_env(2, "http:http");
	CHILD_CHECK(service_listen_fds(st, &http_fd, err, sizeof err) == -1,
	    "two http sockets accepted");
	CHILD_CHECK(strstr(err, "more than one socket named http") != NULL,
	    "%s", err);
	store_free(st);
	event_base_free(base);
}

START_TEST(test_listen_fds_refused)
{
	run_child(child_refused);
}
END_TEST

START_TEST(test_watchdog)
{
	struct event_base *base = event_base_new();
	struct service *svc;
	struct sockaddr_un sun;
	struct timeval tv = { 0, 350000 };
	char buf[64];
	int s, n = 0;

	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof sun.sun_path, "/tmp/cgrun-wd-%d",
	    (int)getpid());
	unlink(sun.sun_path);
	s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ck_assert_int_eq(bind(s, (struct sockaddr *)&sun, sizeof sun), 0);
	setenv("NOTIFY_SOCKET", sun.sun_path, 1);
	setenv("WATCHDOG_USEC", "100000", 1);	/* pings every 50 ms */
	unsetenv("WATCHDOG_PID");
	svc = service_new(base);
	ck_assert_ptr_nonnull(svc);
	event_base_loopexit(base, &tv);
	event_base_dispatch(base);
	while (recv(s, buf, sizeof buf, MSG_DONTWAIT) > 0)
		n++;
	/* One at start, then one per 50 ms for 350 ms: about 8. */
	ck_assert_msg(n >= 4 && n <= 10, "%d watchdog pings", n);
	service_free(svc);
	unsetenv("WATCHDOG_USEC");
	svc = service_new(base);	/* no watchdog: nothing scheduled */
	ck_assert_ptr_nonnull(svc);
	service_free(svc);
	service_free(NULL);
	unlink(sun.sun_path);
	close(s);
	event_base_free(base);
}
END_TEST

/* The Check suite of service.c. */
Suite *
test_suite(void)
{
	Suite *s = suite_create("service");
	TCase *tc = tcase_create("systemd");

	tcase_set_timeout(tc, 10);
	tcase_add_test(tc, test_priority);
	tcase_add_test(tc, test_journal_detect);
	tcase_add_test(tc, test_journal_fallback);
	tcase_add_test(tc, test_notify);
	tcase_add_test(tc, test_listen_fds_none);
	tcase_add_test(tc, test_listen_fds_adopt);
	tcase_add_test(tc, test_listen_fds_refused);
	tcase_add_test(tc, test_watchdog);
	suite_add_tcase(s, tc);
	return s;
}

/*
 * test_observe.c: what operators see (launcher/observe/): the pure
 * parsers (--event-log's fd:N, --metrics-port's [HOST:]PORT), the label
 * escaper, the metrics page (every line in the text format, the families
 * that come and go), the event log on a pipe whose reader stalls (records
 * queued in order, bounded, the rest dropped and counted, whole lines),
 * on a pipe whose reader is gone, and on a read-only fd.
 */
#include <errno.h>
#include <fcntl.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <json-c/json.h>

#include "evlog.h"
#include "helper_main.h"
#include "metrics.h"
#include "observe.h"

START_TEST(dest_parse)
{
	int fd = -1;

	ck_assert_int_eq(evlog_dest_parse("fd:3", &fd), 1);
	ck_assert_int_eq(fd, 3);
	ck_assert_int_eq(evlog_dest_parse("fd:65535", &fd), 1);
	ck_assert_int_eq(fd, 65535);
	ck_assert_int_eq(evlog_dest_parse("events.jsonl", &fd), 0);
	ck_assert_int_eq(evlog_dest_parse("fdx", &fd), 0);
	ck_assert_int_eq(evlog_dest_parse("./fd:3", &fd), 0);
	ck_assert_int_eq(evlog_dest_parse("fd:", &fd), -1);
	ck_assert_int_eq(evlog_dest_parse("fd:x", &fd), -1);
	ck_assert_int_eq(evlog_dest_parse("fd:-1", &fd), -1);
	ck_assert_int_eq(evlog_dest_parse("fd:3x", &fd), -1);
	ck_assert_int_eq(evlog_dest_parse("fd:65536", &fd), -1);
	ck_assert_int_eq(evlog_dest_parse("fd:99999999999999999999", &fd), -1);
}
END_TEST

START_TEST(listen_parse)
{
	char host[64];
	int port = -1;

	ck_assert_int_eq(observe_listen_parse("0", host, sizeof(host),
	    &port), 0);
	ck_assert_str_eq(host, "127.0.0.1");
	ck_assert_int_eq(port, 0);
	ck_assert_int_eq(observe_listen_parse("9100", host, sizeof(host),
	    &port), 0);
	ck_assert_int_eq(port, 9100);
	ck_assert_int_eq(observe_listen_parse("10.1.2.3:65535", host,
	    sizeof(host), &port), 0);
	ck_assert_str_eq(host, "10.1.2.3");
	ck_assert_int_eq(port, 65535);
	ck_assert_int_eq(observe_listen_parse("[::1]:0", host, sizeof(host),
	    &port), 0);
	ck_assert_str_eq(host, "::1");
	ck_assert_int_eq(observe_listen_parse("", host, sizeof(host), &port),
	    -1);
	ck_assert_int_eq(observe_listen_parse("65536", host, sizeof(host),
	    &port), -1);
	ck_assert_int_eq(observe_listen_parse("123456", host, sizeof(host),
	    &port), -1);
	ck_assert_int_eq(observe_listen_parse("-1", host, sizeof(host),
	    &port), -1);
	ck_assert_int_eq(observe_listen_parse("host:", host, sizeof(host),
	    &port), -1);
	ck_assert_int_eq(observe_listen_parse(":80", host, sizeof(host),
	    &port), -1);
	ck_assert_int_eq(observe_listen_parse("::1:80", host, sizeof(host),
	    &port), -1);
	ck_assert_int_eq(observe_listen_parse("[]:80", host, sizeof(host),
	    &port), -1);
	ck_assert_int_eq(observe_listen_parse("a]:80", host, sizeof(host),
	    &port), -1);
	ck_assert_int_eq(observe_listen_parse("0123456789abcdef0123:1", host,
	    16, &port), -1);
}
END_TEST

START_TEST(label_escape)
{
	char out[64];

	ck_assert_str_eq(metrics_label("job-1.0", out, sizeof(out)), "job-1.0");
	ck_assert_str_eq(metrics_label("a\"b\\c\nd", out, sizeof(out)),
	    "a\\\"b\\\\c\\nd");
	/* invalid UTF-8 becomes U+FFFD; valid sequences stay */
	ck_assert_str_eq(metrics_label("x\xff" "\xc3\xa9", out, sizeof(out)),
	    "x\xef\xbf\xbd\xc3\xa9");
	/* cut before an escape or a sequence that does not fit whole */
	ck_assert_str_eq(metrics_label("ab\"", out, 4), "ab");
	ck_assert_str_eq(metrics_label("a\xc3\xa9", out, 3), "a");
	ck_assert_str_eq(metrics_label("abc", out, 1), "");
}
END_TEST

/* Fake idle seconds: local rank 1 is not running. */
static int
fake_idle(void *arg, int lr, double *idle)
{
	if (lr == 1)
		return -1;
	*idle = 2.5 + lr;
	return 0;
}

/* The facts of a job that failed once. */
static void
facts(struct metrics_facts *m)
{
	memset(m, 0, sizeof(*m));
	m->run_id = "run\"1";
	m->node = "node-a";
	m->backend = "c10d";
	m->start_time = 1700000000.5;
	m->state = "running";
	m->rounds = 2;
	m->attempts = 2;
	m->restart_count = 1;
	m->max_restarts = 3;
	m->workers = 3;
	m->workers_up = 2;
	m->rank_base = 6;
	m->has_failure = 1;
	m->failure_code = 137;
	m->failure_rank = 7;
	m->failure_time = 1700000001.25;
}

/* Render m into a malloc'd string. */
static char *
render(const struct metrics_facts *m)
{
	struct evbuffer *b = evbuffer_new();
	size_t n;
	char *s;

	ck_assert_ptr_nonnull(b);
	metrics_render(m, 1700000010.0, b);
	n = evbuffer_get_length(b);
	s = malloc(n + 1);
	ck_assert_ptr_nonnull(s);
	evbuffer_remove(b, s, n);
	s[n] = '\0';
	evbuffer_free(b);
	return s;
}

/* Every line is a HELP, a TYPE or a sample of the text format 0.0.4. */
static void
check_format(char *page)
{
	regex_t re;
	char *line, *save = NULL;
	int n = 0;

	ck_assert_int_eq(regcomp(&re, "^(# (HELP|TYPE) cgrun_[a-z_]+ .+|"
	    "cgrun_[a-z_]+\\{run_id=\"([^\"\\\\]|\\\\.)*\""
	    "(,[a-z_]+=\"([^\"\\\\]|\\\\.)*\")*\\} -?[0-9]+(\\.[0-9]+)?)$",
	    REG_EXTENDED | REG_NOSUB), 0);
	for (line = strtok_r(page, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save), n++)
		ck_assert_msg(regexec(&re, line, 0, NULL, 0) == 0,
		    "bad line: %s", line);
	regfree(&re);
	ck_assert_int_gt(n, 40);
}

START_TEST(metrics_page)
{
	struct metrics_facts m;
	char *s;

	facts(&m);
	s = render(&m);
	ck_assert_ptr_nonnull(strstr(s, "cgrun_restarts_left{run_id="
	    "\"run\\\"1\"} 2\n"));
	ck_assert_ptr_nonnull(strstr(s, "cgrun_last_failure_exit_code{run_id="
	    "\"run\\\"1\"} 137\n"));
	ck_assert_ptr_nonnull(strstr(s, "cgrun_state{run_id=\"run\\\"1\","
	    "state=\"running\"} 1\n"));
	ck_assert_ptr_null(strstr(s, "cgrun_exit_status"));
	ck_assert_ptr_null(strstr(s, "cgrun_rank_idle_seconds"));
	check_format(s);
	free(s);

	/* progress per running rank; the exit status once exited */
	m.idle = fake_idle;
	m.exited = 1;
	m.exit_status = 137;
	m.has_failure = 0;
	m.restart_count = 5;	/* more than the budget: none left, not -2 */
	s = render(&m);
	ck_assert_ptr_nonnull(strstr(s, "cgrun_rank_idle_seconds{run_id="
	    "\"run\\\"1\",rank=\"6\",local_rank=\"0\"} 2.500\n"));
	ck_assert_ptr_nonnull(strstr(s, "cgrun_rank_idle_seconds{run_id="
	    "\"run\\\"1\",rank=\"8\",local_rank=\"2\"} 4.500\n"));
	ck_assert_ptr_null(strstr(s, "local_rank=\"1\""));
	ck_assert_ptr_nonnull(strstr(s, "cgrun_rank_last_progress_timestamp_"
	    "seconds{run_id=\"run\\\"1\",rank=\"6\",local_rank=\"0\"} "
	    "1700000007.500\n"));
	ck_assert_ptr_nonnull(strstr(s, "cgrun_exit_status{run_id=\"run\\\"1\"}"
	    " 137\n"));
	ck_assert_ptr_nonnull(strstr(s, "cgrun_restarts_left{run_id="
	    "\"run\\\"1\"} 0\n"));
	ck_assert_ptr_null(strstr(s, "cgrun_last_failure"));
	check_format(s);
	free(s);
}
END_TEST

/* Emit one record of kind with a member n. */
static void
emit(struct evlog *l, const char *kind, int n)
{
	struct json_object *r = evlog_record(l, kind);

	ck_assert_ptr_nonnull(r);
	json_object_object_add(r, "n", json_object_new_int(n));
	evlog_emit(l, r);
}

/* Read what is in fd now (non-blocking) into buf at *len. */
static void
drain_pipe(int fd, char *buf, size_t cap, size_t *len)
{
	ssize_t n;

	while (*len < cap && (n = read(fd, buf + *len, cap - *len)) > 0)
		*len += (size_t)n;
}

/* Check lines of buf: whole JSON records, seq strictly increasing. */
static int
check_lines(char *buf, unsigned long long *last_seq)
{
	struct json_object *o, *seq;
	char *line, *save = NULL;
	int n = 0;

	*last_seq = 0;
	for (line = strtok_r(buf, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save), n++) {
		o = json_tokener_parse(line);
		ck_assert_msg(o != NULL, "not JSON: %.80s", line);
		ck_assert(json_object_object_get_ex(o, "seq", &seq));
		ck_assert_uint_gt((unsigned long long)json_object_get_uint64(seq),
		    *last_seq);
		*last_seq = json_object_get_uint64(seq);
		json_object_put(o);
	}
	return n;
}

/*
 * A reader that stalls: the pipe fills, records queue up to
 * EVLOG_QUEUE_MAX, later ones are dropped and counted; once the reader
 * reads, the loop writes the queue out: whole lines, in order.
 */
START_TEST(stalled_reader)
{
	static char buf[8 * 1024 * 1024];
	struct event_base *base = event_base_new();
	unsigned long long last, dropped;
	char err[256], pad[2048], dest[32];
	struct evlog *l;
	struct json_object *r;
	size_t len = 0;
	int p[2], i, lines, emitted = 0;

	ck_assert_ptr_nonnull(base);
	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_ne(fcntl(p[0], F_SETFL, O_NONBLOCK), -1);
	snprintf(dest, sizeof(dest), "fd:%d", p[1]);
	l = evlog_open(base, dest, "r", "n", err, sizeof(err));
	ck_assert_msg(l != NULL, "%s", err);
	memset(pad, 'x', sizeof(pad) - 1);
	pad[sizeof(pad) - 1] = '\0';
	/* 2 KiB a record, 4 MiB in all: more than the queue (1 MiB) and
	 * the pipe (64 KiB by default, at most 1 MiB) hold */
	for (i = 0; i < 2000; i++, emitted++) {
		ck_assert_ptr_nonnull(r = evlog_record(l, "stop"));
		json_object_object_add(r, "pad", json_object_new_string(pad));
		evlog_emit(l, r);
	}
	ck_assert_uint_ge(evlog_dropped(l), 2000 - (EVLOG_QUEUE_MAX +
	    1024 * 1024) / 2048);
	/* the reader takes everything while the loop writes the queue */
	for (i = 0; i < 2000 && len < sizeof(buf); i++) {
		drain_pipe(p[0], buf, sizeof(buf) - 1, &len);
		event_base_loop(base, EVLOOP_NONBLOCK);
	}
	emit(l, "outcome", 1);
	emitted++;
	dropped = evlog_dropped(l);
	evlog_close(l);
	close(p[1]);
	drain_pipe(p[0], buf, sizeof(buf) - 1, &len);
	buf[len] = '\0';
	lines = check_lines(buf, &last);
	ck_assert_int_eq(lines, emitted - (int)dropped);
	ck_assert_uint_eq(last, (unsigned long long)emitted);
	close(p[0]);
	event_base_free(base);
}
END_TEST

/* The reader went away: EPIPE, said once, everything later dropped. */
START_TEST(reader_gone)
{
	struct event_base *base = event_base_new();
	char err[256], dest[32];
	struct evlog *l;
	int p[2];

	signal(SIGPIPE, SIG_IGN);
	ck_assert_int_eq(pipe(p), 0);
	snprintf(dest, sizeof(dest), "fd:%d", p[1]);
	ck_assert_ptr_nonnull(l = evlog_open(base, dest, "r", "n", err,
	    sizeof(err)));
	close(p[0]);
	emit(l, "round", 1);
	emit(l, "round", 2);
	ck_assert_uint_eq(evlog_dropped(l), 2);
	evlog_close(l);
	close(p[1]);
	event_base_free(base);
}
END_TEST

/* fd:N must be open, and for writing; a file must be creatable. */
START_TEST(open_errors)
{
	struct event_base *base = event_base_new();
	char err[256], dest[32];
	int fd = open("/dev/null", O_RDONLY);

	ck_assert_int_ge(fd, 0);
	snprintf(dest, sizeof(dest), "fd:%d", fd);
	ck_assert_ptr_null(evlog_open(base, dest, "r", "n", err, sizeof(err)));
	ck_assert_msg(strstr(err, "not open for writing") != NULL, "%s", err);
	close(fd);
	ck_assert_ptr_null(evlog_open(base, dest, "r", "n", err, sizeof(err)));
	ck_assert_msg(strstr(err, "is not open") != NULL, "%s", err);
	ck_assert_ptr_null(evlog_open(base, "/nonexistent/dir/ev.jsonl", "r",
	    "n", err, sizeof(err)));
	ck_assert_msg(strstr(err, "/nonexistent/dir/ev.jsonl: No such file")
	    != NULL, "%s", err);
	ck_assert_ptr_null(evlog_open(base, "fd:x", "r", "n", err,
	    sizeof(err)));
	ck_assert_msg(strstr(err, "expected fd:N") != NULL, "%s", err);
	event_base_free(base);
}
END_TEST

/* A record's common members, and peer bytes made valid UTF-8. */
START_TEST(record_members)
{
	struct event_base *base = event_base_new();
	char path[] = "/tmp/cgrun-evlog.XXXXXX", err[256], line[1024];
	struct json_object *r, *o, *v;
	struct evlog *l;
	FILE *fp;
	int fd;

	ck_assert_int_ge(fd = mkstemp(path), 0);
	close(fd);
	ck_assert_ptr_nonnull(l = evlog_open(base, path, "run\xff", "host", err,
	    sizeof(err)));
	evlog_set_attempt(l, 3);
	ck_assert_ptr_nonnull(r = evlog_record(l, "hang"));
	json_object_object_add(r, "section", evlog_string("step\xc0"));
	evlog_emit(l, r);
	evlog_close(l);
	ck_assert_ptr_nonnull(fp = fopen(path, "r"));
	ck_assert_ptr_nonnull(fgets(line, sizeof(line), fp));
	fclose(fp);
	unlink(path);
	ck_assert_ptr_nonnull(o = json_tokener_parse(line));
	ck_assert(json_object_object_get_ex(o, "schema", &v));
	ck_assert_int_eq(json_object_get_int(v), EVLOG_SCHEMA);
	ck_assert(json_object_object_get_ex(o, "attempt", &v));
	ck_assert_int_eq(json_object_get_int(v), 3);
	ck_assert(json_object_object_get_ex(o, "run_id", &v));
	ck_assert_str_eq(json_object_get_string(v), "run\xef\xbf\xbd");
	ck_assert(json_object_object_get_ex(o, "section", &v));
	ck_assert_str_eq(json_object_get_string(v), "step\xef\xbf\xbd");
	ck_assert(json_object_object_get_ex(o, "time", &v));
	ck_assert_int_eq((int)strlen(json_object_get_string(v)), 27);
	json_object_put(o);
	event_base_free(base);
}
END_TEST

/* The suite. */
Suite *
test_suite(void)
{
	Suite *s = suite_create("observe");
	TCase *tc = tcase_create("observe");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, dest_parse);
	tcase_add_test(tc, listen_parse);
	tcase_add_test(tc, label_escape);
	tcase_add_test(tc, metrics_page);
	tcase_add_test(tc, stalled_reader);
	tcase_add_test(tc, reader_gone);
	tcase_add_test(tc, open_errors);
	tcase_add_test(tc, record_members);
	suite_add_tcase(s, tc);
	return s;
}

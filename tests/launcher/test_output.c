/*
 * test_output.c: worker output streams (output.c) on a real event loop:
 * bytes fed one at a time still come out as whole prefixed lines; "\r\n"
 * split across writes; lone "\r"; lines over OUTPUT_LINE_MAX; the last
 * partial line at EOF; the raw tee file; duplicate filters (",," is a
 * comma); nothing written for a stream not shown; an eager stream's
 * partial lines (prompts) and how other streams end them.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "output.h"
#include "helper_main.h"

static struct event_base *base;
static int src[2];		/* worker side writes src[1] */
static int con[2];		/* console: we read con[0] */
static int eofs;

/* on_eof callback: count. */
static void
on_eof(void *arg)
{
	eofs++;
}

static void
setup(void)
{
	base = event_base_new();
	ck_assert_ptr_nonnull(base);
	ck_assert_int_eq(pipe2(src, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(con, O_CLOEXEC | O_NONBLOCK), 0);
	fcntl(con[0], F_SETPIPE_SZ, 1 << 20);
	eofs = 0;
}

static void
teardown(void)
{
	if (src[1] >= 0)
		close(src[1]);
	close(con[0]);
	close(con[1]);
	event_base_free(base);
}

/* A stream on src[0] writing to the console pipe with prefix "[p]:". */
static struct output *
stream(int file_fd, int filter_fd, const char *filters)
{
	struct output_conf c;
	struct output *o;

	memset(&c, 0, sizeof(c));
	c.console_fd = con[1];
	c.prefix = "[p]:";
	c.file_fd = file_fd;
	c.filter_fd = filter_fd;
	c.filters = filters;
	c.on_eof = on_eof;
	o = output_new(base, src[0], &c);
	ck_assert_ptr_nonnull(o);
	return o;
}

/* Write s to the worker side, then let the loop read what is there. */
static void
feed(const char *s, size_t n)
{
	ck_assert_int_eq(write(src[1], s, n), (ssize_t)n);
	event_base_loop(base, EVLOOP_NONBLOCK);
	event_base_loop(base, EVLOOP_NONBLOCK);
}

/* Close the worker side and run until EOF is seen. */
static void
finish(void)
{
	close(src[1]);
	src[1] = -1;
	while (eofs == 0)
		event_base_loop(base, EVLOOP_ONCE);
}

/* Everything the console got so far (static buffer). */
static const char *
console(size_t *len)
{
	static char buf[1 << 20];
	ssize_t n;
	size_t got = 0;

	while ((n = read(con[0], buf + got, sizeof(buf) - 1 - got)) > 0)
		got += (size_t)n;
	buf[got] = '\0';
	if (len != NULL)
		*len = got;
	return buf;
}

START_TEST(byte_at_a_time)
{
	const char *in = "hello\nworld\n\nlast";
	struct output *o = stream(-1, -1, NULL);
	size_t i;

	for (i = 0; in[i] != '\0'; i++) {
		feed(in + i, 1);
		/* nothing of a line shows before its newline */
		if (i == 3)
			ck_assert_str_eq(console(NULL), "");
	}
	ck_assert_str_eq(console(NULL), "[p]:hello\n[p]:world\n[p]:\n");
	ck_assert_int_eq(output_eof(o), 0);
	finish();
	ck_assert_int_eq(output_eof(o), 1);
	ck_assert_int_eq(eofs, 1);
	ck_assert_str_eq(console(NULL), "[p]:last\n");
	output_free(o);
}
END_TEST

START_TEST(carriage_returns)
{
	struct output *o = stream(-1, -1, NULL);

	feed("\r 1%", 4);
	feed("\r 2%\r", 5);		/* "\r" at the end: maybe "\r\n" */
	ck_assert_str_eq(console(NULL), "[p]: 1%\r");
	feed("\nx\r\n", 4);
	ck_assert_str_eq(console(NULL), "[p]: 2%\r\n[p]:x\r\n");
	feed("bar\r", 4);
	finish();
	ck_assert_str_eq(console(NULL), "[p]:bar\n");
	output_free(o);
}
END_TEST

START_TEST(long_lines_kept_whole_bytes)
{
	struct output *o = stream(-1, -1, NULL);
	size_t n = OUTPUT_LINE_MAX * 2 + 100, len, i, ys = 0, prefixes = 0;
	char *big = malloc(n + 1);
	const char *out;

	ck_assert_ptr_nonnull(big);
	memset(big, 'y', n);
	big[n] = '\n';
	for (i = 0; i <= n; i += 4096)
		feed(big + i, i + 4096 <= n + 1 ? 4096 : n + 1 - i);
	finish();
	out = console(&len);
	for (i = 0; i < len; i++) {
		if (out[i] == 'y')
			ys++;
		if (out[i] == '[')
			prefixes++;
	}
	ck_assert_uint_eq(ys, n);
	ck_assert_uint_eq(prefixes, 3);
	ck_assert(out[len - 1] == '\n');
	free(big);
	output_free(o);
}
END_TEST

START_TEST(tee_file_is_raw_and_filters)
{
	char tee[] = "/tmp/cgrun-test-tee.XXXXXX";
	char flt[] = "/tmp/cgrun-test-flt.XXXXXX";
	char buf[256];
	int tfd = mkstemp(tee), ffd = mkstemp(flt);
	struct output *o;
	ssize_t n;

	ck_assert_int_ge(tfd, 0);
	ck_assert_int_ge(ffd, 0);
	o = stream(tfd, ffd, "ERR,a,,b");
	feed("ok 1\nERROR 2\nx a,b y\npart", 25);
	finish();
	output_free(o);		/* closes the tee fd */
	ck_assert_str_eq(console(NULL),
	    "[p]:ok 1\n[p]:ERROR 2\n[p]:x a,b y\n[p]:part\n");
	n = pread(ffd, buf, sizeof(buf) - 1, 0);
	ck_assert_int_ge(n, 0);
	buf[n] = '\0';
	ck_assert_str_eq(buf, "[p]:ERROR 2\n[p]:x a,b y\n");
	tfd = open(tee, O_RDONLY);
	n = read(tfd, buf, sizeof(buf) - 1);
	buf[n] = '\0';
	ck_assert_str_eq(buf, "ok 1\nERROR 2\nx a,b y\npart");
	close(tfd);
	close(ffd);
	unlink(tee);
	unlink(flt);
}
END_TEST

START_TEST(drain_without_eof)
{
	struct output *o = stream(-1, -1, NULL);

	ck_assert_int_eq(write(src[1], "a\nb", 3), 3);
	/* a grandchild still holds the pipe: drain what is there, close */
	output_drain(o);
	ck_assert_int_eq(output_eof(o), 1);
	ck_assert_int_eq(eofs, 0);	/* no callback from drain */
	ck_assert_str_eq(console(NULL), "[p]:a\n[p]:b\n");
	output_free(o);
}
END_TEST

/* Run the loop until the eager stream's quiet timer has fired. */
static void
quiet(void)
{
	event_base_loop(base, EVLOOP_ONCE);
}

/*
 * An eager stream (the worker holding the terminal): a prompt shows once
 * the stream is quiet, and its line continues without a prefix; a '\r'
 * in an open line returns to a fresh prefix; another stream's line first
 * ends the open one, so lines never mix; at EOF an open line is ended.
 */
START_TEST(eager_prompt_lines)
{
	struct output_conf c;
	struct output *o, *other;
	int src2[2];

	ck_assert_int_eq(pipe2(src2, O_CLOEXEC), 0);
	memset(&c, 0, sizeof(c));
	c.console_fd = con[1];
	c.prefix = "[p]:";
	c.file_fd = c.filter_fd = -1;
	c.eager = 1;
	c.on_eof = on_eof;
	o = output_new(base, src[0], &c);
	c.prefix = "[q]:";
	c.eager = 0;
	c.on_eof = NULL;
	other = output_new(base, src2[0], &c);
	ck_assert_ptr_nonnull(o);
	ck_assert_ptr_nonnull(other);
	feed("name? ", 6);
	quiet();
	ck_assert_str_eq(console(NULL), "[p]:name? ");
	feed("b", 1);
	quiet();
	feed("ob\n", 3);
	ck_assert_str_eq(console(NULL), "bob\n");
	feed("(Pdb) p", 7);
	quiet();
	feed("\r(Pdb) p x", 10);
	quiet();
	ck_assert_str_eq(console(NULL), "[p]:(Pdb) p\r[p]:(Pdb) p x");
	ck_assert_int_eq(write(src2[1], "q line\n", 7), 7);
	event_base_loop(base, EVLOOP_NONBLOCK);
	ck_assert_str_eq(console(NULL), "\n[q]:q line\n");
	feed("y", 1);		/* ended at EOF, shown or not yet */
	finish();
	ck_assert_str_eq(console(NULL), "[p]:y\n");
	output_free(o);
	close(src2[1]);
	output_free(other);
}
END_TEST

Suite *
test_suite(void)
{
	Suite *s = suite_create("output");
	TCase *tc = tcase_create("stream");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, byte_at_a_time);
	tcase_add_test(tc, carriage_returns);
	tcase_add_test(tc, long_lines_kept_whole_bytes);
	tcase_add_test(tc, tee_file_is_raw_and_filters);
	tcase_add_test(tc, drain_without_eof);
	tcase_add_test(tc, eager_prompt_lines);
	suite_add_tcase(s, tc);
	return s;
}

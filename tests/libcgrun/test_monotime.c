/*
 * test_monotime.c: the one monotonic clock helper (worker-lib/monotime.c):
 * its forms agree with each other, deadlines carry nanoseconds into
 * seconds, differences keep their sign and cut toward zero, and a
 * deadline has passed exactly when now reached it.
 */
#include <stdint.h>
#include <time.h>

#include <check.h>

#include "helper_main.h"
#include "monotime.h"

/* The clock never goes back, and its three forms read the same clock. */
START_TEST(forms_agree)
{
	struct timespec a = monotime_ts(), c;
	int64_t ms = monotime_ms();
	double s = monotime_s();

	c = monotime_ts();
	ck_assert_int_ge(monotime_diff_ms(&c, &a), 0);
	ck_assert_int_ge(ms, (int64_t)a.tv_sec * 1000 + a.tv_nsec / 1000000);
	ck_assert_int_le(ms, (int64_t)c.tv_sec * 1000 + c.tv_nsec / 1000000);
	ck_assert(s >= (double)a.tv_sec && s <= (double)c.tv_sec + 1);
	ck_assert_int_ge(monotime_since_ms(&a), 0);
}
END_TEST

/* Differences: sign, nanosecond borrow, cut toward zero. */
START_TEST(differences)
{
	struct timespec a = { 10, 900000000 }, b = { 12, 100000000 };
	struct timespec c = { 10, 900999999 };

	ck_assert_int_eq(monotime_diff_ms(&b, &a), 1200);
	ck_assert_int_eq(monotime_diff_ms(&a, &b), -1200);
	ck_assert_int_eq(monotime_diff_ms(&c, &a), 0);	/* 0.999999 ms */
	ck_assert_int_eq(monotime_diff_ms(&a, &c), 0);
	ck_assert_int_eq(monotime_diff_ms(&a, &a), 0);
}
END_TEST

/* A deadline: ms from now, nanoseconds carried, passed when reached. */
START_TEST(deadlines)
{
	struct timespec before = monotime_ts(), d = monotime_after(1999);
	struct timespec past = monotime_after(0), far = monotime_after(600000);

	ck_assert_int_ge(d.tv_nsec, 0);
	ck_assert_int_lt(d.tv_nsec, 1000000000);
	ck_assert_int_ge(monotime_diff_ms(&d, &before), 1999);
	ck_assert(monotime_passed(&past));
	ck_assert(monotime_passed(&before));
	ck_assert(!monotime_passed(&far));	/* ten minutes ahead */
	ck_assert_int_lt(monotime_since_ms(&far), 0);
}
END_TEST

/* The suite. */
Suite *
test_suite(void)
{
	Suite *s = suite_create("monotime");
	TCase *tc = tcase_create("clock");

	tcase_set_timeout(tc, 10);
	tcase_add_test(tc, forms_agree);
	tcase_add_test(tc, differences);
	tcase_add_test(tc, deadlines);
	suite_add_tcase(s, tc);
	return s;
}

/*
 * helper_main.c: main() for every Check program in tests/.  It runs the
 * program's test_suite() in Check's default (fork) mode, so a crashing case
 * fails alone, and exits 1 if any case failed or errored; and helper_skip,
 * the line a case that cannot run prints.
 */
#include <check.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helper_main.h"

/*
 * Print "SKIP program:case: why" on stdout, at once (Check forks each case:
 * the line must leave this process before it exits).  FN is the case's
 * function, named CASE_fn by START_TEST.
 */
void
helper_skip(const char *fn, const char *fmt, ...)
{
	size_t n = strlen(fn);
	va_list ap;

	if (n > 3 && strcmp(fn + n - 3, "_fn") == 0)
		n -= 3;
	printf("SKIP %s:%.*s: ", program_invocation_short_name, (int)n, fn);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

/* Run the program's suite; 0 when every case passed. */
int
main(void)
{
	SRunner *sr = srunner_create(test_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

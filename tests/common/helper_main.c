/*
 * helper_main.c: main() for every Check program in tests/.  It runs the
 * program's test_suite() in Check's default (fork) mode, so a crashing case
 * fails alone, and exits 1 if any case failed or errored.
 */
#include <check.h>
#include <stdlib.h>

#include "helper_main.h"

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

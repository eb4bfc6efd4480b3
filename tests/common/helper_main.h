/*
 * helper_main.h: the one Check main() every Check program shares
 * (tests/AREA/test_NAME.c).  A test program defines test_suite() and
 * nothing else at top level; the runner (helper_main.c) runs it and exits 0
 * only when every case passed.
 */
#ifndef CGRUN_TEST_HELPER_MAIN_H
#define CGRUN_TEST_HELPER_MAIN_H

#include <check.h>

/* The program's suite: defined once in each test_NAME.c. */
Suite	*test_suite(void);

#endif

/*
 * helper_main.h: the one Check main() every Check program shares
 * (tests/AREA/test_NAME.c).  A test program defines test_suite() and
 * nothing else at top level; the runner (helper_main.c) runs it and exits 0
 * only when every case passed.  A case that cannot run here ends with
 * SKIP_CASE("why"): it prints "SKIP program:case: why", which
 * tests/run-suite.sh counts as a skip, not a pass.
 */
#ifndef CGRUN_TEST_HELPER_MAIN_H
#define CGRUN_TEST_HELPER_MAIN_H

#include <check.h>

/* The program's suite: defined once in each test_NAME.c. */
Suite	*test_suite(void);

/* Print "SKIP program:case: why" for the case whose function is FN. */
void	 helper_skip(const char *fn, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));

/* Skip the running case, saying why (printf-style), and return from it. */
#define SKIP_CASE(...) do {						\
	helper_skip(__func__, __VA_ARGS__);				\
	return;								\
} while (0)

#endif

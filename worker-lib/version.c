/*
 * version.c: the library's version string.
 */
#include "cgrun/cgrun.h"

/* The library's version as "MAJOR.MINOR.PATCH". */
CGRUN_EXPORT const char *
cgrun_version(void)
{
	return CGRUN_VERSION;
}

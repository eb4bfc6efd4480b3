/*
 * options_priv.h: what options.c (reading the command line) and
 * options_check.c (checking what was read) share.  Only launcher/cli/
 * includes it.
 */
#ifndef CGRUN_OPTIONS_PRIV_H
#define CGRUN_OPTIONS_PRIV_H

#include <stddef.h>

/*
 * It uses options.h's types without including it, so that options.h and
 * this header never include each other (tests/tree/t_layers.sh).
 */
#ifndef CGRUN_OPTIONS_H
#error "include options.h before options_priv.h"
#endif

/* Format a one-line error into err; returns OPTIONS_ERROR. */
enum options_result options_error(char *err, size_t errlen,
	    const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Parse a whole string as an int within [min, max]; 0 or -1. */
int	options_parse_int(const char *, long min, long max, int *out);
/* Parse a whole string as a finite double; 0 or -1. */
int	options_parse_double(const char *, double *out);

/*
 * Check values and combinations once everything is parsed, filling the
 * derived fields (nnodes_min/max, signals, shutdown_timeout); OPTIONS_OK
 * or OPTIONS_ERROR with err set (options_check.c).
 */
enum options_result options_check(struct cgrun_options *, char *err,
	    size_t errlen);

#endif /* CGRUN_OPTIONS_PRIV_H */

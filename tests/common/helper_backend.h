/*
 * helper_backend.h: driving a rendezvous backend (launcher/backend/) in a
 * unit test: a command line parsed into options, callbacks that record
 * what the backend told its "agent", and the loop run until they did.
 */
#ifndef CGRUN_TEST_HELPER_BACKEND_H
#define CGRUN_TEST_HELPER_BACKEND_H

#include <stddef.h>

#include "round.h"

struct backend;
struct cgrun_options;
struct event_base;

/* What a backend told the agent: callbacks counted, the last of each. */
struct helper_seen {
	int			rounds, fails, finished, restarts;
	int			fail_status;
	char			fail_why[256];
	struct round_info	last;
};

/* Parse a NULL-terminated command line (argv[0] first) into o, which the
 * caller frees with options_free; fails the test on a usage error. */
void	helper_backend_parse(struct cgrun_options *o, const char *const *args);
/* backend_new() for o with nproc workers and a job store said to be at
 * localhost:4242, recording into seen; NULL with err. */
struct backend *helper_backend_open(struct event_base *,
	    const struct cgrun_options *o, int nproc, struct helper_seen *seen,
	    char *err, size_t errlen);
/* Run the loop until *count reaches want or ms passed; *count then. */
int	helper_backend_wait(struct event_base *, const int *count, int want,
	    int ms);
/* A port on 127.0.0.1 nobody listens on. */
int	helper_backend_free_port(void);

#endif

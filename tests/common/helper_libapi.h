/*
 * helper_libapi.h: a store server in a child process for the libcgrun unit
 * suites (rank, barrier), so a test can kill it to see store failures.
 */
#ifndef HELPER_LIBAPI_H
#define HELPER_LIBAPI_H

#include <sys/types.h>

struct libapi_server {
	pid_t	pid;
	int	port;
};

/* Start cgrun's store server on 127.0.0.1, an ephemeral port; 0 or -1. */
int	libapi_server_start(struct libapi_server *);
/* Kill the server (SIGKILL) and reap it. */
void	libapi_server_stop(struct libapi_server *);

#endif /* HELPER_LIBAPI_H */

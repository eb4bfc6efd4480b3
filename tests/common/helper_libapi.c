/*
 * helper_libapi.c: a store server (rendezvous/store.h) in a child process
 * for the libcgrun unit suites; the child dies with its parent.
 */
#include <sys/prctl.h>
#include <sys/wait.h>

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include <event2/event.h>

#include "helper_libapi.h"
#include "store.h"

/* Child: serve a store on an ephemeral port, report it through fd. */
static void
libapi_server_child(int fd)
{
	struct store_limits lim;
	struct event_base *base;
	struct store *st;
	char err[256];
	int port = -1;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	store_limits_default(&lim);
	if ((base = event_base_new()) == NULL ||
	    (st = store_new(base, &lim)) == NULL ||
	    store_listen(st, "127.0.0.1", 0, &port, err, sizeof(err)) == -1)
		port = -1;
	if (write(fd, &port, sizeof(port)) != (ssize_t)sizeof(port) ||
	    port == -1)
		_exit(1);
	close(fd);
	event_base_loop(base, EVLOOP_NO_EXIT_ON_EMPTY);
	_exit(0);
}

/* Start the server child and wait (5 s at most) for its port. */
int
libapi_server_start(struct libapi_server *s)
{
	struct pollfd pfd;
	int p[2];

	if (pipe(p) == -1)
		return -1;
	if ((s->pid = fork()) == -1)
		return -1;
	if (s->pid == 0) {
		close(p[0]);
		libapi_server_child(p[1]);
	}
	close(p[1]);
	pfd.fd = p[0];
	pfd.events = POLLIN;
	s->port = -1;
	if (poll(&pfd, 1, 5000) != 1 ||
	    read(p[0], &s->port, sizeof(s->port)) != (ssize_t)sizeof(s->port) ||
	    s->port <= 0) {
		fprintf(stderr, "store server did not report a port in 5 s\n");
		close(p[0]);
		libapi_server_stop(s);
		return -1;
	}
	close(p[0]);
	return 0;
}

/* Kill and reap the server child. */
void
libapi_server_stop(struct libapi_server *s)
{
	if (s->pid <= 0)
		return;
	kill(s->pid, SIGKILL);
	while (waitpid(s->pid, NULL, 0) == -1 && errno == EINTR)
		;
	s->pid = -1;
}

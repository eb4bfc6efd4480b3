/*
 * helper_backend.c: driving a rendezvous backend in a unit test
 * (helper_backend.h).
 */
#include <sys/socket.h>

#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "backend.h"
#include "helper_backend.h"
#include "options.h"

/* Backend callback: a round. */
static void
hb_round(void *arg, const struct round_info *ri)
{
	struct helper_seen *s = arg;

	s->rounds++;
	s->last = *ri;
}

/* Backend callback: stop the workers for a new round. */
static void
hb_restart(void *arg, const char *why)
{
	((struct helper_seen *)arg)->restarts++;
}

/* Backend callback: the job failed. */
static void
hb_fail(void *arg, int status, const char *why)
{
	struct helper_seen *s = arg;

	s->fails++;
	s->fail_status = status;
	snprintf(s->fail_why, sizeof(s->fail_why), "%s", why);
}

/* Backend callback: every node is done. */
static void
hb_finished(void *arg)
{
	((struct helper_seen *)arg)->finished++;
}

/* Parse a command line into o (see helper_backend.h). */
void
helper_backend_parse(struct cgrun_options *o, const char *const *args)
{
	static char buf[32][256];	/* argv must outlive the options */
	char *argv[33], err[512] = "";
	int argc;

	for (argc = 0; args[argc] != NULL && argc < 32; argc++) {
		snprintf(buf[argc], sizeof(buf[argc]), "%s", args[argc]);
		argv[argc] = buf[argc];
	}
	argv[argc] = NULL;
	options_free(o);
	ck_assert_msg(options_parse(o, argc, argv, err, sizeof(err)) ==
	    OPTIONS_OK, "options: %s", err);
}

/* A backend for o, recording into seen (see helper_backend.h). */
struct backend *
helper_backend_open(struct event_base *base, const struct cgrun_options *o,
    int nproc, struct helper_seen *seen, char *err, size_t errlen)
{
	struct backend_config cfg;
	struct backend_cb cb = { hb_round, hb_restart, hb_fail, hb_finished,
	    seen };

	memset(&cfg, 0, sizeof(cfg));
	cfg.opts = o;
	cfg.nproc = nproc;
	cfg.store_host = "localhost";
	cfg.store_port = 4242;
	err[0] = '\0';
	return backend_new(base, &cfg, &cb, err, errlen);
}

/* Run the loop until *count reaches want or ms passed. */
int
helper_backend_wait(struct event_base *base, const int *count, int want,
    int ms)
{
	struct timeval tick = { 0, 10000 };
	struct timespec t0, now;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	event_base_loop(base, EVLOOP_NONBLOCK);
	while (*count < want) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((now.tv_sec - t0.tv_sec) * 1000 +
		    (now.tv_nsec - t0.tv_nsec) / 1000000 >= ms)
			break;
		event_base_loopexit(base, &tick);
		event_base_loop(base, 0);
	}
	return *count;
}

/* A port on 127.0.0.1 nobody listens on (bound, then closed). */
int
helper_backend_free_port(void)
{
	struct sockaddr_in sin;
	socklen_t sl = sizeof(sin);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&sin, &sl), 0);
	port = ntohs(sin.sin_port);
	close(fd);
	return port;
}

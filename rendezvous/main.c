/*
 * main.c: cgrun-rdzvd, the store and rendezvous daemon.
 *
 * Options come from one table (config.c): every setting is a long flag
 * "--key=VALUE"; -d, -v, -h and -V are the only short flags.  Once every
 * address is listening it prints "listening on HOST:PORT" per address on
 * stdout, then (without -d) detaches.  SIGTERM and SIGINT end it cleanly.
 */
#include <sys/resource.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "config.h"
#include "log.h"
#include "rdzv.h"
#include "store.h"

#define RDZVD_NAME	"cgrun-rdzvd"
#define RDZVD_SHORTOPTS	"dhvV"
#define RDZVD_OPT_BASE	256	/* getopt values of table options */

/* State of a running daemon. */
struct rdzvd {
	struct rdzvd_config	 cfg;
	int			 foreground;
	int			 verbose;
	struct event_base	*base;
	struct store		*store;
	struct event		*sigs[2];
};

/* Print usage to fp. */
static void
rdzvd_usage(FILE *fp)
{
	fprintf(fp, "usage: %s [-dhvV] [--host=ADDR] [--port=PORT] "
	    "[--OPTION=VALUE ...]\n"
	    "  -d                             stay in the foreground\n"
	    "  -v                             more logging (repeat for debug)\n"
	    "  -h, --help                     this text\n"
	    "  -V, --version                  print the version\n", RDZVD_NAME);
	config_usage(fp);
}

/* Build getopt_long's table from the configuration table. */
static struct option *
rdzvd_longopts(void)
{
	static struct option opts[64];
	size_t i, n = 0;

	for (i = 0; i < config_nopts && n < 60; i++, n++) {
		opts[n].name = config_opts[i].key;
		opts[n].has_arg = required_argument;
		opts[n].flag = NULL;
		opts[n].val = RDZVD_OPT_BASE + (int)i;
	}
	opts[n++] = (struct option){ "help", no_argument, NULL, 'h' };
	opts[n++] = (struct option){ "version", no_argument, NULL, 'V' };
	opts[n] = (struct option){ NULL, 0, NULL, 0 };
	return opts;
}

/* Parse the command line into d; exits on usage errors, -h and -V. */
static void
rdzvd_parse(struct rdzvd *d, int argc, char **argv)
{
	const struct option *opts = rdzvd_longopts();
	char err[256];
	int ch;

	while ((ch = getopt_long(argc, argv, RDZVD_SHORTOPTS, opts, NULL)) != -1) {
		switch (ch) {
		case 'd':
			d->foreground = 1;
			break;
		case 'v':
			d->verbose++;
			break;
		case 'h':
			rdzvd_usage(stdout);
			exit(0);
		case 'V':
			printf("%s %s\n", RDZVD_NAME, CGRUN_VERSION);
			exit(0);
		default:
			if (ch < RDZVD_OPT_BASE ||
			    (size_t)(ch - RDZVD_OPT_BASE) >= config_nopts) {
				rdzvd_usage(stderr);
				exit(2);
			}
			if (config_set(&d->cfg, config_opts[ch - RDZVD_OPT_BASE].key,
			    optarg, 0, err, sizeof err) == -1) {
				fprintf(stderr, "%s: --%s: %s\n", RDZVD_NAME,
				    config_opts[ch - RDZVD_OPT_BASE].key, err);
				exit(2);
			}
		}
	}
	if (optind != argc) {
		fprintf(stderr, "%s: unexpected argument \"%s\"\n", RDZVD_NAME,
		    argv[optind]);
		rdzvd_usage(stderr);
		exit(2);
	}
	if (config_check(&d->cfg, err, sizeof err) == -1) {
		fprintf(stderr, "%s: %s\n", RDZVD_NAME, err);
		exit(2);
	}
}

/* Raise the open-file limit to its hard maximum (many idle clients). */
static void
rdzvd_raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) == -1)
			log_warn("setrlimit NOFILE");
	}
}

/* Print one "listening on HOST:PORT" line. */
static void
rdzvd_announce(const char *host, int port)
{
	if (host == NULL)
		printf("listening on *:%d\n", port);
	else if (strchr(host, ':') != NULL)
		printf("listening on [%s]:%d\n", host, port);
	else
		printf("listening on %s:%d\n", host, port);
}

/* Listen on every configured address; port 0 is picked once for all. */
static void
rdzvd_listen(struct rdzvd *d)
{
	struct rdzvd_config *cfg = &d->cfg;
	char err[256];
	int port = cfg->port, bound;
	size_t i, n = cfg->nhosts > 0 ? cfg->nhosts : 1;

	for (i = 0; i < n; i++) {
		const char *host = cfg->nhosts > 0 ? cfg->hosts[i] : NULL;

		if (store_listen(d->store, host, port, &bound, err,
		    sizeof err) == -1)
			fatalx("listen: %s", err);
		port = bound;
		log_info("listening host=%s port=%d", host ? host : "*", port);
	}
	for (i = 0; i < n; i++)
		rdzvd_announce(cfg->nhosts > 0 ? cfg->hosts[i] : NULL, port);
	fflush(stdout);
}

/* Detach from the terminal: fork, new session, stdin/stdout to null. */
static void
rdzvd_daemonize(struct rdzvd *d)
{
	pid_t pid;
	int fd;

	if ((pid = fork()) == -1)
		fatal("fork");
	if (pid > 0)
		_exit(0);
	if (setsid() == -1)
		fatal("setsid");
	if (chdir("/") == -1)
		fatal("chdir /");
	if ((fd = open("/dev/null", O_RDWR | O_CLOEXEC)) != -1) {
		(void)dup2(fd, STDIN_FILENO);
		(void)dup2(fd, STDOUT_FILENO);
		if (fd > STDERR_FILENO)
			close(fd);
	}
	if (event_reinit(d->base) == -1)
		fatalx("event_reinit failed");
}

/* SIGTERM or SIGINT: leave the loop. */
static void
rdzvd_signal(evutil_socket_t sig, short what, void *arg)
{
	struct rdzvd *d = arg;

	log_info("signal=%d: exiting", (int)sig);
	event_base_loopbreak(d->base);
}

int
main(int argc, char **argv)
{
	static struct rdzvd d;
	static const int sigs[2] = { SIGTERM, SIGINT };
	size_t i;

	log_init(RDZVD_NAME, LOG_LVL_WARN);
	config_defaults(&d.cfg);
	rdzvd_parse(&d, argc, argv);
	log_setlevel(d.cfg.log_level + d.verbose > LOG_LVL_DEBUG ?
	    LOG_LVL_DEBUG : d.cfg.log_level + d.verbose);
	signal(SIGPIPE, SIG_IGN);
	rdzvd_raise_nofile();

	if ((d.base = event_base_new()) == NULL)
		fatalx("event_base_new failed");
	if ((d.store = store_new(d.base, &d.cfg.limits)) == NULL)
		fatalx("store_new: out of memory");
	if (rdzv_attach(d.store, d.base) == NULL)	/* rendezvous engine */
		fatalx("rdzv_attach: out of memory");
	rdzvd_listen(&d);
	if (!d.foreground)
		rdzvd_daemonize(&d);
	for (i = 0; i < 2; i++) {
		d.sigs[i] = evsignal_new(d.base, sigs[i], rdzvd_signal, &d);
		if (d.sigs[i] == NULL || evsignal_add(d.sigs[i], NULL) == -1)
			fatalx("cannot watch signal %d", sigs[i]);
	}
	if (event_base_dispatch(d.base) == -1)
		fatalx("event loop failed");
	for (i = 0; i < 2; i++)
		event_free(d.sigs[i]);
	store_free(d.store);
	event_base_free(d.base);
	return 0;
}

/*
 * main.c: cgrun-rdzvd, the store and rendezvous daemon.
 *
 * Options come from one table (config.c): every setting is a long flag
 * "--key=VALUE" and a key of the configuration file (-f/--config, else
 * /etc/cgrun/rdzvd.conf if it exists); flags win over the file.  -n checks
 * the configuration and exits.  Once every address is listening it prints
 * "listening on HOST:PORT" per address on stdout, then (without -d, and
 * never under systemd) detaches.  Under systemd (service.c) it takes the
 * sockets of cgrun-rdzvd.socket, logs to the journal and reports
 * readiness.  SIGTERM is a restart: it exits at once and agents
 * reconnect within their keep-alive window, so running jobs go on; SIGINT
 * ends it and the jobs: agents hear that their jobs are over before the
 * connections close.
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

#include "auth.h"
#include "config.h"
#include "http.h"
#include "log.h"
#include "rdzv.h"
#include "service.h"
#include "store.h"
#include "wire.h"

#define RDZVD_NAME	"cgrun-rdzvd"
#define RDZVD_SHORTOPTS	"df:hnvV"
#define RDZVD_SHUTDOWN_POLL_MS	20	/* agents gone yet? (SIGTERM) */
#define RDZVD_OPT_BASE	256	/* getopt values of table options */

/* State of a running daemon. */
struct rdzvd {
	struct rdzvd_config	 cfg;
	int			 foreground;
	int			 verbose;
	struct event_base	*base;
	struct store		*store;
	struct event		*sigs[2];
	const char		*config_path;	/* -f; NULL: the default */
	int			 check_only;	/* -n */
	struct rdzv		*rdzv;
	struct http		*http;
	struct service		*svc;
	struct event		*shutdown;	/* polls until agents left */
	unsigned		 shutdown_polls;	/* left before giving up */
};

/* Print usage to fp. */
static void
rdzvd_usage(FILE *fp)
{
	fprintf(fp, "usage: %s [-dhnvV] [-f FILE] [--host=ADDR] [--port=PORT] "
	    "[--OPTION=VALUE ...]\n"
	    "  -d                             stay in the foreground\n"
	    "  -f, --config=FILE              configuration file (default %s)\n"
	    "  -n                             check the configuration and exit\n"
	    "  -v                             more logging (repeat for debug)\n"
	    "  -h, --help                     this text\n"
	    "  -V, --version                  print the version\n", RDZVD_NAME,
	    CONFIG_DEFAULT_PATH);
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
	opts[n++] = (struct option){ "config", required_argument, NULL, 'f' };
	opts[n++] = (struct option){ "help", no_argument, NULL, 'h' };
	opts[n++] = (struct option){ "version", no_argument, NULL, 'V' };
	opts[n] = (struct option){ NULL, 0, NULL, 0 };
	return opts;
}

/* Read the configuration file: -f's (must exist) or the default (if any). */
static void
rdzvd_load_config(struct rdzvd *d)
{
	char err[512];

	if (config_load(&d->cfg, d->config_path != NULL ? d->config_path :
	    CONFIG_DEFAULT_PATH, d->config_path == NULL, err, sizeof err) == -1) {
		fprintf(stderr, "%s: %s\n", RDZVD_NAME, err);
		exit(1);
	}
}

/* Apply the table flags given on the command line, after the file. */
static void
rdzvd_apply_flags(struct rdzvd *d, const int *idx, char *const *arg, int n)
{
	char err[256];
	int i;

	for (i = 0; i < n; i++)
		if (config_set(&d->cfg, config_opts[idx[i]].key, arg[i], 0,
		    err, sizeof err) == -1) {
			fprintf(stderr, "%s: --%s\n", RDZVD_NAME, err);
			exit(2);
		}
}

/* Parse the command line into d; exits on usage errors, -h and -V. */
static void
rdzvd_parse(struct rdzvd *d, int argc, char **argv)
{
	const struct option *opts = rdzvd_longopts();
	char err[256];
	int ch, nflags = 0, *idx;
	char **arg;

	/* Table flags are kept until the file is read: they win over it. */
	idx = calloc((size_t)argc + 1, sizeof *idx);
	arg = calloc((size_t)argc + 1, sizeof *arg);
	if (idx == NULL || arg == NULL)
		fatal("calloc");

	while ((ch = getopt_long(argc, argv, RDZVD_SHORTOPTS, opts, NULL)) != -1) {
		switch (ch) {
		case 'd':
			d->foreground = 1;
			break;
		case 'f':
			d->config_path = optarg;
			break;
		case 'n':
			d->check_only = 1;
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
			idx[nflags] = ch - RDZVD_OPT_BASE;
			arg[nflags++] = optarg;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "%s: unexpected argument \"%s\"\n", RDZVD_NAME,
		    argv[optind]);
		rdzvd_usage(stderr);
		exit(2);
	}
	rdzvd_load_config(d);
	rdzvd_apply_flags(d, idx, arg, nflags);
	free(idx);
	free(arg);
	if (config_check(&d->cfg, err, sizeof err) == -1) {
		fprintf(stderr, "%s: %s\n", RDZVD_NAME, err);
		exit(d->check_only ? 1 : 2);
	}
	if (d->check_only) {
		if (d->verbose)
			config_dump(&d->cfg, stdout);
		printf("%s: configuration OK\n", RDZVD_NAME);
		exit(0);
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

/* Serve the sockets systemd passed, else listen as configured. */
static void
rdzvd_listen_or_adopt(struct rdzvd *d, int *http_fd)
{
	char err[256];
	int n;

	if ((n = service_listen_fds(d->store, http_fd, err, sizeof err)) == -1)
		fatalx("socket activation: %s", err);
	if (n == 0) {
		rdzvd_listen(d);
		return;
	}
	log_info("socket activation listeners=%d: host and port settings "
	    "not used", n);
}

/* Start the HTTP observability server, if configured or passed. */
static void
rdzvd_http(struct rdzvd *d, int http_fd)
{
	struct rdzvd_config *cfg = &d->cfg;
	char err[256];
	int bound;

	if (http_fd == -1 && cfg->http_port < 0)
		return;
	if ((d->http = http_new(d->base, RDZVD_NAME)) == NULL ||
	    http_add_self(d->http) == -1 ||
	    http_add_store(d->http, d->store) == -1 ||
	    http_add_rdzv(d->http, d->rdzv) == -1)
		fatalx("http: out of memory");
	if (http_fd != -1) {
		if (http_adopt(d->http, http_fd, err, sizeof err) == -1)
			fatalx("%s", err);
		return;
	}
	if (http_listen(d->http, cfg->http_host, cfg->http_port, &bound, err,
	    sizeof err) == -1)
		fatalx("%s", err);
	log_info("http listening host=%s port=%d", cfg->http_host, bound);
	printf(strchr(cfg->http_host, ':') != NULL ?
	    "http listening on [%s]:%d\n" : "http listening on %s:%d\n",
	    cfg->http_host, bound);
	fflush(stdout);
}

/* Whether systemd runs us as a notify or socket-activated service (then:
 * foreground).  INVOCATION_ID is not a sign: every process a unit starts,
 * a CI runner's tests included, inherits it. */
static int
rdzvd_under_systemd(void)
{
	const char *pid = getenv("LISTEN_PID");

	return getenv("NOTIFY_SOCKET") != NULL ||
	    (pid != NULL && strtol(pid, NULL, 10) == (long)getpid());
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

/* While shutting down: leave when every agent hung up, or at the end. */
static void
rdzvd_shutdown_poll(evutil_socket_t fd, short what, void *arg)
{
	struct rdzvd *d = arg;
	struct store_stats st;

	store_stats(d->store, &st);
	if (st.conns[WIRE_NATIVE] == 0 || d->shutdown_polls-- == 0) {
		if (st.conns[WIRE_NATIVE] > 0)
			log_info("shutdown: %zu agents still connected after "
			    "%u ms", st.conns[WIRE_NATIVE],
			    d->cfg.shutdown_timeout_ms);
		event_base_loopbreak(d->base);
	}
}

/*
 * SIGTERM (systemctl stop or restart, a package upgrade): a restart.  The
 * daemon leaves at once without failing any job; closing the connections
 * is the notice.  Agents treat a closed connection as they treat a crash:
 * they reconnect within their keep-alive window and resume, so a daemon
 * back within it goes unnoticed by running jobs (docs/protocol.md §5).
 */
static void
rdzvd_restart(struct rdzvd *d)
{
	struct store_stats st;

	store_stats(d->store, &st);
	service_stopping();
	log_info("signal=%d: exiting for a restart: %zu agent connections "
	    "closed, jobs=%zu kept running (agents reconnect within their "
	    "keep-alive window)", SIGTERM, st.conns[WIRE_NATIVE],
	    rdzv_njobs(d->rdzv));
	event_base_loopexit(d->base, NULL);	/* after this turn */
}

/* SIGINT: a stop that ends the jobs: tell agents their jobs are over, then
 * leave the loop once they hung up (at most shutdown-timeout); a second
 * signal: now. */
static void
rdzvd_signal(evutil_socket_t sig, short what, void *arg)
{
	struct rdzvd *d = arg;
	struct timeval tv = { 0, RDZVD_SHUTDOWN_POLL_MS * 1000 };
	size_t told;

	if (d->shutdown != NULL) {
		log_info("signal=%d again: exiting now", (int)sig);
		event_base_loopbreak(d->base);
		return;
	}
	if (sig == SIGTERM) {
		rdzvd_restart(d);
		return;
	}
	service_stopping();
	told = rdzv_shutdown(d->rdzv, "cgrun-rdzvd is shutting down");
	log_info("signal=%d: exiting agents_told=%zu", (int)sig, told);
	if (told == 0 || d->cfg.shutdown_timeout_ms == 0 ||
	    (d->shutdown = event_new(d->base, -1, EV_PERSIST,
	    rdzvd_shutdown_poll, d)) == NULL) {
		event_base_loopexit(d->base, NULL);	/* after this turn */
		return;
	}
	d->shutdown_polls = d->cfg.shutdown_timeout_ms / RDZVD_SHUTDOWN_POLL_MS;
	event_add(d->shutdown, &tv);
}

/* --auth-token-file and --tcpstore-allow: fatal when unusable. */
static void
rdzvd_security(struct rdzvd *d)
{
	struct auth_key key;
	char err[512];

	if (d->cfg.auth_token_file[0] != '\0') {
		if (auth_key_load(&key, d->cfg.auth_token_file, err,
		    sizeof err) == -1)
			fatalx("%s", err);
		if (rdzv_set_auth(d->rdzv, &key) == -1)
			fatalx("rdzv_set_auth: out of memory");
		auth_key_clear(&key);
		log_info("native clients must authenticate (auth-token-file)");
	}
	if (d->cfg.tcpstore_allow[0] != '\0' && store_set_tcpstore_allow(
	    d->store, d->cfg.tcpstore_allow, err, sizeof err) == -1)
		fatalx("tcpstore-allow: %s", err);
}

int
main(int argc, char **argv)
{
	static struct rdzvd d;
	static const int sigs[2] = { SIGTERM, SIGINT };
	size_t i;
	int http_fd = -1;

	log_init(RDZVD_NAME, LOG_LVL_WARN);
	(void)service_log_to_journal();	/* when stderr is the journal */
	config_defaults(&d.cfg);
	rdzvd_parse(&d, argc, argv);
	if (rdzvd_under_systemd())
		d.foreground = 1;
	log_setlevel(d.cfg.log_level + d.verbose > LOG_LVL_DEBUG ?
	    LOG_LVL_DEBUG : d.cfg.log_level + d.verbose);
	signal(SIGPIPE, SIG_IGN);
	rdzvd_raise_nofile();

	if ((d.base = event_base_new()) == NULL)
		fatalx("event_base_new failed");
	if ((d.store = store_new(d.base, &d.cfg.limits)) == NULL)
		fatalx("store_new: out of memory");
	if ((d.rdzv = rdzv_attach(d.store, d.base)) == NULL)	/* engine */
		fatalx("rdzv_attach: out of memory");
	rdzv_set_limits(d.rdzv, &d.cfg.rdzv_limits);
	rdzvd_security(&d);
	rdzvd_listen_or_adopt(&d, &http_fd);
	rdzvd_http(&d, http_fd);
	if (!d.foreground)
		rdzvd_daemonize(&d);
	for (i = 0; i < 2; i++) {
		d.sigs[i] = evsignal_new(d.base, sigs[i], rdzvd_signal, &d);
		if (d.sigs[i] == NULL || evsignal_add(d.sigs[i], NULL) == -1)
			fatalx("cannot watch signal %d", sigs[i]);
	}
	if ((d.svc = service_new(d.base)) == NULL)
		fatalx("service_new: out of memory");
	service_ready("serving the store and rendezvous");
	if (event_base_dispatch(d.base) == -1)
		fatalx("event loop failed");
	for (i = 0; i < 2; i++)
		event_free(d.sigs[i]);
	if (d.shutdown != NULL)
		event_free(d.shutdown);
	service_free(d.svc);
	http_free(d.http);
	store_free(d.store);
	event_base_free(d.base);
	return 0;
}

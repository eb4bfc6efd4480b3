/*
 * rdzv_sim.c: simulates K cgrun agents from one process (K connections to
 * a running cgrun-rdzvd, speaking the native protocol, with keep-alives)
 * and measures, for each K, the time from the last JOIN to every agent
 * holding its ROUND, the daemon's memory (VmRSS) with K nodes joined, and
 * the daemon's CPU time from the first JOIN to every ROUND held.
 *
 * usage: rdzv_sim HOST PORT DAEMON-PID K [K ...]
 * Prints one markdown table row per K.
 */
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "bench_time.h"
#include "rdzv_proto.h"
#include "wire.h"

#define BATCH		500	/* connections opened at once */
#define PHASE_SECS	60	/* deadline of every phase */

struct sim {
	struct event_base	*base;
	struct bufferevent	**bev;
	int			 k;
	int			 connected, welcomed, statused, rounds, failed;
	int			 wrong;		/* bad round contents */
	int			 joined;	/* agents 0..joined-1 sent JOIN */
	char			 run_id[64];
	struct sockaddr_in	 sin;
};

/* The daemon's resident memory in KiB (0 if unknown). */
static long
rss_kib(int pid)
{
	char path[64], line[256];
	long kb = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if ((f = fopen(path, "r")) == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "VmRSS: %ld", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/* Encode and queue one message on agent i. */
static void
sim_send(struct sim *s, int i, const struct rdzv_msg *m)
{
	unsigned char buf[4 + RDZV_FRAME_MAX];
	ssize_t n = rdzv_proto_encode(m, buf, sizeof(buf));

	if (n > 0)
		bufferevent_write(s->bev[i], buf, (size_t)n);
}

/* Frames from the daemon to agent i. */
static void
sim_read(struct bufferevent *bev, void *arg)
{
	struct sim *s = *(struct sim **)arg;
	int i = (int)((struct bufferevent **)arg - s->bev) - 0;
	struct evbuffer *in = bufferevent_get_input(bev);
	struct rdzv_msg m;
	char why[RDZV_PROTO_ERRLEN];
	size_t len, used;

	(void)i;
	while ((len = evbuffer_get_length(in)) > 0) {
		if (len > 4 + RDZV_FRAME_MAX)
			len = 4 + RDZV_FRAME_MAX;
		if (rdzv_proto_decode(evbuffer_pullup(in, (ssize_t)len), len,
		    &m, &used, why, sizeof(why)) != RDZV_PROTO_OK)
			return;
		evbuffer_drain(in, used);
		switch (m.op) {
		case RDZV_OP_WELCOME:	s->welcomed++; break;
		case RDZV_OP_STATUS:	s->statused++; break;
		case RDZV_OP_ROUND:
			s->rounds++;
			if (m.group_world_size != (uint32_t)s->k ||
			    m.world_size != (uint32_t)s->k)
				s->wrong++;
			break;
		default:		s->failed++; break;
		}
	}
}

/* Connection events. */
static void
sim_event(struct bufferevent *bev, short what, void *arg)
{
	struct sim *s = *(struct sim **)arg;

	if (what & BEV_EVENT_CONNECTED)
		s->connected++;
	else if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
		s->failed++;
}

/* Run the loop until *counter reaches target (or failure, or deadline). */
static int
sim_wait(struct sim *s, int *counter, int target, const char *what)
{
	double end = bench_now_ms() + PHASE_SECS * 1000.0;
	struct timeval tv = { 0, 100000 };

	while (*counter < target) {
		if (s->failed > 0 || bench_now_ms() > end) {
			fprintf(stderr, "rdzv_sim: K=%d: %s: %d/%d (%d failed)\n",
			    s->k, what, *counter, target, s->failed);
			return -1;
		}
		event_base_loopexit(s->base, &tv);
		event_base_loop(s->base, EVLOOP_ONCE);
	}
	return 0;
}

/* Keep-alive of every agent. */
static void
sim_keepalive(evutil_socket_t fd, short what, void *arg)
{
	struct sim *s = arg;
	struct rdzv_msg m;
	int i;

	rdzv_proto_init(&m, RDZV_OP_KEEPALIVE);
	for (i = 0; i < s->joined; i++)	/* only after JOIN */
		sim_send(s, i, &m);
}

/* The JOIN of agent i. */
static void
sim_join(struct sim *s, int i)
{
	struct rdzv_msg m;

	rdzv_proto_init(&m, RDZV_OP_JOIN);
	snprintf(m.run_id, sizeof(m.run_id), "%s", s->run_id);
	snprintf(m.host, sizeof(m.host), "sim-%06d", i);
	m.pid = (uint32_t)i;
	m.nproc = 1;
	m.min_nodes = m.max_nodes = (uint32_t)s->k;
	m.join_timeout_ms = 600000;
	m.last_call_ms = 30000;
	m.close_ms = 30000;
	m.keepalive_ms = 1000;
	m.keepalive_max = 5;
	snprintf(m.addr, sizeof(m.addr), "127.0.0.1");
	m.port = 29500;
	sim_send(s, i, &m);
	s->joined = i + 1;
}

/* Open agent i's connection and send the magic and HELLO. */
static int
sim_open(struct sim *s, int i, struct sim **self)
{
	struct rdzv_msg m;
	int fd, one = 1;

	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) == -1)
		return -1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	s->bev[i] = bufferevent_socket_new(s->base, fd, BEV_OPT_CLOSE_ON_FREE);
	self[i] = s;
	bufferevent_setcb(s->bev[i], sim_read, NULL, sim_event, &self[i]);
	bufferevent_enable(s->bev[i], EV_READ | EV_WRITE);
	if (bufferevent_socket_connect(s->bev[i], (struct sockaddr *)&s->sin,
	    sizeof(s->sin)) == -1)
		return -1;
	bufferevent_write(s->bev[i], WIRE_NATIVE_MAGIC, WIRE_NATIVE_MAGIC_LEN);
	rdzv_proto_init(&m, RDZV_OP_HELLO);
	m.version = RDZV_PROTO_VERSION;
	sim_send(s, i, &m);
	return 0;
}

/* One run with K agents; prints its table row. */
static int
sim_run(struct sockaddr_in *sin, int pid, int k)
{
	struct sim s;
	struct sim **self;
	struct event *ka;
	struct timeval kat = { 1, 0 };
	double t0, t1, tj, c0, c1;
	long rss0, rss1;
	int i, rc = -1;

	memset(&s, 0, sizeof(s));
	s.k = k;
	s.sin = *sin;
	s.base = event_base_new();
	s.bev = calloc((size_t)k, sizeof(*s.bev));
	self = calloc((size_t)k, sizeof(*self));
	snprintf(s.run_id, sizeof(s.run_id), "sim-%d-%d", (int)getpid(), k);
	ka = event_new(s.base, -1, EV_PERSIST, sim_keepalive, &s);
	rss0 = rss_kib(pid);
	for (i = 0; i < k; i++) {
		if (sim_open(&s, i, self) == -1) {
			fprintf(stderr, "rdzv_sim: connection %d: %s\n", i,
			    strerror(errno));
			goto out;
		}
		if ((i + 1) % BATCH == 0 &&
		    sim_wait(&s, &s.welcomed, i + 1, "HELLO answered") == -1)
			goto out;
	}
	if (sim_wait(&s, &s.welcomed, k, "HELLO answered") == -1)
		goto out;
	event_add(ka, &kat);
	c0 = bench_cpu_ms(&pid, 1);
	tj = bench_now_ms();
	for (i = 0; i < k - 1; i++)
		sim_join(&s, i);
	if (sim_wait(&s, &s.statused, k - 1, "first K-1 joins seen") == -1)
		goto out;
	rss1 = rss_kib(pid);
	t0 = bench_now_ms();
	sim_join(&s, k - 1);
	if (sim_wait(&s, &s.rounds, k, "every agent has its ROUND") == -1)
		goto out;
	t1 = bench_now_ms();
	c1 = bench_cpu_ms(&pid, 1);
	if (s.wrong > 0) {
		fprintf(stderr, "rdzv_sim: K=%d: %d wrong rounds\n", k, s.wrong);
		goto out;
	}
	printf("| %d | %.1f | %.1f | %.1f | %.1f | %.2f | %.0f |\n", k,
	    t1 - t0, t1 - tj, rss0 / 1024.0, rss1 / 1024.0,
	    k > 0 ? (double)(rss1 - rss0) / k : 0.0, c1 - c0);
	fflush(stdout);
	rc = 0;
out:
	event_free(ka);
	for (i = 0; i < k; i++)
		if (s.bev[i] != NULL)
			bufferevent_free(s.bev[i]);
	free(s.bev);
	free(self);
	event_base_free(s.base);
	return rc;
}

int
main(int argc, char **argv)
{
	struct sockaddr_in sin;
	struct rlimit rl;
	int i, pid;

	if (argc < 5) {
		fprintf(stderr, "usage: rdzv_sim HOST PORT DAEMON-PID K [K ...]\n");
		return 2;
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)atoi(argv[2]));
	if (inet_pton(AF_INET, argv[1], &sin.sin_addr) != 1) {
		fprintf(stderr, "rdzv_sim: %s: not an IPv4 address\n", argv[1]);
		return 2;
	}
	pid = atoi(argv[3]);
	printf("| K agents | last join -> all ROUNDs (ms) | first join -> all "
	    "ROUNDs (ms) | daemon RSS before (MiB) | daemon RSS, K joined "
	    "(MiB) | KiB per agent | daemon CPU, first join -> all ROUNDs "
	    "(ms) |\n|---|---|---|---|---|---|---|\n");
	for (i = 4; i < argc; i++)
		if (sim_run(&sin, pid, atoi(argv[i])) == -1)
			return 1;
	return 0;
}

/*
 * etcd_sim.c: simulates K cgrun agents meeting through the etcd-v3
 * backend, from one process: K instances of the real backend
 * (launcher/backend/etcd/: each with its own lease, watch, libcurl multi
 * handle and connections, its own decisions and transactions) on one
 * libevent loop, against a real etcd cluster.  Spawning is fake: a round
 * delivered to an agent is counted, checked (group world size, world size,
 * group ranks 0..K-1 each once) and answered with workers_done, so the job
 * then finishes and every agent revokes its lease and leaves.
 *
 * The clock matches bench/rdzv_sim's: agents 0..K-2 start at once, and
 * once each of them has seen K-1 nodes waiting the last one starts;
 * "last" is from its start to every agent holding its round, "first" from
 * the first start.  "close" is from the first workers_done to every agent
 * having left.  CPU is this process's (all K agents' work: JSON, HTTP,
 * decisions) and, given their pids, the etcd members' over first..all.
 *
 * usage: etcd_sim ENDPOINTS K [ETCD-PID ...]
 * Prints one markdown table row; exit 1 when a phase misses its deadline
 * or a round is wrong.
 */
#include <sys/resource.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "backend.h"
#include "bench_time.h"
#include "log.h"
#include "options.h"

#define SIM_PHASE_SECS	120	/* deadline of every phase */
#define SIM_PIDS_MAX	16
#define SIM_SHOW_MAX	20	/* other warnings shown per run */

struct sim;

struct agent {
	struct sim	*s;
	int		 i;
	struct backend	*b;
	int		 rounds;
};

struct sim {
	struct event_base	*base;
	struct cgrun_options	 o;
	struct agent		*a;
	int			 k;
	int			 started, settled, rounds, over, failed;
	int			 wrong, restarts, shown;
	unsigned char		*rank_seen;	/* group ranks delivered */
	char			 run_id[64];
};

/* This process's CPU time (user + system) in ms. */
static double
self_cpu_ms(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec * 1e3 + ru.ru_utime.tv_usec / 1e3 +
	    ru.ru_stime.tv_sec * 1e3 + ru.ru_stime.tv_usec / 1e3;
}

/*
 * Every backend line comes here: progress lines ("round R: N/K nodes")
 * count the agents that have seen K-1 nodes waiting; other warnings are
 * shown (a few) since they mean something went wrong.
 */
static void
sim_log(int level, const char *line, void *arg)
{
	struct sim *s = arg;
	const char *p;
	int n, k;

	if ((p = strstr(line, " nodes (min ")) != NULL) {
		while (p > line && p[-1] != ' ')
			p--;
		if (sscanf(p, "%d/%d", &n, &k) == 2 && n == s->k - 1)
			s->settled++;
		return;
	}
	if (strstr(line, "waits as a spare") != NULL ||
	    s->shown++ >= SIM_SHOW_MAX)
		return;
	fprintf(stderr, "etcd_sim: K=%d: %s\n", s->k, line);
}

/* cb->round: a fake spawn; check what the round says. */
static void
sim_round(void *arg, const struct round_info *ri)
{
	struct agent *a = arg;
	struct sim *s = a->s;

	a->rounds++;
	s->rounds++;
	if (ri->group_world_size != s->k || ri->world_size != s->k ||
	    ri->group_rank < 0 || ri->group_rank >= s->k ||
	    s->rank_seen[ri->group_rank]++ != 0 || a->rounds != 1)
		s->wrong++;
}

/* cb->restart: not expected (no worker fails, no node leaves). */
static void
sim_restart(void *arg, const char *why)
{
	struct agent *a = arg;

	a->s->restarts++;
	fprintf(stderr, "etcd_sim: agent %d: restart: %s\n", a->i, why);
}

/* cb->fail: the agent gave up. */
static void
sim_fail(void *arg, int status, const char *why)
{
	struct agent *a = arg;

	a->s->failed++;
	a->s->over++;
	fprintf(stderr, "etcd_sim: agent %d: failed (%d): %s\n", a->i, status,
	    why);
}

/* cb->finished: the job ended and this agent left etcd. */
static void
sim_finished(void *arg)
{
	struct agent *a = arg;

	a->s->over++;
}

/* Run the loop until *counter reaches target (or failure, or deadline). */
static int
sim_wait(struct sim *s, int *counter, int target, const char *what)
{
	double end = bench_now_ms() + SIM_PHASE_SECS * 1000.0;
	struct timeval tv = { 0, 100000 };

	while (*counter < target) {
		if (s->failed > 0 || s->restarts > 0 || bench_now_ms() > end) {
			fprintf(stderr, "etcd_sim: K=%d: %s: %d/%d (%d failed, "
			    "%d restarts)\n", s->k, what, *counter, target,
			    s->failed, s->restarts);
			return -1;
		}
		event_base_loopexit(s->base, &tv);
		event_base_loop(s->base, EVLOOP_ONCE);
	}
	return 0;
}

/* Create agent i's backend (as the launcher's main does); -1 on error. */
static int
sim_new(struct sim *s, int i)
{
	static const struct backend_cb proto = { sim_round, sim_restart,
	    sim_fail, sim_finished, NULL };
	struct backend_config cfg;
	struct backend_cb cb = proto;
	char err[512];

	memset(&cfg, 0, sizeof(cfg));
	cfg.opts = &s->o;
	cfg.nproc = 1;
	cfg.store_host = "127.0.0.1";
	cfg.store_port = 30000 + i % 30000;
	s->a[i].s = s;
	s->a[i].i = i;
	cb.arg = &s->a[i];
	if ((s->a[i].b = etcd_new(s->base, &cfg, &cb, err, sizeof(err))) ==
	    NULL) {
		fprintf(stderr, "etcd_sim: agent %d: %s\n", i, err);
		return -1;
	}
	return 0;
}

/* Start agent i. */
static int
sim_start(struct sim *s, int i)
{
	char err[512];

	if (s->a[i].b->ops->start(s->a[i].b, err, sizeof(err)) == -1) {
		fprintf(stderr, "etcd_sim: agent %d: %s\n", i, err);
		return -1;
	}
	s->started++;
	return 0;
}

/* The K agents' options: those of `cgrun --nnodes=K
 * --rdzv-backend=etcd-v3 --rdzv-endpoint=EP --rdzv-id=ID`. */
static void
sim_options(struct sim *s, char *endpoints)
{
	static char backend[] = "etcd-v3";

	memset(&s->o, 0, sizeof(s->o));
	s->o.nnodes_min = s->o.nnodes_max = s->k;
	s->o.rdzv_backend = backend;
	s->o.rdzv_endpoint = endpoints;
	s->o.rdzv_id = s->run_id;
	s->o.max_restarts = 0;
	s->o.master_port = -1;
}

/* The rendezvous and the close, timed; prints the row. */
static int
sim_measure(struct sim *s, const int *pids, int npids)
{
	double t0, tl, t1, c0, c1, e0, e1, d0, d1;
	struct rusage ru;
	char ecpu[32];
	int i;

	c0 = self_cpu_ms();
	e0 = bench_cpu_ms(pids, npids);
	t0 = bench_now_ms();
	for (i = 0; i < s->k - 1; i++)
		if (sim_start(s, i) == -1)
			return -1;
	if (sim_wait(s, &s->settled, s->k - 1, "K-1 agents see K-1 "
	    "waiting") == -1)
		return -1;
	tl = bench_now_ms();
	if (sim_start(s, s->k - 1) == -1 ||
	    sim_wait(s, &s->rounds, s->k, "every agent has its round") == -1)
		return -1;
	t1 = bench_now_ms();
	c1 = self_cpu_ms();
	e1 = bench_cpu_ms(pids, npids);
	if (s->wrong > 0) {
		fprintf(stderr, "etcd_sim: K=%d: %d wrong rounds\n", s->k,
		    s->wrong);
		return -1;
	}
	d0 = bench_now_ms();
	for (i = 0; i < s->k; i++)
		s->a[i].b->ops->workers_done(s->a[i].b);
	if (sim_wait(s, &s->over, s->k, "every agent left") == -1)
		return -1;
	d1 = bench_now_ms();
	getrusage(RUSAGE_SELF, &ru);
	if (npids > 0)
		snprintf(ecpu, sizeof(ecpu), "%.0f", e1 - e0);
	else
		snprintf(ecpu, sizeof(ecpu), "-");
	printf("| %d | %.1f | %.1f | %.1f | %.0f | %s | %.1f |\n", s->k,
	    t1 - tl, t1 - t0, d1 - d0, c1 - c0, ecpu, ru.ru_maxrss / 1024.0);
	fflush(stdout);
	return 0;
}

/* One run with K agents. */
static int
sim_run(char *endpoints, int k, const int *pids, int npids)
{
	struct sim s;
	int i, rc = -1;

	memset(&s, 0, sizeof(s));
	s.k = k;
	snprintf(s.run_id, sizeof(s.run_id), "esim-%d-%d-%ld", (int)getpid(),
	    k, (long)time(NULL));
	sim_options(&s, endpoints);
	s.base = event_base_new();
	s.a = calloc((size_t)k, sizeof(*s.a));
	s.rank_seen = calloc((size_t)k, 1);
	if (s.base == NULL || s.a == NULL || s.rank_seen == NULL)
		goto out;
	log_setlevel(LOG_LVL_WARN);
	log_set_sink(sim_log, &s);
	for (i = 0; i < k; i++)
		if (sim_new(&s, i) == -1)
			goto out;
	rc = sim_measure(&s, pids, npids);
out:
	for (i = 0; s.a != NULL && i < k; i++)
		if (s.a[i].b != NULL)
			s.a[i].b->ops->free(s.a[i].b);
	log_set_sink(NULL, NULL);
	free(s.a);
	free(s.rank_seen);
	if (s.base != NULL)
		event_base_free(s.base);
	return rc;
}

int
main(int argc, char **argv)
{
	int pids[SIM_PIDS_MAX], npids = 0, k, i;
	struct rlimit rl;

	if (argc < 3 || (k = atoi(argv[2])) < 2) {
		fprintf(stderr, "usage: etcd_sim ENDPOINTS K [ETCD-PID ...] "
		    "(K >= 2)\n");
		return 2;
	}
	for (i = 3; i < argc && npids < SIM_PIDS_MAX; i++)
		pids[npids++] = atoi(argv[i]);
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	return sim_run(argv[1], k, pids, npids) == -1 ? 1 : 0;
}

/*
 * early_agents [-s] [-n AGENTS] [-r RUNS] [-p PORT] -- CGRUN [ARGS...]
 * early_agents --stamp DIR       (the worker, run by cgrun --no-python)
 *
 * bench/early_agents.sh's measurement: agents of one c10d job started at
 * the same moment as the agent that hosts the rendezvous (as srun starts
 * them), so most find the endpoint not yet listening and must retry.  Per
 * run it forks AGENTS-1 agents with is_host=false, then the host
 * (is_host=true), back to back, each
 *   CGRUN ARGS --rdzv-backend=c10d --rdzv-endpoint=127.0.0.1:PORT
 *     --rdzv-id=early-RUN --nnodes=AGENTS --nproc-per-node=1
 *     --local-addr=127.0.0.(2+I) --rdzv-conf=is_host=... --no-python
 *     early_agents --stamp DIR
 * and prints the time from just before the first fork to the last worker
 * running (its first stamp of CLOCK_MONOTONIC, which is system-wide) and
 * to the last agent reaped:
 *   run=I all_running_ms=F all_exited_ms=F ok=0|1
 *   summary agents=N runs=N ok=N median_ms=F min_ms=F max_ms=F
 *           exit_median_ms=F
 * The port goes up by one per run so no run waits for TIME_WAIT.
 * -s (the floor): the same AGENTS agents, each --standalone with no
 * rendezvous between them: what starting them costs on this machine.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define EA_MAX_AGENTS	64
#define EA_MAX_ARGS	64
#define EA_MAX_RUNS	1000

/* Nanoseconds on the monotonic clock. */
static long long
ea_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The worker: write the start stamp to DIR/w.RANK. */
static int
ea_stamp(const char *dir)
{
	long long t = ea_now();
	const char *rank = getenv("RANK");
	char path[PATH_MAX], buf[32];
	int fd, n;

	snprintf(path, sizeof(path), "%s/w.%s.%d", dir, rank ? rank : "x",
	    (int)getpid());
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644)) == -1)
		return 2;
	n = snprintf(buf, sizeof(buf), "%lld\n", t);
	if (write(fd, buf, (size_t)n) != n)
		return 2;
	return close(fd) == 0 ? 0 : 2;
}

/* Fork one agent: CGRUN ARGS plus its own options; its pid or -1. */
static pid_t
ea_agent(char **base, int nbase, int i, int n, int port, int run,
    char *self, char *dir, int floor)
{
	static char backend[] = "--rdzv-backend=c10d",
	    nproc[] = "--nproc-per-node=1", nopy[] = "--no-python",
	    stamp[] = "--stamp", standalone[] = "--standalone";
	char ep[64], id[64], nn[32], la[64], conf[64];
	char *argv[EA_MAX_ARGS + 16];
	pid_t pid;
	int k, a = 0;

	snprintf(ep, sizeof(ep), "--rdzv-endpoint=127.0.0.1:%d", port);
	snprintf(id, sizeof(id), "--rdzv-id=early-%d-%d", (int)getpid(), run);
	snprintf(nn, sizeof(nn), "--nnodes=%d", n);
	snprintf(la, sizeof(la), "--local-addr=127.0.0.%d", 2 + i);
	snprintf(conf, sizeof(conf), "--rdzv-conf=is_host=%s",
	    i == n - 1 ? "true" : "false");
	for (k = 0; k < nbase; k++)
		argv[a++] = base[k];
	if (floor)
		argv[a++] = standalone;
	else {
		argv[a++] = backend;
		argv[a++] = ep;
		argv[a++] = id;
		argv[a++] = nn;
		argv[a++] = la;
		argv[a++] = conf;
	}
	argv[a++] = nproc;
	argv[a++] = nopy;
	argv[a++] = self;
	argv[a++] = stamp;
	argv[a++] = dir;
	argv[a] = NULL;
	if ((pid = fork()) != 0)
		return pid;
	setpgid(0, 0);
	if (freopen("/dev/null", "w", stdout) == NULL ||
	    freopen("/dev/null", "w", stderr) == NULL)
		_exit(126);
	execvp(argv[0], argv);
	_exit(127);
}

/* The latest stamp of the N workers in DIR (ns), removing the stamps;
 * -1 if there are not N. */
static long long
ea_last(const char *dir, int n)
{
	char path[PATH_MAX];
	long long t, last = 0;
	struct dirent *de;
	int found = 0;
	FILE *fp;
	DIR *d;

	if ((d = opendir(dir)) == NULL)
		return -1;
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, "w.", 2) != 0)
			continue;
		if (snprintf(path, sizeof(path), "%.3000s/%.255s", dir,
		    de->d_name) >= (int)sizeof(path))
			continue;
		if ((fp = fopen(path, "r")) != NULL) {
			if (fscanf(fp, "%lld", &t) == 1 && t > 0) {
				found++;
				last = t > last ? t : last;
			}
			fclose(fp);
		}
		unlink(path);
	}
	closedir(d);
	return found == n ? last : -1;
}

/* qsort comparator for doubles. */
static int
ea_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* One run: fork, reap (60 s at most), and the two times in ms. */
static int
ea_run(char **base, int nbase, int n, int port, int run, char *self,
    char *dir, int floor, double *running_ms, double *exited_ms)
{
	pid_t pids[EA_MAX_AGENTS];
	long long t0, last, deadline;
	int i, left = n, ok = 1, st;

	t0 = ea_now();
	for (i = 0; i < n; i++)
		if ((pids[i] = ea_agent(base, nbase, i, n, port, run, self,
		    dir, floor)) == -1)
			return 0;
	deadline = t0 + 60000000000LL;
	while (left > 0) {
		pid_t p = waitpid(-1, &st, WNOHANG);

		if (p > 0) {
			left--;
			ok &= WIFEXITED(st) && WEXITSTATUS(st) == 0;
		} else if (ea_now() > deadline) {
			for (i = 0; i < n; i++)
				kill(-pids[i], SIGKILL);
			deadline = ea_now() + 5000000000LL;
			ok = 0;
		} else
			usleep(200);
	}
	*exited_ms = (double)(ea_now() - t0) / 1e6;
	last = ea_last(dir, n);
	*running_ms = last < 0 ? -1 : (double)(last - t0) / 1e6;
	return ok && last >= 0;
}

int
main(int argc, char **argv)
{
	static double run_ms[EA_MAX_RUNS], exit_ms[EA_MAX_RUNS];
	const char *tmp = getenv("TMPDIR");
	char dir[PATH_MAX];
	int n = 4, runs = 10, port = 29700, floor = 0, opt, i, ok = 0;

	if (argc == 3 && strcmp(argv[1], "--stamp") == 0)
		return ea_stamp(argv[2]);
	while ((opt = getopt(argc, argv, "sn:r:p:")) != -1)
		switch (opt) {
		case 's': floor = 1; break;
		case 'n': n = atoi(optarg); break;
		case 'r': runs = atoi(optarg); break;
		case 'p': port = atoi(optarg); break;
		default: return 2;
		}
	if (optind >= argc || argc - optind > EA_MAX_ARGS || n < 1 ||
	    n > EA_MAX_AGENTS || runs < 1 || runs > EA_MAX_RUNS) {
		fprintf(stderr, "usage: early_agents [-s] [-n AGENTS] [-r RUNS] "
		    "[-p PORT] -- CGRUN [ARGS...]\n");
		return 2;
	}
	snprintf(dir, sizeof(dir), "%s/early_agents.XXXXXX",
	    tmp && *tmp ? tmp : "/tmp");
	if (mkdtemp(dir) == NULL)
		return 1;
	for (i = 0; i < runs; i++) {
		double r = 0, e = 0;
		int good = ea_run(argv + optind, argc - optind, n, port + i, i,
		    argv[0], dir, floor, &r, &e);

		printf("run=%d all_running_ms=%.3f all_exited_ms=%.3f ok=%d\n",
		    i, r, e, good);
		fflush(stdout);
		if (good) {
			run_ms[ok] = r;
			exit_ms[ok++] = e;
		}
	}
	rmdir(dir);
	if (ok == 0) {
		printf("summary agents=%d runs=%d ok=0\n", n, runs);
		return 1;
	}
	qsort(run_ms, (size_t)ok, sizeof(double), ea_cmp);
	qsort(exit_ms, (size_t)ok, sizeof(double), ea_cmp);
	printf("summary agents=%d runs=%d ok=%d median_ms=%.3f min_ms=%.3f "
	    "max_ms=%.3f exit_median_ms=%.3f\n", n, runs, ok, run_ms[ok / 2],
	    run_ms[0], run_ms[ok - 1], exit_ms[ok / 2]);
	return 0;
}

/*
 * launch_timer [-n RUNS] [-w WARMUP] [-p POLL_MS] [-t TIMEOUT_S] [-v] -- CMD...
 *
 * Runs CMD RUNS times (after WARMUP unmeasured runs), one at a time, each in
 * its own process group, and prints per run and in summary its wall time
 * (fork to reaped, CLOCK_MONOTONIC), exit status, CPU time (user + system)
 * and ru_maxrss of wait4 (both: the process and its reaped descendants)
 * and, with -p, the process's own
 * VmHWM (peak RSS) sampled from /proc every POLL_MS while it runs.  CMD's
 * output goes to /dev/null unless -v.  A run over TIMEOUT_S (default 120)
 * (0: none) has its process group killed and counts as failed.
 *
 * Output lines:
 *   run=I wall_ms=F cpu_ms=F status=N maxrss_kb=N vmhwm_kb=N
 *   summary runs=N ok=N median_ms=F min_ms=F max_ms=F cpu_ms=F maxrss_kb=N
 *           vmhwm_kb=N
 * (ok runs exited 0; times, cpu and maxrss (medians) and vmhwm (largest)
 * over them.)
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TIMER_MAX_RUNS 10000

struct timer_run {
	double	wall_ms;
	double	cpu_ms;
	int	status;		/* exit status, 128 + signal, or -1 on timeout */
	long	maxrss_kb;
	long	vmhwm_kb;
};

/* Seconds on the monotonic clock. */
static double
timer_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The VmHWM of PID in KiB, or -1 when it cannot be read (gone, zombie). */
static long
timer_vmhwm(pid_t pid)
{
	char path[64], line[256];
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((f = fopen(path, "re")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, "VmHWM:", 6) == 0) {
			kb = strtol(line + 6, NULL, 10);
			break;
		}
	fclose(f);
	return kb;
}

/* Sleep MS milliseconds. */
static void
timer_sleep_ms(double ms)
{
	struct timespec ts;

	ts.tv_sec = (time_t)(ms / 1000);
	ts.tv_nsec = (long)((ms - (double)ts.tv_sec * 1000) * 1e6);
	nanosleep(&ts, NULL);
}

/* In the child: own process group, output to /dev/null unless VERBOSE, exec. */
static void
timer_child(char **argv, int verbose)
{
	int fd;

	setpgid(0, 0);
	if (!verbose && (fd = open("/dev/null", O_RDWR | O_CLOEXEC)) != -1) {
		dup2(fd, 1);
		dup2(fd, 2);
	}
	execvp(argv[0], argv);
	_exit(127);
}

static volatile sig_atomic_t timer_expired;

/* SIGALRM: the run's time is up (the wait loop acts on it). */
static void
timer_on_alarm(int sig)
{
	timer_expired = 1;
}

/* Wait for PID, sampling VmHWM every POLL_MS (0: block); -1 on timeout. */
static int
timer_wait(pid_t pid, double poll_ms, struct timer_run *r, struct rusage *ru)
{
	int st;
	pid_t w;
	long hwm;

	for (;;) {
		w = wait4(pid, &st, poll_ms > 0 ? WNOHANG : 0, ru);
		if (w == pid)
			return st;
		if (w == -1 && errno != EINTR)
			return -1;
		if (timer_expired) {
			killpg(pid, SIGKILL);
			wait4(pid, &st, 0, ru);
			errno = ETIMEDOUT;
			return -1;
		}
		if (poll_ms > 0) {
			if ((hwm = timer_vmhwm(pid)) > r->vmhwm_kb)
				r->vmhwm_kb = hwm;
			timer_sleep_ms(poll_ms);
		}
	}
}

/* One measured run of ARGV into R; 0, or -1 when fork failed. */
static int
timer_run(char **argv, double poll_ms, double timeout_s, int verbose,
    struct timer_run *r)
{
	struct rusage ru;
	double t0;
	pid_t pid;
	int st;

	memset(r, 0, sizeof(*r));
	r->vmhwm_kb = -1;
	t0 = timer_now();
	if ((pid = fork()) == -1)
		return -1;
	if (pid == 0)
		timer_child(argv, verbose);
	setpgid(pid, pid);
	timer_expired = 0;
	alarm((unsigned)timeout_s);
	st = timer_wait(pid, poll_ms, r, &ru);
	alarm(0);
	r->wall_ms = (timer_now() - t0) * 1000;
	r->maxrss_kb = ru.ru_maxrss;
	r->cpu_ms = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
	    (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
	if (st == -1)
		r->status = -1;
	else if (WIFEXITED(st))
		r->status = WEXITSTATUS(st);
	else
		r->status = 128 + WTERMSIG(st);
	return 0;
}

/* qsort order of doubles. */
static int
timer_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* qsort order of longs. */
static int
timer_cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

/* Print the summary line over the runs that exited 0. */
static void
timer_summary(const struct timer_run *runs, int n)
{
	double *ms = calloc((size_t)n + 1, sizeof(double));
	double *cpu = calloc((size_t)n + 1, sizeof(double));
	long *rss = calloc((size_t)n + 1, sizeof(long));
	long hwm = -1;
	int i, ok = 0;

	if (ms == NULL || cpu == NULL || rss == NULL) {
		perror("launch_timer");
		exit(2);
	}
	for (i = 0; i < n; i++) {
		if (runs[i].status != 0)
			continue;
		ms[ok] = runs[i].wall_ms;
		cpu[ok] = runs[i].cpu_ms;
		rss[ok++] = runs[i].maxrss_kb;
		if (runs[i].vmhwm_kb > hwm)
			hwm = runs[i].vmhwm_kb;
	}
	qsort(ms, (size_t)ok, sizeof(double), timer_cmp_double);
	qsort(cpu, (size_t)ok, sizeof(double), timer_cmp_double);
	qsort(rss, (size_t)ok, sizeof(long), timer_cmp_long);
	if (ok == 0)
		printf("summary runs=%d ok=0\n", n);
	else
		printf("summary runs=%d ok=%d median_ms=%.3f min_ms=%.3f "
		    "max_ms=%.3f cpu_ms=%.1f maxrss_kb=%ld vmhwm_kb=%ld\n", n, ok,
		    ok % 2 ? ms[ok / 2] : (ms[ok / 2 - 1] + ms[ok / 2]) / 2,
		    ms[0], ms[ok - 1], cpu[ok / 2], rss[ok / 2], hwm);
	free(ms);
	free(cpu);
	free(rss);
}

/* Print the usage line and exit 2. */
static void
timer_usage(void)
{
	fprintf(stderr, "usage: launch_timer [-n RUNS] [-w WARMUP] [-p POLL_MS] "
	    "[-t TIMEOUT_S] [-v] -- CMD [ARGS...]\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	struct timer_run *runs, scratch;
	struct sigaction sa;
	double poll_ms = 0, timeout_s = 120;
	int c, i, n = 10, warm = 1, verbose = 0;

	while ((c = getopt(argc, argv, "n:w:p:t:v")) != -1) {
		switch (c) {
		case 'n': n = atoi(optarg); break;
		case 'w': warm = atoi(optarg); break;
		case 'p': poll_ms = atof(optarg); break;
		case 't': timeout_s = atof(optarg); break;
		case 'v': verbose = 1; break;
		default: timer_usage();
		}
	}
	if (optind >= argc || n < 1 || n > TIMER_MAX_RUNS || warm < 0 ||
	    poll_ms < 0 || timeout_s < 0)
		timer_usage();
	sa.sa_handler = timer_on_alarm;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0;	/* no SA_RESTART: wait4 returns EINTR */
	sigaction(SIGALRM, &sa, NULL);
	if ((runs = calloc((size_t)n, sizeof(*runs))) == NULL) {
		perror("launch_timer");
		return 2;
	}
	for (i = 0; i < warm; i++)
		timer_run(argv + optind, 0, timeout_s, verbose, &scratch);
	for (i = 0; i < n; i++) {
		if (timer_run(argv + optind, poll_ms, timeout_s, verbose,
		    &runs[i]) == -1) {
			perror("launch_timer: fork");
			return 2;
		}
		printf("run=%d wall_ms=%.3f cpu_ms=%.1f status=%d maxrss_kb=%ld "
		    "vmhwm_kb=%ld\n", i, runs[i].wall_ms, runs[i].cpu_ms,
		    runs[i].status, runs[i].maxrss_kb, runs[i].vmhwm_kb);
		fflush(stdout);
	}
	timer_summary(runs, n);
	free(runs);
	return 0;
}

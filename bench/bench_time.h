/*
 * bench_time.h: clocks for the rendezvous simulators (bench/rdzv_sim.c,
 * bench/etcd_sim.c): monotonic milliseconds, and the CPU time (user +
 * system) of other processes read from /proc/PID/stat, to report what a
 * round cost the server side.
 */
#ifndef CGRUN_BENCH_TIME_H
#define CGRUN_BENCH_TIME_H

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Monotonic milliseconds. */
static inline double
bench_now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* CPU time (user + system) of the processes in pids, in ms (a process
 * that is gone counts 0). */
static inline double
bench_cpu_ms(const int *pids, int n)
{
	char path[64], buf[1024], *p;
	unsigned long ut, st;
	double ms = 0;
	FILE *f;
	int i;

	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "/proc/%d/stat", pids[i]);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
		fclose(f);
		/* after "pid (comm)": state, then utime and stime are the
		 * 12th and 13th fields */
		if (p != NULL && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u "
		    "%*u %*u %*u %*u %lu %lu", &ut, &st) == 2)
			ms += (double)(ut + st) * 1000.0 /
			    (double)sysconf(_SC_CLK_TCK);
	}
	return ms;
}

#endif /* CGRUN_BENCH_TIME_H */

/*
 * watchdog_worker.c: the worker of bench/watchdog.sh, linked with libcgrun.
 *
 *   watchdog_worker hang HANG_RANK BEATS
 *	attempt 0: heartbeat every 10 ms; rank HANG_RANK stops after BEATS
 *	beats, prints "hang_at=NS" (CLOCK_REALTIME of its last beat) and
 *	blocks; the others beat until stopped.  Later attempts print
 *	"start=NS" at once and exit 0.
 *   watchdog_worker rate HZ SECS
 *	heartbeat HZ times a second (absolute deadlines) for SECS seconds,
 *	then print "beats=N again=N" and exit 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cgrun/heartbeat.h>

/* CLOCK_REALTIME in ns (comparable across processes). */
static long long
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Add ns to an absolute timespec. */
static void
ts_add(struct timespec *t, long ns)
{
	t->tv_nsec += ns;
	while (t->tv_nsec >= 1000000000L) {
		t->tv_nsec -= 1000000000L;
		t->tv_sec++;
	}
}

/* The hang mode (see the top comment). */
static int
hang(int hang_rank, int beats)
{
	const char *rc = getenv("TORCHELASTIC_RESTART_COUNT");
	int rank = atoi(getenv("RANK") ? getenv("RANK") : "0"), i;

	if (rc == NULL || strcmp(rc, "0") != 0) {
		printf("start=%lld\n", now_ns());
		return 0;
	}
	for (i = 0; rank != hang_rank || i < beats; i++) {
		cgrun_heartbeat("step");
		if (rank == hang_rank && i == beats - 1) {
			printf("hang_at=%lld\n", now_ns());
			fflush(stdout);
		}
		usleep(10000);
	}
	for (;;)
		pause();
}

/* The rate mode (see the top comment). */
static int
rate(int hz, int secs)
{
	struct timespec t;
	long long n = 0, again = 0, total = (long long)hz * secs;
	long step = 1000000000L / hz;

	clock_gettime(CLOCK_MONOTONIC, &t);
	for (; n + again < total;) {
		if (cgrun_heartbeat("step") == 0)
			n++;
		else
			again++;
		ts_add(&t, step);
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL);
	}
	printf("beats=%lld again=%lld\n", n, again);
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "hang") == 0)
		return hang(atoi(argv[2]), atoi(argv[3]));
	if (argc == 4 && strcmp(argv[1], "rate") == 0 && atoi(argv[2]) > 0)
		return rate(atoi(argv[2]), atoi(argv[3]));
	fprintf(stderr, "usage: watchdog_worker hang RANK BEATS | "
	    "rate HZ SECS\n");
	return 2;
}

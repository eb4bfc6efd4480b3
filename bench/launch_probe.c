/*
 * launch_probe DIR: the worker of bench/launch.sh's crash-to-restart
 * measurement, run by a launcher with --no-python.
 *
 * On start it writes CLOCK_MONOTONIC nanoseconds (system-wide, so comparable
 * between processes) to DIR/start.ATTEMPT.LOCAL_RANK.  On attempt 0 local
 * rank 0 then writes DIR/crash and exits 1 at once, and the other ranks wait
 * to be stopped; on later attempts every rank waits PROBE_HOLD_MS
 * (default 0) and exits 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Nanoseconds on the monotonic clock. */
static long long
probe_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* An integer from the environment, or DEF when unset or malformed. */
static long
probe_env(const char *name, long def)
{
	const char *s = getenv(name);
	char *end;
	long v;

	if (s == NULL || *s == '\0')
		return def;
	errno = 0;
	v = strtol(s, &end, 10);
	return (errno != 0 || *end != '\0') ? def : v;
}

/* Write the timestamp T to DIR/NAME in one write; 0 or -1. */
static int
probe_stamp(const char *dir, const char *name, long long t)
{
	char path[PATH_MAX], buf[32];
	int fd, n, rc;

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >=
	    (int)sizeof(path))
		return -1;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd == -1)
		return -1;
	n = snprintf(buf, sizeof(buf), "%lld\n", t);
	rc = write(fd, buf, (size_t)n) == n ? 0 : -1;
	close(fd);
	return rc;
}

/* Sleep MS milliseconds. */
static void
probe_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

int
main(int argc, char **argv)
{
	long long t0 = probe_now();
	long attempt = probe_env("TORCHELASTIC_RESTART_COUNT", 0);
	long rank = probe_env("LOCAL_RANK", 0);
	char name[64];

	if (argc != 2) {
		fprintf(stderr, "usage: launch_probe DIR\n");
		return 2;
	}
	snprintf(name, sizeof(name), "start.%ld.%ld", attempt, rank);
	if (probe_stamp(argv[1], name, t0) == -1) {
		perror("launch_probe: write");
		return 2;
	}
	if (attempt == 0 && rank == 0) {
		if (probe_stamp(argv[1], "crash", probe_now()) == -1)
			return 2;
		_exit(1);
	}
	if (attempt == 0) {
		/* Wait to be stopped; 60 s bounds a launcher that never does. */
		probe_sleep_ms(60000);
		return 3;
	}
	probe_sleep_ms(probe_env("PROBE_HOLD_MS", 0));
	return 0;
}

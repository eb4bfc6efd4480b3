/*
 * hang_worker.c: a native libcgrun worker for the hang tests
 * (tests/hang/t_hang_native.sh).  Every step each rank prints "rank R step S"
 * and meets the others at a store barrier; on the first attempt, rank
 * HANG_RANK blocks forever in hang_here() before step HANG_AT_STEP, so
 * the others wait in cgrun_barrier() until cgrun notices.  Prints
 * "rank R done steps=N attempt=A" at the end.
 *   hang_worker STEPS [STEP-SECONDS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <cgrun/barrier.h>
#include <cgrun/rank.h>
#include <cgrun/store.h>

#define TIMEOUT_MS	600000

/* Block forever, as a deadlocked rank does (not inlined: a named frame). */
static void __attribute__((noinline, noreturn))
hang_here(int rank, long step)
{
	fprintf(stderr, "rank %d: hanging before step %ld\n", rank, step);
	for (;;)
		pause();
}

/* Before step: hang if this is the injected rank and step (attempt 0). */
static void
maybe_hang(int rank, int attempt, long step)
{
	const char *at = getenv("HANG_AT_STEP"), *who = getenv("HANG_RANK");

	if (at != NULL && attempt == 0 && step == atol(at) &&
	    rank == atoi(who ? who : "0"))
		hang_here(rank, step);
}

int
main(int argc, char **argv)
{
	char err[CGRUN_ERRLEN], name[32];
	long steps = argc > 1 ? atol(argv[1]) : 10, step;
	double secs = argc > 2 ? atof(argv[2]) : 0.05;
	struct cgrun_store *s;
	struct cgrun_rank *r;
	int rank, world, attempt;

	if ((r = cgrun_rank_new(NULL, err)) == NULL ||
	    (s = cgrun_rank_store_connect(r, TIMEOUT_MS, err)) == NULL) {
		fprintf(stderr, "hang_worker: %s\n", err);
		return 1;
	}
	rank = cgrun_rank_rank(r);
	world = cgrun_rank_world_size(r);
	attempt = cgrun_rank_restart_count(r);
	for (step = 0; step < steps; step++) {
		printf("rank %d step %ld\n", rank, step);
		fflush(stdout);
		maybe_hang(rank, attempt, step);
		snprintf(name, sizeof(name), "step-%ld", step);
		if (cgrun_barrier(s, name, rank, world, TIMEOUT_MS, err) == -1) {
			fprintf(stderr, "hang_worker: barrier: %s\n", err);
			return 1;
		}
		usleep((useconds_t)(secs * 1e6));
	}
	printf("rank %d done steps=%ld attempt=%d\n", rank, steps, attempt);
	cgrun_store_free(s);
	cgrun_rank_free(r);
	return 0;
}

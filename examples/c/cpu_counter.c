/*
 * cpu_counter.c: a CPU-only libcgrun worker.  Every step, each rank adds
 * step * (rank + 1) to a per-step counter in the job store, meets the
 * others at a barrier, adds the step's sum to its running total and
 * checkpoints (step, total).  After a crash and restart every rank resumes
 * from the newest step all ranks have checkpointed, so the final total is
 * the same as without the crash:
 *   total = steps * (steps + 1) / 2 * world * (world + 1) / 2
 *
 * Run:  cgrun --standalone --nproc-per-node=4 --max-restarts=1 \
 *         ./cpu_counter --dir /tmp/ckpt --crash-rank 2 --crash-step 7
 * (the crash is injected in the first attempt only).
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cgrun/barrier.h>
#include <cgrun/checkpoint.h>
#include <cgrun/rank.h>
#include <cgrun/store.h>

#define TIMEOUT_MS 60000

struct opts {
	const char	*dir;
	long		 steps, crash_rank, crash_step;
};

/* Print a failure with the library's message and exit 1. */
static void __attribute__((noreturn))
die(int rank, const char *what, const char *err)
{
	fprintf(stderr, "cpu_counter rank %d: %s: %s\n", rank, what, err);
	exit(1);
}

/* Parse --dir, --steps, --crash-rank, --crash-step. */
static void
parse(int argc, char **argv, struct opts *o)
{
	int i;

	o->dir = "ckpt";
	o->steps = 20;
	o->crash_rank = o->crash_step = -1;
	for (i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--dir") == 0)
			o->dir = argv[i + 1];
		else if (strcmp(argv[i], "--steps") == 0)
			o->steps = strtol(argv[i + 1], NULL, 10);
		else if (strcmp(argv[i], "--crash-rank") == 0)
			o->crash_rank = strtol(argv[i + 1], NULL, 10);
		else if (strcmp(argv[i], "--crash-step") == 0)
			o->crash_step = strtol(argv[i + 1], NULL, 10);
		else
			break;
	}
	if (i != argc || o->steps < 1) {
		fprintf(stderr, "usage: cpu_counter [--dir DIR] [--steps N] "
		    "[--crash-rank R --crash-step S]\n");
		exit(2);
	}
}

/* The step every rank can resume from: the minimum of their newest. */
static uint64_t
agree_on_resume(struct cgrun_store *s, struct cgrun_ckpt *c, int rank,
    int world)
{
	char err[CGRUN_ERRLEN], key[32], val[32];
	uint64_t mine = 0, min = UINT64_MAX, v;
	void *got;
	size_t len;
	int i;

	if (cgrun_ckpt_newest(c, CGRUN_CKPT_NEWEST, &mine, err) == -1)
		die(rank, "checkpoint", err);
	snprintf(key, sizeof(key), "resume/%d", rank);
	snprintf(val, sizeof(val), "%" PRIu64, mine);
	if (cgrun_store_set(s, key, val, strlen(val)) == -1)
		die(rank, "store set", cgrun_store_errmsg(s));
	for (i = 0; i < world; i++) {
		snprintf(key, sizeof(key), "resume/%d", i);
		if (cgrun_store_get(s, key, &got, &len) == -1)
			die(rank, "store get", cgrun_store_errmsg(s));
		v = strtoull(got, NULL, 10);
		free(got);
		if (v < min)
			min = v;
	}
	return min;
}

/* Load checkpoint `step` into *total (0 with no checkpoint). */
static void
load_state(struct cgrun_ckpt *c, uint64_t step, int rank, int64_t *total)
{
	char err[CGRUN_ERRLEN];
	uint64_t got = 0, saved_step = 0;
	void *data;
	size_t len;
	int rc;

	*total = 0;
	if (step == 0)
		return;
	rc = cgrun_ckpt_load(c, step, &got, &data, &len, err);
	if (rc == -1)
		die(rank, "checkpoint load", err);
	if (rc == 0 || got != step ||
	    sscanf(data, "%" SCNu64 " %" SCNd64, &saved_step, total) != 2 ||
	    saved_step != step)
		die(rank, "checkpoint load", "no complete checkpoint of the "
		    "agreed step");
	free(data);
}

/* One step: contribute, wait for everyone, add the step's sum. */
static void
run_step(struct cgrun_store *s, long step, int rank, int world,
    int64_t *total)
{
	char err[CGRUN_ERRLEN], key[32];
	int64_t sum;

	snprintf(key, sizeof(key), "sum/%ld", step);
	if (cgrun_store_add(s, key, step * (rank + 1), NULL) == -1)
		die(rank, "store add", cgrun_store_errmsg(s));
	if (cgrun_barrier(s, "step", rank, world, TIMEOUT_MS, err) == -1)
		die(rank, "barrier", err);
	if (cgrun_store_add(s, key, 0, &sum) == -1)
		die(rank, "store add", cgrun_store_errmsg(s));
	*total += sum;
}

int
main(int argc, char **argv)
{
	char err[CGRUN_ERRLEN], name[32], buf[64];
	struct cgrun_store *s;
	struct cgrun_ckpt *c;
	struct cgrun_rank *r;
	uint64_t resume;
	int64_t total;
	struct opts o;
	int rank, world;
	long step;

	parse(argc, argv, &o);
	if ((r = cgrun_rank_new(NULL, err)) == NULL)
		die(-1, "environment", err);
	rank = cgrun_rank_rank(r);
	world = cgrun_rank_world_size(r);
	if ((s = cgrun_rank_store_connect(r, TIMEOUT_MS, err)) == NULL)
		die(rank, "store", err);
	snprintf(name, sizeof(name), "rank%d", rank);
	if ((c = cgrun_ckpt_new(o.dir, name, 2, err)) == NULL)
		die(rank, "checkpoint", err);
	resume = agree_on_resume(s, c, rank, world);
	load_state(c, resume, rank, &total);
	for (step = (long)resume + 1; step <= o.steps; step++) {
		if (cgrun_rank_restart_count(r) == 0 && rank == o.crash_rank &&
		    step == o.crash_step) {
			fprintf(stderr, "rank %d: injected crash at step %ld\n",
			    rank, step);
			raise(SIGKILL);
		}
		run_step(s, step, rank, world, &total);
		snprintf(buf, sizeof(buf), "%ld %" PRId64, step, total);
		if (cgrun_ckpt_save(c, (uint64_t)step, buf, strlen(buf), err)
		    == -1)
			die(rank, "checkpoint save", err);
	}
	if (cgrun_barrier(s, "done", rank, world, TIMEOUT_MS, err) == -1)
		die(rank, "barrier", err);
	printf("rank %d: total=%" PRId64 " steps=%ld resumed_from=%" PRIu64
	    " restarts=%d\n", rank, total, o.steps, resume,
	    cgrun_rank_restart_count(r));
	cgrun_ckpt_free(c);
	cgrun_store_free(s);
	cgrun_rank_free(r);
	return 0;
}

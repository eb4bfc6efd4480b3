/*
 * barrier.h: a named barrier over the job store.
 *
 * Every rank of a group of world_size ranks calls cgrun_barrier() with the
 * same name; each call returns once all of them have called it, or fails
 * when timeout_ms passes, saying which ranks never arrived.
 *
 * Reuse: a barrier name may be used any number of times; the n-th call of
 * each rank meets the n-th call of every other (a per-rank counter in the
 * store numbers the calls), so a fast rank that re-enters the barrier
 * never releases or is released by an earlier round.  Restarts: use a
 * store from cgrun_rank_store_connect(), whose keys are per attempt, so a
 * restarted job starts every barrier afresh.  After a timeout that round is
 * spoiled for all ranks: the job is expected to fail and restart.  One
 * name serves one group: groups of different ranks or sizes that share a
 * store prefix need different names.
 *
 * Keys (under the handle's prefix): "cgrun/barrier/NAME/seq/RANK",
 * "cgrun/barrier/NAME/N/count", ".../N/arrived", ".../N/done"; the last
 * rank to arrive in round N deletes round N-1's keys.
 */
#ifndef CGRUN_BARRIER_H
#define CGRUN_BARRIER_H

#include "cgrun/cgrun.h"

#ifdef __cplusplus
extern "C" {
#endif

struct cgrun_store;

/* Longest barrier name (any bytes but NUL and '/'). */
#define CGRUN_BARRIER_MAX_NAME	256

/*
 * Wait until all world_size ranks (this one is `rank`) have entered
 * barrier `name`, at most timeout_ms (<= 0: the store timeout).  0, or -1
 * with errno (ETIMEDOUT: a message in err lists the ranks that never
 * arrived; EINVAL: bad arguments; else the store's error, whose text is in
 * err).  err is a buffer of CGRUN_ERRLEN bytes or NULL.
 */
CGRUN_EXPORT int cgrun_barrier(struct cgrun_store *, const char *name,
    int rank, int world_size, int timeout_ms, char *err);

#ifdef __cplusplus
}
#endif

#endif /* CGRUN_BARRIER_H */

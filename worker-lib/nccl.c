/*
 * nccl.c: NCCL bootstrap over the job store (libcgrun-nccl): unique id
 * exchange, device choice, non-blocking communicator creation with a
 * deadline.
 *
 * Untested on GPU hardware (none where this was written): the id exchange
 * and every failure path without a device are tested; the device paths
 * follow NCCL's documented non-blocking initialisation.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime.h>

#include "cgrun/nccl.h"
#include "cgrun/rank.h"
#include "cgrun/store.h"
#include "monotime.h"
#include "util.h"

#define NCCL_KEYLEN	(CGRUN_NCCL_MAX_NAME + 64)

/* Whether name is usable in a key: 1..CGRUN_NCCL_MAX_NAME bytes, no '/'. */
static int
nccl_name_ok(const char *name)
{
	return name != NULL && *name != '\0' &&
	    strlen(name) <= CGRUN_NCCL_MAX_NAME && strchr(name, '/') == NULL;
}

/* Report a store failure of step `what` and return -1. */
static int
nccl_store_fail(struct cgrun_store *s, const char *name, const char *what,
    char *err)
{
	cgrun_seterr(err, "nccl \"%s\": %s: %s", name, what,
	    cgrun_store_errmsg(s));
	return -1;
}

/* Fetch rank 0's id from key, waiting at most timeout_ms. */
static int
nccl_fetch_id(struct cgrun_store *s, const char *name, const char *key,
    ncclUniqueId *id, int timeout_ms, char *err)
{
	const char *keys[1] = { key };
	void *val = NULL;
	size_t len = 0;

	if (cgrun_store_wait(s, keys, 1, timeout_ms) == -1) {
		if (errno == ETIMEDOUT)
			cgrun_seterr(err, "nccl \"%s\": rank 0 did not publish the "
			    "unique id within %d ms", name, timeout_ms);
		else
			nccl_store_fail(s, name, "wait", err);
		return -1;
	}
	if (cgrun_store_get(s, key, &val, &len) == -1)
		return nccl_store_fail(s, name, "get", err);
	if (len != sizeof(*id)) {
		free(val);
		cgrun_seterr(err, "nccl \"%s\": unique id in the store has %zu "
		    "bytes, not %zu", name, len, sizeof(*id));
		errno = EPROTO;
		return -1;
	}
	memcpy(id, val, sizeof(*id));
	free(val);
	return 0;
}

/* Share rank 0's id through the store under name. */
CGRUN_EXPORT int
cgrun_nccl_id_exchange(struct cgrun_store *s, const char *name, int rank,
    ncclUniqueId *id, int timeout_ms, char *err)
{
	char key[NCCL_KEYLEN];
	int64_t round;

	if (s == NULL || id == NULL || rank < 0 || !nccl_name_ok(name)) {
		cgrun_seterr(err, "nccl: bad arguments (name of 1..%d bytes "
		    "without '/', rank >= 0)", CGRUN_NCCL_MAX_NAME);
		errno = EINVAL;
		return -1;
	}
	if (timeout_ms <= 0)
		timeout_ms = cgrun_store_timeout(s);
	snprintf(key, sizeof(key), "cgrun/nccl/%s/seq/%d", name, rank);
	if (cgrun_store_add(s, key, 1, &round) == -1)
		return nccl_store_fail(s, name, "add", err);
	snprintf(key, sizeof(key), "cgrun/nccl/%s/%lld/id", name,
	    (long long)round);
	if (rank != 0)
		return nccl_fetch_id(s, name, key, id, timeout_ms, err);
	if (cgrun_store_set(s, key, id, sizeof(*id)) == -1)
		return nccl_store_fail(s, name, "set", err);
	return 0;
}

/* Rank 0 creates a unique id; every rank receives it. */
CGRUN_EXPORT int
cgrun_nccl_unique_id(struct cgrun_store *s, const char *name, int rank,
    ncclUniqueId *id, int timeout_ms, char *err)
{
	ncclResult_t r;

	if (rank == 0 && id != NULL && (r = ncclGetUniqueId(id)) !=
	    ncclSuccess) {
		cgrun_seterr(err, "ncclGetUniqueId: %s (%s)", ncclGetErrorString(r),
		    ncclGetLastError(NULL));
		errno = EIO;
		return -1;
	}
	return cgrun_nccl_id_exchange(s, name, rank, id, timeout_ms, err);
}

/* The CUDA device of this worker's local rank. */
CGRUN_EXPORT int
cgrun_nccl_device(const struct cgrun_rank *ri, int *device, char *err)
{
	cudaError_t e;
	int n = 0, lr;

	if (ri == NULL || device == NULL) {
		cgrun_seterr(err, "nccl: bad arguments (NULL rank or device)");
		errno = EINVAL;
		return -1;
	}
	lr = cgrun_rank_local_rank(ri);
	if ((e = cudaGetDeviceCount(&n)) != cudaSuccess) {
		cgrun_seterr(err, "cudaGetDeviceCount: %s", cudaGetErrorString(e));
		errno = ENODEV;
		return -1;
	}
	if (n == 1)
		*device = 0;
	else if (lr < n)
		*device = lr;
	else {
		cgrun_seterr(err, "LOCAL_RANK=%d but only %d CUDA device%s visible",
		    lr, n, n == 1 ? " is" : "s are");
		errno = ENODEV;
		return -1;
	}
	return 0;
}

/* Poll a non-blocking communicator until ready, failed or deadline. */
static ncclResult_t
nccl_wait_ready(ncclComm_t comm, long long deadline)
{
	struct timespec tick = { 0, 1000000 };	/* 1 ms */
	ncclResult_t r, state = ncclInProgress;

	while (state == ncclInProgress) {
		if ((r = ncclCommGetAsyncError(comm, &state)) != ncclSuccess)
			return r;
		if (state == ncclInProgress && monotime_ms() >= deadline)
			return ncclInProgress;
		if (state == ncclInProgress)
			nanosleep(&tick, NULL);	/* poll, don't spin */
	}
	return state;
}

/* Create the communicator with a deadline; abort it on failure. */
static int
nccl_init_comm(ncclComm_t *comm, const struct cgrun_rank *ri,
    ncclUniqueId id, long long deadline, char *err)
{
	ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
	ncclComm_t c = NULL;
	ncclResult_t r;

	config.blocking = 0;
	r = ncclCommInitRankConfig(&c, cgrun_rank_world_size(ri), id,
	    cgrun_rank_rank(ri), &config);
	if ((r == ncclSuccess || r == ncclInProgress) && c != NULL)
		r = nccl_wait_ready(c, deadline);
	if (r == ncclSuccess) {
		*comm = c;
		return 0;
	}
	if (r == ncclInProgress)
		cgrun_seterr(err, "ncclCommInitRankConfig: not ready before the "
		    "timeout (did every rank start?)");
	else
		cgrun_seterr(err, "ncclCommInitRankConfig: %s: %s",
		    ncclGetErrorString(r), ncclGetLastError(c));
	if (c != NULL)
		(void)ncclCommAbort(c);
	errno = r == ncclInProgress ? ETIMEDOUT : EIO;
	return -1;
}

/* Pick and set the device, exchange the id and create the communicator. */
CGRUN_EXPORT int
cgrun_nccl_comm_new(struct cgrun_store *s, const struct cgrun_rank *ri,
    const char *name, int timeout_ms, ncclComm_t *comm, char *err)
{
	long long start = monotime_ms(), left;
	ncclUniqueId id;
	cudaError_t e;
	int dev;

	if (s == NULL || ri == NULL || comm == NULL) {
		cgrun_seterr(err, "nccl: bad arguments");
		errno = EINVAL;
		return -1;
	}
	if (timeout_ms <= 0)
		timeout_ms = cgrun_store_timeout(s);
	if (cgrun_nccl_device(ri, &dev, err) == -1)
		return -1;
	if ((e = cudaSetDevice(dev)) != cudaSuccess) {
		cgrun_seterr(err, "cudaSetDevice(%d): %s", dev,
		    cudaGetErrorString(e));
		errno = ENODEV;
		return -1;
	}
	memset(&id, 0, sizeof(id));
	if (cgrun_nccl_unique_id(s, name, cgrun_rank_rank(ri), &id, timeout_ms,
	    err) == -1)
		return -1;
	left = timeout_ms - (monotime_ms() - start);
	return nccl_init_comm(comm, ri, id, monotime_ms() + (left < 1 ? 1 :
	    left), err);
}

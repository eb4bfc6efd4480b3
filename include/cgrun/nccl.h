/*
 * nccl.h: NCCL communicator bootstrap over the job store (libcgrun-nccl,
 * link with -lcgrun-nccl -lcgrun -lnccl -lcudart).
 *
 * This header includes NCCL's <nccl.h>: compile with
 * -I$CUDA_HOME/include (pkg-config --cflags cgrun-nccl adds it).
 *
 * Bootstrap: rank 0 creates an ncclUniqueId (ncclGetUniqueId, which needs
 * no GPU) and publishes its 128 bytes in the store; every other rank waits
 * for them.  Then each rank selects the CUDA device of its local rank (0
 * if exactly one device is visible, e.g. with CUDA_VISIBLE_DEVICES set to
 * the worker's own GPU; else LOCAL_RANK, which must be below the device
 * count) and creates its communicator non-blocking, polling it until it is
 * ready or the timeout passes, when it aborts the communicator.  Errors
 * from CUDA or NCCL come back with their text (cudaGetErrorString,
 * ncclGetErrorString and ncclGetLastError).
 *
 * Keys (under the store handle's prefix): "cgrun/nccl/NAME/seq/RANK" and
 * "cgrun/nccl/NAME/N/id" for the N-th exchange under NAME, so a name may
 * be reused (every rank's n-th call meets the others' n-th call).
 */
#ifndef CGRUN_NCCL_H
#define CGRUN_NCCL_H

#include <nccl.h>

#include "cgrun/cgrun.h"

#ifdef __cplusplus
extern "C" {
#endif

struct cgrun_store;
struct cgrun_rank;

/* Longest communicator name (any bytes but NUL and '/'). */
#define CGRUN_NCCL_MAX_NAME	256

/*
 * Share *id through the store under `name`: rank 0 publishes the id it
 * passes in, every other rank waits (at most timeout_ms; <= 0: the store
 * timeout) and receives rank 0's id in *id.  No CUDA or NCCL call is made.
 * 0, or -1 with errno and a message in err (CGRUN_ERRLEN bytes or NULL).
 */
CGRUN_EXPORT int cgrun_nccl_id_exchange(struct cgrun_store *,
    const char *name, int rank, ncclUniqueId *id, int timeout_ms, char *err);

/*
 * Rank 0 creates a new unique id with ncclGetUniqueId; then as
 * cgrun_nccl_id_exchange: every rank ends with rank 0's id in *id.
 */
CGRUN_EXPORT int cgrun_nccl_unique_id(struct cgrun_store *, const char *name,
    int rank, ncclUniqueId *id, int timeout_ms, char *err);

/*
 * The CUDA device this worker should use (see above) in *device.  0, or
 * -1 with a message in err (CUDA's text if it fails; EINVAL: a NULL rank
 * or device).
 */
CGRUN_EXPORT int cgrun_nccl_device(const struct cgrun_rank *, int *device,
    char *err);

/*
 * Create this worker's communicator over all WORLD_SIZE ranks: pick and
 * set its device, exchange the unique id under `name`, and initialise the
 * communicator within timeout_ms (<= 0: the store timeout).  *comm gets it
 * (destroy it with ncclCommDestroy).  0, or -1 with errno and a message
 * in err naming the CUDA or NCCL failure.
 */
CGRUN_EXPORT int cgrun_nccl_comm_new(struct cgrun_store *,
    const struct cgrun_rank *, const char *name, int timeout_ms,
    ncclComm_t *comm, char *err);

#ifdef __cplusplus
}
#endif

#endif /* CGRUN_NCCL_H */

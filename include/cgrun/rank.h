/*
 * rank.h: who this worker is, read from the environment that cgrun (or
 * torchrun) gives each worker, and the job store of this attempt.
 *
 * Required variables: RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE,
 * MASTER_ADDR, MASTER_PORT.  Optional (defaults in parentheses): GROUP_RANK
 * (RANK / LOCAL_WORLD_SIZE), GROUP_WORLD_SIZE (WORLD_SIZE /
 * LOCAL_WORLD_SIZE, rounded up), ROLE_RANK (RANK), ROLE_WORLD_SIZE
 * (WORLD_SIZE), ROLE_NAME ("default"), TORCHELASTIC_RESTART_COUNT (0),
 * TORCHELASTIC_MAX_RESTARTS (0), TORCHELASTIC_RUN_ID (""),
 * TORCHELASTIC_USE_AGENT_STORE (unset).  A missing required variable, a
 * malformed number (anything but plain decimal digits, or out of range) or
 * an inconsistent set (RANK >= WORLD_SIZE, ...) fails with a message naming
 * the variable.
 *
 * The attempt's store: cgrun_rank_store_connect() connects to
 * MASTER_ADDR:MASTER_PORT and returns a handle whose keys live under the
 * prefix "/worker/attempt_<TORCHELASTIC_RESTART_COUNT>", the prefix
 * torch.distributed uses for env:// with an agent store, so C and Python
 * workers of one attempt share keys and no attempt ever sees the keys of an
 * earlier one, even where the store survives restarts (torchrun's static
 * backend).
 */
#ifndef CGRUN_RANK_H
#define CGRUN_RANK_H

#include <stddef.h>

#include "cgrun/cgrun.h"

#ifdef __cplusplus
extern "C" {
#endif

struct cgrun_rank;
struct cgrun_store;

/*
 * Read the worker environment from envp (a NULL-terminated array of
 * "NAME=value" strings as in environ; NULL: this process's environment,
 * which is empty after clearenv().
 * NULL with errno EINVAL and a message in err (CGRUN_ERRLEN bytes, may be
 * NULL) naming the missing or malformed variable; ENOMEM on allocation.
 */
CGRUN_EXPORT struct cgrun_rank *cgrun_rank_new(const char *const *envp,
    char *err);

/* Release rank information.  NULL ok. */
CGRUN_EXPORT void cgrun_rank_free(struct cgrun_rank *);

/*
 * The accessors below return the value read (every integer is >= 0), or
 * -1 (strings: NULL) with errno EINVAL for a NULL handle.
 */
/* Global rank (RANK) and number of workers in the job (WORLD_SIZE). */
CGRUN_EXPORT int cgrun_rank_rank(const struct cgrun_rank *);
CGRUN_EXPORT int cgrun_rank_world_size(const struct cgrun_rank *);
/* Rank on this node (LOCAL_RANK) and workers on it (LOCAL_WORLD_SIZE). */
CGRUN_EXPORT int cgrun_rank_local_rank(const struct cgrun_rank *);
CGRUN_EXPORT int cgrun_rank_local_world_size(const struct cgrun_rank *);
/* Rank of this node (GROUP_RANK) and number of nodes (GROUP_WORLD_SIZE). */
CGRUN_EXPORT int cgrun_rank_group_rank(const struct cgrun_rank *);
CGRUN_EXPORT int cgrun_rank_group_world_size(const struct cgrun_rank *);
/* Rank among workers of this role and their number. */
CGRUN_EXPORT int cgrun_rank_role_rank(const struct cgrun_rank *);
CGRUN_EXPORT int cgrun_rank_role_world_size(const struct cgrun_rank *);
/* The role (ROLE_NAME). */
CGRUN_EXPORT const char *cgrun_rank_role_name(const struct cgrun_rank *);
/* Restarts so far (TORCHELASTIC_RESTART_COUNT) and allowed. */
CGRUN_EXPORT int cgrun_rank_restart_count(const struct cgrun_rank *);
CGRUN_EXPORT int cgrun_rank_max_restarts(const struct cgrun_rank *);
/* The job's run id (TORCHELASTIC_RUN_ID, "" if unset). */
CGRUN_EXPORT const char *cgrun_rank_run_id(const struct cgrun_rank *);
/* The job store's address (MASTER_ADDR, MASTER_PORT). */
CGRUN_EXPORT const char *cgrun_rank_master_addr(const struct cgrun_rank *);
CGRUN_EXPORT int cgrun_rank_master_port(const struct cgrun_rank *);

/*
 * Write this attempt's store prefix ("/worker/attempt_N") into buf of len
 * bytes.  0, or -1 with ENAMETOOLONG if it does not fit, EINVAL for a
 * NULL handle or buf.
 */
CGRUN_EXPORT int cgrun_rank_store_prefix(const struct cgrun_rank *,
    char *buf, size_t len);

/*
 * Connect to the job store (MASTER_ADDR:MASTER_PORT, retrying until
 * timeout_ms, which also becomes the store timeout) and return a handle
 * with this attempt's prefix.  Fails with EPROTONOSUPPORT if
 * TORCHELASTIC_USE_AGENT_STORE is set to anything but "True": then no
 * agent hosts a store and rank 0 is expected to serve one itself (torchrun
 * < 2.4 with c10d), which libcgrun does not do.  NULL with errno and a
 * message in err on failure (EINVAL: a NULL handle or timeout_ms <= 0).
 */
CGRUN_EXPORT struct cgrun_store *cgrun_rank_store_connect(
    const struct cgrun_rank *, int timeout_ms, char *err);

#ifdef __cplusplus
}
#endif

#endif /* CGRUN_RANK_H */

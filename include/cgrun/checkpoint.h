/*
 * checkpoint.h: crash-safe checkpoints in a directory.
 *
 * A checkpoint set is a directory and a name (e.g. "rank3"); step N of it
 * is the file DIR/NAME-<N as 20 digits>.ckpt.  Saving writes a temporary
 * file in the same directory, fsyncs it, renames it over the final name
 * and fsyncs the directory, so a crash at any point leaves either the old
 * set or the old set plus the complete new file, never a torn file under a
 * final name.  Each file carries a header (magic, version, step, length)
 * and CRC-32C checksums of header and payload; loading skips a file that
 * fails them (a torn copy, a truncated disk) and falls back to the next
 * older one.  After a save, all but the newest `keep` files of the set
 * (and the one just saved, which may be older after a rollback) are
 * removed, as are temporary files left by dead writers of this set on
 * this host.
 *
 * Different names may share a directory (one set per rank); one name must
 * have one writer at a time.
 */
#ifndef CGRUN_CHECKPOINT_H
#define CGRUN_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "cgrun/cgrun.h"

#ifdef __cplusplus
extern "C" {
#endif

struct cgrun_ckpt;

/* Longest checkpoint name: letters, digits, '.', '_' and '-'. */
#define CGRUN_CKPT_MAX_NAME	128
/* Load the newest step (max_step argument). */
#define CGRUN_CKPT_NEWEST	UINT64_MAX

/*
 * A checkpoint set `name` in directory dir (created, one level, if
 * missing) that keeps the newest `keep` (>= 1) checkpoints.  NULL with
 * errno and a message in err (CGRUN_ERRLEN bytes, may be NULL).
 */
CGRUN_EXPORT struct cgrun_ckpt *cgrun_ckpt_new(const char *dir,
    const char *name, int keep, char *err);

/* Release the handle (files stay).  NULL ok. */
CGRUN_EXPORT void cgrun_ckpt_free(struct cgrun_ckpt *);

/* Save len bytes as checkpoint `step` atomically (replacing an earlier
 * save of the same step); data may be NULL only when len is 0.  0, or -1
 * with errno (EINVAL: a NULL handle or NULL data with a length) and a
 * message in err. */
CGRUN_EXPORT int cgrun_ckpt_save(struct cgrun_ckpt *, uint64_t step,
    const void *data, size_t len, char *err);

/* The same for a payload in iovcnt (>= 0) pieces, written in order; iov
 * and a piece's base may be NULL only without bytes (else EINVAL). */
CGRUN_EXPORT int cgrun_ckpt_savev(struct cgrun_ckpt *, uint64_t step,
    const struct iovec *iov, int iovcnt, char *err);

/*
 * Find the newest complete checkpoint with step <= max_step
 * (CGRUN_CKPT_NEWEST: any) and store its step in *step.  1 if found, 0 if
 * there is none, -1 on error (errno, err; EINVAL: a NULL handle or step).
 */
CGRUN_EXPORT int cgrun_ckpt_newest(struct cgrun_ckpt *, uint64_t max_step,
    uint64_t *step, char *err);

/*
 * Load the newest complete checkpoint with step <= max_step: *step gets
 * its step, *data a malloc'd copy of its payload (free() it; one NUL byte
 * follows the payload) and *len its length.  1 if loaded, 0 if there is
 * none, -1 on error (errno, err; EINVAL: a NULL handle or result pointer).
 */
CGRUN_EXPORT int cgrun_ckpt_load(struct cgrun_ckpt *, uint64_t max_step,
    uint64_t *step, void **data, size_t *len, char *err);

/* Path of the file of step `step` (complete or not) into buf of len
 * bytes.  0, or -1 with ENAMETOOLONG (EINVAL: a NULL handle or buf). */
CGRUN_EXPORT int cgrun_ckpt_path(const struct cgrun_ckpt *, uint64_t step,
    char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* CGRUN_CHECKPOINT_H */

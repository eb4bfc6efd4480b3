/*
 * heartbeat.h: tell cgrun's hang watchdog that this worker makes progress
 * (cgrun --hang-timeout=DURATION; see cgrun(1), HANG DETECTION).
 *
 * cgrun gives each worker a heartbeat channel: an inherited, non-blocking
 * AF_UNIX stream socket whose descriptor number is in CGRUN_HEARTBEAT_FD.
 * Any write is a sign of progress; the last line names the section the
 * worker is in ("step", "checkpoint"), which cgrun shows when the rank
 * hangs.  Any language can send one, e.g. in Python:
 *	os.write(int(os.environ["CGRUN_HEARTBEAT_FD"]), b"step\n")
 */
#ifndef CGRUN_HEARTBEAT_H
#define CGRUN_HEARTBEAT_H

#include "cgrun/cgrun.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes of a section name that cgrun keeps (longer names are cut). */
#define CGRUN_HEARTBEAT_SECTION_MAX 64

/*
 * Send one heartbeat, the line section + "\n" (NULL or "": an empty
 * line; newlines inside become spaces).  Never blocks, never prints,
 * never raises SIGPIPE; safe from any thread.
 * Returns 0 when sent; 1 when there is no channel (CGRUN_HEARTBEAT_FD is
 * unset: not under cgrun, or its watchdog is off), so it can be called
 * unconditionally; -1 with errno otherwise: EAGAIN when the agent is
 * far behind (some 200 KiB of heartbeats queued: progress is known,
 * nothing is lost), EINVAL when CGRUN_HEARTBEAT_FD is not a descriptor number, or
 * the error of the send (EBADF, ENOTSOCK: the fd was closed or reused).
 * The variable is read once, at the first call.
 */
CGRUN_EXPORT int cgrun_heartbeat(const char *section);

#ifdef __cplusplus
}
#endif

#endif /* CGRUN_HEARTBEAT_H */

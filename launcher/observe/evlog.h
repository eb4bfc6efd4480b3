/*
 * evlog.h: --event-log, the job's event log: one JSON object per line
 * (json-c), every record with the schema version, the time, a sequence
 * number, the run id, the node and the attempt (docs/event-log.md, the
 * schema docs/event-log.schema.json).  The observer (observe.c) makes the
 * records; this file stamps and writes them.
 *
 * Written in order, each record as soon as it is made, never blocking the
 * agent's loop: a regular file (or a device) is written at once; a pipe,
 * socket or terminal only as far as poll() says it has room, the rest
 * queued (at most EVLOG_QUEUE_MAX bytes) and written when it has.  A
 * record that does not fit the queue, or that comes after the reader went
 * away, is dropped and counted (a gap in the sequence numbers); the count
 * is in the final record and said at the end.
 */
#ifndef CGRUN_EVLOG_H
#define CGRUN_EVLOG_H

#include <stddef.h>

struct event_base;
struct json_object;
struct evlog;

#define EVLOG_SCHEMA		1		/* the records' "schema" */
#define EVLOG_QUEUE_MAX		(1024 * 1024)	/* bytes waiting for room */
#define EVLOG_RECORD_MAX	(64 * 1024)	/* bytes of one record */
#define EVLOG_CLOSE_WAIT_MS	2000	/* at the end: room for the rest */

/*
 * What --event-log names: "fd:N" (an open file descriptor N, 0 to 65535)
 * or a file path.  Pure.  Returns 1 with *fd set for "fd:N", 0 for a
 * path (anything not starting with "fd:"), -1 for a malformed "fd:...".
 */
int	evlog_dest_parse(const char *dest, int *fd);

/*
 * Open dest (after evlog_dest_parse: fd:N must be open for writing; a
 * file is created or appended to, mode 0644); NULL with err set.
 */
struct evlog *evlog_open(struct event_base *, const char *dest,
	    const char *run_id, const char *node, char *err, size_t errlen);
/* The attempt the next records belong to. */
void	evlog_set_attempt(struct evlog *, int attempt);
/* A new record of kind with the common members; NULL when out of memory. */
struct json_object *evlog_record(struct evlog *, const char *kind);
/* A JSON string of s made valid UTF-8 (worker-given bytes), or NULL. */
struct json_object *evlog_string(const char *s);
/* Write (or queue, or drop) and release the record.  NULL ok. */
void	evlog_emit(struct evlog *, struct json_object *);
/* Records dropped so far. */
unsigned long long evlog_dropped(const struct evlog *);
/* Write what is queued (waiting at most EVLOG_CLOSE_WAIT_MS), close the
 * log (an fd:N stays open), say how many records were lost.  NULL ok. */
void	evlog_close(struct evlog *);

#endif /* CGRUN_EVLOG_H */

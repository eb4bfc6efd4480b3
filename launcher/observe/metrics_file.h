/*
 * metrics_file.h: --metrics-file, the agent's metrics (metrics.h) in a
 * file for node_exporter's textfile collector.  Each write is a new file
 * in the same directory (".NAME.XXXXXX", a name the collector ignores)
 * renamed over PATH, so a scrape never sees half a file.  The file is
 * written when the observer says something changed (once per loop turn,
 * however many changes), every METRICS_FILE_REFRESH_SECS (the seconds
 * since each rank's progress move on their own), and at the end; it is
 * left in place then, with the job's last state and exit status.
 */
#ifndef CGRUN_METRICS_FILE_H
#define CGRUN_METRICS_FILE_H

#include <stddef.h>

struct event_base;
struct metrics_facts;
struct metrics_file;

#define METRICS_FILE_REFRESH_SECS	5

/*
 * Write path once now; NULL with err set when it cannot be written (its
 * directory missing or not writable), else the writer.
 */
struct metrics_file *metrics_file_new(struct event_base *, const char *path,
	    const struct metrics_facts *, char *err, size_t errlen);
/* Something changed: write on the next loop turn. */
void	metrics_file_changed(struct metrics_file *);
/* Write the last state now and free the writer.  NULL ok. */
void	metrics_file_free(struct metrics_file *);

#endif /* CGRUN_METRICS_FILE_H */

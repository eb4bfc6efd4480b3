/*
 * barrier_marker.h: the barrier's "arrived" marker, the text that ranks
 * append to ".../ROUND/arrived" in the store ("RANK," per rank, so any
 * client of the store can write anything there), parsed after a timeout to
 * say which ranks never arrived.  Internal (worker-lib/barrier.c, its unit
 * tests and tests/fuzz/fuzz_barrier.c); nothing here is exported.
 */
#ifndef CGRUN_BARRIER_MARKER_H
#define CGRUN_BARRIER_MARKER_H

#include <stddef.h>

/*
 * Parse len bytes of marker text (not NUL-terminated; any bytes) and set
 * seen[r] = 1 (seen has world_size >= 1 bytes) for each rank r in
 * [0, world_size) that it lists: a run of digits ended by ','; other
 * bytes between digits are skipped, a ',' without digits and a number
 * without its ',' are ignored, so are numbers >= world_size (however long).
 * Returns the number of entries of seen it newly set.  Reads only list[0..
 * len), writes only seen[0..world_size).
 */
int	barrier_mark(const char *list, size_t len, char *seen, int world_size);

/*
 * Write the ranks r < world_size with seen[r] == 0 into buf (len >= 48
 * bytes) as "1, 3, 5", ending with " (and N more)" when they do not all
 * fit; always NUL-terminated within len.
 */
void	barrier_missing(const char *seen, int world_size, char *buf, size_t len);

#endif /* CGRUN_BARRIER_MARKER_H */

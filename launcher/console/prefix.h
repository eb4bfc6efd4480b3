/*
 * prefix.h: what goes before each console line of a worker (--log-prefix).
 *
 *   torchrun (the default)  as torchrun 2.6: a stream copied to a log file
 *                           with --tee gets "[${role_name}${local_rank}]:"
 *                           (or TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE),
 *                           any other stream none, so a rank printing
 *                           JSON for a parser prints it unchanged;
 *   rank                    "[rank${rank}]:" on every line (cgrun before
 *                           issue 17);
 *   none                    no prefix at all;
 *   any other text          a template ($rank, $local_rank, $role_name,
 *                           $group_rank) put before every line.
 *
 * Lines copied to filtered_std{out,err}.log (--duplicate-*-filters), which
 * mix every rank, carry the explicit template, or torchrun's tag.
 */
#ifndef CGRUN_PREFIX_H
#define CGRUN_PREFIX_H

#include <stddef.h>

struct cgrun_options;

struct prefix_ids {
	int	rank, local_rank, group_rank;
};

/* Fill console and filter (each OUTPUT_PREFIX_MAX-like buffers) for the
 * stream whose --tee bit is teed. */
void	prefix_for(const struct cgrun_options *, const struct prefix_ids *,
	    int teed, char *console, size_t clen, char *filter, size_t flen);

#endif

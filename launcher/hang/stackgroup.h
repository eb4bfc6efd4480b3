/*
 * stackgroup.h: grouping the stacks of the ranks of a hang (pure, no
 * I/O).  Two ranks are in the same place when their main threads'
 * function names are the same, innermost first (addresses, files and line
 * numbers ignored: two ranks at different lines of one function wait in
 * the same call).  The summary names each group, largest first, with the
 * file and line of its first frame in the user's code (not Python's own
 * library, an installed package or a relative C library path):
 *   "ranks 0,1,3 in backward <- backward <- main (train.py:244) <- <module>;
 *    rank 2 in wait <- wait <- hang_here (hang.py:31) <- main <- ..."
 * The culprit is the one rank outside a collective while the others wait
 * in one (torch.distributed, autograd, gloo, c10d, NCCL, libcgrun's
 * barrier: they wait for it), else the odd rank out: the only rank of
 * the only smallest group, when the other groups are larger (3 + 1: the
 * 1; 2 + 2: nobody), else the rank the detector flagged.
 */
#ifndef CGRUN_STACKGROUP_H
#define CGRUN_STACKGROUP_H

#include <stddef.h>

#define STACKGROUP_SHOWN	5	/* frames shown per group */

struct stackdump;

/* One rank's stacks, as the collection left them. */
struct stackgroup_rank {
	int			 rank;
	long			 pid;
	const struct stackdump	*d;		/* or NULL: no stack */
	const char		*missing;	/* why not ("timed out"), or NULL */
	int			 flagged;	/* the detector named it */
};

/*
 * Write the summary of n ranks into buf (cut with "..." when it does not
 * fit); return the culprit, or -1.  The detector's flag comes last: every
 * rank waiting for the hung one stops making progress too, so the first
 * to time out is not always it.
 */
int	stackgroup_summary(const struct stackgroup_rank *, int n, char *buf,
	    size_t len);
/* Whether a rank's main thread waits for other ranks in a collective. */
int	stackgroup_in_collective(const struct stackgroup_rank *);
/* Whether ranks a and b are in the same place (both without stack too). */
int	stackgroup_same(const struct stackgroup_rank *a,
	    const struct stackgroup_rank *b);
/* "f (x.py:12) <- g <- h <- ..." for one rank's main thread into buf. */
void	stackgroup_where(const struct stackgroup_rank *, char *buf,
	    size_t len);

#endif

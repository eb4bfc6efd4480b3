/*
 * site.h: site defaults for multi-node jobs (site.c): the rendezvous
 * endpoint from CGRUN_RDZV_ENDPOINT, the site file or Slurm; the run id
 * from the batch system; --nnodes from Slurm (slurm/slurm.h).  The command
 * line wins.
 */
#ifndef CGRUN_SITE_H
#define CGRUN_SITE_H

#include <stddef.h>

struct cgrun_options;

/* Fill what the command line left out; -1 with err (usage error). */
int	site_apply(struct cgrun_options *, char *err, size_t errlen);

#endif /* CGRUN_SITE_H */

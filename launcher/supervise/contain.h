/*
 * contain.h: containment of everything a job's workers start (contain.c):
 * a cgroup v2 per job where cgrun may create one (emptied with
 * cgroup.kill, and by a guard process when cgrun dies), else cgrun's
 * child-subreaper descendants found through /proc.  The mode is logged
 * at -v.
 */
#ifndef CGRUN_CONTAIN_H
#define CGRUN_CONTAIN_H

#include <sys/types.h>

struct contain;

/* The job's containment (cgroup, else subreaper; CGRUN_NO_CGROUP=1 forces
 * the subreaper); NULL only when out of memory. */
struct contain *contain_new(void);
/* The cgroup.procs file a worker writes "0" to before exec, or NULL. */
const char *contain_procs(const struct contain *);
/* Subreaper mode: the guard kills worker process group pgid if cgrun
 * dies (0: forget them all); a no-op with a cgroup. */
void	contain_track(struct contain *, pid_t pgid);
/* Send sig to every process left (the workers themselves are reaped). */
void	contain_signal(struct contain *, int sig);
/* SIGKILL every process left and wait until none is alive (bounded). */
void	contain_kill(struct contain *);
/* contain_kill, remove the cgroup, end the guard; NULL is a no-op. */
void	contain_free(struct contain *);

#endif

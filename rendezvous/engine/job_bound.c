/*
 * job_bound.c: what a peer can make the rendezvous engine hold
 * (rdzv_limits, rdzv.h).  A JOIN that would create a job is refused with
 * ERROR beyond max-jobs open jobs, or, on an engine without an auth key,
 * beyond max-jobs-per-address jobs created from the peer's address.  A
 * job whose agents all left (no node connected) is forgotten after
 * job-orphan-timeout, however long the keep-alive window its first JOIN
 * asked for; a job with a connected node never expires.  Each bite is
 * logged, at most once a second, with the number not logged since.
 */
#include <sys/queue.h>

#include <stdio.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include "errbuf.h"
#include "log.h"
#include "rdzv.h"
#include "rdzv_impl.h"

#define JOB_BOUND_MAX_JOBS		4096
#define JOB_BOUND_MAX_JOBS_PER_ADDR	64
#define JOB_BOUND_ORPHAN_MS		60000

/* Fill limits with the defaults. */
void
rdzv_limits_default(struct rdzv_limits *l)
{
	l->max_jobs = JOB_BOUND_MAX_JOBS;
	l->max_jobs_per_addr = JOB_BOUND_MAX_JOBS_PER_ADDR;
	l->orphan_ms = JOB_BOUND_ORPHAN_MS;
}

/* Set the engine's limits. */
void
rdzv_set_limits(struct rdzv *r, const struct rdzv_limits *l)
{
	r->lim = *l;
}

/* Is a rate-limited log line due?  Counts the ones held back in *quiet. */
static int
job_bound_log_due(time_t *last, uint64_t *quiet)
{
	time_t now = time(NULL);

	if (now == *last) {
		(*quiet)++;
		return 0;
	}
	*last = now;
	return 1;
}

/* Jobs created from address addr. */
static size_t
job_bound_count(const struct rdzv *r, const char *addr)
{
	const struct job *j;
	size_t n = 0;

	TAILQ_FOREACH(j, &r->jobs, entry)
		n += strcmp(j->owner, addr) == 0;
	return n;
}

/*
 * May peer p create a job?  Sets owner to its address ("" when unknown).
 * NULL: yes; else the reason (in why), logged at most once a second.
 */
const char *
job_bound_admit(struct rdzv_peer *p, char *owner, size_t len, char *why,
    size_t whylen)
{
	struct rdzv *r = p->r;
	const char *a = NULL;

	if (r->io.addr != NULL)
		a = r->io.addr(p->conn, owner, len);
	if (a == NULL)
		owner[0] = '\0';
	if (r->lim.max_jobs != 0 && r->njobs >= r->lim.max_jobs)
		errbuf_set(why, whylen, "too many jobs: max-jobs=%zu reached",
		    r->lim.max_jobs);
	else if (r->key == NULL && owner[0] != '\0' &&
	    r->lim.max_jobs_per_addr != 0 &&
	    job_bound_count(r, owner) >= r->lim.max_jobs_per_addr)
		errbuf_set(why, whylen, "too many jobs from %s: "
		    "max-jobs-per-address=%zu reached", owner,
		    r->lim.max_jobs_per_addr);
	else
		return NULL;
	r->stats.jobs_refused++;
	if (job_bound_log_due(&r->refused_logged, &r->refused_quiet)) {
		log_warnx("rdzv: job refused: %s (refused=%llu, %llu not "
		    "logged since)", why,
		    (unsigned long long)r->stats.jobs_refused,
		    (unsigned long long)r->refused_quiet);
		r->refused_quiet = 0;
	}
	return why;
}

/* job-orphan-timeout passed with no agent connected: forget the job. */
static void
job_bound_orphan_cb(evutil_socket_t fd, short what, void *arg)
{
	struct job *j = arg;
	struct rdzv *r = j->r;

	r->stats.jobs_orphaned++;
	if (job_bound_log_due(&r->orphan_logged, &r->orphan_quiet)) {
		log_warnx("rdzv job=%s forgotten: no agent connected for %u ms "
		    "(job-orphan-timeout; orphaned=%llu, %llu not logged since)",
		    j->run_id, r->lim.orphan_ms,
		    (unsigned long long)r->stats.jobs_orphaned,
		    (unsigned long long)r->orphan_quiet);
		r->orphan_quiet = 0;
	}
	job_free(j);
}

/* After a node connected or lost its connection: arm the orphan timer
 * when no node of j is connected, else disarm it. */
void
job_bound_orphan_check(struct job *j)
{
	const struct node *n;
	struct timeval tv;

	if (j->r->lim.orphan_ms == 0)
		return;
	if (j->orphan_timer == NULL && (j->orphan_timer = evtimer_new(
	    j->r->base, job_bound_orphan_cb, j)) == NULL)
		return;		/* out of memory: keep-alive still bounds it */
	TAILQ_FOREACH(n, &j->nodes, entry)
		if (n->peer != NULL) {
			evtimer_del(j->orphan_timer);
			return;
		}
	if (!evtimer_pending(j->orphan_timer, NULL)) {
		tv = ms_tv(j->r->lim.orphan_ms);
		evtimer_add(j->orphan_timer, &tv);
	}
}

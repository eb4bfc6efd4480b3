/*
 * fuzz_hostlist.c: libFuzzer target for Slurm's list formats
 * (launcher/slurm/hostlist.c, tasks_per_node.c) and the step reading that
 * uses them (launcher/slurm/slurm.c).  The first byte picks a host index
 * and a buffer size; the rest is a node list (and, after a NUL, a
 * tasks-per-node value).  Checked beyond crashes: count, nth and the
 * iterator agree on every answer (OK or ERROR, and each host's name); a
 * name fits HOSTLIST_NAME_MAX; an error always says why.  With the pick
 * byte's top bit set, the two are also a step's SLURM_STEP_NODELIST and
 * SLURM_STEP_TASKS_PER_NODE for slurm_read(): it answers a usage error with
 * a reason, or an endpoint and the run id "7.1".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostlist.h"
#include "log.h"
#include "slurm.h"
#include "tasks_per_node.h"

#define FH_WALK_MAX	256	/* hosts compared with nth per input */

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Abort (a finding) unless cond holds. */
static void
fh_assert(int cond)
{
	if (!cond)
		abort();
}

/* Walk the list with the iterator; every host must equal nth's. */
static void
fh_walk(const char *s, size_t len, size_t count, int ok)
{
	struct hostlist_iter it;
	char a[HOSTLIST_NAME_MAX + 1], b[HOSTLIST_NAME_MAX + 1], err[256];
	size_t n = 0;
	int r;

	hostlist_iter_init(&it, s, len);
	err[0] = '\0';
	while (n < FH_WALK_MAX && (r = hostlist_next(&it, a, sizeof(a), err,
	    sizeof(err))) == 1) {
		fh_assert(strlen(a) <= HOSTLIST_NAME_MAX && strlen(a) > 0);
		fh_assert(hostlist_nth(s, len, n, b, sizeof(b), err,
		    sizeof(err)) == HOSTLIST_OK == ok);
		fh_assert(!ok || strcmp(a, b) == 0);
		n++;
	}
	if (n < FH_WALK_MAX && ok) {
		fh_assert(r == 0 && n == count);
		fh_assert(hostlist_nth(s, len, n, b, sizeof(b), err,
		    sizeof(err)) == HOSTLIST_ERROR && err[0] != '\0');
	}
	if (n < FH_WALK_MAX && !ok)
		fh_assert(r == -1 && err[0] != '\0');
}

/* One node list: count, a few nth, the walk. */
static void
fh_list(const char *s, size_t len, uint8_t pick)
{
	char host[HOSTLIST_NAME_MAX + 1], err[256] = "";
	size_t count, n, buflen = 1 + pick % 64;
	int ok;

	ok = hostlist_count(s, len, &count, err, sizeof(err)) == HOSTLIST_OK;
	fh_assert(ok || err[0] != '\0');
	fh_assert(!ok || count <= HOSTLIST_HOSTS_MAX);
	n = ok && count > 0 ? (size_t)pick * 257 % count : pick;
	if (hostlist_nth(s, len, n, host, buflen, err, sizeof(err)) ==
	    HOSTLIST_OK)
		fh_assert(ok && strlen(host) < buflen);
	else
		fh_assert(err[0] != '\0');
	fh_walk(s, len, count, ok);
}

/* Drop log lines (slurm_read warns about values it does not use). */
static void
fh_sink(int level, const char *line, void *arg)
{
	(void)level;
	(void)line;
	(void)arg;
}

/* A step of job 7 whose node list and task counts are the input. */
static void
fh_step(const char *list, size_t len, const char *tpn, size_t tpnlen,
    uint8_t pick)
{
	static char l[HOSTLIST_INPUT_MAX + 2], t[HOSTLIST_INPUT_MAX + 2];
	struct slurm_info si;
	char err[512] = "", id[4];

	if (len > HOSTLIST_INPUT_MAX + 1 || tpnlen > HOSTLIST_INPUT_MAX + 1)
		return;
	memcpy(l, list, len);
	l[len] = '\0';
	memcpy(t, tpn, tpnlen);
	t[tpnlen] = '\0';
	log_set_sink(fh_sink, NULL);
	setenv("SLURM_JOB_ID", "7", 1);
	setenv("SLURM_STEP_ID", "1", 1);
	setenv("SLURM_STEP_NODELIST", l, 1);
	setenv("SLURM_STEP_TASKS_PER_NODE", t, 1);
	snprintf(id, sizeof(id), "%d", pick & 3);
	setenv("SLURM_NODEID", id, 1);
	if (slurm_read(&si, err, sizeof(err)) == -1) {
		fh_assert(err[0] != '\0');
		return;
	}
	fh_assert(si.in_step && strcmp(si.run_id, "7.1") == 0);
	fh_assert(si.endpoint[0] != '\0' && si.nnodes >= 1 &&
	    si.node_id < si.nnodes && si.tasks_here <= 1);
}

/* libFuzzer entry: pick byte, node list, NUL, tasks-per-node value. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data + 1, *nul, *tpn = "";
	size_t len, tpnlen = 0;
	char err[128] = "";
	int tasks;

	if (size < 1)
		return 0;
	len = size - 1;
	if ((nul = memchr(s, '\0', len)) != NULL) {
		if (tasks_per_node_at(nul + 1, len - (size_t)(nul - s) - 1,
		    data[0], &tasks, err, sizeof(err)) == 0)
			fh_assert(tasks >= 1 &&
			    tasks <= TASKS_PER_NODE_TASKS_MAX);
		else
			fh_assert(err[0] != '\0');
		tpn = nul + 1;
		tpnlen = len - (size_t)(nul - s) - 1;
		len = (size_t)(nul - s);
	}
	fh_list(s, len, data[0]);
	if (data[0] & 0x80)
		fh_step(s, len, tpn, tpnlen, data[0]);
	return 0;
}

/*
 * helper_scenarios.c: the scenario runner (helper_scenarios.h).  It plays
 * a scenario's steps on a harness, keeps what each node was told in
 * arrival order, and checks each expectation against the next thing its
 * node was told: kind, round, group rank and size, rank base, world, the
 * job store, restarts spent, the words (with {x} standing for node x's
 * name as the backend writes it) and the exit status.  Every wait has a
 * deadline that says what it waited for.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "helper_scenarios.h"

struct scn_seen {
	enum scn_kind		 kind;
	struct round_info	 ri;
	int			 status;
	char			 text[SCN_TEXT];
};

struct scn_run {
	const struct scenario	*s;
	const struct scn_harness *h;
	void			*hh;
	char			 run_id[96];
	struct scn_seen		 seen[SCN_NODES][SCN_SEEN];
	int			 nseen[SCN_NODES], used[SCN_NODES];
	int			 joined[SCN_NODES], left[SCN_NODES];
	int			 over[SCN_NODES], overflow[SCN_NODES];
	char			*err;
	size_t			 errlen;
};

static const char *const kind_names[] = { "ROUND", "RESTART", "FAILED",
	"FINISHED" };

/* The node of s named name, or -1. */
int
scn_node(const struct scenario *s, const char *name)
{
	int i;

	for (i = 0; i < SCN_NODES && s->nodes[i].name != NULL; i++)
		if (strcmp(s->nodes[i].name, name) == 0)
			return i;
	return -1;
}

/* Node i's host. */
const char *
scn_host(const struct scenario *s, int i)
{
	return s->nodes[i].host != NULL ? s->nodes[i].host : s->nodes[i].name;
}

/* A harness saw node told something (see helper_scenarios.h). */
void
scn_saw(struct scn_run *run, int node, enum scn_kind kind,
    const struct round_info *ri, int status, const char *text)
{
	struct scn_seen *w;

	if (node < 0 || node >= SCN_NODES)
		return;
	if (kind == SCN_SAW_FAILED || kind == SCN_SAW_FINISHED)
		run->over[node] = 1;
	if (run->nseen[node] == SCN_SEEN) {
		run->overflow[node] = 1;
		return;
	}
	w = &run->seen[node][run->nseen[node]++];
	memset(w, 0, sizeof(*w));
	w->kind = kind;
	if (ri != NULL)
		w->ri = *ri;
	w->status = status;
	snprintf(w->text, sizeof(w->text), "%s", text != NULL ? text : "");
}

/* Say what went wrong; always -1. */
static int
scn_fail(struct scn_run *run, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int
scn_fail(struct scn_run *run, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(run->err, run->errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* Seconds since a monotonic start. */
static double
scn_since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t0->tv_sec) +
	    (double)(now.tv_nsec - t0->tv_nsec) / 1e9;
}

/* Describe one observation (for a mismatch). */
static const char *
scn_describe(const struct scn_seen *w, char *buf, size_t len)
{
	if (w->kind == SCN_SAW_ROUND)
		snprintf(buf, len, "ROUND %u: group rank %d of %d, ranks from "
		    "%d of %d, restarts %d, store %s:%d", w->ri.round,
		    w->ri.group_rank, w->ri.group_world_size, w->ri.rank_base,
		    w->ri.world_size, w->ri.restart_count, w->ri.master_addr,
		    w->ri.master_port);
	else
		snprintf(buf, len, "%s (status %d) \"%s\"",
		    kind_names[w->kind], w->status, w->text);
	return buf;
}

/* Does got match want, where {x} in want stands for node x's name? */
static int
scn_text_match(struct scn_run *run, const char *want, const char *got)
{
	char name[32];
	const char *close;
	size_t n;
	int i;

	while (*want != '\0') {
		if (*want == '{' && (close = strchr(want, '}')) != NULL &&
		    (size_t)(close - want) < sizeof(name)) {
			snprintf(name, sizeof(name), "%.*s",
			    (int)(close - want - 1), want + 1);
			if ((i = scn_node(run->s, name)) < 0 ||
			    (n = run->h->name_at(run->hh, i, got)) == 0)
				return 0;
			got += n;
			want = close + 1;
		} else if (*want++ != *got++)
			return 0;
	}
	return *got == '\0';
}

/* The words of an observation without the agent's prefix ("new
 * rendezvous round N: ", "rendezvous RUN_ID: "); NULL without it. */
static const char *
scn_words(const struct scn_run *run, const struct scn_seen *w)
{
	const char *p = w->text;
	size_t n;

	if (w->kind == SCN_SAW_RESTART) {
		if (strncmp(p, "new rendezvous round ", 21) != 0)
			return NULL;
		p += 21;
		if ((n = strspn(p, "0123456789")) == 0 ||
		    strncmp(p + n, ": ", 2) != 0)
			return NULL;
		return p + n + 2;
	}
	n = strlen(run->run_id);
	if (strncmp(p, "rendezvous ", 11) != 0 ||
	    strncmp(p + 11, run->run_id, n) != 0 ||
	    strncmp(p + 11 + n, ": ", 2) != 0)
		return NULL;
	return p + 11 + n + 2;
}

/* Wait until cond(run, arg) holds, at most SCN_WAIT_SECS. */
static int
scn_wait(struct scn_run *run, int (*cond)(struct scn_run *, int), int arg,
    const char *what)
{
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!cond(run, arg)) {
		if (scn_since(&t0) > SCN_WAIT_SECS)
			return scn_fail(run, "waited %d s for %s", SCN_WAIT_SECS,
			    what);
		run->h->turn(run->hh);
	}
	return 0;
}

/* Node i was told something not yet checked. */
static int
scn_has_news(struct scn_run *run, int i)
{
	return run->nseen[i] > run->used[i];
}

/* The rendezvous knows n nodes. */
static int
scn_knows(struct scn_run *run, int n)
{
	return run->h->known(run->hh) == n;
}

/* The rendezvous sees node i's connection down. */
static int
scn_sees_offline(struct scn_run *run, int i)
{
	return run->h->offline(run->hh, i);
}

/* The nodes of a "who" list; their number, or -1 (an unknown name). */
static int
scn_who(struct scn_run *run, const char *who, int *out)
{
	char buf[256], *tok, *save = NULL;
	int n = 0;

	snprintf(buf, sizeof(buf), "%s", who != NULL ? who : "");
	for (tok = strtok_r(buf, " ", &save); tok != NULL && n < SCN_NODES;
	    tok = strtok_r(NULL, " ", &save))
		if ((out[n++] = scn_node(run->s, tok)) < 0)
			return scn_fail(run, "no node %s in the scenario", tok);
	return n;
}

/* Node i's ROUND is place g of the members m[0..nm). */
static int
scn_check_round(struct scn_run *run, const struct scn_step *st,
    const struct scn_seen *w, const int *m, int nm, int g)
{
	const struct round_info *ri = &w->ri;
	int k, base = 0, world = 0;

	for (k = 0; k < nm; k++) {
		base += k < g ? run->s->nodes[m[k]].nproc : 0;
		world += run->s->nodes[m[k]].nproc;
	}
	return w->kind == SCN_SAW_ROUND && ri->round == (unsigned)st->n &&
	    ri->restart_count == st->r && ri->group_rank == g &&
	    ri->group_world_size == nm && ri->rank_base == base &&
	    ri->world_size == world &&
	    strcmp(ri->master_addr, scn_host(run->s, m[0])) == 0 &&
	    ri->master_port == SCN_STORE_PORT + m[0];
}

/* Does observation w meet expectation st for the node at place g? */
static int
scn_meets(struct scn_run *run, const struct scn_step *st,
    const struct scn_seen *w, const int *m, int nm, int g)
{
	const char *words;

	switch (st->op) {
	case SCN_ROUND:
		return scn_check_round(run, st, w, m, nm, g);
	case SCN_RESTART:
		return w->kind == SCN_SAW_RESTART &&
		    (words = scn_words(run, w)) != NULL &&
		    (st->text == NULL || scn_text_match(run, st->text, words));
	case SCN_FAILED:
		return w->kind == SCN_SAW_FAILED && w->status == st->n &&
		    (words = scn_words(run, w)) != NULL &&
		    scn_text_match(run, st->text, words);
	default:
		return w->kind == SCN_SAW_FINISHED;
	}
}

/* An expectation: each node it names was told this next. */
static int
scn_expect(struct scn_run *run, const struct scn_step *st)
{
	static const char *const ops[] = { [SCN_ROUND] = "ROUND",
	    [SCN_RESTART] = "RESTART", [SCN_FAILED] = "FAILED",
	    [SCN_FINISHED] = "FINISHED" };
	int m[SCN_NODES], nm, g;
	const struct scn_seen *w;
	char what[128], got[SCN_TEXT + 128];

	if ((nm = scn_who(run, st->who, m)) < 0)
		return -1;
	for (g = 0; g < nm; g++) {
		snprintf(what, sizeof(what), "node %s to be told %s",
		    run->s->nodes[m[g]].name, ops[st->op]);
		if (scn_wait(run, scn_has_news, m[g], what) == -1)
			return -1;
		w = &run->seen[m[g]][run->used[m[g]]++];
		if (!scn_meets(run, st, w, m, nm, g))
			return scn_fail(run, "node %s: expected %s %d%s%s%s, "
			    "was told %s", run->s->nodes[m[g]].name,
			    ops[st->op], st->n, st->text ? " \"" : "",
			    st->text ? st->text : "", st->text ? "\"" : "",
			    scn_describe(w, got, sizeof(got)));
	}
	return 0;
}

/* One action on node who (its index, or -1 with the error said). */
static int
scn_actor(struct scn_run *run, const struct scn_step *st)
{
	int i = scn_node(run->s, st->who != NULL ? st->who : "");

	if (i < 0)
		return scn_fail(run, "no node %s in the scenario",
		    st->who != NULL ? st->who : "(none)");
	return i;
}

/* One step. */
static int
scn_step(struct scn_run *run, const struct scn_step *st)
{
	char what[96];
	int i = 0;

	if (st->op >= SCN_JOIN && st->op <= SCN_HEAL && st->op != SCN_KNOWN &&
	    (i = scn_actor(run, st)) < 0)
		return -1;
	switch (st->op) {
	case SCN_JOIN:
		run->joined[i] = 1;
		return run->h->join(run->hh, i, run->err, run->errlen);
	case SCN_KNOWN:
		snprintf(what, sizeof(what), "the rendezvous to know %d "
		    "node(s)", st->n);
		return scn_wait(run, scn_knows, st->n, what);
	case SCN_FAIL:
		run->h->failed(run->hh, i, st->text);
		return 0;
	case SCN_DONE:
		run->h->done(run->hh, i);
		return 0;
	case SCN_LEAVE:
		run->left[i] = 1;
		run->h->leave(run->hh, i);
		return 0;
	case SCN_CUT:
		run->h->cut(run->hh, i);
		snprintf(what, sizeof(what), "the rendezvous to see node %s's "
		    "connection down", st->who);
		return scn_wait(run, scn_sees_offline, i, what);
	case SCN_HEAL:
		run->h->heal(run->hh, i);
		return 0;
	default:
		return scn_expect(run, st);
	}
}

/* The end: every node left or was told the job is over, and was told
 * nothing more than expected. */
static int
scn_end(struct scn_run *run)
{
	char got[SCN_TEXT + 128];
	int i;

	for (i = 0; i < SCN_NODES && run->s->nodes[i].name != NULL; i++) {
		if (run->overflow[i])
			return scn_fail(run, "node %s was told more than %d "
			    "things", run->s->nodes[i].name, SCN_SEEN);
		if (run->joined[i] && !run->left[i] && !run->over[i])
			return scn_fail(run, "node %s is still in the job at "
			    "the end (a scenario ends the job)",
			    run->s->nodes[i].name);
		if (run->used[i] < run->nseen[i])
			return scn_fail(run, "node %s was also told %s",
			    run->s->nodes[i].name, scn_describe(
			    &run->seen[i][run->used[i]], got, sizeof(got)));
	}
	return 0;
}

/* Run scenario s on harness h (see helper_scenarios.h). */
int
scn_play(const struct scenario *s, const struct scn_harness *h, char *err,
    size_t len)
{
	static unsigned plays;
	struct scn_run *run;
	int k, rc = 0;

	if (s->needs_connection && !h->connection_facts) {
		snprintf(err, len, "%s has no connection facts", h->name);
		return 1;
	}
	if ((run = calloc(1, sizeof(*run))) == NULL) {
		snprintf(err, len, "out of memory");
		return -1;
	}
	run->s = s;
	run->h = h;
	run->err = err;
	run->errlen = len;
	snprintf(run->run_id, sizeof(run->run_id), "scn-%d-%u-%ld-%s",
	    (int)getpid(), plays++, (long)time(NULL), s->name);
	if ((run->hh = h->open(s, run->run_id, run, err, len)) == NULL) {
		free(run);
		return -1;
	}
	for (k = 0; k < SCN_STEPS && s->steps[k].op != SCN_END && rc == 0; k++)
		rc = scn_step(run, &s->steps[k]);
	if (rc == 0)
		rc = scn_end(run);
	else
		snprintf(err + strlen(err), len - strlen(err), " (at step %d)",
		    k);
	h->close(run->hh);
	free(run);
	return rc;
}

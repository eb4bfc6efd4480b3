/*
 * etcd_value.c: the JSON values of the etcd rendezvous' keys (the state
 * key, a node's key; etcd_round.h), encoded with json-c and parsed back
 * with a bound on every field: the values come from etcd, where any
 * client of the cluster could have written them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "errbuf.h"
#include "etcd_limits.h"
#include "etcd_round.h"

/* Add an unsigned field. */
static void
add_u(json_object *o, const char *k, uint32_t v)
{
	json_object_object_add(o, k, json_object_new_int64(v));
}

/* Add a string field. */
static void
add_s(json_object *o, const char *k, const char *v)
{
	json_object_object_add(o, k, json_object_new_string(v));
}

/* o as a malloc'ed string, and o freed. */
static char *
finish(json_object *o)
{
	char *s;

	if (o == NULL)
		return NULL;
	s = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	return s;
}

/* The state key's value. */
char *
er_state_json(const struct er_state *s)
{
	json_object *o = json_object_new_object(), *a, *m;
	size_t i;

	add_u(o, "round", s->round);
	add_s(o, "phase", er_phase_name(s->phase));
	add_u(o, "restarts", s->restarts);
	add_u(o, "max_restarts", s->max_restarts);
	add_u(o, "min", s->min);
	add_u(o, "max", s->max);
	add_u(o, "started", (uint32_t)s->started);
	a = json_object_new_array();
	for (i = 0; i < s->nmembers; i++) {
		m = json_object_new_object();
		add_s(m, "id", s->members[i].id);
		add_u(m, "nproc", s->members[i].nproc);
		json_object_array_add(a, m);
	}
	json_object_object_add(o, "members", a);
	add_s(o, "addr", s->addr);
	add_u(o, "port", s->port);
	add_u(o, "world", s->world);
	add_s(o, "why", s->why);
	add_s(o, "culprit", s->culprit);
	return finish(o);
}

/* A node key's value. */
char *
er_node_json(const struct er_node *n)
{
	json_object *o = json_object_new_object();

	add_s(o, "host", n->host);
	add_u(o, "nproc", n->nproc);
	add_s(o, "addr", n->addr);
	add_u(o, "port", n->port);
	add_u(o, "round", n->round);
	add_s(o, "st", er_st_name(n->st));
	if (n->node_rank >= 0)
		add_u(o, "node_rank", (uint32_t)n->node_rank);
	if (n->st == ER_FAILED_ST && n->why[0] != '\0')
		add_s(o, "why", n->why);
	return finish(o);
}

/* An unsigned field in 0..max; -1 if absent or out of range. */
static int
get_u(json_object *o, const char *k, uint32_t max, uint32_t *out)
{
	json_object *v;
	int64_t n;

	if (!json_object_object_get_ex(o, k, &v) ||
	    !json_object_is_type(v, json_type_int))
		return -1;
	n = json_object_get_int64(v);
	if (n < 0 || n > max)
		return -1;
	*out = (uint32_t)n;
	return 0;
}

/* A string field of at most len - 1 bytes (no NUL inside); -1 if not. */
static int
get_s(json_object *o, const char *k, char *dst, size_t len)
{
	json_object *v;
	size_t n;

	if (!json_object_object_get_ex(o, k, &v) ||
	    !json_object_is_type(v, json_type_string))
		return -1;
	n = (size_t)json_object_get_string_len(v);
	if (n >= len || memchr(json_object_get_string(v), '\0', n) != NULL)
		return -1;
	memcpy(dst, json_object_get_string(v), n + 1);
	return 0;
}

/* A field naming a phase (st 0: er_phase_name) or a node state (st 1:
 * er_st_name): its number, or -1. */
static int
get_name(json_object *o, const char *k, int st)
{
	char b[32];
	int i, n = st ? ER__STS : ER__PHASES;

	if (get_s(o, k, b, sizeof(b)) == -1)
		return -1;
	for (i = 0; i < n; i++)
		if (strcmp(b, st ? er_st_name((enum er_st)i) :
		    er_phase_name((enum er_phase)i)) == 0)
			return i;
	return -1;
}

/* Parse a JSON object of at most ETCD_VALUE_MAX bytes; NULL with err. */
static json_object *
parse_obj(const char *buf, size_t len, char *err, size_t errlen)
{
	json_tokener *tok;
	json_object *o = NULL;

	if (len > ETCD_VALUE_MAX || (tok = json_tokener_new_ex(8)) == NULL) {
		errbuf_set(err, errlen, "value too long");
		return NULL;
	}
	o = json_tokener_parse_ex(tok, buf, (int)len);
	if (o == NULL || json_tokener_get_error(tok) != json_tokener_success ||
	    json_tokener_get_parse_end(tok) != len ||
	    !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		o = NULL;
		errbuf_set(err, errlen, "value is not a JSON object");
	}
	json_tokener_free(tok);
	return o;
}

/* The members array of the state. */
static int
get_members(json_object *o, struct er_state *s)
{
	json_object *a, *m;
	size_t i;

	if (!json_object_object_get_ex(o, "members", &a) ||
	    !json_object_is_type(a, json_type_array) ||
	    json_object_array_length(a) > ER_NODES_MAX)
		return -1;
	s->nmembers = json_object_array_length(a);
	for (i = 0; i < s->nmembers; i++) {
		m = json_object_array_get_idx(a, i);
		if (!json_object_is_type(m, json_type_object) ||
		    get_s(m, "id", s->members[i].id, sizeof(s->members[i].id))
		    == -1 || get_u(m, "nproc", 1u << 20,
		    &s->members[i].nproc) == -1)
			return -1;
	}
	return 0;
}

/* Parse the state key's value. */
int
er_state_parse(const char *buf, size_t len, struct er_state *s,
    char *err, size_t errlen)
{
	json_object *o = parse_obj(buf, len, err, errlen);
	uint32_t started = 0;
	int p, bad;

	if (o == NULL)
		return -1;
	memset(s, 0, sizeof(*s));
	p = get_name(o, "phase", 0);
	bad = p == -1 || get_u(o, "round", UINT32_MAX, &s->round) ||
	    get_u(o, "restarts", UINT32_MAX, &s->restarts) ||
	    get_u(o, "max_restarts", UINT32_MAX, &s->max_restarts) ||
	    get_u(o, "min", ER_NODES_MAX, &s->min) ||
	    get_u(o, "max", ER_NODES_MAX, &s->max) ||
	    get_u(o, "started", 1, &started) || get_members(o, s) ||
	    get_s(o, "addr", s->addr, sizeof(s->addr)) ||
	    get_u(o, "port", 65535, &s->port) ||
	    get_u(o, "world", UINT32_MAX, &s->world) ||
	    get_s(o, "why", s->why, sizeof(s->why)) ||
	    get_s(o, "culprit", s->culprit, sizeof(s->culprit)) ||
	    s->min < 1 || s->max < s->min || s->nmembers > s->max;
	json_object_put(o);
	if (bad)
		return errbuf_set(err, errlen, "the state key's value is not "
		    "cgrun's");
	s->phase = (enum er_phase)p;
	s->started = (int)started;
	s->exists = 1;
	return 0;
}

/* Parse a node key's value. */
int
er_node_parse(const char *buf, size_t len, struct er_node *n,
    char *err, size_t errlen)
{
	json_object *o = parse_obj(buf, len, err, errlen);
	uint32_t nr = 0;
	int st, bad;

	if (o == NULL)
		return -1;
	memset(n, 0, sizeof(*n));
	n->node_rank = -1;
	if (json_object_object_get_ex(o, "node_rank", NULL)) {
		if (get_u(o, "node_rank", 1u << 20, &nr) == -1) {
			json_object_put(o);
			return errbuf_set(err, errlen, "a node key's node_rank "
			    "is not a node rank");
		}
		n->node_rank = (int32_t)nr;
	}
	st = get_name(o, "st", 1);
	bad = st == -1 || get_s(o, "host", n->host, sizeof(n->host)) ||
	    (json_object_object_get_ex(o, "why", NULL) &&
	    get_s(o, "why", n->why, sizeof(n->why))) ||
	    get_u(o, "nproc", 1u << 20, &n->nproc) ||
	    get_s(o, "addr", n->addr, sizeof(n->addr)) ||
	    get_u(o, "port", 65535, &n->port) ||
	    get_u(o, "round", UINT32_MAX, &n->round) || n->nproc == 0;
	json_object_put(o);
	if (bad)
		return errbuf_set(err, errlen, "a node key's value is not "
		    "cgrun's");
	n->st = (enum er_st)st;
	return 0;
}

/*
 * etcd_json.c: bounded parsers of the etcd v3 JSON gateway's answers (see
 * etcd_json.h) and base64.  Every answer is checked against etcd_limits.h
 * before anything is allocated: its size, its nesting, the number of
 * key-values, and the decoded size of each key and value.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <openssl/evp.h>

#include "errbuf.h"
#include "etcd_json.h"

/* base64 of n bytes (OpenSSL's encoder: no line breaks). */
int
etcd_b64(char *dst, size_t dstlen, const void *src, size_t n)
{
	if (dstlen < 4 * ((n + 2) / 3) + 1 || n > ETCD_BODY_MAX)
		return -1;
	EVP_EncodeBlock((unsigned char *)dst, src, (int)n);
	return 0;
}

/* Decode base64 into at most max bytes plus a NUL; the length, or -1. */
long
etcd_unb64(char *dst, size_t max, const char *src, size_t n)
{
	unsigned char *tmp;
	size_t pad = 0;
	int m;

	if (n % 4 != 0 || n / 4 * 3 > max + 2)
		return -1;
	if (n == 0) {
		dst[0] = '\0';
		return 0;
	}
	if (src[n - 1] == '=')
		pad = src[n - 2] == '=' ? 2 : 1;
	if (n / 4 * 3 - pad > max || (tmp = malloc(n / 4 * 3 + 1)) == NULL)
		return -1;
	m = EVP_DecodeBlock(tmp, (const unsigned char *)src, (int)n);
	if (m < 0 || (size_t)m != n / 4 * 3) {
		free(tmp);
		return -1;
	}
	memcpy(dst, tmp, (size_t)m - pad);
	dst[m - pad] = '\0';
	free(tmp);
	return (long)((size_t)m - pad);
}

/* An int64 field written as a string or a number; absent: 0. */
static int
j_int(json_object *o, const char *k, int64_t *out)
{
	json_object *v;
	const char *s;
	char *end;

	*out = 0;
	if (o == NULL || !json_object_object_get_ex(o, k, &v) || v == NULL)
		return 0;
	if (json_object_is_type(v, json_type_int)) {
		*out = json_object_get_int64(v);
		return 0;
	}
	if (!json_object_is_type(v, json_type_string))
		return -1;
	s = json_object_get_string(v);
	errno = 0;
	*out = strtoll(s, &end, 10);
	return (errno != 0 || end == s || *end != '\0') ? -1 : 0;
}

/* A member of type t, or NULL. */
static json_object *
j_get(json_object *o, const char *k, json_type t)
{
	json_object *v;

	if (o == NULL || !json_object_object_get_ex(o, k, &v) || v == NULL ||
	    !json_object_is_type(v, t))
		return NULL;
	return v;
}

/* A boolean member (absent: 0). */
static int
j_bool(json_object *o, const char *k)
{
	json_object *v = j_get(o, k, json_type_boolean);

	return v != NULL && json_object_get_boolean(v);
}

/* Copy a string member, cut to len - 1 bytes. */
static void
j_str(json_object *o, const char *k, char *dst, size_t len)
{
	json_object *v = j_get(o, k, json_type_string);

	snprintf(dst, len, "%s", v ? json_object_get_string(v) : "");
}

/* One {"key","value","create_revision","mod_revision","lease"} object. */
static int
kv_parse(json_object *o, struct etcd_kv *kv, char *err, size_t errlen)
{
	json_object *k = j_get(o, "key", json_type_string);
	json_object *v = j_get(o, "value", json_type_string);
	const char *vs = v ? json_object_get_string(v) : "";
	size_t vn = v ? (size_t)json_object_get_string_len(v) : 0;
	long n;

	if (k == NULL || (n = etcd_unb64(kv->key, ETCD_KEY_MAX,
	    json_object_get_string(k), (size_t)json_object_get_string_len(k)))
	    < 0)
		return errbuf_set(err, errlen, "a key is missing, too long or "
		    "not base64");
	kv->keylen = (size_t)n;
	if ((kv->value = malloc(vn / 4 * 3 + 1)) == NULL ||
	    (n = etcd_unb64(kv->value, ETCD_VALUE_MAX, vs, vn)) < 0)
		return errbuf_set(err, errlen, "a value is too long or not "
		    "base64");
	kv->vlen = (size_t)n;
	if (j_int(o, "create_revision", &kv->create_rev) == -1 ||
	    j_int(o, "mod_revision", &kv->mod_rev) == -1 ||
	    j_int(o, "lease", &kv->lease) == -1)
		return errbuf_set(err, errlen, "a revision is not a number");
	return 0;
}

/* An array of key-values, or of watch events ({"type","kv"}). */
static int
kvs_parse(json_object *a, int events, struct etcd_reply *r, char *err,
    size_t errlen)
{
	size_t i, n = json_object_array_length(a);
	json_object *e, *t;

	if (n > ETCD_KVS_MAX)
		return errbuf_set(err, errlen, "too many key-values in one "
		    "answer");
	if (n == 0)
		return 0;
	if ((r->kvs = calloc(n, sizeof(*r->kvs))) == NULL)
		return errbuf_set(err, errlen, "out of memory");
	for (i = 0; i < n; i++, r->nkvs++) {
		e = json_object_array_get_idx(a, i);
		if (events) {
			t = j_get(e, "type", json_type_string);
			r->kvs[i].deleted = t != NULL &&
			    strcmp(json_object_get_string(t), "DELETE") == 0;
			e = j_get(e, "kv", json_type_object);
		}
		if (e == NULL || !json_object_is_type(e, json_type_object))
			return errbuf_set(err, errlen, "a key-value is not an "
			    "object");
		if (kv_parse(e, &r->kvs[i], err, errlen) == -1) {
			r->nkvs++;	/* its value may be allocated */
			return -1;
		}
	}
	return 0;
}

/* The key-values of a range, of a txn's first range, or of watch events. */
static int
reply_kvs(json_object *o, struct etcd_reply *r, char *err, size_t errlen)
{
	json_object *a, *resp, *kvs;
	size_t i;

	if ((a = j_get(o, "kvs", json_type_array)) != NULL)
		return kvs_parse(a, 0, r, err, errlen);
	if ((a = j_get(o, "events", json_type_array)) != NULL)
		return kvs_parse(a, 1, r, err, errlen);
	if ((a = j_get(o, "responses", json_type_array)) == NULL)
		return 0;
	for (i = 0; i < json_object_array_length(a) && i < ETCD_KVS_MAX; i++) {
		resp = j_get(json_object_array_get_idx(a, i), "response_range",
		    json_type_object);
		kvs = j_get(resp, "kvs", json_type_array);
		if (kvs != NULL)
			return kvs_parse(kvs, 0, r, err, errlen);
	}
	return 0;
}

/* The fields of one answer object (unwrapped). */
static int
reply_fields(json_object *o, struct etcd_reply *r, char *err,
    size_t errlen)
{
	json_object *eo;
	int64_t code;

	if ((eo = j_get(o, "error", json_type_object)) != NULL ||
	    j_get(o, "error", json_type_string) != NULL ||
	    j_get(o, "code", json_type_int) != NULL) {
		if (eo != NULL)	/* a stream's {"error":{"grpc_code"}} */
			o = eo;
		if (j_int(o, eo ? "grpc_code" : "code", &code) == -1 ||
		    code < 0 || code > 1000)
			return errbuf_set(err, errlen, "an error code is not a "
			    "number");
		r->code = code == 0 ? 2 : (int)code;	/* 2: UNKNOWN */
		j_str(o, "message", r->message, sizeof(r->message));
		return 0;
	}
	if (j_int(j_get(o, "header", json_type_object), "revision",
	    &r->revision) == -1 || j_int(o, "ID", &r->lease_id) == -1 ||
	    j_int(o, "TTL", &r->ttl) == -1 ||
	    j_int(o, "compact_revision", &r->compact_revision) == -1)
		return errbuf_set(err, errlen, "a number field is not a "
		    "number");
	r->succeeded = j_bool(o, "succeeded");
	r->created = j_bool(o, "created");
	r->canceled = j_bool(o, "canceled");
	j_str(o, "token", r->token, sizeof(r->token));
	return reply_kvs(o, r, err, errlen);
}

/*
 * What is wrong with the answer as JSON (len bytes at buf, parsed by
 * tok into o), or NULL when it is one object and nothing else.
 */
static const char *
etcd_json_wrong(const char *buf, size_t len, json_tokener *tok,
    json_object *o)
{
	size_t end = json_tokener_get_parse_end(tok);

	if (o == NULL || json_tokener_get_error(tok) != json_tokener_success)
		return o == NULL && json_tokener_get_error(tok) ==
		    json_tokener_continue ? "answer cut short" :
		    json_tokener_error_desc(json_tokener_get_error(tok));
	while (end < len && strchr(" \t\r\n", buf[end]))
		end++;
	if (end != len)
		return "bytes after the answer";
	if (!json_object_is_type(o, json_type_object))
		return "answer is not a JSON object";
	return NULL;
}

/* Parse one gateway answer (see etcd_json.h). */
int
etcd_json_parse(const char *buf, size_t len, struct etcd_reply *r,
    char *err, size_t errlen)
{
	json_tokener *tok;
	json_object *o, *res;
	const char *wrong;
	int rc;

	memset(r, 0, sizeof(*r));
	if (len > ETCD_BODY_MAX)
		return errbuf_set(err, errlen, "answer longer than 1 MiB");
	if ((tok = json_tokener_new_ex(ETCD_JSON_DEPTH)) == NULL)
		return errbuf_set(err, errlen, "out of memory");
	o = json_tokener_parse_ex(tok, buf, (int)len);
	wrong = etcd_json_wrong(buf, len, tok, o);
	json_tokener_free(tok);
	if (wrong != NULL) {
		json_object_put(o);
		return errbuf_set(err, errlen, "%s", wrong);
	}
	res = j_get(o, "result", json_type_object);
	rc = reply_fields(res ? res : o, r, err, errlen);
	json_object_put(o);
	if (rc == -1)
		etcd_reply_clear(r);
	return rc == -1 ? ETCD_JSON_ERROR : ETCD_JSON_OK;
}

/* Free what a parsed answer holds. */
void
etcd_reply_clear(struct etcd_reply *r)
{
	size_t i;

	for (i = 0; i < r->nkvs; i++)
		free(r->kvs[i].value);
	free(r->kvs);
	r->kvs = NULL;
	r->nkvs = 0;
}

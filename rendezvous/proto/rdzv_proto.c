/*
 * rdzv_proto.c: the one codec of native rendezvous frames, driven by a
 * table of fields per op (rdzv_proto.h, docs/protocol.md).
 */
#include <stddef.h>
#include <string.h>

#include "errbuf.h"
#include "le.h"
#include "rdzv_proto.h"

enum ftype { F_U8, F_U16, F_U32, F_I32, F_STR };

struct field {
	enum ftype	type;
	size_t		off;		/* offset in struct rdzv_msg */
	uint32_t	max;		/* string bytes, or largest value */
};

#define U8(f, mx)	{ F_U8, offsetof(struct rdzv_msg, f), mx }
#define U16(f)		{ F_U16, offsetof(struct rdzv_msg, f), 0xFFFF }
#define U32(f, mx)	{ F_U32, offsetof(struct rdzv_msg, f), mx }
#define I32(f)		{ F_I32, offsetof(struct rdzv_msg, f), 0 }
#define STR(f, mx)	{ F_STR, offsetof(struct rdzv_msg, f), mx }
#define ANY		0xFFFFFFFFu
#define FIELDS_MAX	16

struct opdesc {
	uint8_t		op;
	const char	*name;
	int		nfields;
	struct field	f[FIELDS_MAX];
};

static const struct opdesc opdescs[] = {
	{ RDZV_OP_HELLO, "HELLO", 1, { U16(version) } },
	{ RDZV_OP_JOIN, "JOIN", 16, {
	    STR(run_id, RDZV_RUNID_MAX), STR(host, RDZV_HOST_MAX),
	    U32(pid, ANY), U32(local_id, ANY),
	    U32(nproc, RDZV_NPROC_MAX), I32(node_rank),
	    U32(min_nodes, RDZV_NODES_MAX), U32(max_nodes, RDZV_NODES_MAX),
	    U32(max_restarts, ANY),
	    U32(join_timeout_ms, RDZV_TIMEOUT_MAX),
	    U32(last_call_ms, RDZV_TIMEOUT_MAX),
	    U32(close_ms, RDZV_TIMEOUT_MAX),
	    U32(keepalive_ms, RDZV_TIMEOUT_MAX), U32(keepalive_max, 1000),
	    STR(addr, RDZV_ADDR_MAX), U16(port) } },
	{ RDZV_OP_KEEPALIVE, "KEEPALIVE", 0, { { F_U8, 0, 0 } } },
	{ RDZV_OP_FAILED, "FAILED", 1, { STR(text, RDZV_TEXT_MAX) } },
	{ RDZV_OP_STOPPED, "STOPPED", 0, { { F_U8, 0, 0 } } },
	{ RDZV_OP_DONE, "DONE", 0, { { F_U8, 0, 0 } } },
	{ RDZV_OP_LEAVE, "LEAVE", 0, { { F_U8, 0, 0 } } },
	{ RDZV_OP_AUTH, "AUTH", 2, {
	    STR(nonce, RDZV_NONCE_MAX), STR(proof, RDZV_NONCE_MAX) } },
	{ RDZV_OP_SPENT, "SPENT", 1, { U32(restart_count, ANY) } },
	{ RDZV_OP_RESUME, "RESUME", 10, {
	    U32(round, ANY), U32(restart_count, ANY), I32(group_rank),
	    U32(group_world_size, ANY), U32(rank_base, ANY),
	    U32(world_size, ANY), STR(addr, RDZV_ADDR_MAX), U16(port),
	    U8(workers, RDZV_WORKERS_MAX), STR(text, RDZV_TEXT_MAX) } },
	{ RDZV_OP_WELCOME, "WELCOME", 1, { U16(version) } },
	{ RDZV_OP_STATUS, "STATUS", 6, {
	    U32(round, ANY), U32(joined, ANY), U32(min_nodes, ANY),
	    U32(max_nodes, ANY), U32(last_call_ms, ANY), U8(role, 1) } },
	{ RDZV_OP_ROUND, "ROUND", 8, {
	    U32(round, ANY), I32(group_rank), U32(group_world_size, ANY),
	    U32(rank_base, ANY), U32(world_size, ANY),
	    U32(restart_count, ANY), STR(addr, RDZV_ADDR_MAX), U16(port) } },
	{ RDZV_OP_RESTART, "RESTART", 2, {
	    U32(round, ANY), STR(text, RDZV_TEXT_MAX) } },
	{ RDZV_OP_FINISHED, "FINISHED", 0, { { F_U8, 0, 0 } } },
	{ RDZV_OP_FAIL, "FAIL", 2, {
	    U8(reason, 255), STR(text, RDZV_TEXT_MAX) } },
	{ RDZV_OP_ERROR, "ERROR", 1, { STR(text, RDZV_TEXT_MAX) } },
	{ RDZV_OP_CHALLENGE, "CHALLENGE", 1, { STR(nonce, RDZV_NONCE_MAX) } },
	{ RDZV_OP_AUTHOK, "AUTHOK", 1, { STR(proof, RDZV_NONCE_MAX) } },
};

/* The table entry of op, or NULL. */
static const struct opdesc *
opdesc_find(uint8_t op)
{
	size_t i;

	for (i = 0; i < sizeof(opdescs) / sizeof(opdescs[0]); i++)
		if (opdescs[i].op == op)
			return &opdescs[i];
	return NULL;
}

/* The op's name, or NULL for an unknown op. */
const char *
rdzv_proto_opname(uint8_t op)
{
	const struct opdesc *d = opdesc_find(op);

	return d ? d->name : NULL;
}

/* Fill m with a zeroed message of op. */
void
rdzv_proto_init(struct rdzv_msg *m, uint8_t op)
{
	memset(m, 0, sizeof(*m));
	m->op = op;
	m->node_rank = RDZV_NO_NODE_RANK;
}

/* Load a fixed-width field of 1, 2 or 4 bytes (le.h). */
static uint32_t
field_load(const unsigned char *p, int width)
{
	if (width == 1)
		return p[0];
	return width == 2 ? le_get_u16(p) : le_get_u32(p);
}

/* Store a fixed-width field of 1, 2 or 4 bytes (le.h). */
static void
field_store(unsigned char *p, uint32_t v, int width)
{
	if (width == 1)
		p[0] = (unsigned char)v;
	else if (width == 2)
		le_put_u16(p, (uint16_t)v);
	else
		le_put_u32(p, v);
}

/* Bounds-checked reading cursor over one frame's fields. */
struct cur {
	const unsigned char *p;
	size_t		left;
};

/* Take n bytes from the cursor, or NULL when fewer remain. */
static const unsigned char *
cur_take(struct cur *c, size_t n)
{
	const unsigned char *p = c->p;

	if (c->left < n)
		return NULL;
	c->p += n;
	c->left -= n;
	return p;
}

/* Decode one field into m; 0, or -1 with err set. */
static int
field_decode(struct cur *c, const struct field *f, struct rdzv_msg *m,
    char *err, size_t errlen)
{
	char *dst = (char *)m + f->off;
	static const int width[] = { 1, 2, 4, 4 };
	const unsigned char *p;
	uint32_t v, n;

	if (f->type == F_STR) {
		if ((p = cur_take(c, 2)) == NULL)
			return errbuf_set(err, errlen, "truncated string "
			    "length");
		if ((n = le_get_u16(p)) > f->max)
			return errbuf_set(err, errlen, "string longer than its "
			    "maximum");
		if ((p = cur_take(c, n)) == NULL)
			return errbuf_set(err, errlen, "truncated string");
		if (memchr(p, '\0', n) != NULL)
			return errbuf_set(err, errlen, "NUL byte in a string");
		memcpy(dst, p, n);
		dst[n] = '\0';
		return 0;
	}
	if ((p = cur_take(c, width[f->type])) == NULL)
		return errbuf_set(err, errlen, "truncated field");
	v = field_load(p, width[f->type]);
	switch (f->type) {
	case F_U8:
		if (v > f->max)
			return errbuf_set(err, errlen, "field over its "
			    "maximum");
		*(uint8_t *)dst = (uint8_t)v;
		break;
	case F_U16:
		*(uint16_t *)dst = (uint16_t)v;
		break;
	case F_U32:
		if (v > f->max)
			return errbuf_set(err, errlen, "field over its "
			    "maximum");
		*(uint32_t *)dst = v;
		break;
	default:
		*(int32_t *)dst = (int32_t)v;
		break;
	}
	return 0;
}

/* A frame is malformed: why into err; RDZV_PROTO_ERROR. */
static int
proto_error(char *err, size_t errlen, const char *why)
{
	errbuf_set(err, errlen, "%s", why);
	return RDZV_PROTO_ERROR;
}

/*
 * Decode one frame from buf[0..len): OK with *m and *used, MORE when the
 * frame is not complete yet, ERROR with err set.  Pure function: the same
 * bytes always give the same answer, however they were split.
 */
int
rdzv_proto_decode(const void *buf, size_t len, struct rdzv_msg *m,
    size_t *used, char *err, size_t errlen)
{
	const unsigned char *b = buf;
	const struct opdesc *d;
	struct cur c;
	uint32_t flen;
	int i;

	if (len < 4)
		return RDZV_PROTO_MORE;
	flen = le_get_u32(b);
	if (flen < 1)
		return proto_error(err, errlen, "empty frame");
	if (flen > RDZV_FRAME_MAX)
		return proto_error(err, errlen,
		    "frame longer than RDZV_FRAME_MAX");
	if (len < 5)
		return RDZV_PROTO_MORE;
	if ((d = opdesc_find(b[4])) == NULL)
		return proto_error(err, errlen, "unknown op");
	if (len < 4 + (size_t)flen)
		return RDZV_PROTO_MORE;
	rdzv_proto_init(m, b[4]);
	c.p = b + 5;
	c.left = flen - 1;
	for (i = 0; i < d->nfields; i++)
		if (field_decode(&c, &d->f[i], m, err, errlen) == -1)
			return RDZV_PROTO_ERROR;
	if (c.left != 0)
		return proto_error(err, errlen, "bytes after the last field");
	*used = 4 + (size_t)flen;
	return RDZV_PROTO_OK;
}

/* Encode one field at buf+*pos (cap bytes); 0, or -1. */
static int
field_encode(const struct field *f, const struct rdzv_msg *m,
    unsigned char *buf, size_t cap, size_t *pos)
{
	const char *src = (const char *)m + f->off;
	static const int width[] = { 1, 2, 4, 4 };
	uint32_t v;
	size_t n;

	if (f->type == F_STR) {
		n = strnlen(src, (size_t)f->max + 1);
		if (n > f->max || *pos + 2 + n > cap)
			return -1;
		le_put_u16(buf + *pos, (uint16_t)n);
		memcpy(buf + *pos + 2, src, n);
		*pos += 2 + n;
		return 0;
	}
	switch (f->type) {
	case F_U8:	v = *(const uint8_t *)src; break;
	case F_U16:	v = *(const uint16_t *)src; break;
	case F_U32:	v = *(const uint32_t *)src; break;
	default:	v = (uint32_t)*(const int32_t *)src; break;
	}
	if (f->type != F_I32 && v > f->max)
		return -1;
	if (*pos + (size_t)width[f->type] > cap)
		return -1;
	field_store(buf + *pos, v, width[f->type]);
	*pos += width[f->type];
	return 0;
}

/* Encode m into buf; the frame's length, or -1. */
ssize_t
rdzv_proto_encode(const struct rdzv_msg *m, void *buf, size_t cap)
{
	const struct opdesc *d;
	unsigned char *b = buf;
	size_t pos = 5;
	int i;

	if ((d = opdesc_find(m->op)) == NULL || cap < 5)
		return -1;
	for (i = 0; i < d->nfields; i++)
		if (field_encode(&d->f[i], m, b, cap, &pos) == -1)
			return -1;
	if (pos - 4 > RDZV_FRAME_MAX)
		return -1;
	le_put_u32(b, (uint32_t)(pos - 4));
	b[4] = m->op;
	return (ssize_t)pos;
}

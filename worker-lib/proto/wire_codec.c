/*
 * wire_codec.c: the shared half of the TCPStore codec (wire_codec.h): the
 * one table of operations (name, request layout), the one table of opcode
 * bytes per dialect, and the request encoder the client uses.  The
 * server's parser (rendezvous/proto/wire_parse.c) reads the same tables.
 */
#include <stdint.h>
#include <string.h>

#include "le.h"
#include "wire_codec.h"

/* One operation: its name and the fields of its request (at most one
 * list, always last). */
struct wire_opdesc {
	const char	*name;
	uint8_t		 layout[WIRE_FIELDS_MAX];
};

static const struct wire_opdesc wire_ops[WOP__COUNT] = {
	[WOP_VALIDATE]		= { "VALIDATE", { WF_U32 } },
	[WOP_SET]		= { "SET", { WF_KEY, WF_VAL } },
	[WOP_COMPARE_SET]	= { "COMPARE_SET", { WF_KEY, WF_VAL, WF_VAL2 } },
	[WOP_GET]		= { "GET", { WF_KEY } },
	[WOP_ADD]		= { "ADD", { WF_KEY, WF_I64 } },
	[WOP_CHECK]		= { "CHECK", { WF_KEYS } },
	[WOP_WAIT]		= { "WAIT", { WF_KEYS } },
	[WOP_GETNUMKEYS]	= { "GETNUMKEYS", { WF_END } },
	[WOP_WATCH_KEY]		= { "WATCH_KEY", { WF_KEY } },
	[WOP_DELETE_KEY]	= { "DELETE_KEY", { WF_KEY } },
	[WOP_APPEND]		= { "APPEND", { WF_KEY, WF_VAL } },
	[WOP_MULTI_GET]		= { "MULTI_GET", { WF_KEYS } },
	[WOP_MULTI_SET]		= { "MULTI_SET", { WF_PAIRS } },
	[WOP_CANCEL_WAIT]	= { "CANCEL_WAIT", { WF_END } },
	[WOP_PING]		= { "PING", { WF_U32 } },
	[WOP_QUEUE_PUSH]	= { "QUEUE_PUSH", { WF_KEY, WF_VAL } },
	[WOP_QUEUE_POP]		= { "QUEUE_POP", { WF_KEY } },
	[WOP_QUEUE_LEN]		= { "QUEUE_LEN", { WF_KEY } },
	[WOP_LIST_KEYS]		= { "LIST_KEYS", { WF_END } },
	[WOP_BARRIER]		= { "BARRIER", { WF_KEY, WF_I64 } },
};

/* torch 1.13 opcode bytes to operations (the server's lookup is O(1);
 * the client's reverse lookup scans). */
static const int8_t wire_v1_ops[] = {
	[V1_SET] = WOP_SET, [V1_COMPARE_SET] = WOP_COMPARE_SET,
	[V1_GET] = WOP_GET, [V1_ADD] = WOP_ADD, [V1_CHECK] = WOP_CHECK,
	[V1_WAIT] = WOP_WAIT, [V1_GETNUMKEYS] = WOP_GETNUMKEYS,
	[V1_WATCH_KEY] = WOP_WATCH_KEY, [V1_DELETE_KEY] = WOP_DELETE_KEY,
};

/* torch 2.x opcode bytes to operations. */
static const int8_t wire_v2_ops[] = {
	[V2_VALIDATE] = WOP_VALIDATE, [V2_SET] = WOP_SET,
	[V2_COMPARE_SET] = WOP_COMPARE_SET, [V2_GET] = WOP_GET,
	[V2_ADD] = WOP_ADD, [V2_CHECK] = WOP_CHECK, [V2_WAIT] = WOP_WAIT,
	[V2_GETNUMKEYS] = WOP_GETNUMKEYS, [V2_DELETE_KEY] = WOP_DELETE_KEY,
	[V2_APPEND] = WOP_APPEND, [V2_MULTI_GET] = WOP_MULTI_GET,
	[V2_MULTI_SET] = WOP_MULTI_SET, [V2_CANCEL_WAIT] = WOP_CANCEL_WAIT,
	[V2_PING] = WOP_PING, [V2_QUEUE_PUSH] = WOP_QUEUE_PUSH,
	[V2_QUEUE_POP] = WOP_QUEUE_POP, [V2_QUEUE_LEN] = WOP_QUEUE_LEN,
	[V2_LIST_KEYS] = WOP_LIST_KEYS, [V2_BARRIER] = WOP_BARRIER,
};

/* Output cursor of the encoder: counts every byte, writes those that fit. */
struct wire_out {
	uint8_t		*p;
	size_t		 cap;
	size_t		 len;	/* SIZE_MAX once the count overflowed */
};

/* Whether op is a known operation. */
static int
wire_op_valid(enum wire_op op)
{
	return (int)op >= 0 && op < WOP__COUNT;
}

/* Name of an operation for logs and metrics ("?" when out of range). */
const char *
wire_op_name(enum wire_op op)
{
	return wire_op_valid(op) ? wire_ops[op].name : "?";
}

/* The opcode table of dialect d (*n entries), or NULL. */
static const int8_t *
wire_codes(enum wire_dialect d, size_t *n)
{
	if (d == WIRE_V1) {
		*n = sizeof(wire_v1_ops);
		return wire_v1_ops;
	}
	if (d == WIRE_V2) {
		*n = sizeof(wire_v2_ops);
		return wire_v2_ops;
	}
	*n = 0;
	return NULL;
}

/* Operation of an opcode byte in dialect d, or WOP_INVALID. */
enum wire_op
wire_op_of_code(enum wire_dialect d, uint8_t code)
{
	const int8_t *ops;
	size_t n;

	if ((ops = wire_codes(d, &n)) == NULL || code >= n)
		return WOP_INVALID;
	return (enum wire_op)ops[code];
}

/* Opcode byte of op in dialect d, or -1. */
int
wire_op_code(enum wire_dialect d, enum wire_op op)
{
	const int8_t *ops;
	size_t code, n;

	if (!wire_op_valid(op) || (ops = wire_codes(d, &n)) == NULL)
		return -1;
	for (code = 0; code < n; code++)
		if (ops[code] == (int8_t)op)
			return (int)code;
	return -1;
}

/* The op's request layout (an empty one when out of range). */
const uint8_t *
wire_op_layout(enum wire_op op)
{
	static const uint8_t none[WIRE_FIELDS_MAX] = { WF_END };

	return wire_op_valid(op) ? wire_ops[op].layout : none;
}

/* Append n bytes (counted always, written when they fit). */
static void
wire_out_bytes(struct wire_out *o, const void *p, size_t n)
{
	if (n > SIZE_MAX - o->len) {
		o->len = SIZE_MAX;
		return;
	}
	if (n > 0 && o->len + n <= o->cap)
		memcpy(o->p + o->len, p, n);
	o->len += n;
}

/* Append a little-endian u64. */
static void
wire_out_u64(struct wire_out *o, uint64_t v)
{
	uint8_t b[8];

	le_put_u64(b, v);
	wire_out_bytes(o, b, sizeof(b));
}

/* Append a u64 length then the bytes. */
static void
wire_out_str(struct wire_out *o, const void *p, size_t n)
{
	wire_out_u64(o, n);
	wire_out_bytes(o, p, n);
}

/* Append a key as torch's client sends it: "/" [prefix "/"] key. */
static void
wire_out_key(struct wire_out *o, const char *prefix, const char *key)
{
	size_t n = 1 + strlen(key);

	if (prefix != NULL)
		n += strlen(prefix) + 1;
	wire_out_u64(o, n);
	wire_out_bytes(o, "/", 1);
	if (prefix != NULL) {
		wire_out_bytes(o, prefix, strlen(prefix));
		wire_out_bytes(o, "/", 1);
	}
	wire_out_bytes(o, key, strlen(key));
}

/* Append a u64 count then count keys (pairs: each followed by its value). */
static void
wire_out_list(struct wire_out *o, const struct wire_request *r, int pairs)
{
	size_t i;

	wire_out_u64(o, r->count);
	for (i = 0; i < r->count; i++) {
		wire_out_key(o, r->prefix, r->keys[i]);
		if (pairs)
			wire_out_str(o, r->vals[i], r->lens[i]);
	}
}

/* Append one field of kind f from r. */
static void
wire_out_field(struct wire_out *o, const struct wire_request *r, int f)
{
	uint8_t b[4];

	switch (f) {
	case WF_KEY:
		wire_out_key(o, r->prefix, r->key);
		break;
	case WF_VAL:
		wire_out_str(o, r->val, r->val_len);
		break;
	case WF_VAL2:
		wire_out_str(o, r->val2, r->val2_len);
		break;
	case WF_I64:
		wire_out_u64(o, (uint64_t)r->num);
		break;
	case WF_U32:
		le_put_u32(b, r->u32);
		wire_out_bytes(o, b, sizeof(b));
		break;
	case WF_KEYS:
	case WF_PAIRS:
		wire_out_list(o, r, f == WF_PAIRS);
		break;
	}
}

/*
 * Encode one request of dialect d into out (cap bytes).  Contract: pure;
 * returns the whole request's length (0: no such op in d) and has written
 * it only if that is at most cap; never writes past cap.
 */
size_t
wire_encode(enum wire_dialect d, const struct wire_request *r, uint8_t *out,
    size_t cap)
{
	struct wire_out o = { out, cap, 0 };
	const uint8_t *layout;
	int code, i;
	uint8_t op;

	if ((code = wire_op_code(d, r->op)) < 0)
		return 0;
	op = (uint8_t)code;
	wire_out_bytes(&o, &op, 1);
	layout = wire_op_layout(r->op);
	for (i = 0; i < WIRE_FIELDS_MAX && layout[i] != WF_END; i++)
		wire_out_field(&o, r, layout[i]);
	return o.len;
}

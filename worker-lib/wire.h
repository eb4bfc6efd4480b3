/*
 * wire.h: TCPStore wire protocol constants shared by the server
 * (rendezvous/) and the client (worker-lib/store.c).  The specification is
 * docs/tcpstore-protocol.md's summary of torch's protocol: two dialects,
 * torch 1.13 (no handshake) and torch 2.x (VALIDATE + PING), host byte
 * order (little-endian), keys and values as u64 length + bytes.
 *
 * Internal header: not installed.
 */
#ifndef CGRUN_WIRE_H
#define CGRUN_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define WIRE_MAGIC		0x3C85F7CEu	/* VALIDATE payload (2.x) */

/* Dialect of one connection, chosen from its first bytes. */
enum wire_dialect {
	WIRE_UNKNOWN = 0,
	WIRE_V1,	/* torch 1.13: no handshake, WATCH_KEY */
	WIRE_V2,	/* torch 2.x: VALIDATE first, PING, APPEND, MULTI_*, ... */
	WIRE_NATIVE	/* cgrun rendezvous protocol (docs/protocol.md) */
};

/* Operations, numbered independently of either dialect. */
enum wire_op {
	WOP_VALIDATE, WOP_SET, WOP_COMPARE_SET, WOP_GET, WOP_ADD, WOP_CHECK,
	WOP_WAIT, WOP_GETNUMKEYS, WOP_WATCH_KEY, WOP_DELETE_KEY, WOP_APPEND,
	WOP_MULTI_GET, WOP_MULTI_SET, WOP_CANCEL_WAIT, WOP_PING,
	WOP_QUEUE_PUSH, WOP_QUEUE_POP, WOP_QUEUE_LEN, WOP_LIST_KEYS,
	WOP_BARRIER,
	WOP__COUNT,
	WOP_INVALID = -1
};

/* Opcode bytes of torch 1.13. */
enum wire_v1_code {
	V1_SET = 0, V1_COMPARE_SET = 1, V1_GET = 2, V1_ADD = 3, V1_CHECK = 4,
	V1_WAIT = 5, V1_GETNUMKEYS = 6, V1_WATCH_KEY = 7, V1_DELETE_KEY = 8
};

/* Opcode bytes of torch 2.x (QUEUE_* 2.8+, LIST_KEYS/BARRIER later). */
enum wire_v2_code {
	V2_VALIDATE = 0, V2_SET = 1, V2_COMPARE_SET = 2, V2_GET = 3,
	V2_ADD = 4, V2_CHECK = 5, V2_WAIT = 6, V2_GETNUMKEYS = 7,
	V2_DELETE_KEY = 8, V2_APPEND = 9, V2_MULTI_GET = 10, V2_MULTI_SET = 11,
	V2_CANCEL_WAIT = 12, V2_PING = 13, V2_QUEUE_PUSH = 14,
	V2_QUEUE_POP = 15, V2_QUEUE_LEN = 16, V2_LIST_KEYS = 17, V2_BARRIER = 18
};

/* One-byte response codes. */
#define WIRE_CHECK_READY	0
#define WIRE_CHECK_NOT_READY	1
#define WIRE_WAIT_STOP		0	/* STOP_WAITING */
#define WIRE_WAIT_CANCELED	1	/* WAIT_CANCELED (2.x) */
#define WIRE_WATCH_UPDATED	0
#define WIRE_WATCH_CREATED	1
#define WIRE_WATCH_DELETED	2
#define WIRE_WATCH_REGISTERED	3

/* First bytes of a native (cgrun rendezvous) connection. */
#define WIRE_NATIVE_MAGIC	"CGRN"
#define WIRE_NATIVE_MAGIC_LEN	4

#endif /* CGRUN_WIRE_H */

/*
 * fuzz_rdzv.c: libFuzzer target for the rendezvous engine
 * (rendezvous/engine/) behind its frame decoder: up to four peers of one
 * fresh engine receive fuzzed bytes.  The input is a list of records
 * [ctl][len][len bytes]: ctl's low two bits pick the peer; bit 7 first
 * closes that peer's connection (a new one takes its place); bit 6 turns
 * the event loop once; bit 5 of the first record's ctl makes the engine
 * require authentication (protocol version 2, a fixed token).  Every
 * message the engine sends must encode.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "auth.h"
#include "rdzv.h"

#define FR_PEERS	4

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Abort (a finding) unless cond holds. */
static void
fr_assert(int cond)
{
	if (!cond)
		abort();
}

/* Transport: whatever the engine sends must be a valid frame. */
static void
fr_send(void *conn, const struct rdzv_msg *m, void *arg)
{
	unsigned char buf[4 + RDZV_FRAME_MAX];

	fr_assert(conn != NULL);
	fr_assert(rdzv_proto_encode(m, buf, sizeof(buf)) > 0);
}

/* libFuzzer entry: one session of up to four peers on a fresh engine. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct rdzv_io io = { fr_send, NULL };
	static struct event_base *base;
	static char conns[FR_PEERS];
	struct rdzv_peer *peer[FR_PEERS] = { NULL };
	struct evbuffer *in[FR_PEERS] = { NULL };
	struct auth_key key;
	struct rdzv *r;
	size_t off = 0, len;
	int i, ctl;

	if (base == NULL && (base = event_base_new()) == NULL)
		abort();
	if ((r = rdzv_new(base, &io, NULL)) == NULL)
		abort();
	if (size > 0 && (data[0] & 0x20)) {
		memset(&key, 0, sizeof(key));
		memcpy(key.bytes, "fuzz-token-0123456789", 21);
		key.len = 21;
		if (rdzv_set_auth(r, &key) == -1)
			abort();
	}
	for (i = 0; i < FR_PEERS; i++)
		if ((in[i] = evbuffer_new()) == NULL)
			abort();
	while (off + 2 <= size) {
		ctl = data[off];
		len = data[off + 1];
		off += 2;
		if (len > size - off)
			len = size - off;
		i = ctl & (FR_PEERS - 1);
		if ((ctl & 0x80) && peer[i] != NULL) {
			rdzv_peer_gone(peer[i]);
			peer[i] = NULL;
			evbuffer_drain(in[i], evbuffer_get_length(in[i]));
		}
		if (peer[i] == NULL && (peer[i] = rdzv_peer_new(r, &conns[i])) == NULL)
			abort();
		evbuffer_add(in[i], data + off, len);
		off += len;
		if (rdzv_peer_input(peer[i], in[i]) == -1) {
			rdzv_peer_gone(peer[i]);
			peer[i] = NULL;
			evbuffer_drain(in[i], evbuffer_get_length(in[i]));
		}
		if (ctl & 0x40)
			event_base_loop(base, EVLOOP_NONBLOCK);
	}
	for (i = 0; i < FR_PEERS; i++) {
		if (peer[i] != NULL)
			rdzv_peer_gone(peer[i]);
		evbuffer_free(in[i]);
	}
	rdzv_free(r);
	return 0;
}

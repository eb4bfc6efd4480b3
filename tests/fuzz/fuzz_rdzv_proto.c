/*
 * fuzz_rdzv_proto.c: libFuzzer target for the native rendezvous frame
 * codec (rendezvous/proto/rdzv_proto.c).  Decodes a stream of frames; every
 * frame decoded OK must encode back to exactly the same bytes, and every
 * shorter prefix of it must decode as MORE (never OK, never ERROR).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rdzv_proto.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Abort (a finding) unless cond holds. */
static void
fp_assert(int cond)
{
	if (!cond)
		abort();
}

/* A prefix of a complete frame is never a frame nor an error. */
static void
fp_prefix(const uint8_t *buf, size_t plen)
{
	struct rdzv_msg m;
	char why[RDZV_PROTO_ERRLEN];
	size_t used = 0;

	fp_assert(rdzv_proto_decode(buf, plen, &m, &used, why, sizeof(why)) ==
	    RDZV_PROTO_MORE);
}

/* libFuzzer entry: a stream of frames, each round-tripped. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static unsigned char out[4 + RDZV_FRAME_MAX + 64];
	struct rdzv_msg m;
	char why[RDZV_PROTO_ERRLEN];
	unsigned char *small;
	size_t off = 0, used, p;
	ssize_t n;
	int rc, frames;

	for (frames = 0; off < size && frames < 1000; frames++) {
		used = 0;
		why[0] = '\0';
		rc = rdzv_proto_decode(data + off, size - off, &m, &used, why,
		    sizeof(why));
		if (rc == RDZV_PROTO_ERROR) {
			fp_assert(why[0] != '\0');
			break;
		}
		if (rc == RDZV_PROTO_MORE)
			break;
		fp_assert(rc == RDZV_PROTO_OK);
		fp_assert(used >= 5 && used <= size - off);
		fp_assert(rdzv_proto_opname(m.op) != NULL);
		n = rdzv_proto_encode(&m, out, sizeof(out));
		fp_assert(n == (ssize_t)used);
		fp_assert(memcmp(out, data + off, used) == 0);
		for (p = 0; p < used && p < 8; p++)
			fp_prefix(data + off, p);
		fp_prefix(data + off, used - 1);
		fp_prefix(data + off, used / 2);
		/* an encoder with too little room refuses, never overflows */
		if ((small = malloc(used - 1)) != NULL) {
			fp_assert(rdzv_proto_encode(&m, small, used - 1) == -1);
			free(small);
		}
		off += used;
	}
	return 0;
}

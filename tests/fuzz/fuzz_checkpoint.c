/*
 * fuzz_checkpoint.c: libFuzzer target for checkpoint files
 * (worker-lib/checkpoint.c): the 64-byte header decoder (ckpt_format.h)
 * and loading a whole file from disk, whose bytes anything may have
 * written (a torn write, a truncated disk, another program).
 *
 * Input: one mode byte, then the file (header and payload).  Mode bit 0
 * rewrites the header through the encoder from the fields found in the
 * input (a valid header CRC, so the fuzzer reaches the length and payload
 * checks), bit 1 also puts the payload's real CRC in it, bit 2 files it
 * under step + 1 (a header naming another step).  Checked beyond crashes,
 * leaks and UB: a header that decodes re-encodes to the same 36 bytes of
 * fields (all 64 when its reserved bytes are zero); encoding any decoded
 * fields decodes back to them; cgrun_ckpt_load returns 1 exactly when
 * the header is valid, names the file's step, its length is the file's
 * and its CRC the payload's, and then returns that payload (with a NUL
 * after it); cgrun_ckpt_newest agrees.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgrun/checkpoint.h"
#include "ckpt_format.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Abort (a finding) unless cond holds. */
static void
fc_assert(int cond)
{
	if (!cond)
		abort();
}

/* A little-endian integer of n bytes (the fuzzer's own reader). */
static uint64_t
fc_le(const unsigned char *p, int n)
{
	uint64_t v = 0;

	while (n-- > 0)
		v = v << 8 | p[n];
	return v;
}

/* Header checks that need no file: decode/encode agree both ways. */
static int
fc_header(const unsigned char *hdr, struct ckpt_hdr *h)
{
	unsigned char again[CKPT_HDRLEN], zero[24] = { 0 };
	struct ckpt_hdr back;

	if (ckpt_hdr_decode(hdr, h) == -1)
		return -1;
	fc_assert(h->step == fc_le(hdr + 16, 8) && h->len == fc_le(hdr + 24, 8) &&
	    h->crc == fc_le(hdr + 32, 4));
	ckpt_hdr_encode(again, h);
	fc_assert(memcmp(again, hdr, 36) == 0);
	if (memcmp(hdr + 36, zero, sizeof(zero)) == 0)
		fc_assert(memcmp(again, hdr, CKPT_HDRLEN) == 0);
	fc_assert(ckpt_hdr_decode(again, &back) == 0 && back.step == h->step &&
	    back.len == h->len && back.crc == h->crc);
	return 0;
}

/* Replace path's content with the header and payload. */
static void
fc_write(const char *path, const unsigned char *hdr, size_t hlen,
    const uint8_t *payload, size_t plen)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	fc_assert(fd != -1);
	fc_assert(write(fd, hdr, hlen) == (ssize_t)hlen);
	fc_assert(plen == 0 || write(fd, payload, plen) == (ssize_t)plen);
	close(fd);
}

static struct cgrun_ckpt *fc_ckpt;
static char fc_dir[64];

/* At exit: the set's directory goes (its one file was unlinked). */
static void
fc_cleanup(void)
{
	cgrun_ckpt_free(fc_ckpt);
	rmdir(fc_dir);
}

/* The checkpoint set all inputs go through (one per process, on tmpfs). */
static struct cgrun_ckpt *
fc_set(void)
{
	if (fc_ckpt != NULL)
		return fc_ckpt;
	snprintf(fc_dir, sizeof(fc_dir), "%s/cgrun-fuzz-ckpt.XXXXXX",
	    access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
	fc_assert(mkdtemp(fc_dir) != NULL);
	fc_ckpt = cgrun_ckpt_new(fc_dir, "f", 1000, NULL);
	fc_assert(fc_ckpt != NULL);
	atexit(fc_cleanup);
	return fc_ckpt;
}

/* libFuzzer entry: mode byte, then one checkpoint file. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char hdr[CKPT_HDRLEN];
	struct cgrun_ckpt *c = fc_set();
	struct ckpt_hdr h = { 0, 0, 0 };
	char path[512];
	const uint8_t *payload;
	uint64_t fstep, step = 0;
	size_t hlen, plen, len = 0;
	void *got = NULL;
	int mode, valid, rc;

	if (size < 1)
		return 0;
	mode = data[0];
	data++;
	size--;
	hlen = size < CKPT_HDRLEN ? size : CKPT_HDRLEN;
	memset(hdr, 0, sizeof(hdr));
	memcpy(hdr, data, hlen);
	payload = data + hlen;
	plen = size - hlen;
	if (mode & 1) {
		h.step = fc_le(hdr + 16, 8);
		h.len = fc_le(hdr + 24, 8);
		h.crc = (mode & 2) ? ckpt_crc(0, payload, plen) :
		    (uint32_t)fc_le(hdr + 32, 4);
		ckpt_hdr_encode(hdr, &h);
		hlen = CKPT_HDRLEN;
	}
	valid = hlen == CKPT_HDRLEN && fc_header(hdr, &h) == 0;
	fstep = valid ? h.step + ((mode & 4) != 0) : fc_le(hdr + 16, 8);
	fc_assert(cgrun_ckpt_path(c, fstep, path, sizeof(path)) == 0);
	fc_write(path, hdr, hlen, payload, plen);
	valid = valid && h.step == fstep && h.len == plen &&
	    h.crc == ckpt_crc(0, payload, plen);
	rc = cgrun_ckpt_load(c, CGRUN_CKPT_NEWEST, &step, &got, &len, NULL);
	fc_assert(rc == valid);
	if (rc == 1) {
		fc_assert(step == fstep && len == plen);
		fc_assert(memcmp(got, payload, plen) == 0 &&
		    ((char *)got)[plen] == '\0');
		free(got);
	}
	fc_assert(cgrun_ckpt_newest(c, CGRUN_CKPT_NEWEST, &step, NULL) == valid);
	unlink(path);
	return 0;
}

/*
 * ckpt_format.h: the checkpoint file header (worker-lib/checkpoint.c).
 * Files on disk are outside input (torn writes, other programs, bad
 * disks), so the header decoder is a pure function over its 64 bytes,
 * driven by tests/fuzz/fuzz_checkpoint.c.  Internal: nothing exported.
 *
 * Layout (all integers little-endian):
 *   0  magic "CGRUNCKP"        8 bytes
 *   8  version (1)             u32
 *  12  header length (64)      u32
 *  16  step                    u64
 *  24  payload length          u64
 *  32  payload CRC-32C         u32
 *  36  reserved (zero)         24 bytes
 *  60  header CRC-32C of 0..59 u32
 *  64  payload
 */
#ifndef CGRUN_CKPT_FORMAT_H
#define CGRUN_CKPT_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#define CKPT_MAGIC	"CGRUNCKP"
#define CKPT_VERSION	1
#define CKPT_HDRLEN	64

/* What a header says about its file. */
struct ckpt_hdr {
	uint64_t step, len;
	uint32_t crc;		/* CRC-32C of the payload */
};

/* Continue a CRC-32C (Castagnoli) over len bytes (start with crc 0). */
uint32_t ckpt_crc(uint32_t crc, const void *buf, size_t len);

/* Encode h into buf (CKPT_HDRLEN bytes): reserved zero, header CRC set. */
void	ckpt_hdr_encode(unsigned char *buf, const struct ckpt_hdr *h);

/*
 * Decode the CKPT_HDRLEN bytes at buf into *h: 0 if magic, version,
 * header length and header CRC are right (any step and length; reserved
 * bytes are covered by the CRC only), else -1 with *h untouched.
 */
int	ckpt_hdr_decode(const unsigned char *buf, struct ckpt_hdr *h);

#endif /* CGRUN_CKPT_FORMAT_H */

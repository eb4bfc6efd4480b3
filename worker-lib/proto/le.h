/*
 * le.h: the one little-endian helper of the tree: loads and stores of
 * 16, 32 and 64-bit unsigned integers at any (unaligned) address, byte by
 * byte, so the result is the same on any host.  Used by both protocol
 * codecs (TCPStore wire, native rendezvous), the store client and the
 * checkpoint header.  Internal header: not installed.
 */
#ifndef CGRUN_LE_H
#define CGRUN_LE_H

#include <stdint.h>

/* Load a little-endian u16. */
static inline uint16_t
le_get_u16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

/* Load a little-endian u32. */
static inline uint32_t
le_get_u32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24;
}

/* Load a little-endian u64. */
static inline uint64_t
le_get_u64(const uint8_t *p)
{
	return (uint64_t)le_get_u32(p) | (uint64_t)le_get_u32(p + 4) << 32;
}

/* Store a little-endian u16. */
static inline void
le_put_u16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

/* Store a little-endian u32. */
static inline void
le_put_u32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

/* Store a little-endian u64. */
static inline void
le_put_u64(uint8_t *p, uint64_t v)
{
	le_put_u32(p, (uint32_t)v);
	le_put_u32(p + 4, (uint32_t)(v >> 32));
}

#endif /* CGRUN_LE_H */

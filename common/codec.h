/* Explicit little-endian codec over bounded cursors. Everything iopulse puts
 * on the wire or on disk goes through these: a struct is never memcpy'd.
 *
 * Cursors carry a sticky error: once a put runs out of room or a get runs
 * past the end (or meets an overlong varint), every later call on that cursor
 * is a no-op (gets return 0) and the error stays, so a caller can encode or
 * decode a whole record and check once at the end.
 *
 * Varints are unsigned LEB128 (7 bits a byte, low group first, at most 10
 * bytes for 64 bits); signed values are zigzag-mapped first. */
#ifndef IOP_CODEC_H
#define IOP_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "err.h"

#define IOP_VARINT_MAX 10 /* bytes in the longest 64-bit varint */

struct iop_wcur {
	uint8_t *p;
	uint8_t *end;
	enum iop_err err; /* IOP_OK, or IOP_ERR_FULL once a put did not fit */
};

struct iop_rcur {
	const uint8_t *p;
	const uint8_t *end;
	enum iop_err err; /* IOP_OK, IOP_ERR_TRUNCATED or IOP_ERR_MALFORMED */
};

static inline struct iop_wcur iop_wcur_make(void *buf, size_t len)
{
	struct iop_wcur c = {(uint8_t *)buf, (uint8_t *)buf + len, IOP_OK};
	return c;
}

static inline struct iop_rcur iop_rcur_make(const void *buf, size_t len)
{
	struct iop_rcur c = {(const uint8_t *)buf, (const uint8_t *)buf + len, IOP_OK};
	return c;
}

static inline size_t iop_wcur_room(const struct iop_wcur *c)
{
	return (size_t)(c->end - c->p);
}

static inline size_t iop_rcur_left(const struct iop_rcur *c)
{
	return (size_t)(c->end - c->p);
}

static inline uint64_t iop_zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t iop_unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/* Bytes the varint encoding of v takes (1..10). */
static inline size_t iop_varint_len(uint64_t v)
{
	size_t n = 1;
	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

/* --- raw stores into memory the caller has already bounds-checked ---------- */

static inline void iop_store_u16le(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void iop_store_u32le(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static inline void iop_store_u64le(uint8_t *p, uint64_t v)
{
	iop_store_u32le(p, (uint32_t)v);
	iop_store_u32le(p + 4, (uint32_t)(v >> 32));
}

static inline uint16_t iop_load_u16le(const uint8_t *p)
{
	return (uint16_t)(p[0] | (uint16_t)p[1] << 8);
}

static inline uint32_t iop_load_u32le(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t iop_load_u64le(const uint8_t *p)
{
	return (uint64_t)iop_load_u32le(p) | (uint64_t)iop_load_u32le(p + 4) << 32;
}

/* Stores v as a varint at p, which must have IOP_VARINT_MAX bytes of room;
 * returns the byte after it. */
static inline uint8_t *iop_store_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

/* --- checked puts ------------------------------------------------------------ */

static inline bool iop_wcur_reserve(struct iop_wcur *c, size_t n)
{
	if (c->err != IOP_OK)
		return false;
	if (iop_wcur_room(c) < n) {
		c->err = IOP_ERR_FULL;
		return false;
	}
	return true;
}

static inline void iop_put_u8(struct iop_wcur *c, uint8_t v)
{
	if (iop_wcur_reserve(c, 1))
		*c->p++ = v;
}

static inline void iop_put_u16le(struct iop_wcur *c, uint16_t v)
{
	if (iop_wcur_reserve(c, 2)) {
		iop_store_u16le(c->p, v);
		c->p += 2;
	}
}

static inline void iop_put_u32le(struct iop_wcur *c, uint32_t v)
{
	if (iop_wcur_reserve(c, 4)) {
		iop_store_u32le(c->p, v);
		c->p += 4;
	}
}

static inline void iop_put_u64le(struct iop_wcur *c, uint64_t v)
{
	if (iop_wcur_reserve(c, 8)) {
		iop_store_u64le(c->p, v);
		c->p += 8;
	}
}

static inline void iop_put_varint(struct iop_wcur *c, uint64_t v)
{
	if (c->err != IOP_OK)
		return;
	if (iop_wcur_room(c) >= IOP_VARINT_MAX) {
		c->p = iop_store_varint(c->p, v);
		return;
	}
	if (iop_wcur_reserve(c, iop_varint_len(v)))
		c->p = iop_store_varint(c->p, v);
}

static inline void iop_put_svarint(struct iop_wcur *c, int64_t v)
{
	iop_put_varint(c, iop_zigzag(v));
}

static inline void iop_put_bytes(struct iop_wcur *c, const void *src, size_t n)
{
	if (n && iop_wcur_reserve(c, n)) {
		memcpy(c->p, src, n);
		c->p += n;
	}
}

/* --- checked gets -------------------------------------------------------------- */

static inline bool iop_rcur_need(struct iop_rcur *c, size_t n)
{
	if (c->err != IOP_OK)
		return false;
	if (iop_rcur_left(c) < n) {
		c->err = IOP_ERR_TRUNCATED;
		return false;
	}
	return true;
}

static inline uint8_t iop_get_u8(struct iop_rcur *c)
{
	return iop_rcur_need(c, 1) ? *c->p++ : 0;
}

static inline uint16_t iop_get_u16le(struct iop_rcur *c)
{
	if (!iop_rcur_need(c, 2))
		return 0;
	uint16_t v = iop_load_u16le(c->p);
	c->p += 2;
	return v;
}

static inline uint32_t iop_get_u32le(struct iop_rcur *c)
{
	if (!iop_rcur_need(c, 4))
		return 0;
	uint32_t v = iop_load_u32le(c->p);
	c->p += 4;
	return v;
}

static inline uint64_t iop_get_u64le(struct iop_rcur *c)
{
	if (!iop_rcur_need(c, 8))
		return 0;
	uint64_t v = iop_load_u64le(c->p);
	c->p += 8;
	return v;
}

/* Decodes a varint. Rejects (MALFORMED) an 11th byte or a 10th byte above 1,
 * which would not fit 64 bits; TRUNCATED when the data ends mid-varint. */
static inline uint64_t iop_get_varint(struct iop_rcur *c)
{
	if (c->err != IOP_OK)
		return 0;
	const uint8_t *p = c->p;
	size_t left = iop_rcur_left(c);
	if (left && *p < 0x80) { /* one-byte fast path */
		c->p++;
		return *p;
	}
	uint64_t v = 0;
	for (unsigned i = 0; i < IOP_VARINT_MAX; i++) {
		if (i == left) {
			c->err = IOP_ERR_TRUNCATED;
			return 0;
		}
		uint8_t b = p[i];
		if (i == IOP_VARINT_MAX - 1 && b > 1) {
			c->err = IOP_ERR_MALFORMED;
			return 0;
		}
		v |= (uint64_t)(b & 0x7f) << (7 * i);
		if (b < 0x80) {
			c->p = p + i + 1;
			return v;
		}
	}
	c->err = IOP_ERR_MALFORMED;
	return 0;
}

static inline int64_t iop_get_svarint(struct iop_rcur *c)
{
	return iop_unzigzag(iop_get_varint(c));
}

/* A varint that must be <= max (a count, an id, a length): MALFORMED above. */
static inline uint64_t iop_get_varint_max(struct iop_rcur *c, uint64_t max)
{
	uint64_t v = iop_get_varint(c);
	if (v > max && c->err == IOP_OK) {
		c->err = IOP_ERR_MALFORMED;
		return 0;
	}
	return v;
}

/* Returns a pointer to the next n bytes and skips them; NULL (and TRUNCATED)
 * when fewer are left. The bytes stay in the caller's buffer. */
static inline const uint8_t *iop_get_bytes(struct iop_rcur *c, size_t n)
{
	if (!iop_rcur_need(c, n))
		return NULL;
	const uint8_t *p = c->p;
	c->p += n;
	return p;
}

#endif

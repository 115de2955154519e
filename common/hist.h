/* Mergeable latency histogram: log-linear buckets over nanoseconds.
 *
 * Values 0..63 ns each have their own bucket; above that every power of two
 * is split into 32 equal buckets, up to IOP_HIST_MAX_NS (2^42 - 1 ns, about
 * 73 minutes; larger values count as that). A quantile is reported as the
 * middle of its bucket, clamped to the exact min and max, so its relative
 * error is at most 1/64 (1.6 %), inside the 3 % the design asks for.
 *
 * Histograms merge by adding bucket counts, so merging is associative and
 * commutative, and leaves, mids and the root can combine them freely. Only
 * the range of buckets in use is stored (grown on demand), and the
 * serialization is sparse: a few bytes per non-empty bucket. */
#ifndef IOP_HIST_H
#define IOP_HIST_H

#include <stdint.h>

#include "codec.h"
#include "err.h"

#define IOP_HIST_EXACT_BITS 6                       /* values below 2^6 each have a bucket */
#define IOP_HIST_SUB_BITS   5                       /* 32 buckets per power of two */
#define IOP_HIST_MAX_NS     ((UINT64_C(1) << 42) - 1) /* > 1 hour */
#define IOP_HIST_BUCKETS    (64 + (42 - 6) * 32)      /* 1216 */

struct iop_hist {
	uint64_t count;
	uint64_t sum;     /* of recorded values (after clamping), saturating */
	uint64_t min;     /* exact; meaningful when count > 0 */
	uint64_t max;     /* exact */
	union {
		uint32_t *bucket;      /* counts of buckets [lo, hi); NULL until first needed */
		const uint8_t *packed; /* when width is 1 or 2: counts of that many bytes */
	};
	uint16_t lo, hi;
	uint8_t borrowed; /* bucket belongs to someone else (iop_hist_decode_in,
	                     iop_hist_pack): never freed or realloc'd here */
	uint8_t width;    /* 0: uint32_t counts in bucket; 1 or 2: packed counts
	                     (iop_hist_pack), read-only: a record or merge into
	                     the histogram first moves them to memory of its own */
};

/* An empty histogram; needs no allocation. */
void iop_hist_init(struct iop_hist *h);
void iop_hist_free(struct iop_hist *h);
/* Empties it, keeping its memory. */
void iop_hist_reset(struct iop_hist *h);

/* Bucket of a value (inline: a leaf asks it for every call it takes),
 * and the smallest and largest value of a bucket. */
static inline unsigned iop_hist_bucket(uint64_t ns)
{
	if (ns > IOP_HIST_MAX_NS)
		ns = IOP_HIST_MAX_NS;
	if (ns < (1u << IOP_HIST_EXACT_BITS))
		return (unsigned)ns;
	unsigned e = 63u - (unsigned)__builtin_clzll(ns); /* 6..41 */
	unsigned sub = (unsigned)(ns >> (e - IOP_HIST_SUB_BITS)) & ((1u << IOP_HIST_SUB_BITS) - 1);
	return (1u << IOP_HIST_EXACT_BITS) + ((e - IOP_HIST_EXACT_BITS) << IOP_HIST_SUB_BITS) + sub;
}
uint64_t iop_hist_bucket_low(unsigned bucket);
uint64_t iop_hist_bucket_high(unsigned bucket);

/* Adds n observations of value ns. A bucket holds at most UINT32_MAX
 * observations: INVAL when n or the bucket's new count would exceed it.
 * INVAL and NOMEM leave the histogram as it was. */
enum iop_err iop_hist_record_n(struct iop_hist *h, uint64_t ns, uint64_t n);
static inline enum iop_err iop_hist_record(struct iop_hist *h, uint64_t ns)
{
	return iop_hist_record_n(h, ns, 1);
}

/* iop_hist_record(h, ns) when the caller knows b = iop_hist_bucket(ns):
 * a leaf records a call in several rows' histograms, and this, inline,
 * costs one bucket computation a call and no function call when the
 * bucket is stored (the usual case). */
/* The summary's part of recording one value ns (already clamped). */
static inline void iop_hist_summary_add_one(struct iop_hist *h, uint64_t ns)
{
	h->min = h->count == 0 || ns < h->min ? ns : h->min;
	h->max = h->count == 0 || ns > h->max ? ns : h->max;
	h->count++;
	h->sum = h->sum + ns < h->sum ? UINT64_MAX : h->sum + ns; /* saturating */
}

static inline enum iop_err iop_hist_record_at(struct iop_hist *h, uint64_t ns, unsigned b)
{
	if (ns > IOP_HIST_MAX_NS)
		ns = IOP_HIST_MAX_NS;
	if (!h->bucket || h->width || b < h->lo || b >= h->hi || h->bucket[b - h->lo] == UINT32_MAX)
		return iop_hist_record_n(h, ns, 1);
	h->bucket[b - h->lo]++;
	iop_hist_summary_add_one(h, ns);
	return IOP_OK;
}

/* iop_hist_record_at for a histogram that stores every bucket ([lo, hi)
 * = [0, IOP_HIST_BUCKETS)) and takes fewer than UINT32_MAX values before
 * it is emptied, and is never packed (width 0): nothing to check, nothing
 * to allocate, no branch but the saturation. The histogram ends up the
 * same. */
static inline void iop_hist_record_full(struct iop_hist *h, uint64_t ns, unsigned b)
{
	if (ns > IOP_HIST_MAX_NS)
		ns = IOP_HIST_MAX_NS;
	h->bucket[b]++;
	iop_hist_summary_add_one(h, ns);
}

/* Packed storage, for histograms that are kept long and no longer added
 * to (the root's history): the buckets [bucket(min), bucket(max)] at the
 * fewest bytes a count that hold the largest (1, 2 or 4). packed_size is
 * the bytes pack needs, a multiple of 4 (0 for an empty histogram); pack
 * moves the counts into mem (4-byte aligned, the caller's, to outlive h's
 * use of it; not read when h is empty), freeing h's own memory, and
 * returns the bytes it used (packed_size's). Contents, quantiles, merges and the
 * wire form are unchanged. Recording or merging into it later moves 1- and
 * 2-byte counts to memory of its own; 4-byte ones stay in mem, written. */
size_t iop_hist_packed_size(const struct iop_hist *h);
size_t iop_hist_pack(struct iop_hist *h, void *mem);
/* The same in steps, for a caller that sizes many at once: the width pack
 * uses (1, 2 or 4; 0 when empty; a packed histogram's own, without a
 * scan), the bytes at that width, and pack at that width. */
unsigned iop_hist_pack_width(const struct iop_hist *h);
size_t iop_hist_packed_size_at(const struct iop_hist *h, unsigned width);
size_t iop_hist_pack_at(struct iop_hist *h, void *mem, unsigned width);

/* dst += src (dst may be src). INVAL (a bucket would exceed UINT32_MAX) and
 * NOMEM leave dst as it was. */
enum iop_err iop_hist_merge(struct iop_hist *dst, const struct iop_hist *src);

/* The value at quantile q (0 = min, 1 = max, 0.99 = p99): the value of the
 * ceil(q * count)-th smallest observation, to within its bucket. 0 when the
 * histogram is empty. */
uint64_t iop_hist_quantile(const struct iop_hist *h, double q);

/* Sparse serialization (docs/wire-format.md, "Histogram"). Encode sets the
 * cursor's FULL error when out of room. Decode replaces *h's contents and
 * rejects with MALFORMED (a bucket out of range, a bucket count of 0 or above
 * UINT32_MAX, min > max, min or max not in the first or last bucket), INCONSISTENT (bucket counts
 * do not add up to the count) or the cursor's own errors; *h is left empty on failure. */
void iop_hist_encode(const struct iop_hist *h, struct iop_wcur *c);
/* The tail of that encoding alone: the count of non-zero buckets and their
 * (gap, count) pairs (a column of them in a tick, collector/tick_cols.c). */
void iop_hist_encode_buckets(const struct iop_hist *h, struct iop_wcur *c);
enum iop_err iop_hist_decode(struct iop_hist *h, struct iop_rcur *c);
/* The same; when h has no bucket storage yet, it comes from alloc(arg, n)
 * (n counts; NULL: NOMEM) and stays the allocator's: h borrows it until
 * freed or grown. Decoding thousands of histograms at once (a keyframe)
 * then costs no malloc each. */
enum iop_err iop_hist_decode_in(struct iop_hist *h, struct iop_rcur *c,
                                uint32_t *(*alloc)(void *arg, size_t n), void *arg);
/* The same from its parts, the count (above 0), min, max and sum known;
 * c holds the rest (iop_hist_encode_buckets), or is NULL for count values
 * all in min's bucket (min and max in one bucket; a single call's). */
enum iop_err iop_hist_decode_parts_in(struct iop_hist *h, uint64_t count, uint64_t min,
                                      uint64_t max, uint64_t sum, struct iop_rcur *c,
                                      uint32_t *(*alloc)(void *arg, size_t n), void *arg);

#endif

/* Mergeable latency histogram (hist.h): log-linear buckets over nanoseconds.
 *
 * Why this shape: the collector keeps one histogram per (rank, op) and the
 * tree of leaves, mids and root adds them up, so the operations that matter
 * are cheap recording, exact merging and a compact wire form. Buckets are
 * 0..63 exact, then 32 per power of two, which bounds a quantile's relative
 * error by 1/64 without any tuning.
 *
 * Storage covers only the buckets [lo, hi) ever touched and grows with
 * realloc; a failed realloc changes nothing, so NOMEM leaves the histogram as
 * it was. Per-bucket counts are uint32_t: a record or merge that would push a
 * bucket past UINT32_MAX is refused with INVAL rather than saturated, since a
 * saturated bucket would silently skew every quantile above it. With 1216
 * buckets that also keeps count below 2^43, so it never overflows.
 *
 * A packed histogram (iop_hist_pack) keeps its counts in 1 or 2 bytes each
 * in its owner's memory; every read goes through count_at(), and anything
 * that writes moves the counts back to uint32_t memory of its own first
 * (unpack): packing is for histograms that are only read from then on.
 *
 * Invariant when count > 0: every non-empty bucket lies in
 * [bucket(min), bucket(max)], and both of those are non-empty and stored.
 *
 * Wire form (docs/wire-format.md, "Histogram"), all varints:
 *   count; if count > 0: min, max, sum, n_nonzero, then n_nonzero pairs of
 *   (gap, bucket count), gap = index - (previous index + 1), the first gap
 *   being the first index itself. It depends only on the contents, never on
 *   the stored range, so equal histograms encode to equal bytes. */
#include <stdlib.h>
#include <string.h>

#include "hist.h"

#define EXACT_BITS    IOP_HIST_EXACT_BITS
#define EXACT_BUCKETS (1u << EXACT_BITS) /* values 0..63 each have a bucket */
#define SUB_BUCKETS   (1u << IOP_HIST_SUB_BITS)

_Static_assert(IOP_HIST_BUCKETS == EXACT_BUCKETS + (42 - EXACT_BITS) * SUB_BUCKETS,
               "bucket count must match IOP_HIST_MAX_NS");
_Static_assert(IOP_HIST_BUCKETS <= UINT16_MAX, "lo and hi are uint16_t");

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	uint64_t r;
	return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

static uint64_t sat_mul(uint64_t a, uint64_t b)
{
	uint64_t r;
	return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

/* ----------------------------------------------------------------- buckets */

/* A bucket past the last is a caller's bug; it is read as the last one. */
uint64_t iop_hist_bucket_low(unsigned bucket)
{
	if (bucket >= IOP_HIST_BUCKETS)
		bucket = IOP_HIST_BUCKETS - 1;
	if (bucket < EXACT_BUCKETS)
		return bucket;
	unsigned e = EXACT_BITS + (bucket - EXACT_BUCKETS) / SUB_BUCKETS;
	uint64_t sub = (bucket - EXACT_BUCKETS) % SUB_BUCKETS;
	return (SUB_BUCKETS + sub) << (e - IOP_HIST_SUB_BITS);
}

uint64_t iop_hist_bucket_high(unsigned bucket)
{
	if (bucket >= IOP_HIST_BUCKETS)
		bucket = IOP_HIST_BUCKETS - 1;
	if (bucket < EXACT_BUCKETS)
		return bucket;
	unsigned e = EXACT_BITS + (bucket - EXACT_BUCKETS) / SUB_BUCKETS;
	return iop_hist_bucket_low(bucket) + (UINT64_C(1) << (e - IOP_HIST_SUB_BITS)) - 1;
}

/* ------------------------------------------------------------ life & storage */

void iop_hist_init(struct iop_hist *h)
{
	memset(h, 0, sizeof *h);
}

/* Count of stored bucket i (lo <= i < hi), whatever the width. */
static uint32_t count_at(const struct iop_hist *h, unsigned i)
{
	size_t j = i - h->lo;
	if (h->width == 0)
		return h->bucket[j];
	if (h->width == 1)
		return h->packed[j];
	uint16_t v;
	memcpy(&v, h->packed + 2 * j, sizeof v);
	return v;
}

/* A packed histogram's counts back in uint32_t memory of its own (its
 * stored range [lo, hi)). NOMEM changes nothing. */
static enum iop_err unpack(struct iop_hist *h)
{
	if (!h->width)
		return IOP_OK;
	size_t n = (size_t)(h->hi - h->lo);
	uint32_t *b = malloc((n ? n : 1) * sizeof *b);
	if (!b)
		return IOP_ERR_NOMEM;
	for (size_t j = 0; j < n; j++)
		b[j] = count_at(h, h->lo + (unsigned)j);
	h->bucket = b;
	h->width = 0;
	h->borrowed = 0;
	return IOP_OK;
}

void iop_hist_free(struct iop_hist *h)
{
	if (!h->borrowed)
		free(h->bucket);
	iop_hist_init(h);
}

/* The stored range stays as it is (zeroed), so a reused histogram does not
 * reallocate; bucket is NULL only until storage is first needed. */
void iop_hist_reset(struct iop_hist *h)
{
	if (h->width) { /* read-only memory that is not ours: let it go */
		iop_hist_init(h);
		return;
	}
	/* Only [bucket(min), bucket(max)] can be non-zero (the invariant
	 * above): a reused histogram's spare range is zero already. */
	if (h->bucket && h->count) {
		unsigned first = iop_hist_bucket(h->min), last = iop_hist_bucket(h->max);
		memset(h->bucket + (first - h->lo), 0, (size_t)(last - first + 1) * sizeof *h->bucket);
	}
	h->count = h->sum = h->min = h->max = 0;
}

/* Makes the stored range cover buckets [lo, hi), new buckets zeroed. On NOMEM
 * nothing changes: realloc keeps the old block when it fails. */
static enum iop_err cover(struct iop_hist *h, unsigned lo, unsigned hi)
{
	int had = h->bucket != NULL;
	if (had && lo >= h->lo && hi <= h->hi)
		return IOP_OK;
	/* An empty histogram's stored buckets are all zero, so its range can
	 * move anywhere its memory reaches: a cell reused for another row (a
	 * tick's rows after a reset) then needs no realloc. */
	if (had && h->count == 0 && (unsigned)(h->hi - h->lo) >= hi - lo) {
		/* centred: the next values recorded may fall on either side */
		unsigned size = (unsigned)(h->hi - h->lo), spare = size - (hi - lo);
		unsigned at = lo > spare / 2 ? lo - spare / 2 : 0;
		if (at + size > IOP_HIST_BUCKETS)
			at = IOP_HIST_BUCKETS - size;
		h->lo = (uint16_t)at;
		h->hi = (uint16_t)(at + size);
		return IOP_OK;
	}
	unsigned new_lo = had && h->lo < lo ? h->lo : lo;
	unsigned new_hi = had && h->hi > hi ? h->hi : hi;
	size_t old_n = had ? (size_t)(h->hi - h->lo) : 0;
	size_t shift = had ? (size_t)(h->lo - new_lo) : 0;
	size_t n = new_hi - new_lo;

	uint32_t *b;
	if (h->borrowed) { /* not ours to realloc: a copy of our own */
		b = malloc(n * sizeof *b);
		if (!b)
			return IOP_ERR_NOMEM;
		memcpy(b, h->bucket, old_n * sizeof *b);
		h->borrowed = 0;
	} else {
		b = realloc(h->bucket, n * sizeof *b);
		if (!b)
			return IOP_ERR_NOMEM;
	}
	memmove(b + shift, b, old_n * sizeof *b);
	memset(b, 0, shift * sizeof *b);
	memset(b + shift + old_n, 0, (n - shift - old_n) * sizeof *b);
	h->bucket = b;
	h->lo = (uint16_t)new_lo;
	h->hi = (uint16_t)new_hi;
	return IOP_OK;
}

/* Covers bucket b for a record, with room to spare on the side it grows
 * towards: latencies spread over tens of buckets, and growing one bucket
 * at a time made recording cost a realloc every few calls. The stored
 * range never shows in the wire form. */
static enum iop_err cover_slack(struct iop_hist *h, unsigned b)
{
	unsigned size = h->bucket ? (unsigned)(h->hi - h->lo) : 0;
	unsigned slack = size / 2 > 8 ? size / 2 : 8;
	unsigned lo = b, hi = b + 1;
	if (!h->bucket || b < h->lo)
		lo = b > slack ? b - slack : 0;
	if (!h->bucket || b >= h->hi)
		hi = b + 1 + slack < IOP_HIST_BUCKETS ? b + 1 + slack : IOP_HIST_BUCKETS;
	return cover(h, lo, hi);
}

/* Count of bucket i, 0 when it is not stored. */
static uint32_t stored(const struct iop_hist *h, unsigned i)
{
	if (!h->bucket || i < h->lo || i >= h->hi)
		return 0;
	return count_at(h, i);
}

/* Folds a non-empty summary (count, sum, min, max) into h's. */
static void add_summary(struct iop_hist *h, uint64_t count, uint64_t sum, uint64_t min,
                        uint64_t max)
{
	if (h->count == 0 || min < h->min)
		h->min = min;
	if (h->count == 0 || max > h->max)
		h->max = max;
	h->count += count;
	h->sum = sat_add(h->sum, sum);
}

/* --------------------------------------------------------- record & merge */

enum iop_err iop_hist_record_n(struct iop_hist *h, uint64_t ns, uint64_t n)
{
	if (n == 0)
		return IOP_OK;
	if (ns > IOP_HIST_MAX_NS)
		ns = IOP_HIST_MAX_NS;
	unsigned b = iop_hist_bucket(ns);
	if (n > UINT32_MAX || stored(h, b) > UINT32_MAX - n)
		return IOP_ERR_INVAL;
	enum iop_err e = unpack(h);
	if (e != IOP_OK)
		return e;
	if (!h->bucket || b < h->lo || b >= h->hi) {
		enum iop_err err = cover_slack(h, b);
		if (err != IOP_OK)
			return err;
	}
	h->bucket[b - h->lo] += (uint32_t)n;
	add_summary(h, n, sat_mul(ns, n), ns, ns);
	return IOP_OK;
}

/* dst may be src: the range is then already covered and each bucket doubles. */
enum iop_err iop_hist_merge(struct iop_hist *dst, const struct iop_hist *src)
{
	if (src->count == 0)
		return IOP_OK;
	unsigned first = iop_hist_bucket(src->min), last = iop_hist_bucket(src->max);
	/* No bucket holds more than its histogram's count: when the counts
	 * add up to a bucket's limit, no bucket can pass it (the usual case;
	 * checking bucket by bucket was a tenth of the root's merging). */
	if (dst->count + src->count > UINT32_MAX)
		for (unsigned i = first; i <= last; i++)
			if (stored(dst, i) > UINT32_MAX - stored(src, i))
				return IOP_ERR_INVAL;
	enum iop_err err = unpack(dst); /* when dst is src, src too */
	if (err == IOP_OK)
		err = cover(dst, first, last + 1);
	if (err != IOP_OK)
		return err;
	uint32_t *d = dst->bucket + (first - dst->lo);
	unsigned n = last + 1 - first;
	if (src->width) {
		for (unsigned i = 0; i < n; i++)
			d[i] += count_at(src, first + i);
	} else {
		const uint32_t *s = src->bucket + (first - src->lo);
		if (dst->count == 0 && d != s)
			memcpy(d, s, n * sizeof *d); /* its buckets are zero: a copy */
		else
			for (unsigned i = 0; i < n; i++)
				d[i] += s[i];
	}
	add_summary(dst, src->count, src->sum, src->min, src->max);
	return IOP_OK;
}

/* ---------------------------------------------------------------- quantile */

/* ceil(q * count) for 0 < q < 1, so in 1..count; by hand because common/
 * does not link libm. count < 2^43 is exact in a double. */
static uint64_t rank_of(double q, uint64_t count)
{
	double x = q * (double)count;
	if (x >= (double)count)
		return count;
	uint64_t r = (uint64_t)x;
	return (double)r < x ? r + 1 : r;
}

uint64_t iop_hist_quantile(const struct iop_hist *h, double q)
{
	if (h->count == 0)
		return 0;
	if (!(q > 0)) /* also NaN */
		return h->min;
	if (q >= 1)
		return h->max;
	uint64_t rank = rank_of(q, h->count), seen = 0;
	unsigned first = iop_hist_bucket(h->min), last = iop_hist_bucket(h->max);
	unsigned i = first;
	for (; i < last; i++) {
		seen += count_at(h, i);
		if (seen >= rank)
			break;
	}
	uint64_t low = iop_hist_bucket_low(i), high = iop_hist_bucket_high(i);
	uint64_t mid = low + (high - low) / 2;
	if (mid < h->min)
		return h->min;
	return mid > h->max ? h->max : mid;
}

/* ------------------------------------------------------------------ packing */

/* Bytes a count of the packed form of h: the fewest that hold its largest. */
static unsigned pack_width(const struct iop_hist *h, unsigned first, unsigned last)
{
	uint32_t most = 0;
	if (h->width == 0) { /* uint32_t counts: a plain scan the compiler vectorises */
		const uint32_t *b = h->bucket + (first - h->lo);
		for (unsigned i = 0; i <= last - first; i++)
			most = b[i] > most ? b[i] : most;
	} else {
		for (unsigned i = first; i <= last; i++) {
			uint32_t k = count_at(h, i);
			most = k > most ? k : most;
		}
	}
	return most <= UINT8_MAX ? 1 : most <= UINT16_MAX ? 2 : 4;
}

/* Bytes the packed form of [first, last] takes at width, padded to 4. */
static size_t packed_bytes(unsigned first, unsigned last, unsigned width)
{
	size_t n = (size_t)(last + 1 - first) * width;
	return (n + 3) & ~(size_t)3;
}

unsigned iop_hist_pack_width(const struct iop_hist *h)
{
	if (h->count == 0)
		return 0;
	/* packed at 1 or 2 bytes a count, it is read-only: that width holds */
	if (h->width)
		return h->width;
	return pack_width(h, iop_hist_bucket(h->min), iop_hist_bucket(h->max));
}

size_t iop_hist_packed_size_at(const struct iop_hist *h, unsigned width)
{
	if (h->count == 0)
		return 0;
	return packed_bytes(iop_hist_bucket(h->min), iop_hist_bucket(h->max), width);
}

size_t iop_hist_packed_size(const struct iop_hist *h)
{
	return iop_hist_packed_size_at(h, iop_hist_pack_width(h));
}

size_t iop_hist_pack(struct iop_hist *h, void *mem)
{
	return iop_hist_pack_at(h, mem, iop_hist_pack_width(h));
}

size_t iop_hist_pack_at(struct iop_hist *h, void *mem, unsigned width)
{
	if (h->count == 0) {
		iop_hist_free(h);
		return 0;
	}
	unsigned first = iop_hist_bucket(h->min), last = iop_hist_bucket(h->max);
	uint8_t *m = mem;
	if (h->width == 0 && width == 1) { /* the common case, without a branch a count */
		const uint32_t *b = h->bucket + (first - h->lo);
		for (unsigned i = 0; i <= last - first; i++)
			m[i] = (uint8_t)b[i];
	} else {
		for (unsigned i = first; i <= last; i++) {
			uint32_t k = count_at(h, i);
			if (width == 1)
				m[i - first] = (uint8_t)k;
			else if (width == 2)
				memcpy(m + 2 * (size_t)(i - first), &(uint16_t){(uint16_t)k}, 2);
			else
				memcpy(m + 4 * (size_t)(i - first), &k, 4);
		}
	}
	if (!h->borrowed && !h->width)
		free(h->bucket);
	h->packed = m;
	h->width = width == 4 ? 0 : (uint8_t)width;
	h->borrowed = 1;
	h->lo = (uint16_t)first;
	h->hi = (uint16_t)(last + 1);
	return packed_bytes(first, last, width);
}

/* ---------------------------------------------------------- serialization */

static uint64_t count_nonzero(const struct iop_hist *h)
{
	uint64_t n = 0;
	if (h->count)
		for (unsigned i = iop_hist_bucket(h->min), last = iop_hist_bucket(h->max); i <= last;
		     i++)
			n += count_at(h, i) != 0;
	return n;
}

void iop_hist_encode_buckets(const struct iop_hist *h, struct iop_wcur *c)
{
	iop_put_varint(c, count_nonzero(h));
	if (!h->count)
		return;
	unsigned next = 0; /* index the next gap counts from */
	for (unsigned i = iop_hist_bucket(h->min), last = iop_hist_bucket(h->max); i <= last; i++) {
		uint32_t k = count_at(h, i);
		if (k == 0)
			continue;
		iop_put_varint(c, i - next);
		iop_put_varint(c, k);
		next = i + 1;
	}
}

void iop_hist_encode(const struct iop_hist *h, struct iop_wcur *c)
{
	iop_put_varint(c, h->count);
	if (h->count == 0)
		return;
	iop_put_varint(c, h->min);
	iop_put_varint(c, h->max);
	iop_put_varint(c, h->sum);
	iop_hist_encode_buckets(h, c);
}

/* Reads the n pairs into h's zeroed buckets [first, last], which cover()
 * has stored. Each pair is checked as it is read, so a large n costs nothing
 * until the bytes for it are there. Returns the cursor's error, MALFORMED or
 * INCONSISTENT. */
static enum iop_err decode_buckets(struct iop_hist *h, struct iop_rcur *c, uint64_t n,
                                   unsigned first, unsigned last, uint64_t count)
{
	uint64_t next = 0, total = 0;
	for (uint64_t j = 0; j < n; j++) {
		/* A gap over IOP_HIST_BUCKETS is out of range anyway; the bound
		 * also keeps next + gap from wrapping. */
		uint64_t gap = iop_get_varint_max(c, IOP_HIST_BUCKETS);
		uint64_t k = iop_get_varint_max(c, UINT32_MAX);
		if (c->err != IOP_OK)
			return c->err;
		uint64_t i = next + gap;
		if (k == 0 || i > last || (j == 0 && i != first))
			return IOP_ERR_MALFORMED;
		h->bucket[i - h->lo] = (uint32_t)k;
		total += k; /* at most 1216 * UINT32_MAX: no overflow */
		next = i + 1;
	}
	if (next != last + 1)
		return IOP_ERR_MALFORMED;
	return total == count ? IOP_OK : IOP_ERR_INCONSISTENT;
}

/* The cursor keeps only its own errors; a rejection is the return value. */
static enum iop_err decode_fail(struct iop_hist *h, enum iop_err err)
{
	/* buckets may have been written before the count: zero all of them */
	if (h->bucket)
		memset(h->bucket, 0, (size_t)(h->hi - h->lo) * sizeof *h->bucket);
	iop_hist_reset(h);
	return err;
}

/* h must have been initialised; its old contents are replaced. */
enum iop_err iop_hist_decode(struct iop_hist *h, struct iop_rcur *c)
{
	return iop_hist_decode_in(h, c, NULL, NULL);
}

enum iop_err iop_hist_decode_in(struct iop_hist *h, struct iop_rcur *c,
                                uint32_t *(*alloc)(void *arg, size_t n), void *arg)
{
	iop_hist_reset(h); /* a packed one lets its memory go */
	uint64_t count = iop_get_varint(c);
	if (c->err != IOP_OK || count == 0)
		return c->err;
	uint64_t min = iop_get_varint(c);
	uint64_t max = iop_get_varint(c);
	uint64_t sum = iop_get_varint(c);
	if (c->err != IOP_OK)
		return c->err;
	return iop_hist_decode_parts_in(h, count, min, max, sum, c, alloc, arg);
}

enum iop_err iop_hist_decode_parts_in(struct iop_hist *h, uint64_t count, uint64_t min,
                                      uint64_t max, uint64_t sum, struct iop_rcur *c,
                                      uint32_t *(*alloc)(void *arg, size_t n), void *arg)
{
	iop_hist_reset(h);
	if (count == 0)
		return IOP_ERR_MALFORMED;
	uint64_t n_nonzero = 1;
	if (c) {
		n_nonzero = iop_get_varint_max(c, IOP_HIST_BUCKETS);
		if (c->err != IOP_OK)
			return c->err;
	}
	if (min > max || max > IOP_HIST_MAX_NS || n_nonzero == 0 ||
	    (!c && (iop_hist_bucket(min) != iop_hist_bucket(max) || count > UINT32_MAX)))
		return decode_fail(h, IOP_ERR_MALFORMED);

	/* The range is fixed by min and max, so this allocates at most
	 * IOP_HIST_BUCKETS counts whatever n_nonzero claims. */
	unsigned first = iop_hist_bucket(min), last = iop_hist_bucket(max);
	enum iop_err err = IOP_OK;
	if (!h->bucket && alloc) {
		size_t n = last + 1 - first;
		if (!(h->bucket = alloc(arg, n)))
			return decode_fail(h, IOP_ERR_NOMEM);
		memset(h->bucket, 0, n * sizeof *h->bucket);
		h->lo = (uint16_t)first;
		h->hi = (uint16_t)(last + 1);
		h->borrowed = 1;
	} else {
		err = cover(h, first, last + 1);
	}
	if (err == IOP_OK && c)
		err = decode_buckets(h, c, n_nonzero, first, last, count);
	else if (err == IOP_OK)
		h->bucket[first - h->lo] = (uint32_t)count;
	if (err != IOP_OK)
		return decode_fail(h, err);
	h->count = count;
	h->sum = sum;
	h->min = min;
	h->max = max;
	return IOP_OK;
}

/* Frame tally and time index (see rec_index.h), and their END encoding:
 *
 *   u32 stride | u32 flags (bit 0: index complete) |
 *   u64 covered_end | u64 first_ns | u64 last_ns |
 *   6 x u64 frame counts (META .. KEYFRAME) | u32 n |
 *   n x (u64 time_ns, u64 offset, u64 seq, u8 type)
 */
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "rec_index.h"

#define END_FIXED     (4 + 4 + 8 + 8 + 8 + 8 * (REC_END - REC_META) + 4)
#define END_ENTRY_LEN 25

void rec_tally_note(struct rec_tally *t, unsigned type, uint64_t time_ns)
{
	if (rec_tally_total(t) == 0 || time_ns < t->first_ns)
		t->first_ns = time_ns;
	if (rec_tally_total(t) == 0 || time_ns > t->last_ns)
		t->last_ns = time_ns;
	t->frames[type]++;
}

uint64_t rec_tally_total(const struct rec_tally *t)
{
	uint64_t n = 0;
	for (unsigned i = REC_META; i < REC_END; i++)
		n += t->frames[i];
	return n;
}

static bool pinned(unsigned type)
{
	return type == REC_META || type == REC_NAMES || type == REC_ALERT || type == REC_KEYFRAME;
}

void rec_index_init(struct rec_index *x, uint32_t stride, size_t max)
{
	memset(x, 0, sizeof *x);
	x->stride = stride ? stride : 1;
	x->max = max && max < REC_INDEX_MAX ? max : REC_INDEX_MAX;
	x->complete = true;
}

void rec_index_free(struct rec_index *x)
{
	free(x->e);
	x->e = NULL;
	x->n = x->alloc = 0;
}

/* Drops every other unpinned entry; false when there was none to drop. */
static bool thin(struct rec_index *x)
{
	size_t kept = 0, seen = 0;
	for (size_t i = 0; i < x->n; i++) {
		if (!pinned(x->e[i].type) && seen++ % 2 == 1)
			continue;
		x->e[kept++] = x->e[i];
	}
	bool dropped = kept < x->n;
	x->n = kept;
	if (x->stride <= UINT32_MAX / 2)
		x->stride *= 2;
	return dropped;
}

static bool make_room(struct rec_index *x)
{
	if (x->n == x->max && !thin(x))
		return false;
	if (x->n < x->alloc)
		return true;
	size_t alloc = x->alloc ? x->alloc * 2 : 256;
	if (alloc > x->max)
		alloc = x->max;
	struct rec_index_entry *e = realloc(x->e, alloc * sizeof *e);
	if (!e)
		return false;
	x->e = e;
	x->alloc = alloc;
	return true;
}

void rec_index_note(struct rec_index *x, unsigned type, uint64_t time_ns, uint64_t offset,
                    uint64_t seq)
{
	if (!x->complete)
		return;
	if (!pinned(type) && x->unpinned++ % x->stride != 0)
		return;
	if (!make_room(x)) {
		x->complete = false;
		x->covered_end = offset;
		return;
	}
	x->e[x->n++] = (struct rec_index_entry){time_ns, offset, seq, (uint8_t)type};
}

size_t rec_end_len(const struct rec_index *x)
{
	return END_FIXED + x->n * END_ENTRY_LEN;
}

void rec_end_encode(uint8_t *out, size_t len, const struct rec_tally *t, const struct rec_index *x)
{
	struct iop_wcur c = iop_wcur_make(out, len);
	iop_put_u32le(&c, x->stride);
	iop_put_u32le(&c, x->complete ? 1 : 0);
	iop_put_u64le(&c, x->complete ? 0 : x->covered_end);
	iop_put_u64le(&c, t->first_ns);
	iop_put_u64le(&c, t->last_ns);
	for (unsigned i = REC_META; i < REC_END; i++)
		iop_put_u64le(&c, t->frames[i]);
	iop_put_u32le(&c, (uint32_t)x->n);
	for (size_t i = 0; i < x->n; i++) {
		iop_put_u64le(&c, x->e[i].time_ns);
		iop_put_u64le(&c, x->e[i].offset);
		iop_put_u64le(&c, x->e[i].seq);
		iop_put_u8(&c, x->e[i].type);
	}
}

enum iop_err rec_end_decode(const uint8_t *p, size_t len, uint64_t end_offset, struct rec_tally *t,
                            struct rec_index *x)
{
	struct iop_rcur c = iop_rcur_make(p, len);
	uint32_t stride = iop_get_u32le(&c);
	uint32_t flags = iop_get_u32le(&c);
	uint64_t covered_end = iop_get_u64le(&c);
	struct rec_tally tally = {0};
	tally.first_ns = iop_get_u64le(&c);
	tally.last_ns = iop_get_u64le(&c);
	for (unsigned i = REC_META; i < REC_END; i++)
		tally.frames[i] = iop_get_u64le(&c);
	uint32_t n = iop_get_u32le(&c);
	if (c.err != IOP_OK)
		return c.err;
	bool complete = flags & 1;
	if ((flags & ~1u) || stride == 0 || (!complete && covered_end > end_offset) || n > x->max ||
	    iop_rcur_left(&c) != (size_t)n * END_ENTRY_LEN)
		return IOP_ERR_MALFORMED;
	struct rec_index_entry *e = n ? malloc(n * sizeof *e) : NULL;
	if (n && !e)
		return IOP_ERR_NOMEM;
	for (uint32_t i = 0; i < n; i++) {
		e[i].time_ns = iop_get_u64le(&c);
		e[i].offset = iop_get_u64le(&c);
		e[i].seq = iop_get_u64le(&c);
		e[i].type = iop_get_u8(&c);
		if (e[i].type < REC_META || e[i].type >= REC_END || e[i].offset >= end_offset ||
		    (i && e[i].offset <= e[i - 1].offset)) {
			free(e);
			return IOP_ERR_MALFORMED;
		}
	}
	rec_index_free(x);
	x->e = e;
	x->n = x->alloc = n;
	x->stride = stride;
	x->complete = complete;
	x->covered_end = covered_end;
	*t = tally;
	return IOP_OK;
}

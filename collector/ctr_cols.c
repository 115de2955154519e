/* Lists of counters, counter after counter or by column. See ctr_cols.h. */
#include "ctr_cols.h"

#include <string.h>

#include "cols.h"
#include "events.h"

void coll_counter_encode(const struct coll_counter *k, struct iop_wcur *c)
{
	iop_put_varint(c, k->rank);
	iop_put_u32le(c, k->node);
	iop_put_varint(c, k->pid);
	iop_put_varint(c, k->image);
	iop_put_u64le(c, k->file);
	iop_put_u8(c, (uint8_t)(k->layer << 4 | k->cls));
	iop_put_varint(c, k->ops);
	iop_put_varint(c, k->bytes);
	iop_put_varint(c, k->time_ns);
	iop_put_varint(c, k->errors);
	for (unsigned i = 0; i < COLL_PAT__COUNT; i++)
		iop_put_varint(c, k->pat[i]);
}

enum iop_err coll_counter_decode(struct coll_counter *k, struct iop_rcur *c)
{
	return coll_counter_decode_v(k, c, COLL_COUNTER_VERSION);
}

enum iop_err coll_counter_decode_v(struct coll_counter *k, struct iop_rcur *c, unsigned version)
{
	memset(k, 0, sizeof(*k));
	k->rank = (uint32_t)iop_get_varint_max(c, UINT32_MAX);
	k->node = iop_get_u32le(c);
	k->pid = (uint32_t)iop_get_varint_max(c, UINT32_MAX);
	k->image = (uint32_t)iop_get_varint_max(c, UINT32_MAX);
	k->file = iop_get_u64le(c);
	uint8_t lc = iop_get_u8(c);
	k->layer = lc >> 4;
	k->cls = lc & 15;
	k->ops = iop_get_varint(c);
	k->bytes = iop_get_varint(c);
	k->time_ns = iop_get_varint(c);
	k->errors = coll_count32(iop_get_varint(c));
	for (unsigned i = 0; version >= 3 && i < COLL_PAT__COUNT; i++)
		k->pat[i] = coll_count32(iop_get_varint(c));
	if (c->err)
		return c->err;
	if (k->layer >= IOP_LAYER__COUNT || k->cls >= IOP_CLASS__COUNT)
		return IOP_ERR_MALFORMED;
	return IOP_OK;
}

enum { C_RANK, C_NODE, C_PID, C_IMAGE, C_FILE, C_LC, C_OPS, C_BYTES, C_TIME, C_ERRORS, C_PAT };
_Static_assert(C_PAT + COLL_PAT__COUNT == COLL_CTR_COLS, "a column a field");

static void put_col(const struct coll_counter *k, unsigned col, struct iop_wcur *c)
{
	switch (col) {
	case C_RANK: iop_put_varint(c, k->rank); break;
	case C_NODE: iop_put_u32le(c, k->node); break;
	case C_PID: iop_put_varint(c, k->pid); break;
	case C_IMAGE: iop_put_varint(c, k->image); break;
	case C_FILE: iop_put_u64le(c, k->file); break;
	case C_LC: iop_put_u8(c, (uint8_t)(k->layer << 4 | k->cls)); break;
	case C_OPS: iop_put_varint(c, k->ops); break;
	case C_BYTES: iop_put_varint(c, k->bytes); break;
	case C_TIME: iop_put_varint(c, k->time_ns); break;
	case C_ERRORS: iop_put_varint(c, k->errors); break;
	default: iop_put_varint(c, k->pat[col - C_PAT]);
	}
}

void coll_counters_encode(const struct coll_counter *v, uint32_t n, struct iop_wcur *c,
                          unsigned version)
{
	iop_put_varint(c, n);
	if (version < 6) {
		for (uint32_t i = 0; i < n; i++)
			coll_counter_encode(&v[i], c);
		return;
	}
	for (unsigned col = 0; col < COLL_CTR_COLS; col++) {
		uint8_t *len = coll_col_begin(c);
		for (uint32_t i = 0; i < n; i++)
			put_col(&v[i], col, c);
		coll_col_end(c, len);
	}
}

enum iop_err coll_ctr_reader_open(struct coll_ctr_reader *r, struct iop_rcur *c, uint64_t max,
                                  unsigned version)
{
	r->c = c;
	r->version = version;
	/* a counter takes at least 20 bytes either way */
	r->n = coll_get_count(c, max, 20);
	if (c->err || version < 6)
		return c->err;
	return coll_cols_open(c, r->col, COLL_CTR_COLS);
}

enum iop_err coll_ctr_reader_next(struct coll_ctr_reader *r, struct coll_counter *k)
{
	if (r->version < 6)
		return coll_counter_decode_v(k, r->c, r->version);
	struct iop_rcur *col = r->col;
	memset(k, 0, sizeof(*k));
	k->rank = (uint32_t)iop_get_varint_max(&col[C_RANK], UINT32_MAX);
	k->node = iop_get_u32le(&col[C_NODE]);
	k->pid = (uint32_t)iop_get_varint_max(&col[C_PID], UINT32_MAX);
	k->image = (uint32_t)iop_get_varint_max(&col[C_IMAGE], UINT32_MAX);
	k->file = iop_get_u64le(&col[C_FILE]);
	uint8_t lc = iop_get_u8(&col[C_LC]);
	k->layer = lc >> 4;
	k->cls = lc & 15;
	k->ops = iop_get_varint(&col[C_OPS]);
	k->bytes = iop_get_varint(&col[C_BYTES]);
	k->time_ns = iop_get_varint(&col[C_TIME]);
	k->errors = coll_count32(iop_get_varint(&col[C_ERRORS]));
	for (unsigned i = 0; i < COLL_PAT__COUNT; i++)
		k->pat[i] = coll_count32(iop_get_varint(&col[C_PAT + i]));
	enum iop_err e = coll_cols_err(col, COLL_CTR_COLS);
	if (e)
		return e;
	if (k->layer >= IOP_LAYER__COUNT || k->cls >= IOP_CLASS__COUNT)
		return IOP_ERR_MALFORMED;
	return IOP_OK;
}

enum iop_err coll_ctr_reader_done(const struct coll_ctr_reader *r)
{
	return r->version < 6 ? IOP_OK : coll_cols_done(r->col, COLL_CTR_COLS);
}

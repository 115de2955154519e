/* Columns in a message (delta version 6 on): each a u32le byte length and
 * its bytes, so a reader takes every column's cursor first and then reads
 * record after record across them (tick_cols.c, ctr_cols.c). */
#ifndef IOP_COLL_COLS_H
#define IOP_COLL_COLS_H

#include <stddef.h>
#include <stdint.h>

#include "codec.h"
#include "err.h"

/* A count of records each at least min_bytes long: above max sets the
 * cursor's OVERSIZED, above what the bytes left can hold its TRUNCATED
 * (the data is not there, whatever it claims); 0 then. */
static inline uint64_t coll_get_count(struct iop_rcur *c, uint64_t max, size_t min_bytes)
{
	uint64_t n = iop_get_varint(c);
	if (c->err)
		return 0;
	if (n > max) {
		c->err = IOP_ERR_OVERSIZED;
		return 0;
	}
	if (n > iop_rcur_left(c) / min_bytes) {
		c->err = IOP_ERR_TRUNCATED;
		return 0;
	}
	return n;
}

/* Starts a column: returns where its length goes, for coll_col_end. */
static inline uint8_t *coll_col_begin(struct iop_wcur *c)
{
	uint8_t *at = c->p;
	iop_put_u32le(c, 0);
	return at;
}

static inline void coll_col_end(struct iop_wcur *c, uint8_t *at)
{
	if (!c->err)
		iop_store_u32le(at, (uint32_t)(c->p - at - 4));
}

/* The n columns that follow in c, each as its own cursor. */
static inline enum iop_err coll_cols_open(struct iop_rcur *c, struct iop_rcur *col, unsigned n)
{
	for (unsigned j = 0; j < n; j++) {
		uint32_t len = iop_get_u32le(c);
		const uint8_t *p = iop_get_bytes(c, len);
		if (c->err)
			return c->err;
		col[j] = iop_rcur_make(p, len);
	}
	return IOP_OK;
}

/* The first error of the n cursors. */
static inline enum iop_err coll_cols_err(const struct iop_rcur *col, unsigned n)
{
	for (unsigned j = 0; j < n; j++)
		if (col[j].err)
			return col[j].err;
	return IOP_OK;
}

/* MALFORMED unless every column was read to its end. */
static inline enum iop_err coll_cols_done(const struct iop_rcur *col, unsigned n)
{
	for (unsigned j = 0; j < n; j++)
		if (iop_rcur_left(&col[j]))
			return IOP_ERR_MALFORMED;
	return IOP_OK;
}

#endif

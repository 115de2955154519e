/* A tick's serialisation: the header, then its rows by column (delta
 * version 6 on) or row after row (tick.c, up to 5). See tick_cols.h. */
#include "tick_cols.h"

#include <stddef.h>

#include "cols.h"

enum col {
	COL_KIND,
	COL_LC,
	COL_RANK,
	COL_ID,
	COL_CELL, /* the cell fields, in cell_off's order */
	COL_HFLAG = COL_CELL + 24,
	COL_HCOUNT,
	COL_HSUM,
	COL_HMIN,
	COL_HSPAN,
	COL_HBUCKETS,
	COL__N
};

#define OFF(f) offsetof(struct coll_cell, f),
static const size_t cell_off[] = {COLL_CELL_FIELDS(OFF) COLL_CELL_FIELDS_3(OFF)
                                          COLL_CELL_FIELDS_4(OFF)};
#undef OFF
_Static_assert(sizeof cell_off / sizeof cell_off[0] == COL_HFLAG - COL_CELL, "24 cell fields");

enum { HIST_EMPTY, HIST_AS_ROW, HIST_OWN };

static uint64_t field(const struct coll_cell *c, unsigned j)
{
	return *(const uint64_t *)((const char *)c + cell_off[j]);
}

static unsigned hist_flag(const struct coll_cell *c)
{
	if (!c->hist.count)
		return HIST_EMPTY;
	return c->hist.count == c->ops && c->hist.sum == c->time_ns ? HIST_AS_ROW : HIST_OWN;
}

/* FILE, SITE and FS rows' ids are hashes (8 random bytes); the others' are
 * 0 or small (a node row's 1 << 32 | node). */
static bool id_is_hash(uint8_t kind)
{
	return kind == COLL_ROW_FILE || kind == COLL_ROW_SITE || kind == COLL_ROW_FS;
}

static void put_col(const struct coll_tick *k, uint32_t i, unsigned col, struct iop_wcur *c)
{
	const struct coll_key *key = &k->key[i];
	const struct coll_cell *cell = &k->cell[i];
	unsigned flag = hist_flag(cell);
	switch (col) {
	case COL_KIND:
		iop_put_u8(c, key->kind);
		break;
	case COL_LC:
		iop_put_u8(c, (uint8_t)(key->layer << 4 | key->cls));
		break;
	case COL_RANK:
		iop_put_varint(c, key->rank);
		break;
	case COL_ID:
		if (id_is_hash(key->kind))
			iop_put_u64le(c, key->id);
		else
			iop_put_varint(c, key->id);
		break;
	case COL_HFLAG:
		iop_put_varint(c, flag);
		break;
	case COL_HCOUNT:
		if (flag == HIST_OWN)
			iop_put_varint(c, cell->hist.count);
		break;
	case COL_HSUM:
		if (flag == HIST_OWN)
			iop_put_varint(c, cell->hist.sum);
		break;
	case COL_HMIN:
		if (flag != HIST_EMPTY)
			iop_put_varint(c, cell->hist.min);
		break;
	case COL_HSPAN:
		if (flag != HIST_EMPTY)
			iop_put_varint(c, cell->hist.max - cell->hist.min);
		break;
	case COL_HBUCKETS:
		if (cell->hist.count > 1)
			iop_hist_encode_buckets(&cell->hist, c);
		break;
	default: {
		unsigned j = col - COL_CELL;
		if (cell_off[j] == offsetof(struct coll_cell, excl_ns))
			iop_put_svarint(c, (int64_t)(cell->time_ns - cell->excl_ns));
		else
			iop_put_varint(c, field(cell, j));
	}
	}
}

void coll_tick_cols_encode(const struct coll_tick *k, struct iop_wcur *c)
{
	for (unsigned col = 0; col < COL__N; col++) {
		uint8_t *len = coll_col_begin(c);
		for (uint32_t i = 0; i < k->n; i++)
			put_col(k, i, col, c);
		coll_col_end(c, len);
	}
}

/* The histogram of the row just read, from the histogram columns. */
static enum iop_err decode_hist(struct coll_tick *k, struct coll_cell *cell, struct iop_rcur *col)
{
	uint64_t flag = iop_get_varint_max(&col[COL_HFLAG], HIST_OWN);
	if (col[COL_HFLAG].err || flag == HIST_EMPTY) {
		iop_hist_reset(&cell->hist);
		return col[COL_HFLAG].err;
	}
	uint64_t count = cell->ops, sum = cell->time_ns;
	if (flag == HIST_OWN) {
		count = iop_get_varint(&col[COL_HCOUNT]);
		sum = iop_get_varint(&col[COL_HSUM]);
	}
	uint64_t min = iop_get_varint(&col[COL_HMIN]), span = iop_get_varint(&col[COL_HSPAN]);
	enum iop_err e = coll_cols_err(col, COL__N);
	if (e)
		return e;
	if (count == 0 || min + span < min)
		return IOP_ERR_MALFORMED;
	return coll_tick_decode_hist_parts(k, cell, count, min, min + span, sum,
	                                   count == 1 ? NULL : &col[COL_HBUCKETS]);
}

static enum iop_err decode_row(struct coll_tick *k, struct iop_rcur *col, unsigned version)
{
	struct coll_key key = {0};
	key.kind = iop_get_u8(&col[COL_KIND]);
	uint8_t lc = iop_get_u8(&col[COL_LC]);
	key.layer = lc >> 4;
	key.cls = lc & 15;
	key.rank = (uint32_t)iop_get_varint_max(&col[COL_RANK], UINT32_MAX);
	key.id = id_is_hash(key.kind) ? iop_get_u64le(&col[COL_ID]) : iop_get_varint(&col[COL_ID]);
	enum iop_err e = coll_cols_err(col, COL__N);
	struct coll_cell *cell;
	if (e || (e = coll_tick_decoded_row(k, &key, version, &cell)))
		return e;
	for (unsigned j = 0; j < COL_HFLAG - COL_CELL; j++) {
		uint64_t *f = (uint64_t *)((char *)cell + cell_off[j]);
		if (cell_off[j] == offsetof(struct coll_cell, excl_ns))
			*f = cell->time_ns - (uint64_t)iop_get_svarint(&col[COL_CELL + j]);
		else
			*f = iop_get_varint(&col[COL_CELL + j]);
	}
	if ((e = coll_cols_err(col, COL__N)))
		return e;
	return decode_hist(k, cell, col);
}

enum iop_err coll_tick_cols_decode(struct coll_tick *k, struct iop_rcur *c, uint32_t n,
                                   unsigned version)
{
	struct iop_rcur col[COL__N];
	enum iop_err e = coll_cols_open(c, col, COL__N);
	for (uint32_t i = 0; !e && i < n; i++)
		e = decode_row(k, col, version);
	return e ? e : coll_cols_done(col, COL__N);
}

void coll_tick_encode(const struct coll_tick *k, struct iop_wcur *c)
{
	coll_tick_encode_v(k, c, COLL_TICK_CELL_VERSION);
}

void coll_tick_encode_v(const struct coll_tick *k, struct iop_wcur *c, unsigned version)
{
	iop_put_svarint(c, k->t);
	iop_put_varint(c, k->tick_ns);
	iop_put_varint(c, k->n);
	if (version >= 6)
		coll_tick_cols_encode(k, c);
	else
		coll_tick_rows_encode(k, c, version);
}

enum iop_err coll_tick_decode(struct coll_tick *k, struct iop_rcur *c)
{
	return coll_tick_decode_v(k, c, COLL_TICK_CELL_VERSION);
}

enum iop_err coll_tick_decode_v(struct coll_tick *k, struct iop_rcur *c, unsigned version)
{
	uint32_t n;
	enum iop_err e = coll_tick_decode_begin(k, c, &n);
	if (!e)
		e = version >= 6 ? coll_tick_cols_decode(k, c, n, version)
		                 : coll_tick_rows_decode(k, c, n, version);
	if (e)
		coll_tick_reset(k, 0);
	return e;
}

/* A tick's rows by column (delta version 6 on): each field of every row,
 * then the next field, each column after its length. Zeros and small
 * numbers of the same kind lie together, which is what zstd compresses:
 * measured on the root's closed ticks of 16 MIXED ranks (bench/run
 * recording_rows_by_kind), 1 178 KiB a rank and hour against 1 489 row
 * after row (docs/recording.md).
 *
 * Columns, in order (docs/collector.md, "Tick delta"):
 *   kind (u8), layer << 4 | class (u8), rank (varint), id (u64 for FILE,
 *   SITE and FS rows, a varint for RANK and LAYER rows);
 *   the 24 cell fields (COLL_CELL_FIELDS, _3, _4) as varints, but excl_ns
 *   as the svarint time_ns - excl_ns;
 *   the histogram: a flag (0 empty, 1 its count and sum are the row's ops
 *   and time_ns, 2 they are not), count and sum (flag 2 only), min and
 *   max - min (flags 1 and 2), the non-zero buckets' count and (gap,
 *   count) pairs as in iop_hist_encode (counts above 1 only: one call's
 *   bucket is its min's). */
#ifndef IOP_COLL_TICK_COLS_H
#define IOP_COLL_TICK_COLS_H

#include "tick.h"

/* k's rows; the header (t, tick_ns, n) is the caller's. */
void coll_tick_cols_encode(const struct coll_tick *k, struct iop_wcur *c);
/* The n rows that follow, into k (empty and sized for n rows); MALFORMED
 * for a column that does not end where its length says, and as
 * coll_tick_decoded_row and iop_hist_decode reject. */
enum iop_err coll_tick_cols_decode(struct coll_tick *k, struct iop_rcur *c, uint32_t n,
                                   unsigned version);

#endif

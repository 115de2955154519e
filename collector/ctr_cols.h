/* A list of counters as a message carries it: their count, then each
 * counter's fields (delta versions up to 5: counter after counter,
 * coll_counter_encode), or by column (version 6 on: every counter's rank,
 * then every node, and so on; each column after its length, cols.h). By
 * column the 16-rank default recording's counters take less (bench/run
 * recording_rows_by_kind; docs/recording.md). A delta's counters and a
 * keyframe's latest ones are such lists. */
#ifndef IOP_COLL_CTR_COLS_H
#define IOP_COLL_CTR_COLS_H

#include "counter.h"

void coll_counters_encode(const struct coll_counter *v, uint32_t n, struct iop_wcur *c,
                          unsigned version);

/* Reading one: open takes the count (at most max: else the cursor's
 * OVERSIZED, coll_get_count) and, by column, every column's cursor; next
 * gives each counter in turn (the cursor's errors, or MALFORMED as
 * coll_counter_decode); done says whether every column was read to its
 * end (MALFORMED if not). */
enum { COLL_CTR_COLS = 10 + COLL_PAT__COUNT };
struct coll_ctr_reader {
	struct iop_rcur *c;
	unsigned version;
	uint64_t n; /* counters in the list */
	struct iop_rcur col[COLL_CTR_COLS];
};
enum iop_err coll_ctr_reader_open(struct coll_ctr_reader *r, struct iop_rcur *c, uint64_t max,
                                  unsigned version);
enum iop_err coll_ctr_reader_next(struct coll_ctr_reader *r, struct coll_counter *k);
enum iop_err coll_ctr_reader_done(const struct coll_ctr_reader *r);

#endif

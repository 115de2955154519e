/* A leaf's FILE rows' latencies held back until their tick closes
 * (internal to the leaf).
 *
 * Past max_files files a tick, the least active fold into their (layer,
 * class)'s "other" row when the tick closes (coll_tick_fold_files). The
 * MIXED workload's per-rank checkpoint files make thousands of FILE rows
 * a tick and keep 511 of them: recording a call's latency in the
 * histogram of a row about to be merged away (growing its stored range
 * on the first call, one cold bucket a call) was most of what those rows
 * cost. A call's latency in a FILE row therefore goes to the tick's log
 * instead (its other fields still go to the cell), and when the tick
 * closes each one is recorded where the fold would have put it: in its
 * own row's histogram when its file is kept, in the histogram of the row
 * that becomes its (layer, class)'s "other" row otherwise. A histogram's
 * contents do not depend on the order of its values, so the closed tick
 * is the one recording each latency at once made. A row's histogram
 * meanwhile holds the rest of its calls (those merged from a memo
 * entry's acc). */
#ifndef COLL_LATLOG_H
#define COLL_LATLOG_H

#include <stdbool.h>
#include <stdint.h>

#include "tick.h"

struct latlog {
	struct latlog_entry {
		uint64_t ns;     /* the call's latency */
		uint32_t row;    /* its FILE row in the tick */
		uint32_t bucket; /* iop_hist_bucket(ns) */
	} *v;
	uint32_t n, cap;
};

void latlog_free(struct latlog *g);

/* Appends at the end of a full log: false when out of memory. */
bool latlog_grow(struct latlog *g, uint32_t row, uint64_t ns, unsigned bucket);

/* Holds back latency ns (bucket = iop_hist_bucket(ns)) of a call in FILE
 * row row. False when out of memory: record it in the row then. */
static inline bool latlog_add(struct latlog *g, uint32_t row, uint64_t ns, unsigned bucket)
{
	if (g->n == g->cap)
		return latlog_grow(g, row, ns, bucket);
	g->v[g->n++] = (struct latlog_entry){.ns = ns, .row = row, .bucket = bucket};
	return true;
}

/* Closes the log of tick k: records its latencies where the fold puts
 * them, and also in row also[row] when also is given and that is not
 * UINT32_MAX (the file's file system, fsmap.h), then folds k's files to
 * max_files (coll_tick_fold_files, the same error), and empties the
 * log. */
enum iop_err latlog_fold(struct latlog *g, struct coll_tick *k, uint32_t max_files,
                         const uint32_t *also);

#endif

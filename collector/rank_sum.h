/* Per-rank totals for the summary: each layer's bytes, calls and time, the
 * application's own bytes (those of the highest layer the rank called:
 * lower layers carry the same bytes again, or under collective buffering
 * other ranks' bytes) and whether the rank aggregated other ranks' data.
 * All from the cumulative counters (coll_totals_next), so a recording's
 * summary equals the live one. */
#ifndef COLL_RANK_SUM_H
#define COLL_RANK_SUM_H

#include <stdbool.h>
#include <stdint.h>

#include "events.h"
#include "state.h"

struct coll_layer_sum {
	uint64_t read_bytes, write_bytes, read_ops, write_ops, meta_ops, time_ns;
};

/* Adds a totals cell of key k to l (by its class). */
void coll_layer_sum_add(struct coll_layer_sum *l, const struct coll_key *k,
                        const struct coll_cell *c);

struct coll_rank_sum {
	struct coll_layer_sum layer[IOP_LAYER__COUNT];
	/* on some file it called MPI-IO on, its POSIX bytes were more than
	 * twice its own MPI-IO bytes (mostly other ranks' data) while another
	 * rank's MPI-IO bytes there went (partly) through someone else's
	 * POSIX calls */
	bool aggregator;
};

/* One entry per rank below s->n_ranks; NULL when out of memory. */
struct coll_rank_sum *coll_rank_sums(const struct coll_state *s);

/* Bytes read and written at the highest layer the rank moved data
 * through (HDF5, else MPI-IO, else POSIX + STDIO). */
uint64_t coll_rank_own_bytes(const struct coll_rank_sum *r);

#endif

/* How a tick's ranks are spread: each rank's throughput and p99 latency in
 * the tick, their distribution over the ranks (min, quartiles, p99, max),
 * and the ranks at either end. A recording of a job above its rank cap
 * (record.h) keeps only some ranks' rows a tick; it keeps this
 * distribution, computed from every rank's rows, so a replay draws the
 * line the live dashboard drew (docs/recording.md, "Larger jobs").
 *
 * A rank's figures are those of the Ranks view for a one-tick window with
 * every layer in scope: throughput is the bytes its RANK rows of read and
 * write calls moved, p99 the 99th percentile of the latencies of all its
 * rows merged. Ranks without a RANK row in the tick are not in it; ranks
 * with rows but no call that ended (a call in flight) are in the
 * throughput's distribution, not the latency's. */
#ifndef COLL_RANK_DIST_H
#define COLL_RANK_DIST_H

#include <stdint.h>

#include "codec.h"
#include "err.h"
#include "tick.h"

enum { COLL_Q_MIN, COLL_Q_Q1, COLL_Q_MED, COLL_Q_Q3, COLL_Q_P99, COLL_Q_MAX, COLL_Q__N };

struct coll_rank_dist {
	int64_t t;          /* the tick */
	uint32_t ranks;     /* ranks with rows in it; 0: no distribution */
	uint32_t lat_ranks; /* of those, ranks with a call that ended */
	uint64_t bytes[COLL_Q__N];  /* bytes a rank moved in the tick */
	uint64_t p99_ns[COLL_Q__N]; /* a rank's p99 latency */
};

struct coll_rank_fig {
	uint32_t rank;
	uint64_t bytes;
	uint64_t p99_ns;
	uint8_t has_lat; /* a call ended: p99_ns is a latency */
};

/* The figures of each rank with RANK rows in k, by rank (malloc'd; *n = 0
 * and *out = NULL when none). Rows of folded ranks (coll_key_is_node) are
 * not a rank's. NOMEM. */
enum iop_err coll_rank_figs(const struct coll_tick *k, struct coll_rank_fig **out, uint32_t *n);
/* The distribution of n figures (nearest rank: the value at index
 * ceil(q * n) - 1 of the sorted values). NOMEM. */
enum iop_err coll_rank_dist_of(const struct coll_rank_fig *f, uint32_t n, int64_t t,
                               struct coll_rank_dist *d);
/* Both, of tick k. */
enum iop_err coll_rank_dist_tick(const struct coll_tick *k, struct coll_rank_dist *d);

/* In a delta body (version 5 on) and a keyframe (version 6 on): varint
 * ranks; when not 0, svarint t, varint lat_ranks, the 6 bytes and the 6
 * p99s as varints. Decode: MALFORMED when lat_ranks > ranks or the values
 * are not in order. */
void coll_rank_dist_encode(const struct coll_rank_dist *d, struct iop_wcur *c);
enum iop_err coll_rank_dist_decode(struct coll_rank_dist *d, struct iop_rcur *c);

#endif

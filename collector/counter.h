/* One process's counter of (file, layer, class): the type (counter.h),
 * apart from the sets and messages that hold them (delta.h) so that the
 * codec of a list of them (ctr_cols.h) needs nothing else. */
#ifndef IOP_COLL_COUNTER_H
#define IOP_COLL_COUNTER_H

#include <stdint.h>

#include "codec.h"
#include "err.h"
#include "pattern.h"

/* One process's cumulative counter of (file, layer, class), as the shim
 * last reported it: absolute values, not increments. A process is (node,
 * pid, image); image counts the program images a leaf saw in that process
 * (exec). Merging keeps the larger of each value, so a counter sent twice
 * (a resend after a lost ack, a restarted leaf's resync) changes nothing:
 * totals are sums over processes of their latest values. */
struct coll_counter {
	uint64_t file; /* path hash; 0 = calls on no file */
	uint64_t ops, bytes, time_ns;
	uint32_t errors; /* failed calls; stops at 2^32 - 1 (a counter in 72 bytes,
	                    not 80: the 4096-rank root keeps 1.5 million) */
	/* its data calls with an offset per access pattern (pattern.h), as the
	 * leaf counted them from the events (dropped events are missing);
	 * shares, not totals: they stop at 2^32 - 1 (COLL_PAT_MAX). 32 bits
	 * save a sixth of a counter, and the 4096-rank root keeps a million */
	uint32_t pat[COLL_PAT__COUNT];
	uint32_t rank;
	uint32_t node, pid, image;
	uint8_t layer, cls;
};

#define COLL_PAT_MAX UINT32_MAX
/* A pattern count, or a count of errors, as a counter keeps it. */
static inline uint32_t coll_count32(uint64_t n)
{
	return n < COLL_PAT_MAX ? (uint32_t)n : COLL_PAT_MAX;
}

/* One counter as a message encodes it (docs/collector.md; ctr_cols.c).
 * Decode returns the cursor's error or MALFORMED (a layer or class out of
 * range). */
void coll_counter_encode(const struct coll_counter *k, struct iop_wcur *c);
enum iop_err coll_counter_decode(struct coll_counter *k, struct iop_rcur *c);
/* coll_counter_decode of delta version version (no patterns before 3);
 * coll_counter_decode reads this version's. */
#define COLL_COUNTER_VERSION 6 /* delta.h's COLL_DELTA_VERSION */
enum iop_err coll_counter_decode_v(struct coll_counter *k, struct iop_rcur *c, unsigned version);

#endif

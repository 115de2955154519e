/* lg_rank_to_leaf (loadgen.h): iop-loadgen's ranks feeding a leaf in the
 * same process, in simulated time, for the collector benchmarks
 * (root_bench, recsize_bench). Kept apart from loadgen_rank.c so that
 * iop-loadgen itself does not link the collector. */
#include "leaf.h"
#include "loadgen.h"

enum iop_err lg_rank_to_leaf(struct lg_rank *r, const struct lg_opts *o, uint64_t now_ns,
                             uint64_t real0_ns, uint8_t *buf, struct coll_leaf *leaf,
                             uint64_t *events)
{
	enum iop_err e = lg_rank_generate(r, o, now_ns, real0_ns);
	while (!e && lg_rank_pending(r)) {
		struct lg_built b;
		if ((e = lg_rank_build(r, o, buf, false, real0_ns + now_ns, real0_ns, &b)))
			break;
		if ((e = coll_leaf_frame(leaf, buf, b.len, real0_ns + now_ns)))
			break;
		lg_rank_commit(r, &b);
		*events += b.events;
	}
	return e;
}

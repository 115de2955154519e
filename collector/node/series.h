/* Each node's I/O pressure and busiest device, tick by tick: what the
 * heatmap draws when `M` has it show node figures (issue 21). The state
 * keeps the node samples of its newest ticks here (as many ticks as its
 * finest history tier), a keyframe carries them (field 20), so a live
 * dashboard that joins late and a replay that seeks draw the same cells.
 * A tick no node sampled takes no room. */
#ifndef IOP_NODE_SERIES_H
#define IOP_NODE_SERIES_H

#include <stdint.h>

#include "codec.h"
#include "err.h"
#include "nodes.h"

#define COLL_NODE_UNKNOWN UINT32_MAX /* a figure the node did not have */
#define COLL_NODE_SERIES_MAX (1u << 20) /* ticks a series keeps, at most */

struct coll_node_point {
	uint32_t node;     /* node id */
	uint32_t full_ppm; /* I/O pressure (full) over the tick, or COLL_NODE_UNKNOWN */
	uint32_t util_ppm; /* its busiest block device's utilisation, or COLL_NODE_UNKNOWN */
};

struct coll_node_tick {
	int64_t t;
	uint32_t n;
	struct coll_node_point *v; /* by node id, increasing */
};

struct coll_node_series {
	struct coll_node_tick *v; /* ring, t increasing from head */
	uint32_t cap, n, head;
};

void coll_node_series_init(struct coll_node_series *s, uint32_t cap_ticks);
void coll_node_series_free(struct coll_node_series *s);
/* Tick t's samples (nothing when x has none). A tick older than the
 * newest kept is ignored; the newest again is replaced. Ticks more than
 * cap older than t are dropped. NOMEM leaves the series as it was. */
enum iop_err coll_node_series_push(struct coll_node_series *s, int64_t t,
                                   const struct coll_nodeset *x);
/* Node's point in tick t, or NULL. */
const struct coll_node_point *coll_node_series_at(const struct coll_node_series *s, int64_t t,
                                                  uint32_t node);

/* varint cap, varint ticks (at most cap), then per tick (t increasing)
 * svarint t, varint points (at least 1), per point (node increasing) u32
 * node, varints full and util, each ppm + 1 (0: unknown). Decode replaces
 * *s (empty on failure): MALFORMED for a value out of range or out of
 * order, OVERSIZED past COLL_NODE_SERIES_MAX ticks or COLL_NODES_MAX
 * nodes. */
void coll_node_series_encode(const struct coll_node_series *s, struct iop_wcur *c);
enum iop_err coll_node_series_decode(struct coll_node_series *s, struct iop_rcur *c);

#endif

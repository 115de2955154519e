/* What the default recording ("view", record.h) keeps of a tick's FILE and
 * SITE rows: every row when the tick has at most cap files (sites); beyond
 * that, the rows of the cap files that moved the most bytes, of the cap
 * that took the most time, and of every file an alert names, with the
 * rest folded into one COLL_ID_OTHER row per (layer, class), so totals
 * still add up (docs/recording.md, "Default, lean and full recordings"). */
#ifndef COLL_REC_VIEW_H
#define COLL_REC_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rank_dist.h"
#include "tick.h"

#define COLL_REC_VIEW_CAP 256
/* Above this many ranks a tick (configurable: record.h), the default
 * recording keeps the rows of the ranks an alert named and of the
 * COLL_REC_RANK_ENDS ranks at each end of the tick's throughput and of
 * its p99, and sums the other ranks' rows per node (coll_key_node). */
#define COLL_REC_RANK_CAP  1024
#define COLL_REC_RANK_ENDS 16

/* Files an alert named, kept in every tick from the alert's start. */
struct rec_named {
	uint64_t *id;
	size_t n, cap;
};

/* Adds id unless present; NOMEM leaves the set as it was. */
enum iop_err rec_named_add(struct rec_named *s, uint64_t id);
void rec_named_free(struct rec_named *s);

/* Whether k has more than cap FILE or SITE rows: only then may the fold
 * change it. */
bool rec_view_over(const struct coll_tick *k, uint32_t cap);
/* Folds k's FILE and SITE rows as above (for a tick rec_view_over finds
 * over the cap: the caller has counted). NOMEM leaves k as it was. */
enum iop_err rec_view_fold(struct coll_tick *k, uint32_t cap, const struct rec_named *named);

/* The node of a rank, for rec_view_fold_ranks. */
typedef uint32_t rec_node_fn(void *arg, uint32_t rank);

/* When k has RANK rows of more than cap ranks: *dist = their distribution
 * (rank_dist.h), then the rows of the ranks above are kept (named: ranks
 * alerts named) and the others' are summed into one row per node, layer
 * and class. Otherwise nothing changes and dist->ranks is 0. Rows keep
 * their order, a node's row taking the place of its first folded row.
 * NOMEM leaves k as it was. */
enum iop_err rec_view_fold_ranks(struct coll_tick *k, uint32_t cap, const struct rec_named *named,
                                 rec_node_fn *node, void *arg, struct coll_rank_dist *dist);

#endif

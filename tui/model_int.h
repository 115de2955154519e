/* What model.c, model_detail.c and heat.c share: the window accumulator
 * and an id -> index map. Internal to tui/. */
#ifndef TUI_MODEL_INT_H
#define TUI_MODEL_INT_H

#include "hist.h"
#include "model.h"

/* One subject's sums over the window. */
struct acc {
	uint64_t rd, wr, ops, meta, time, excl, wait, child, child_parent_ops, infl;
	struct iop_hist h;
	uint8_t layers;
	bool seen;
	float spark[TUI_SPARK];
};

/* Node ids to indexes in s->hosts (host_index: malloc'd, sorted by node
 * with host_idx_cmp, NULL when out of memory; host_of: n_hosts when the
 * node is unknown or v is NULL). */
struct host_idx {
	uint32_t node, h;
};
int host_idx_cmp(const void *x, const void *y);
struct host_idx *host_index(const struct coll_state *s);
uint32_t host_of(const struct host_idx *v, uint32_t n_hosts, uint32_t node);
/* The entry of node in v (n entries sorted by host_idx_cmp: host_index's,
 * or any such list), or NULL. */
const struct host_idx *host_find(const struct host_idx *v, uint32_t n, uint32_t node);

void acc_cell(struct acc *a, const struct coll_key *k, const struct coll_cell *c, bool last);
/* acc_cell but the latencies (the histogram): lazy_latency's. */
void acc_sums(struct acc *a, const struct coll_key *k, const struct coll_cell *c, bool last);
/* The latency columns of a row from the histogram of its calls (and the
 * row no longer pending). */
void latency_cols(const struct iop_hist *h, struct tui_row *r);
void acc_free(struct acc *a, size_t n);
/* Fills the rate and latency columns of a row from an accumulator. */
void acc_row(const struct acc *a, struct tui_row *r, double window_s);

/* Visits every distinct tick (or bin) of [t_end - span + 1, t_end] of the
 * history, oldest first; in_window tells whether it is in the last window
 * ticks, slot its sparkline slot (-1 when before). With detail, ticks the
 * history's budget thinned (no RANK, FILE or SITE rows) are passed over,
 * and window_secs() counts only the others. */
typedef void tick_visit_fn(void *arg, const struct coll_tick *k, bool in_window, int slot, bool last);
void window_walk(const struct coll_state *s, const struct tui_query *q, bool spark, bool detail,
                 tick_visit_fn *fn, void *arg);
double window_secs(const struct coll_state *s, const struct tui_query *q, bool detail);
/* Whether k has its rows per rank, file and site: not thinned by the
 * history's budget, and in a lean recording (state.h, detail_ticks) one
 * of its whole ticks (an empty tick is whole only on the period). A
 * detail walk of a lean recording's window without a whole tick reaches
 * back to the last one, at most detail_ticks before the window's end. */
bool tick_has_detail(const struct coll_state *s, const struct coll_tick *k);
bool layer_in_scope(const struct tui_query *q, unsigned layer);

/* uint64 id -> index, open addressing. */
struct idmap {
	uint64_t *key;
	uint32_t *val;
	uint32_t n, cap; /* cap: power of two */
};
void idmap_free(struct idmap *m);
/* The index of id, added as next when absent; UINT32_MAX when out of memory. */
uint32_t idmap_get(struct idmap *m, uint64_t id, uint32_t next);
uint32_t idmap_find(const struct idmap *m, uint64_t id);

struct tui_row *table_add(struct tui_table *t);
uint8_t alert_sev(const struct tui_query *q, uint64_t tick_ns, uint32_t rank, uint64_t file, int layer);
bool row_passes(const struct tui_query *q, const struct tui_row *r);

/* Layer rows: the job's (rank COLL_RANK_NONE) or one rank's. */
enum iop_err build_layer_rows(struct tui_table *t, const struct coll_state *s,
                              const struct tui_query *q, uint32_t rank);
/* The Files, Call sites or Filesystems table over the window (rows of
 * kind COLL_ROW_FILE, _SITE or _FS). */
enum iop_err build_ids(struct tui_table *t, const struct coll_state *s, const struct tui_query *q,
                       uint8_t kind);
enum iop_err build_detail(struct tui_table *t, const struct coll_state *s, const struct tui_query *q);
enum iop_err build_file_ranks(struct tui_table *t, const struct coll_state *s, const struct tui_query *q);
/* Enter on a file system (q->file its id): its files, then the ranks that
 * made calls on them, each with its totals over those files. */
enum iop_err build_fs_detail(struct tui_table *t, const struct coll_state *s, const struct tui_query *q);
enum iop_err build_alerts(struct tui_table *t, const struct coll_state *s, const struct tui_query *q);

#endif

/* A leaf's FILE rows' latencies held back until their tick closes. See
 * latlog.h. */
#include "latlog.h"

#include <stdlib.h>
#include <string.h>

#include "events.h"

void latlog_free(struct latlog *g)
{
	free(g->v);
	memset(g, 0, sizeof(*g));
}

bool latlog_grow(struct latlog *g, uint32_t row, uint64_t ns, unsigned bucket)
{
	uint32_t cap = g->cap ? g->cap * 2 : 1024;
	if (cap <= g->cap) /* 2^32 entries: not in one tick */
		return false;
	struct latlog_entry *v = realloc(g->v, (size_t)cap * sizeof(*v));
	if (!v)
		return false;
	g->v = v;
	g->cap = cap;
	return latlog_add(g, row, ns, bucket);
}

enum iop_err latlog_fold(struct latlog *g, struct coll_tick *k, uint32_t max_files,
                         const uint32_t *also)
{
	uint8_t *kept;
	enum iop_err e = coll_tick_fold_plan(k, max_files, &kept);
	/* A folded row's latencies go to the row the fold makes its (layer,
	 * class)'s "other" row, whose merges then add only what the folded
	 * rows' histograms hold themselves. */
	uint32_t other[IOP_LAYER__COUNT][IOP_CLASS__COUNT];
	if (kept)
		coll_tick_fold_others(k, kept, other);
	for (uint32_t i = 0; i < g->n; i++) {
		const struct latlog_entry *en = &g->v[i];
		uint32_t to = en->row;
		if (kept && !kept[to])
			to = other[k->key[to].layer][k->key[to].cls];
		/* as coll_cell_add_call_at: a full bucket loses the latency, not the call */
		(void)iop_hist_record_at(&k->cell[to].hist, en->ns, en->bucket);
		/* a folded file's latency also goes to its file system's row; a
		 * kept file's row is merged into it whole below (a merge a row,
		 * not a record a call) */
		if (also && kept && !kept[en->row] && also[en->row] != UINT32_MAX)
			(void)iop_hist_record_at(&k->cell[also[en->row]].hist, en->ns, en->bucket);
	}
	for (uint32_t i = 0; also && i < k->n; i++)
		if (also[i] != UINT32_MAX && (!kept || kept[i]))
			(void)iop_hist_merge(&k->cell[also[i]].hist, &k->cell[i].hist);
	g->n = 0;
	if (kept)
		coll_tick_fold_apply(k, kept);
	free(kept);
	return e;
}

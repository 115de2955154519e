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

enum iop_err latlog_fold(struct latlog *g, struct coll_tick *k, uint32_t max_files)
{
	uint8_t *kept;
	enum iop_err e = coll_tick_fold_plan(k, max_files, &kept);
	/* to[row]: where a row's latencies go. A folded row's go to the
	 * first folded row of its (layer, class), which the fold makes the
	 * "other" row (coll_tick_fold_apply), and whose merges then add only
	 * what the folded rows' histograms hold themselves. */
	uint32_t other[IOP_LAYER__COUNT][IOP_CLASS__COUNT];
	memset(other, 0xff, sizeof(other));
	for (uint32_t i = 0; i < g->n; i++) {
		const struct latlog_entry *en = &g->v[i];
		uint32_t to = en->row;
		if (kept && !kept[to]) {
			const struct coll_key *key = &k->key[to];
			uint32_t *o = &other[key->layer][key->cls];
			if (*o == UINT32_MAX) /* the first folded row: the lowest index */
				for (*o = 0; !(k->key[*o].kind == COLL_ROW_FILE && !kept[*o] &&
				               k->key[*o].layer == key->layer && k->key[*o].cls == key->cls);)
					++*o;
			to = *o;
		}
		/* as coll_cell_add_call_at: a full bucket loses the latency, not the call */
		(void)iop_hist_record_at(&k->cell[to].hist, en->ns, en->bucket);
	}
	g->n = 0;
	if (kept)
		coll_tick_fold_apply(k, kept);
	free(kept);
	return e;
}

/* The latency columns of the rows shown, filled after a build that left
 * them out (model.h, lazy_latency): the latencies of only their ranks,
 * merged over the window. */
#include <stdlib.h>
#include <string.h>

#include "model_int.h"

struct lat_walk {
	const struct tui_query *q;
	const uint32_t *slot_of_rank; /* [rank]: the pending row's slot, or UINT32_MAX */
	uint32_t n;
	const struct host_idx *hosts; /* grouped: node ids, for rows a recording summed per node */
	uint32_t nh;
	const struct host_idx *node_slot; /* node id -> slot, sorted */
	uint32_t n_node_slot;
	struct iop_hist *h;           /* [slot] */
};

static uint32_t slot_of_node(const struct lat_walk *w, uint32_t node)
{
	const struct host_idx *x = host_find(w->node_slot, w->n_node_slot, node);
	return x ? x->h : UINT32_MAX;
}

static void lat_visit(void *arg, const struct coll_tick *k, bool in_window, int slot, bool last)
{
	(void)slot, (void)last;
	struct lat_walk *w = arg;
	if (!in_window)
		return;
	for (uint32_t i = 0; i < k->n; i++) {
		const struct coll_key *key = &k->key[i];
		if (key->kind != COLL_ROW_RANK || !k->cell[i].hist.count ||
		    !layer_in_scope(w->q, key->layer))
			continue;
		uint32_t at = UINT32_MAX;
		if (coll_key_is_node(key)) { /* as rank_visit: grouped only */
			if (w->n_node_slot) {
				uint32_t h = host_of(w->hosts, w->nh, coll_key_node_id(key));
				at = slot_of_node(w, h < w->nh ? w->hosts[h].node : UINT32_MAX);
			}
		} else if (key->rank < w->n) {
			at = w->slot_of_rank[key->rank];
		}
		if (at != UINT32_MAX)
			(void)iop_hist_merge(&w->h[at], &k->cell[i].hist);
	}
}

enum iop_err tui_table_fill_latency(struct tui_table *t, const struct coll_state *s,
                                    const struct tui_query *q, size_t from, size_t to)
{
	if (to > t->n)
		to = t->n;
	uint32_t m = 0, nn = 0;
	for (size_t j = from; j < to; j++)
		if (t->rows[j].lat_pending) {
			m++;
			nn += t->rows[j].kind == TUI_ROW_NODE;
		}
	if (!m)
		return IOP_OK;
	struct lat_walk w = {.q = q, .n = s->n_ranks, .h = calloc(m, sizeof *w.h)};
	uint32_t *slot_of_rank = malloc((s->n_ranks + 1) * sizeof *slot_of_rank);
	size_t *row_of = malloc(m * sizeof *row_of);
	struct host_idx *node_slot = malloc((nn + 1) * sizeof *node_slot);
	struct host_idx *hosts = nn ? host_index(s) : NULL;
	enum iop_err e = IOP_OK;
	if (!w.h || !slot_of_rank || !row_of || !node_slot || (nn && !hosts)) {
		e = IOP_ERR_NOMEM;
		goto out;
	}
	memset(slot_of_rank, 0xff, (s->n_ranks + 1) * sizeof *slot_of_rank);
	uint32_t k = 0;
	for (size_t j = from; j < to; j++) {
		const struct tui_row *r = &t->rows[j];
		if (!r->lat_pending)
			continue;
		row_of[k] = j;
		if (r->kind == TUI_ROW_RANK && r->rank < s->n_ranks)
			slot_of_rank[r->rank] = k;
		else if (r->kind == TUI_ROW_NODE)
			node_slot[w.n_node_slot++] = (struct host_idx){r->node, k};
		k++;
	}
	qsort(node_slot, w.n_node_slot, sizeof *node_slot, host_idx_cmp);
	w.node_slot = node_slot;
	w.hosts = hosts;
	w.nh = s->n_hosts;
	/* a node row's ranks (the unknown node's row: ranks of no known host) */
	for (uint32_t r = 0; w.n_node_slot && r < s->n_ranks; r++) {
		if (!s->ranks[r].state)
			continue;
		uint32_t h = host_of(hosts, s->n_hosts, (uint32_t)s->ranks[r].node);
		uint32_t at = slot_of_node(&w, h < s->n_hosts ? s->hosts[h].node : UINT32_MAX);
		if (at != UINT32_MAX)
			slot_of_rank[r] = at;
	}
	w.slot_of_rank = slot_of_rank;
	window_walk(s, q, false, true, lat_visit, &w);
	for (uint32_t i = 0; i < m; i++)
		latency_cols(&w.h[i], &t->rows[row_of[i]]);
out:
	for (uint32_t i = 0; w.h && i < m; i++)
		iop_hist_free(&w.h[i]);
	free(w.h);
	free(slot_of_rank);
	free(row_of);
	free(node_slot);
	free(hosts);
	return e;
}

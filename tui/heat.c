/* The heatmap (model.h): rows of a ranks or nodes table, columns ticks. */
#include <stdlib.h>
#include <string.h>

#include "model_int.h"
#include "select.h"

/* The table's node rows by node id, for the rows a recording summed per
 * node (coll_key_node). */
struct node_rows {
	struct host_idx *v; /* node, table row */
	uint32_t n;
};

/* One tick's cells: throughput or the worst p99 per rank (per node: of
 * its ranks' rows and its summed rows), into col (a column's cells); the
 * largest it made, as a cell only grows. */
static float heat_tick(const struct coll_tick *k, const struct tui_query *q, bool p99,
                       const uint32_t *row_of, uint32_t n_ranks, const struct node_rows *nodes,
                       float *col)
{
	float top = 0;
	double secs = k->tick_ns ? k->tick_ns / 1e9 : 1;
	for (uint32_t i = 0; i < k->n; i++) {
		const struct coll_key *key = &k->key[i];
		if (key->kind != COLL_ROW_RANK || !layer_in_scope(q, key->layer))
			continue;
		uint32_t r = UINT32_MAX;
		if (coll_key_is_node(key)) {
			const struct host_idx *x = host_find(nodes->v, nodes->n, coll_key_node_id(key));
			r = x ? x->h : UINT32_MAX;
		} else if (key->rank < n_ranks) {
			r = row_of[key->rank];
		}
		if (r == UINT32_MAX)
			continue;
		float *cell = &col[r];
		if (!p99) {
			*cell += (float)(k->cell[i].bytes / secs);
		} else if (k->cell[i].hist.count) {
			float v = (float)(iop_hist_quantile(&k->cell[i].hist, 0.99) / 1e9);
			if (v > *cell)
				*cell = v;
		}
		if (*cell > top)
			top = *cell;
	}
	return top;
}

/* The node metrics: each row's node's figure from the series, -1 where
 * the node had none that tick. */
static void heat_nodes(struct tui_heat *h, const struct coll_state *s, const struct tui_table *t)
{
	for (uint32_t c = 0; c < h->cols; c++) {
		for (uint32_t r = 0; r < h->rows; r++) {
			const struct coll_node_point *p =
			        coll_node_series_at(&s->series, h->t0 + c, t->rows[r].node);
			uint32_t ppm = !p ? COLL_NODE_UNKNOWN
			               : h->metric == TUI_HEAT_PRESSURE ? p->full_ppm
			                                                : p->util_ppm;
			h->v[tui_heat_at(h, r, c)] = ppm == COLL_NODE_UNKNOWN ? -1.0f : (float)(ppm / 1e6);
		}
	}
}

static bool node_metric(enum tui_heat_metric m)
{
	return m == TUI_HEAT_PRESSURE || m == TUI_HEAT_DEVICE;
}

/* Whether the alert is about the row, for the heatmap's metric. */
static bool alert_on_row(const struct coll_alert_record *a, const struct coll_state *s,
                         const struct tui_row *row, enum tui_heat_metric m)
{
	if (node_metric(m))
		return a->kind == COLL_ALERT_NODE_PRESSURE && a->node == row->node;
	if (a->rank == COLL_RANK_NONE)
		return false;
	return row->kind == TUI_ROW_RANK
	               ? row->rank == a->rank
	               : a->rank < s->n_ranks && (uint32_t)s->ranks[a->rank].node == row->node;
}

/* The median of the column's values above 0 (0 when fewer than 3), by
 * selection: tmp holds their bits, which order as the values do (floats
 * above 0). A qsort of each column was most of a heatmap's redraw at
 * 65 536 ranks (tui_bench tui_heat_redraw_ms_65536). */
static float column_median(const struct tui_heat *h, uint32_t c, uint64_t *tmp)
{
	uint32_t n = 0;
	const float *col = &h->v[tui_heat_at(h, 0, c)];
	for (uint32_t r = 0; r < h->rows; r++) {
		float v = col[r];
		if (v > 0) {
			uint32_t bits;
			memcpy(&bits, &v, sizeof bits);
			tmp[n++] = bits;
		}
	}
	if (n < 3)
		return 0;
	iop_select_u64(tmp, 0, n, n / 2);
	uint32_t bits = (uint32_t)tmp[n / 2];
	float med;
	memcpy(&med, &bits, sizeof med);
	return med;
}

static void heat_flags(struct tui_heat *h, const struct coll_state *s, const struct tui_table *t,
                       const struct tui_query *q, uint64_t *tmp)
{
	/* a p99 four times its tick's median is flagged */
	for (uint32_t c = 0; h->metric == TUI_HEAT_P99 && c < h->cols; c++) {
		float med = column_median(h, c, tmp);
		for (uint32_t r = 0; med > 0 && r < h->rows; r++)
			if (h->v[tui_heat_at(h, r, c)] > 4 * med)
				h->flag[tui_heat_at(h, r, c)] = 1;
	}
	/* alerts about the row over the ticks they covered */
	for (size_t i = 0; i < q->n_alerts; i++) {
		const struct coll_alert_record *a = &q->alerts[i];
		for (uint32_t r = 0; r < h->rows; r++) {
			bool mine = alert_on_row(a, s, &t->rows[r], h->metric);
			for (uint32_t c = 0; mine && c < h->cols; c++)
				if (tui_alert_at(a, h->t0 + c, s->tick_ns))
					h->flag[tui_heat_at(h, r, c)] = 2;
		}
	}
}

enum iop_err tui_heat_build(struct tui_heat *h, const struct coll_state *s,
                            const struct tui_table *t, const struct tui_query *q, uint32_t cols,
                            enum tui_heat_metric metric)
{
	tui_heat_free(h);
	h->rows = (uint32_t)t->n;
	h->cols = cols ? cols : 1;
	h->t0 = q->t_end - h->cols + 1;
	h->metric = metric;
	bool p99 = metric == TUI_HEAT_P99;
	size_t cells = (size_t)h->rows * h->cols;
	h->v = calloc(cells + 1, sizeof *h->v);
	h->flag = calloc(cells + 1, 1);
	uint32_t *row_of = malloc((s->n_ranks + 1) * sizeof *row_of);
	uint64_t *tmp = malloc((h->rows + 1) * sizeof *tmp);
	struct node_rows nodes = {malloc((h->rows + 1) * sizeof *nodes.v), 0};
	if (!h->v || !h->flag || !row_of || !tmp || !nodes.v) {
		free(row_of);
		free(tmp);
		free(nodes.v);
		tui_heat_free(h);
		return IOP_ERR_NOMEM;
	}
	memset(row_of, 0xff, (s->n_ranks + 1) * sizeof *row_of);
	for (uint32_t r = 0; r < h->rows; r++) {
		const struct tui_row *row = &t->rows[r];
		if (row->kind == TUI_ROW_RANK && row->rank < s->n_ranks)
			row_of[row->rank] = r;
		if (row->kind == TUI_ROW_NODE)
			nodes.v[nodes.n++] = (struct host_idx){row->node, r};
	}
	qsort(nodes.v, nodes.n, sizeof *nodes.v, host_idx_cmp);
	/* a node's row is its ranks' too: one look a rank (each node row
	 * walking every rank was 67 M steps a redraw at 65 536 ranks on 1024
	 * nodes, tui_bench tui_heat_redraw_ms_65536) */
	for (uint32_t k = 0; nodes.n && k < s->n_ranks; k++) {
		const struct host_idx *x =
		    s->ranks[k].state ? host_find(nodes.v, nodes.n, (uint32_t)s->ranks[k].node) : NULL;
		if (x)
			row_of[k] = x->h;
	}
	const struct coll_tick *prev = NULL;
	if (node_metric(metric))
		heat_nodes(h, s, t);
	for (uint32_t c = 0; !node_metric(metric) && c < h->cols; c++) {
		const struct coll_tick *k = coll_state_tick(s, h->t0 + c);
		if (k && !tick_has_detail(s, k)) { /* its layers only: the history's
		                                      budget, or a lean recording */
			memset(&h->flag[tui_heat_at(h, 0, c)], 3, h->rows);
			continue;
		}
		if (!k || k == prev)
			continue; /* a bin of an older tier shows once */
		prev = k;
		float top = heat_tick(k, q, p99, row_of, s->n_ranks, &nodes, &h->v[tui_heat_at(h, 0, c)]);
		if (top > h->vmax)
			h->vmax = top;
	}
	if (node_metric(metric))
		h->vmax = 1; /* a share: full is 100 %, whatever the job's peak */
	heat_flags(h, s, t, q, tmp);
	free(row_of);
	free(tmp);
	free(nodes.v);
	return IOP_OK;
}

const char *tui_heat_metric_name(enum tui_heat_metric m)
{
	static const char *const name[TUI_HEAT__COUNT] = {"throughput", "p99", "io pressure",
	                                                  "device busy"};
	return (unsigned)m < TUI_HEAT__COUNT ? name[m] : "?";
}

void tui_heat_free(struct tui_heat *h)
{
	free(h->v);
	free(h->flag);
	h->v = NULL;
	h->flag = NULL;
	h->rows = 0;
	h->vmax = 0;
}

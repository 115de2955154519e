/* The heatmap (model.h): rows of a ranks or nodes table, columns ticks. */
#include <stdlib.h>
#include <string.h>

#include "model_int.h"

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;
	return (x > y) - (x < y);
}

/* One tick's cells: throughput or the worst p99 per rank, into col. */
static void heat_tick(const struct coll_tick *k, const struct tui_query *q, bool p99,
                      const uint32_t *row_of, uint32_t n_ranks, float *col, uint32_t stride)
{
	double secs = k->tick_ns ? k->tick_ns / 1e9 : 1;
	for (uint32_t i = 0; i < k->n; i++) {
		const struct coll_key *key = &k->key[i];
		if (key->kind != COLL_ROW_RANK || key->rank >= n_ranks || !layer_in_scope(q, key->layer))
			continue;
		uint32_t r = row_of[key->rank];
		if (r == UINT32_MAX)
			continue;
		float *cell = &col[(size_t)r * stride];
		if (!p99) {
			*cell += (float)(k->cell[i].bytes / secs);
		} else if (k->cell[i].hist.count) {
			float v = (float)(iop_hist_quantile(&k->cell[i].hist, 0.99) / 1e9);
			if (v > *cell)
				*cell = v;
		}
	}
}

static void heat_flags(struct tui_heat *h, const struct coll_state *s, const struct tui_table *t,
                       const struct tui_query *q, float *tmp)
{
	for (uint32_t c = 0; c < h->cols; c++) {
		uint32_t n = 0;
		for (uint32_t r = 0; r < h->rows; r++)
			if (h->v[(size_t)r * h->cols + c] > 0)
				tmp[n++] = h->v[(size_t)r * h->cols + c];
		float med = 0;
		if (n >= 3) {
			qsort(tmp, n, sizeof *tmp, cmp_float);
			med = tmp[n / 2];
		}
		for (uint32_t r = 0; r < h->rows; r++) {
			float v = h->v[(size_t)r * h->cols + c];
			if (h->p99 && med > 0 && v > 4 * med)
				h->flag[(size_t)r * h->cols + c] = 1;
		}
	}
	/* alerts about a rank over the ticks they covered */
	for (size_t i = 0; i < q->n_alerts; i++) {
		const struct coll_alert_record *a = &q->alerts[i];
		if (a->rank == COLL_RANK_NONE)
			continue;
		for (uint32_t r = 0; r < h->rows; r++) {
			const struct tui_row *row = &t->rows[r];
			bool mine = row->kind == TUI_ROW_RANK
			                    ? row->rank == a->rank
			                    : a->rank < s->n_ranks && (uint32_t)s->ranks[a->rank].node == row->node;
			for (uint32_t c = 0; mine && c < h->cols; c++)
				if (tui_alert_at(a, h->t0 + c, s->tick_ns))
					h->flag[(size_t)r * h->cols + c] = 2;
		}
	}
}

enum iop_err tui_heat_build(struct tui_heat *h, const struct coll_state *s,
                            const struct tui_table *t, const struct tui_query *q, uint32_t cols,
                            bool p99)
{
	tui_heat_free(h);
	h->rows = (uint32_t)t->n;
	h->cols = cols ? cols : 1;
	h->t0 = q->t_end - h->cols + 1;
	h->p99 = p99;
	size_t cells = (size_t)h->rows * h->cols;
	h->v = calloc(cells + 1, sizeof *h->v);
	h->flag = calloc(cells + 1, 1);
	uint32_t *row_of = malloc((s->n_ranks + 1) * sizeof *row_of);
	float *tmp = malloc((h->rows + 1) * sizeof *tmp);
	if (!h->v || !h->flag || !row_of || !tmp) {
		free(row_of);
		free(tmp);
		tui_heat_free(h);
		return IOP_ERR_NOMEM;
	}
	memset(row_of, 0xff, (s->n_ranks + 1) * sizeof *row_of);
	for (uint32_t r = 0; r < h->rows; r++) {
		const struct tui_row *row = &t->rows[r];
		if (row->kind == TUI_ROW_RANK && row->rank < s->n_ranks)
			row_of[row->rank] = r;
		for (uint32_t k = 0; row->kind == TUI_ROW_NODE && k < s->n_ranks; k++)
			if (s->ranks[k].state && (uint32_t)s->ranks[k].node == row->node)
				row_of[k] = r;
	}
	const struct coll_tick *prev = NULL;
	for (uint32_t c = 0; c < h->cols; c++) {
		const struct coll_tick *k = coll_state_tick(s, h->t0 + c);
		if (k && !tick_has_detail(s, k)) { /* its layers only: the history's
		                                      budget, or a lean recording */
			for (uint32_t r = 0; r < h->rows; r++)
				h->flag[(size_t)r * h->cols + c] = 3;
			continue;
		}
		if (!k || k == prev)
			continue; /* a bin of an older tier shows once */
		prev = k;
		heat_tick(k, q, p99, row_of, s->n_ranks, &h->v[c], h->cols);
	}
	for (size_t i = 0; i < cells; i++)
		if (h->v[i] > h->vmax)
			h->vmax = h->v[i];
	heat_flags(h, s, t, q, tmp);
	free(row_of);
	free(tmp);
	return IOP_OK;
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

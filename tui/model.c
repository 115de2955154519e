/* Tables of the dashboard's views (model.h): the window's rows summed per
 * rank, node, file, layer or call site. */
#include "model.h"

#include <inttypes.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "events.h"
#include "model_int.h"
#include "pattern.h"
#include "rank_sum.h"
#include "rec_view.h"

static const char *const col_label[] = {
#define X(id, name, label, json) label,
	TUI_COLS(X)
#undef X
};
static const char *const col_json[] = {
#define X(id, name, label, json) json,
	TUI_COLS(X)
#undef X
};

const char *tui_col_label(enum tui_col c)
{
	return (unsigned)c < TUI_COL__COUNT ? col_label[c] : "?";
}

const char *tui_col_json(enum tui_col c)
{
	return (unsigned)c < TUI_COL__COUNT ? col_json[c] : "?";
}

/* ---- helpers shared with model_detail.c and heat.c ---- */

void idmap_free(struct idmap *m)
{
	free(m->key);
	free(m->val);
	memset(m, 0, sizeof *m);
}

static uint32_t slot_of(uint64_t id, uint32_t cap)
{
	id ^= id >> 33;
	id *= 0xff51afd7ed558ccdull;
	id ^= id >> 33;
	return (uint32_t)id & (cap - 1);
}

uint32_t idmap_find(const struct idmap *m, uint64_t id)
{
	if (!m->cap)
		return UINT32_MAX;
	for (uint32_t i = slot_of(id, m->cap);; i = (i + 1) & (m->cap - 1)) {
		if (m->val[i] == UINT32_MAX)
			return UINT32_MAX;
		if (m->key[i] == id)
			return m->val[i];
	}
}

static bool idmap_grow(struct idmap *m)
{
	uint32_t cap = m->cap ? m->cap * 2 : 64;
	struct idmap n = {malloc(cap * sizeof(uint64_t)), malloc(cap * sizeof(uint32_t)), 0, cap};
	if (!n.key || !n.val) {
		idmap_free(&n);
		return false;
	}
	memset(n.val, 0xff, cap * sizeof(uint32_t));
	for (uint32_t i = 0; i < m->cap; i++)
		if (m->val[i] != UINT32_MAX)
			idmap_get(&n, m->key[i], m->val[i]);
	idmap_free(m);
	*m = n;
	return true;
}

uint32_t idmap_get(struct idmap *m, uint64_t id, uint32_t next)
{
	if ((m->n + 1) * 2 > m->cap && !idmap_grow(m))
		return UINT32_MAX;
	for (uint32_t i = slot_of(id, m->cap);; i = (i + 1) & (m->cap - 1)) {
		if (m->val[i] == UINT32_MAX) {
			m->key[i] = id;
			m->val[i] = next;
			m->n++;
			return next;
		}
		if (m->key[i] == id)
			return m->val[i];
	}
}

void acc_cell(struct acc *a, const struct coll_key *k, const struct coll_cell *c, bool last)
{
	acc_sums(a, k, c, last);
	if (c->hist.count)
		(void)iop_hist_merge(&a->h, &c->hist);
}

void acc_sums(struct acc *a, const struct coll_key *k, const struct coll_cell *c, bool last)
{
	if (k->cls == IOP_CLASS_READ)
		a->rd += c->bytes;
	else if (k->cls == IOP_CLASS_WRITE)
		a->wr += c->bytes;
	else if (k->cls == IOP_CLASS_META)
		a->meta += c->ops;
	a->ops += c->ops;
	a->time += c->time_ns;
	a->excl += c->excl_ns;
	a->wait += c->wait_ns;
	a->child += c->child_ops;
	if (c->child_ops)
		a->child_parent_ops += c->ops;
	if (last)
		a->infl += c->inflight;
	if (c->ops || c->inflight)
		a->layers |= (uint8_t)(1u << k->layer);
	a->seen = true;
}

void acc_free(struct acc *a, size_t n)
{
	for (size_t i = 0; a && i < n; i++)
		iop_hist_free(&a[i].h);
	free(a);
}

void latency_cols(const struct iop_hist *h, struct tui_row *r)
{
	r->v[TUI_COL_P50] = iop_hist_quantile(h, 0.5) / 1e9;
	r->v[TUI_COL_P99] = iop_hist_quantile(h, 0.99) / 1e9;
	r->v[TUI_COL_MAX] = h->count ? h->max / 1e9 : 0;
	r->lat_pending = 0;
}

static void latency_pending(struct tui_row *r)
{
	r->v[TUI_COL_P50] = r->v[TUI_COL_P99] = r->v[TUI_COL_MAX] = NAN;
	r->lat_pending = 1;
}

bool tui_col_latency(enum tui_col col)
{
	return col == TUI_COL_P50 || col == TUI_COL_P99 || col == TUI_COL_MAX;
}

void acc_row(const struct acc *a, struct tui_row *r, double window_s)
{
	r->v[TUI_COL_RD] = a->rd / window_s;
	r->v[TUI_COL_WR] = a->wr / window_s;
	r->v[TUI_COL_IOPS] = a->ops / window_s;
	r->v[TUI_COL_META] = a->meta / window_s;
	latency_cols(&a->h, r);
	r->v[TUI_COL_INFLIGHT] = (double)a->infl;
	r->v[TUI_COL_TIME] = a->time / 1e9;
	r->v[TUI_COL_EXCL] = a->excl / 1e9;
	r->v[TUI_COL_WAIT] = a->wait / 1e9;
	r->v[TUI_COL_EXCL_PC] = a->time ? (double)a->excl / (double)a->time : 0;
	r->v[TUI_COL_FRAG] = a->child_parent_ops ? (double)a->child / (double)a->child_parent_ops : 0;
	r->v[TUI_COL_OPS] = (double)a->ops;
	r->layers |= a->layers;
	memcpy(r->spark, a->spark, sizeof r->spark);
}

bool layer_in_scope(const struct tui_query *q, unsigned layer)
{
	return q->layer < 0 || (unsigned)q->layer == layer;
}

bool tick_has_detail(const struct coll_state *s, const struct coll_tick *k)
{
	if (coll_tick_thinned(k))
		return false;
	return s->detail_ticks < 2 || k->n || (k->t + 1) % (int64_t)s->detail_ticks == 0;
}

/* The first tick of a walk over the window: a detail walk of a lean
 * recording's window without a whole tick reaches back to the last one,
 * at most detail_ticks before the window's end (so its rank, file and
 * site rows show between whole ticks). */
static int64_t walk_from(const struct coll_state *s, const struct tui_query *q, int64_t w,
                         bool detail)
{
	int64_t from = q->t_end - w + 1;
	if (!detail || s->detail_ticks < 2)
		return from;
	for (int64_t t = q->t_end; t > q->t_end - (int64_t)s->detail_ticks; t--) {
		const struct coll_tick *k = coll_state_tick(s, t);
		if (k && tick_has_detail(s, k))
			return t < from ? t : from;
	}
	return from;
}

double window_secs(const struct coll_state *s, const struct tui_query *q, bool detail)
{
	int64_t w = q->window ? q->window : 1;
	int64_t from = walk_from(s, q, w, detail);
	if (s->ticks_applied && from < s->first_t)
		from = s->first_t;
	/* thinned ticks (state.h: the history's budget) and a lean
	 * recording's lean ticks have no per-rank, per-file or per-site rows:
	 * a rate over them is over the others */
	int64_t have = q->t_end - from + 1;
	for (int64_t t = from; detail && t <= q->t_end; t++) {
		const struct coll_tick *k = coll_state_tick(s, t);
		have -= k && !tick_has_detail(s, k);
	}
	if (have < 1)
		have = 1;
	return (double)have * (double)s->tick_ns / 1e9;
}

void window_walk(const struct coll_state *s, const struct tui_query *q, bool spark, bool detail,
                 tick_visit_fn *fn, void *arg)
{
	int64_t w = q->window ? q->window : 1;
	int64_t from = walk_from(s, q, w, detail);
	int64_t span = q->t_end - from + 1;
	if (spark && span < TUI_SPARK)
		span = TUI_SPARK;
	const struct coll_tick *prev = NULL;
	for (int64_t t = q->t_end - span + 1; t <= q->t_end; t++) {
		const struct coll_tick *k = coll_state_tick(s, t);
		if (!k || k == prev || (detail && !tick_has_detail(s, k)))
			continue;
		prev = k;
		int64_t age = q->t_end - t;
		fn(arg, k, t >= from, spark && age < TUI_SPARK ? (int)(TUI_SPARK - 1 - age) : -1,
		   k->t == q->t_end);
	}
}

struct tui_row *table_add(struct tui_table *t)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct tui_row *r = realloc(t->rows, cap * sizeof *r);
		if (!r)
			return NULL;
		t->rows = r;
		t->cap = cap;
	}
	struct tui_row *r = &t->rows[t->n++];
	memset(r, 0, sizeof *r);
	r->rank = COLL_RANK_NONE;
	r->layer = -1;
	return r;
}

bool tui_alert_at(const struct coll_alert_record *a, int64_t t, uint64_t tick_ns)
{
	uint64_t lo = (uint64_t)t * tick_ns, hi = lo + tick_ns;
	return a->start_ns < hi && (a->end_ns == 0 || a->end_ns > lo);
}

uint8_t alert_sev(const struct tui_query *q, uint64_t tick_ns, uint32_t rank, uint64_t file, int layer)
{
	uint8_t sev = 0;
	for (size_t i = 0; i < q->n_alerts; i++) {
		const struct coll_alert_record *a = &q->alerts[i];
		if (a->rank != rank || a->file != file || (layer >= 0 && a->layer != layer))
			continue;
		if (tui_alert_at(a, q->t_end, tick_ns) && a->severity > sev)
			sev = (uint8_t)a->severity;
	}
	return sev;
}

bool row_passes(const struct tui_query *q, const struct tui_row *r)
{
	if (!q->filter || !q->filter->n)
		return true;
	char label[32] = "";
	if (r->kind == TUI_ROW_LAYER && r->layer >= 0)
		snprintf(label, sizeof label, "%s", iop_layer_label((enum iop_layer)r->layer));
	struct tui_subject sub = {
		.rank = r->rank == COLL_RANK_NONE ? UINT32_MAX : r->rank,
		.label = label[0] ? label : r->name,
		.path = r->kind == TUI_ROW_FILE ? r->name : NULL,
		.node = r->kind == TUI_ROW_NODE ? r->name : r->node_name,
		.layers = r->layers,
	};
	return tui_filter_match(q->filter, &sub);
}

const char *tui_name(const struct coll_state *s, uint64_t hash, char *buf, size_t len)
{
	if (hash == COLL_ID_OTHER)
		return "other";
	if (hash == 0)
		return "(no file)";
	const char *n = coll_names_text(&s->names, hash);
	if (n)
		return n;
	snprintf(buf, len, "0x%016" PRIx64, hash);
	return buf;
}

/* ---- ranks and nodes ---- */

int host_idx_cmp(const void *x, const void *y)
{
	uint32_t a = ((const struct host_idx *)x)->node, b = ((const struct host_idx *)y)->node;
	return (a > b) - (a < b);
}

struct host_idx *host_index(const struct coll_state *s)
{
	struct host_idx *v = malloc((s->n_hosts + 1) * sizeof *v);
	for (uint32_t i = 0; v && i < s->n_hosts; i++)
		v[i] = (struct host_idx){s->hosts[i].node, i};
	if (v)
		qsort(v, s->n_hosts, sizeof *v, host_idx_cmp);
	return v;
}

const struct host_idx *host_find(const struct host_idx *v, uint32_t n, uint32_t node)
{
	struct host_idx key = {node, 0};
	return v && n ? bsearch(&key, v, n, sizeof *v, host_idx_cmp) : NULL;
}

uint32_t host_of(const struct host_idx *v, uint32_t n, uint32_t node)
{
	const struct host_idx *x = host_find(v, n, node);
	return x ? x->h : n;
}

struct rank_walk {
	const struct tui_query *q;
	struct acc *acc;
	uint32_t n;
	/* grouped per node: the rows of ranks a recording summed per node
	 * (coll_key_node) go to their node's accumulator, node[hosts] the
	 * unknown node's */
	struct acc *node;
	const struct host_idx *hosts;
	uint32_t nh;
	/* grouped: each rank's node accumulator (index into node), UINT32_MAX
	 * for a rank not seen; its rows go straight there, no rank's own
	 * accumulator between (at 65 536 ranks, 65 536 histograms fewer to
	 * merge at every redraw: tui_bench tui_redraw_ms_65536) */
	uint32_t *rank_node;
	bool lazy; /* q->lazy_latency: no histograms (tui_table_fill_latency) */
};

static void rank_visit(void *arg, const struct coll_tick *k, bool in_window, int slot, bool last)
{
	struct rank_walk *w = arg;
	for (uint32_t i = 0; i < k->n; i++) {
		const struct coll_key *key = &k->key[i];
		if (key->kind != COLL_ROW_RANK || !layer_in_scope(w->q, key->layer))
			continue;
		struct acc *a;
		if (coll_key_is_node(key)) {
			if (!w->node)
				continue;
			a = &w->node[host_of(w->hosts, w->nh, coll_key_node_id(key))];
		} else if (key->rank < w->n && w->rank_node) {
			if (w->rank_node[key->rank] == UINT32_MAX)
				continue;
			a = &w->node[w->rank_node[key->rank]];
		} else if (key->rank < w->n) {
			a = &w->acc[key->rank];
		} else {
			continue;
		}
		if (slot >= 0 && key->cls != IOP_CLASS_META)
			a->spark[slot] += (float)k->cell[i].bytes;
		if (in_window && w->lazy)
			acc_sums(a, key, &k->cell[i], last);
		else if (in_window)
			acc_cell(a, key, &k->cell[i], last);
	}
}

/* Cumulative bytes per rank from the exact totals: with every layer in
 * scope the application's own (those of the highest layer the rank moved
 * data through, rank_sum.h), else the scope layer's; and which ranks
 * aggregated other ranks' data. */
static void rank_bytes(const struct coll_state *s, const struct tui_query *q, double *bytes,
                       uint8_t *agg)
{
	struct coll_rank_sum *sum = coll_rank_sums(s);
	if (!sum)
		return;
	for (uint32_t r = 0; r < s->n_ranks; r++) {
		const struct coll_layer_sum *l = q->layer < 0 ? NULL : &sum[r].layer[q->layer];
		bytes[r] = (double)(l ? l->read_bytes + l->write_bytes : coll_rank_own_bytes(&sum[r]));
		agg[r] = sum[r].aggregator;
	}
	free(sum);
}

static enum iop_err build_ranks(struct tui_table *t, const struct coll_state *s,
                                const struct tui_query *q, bool nodes)
{
	uint32_t n = s->n_ranks, nh = s->n_hosts;
	struct rank_walk w = {.q = q, .acc = calloc(n ? n : 1, sizeof(struct acc)), .n = n,
	                      .lazy = q->lazy_latency};
	double *bytes = calloc(n ? n : 1, sizeof(double));
	uint8_t *agg = calloc(n ? n : 1, 1);
	if (nodes) {
		w.node = calloc(nh + 1, sizeof *w.node);
		w.hosts = host_index(s);
		w.nh = nh;
		w.rank_node = malloc((n ? n : 1) * sizeof *w.rank_node);
	}
	if (!w.acc || !bytes || !agg || (nodes && (!w.node || !w.hosts || !w.rank_node))) {
		free(bytes);
		free(agg);
		acc_free(w.acc, 0);
		acc_free(w.node, 0);
		free((void *)w.hosts);
		free(w.rank_node);
		return IOP_ERR_NOMEM;
	}
	for (uint32_t r = 0; nodes && r < n; r++)
		w.rank_node[r] = s->ranks[r].state ? host_of(w.hosts, nh, (uint32_t)s->ranks[r].node)
		                                   : UINT32_MAX;
	window_walk(s, q, true, true, rank_visit, &w);
	rank_bytes(s, q, bytes, agg);
	double win = window_secs(s, q, true);
	enum iop_err e = IOP_OK;
	if (!nodes) {
		for (uint32_t r = 0; r < n && !e; r++) {
			if (!s->ranks[r].state)
				continue;
			struct tui_row *row = table_add(t);
			if (!row) {
				e = IOP_ERR_NOMEM;
				break;
			}
			row->kind = TUI_ROW_RANK;
			row->rank = r;
			row->id = r;
			row->node = (uint32_t)s->ranks[r].node;
			row->node_name = coll_state_host(s, row->node);
			acc_row(&w.acc[r], row, win);
			if (w.lazy)
				latency_pending(row);
			row->v[TUI_COL_BYTES] = bytes[r];
			row->agg = agg[r];
			row->sev = alert_sev(q, s->tick_ns, r, 0, -1);
			if (!row_passes(q, row))
				t->n--;
		}
	} else {
		/* each rank's rows went to its node's accumulator as the window
		 * was walked (the last slot of hosts+1: unknown), with the rows a
		 * recording summed per node; here its bytes, count and severity */
		struct acc *na = w.node;
		double *nb = calloc(nh + 1, sizeof *nb);
		uint32_t *nr = calloc(nh + 1, sizeof *nr);
		uint8_t *sev = calloc(nh + 1, 1);
		if (!nb || !nr || !sev)
			e = IOP_ERR_NOMEM;
		for (uint32_t r = 0; r < n && !e; r++) {
			if (!s->ranks[r].state)
				continue;
			uint32_t h = w.rank_node[r]; /* its rows are in na[h] already */
			nb[h] += bytes[r];
			nr[h]++;
			uint8_t sv = alert_sev(q, s->tick_ns, r, 0, -1);
			if (sv > sev[h])
				sev[h] = sv;
		}
		for (uint32_t h = 0; h <= nh && !e; h++) {
			if (!nr[h])
				continue;
			struct tui_row *row = table_add(t);
			if (!row) {
				e = IOP_ERR_NOMEM;
				break;
			}
			row->kind = TUI_ROW_NODE;
			row->id = h < nh ? s->hosts[h].node : UINT64_MAX;
			row->node = (uint32_t)row->id;
			row->name = h < nh ? s->hosts[h].name : "?";
			acc_row(&na[h], row, win);
			if (w.lazy)
				latency_pending(row);
			row->v[TUI_COL_BYTES] = nb[h];
			row->v[TUI_COL_RANKS] = nr[h];
			tui_node_figures(s, row->node, q->t_end, &row->v[TUI_COL_DEV],
			                 &row->v[TUI_COL_PSI]);
			row->sev = sev[h];
			if (!row_passes(q, row))
				t->n--;
		}
		acc_free(na, nh + 1);
		free((void *)w.hosts);
		free(w.rank_node);
		free(nb);
		free(nr);
		free(sev);
	}
	acc_free(w.acc, n);
	free(bytes);
	free(agg);
	return e;
}

/* ---- files and call sites ---- */

struct id_walk {
	const struct tui_query *q;
	uint8_t kind; /* COLL_ROW_FILE, COLL_ROW_SITE or COLL_ROW_FS */
	struct idmap map;
	struct acc *acc;
	uint32_t n, cap;
	bool nomem;
};

static struct acc *id_acc(struct id_walk *w, uint64_t id)
{
	uint32_t i = idmap_get(&w->map, id, w->n);
	if (i == UINT32_MAX)
		return NULL;
	if (i == w->n) {
		if (w->n == w->cap) {
			uint32_t cap = w->cap ? w->cap * 2 : 64;
			struct acc *a = realloc(w->acc, cap * sizeof *a);
			if (!a)
				return NULL;
			w->acc = a;
			w->cap = cap;
		}
		memset(&w->acc[w->n++], 0, sizeof *w->acc);
	}
	return &w->acc[i];
}

static void id_visit(void *arg, const struct coll_tick *k, bool in_window, int slot, bool last)
{
	struct id_walk *w = arg;
	for (uint32_t i = 0; i < k->n; i++) {
		const struct coll_key *key = &k->key[i];
		if (key->kind != w->kind || !layer_in_scope(w->q, key->layer))
			continue;
		struct acc *a = id_acc(w, key->id);
		if (!a) {
			w->nomem = true;
			return;
		}
		if (slot >= 0 && key->cls != IOP_CLASS_META)
			a->spark[slot] += (float)k->cell[i].bytes;
		if (in_window)
			acc_cell(a, key, &k->cell[i], last);
	}
}

/* ids of (file, rank) pairs, to count each file's distinct ranks */
static int cmp_pair(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;
	return (x[0] > y[0]) - (x[0] < y[0]) ?: (x[1] > y[1]) - (x[1] < y[1]);
}

/* Files: every file of the totals (so the list does not blink), with the
 * window's rates; RANKS and BYTES from the totals. */
static enum iop_err file_totals(struct id_walk *w, const struct coll_state *s, double **bytes,
                                double **ranks, double **pattern)
{
	uint64_t *pairs = malloc((s->latest.n + 1) * 2 * sizeof(uint64_t));
	if (!pairs)
		return IOP_ERR_NOMEM;
	uint32_t np = 0;
	for (struct coll_totals_it it = {.s = s}; coll_totals_next(&it);) {
		const struct coll_key *k = &it.key;
		if (!layer_in_scope(w->q, k->layer) || !id_acc(w, k->id)) {
			if (w->nomem)
				break;
			continue;
		}
		pairs[2 * np] = k->id;
		pairs[2 * np++ + 1] = k->rank;
	}
	*bytes = calloc(w->n + 1, sizeof(double));
	*ranks = calloc(w->n + 1, sizeof(double));
	*pattern = calloc(w->n + 1, sizeof(double));
	uint64_t(*pat)[COLL_PAT__COUNT] = calloc(w->n + 1, sizeof(*pat));
	if (!*bytes || !*ranks || !*pattern || !pat) {
		free(pat);
		free(pairs);
		return IOP_ERR_NOMEM;
	}
	for (struct coll_totals_it it = {.s = s}; coll_totals_next(&it);) {
		const struct coll_key *k = &it.key;
		uint32_t j = idmap_find(&w->map, k->id);
		if (j != UINT32_MAX && layer_in_scope(w->q, k->layer)) {
			(*bytes)[j] += (double)it.cell.bytes;
			if (it.cell.ops)
				w->acc[j].layers |= (uint8_t)(1u << k->layer);
			const struct coll_cell *c = &it.cell;
			uint64_t ordered = c->consec_ops + c->fwd_ops + c->stride_ops;
			pat[j][COLL_PAT_CONSEC] += c->consec_ops;
			pat[j][COLL_PAT_SEQ] += c->fwd_ops;
			pat[j][COLL_PAT_STRIDE] += c->stride_ops;
			pat[j][COLL_PAT_RANDOM] += c->off_ops > ordered ? c->off_ops - ordered : 0;
		}
	}
	for (uint32_t j = 0; j < w->n; j++) /* the pattern of most calls, + 1; 0: none */
		for (unsigned p = 0; p < COLL_PAT__COUNT; p++)
			if (pat[j][p] && ((*pattern)[j] == 0 || pat[j][p] > pat[j][(int)(*pattern)[j] - 1]))
				(*pattern)[j] = p + 1;
	free(pat);
	qsort(pairs, np, 2 * sizeof(uint64_t), cmp_pair);
	for (uint32_t i = 0; i < np; i++)
		if (i == 0 || pairs[2 * i] != pairs[2 * i - 2] || pairs[2 * i + 1] != pairs[2 * i - 1])
			(*ranks)[idmap_find(&w->map, pairs[2 * i])] += 1;
	free(pairs);
	return IOP_OK;
}

enum iop_err build_ids(struct tui_table *t, const struct coll_state *s, const struct tui_query *q,
                       uint8_t kind)
{
	bool files = kind == COLL_ROW_FILE;
	struct id_walk w = {.q = q, .kind = kind};
	double *bytes = NULL, *ranks = NULL, *pattern = NULL;
	window_walk(s, q, true, true, id_visit, &w);
	enum iop_err e = w.nomem ? IOP_ERR_NOMEM : IOP_OK;
	if (!e && files)
		e = file_totals(&w, s, &bytes, &ranks, &pattern);
	double win = window_secs(s, q, true);
	for (uint32_t i = 0; i < w.map.cap && !e; i++) {
		if (w.map.val[i] == UINT32_MAX)
			continue;
		uint32_t j = w.map.val[i];
		struct tui_row *row = table_add(t);
		if (!row) {
			e = IOP_ERR_NOMEM;
			break;
		}
		row->kind = files ? TUI_ROW_FILE : kind == COLL_ROW_FS ? TUI_ROW_FS : TUI_ROW_SITE;
		row->id = w.map.key[i];
		char hex[24];
		const char *nm = tui_name(s, row->id, hex, sizeof hex);
		row->name = nm == hex ? NULL : nm;
		acc_row(&w.acc[j], row, win);
		for (int l = 0; l < IOP_LAYER__COUNT && row->layer < 0; l++)
			if (row->layers >> l & 1)
				row->layer = (int8_t)l;
		if (files) {
			row->v[TUI_COL_BYTES] = bytes[j];
			row->v[TUI_COL_RANKS] = ranks[j];
			row->v[TUI_COL_PATTERN] = pattern[j];
			row->sev = alert_sev(q, s->tick_ns, COLL_RANK_NONE, row->id, -1);
		}
		if (!row_passes(q, row))
			t->n--;
	}
	acc_free(w.acc, w.n);
	idmap_free(&w.map);
	free(bytes);
	free(ranks);
	free(pattern);
	return e;
}

/* ---- layers: the job's (LAYER rows), or one rank's (its RANK rows) ---- */

struct layer_walk {
	uint32_t rank; /* COLL_RANK_NONE: the job's */
	struct acc acc[IOP_LAYER__COUNT];
};

static void layer_visit(void *arg, const struct coll_tick *k, bool in_window, int slot, bool last)
{
	struct layer_walk *w = arg;
	uint8_t kind = w->rank == COLL_RANK_NONE ? COLL_ROW_LAYER : COLL_ROW_RANK;
	for (uint32_t i = 0; i < k->n; i++) {
		const struct coll_key *key = &k->key[i];
		if (key->kind != kind || key->layer >= IOP_LAYER__COUNT ||
		    (kind == COLL_ROW_RANK && key->rank != w->rank))
			continue;
		if (slot >= 0 && key->cls != IOP_CLASS_META)
			w->acc[key->layer].spark[slot] += (float)k->cell[i].bytes;
		if (in_window)
			acc_cell(&w->acc[key->layer], key, &k->cell[i], last);
	}
}

enum iop_err build_layer_rows(struct tui_table *t, const struct coll_state *s,
                              const struct tui_query *q, uint32_t rank)
{
	struct layer_walk w;
	memset(&w, 0, sizeof w);
	w.rank = rank;
	bool detail = rank != COLL_RANK_NONE; /* a rank's layers: its RANK rows */
	window_walk(s, q, true, detail, layer_visit, &w);
	double win = window_secs(s, q, detail);
	enum iop_err e = IOP_OK;
	for (int l = 0; l < IOP_LAYER__COUNT; l++) {
		if (!layer_in_scope(q, (unsigned)l) || (rank != COLL_RANK_NONE && !w.acc[l].seen))
			continue;
		struct tui_row *row = table_add(t);
		if (!row) {
			e = IOP_ERR_NOMEM;
			break;
		}
		row->kind = TUI_ROW_LAYER;
		row->layer = (int8_t)l;
		row->rank = rank;
		row->id = (uint64_t)l;
		row->name = iop_layer_label((enum iop_layer)l);
		acc_row(&w.acc[l], row, win);
		row->layers = (uint8_t)(1u << l);
		row->sev = alert_sev(q, s->tick_ns, rank, 0, l);
		if (rank == COLL_RANK_NONE && !row_passes(q, row))
			t->n--;
	}
	for (int l = 0; l < IOP_LAYER__COUNT; l++)
		iop_hist_free(&w.acc[l].h);
	return e;
}

enum iop_err tui_table_build(struct tui_table *t, const struct coll_state *s,
                             const struct tui_query *q)
{
	t->n = 0;
	t->list = q->list;
	t->window_s = window_secs(s, q, false);
	if (!s->ticks_applied && q->list != TUI_LIST_ALERTS)
		return IOP_OK;
	switch (q->list) {
	case TUI_LIST_RANKS: return build_ranks(t, s, q, false);
	case TUI_LIST_NODES: return build_ranks(t, s, q, true);
	case TUI_LIST_FILES: return build_ids(t, s, q, COLL_ROW_FILE);
	case TUI_LIST_SITES: return build_ids(t, s, q, COLL_ROW_SITE);
	case TUI_LIST_FS: return build_ids(t, s, q, COLL_ROW_FS);
	case TUI_LIST_LAYERS: return build_layer_rows(t, s, q, COLL_RANK_NONE);
	case TUI_LIST_ALERTS: return build_alerts(t, s, q);
	case TUI_LIST_RANK_DETAIL: return build_detail(t, s, q);
	case TUI_LIST_FILE_RANKS: return build_file_ranks(t, s, q);
	case TUI_LIST_FS_DETAIL: return build_fs_detail(t, s, q);
	default: return IOP_ERR_INVAL;
	}
}

void tui_table_free(struct tui_table *t)
{
	free(t->rows);
	memset(t, 0, sizeof *t);
}

/* ---- the ranks' distribution ---- */

static bool has_node_rows(const struct coll_tick *k)
{
	for (uint32_t i = 0; i < k->n; i++)
		if (coll_key_is_node(&k->key[i]))
			return true;
	return false;
}

enum iop_err tui_rank_dist(const struct coll_state *s, int64_t t, struct coll_rank_dist *d)
{
	*d = (struct coll_rank_dist){0};
	if (s->dist.ranks && s->dist.t == t) {
		*d = s->dist;
		return IOP_OK;
	}
	if (coll_state_ranks_seen(s) <= COLL_REC_RANK_CAP)
		return IOP_OK;
	const struct coll_tick *k = coll_state_tick(s, t);
	if (!k || k->t != t || !tick_has_detail(s, k) || has_node_rows(k))
		return IOP_OK;
	return coll_rank_dist_tick(k, d);
}

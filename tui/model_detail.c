/* The drill-down and alert tables, and the order of any table (model.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "events.h"
#include "fsmap.h"
#include "model_int.h"

/* ---- a rank's files and a file's ranks (totals) ---- */

/* Per key of the totals (FILE rows with a rank): sums into rows found by id. */
static void add_total(struct tui_row *row, const struct coll_key *k, const struct coll_cell *c)
{
	if (k->cls == IOP_CLASS_READ)
		row->v[TUI_COL_RD_BYTES] += (double)c->bytes;
	else if (k->cls == IOP_CLASS_WRITE)
		row->v[TUI_COL_WR_BYTES] += (double)c->bytes;
	row->v[TUI_COL_BYTES] += (double)c->bytes;
	row->v[TUI_COL_OPS] += (double)c->ops;
	row->v[TUI_COL_TIME] += c->time_ns / 1e9;
	if (c->ops)
		row->layers |= (uint8_t)(1u << k->layer);
}

/* A new totals row: the file of k (by_file), else its rank. */
static void totals_row(struct tui_row *row, const struct coll_state *s, const struct tui_query *q,
                       const struct coll_key *k, uint64_t id, bool by_file)
{
	row->id = id;
	if (by_file) {
		char hex[24];
		const char *nm = tui_name(s, k->id, hex, sizeof hex);
		row->kind = TUI_ROW_FILE;
		row->name = nm == hex ? NULL : nm;
		row->layer = (int8_t)k->layer;
	} else {
		row->kind = TUI_ROW_RANK;
		row->rank = k->rank;
		if (k->rank < s->n_ranks) {
			row->node = (uint32_t)s->ranks[k->rank].node;
			row->node_name = coll_state_host(s, row->node);
		}
		row->sev = alert_sev(q, s->tick_ns, k->rank, 0, -1);
	}
}

/* Rows keyed by id (file of a rank, rank of a file) built from the totals. */
/* Adds a totals cell to the row of id (rows from base on, found through
 * map), making the row first when id has none. */
static enum iop_err add_to_row(struct tui_table *t, struct idmap *map, size_t base,
                               const struct coll_state *s, const struct tui_query *q,
                               const struct coll_key *k, uint64_t id, bool by_file,
                               const struct coll_cell *cell)
{
	uint32_t j = idmap_get(map, id, (uint32_t)(t->n - base));
	if (j == UINT32_MAX)
		return IOP_ERR_NOMEM;
	if (j == t->n - base) {
		struct tui_row *row = table_add(t);
		if (!row)
			return IOP_ERR_NOMEM;
		totals_row(row, s, q, k, id, by_file);
	}
	add_total(&t->rows[base + j], k, cell);
	return IOP_OK;
}

static enum iop_err totals_rows(struct tui_table *t, const struct coll_state *s,
                                const struct tui_query *q, bool by_file)
{
	struct idmap map = {0};
	size_t base = t->n;
	enum iop_err e = IOP_OK;
	for (struct coll_totals_it it = {.s = s}; !e && coll_totals_next(&it);) {
		const struct coll_key *k = &it.key;
		if (by_file ? k->rank != q->rank : k->id != q->file)
			continue;
		if (!layer_in_scope(q, k->layer))
			continue;
		uint64_t id = by_file ? k->id : k->rank;
		if ((e = add_to_row(t, &map, base, s, q, k, id, by_file, &it.cell)))
			break;
	}
	idmap_free(&map);
	/* filter after the sums (a row's layers are known only then) */
	size_t out = base;
	for (size_t i = base; i < t->n; i++)
		if (row_passes(q, &t->rows[i]))
			t->rows[out++] = t->rows[i];
	t->n = out;
	return e;
}

/* A rank's layer rows show its rates over the window (its RANK rows) and,
 * as its file rows do, its totals: bytes, calls and time of the whole run. */
static void layer_totals(struct tui_table *t, size_t from, size_t to, const struct coll_state *s,
                         uint32_t rank)
{
	struct tui_row sum[IOP_LAYER__COUNT];
	memset(sum, 0, sizeof sum);
	for (struct coll_totals_it it = {.s = s}; coll_totals_next(&it);)
		if (it.key.rank == rank && it.key.layer < IOP_LAYER__COUNT)
			add_total(&sum[it.key.layer], &it.key, &it.cell);
	for (size_t i = from; i < to; i++) {
		struct tui_row *r = &t->rows[i];
		if (r->kind != TUI_ROW_LAYER || r->layer < 0)
			continue;
		static const enum tui_col cols[] = {TUI_COL_RD_BYTES, TUI_COL_WR_BYTES, TUI_COL_BYTES,
		                                    TUI_COL_OPS, TUI_COL_TIME};
		for (size_t c = 0; c < sizeof cols / sizeof *cols; c++)
			r->v[cols[c]] = sum[r->layer].v[cols[c]];
	}
}

/* A rank's file rows (totals) with rates over the window: a file only this
 * rank used has the Files view's rates (its FILE rows are this rank's); a
 * file other ranks used too has none the view can give (rows per file are
 * not per rank): NaN, drawn blank. */
static enum iop_err file_rates(struct tui_table *t, size_t from, const struct coll_state *s,
                               const struct tui_query *q)
{
	struct tui_query fq = *q;
	fq.list = TUI_LIST_FILES;
	fq.filter = NULL;
	struct tui_table files = {0};
	struct idmap others = {0}; /* files another rank used: the ids */
	enum iop_err e = build_ids(&files, s, &fq, COLL_ROW_FILE);
	for (struct coll_totals_it it = {.s = s}; !e && coll_totals_next(&it);)
		if (it.key.id && it.key.rank != q->rank && it.cell.ops &&
		    idmap_get(&others, it.key.id, 0) == UINT32_MAX)
			e = IOP_ERR_NOMEM;
	struct idmap at = {0};
	for (size_t i = 0; !e && i < files.n; i++)
		if (idmap_get(&at, files.rows[i].id, (uint32_t)i) == UINT32_MAX)
			e = IOP_ERR_NOMEM;
	static const enum tui_col rates[] = {TUI_COL_RD, TUI_COL_WR, TUI_COL_IOPS, TUI_COL_P50,
	                                     TUI_COL_P99, TUI_COL_MAX, TUI_COL_META};
	for (size_t i = from; !e && i < t->n; i++) {
		struct tui_row *r = &t->rows[i];
		if (r->kind != TUI_ROW_FILE)
			continue;
		bool shared = idmap_find(&others, r->id) != UINT32_MAX;
		uint32_t j = idmap_find(&at, r->id);
		for (size_t c = 0; c < sizeof rates / sizeof *rates; c++)
			r->v[rates[c]] = shared ? NAN : j != UINT32_MAX ? files.rows[j].v[rates[c]] : 0;
	}
	idmap_free(&at);
	idmap_free(&others);
	tui_table_free(&files);
	return e;
}

enum iop_err build_detail(struct tui_table *t, const struct coll_state *s, const struct tui_query *q)
{
	size_t base = t->n;
	enum iop_err e = build_layer_rows(t, s, q, q->rank);
	if (e)
		return e;
	size_t files = t->n;
	layer_totals(t, base, files, s, q->rank);
	e = totals_rows(t, s, q, true);
	return e ? e : file_rates(t, files, s, q);
}

enum iop_err build_file_ranks(struct tui_table *t, const struct coll_state *s,
                              const struct tui_query *q)
{
	return totals_rows(t, s, q, false);
}

/* A rank's key in build_fs_detail's map, apart from the files' hashes. */
#define RANK_KEY(rank) (UINT64_C(1) << 63 | (rank))

enum iop_err build_fs_detail(struct tui_table *t, const struct coll_state *s,
                             const struct tui_query *q)
{
	struct idmap map = {0}, on = {0}; /* rows by file or RANK_KEY; files on it: 1 + yes */
	size_t base = t->n;
	enum iop_err e = IOP_OK;
	/* two passes: the files first, then the ranks, each section together */
	for (int pass = 0; pass < 2 && !e; pass++)
		for (struct coll_totals_it it = {.s = s}; !e && coll_totals_next(&it);) {
			const struct coll_key *k = &it.key;
			if (!k->id || !layer_in_scope(q, k->layer))
				continue;
			uint32_t known = idmap_find(&on, k->id);
			if (known == UINT32_MAX) {
				uint64_t fs;
				known = coll_fs_id_of(&s->names, k->id, &fs) && fs == q->file;
				if (idmap_get(&on, k->id, known) == UINT32_MAX) {
					e = IOP_ERR_NOMEM;
					break;
				}
			}
			if (!known)
				continue;
			uint64_t id = pass ? RANK_KEY(k->rank) : k->id;
			if ((e = add_to_row(t, &map, base, s, q, k, id, !pass, &it.cell)))
				break;
		}
	idmap_free(&map);
	idmap_free(&on);
	return e;
}

/* ---- alerts: active first (at t_end), then the log ---- */

enum iop_err build_alerts(struct tui_table *t, const struct coll_state *s, const struct tui_query *q)
{
	uint64_t tick_ns = s->tick_ns ? s->tick_ns : 1000000000ull;
	uint64_t now_ns = (uint64_t)(q->t_end + 1) * tick_ns;
	for (size_t i = 0; i < q->n_alerts; i++) {
		const struct coll_alert_record *a = &q->alerts[i];
		if (a->start_ns >= now_ns)
			continue; /* not yet, at the time shown */
		struct tui_row *row = table_add(t);
		if (!row)
			return IOP_ERR_NOMEM;
		row->kind = TUI_ROW_ALERT;
		row->id = i;
		row->alert = a;
		row->rank = a->rank;
		row->layer = (int8_t)a->layer;
		if (a->layer >= 0)
			row->layers = (uint8_t)(1u << a->layer);
		row->name = coll_alert_kind_name(a->kind);
		if (a->file) {
			row->name = coll_names_text(&s->names, a->file);
			if (!row->name)
				row->name = coll_alert_kind_name(a->kind);
		}
		bool active = tui_alert_at(a, q->t_end, tick_ns) && (a->end_ns == 0 || a->end_ns >= now_ns);
		row->sev = active ? (uint8_t)a->severity : 0;
		row->v[TUI_COL_SEV] = (double)a->severity + (active ? 10 : 0);
		row->v[TUI_COL_START] = a->start_ns / 1e9;
		uint64_t end = a->end_ns && a->end_ns < now_ns ? a->end_ns : now_ns;
		row->v[TUI_COL_DUR] = end > a->start_ns ? (end - a->start_ns) / 1e9 : 0;
		if (!row_passes(q, row))
			t->n--;
	}
	return IOP_OK;
}

/* ---- order ---- */

static enum tui_col sort_col;
static int sort_dir;

/* Layers before files (a rank's detail), files before ranks (a file
 * system's); a list of one kind is one section. */
static int section(const struct tui_row *r)
{
	return r->kind == TUI_ROW_LAYER ? 0 : r->kind == TUI_ROW_RANK ? 2 : 1;
}

static int cmp_rows(const void *pa, const void *pb)
{
	const struct tui_row *a = pa, *b = pb;
	int c = section(a) - section(b);
	if (c)
		return c;
	double x = a->v[sort_col], y = b->v[sort_col];
	if (isnan(x) || isnan(y)) { /* no value: after every value, either way */
		if (!isnan(x) || !isnan(y))
			return isnan(x) ? 1 : -1;
	} else if (x != y) {
		return (x < y ? -1 : 1) * sort_dir;
	}
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	if (a->name && b->name && (c = strcmp(a->name, b->name)))
		return c;
	return (a->id > b->id) - (a->id < b->id);
}

void tui_table_sort(struct tui_table *t, enum tui_col col, bool desc)
{
	if ((unsigned)col >= TUI_COL__COUNT || t->n < 2)
		return;
	/* qsort is not stable, but the order is total: equal values fall back
	 * to rank, name and the unique id. */
	sort_col = col;
	sort_dir = desc ? -1 : 1;
	qsort(t->rows, t->n, sizeof *t->rows, cmp_rows);
}

struct held {
	size_t pos;
	struct tui_row row;
};

static int cmp_held(const void *a, const void *b)
{
	const struct held *x = a, *y = b;
	return (x->pos > y->pos) - (x->pos < y->pos);
}

void tui_table_hold(struct tui_table *t, const uint64_t *ids, size_t n)
{
	struct held *h = t->n > 1 ? malloc(t->n * sizeof *h) : NULL;
	if (!h)
		return;
	struct idmap pos = {0};
	for (size_t i = 0; i < n; i++)
		(void)idmap_get(&pos, ids[i], (uint32_t)i);
	for (size_t i = 0; i < t->n; i++) {
		uint32_t p = idmap_find(&pos, t->rows[i].id);
		h[i].pos = p == UINT32_MAX ? n + i : p;
		h[i].row = t->rows[i];
	}
	idmap_free(&pos);
	qsort(h, t->n, sizeof *h, cmp_held);
	for (size_t i = 0; i < t->n; i++)
		t->rows[i] = h[i].row;
	free(h);
}

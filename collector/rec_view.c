/* The default recording's fold of FILE and SITE rows. See rec_view.h. */
#include "rec_view.h"

#include <stdlib.h>
#include <string.h>

enum iop_err rec_named_add(struct rec_named *s, uint64_t id)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->id[i] == id)
			return IOP_OK;
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;
		uint64_t *v = realloc(s->id, cap * sizeof(*v));
		if (!v)
			return IOP_ERR_NOMEM;
		s->id = v;
		s->cap = cap;
	}
	s->id[s->n++] = id;
	return IOP_OK;
}

void rec_named_free(struct rec_named *s)
{
	free(s->id);
	*s = (struct rec_named){0};
}

static bool named_has(const struct rec_named *s, uint64_t id)
{
	for (size_t i = 0; s && i < s->n; i++)
		if (s->id[i] == id)
			return true;
	return false;
}

bool rec_view_over(const struct coll_tick *k, uint32_t cap)
{
	uint32_t files = 0, sites = 0;
	for (uint32_t i = 0; i < k->n; i++) {
		files += k->key[i].kind == COLL_ROW_FILE;
		sites += k->key[i].kind == COLL_ROW_SITE;
	}
	return files > cap || sites > cap;
}

/* A file's (site's) sums over its rows of the tick. */
struct subject {
	uint64_t id, bytes, time;
	bool keep;
};

static int by_id(const void *x, const void *y)
{
	uint64_t a = ((const struct subject *)x)->id, b = ((const struct subject *)y)->id;
	return (a > b) - (a < b);
}

static int by_bytes(const void *x, const void *y)
{
	const struct subject *a = *(struct subject *const *)x, *b = *(struct subject *const *)y;
	if (a->bytes != b->bytes)
		return a->bytes < b->bytes ? 1 : -1;
	return (a->id > b->id) - (a->id < b->id);
}

static int by_time(const void *x, const void *y)
{
	const struct subject *a = *(struct subject *const *)x, *b = *(struct subject *const *)y;
	if (a->time != b->time)
		return a->time < b->time ? 1 : -1;
	return (a->id > b->id) - (a->id < b->id);
}

/* Folds the rows of one kind; v and top have room for every row. */
static void fold_kind(struct coll_tick *k, uint8_t kind, uint32_t cap, const struct rec_named *named,
                      struct subject *v, struct subject **top, uint8_t *kept)
{
	size_t n = 0;
	for (uint32_t i = 0; i < k->n; i++)
		if (k->key[i].kind == kind && k->key[i].id != COLL_ID_OTHER)
			v[n++] = (struct subject){k->key[i].id, k->cell[i].bytes, k->cell[i].time_ns, false};
	if (n <= cap)
		return;
	qsort(v, n, sizeof(*v), by_id);
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		if (m && v[m - 1].id == v[i].id) {
			v[m - 1].bytes += v[i].bytes;
			v[m - 1].time += v[i].time;
		} else
			v[m++] = v[i];
	}
	if (m <= cap)
		return;
	for (size_t i = 0; i < m; i++) {
		top[i] = &v[i];
		v[i].keep = kind == COLL_ROW_FILE && named_has(named, v[i].id);
	}
	qsort(top, m, sizeof(*top), by_bytes);
	for (size_t i = 0; i < cap; i++)
		top[i]->keep = true;
	qsort(top, m, sizeof(*top), by_time);
	for (size_t i = 0; i < cap; i++)
		top[i]->keep = true;
	for (uint32_t i = 0; i < k->n; i++) {
		if (k->key[i].kind != kind)
			continue;
		struct subject key = {.id = k->key[i].id};
		const struct subject *s = key.id == COLL_ID_OTHER ? NULL
		                                                 : bsearch(&key, v, m, sizeof(*v), by_id);
		kept[i] = s && s->keep;
	}
	coll_tick_fold_kind(k, kept, kind);
}

enum iop_err rec_view_fold(struct coll_tick *k, uint32_t cap, const struct rec_named *named)
{
	size_t n = k->n ? k->n : 1;
	struct subject *v = malloc(n * sizeof(*v));
	struct subject **top = malloc(n * sizeof(*top));
	uint8_t *kept = calloc(n, 1);
	enum iop_err e = v && top && kept ? IOP_OK : IOP_ERR_NOMEM;
	if (!e) {
		fold_kind(k, COLL_ROW_FILE, cap, named, v, top, kept);
		fold_kind(k, COLL_ROW_SITE, cap, named, v, top, kept);
	}
	free(v);
	free(top);
	free(kept);
	return e;
}

/* ---- ranks above the cap ---- */

/* A rank's place in one order: value, then rank. */
struct ord {
	uint64_t v;
	uint32_t rank, i;
};

static int by_ord(const void *x, const void *y)
{
	const struct ord *a = x, *b = y;
	if (a->v != b->v)
		return a->v < b->v ? -1 : 1;
	return (a->rank > b->rank) - (a->rank < b->rank);
}

/* Marks the COLL_REC_RANK_ENDS figures at each end of o[0, n). */
static void keep_ends(struct ord *o, uint32_t n, uint8_t *keep)
{
	qsort(o, n, sizeof(*o), by_ord);
	for (uint32_t i = 0; i < n && i < COLL_REC_RANK_ENDS; i++) {
		keep[o[i].i] = 1;
		keep[o[n - 1 - i].i] = 1;
	}
}

static int fig_cmp_rank(const void *key, const void *x)
{
	uint32_t a = *(const uint32_t *)key, b = ((const struct coll_rank_fig *)x)->rank;
	return (a > b) - (a < b);
}

enum iop_err rec_view_fold_ranks(struct coll_tick *k, uint32_t cap, const struct rec_named *named,
                                 rec_node_fn *node, void *arg, struct coll_rank_dist *dist)
{
	*dist = (struct coll_rank_dist){0};
	struct coll_rank_fig *f;
	uint32_t n;
	enum iop_err e = coll_rank_figs(k, &f, &n);
	if (e || n <= cap) {
		free(f);
		return e;
	}
	struct coll_rank_dist d;
	uint8_t *keep = calloc(n, 1);
	struct ord *o = malloc(n * sizeof(*o));
	struct coll_tick out;
	coll_tick_init(&out, k->t, k->tick_ns);
	if (!keep || !o || (e = coll_rank_dist_of(f, n, k->t, &d))) {
		e = e ? e : IOP_ERR_NOMEM;
		goto done;
	}
	for (uint32_t i = 0; i < n; i++) {
		keep[i] = named_has(named, f[i].rank);
		o[i] = (struct ord){f[i].bytes, f[i].rank, i};
	}
	keep_ends(o, n, keep);
	uint32_t m = 0;
	for (uint32_t i = 0; i < n; i++)
		if (f[i].has_lat)
			o[m++] = (struct ord){f[i].p99_ns, f[i].rank, i};
	keep_ends(o, m, keep);
	for (uint32_t i = 0; i < k->n && !e; i++) {
		struct coll_key key = k->key[i];
		if (key.kind == COLL_ROW_RANK && !coll_key_is_node(&key)) {
			const struct coll_rank_fig *x = bsearch(&key.rank, f, n, sizeof(*f), fig_cmp_rank);
			if (x && !keep[x - f])
				key = coll_key_node(node(arg, key.rank), key.layer, key.cls);
		}
		struct coll_cell *c;
		if (!(e = coll_tick_row(&out, &key, &c)))
			e = coll_cell_merge(c, &k->cell[i]);
	}
	if (!e) {
		coll_tick_free(k);
		*k = out;
		out = (struct coll_tick){0};
		*dist = d;
	}
done:
	coll_tick_free(&out);
	free(keep);
	free(o);
	free(f);
	return e;
}

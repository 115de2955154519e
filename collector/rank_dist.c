/* A tick's ranks' distribution. See rank_dist.h. */
#include "rank_dist.h"

#include <stdlib.h>
#include <string.h>

#include "select.h"

static int by_rank(const void *x, const void *y)
{
	const struct coll_key *a = *(const struct coll_key *const *)x;
	const struct coll_key *b = *(const struct coll_key *const *)y;
	return (a->rank > b->rank) - (a->rank < b->rank);
}

/* The tick's RANK rows (rows of them), by rank, into by; their number.
 * Ranks are dense (0 .. ranks - 1): a counting sort, which at 65 536
 * ranks takes a fraction of qsort's time at every redraw of the dashboard
 * (tui_bench tui_redraw_ms_65536); qsort when they are not (a rank number
 * far above the rows, or no memory for the counts). */
static uint32_t rank_rows_by_rank(const struct coll_tick *k, uint32_t rows,
                                  const struct coll_key **by)
{
	uint32_t top = 0;
	for (uint32_t i = 0; i < k->n; i++)
		if (k->key[i].kind == COLL_ROW_RANK && !coll_key_is_node(&k->key[i]) &&
		    k->key[i].rank > top)
			top = k->key[i].rank;
	uint32_t *at = (uint64_t)top <= 4ull * rows + 64 ? calloc((size_t)top + 2, sizeof(*at)) : NULL;
	uint32_t m = 0;
	if (!at) {
		for (uint32_t i = 0; i < k->n; i++)
			if (k->key[i].kind == COLL_ROW_RANK && !coll_key_is_node(&k->key[i]))
				by[m++] = &k->key[i];
		qsort(by, m, sizeof(*by), by_rank);
		return m;
	}
	for (uint32_t i = 0; i < k->n; i++)
		if (k->key[i].kind == COLL_ROW_RANK && !coll_key_is_node(&k->key[i]))
			at[k->key[i].rank + 1]++;
	for (uint32_t r = 0; r <= top; r++)
		at[r + 1] += at[r];
	for (uint32_t i = 0; i < k->n; i++)
		if (k->key[i].kind == COLL_ROW_RANK && !coll_key_is_node(&k->key[i])) {
			by[at[k->key[i].rank]++] = &k->key[i];
			m++;
		}
	free(at);
	return m;
}

enum iop_err coll_rank_figs(const struct coll_tick *k, struct coll_rank_fig **out, uint32_t *n)
{
	*out = NULL;
	*n = 0;
	uint32_t rows = 0;
	for (uint32_t i = 0; i < k->n; i++)
		rows += k->key[i].kind == COLL_ROW_RANK && !coll_key_is_node(&k->key[i]);
	if (!rows)
		return IOP_OK;
	const struct coll_key **by = malloc(rows * sizeof(*by));
	struct coll_rank_fig *f = malloc(rows * sizeof(*f));
	if (!by || !f) {
		free(by);
		free(f);
		return IOP_ERR_NOMEM;
	}
	uint32_t m = rank_rows_by_rank(k, rows, by);
	struct iop_hist h;
	iop_hist_init(&h);
	enum iop_err e = IOP_OK;
	uint32_t nf = 0;
	for (uint32_t i = 0; i < m && !e;) {
		uint32_t rank = by[i]->rank;
		struct coll_rank_fig *x = &f[nf++];
		*x = (struct coll_rank_fig){.rank = rank};
		iop_hist_reset(&h);
		for (; i < m && by[i]->rank == rank; i++) {
			const struct coll_cell *c = &k->cell[by[i] - k->key];
			if (by[i]->cls == IOP_CLASS_READ || by[i]->cls == IOP_CLASS_WRITE)
				x->bytes += c->bytes;
			if (c->hist.count && !e)
				e = iop_hist_merge(&h, &c->hist);
		}
		x->has_lat = h.count > 0;
		x->p99_ns = h.count ? iop_hist_quantile(&h, 0.99) : 0;
	}
	iop_hist_free(&h);
	free(by);
	if (e) {
		free(f);
		return e;
	}
	*out = f;
	*n = nf;
	return IOP_OK;
}

static void quantiles(uint64_t *v, uint32_t n, uint64_t q[COLL_Q__N])
{
	static const double at[COLL_Q__N] = {0, 0.25, 0.5, 0.75, 0.99, 1};
	memset(q, 0, COLL_Q__N * sizeof(*q));
	if (!n)
		return;
	/* each by selection, not a sort of all (65 536 ranks at every redraw
	 * of the dashboard): the positions ascend, so each selects within
	 * what is above the one before */
	uint32_t from = 0;
	for (int i = 0; i < COLL_Q__N; i++) {
		/* nearest rank: the smallest value with at least a share at[i]
		 * of the values at or below it (min: the first) */
		uint64_t idx = (uint64_t)(at[i] * n + 0.999999999);
		uint32_t k = (uint32_t)(idx ? idx - 1 : 0);
		iop_select_u64(v, from, n, k);
		q[i] = v[k];
		from = k;
	}
}

enum iop_err coll_rank_dist_of(const struct coll_rank_fig *f, uint32_t n, int64_t t,
                               struct coll_rank_dist *d)
{
	*d = (struct coll_rank_dist){.t = t, .ranks = n};
	if (!n)
		return IOP_OK;
	uint64_t *v = malloc(n * sizeof(*v));
	if (!v)
		return IOP_ERR_NOMEM;
	for (uint32_t i = 0; i < n; i++)
		v[i] = f[i].bytes;
	quantiles(v, n, d->bytes);
	uint32_t m = 0;
	for (uint32_t i = 0; i < n; i++)
		if (f[i].has_lat)
			v[m++] = f[i].p99_ns;
	d->lat_ranks = m;
	quantiles(v, m, d->p99_ns);
	free(v);
	return IOP_OK;
}

enum iop_err coll_rank_dist_tick(const struct coll_tick *k, struct coll_rank_dist *d)
{
	struct coll_rank_fig *f;
	uint32_t n;
	enum iop_err e = coll_rank_figs(k, &f, &n);
	if (!e)
		e = coll_rank_dist_of(f, n, k->t, d);
	free(f);
	return e;
}

void coll_rank_dist_encode(const struct coll_rank_dist *d, struct iop_wcur *c)
{
	iop_put_varint(c, d->ranks);
	if (!d->ranks)
		return;
	iop_put_svarint(c, d->t);
	iop_put_varint(c, d->lat_ranks);
	for (int i = 0; i < COLL_Q__N; i++)
		iop_put_varint(c, d->bytes[i]);
	for (int i = 0; i < COLL_Q__N; i++)
		iop_put_varint(c, d->p99_ns[i]);
}

enum iop_err coll_rank_dist_decode(struct coll_rank_dist *d, struct iop_rcur *c)
{
	*d = (struct coll_rank_dist){0};
	d->ranks = (uint32_t)iop_get_varint_max(c, UINT32_MAX);
	if (c->err || !d->ranks)
		return c->err;
	d->t = iop_get_svarint(c);
	d->lat_ranks = (uint32_t)iop_get_varint_max(c, UINT32_MAX);
	for (int i = 0; i < COLL_Q__N; i++)
		d->bytes[i] = iop_get_varint(c);
	for (int i = 0; i < COLL_Q__N; i++)
		d->p99_ns[i] = iop_get_varint(c);
	if (c->err)
		return c->err;
	bool ok = d->lat_ranks <= d->ranks;
	for (int i = 1; i < COLL_Q__N; i++)
		ok = ok && d->bytes[i - 1] <= d->bytes[i] && d->p99_ns[i - 1] <= d->p99_ns[i];
	if (!d->lat_ranks)
		for (int i = 0; i < COLL_Q__N; i++)
			ok = ok && !d->p99_ns[i];
	if (!ok) {
		*d = (struct coll_rank_dist){0};
		return IOP_ERR_MALFORMED;
	}
	return IOP_OK;
}

/* Per-rank totals for the summary. See rank_sum.h. */
#include "rank_sum.h"

#include <stdlib.h>

#include "table.h"

void coll_layer_sum_add(struct coll_layer_sum *l, const struct coll_key *k,
                        const struct coll_cell *c)
{
	l->time_ns += c->time_ns;
	if (k->cls == IOP_CLASS_READ) {
		l->read_bytes += c->bytes;
		l->read_ops += c->ops;
	} else if (k->cls == IOP_CLASS_WRITE) {
		l->write_bytes += c->bytes;
		l->write_ops += c->ops;
	} else {
		l->meta_ops += c->ops;
	}
}

/* One rank's data bytes on one file, at MPI-IO and at POSIX. */
struct file_rank_io {
	uint64_t file;
	uint32_t rank;
	uint64_t mpiio, posix;
};

static int by_file_rank(const void *a, const void *b)
{
	const struct file_rank_io *x = a, *y = b;
	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* Folds v (sorted) into one entry per (file, rank); returns how many. */
static size_t fold(struct file_rank_io *v, size_t m)
{
	size_t n = 0;
	for (size_t i = 0; i < m; i++) {
		if (n && v[n - 1].file == v[i].file && v[n - 1].rank == v[i].rank) {
			v[n - 1].mpiio += v[i].mpiio;
			v[n - 1].posix += v[i].posix;
		} else {
			v[n++] = v[i];
		}
	}
	return n;
}

/* Marks the aggregators among the (file, rank) entries of one file, [b, e):
 * only where some rank's MPI-IO bytes went (partly) through another rank's
 * POSIX calls, which data sieving alone never does. */
static void mark_file(const struct file_rank_io *v, size_t b, size_t e, struct coll_rank_sum *out,
                      uint32_t n_ranks)
{
	bool delegated = false;
	for (size_t i = b; i < e; i++)
		delegated |= v[i].mpiio > 0 && v[i].posix < v[i].mpiio;
	if (!delegated)
		return;
	for (size_t i = b; i < e; i++)
		if (v[i].posix > 2 * v[i].mpiio && v[i].rank < n_ranks)
			out[v[i].rank].aggregator = true;
}

static int by_id(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

static bool is_data(const struct coll_key *k)
{
	return k->id && (k->cls == IOP_CLASS_READ || k->cls == IOP_CLASS_WRITE);
}

/* The files some rank moved MPI-IO data on, sorted, unique: the only ones
 * where a rank can have aggregated others' data. NULL with *n 0: none (a
 * job without MPI-IO: then nothing else is looked at, and the dashboard,
 * which asks at every redraw, does not sort every counter of a 65 536-rank
 * job's files each time: tui_bench tui_redraw_ms_65536). */
static uint64_t *mpiio_files(const struct coll_state *s, size_t *n)
{
	void *v = NULL;
	uint32_t m = 0, cap = 0;
	for (struct coll_totals_it it = {.s = s}; coll_totals_next(&it);) {
		if (!is_data(&it.key) || it.key.layer != IOP_LAYER_MPIIO || !it.cell.bytes)
			continue;
		if (coll_array_room(&v, sizeof(uint64_t), m, &cap, 64) != IOP_OK) {
			free(v);
			*n = 0;
			return NULL;
		}
		((uint64_t *)v)[m++] = it.key.id;
	}
	uint64_t *f = v;
	if (m)
		qsort(f, m, sizeof(*f), by_id);
	size_t u = 0;
	for (size_t i = 0; i < m; i++)
		if (!u || f[u - 1] != f[i])
			f[u++] = f[i];
	*n = u;
	return f;
}

static void mark_aggregators(const struct coll_state *s, struct coll_rank_sum *out)
{
	size_t n_files;
	uint64_t *files = mpiio_files(s, &n_files);
	if (!files)
		return;
	struct file_rank_io *v = malloc((s->latest.n + 1) * sizeof(*v));
	if (!v) {
		free(files);
		return;
	}
	size_t m = 0;
	for (struct coll_totals_it it = {.s = s}; coll_totals_next(&it);) {
		const struct coll_key *k = &it.key;
		if (!is_data(k) || (k->layer != IOP_LAYER_MPIIO && k->layer != IOP_LAYER_POSIX) ||
		    !bsearch(&k->id, files, n_files, sizeof(*files), by_id))
			continue;
		v[m++] =
		    (struct file_rank_io){.file = k->id,
		                          .rank = k->rank,
		                          .mpiio = k->layer == IOP_LAYER_MPIIO ? it.cell.bytes : 0,
		                          .posix = k->layer == IOP_LAYER_POSIX ? it.cell.bytes : 0};
	}
	qsort(v, m, sizeof(*v), by_file_rank);
	m = fold(v, m);
	for (size_t b = 0, e; b < m; b = e) {
		for (e = b + 1; e < m && v[e].file == v[b].file; e++)
			;
		mark_file(v, b, e, out, s->n_ranks);
	}
	free(v);
	free(files);
}

struct coll_rank_sum *coll_rank_sums(const struct coll_state *s)
{
	struct coll_rank_sum *out = calloc(s->n_ranks + 1, sizeof(*out));
	if (!out)
		return NULL;
	for (struct coll_totals_it it = {.s = s}; coll_totals_next(&it);)
		if (it.key.rank < s->n_ranks && it.key.layer < IOP_LAYER__COUNT)
			coll_layer_sum_add(&out[it.key.rank].layer[it.key.layer], &it.key,
			                   &it.cell);
	mark_aggregators(s, out);
	return out;
}

uint64_t coll_rank_own_bytes(const struct coll_rank_sum *r)
{
	static const int order[] = {IOP_LAYER_HDF5, IOP_LAYER_MPIIO};
	for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
		const struct coll_layer_sum *l = &r->layer[order[i]];
		if (l->read_ops || l->write_ops)
			return l->read_bytes + l->write_bytes;
	}
	const struct coll_layer_sum *p = &r->layer[IOP_LAYER_POSIX],
	                            *f = &r->layer[IOP_LAYER_STDIO];
	return p->read_bytes + p->write_bytes + f->read_bytes + f->write_bytes;
}

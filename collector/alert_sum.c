/* What the alert rules remember of past ticks, and the statistics they use.
 *
 * One pass over a tick's RANK rows fills:
 *   - the job sums of the tick (per layer and class), kept in a ring as long
 *     as the longest rule window, so a window is a sum over ring slots;
 *   - per rank and (layer, data class), a ring of ops / time / bytes for
 *     straggler, and per rank a ring of application bytes for imbalance;
 *   - per rank, the oldest call in flight at the tick's end, for hung_io.
 * Ring slots carry their tick number, so a rank or tick that is missing
 * simply has no slot in the window: nothing has to be cleared each tick.
 * FILE and LAYER rows are read by latency_spike itself.
 *
 * Time: a cell's exclusive time is its inclusive time when it issued no
 * calls below it (a leaf may leave excl_ns 0 then). */
#include "alert_int.h"
#include "table.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define NEVER INT64_MIN

uint32_t ticks_of(const struct coll_alerts *a, double s, uint32_t lo)
{
	/* rounded up, with a little slack so 0.3 s of 0.1 s ticks is 3 */
	double q = s * 1e9 / (double)a->tick_ns - 1e-6;
	uint32_t n = q > 1e6 ? 1000000 : q > 0 ? (uint32_t)q : 0;
	if (q > 0 && n < q)
		n++;
	return n < lo ? lo : n;
}

/* -------------------------------------------------------------- statistics */

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

double median(double *v, size_t n)
{
	if (n == 0)
		return 0;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The median of sorted[0..n) with one element equal to x left out. */
double median_without(const double *sorted, size_t n, double x)
{
	if (n < 2)
		return 0;
	size_t lo = 0, hi = n; /* the first element >= x */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (sorted[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t k = lo < n ? lo : n - 1, m = n - 1;
#define AT(j) sorted[(j) < k ? (j) : (j) + 1]
	return m % 2 ? AT(m / 2) : (AT(m / 2 - 1) + AT(m / 2)) / 2;
#undef AT
}

double mad(const double *v, size_t n, double med, double *tmp)
{
	for (size_t i = 0; i < n; i++)
		tmp[i] = v[i] > med ? v[i] - med : med - v[i];
	return median(tmp, n);
}

enum iop_err scratch_reserve(struct coll_alerts *a, size_t n)
{
	if (n <= a->cap_scratch)
		return IOP_OK;
	size_t cap = a->cap_scratch ? a->cap_scratch : 64;
	while (cap < n)
		cap *= 2;
	double *s = realloc(a->scratch, cap * sizeof(*s));
	if (!s)
		return IOP_ERR_NOMEM;
	a->scratch = s;
	s = realloc(a->scratch2, cap * sizeof(*s));
	if (!s)
		return IOP_ERR_NOMEM;
	a->scratch2 = s;
	a->cap_scratch = cap;
	return IOP_OK;
}

enum iop_err baseline_init(struct baseline *b, uint32_t cap)
{
	memset(b, 0, sizeof(*b));
	b->cap = cap < BASELINE_MIN ? BASELINE_MIN : cap;
	b->v = calloc(2 * (size_t)b->cap, sizeof(*b->v)); /* values, then sizes */
	return b->v ? IOP_OK : IOP_ERR_NOMEM;
}

void baseline_free(struct baseline *b)
{
	free(b->v);
	b->v = NULL;
}

static void baseline_push(struct baseline *b, double x, double size)
{
	b->v[b->next] = x;
	b->v[b->cap + b->next] = size;
	b->next = (b->next + 1) % b->cap;
	if (b->n < b->cap)
		b->n++;
}

/* Of a run of anomalous samples only the first enters, and only once the
 * run is over: while it lasts the baseline is what came before it (with
 * few samples in, one anomalous value would otherwise be the 90th
 * percentile at once and hide the rest of the run). */
void baseline_offer(struct baseline *b, double x, double size, bool anomalous)
{
	if (anomalous) {
		if (b->run++ == 0) {
			b->pend_x = x;
			b->pend_size = size;
		}
		return;
	}
	if (b->run)
		baseline_push(b, b->pend_x, b->pend_size);
	b->run = 0;
	baseline_push(b, x, size);
}

static double quantile_of(const double *v, uint32_t n, double q, double *tmp)
{
	memcpy(tmp, v, n * sizeof(*tmp));
	qsort(tmp, n, sizeof(*tmp), cmp_double);
	uint32_t rank = (uint32_t)(q * n + 0.999999);
	return tmp[rank ? rank - 1 : 0];
}

double baseline_value(const struct baseline *b, double q, double *tmp)
{
	return b->n < BASELINE_MIN ? -1 : quantile_of(b->v, b->n, q, tmp);
}

double baseline_size(const struct baseline *b, double *tmp)
{
	return b->n < BASELINE_MIN ? -1 : quantile_of(b->v + b->cap, b->n, 0.5, tmp);
}

/* ------------------------------------------------------------------- files */

static uint32_t file_hash(uint64_t id, unsigned layer, unsigned cls)
{
	uint64_t h = id ^ ((uint64_t)(layer * 4 + cls) << 58);
	h ^= h >> 29;
	h *= UINT64_C(0xbf58476d1ce4e5b9);
	return (uint32_t)(h >> 32);
}

static uint32_t file_probe(const struct file_table *ft, uint64_t id, unsigned layer, unsigned cls)
{
	uint32_t mask = ft->n_slots - 1, i = file_hash(id, layer, cls) & mask;
	for (;;) {
		uint32_t s = ft->slot[i];
		if (!s)
			return i;
		const struct file_state *f = &ft->f[s - 1];
		if (f->id == id && f->layer == layer && f->cls == cls)
			return i;
		i = (i + 1) & mask;
	}
}

static void file_reindex(struct file_table *ft)
{
	memset(ft->slot, 0, ft->n_slots * sizeof(*ft->slot));
	for (uint32_t i = 0; i < ft->n; i++)
		ft->slot[file_probe(ft, ft->f[i].id, ft->f[i].layer, ft->f[i].cls)] = i + 1;
}

/* Forgets the files not seen for twice a baseline's length; false when
 * there are none. The files already tracked keep their baselines rather
 * than give way to newcomers: with more active files than the cap, a
 * stable set is judged per file instead of none (every file is still
 * within its layer's p99). */
static bool file_evict(struct coll_alerts *a)
{
	struct file_table *ft = &a->files;
	if (ft->full_at == a->t)
		return false; /* nothing grows stale within a tick */
	int64_t stale = a->t - 2 * (int64_t)a->rt[COLL_ALERT_LATENCY_SPIKE].r.baseline_n;
	uint32_t kept = 0;
	for (uint32_t i = 0; i < ft->n; i++) {
		if (ft->f[i].last_t < stale)
			baseline_free(&ft->f[i].b);
		else
			ft->f[kept++] = ft->f[i];
	}
	if (kept == ft->n) {
		ft->full_at = a->t;
		return false;
	}
	ft->n = kept;
	file_reindex(ft);
	return true;
}

struct file_state *file_get(struct coll_alerts *a, uint64_t id, unsigned layer, unsigned cls)
{
	struct file_table *ft = &a->files;
	uint32_t s = ft->slot[file_probe(ft, id, layer, cls)];
	if (s)
		return &ft->f[s - 1];
	if (ft->n == ft->cap && !file_evict(a))
		return NULL;
	struct file_state *f = &ft->f[ft->n];
	if (baseline_init(&f->b, a->rt[COLL_ALERT_LATENCY_SPIKE].r.baseline_n))
		return NULL;
	f->id = id;
	f->layer = (uint8_t)layer;
	f->cls = (uint8_t)cls;
	f->last_t = a->t;
	ft->n++;
	ft->slot[file_probe(ft, id, layer, cls)] = ft->n;
	return f;
}

/* ------------------------------------------------------------ set-up, free */

enum iop_err sum_setup(struct coll_alerts *a)
{
	a->ring_n = 1;
	for (unsigned k = 0; k < COLL_ALERT__COUNT; k++)
		if (a->rt[k].win > a->ring_n)
			a->ring_n = a->rt[k].win;
	a->ring = calloc(a->ring_n, sizeof(*a->ring));
	if (!a->ring)
		return IOP_ERR_NOMEM;
	for (uint32_t i = 0; i < a->ring_n; i++)
		a->ring[i].t = NEVER;
	enum iop_err e = IOP_OK;
	for (unsigned l = 0; l < NL; l++)
		for (unsigned c = 0; c < NC; c++) {
			if (!e && c < DATA_CLASSES)
				e = baseline_init(&a->tput[l][c],
				                  a->rt[COLL_ALERT_THROUGHPUT_DROP].r.baseline_n);
			if (!e)
				e = baseline_init(&a->lat[l][c],
				                  a->rt[COLL_ALERT_LATENCY_SPIKE].r.baseline_n);
		}
	if (e)
		return e;
	struct file_table *ft = &a->files;
	ft->cap = a->rules.max_files;
	ft->n_slots = 16;
	while (ft->n_slots < 2 * ft->cap)
		ft->n_slots *= 2;
	ft->full_at = NEVER;
	ft->f = calloc(ft->cap, sizeof(*ft->f));
	ft->slot = calloc(ft->n_slots, sizeof(*ft->slot));
	return ft->f && ft->slot ? IOP_OK : IOP_ERR_NOMEM;
}

void sum_free(struct coll_alerts *a)
{
	for (uint32_t r = 0; r < a->n_rank; r++) {
		for (unsigned l = 0; l < NL; l++)
			for (unsigned c = 0; c < DATA_CLASSES; c++)
				free(a->rank[r].grp[l][c]);
		free(a->rank[r].imb);
		free(a->rank[r].lock);
		free(a->rank[r].coll);
	}
	free(a->rank);
	free(a->touched);
	free(a->ring);
	for (unsigned l = 0; l < NL; l++)
		for (unsigned c = 0; c < NC; c++) {
			if (c < DATA_CLASSES)
				baseline_free(&a->tput[l][c]);
			baseline_free(&a->lat[l][c]);
		}
	for (uint32_t i = 0; i < a->files.n; i++)
		baseline_free(&a->files.f[i].b);
	free(a->files.f);
	free(a->files.slot);
	free(a->scratch);
	free(a->scratch2);
}

/* ------------------------------------------------------------------ a tick */

static void lc_add(struct lc_sum *d, const struct lc_sum *s)
{
	d->ops += s->ops;
	d->bytes += s->bytes;
	d->time_ns += s->time_ns;
	d->excl_ns += s->excl_ns;
	d->child_ops += s->child_ops;
	d->child_bytes += s->child_bytes;
	d->off_ops += s->off_ops;
	d->consec_ops += s->consec_ops;
	d->fwd_ops += s->fwd_ops;
	d->stride_ops += s->stride_ops;
	d->small_ops += s->small_ops;
	d->coll_ops += s->coll_ops;
	d->lock_ns += s->lock_ns;
	d->wait_ns += s->wait_ns;
	if (s->ranks > d->ranks)
		d->ranks = s->ranks;
}

void sum_window(const struct coll_alerts *a, uint32_t w, struct tick_sum *out)
{
	memset(out, 0, sizeof(*out));
	out->t = a->t;
	out->coll_known = true;
	bool any = false;
	for (uint32_t i = 0; i < w && i < a->ring_n; i++) {
		const struct tick_sum *s = &a->ring[ring_index(a->t - i, a->ring_n)];
		if (s->t != a->t - (int64_t)i)
			continue;
		any = true;
		for (unsigned l = 0; l < NL; l++)
			for (unsigned c = 0; c < NC; c++)
				lc_add(&out->lc[l][c], &s->lc[l][c]);
		if (s->io_ranks > out->io_ranks)
			out->io_ranks = s->io_ranks;
		out->events += s->events;
		out->dropped += s->dropped;
		out->late += s->late;
		out->coll_known &= s->coll_known;
	}
	out->coll_known &= any;
}

/* The rank's state, growing the array to hold it; NULL when out of memory. */
static struct rank_state *rank_get(struct coll_alerts *a, uint32_t r)
{
	if (r >= a->n_rank) {
		uint32_t n = a->n_rank ? a->n_rank : 64;
		while (n <= r)
			n = n > COLL_ALERTS_MAX_RANKS / 2 ? COLL_ALERTS_MAX_RANKS : n * 2;
		struct rank_state *rs = realloc(a->rank, n * sizeof(*rs));
		if (!rs)
			return NULL;
		memset(rs + a->n_rank, 0, (n - a->n_rank) * sizeof(*rs));
		for (uint32_t i = a->n_rank; i < n; i++)
			rs[i].seen_t = rs[i].moved_t = rs[i].run_from = NEVER;
		a->rank = rs;
		a->n_rank = n;
	}
	struct rank_state *rs = &a->rank[r];
	if (rs->seen_t != a->t) {
		if (coll_array_room((void **)&a->touched, sizeof(*a->touched), a->n_touched,
		                    &a->cap_touched, 64))
			return NULL;
		a->touched[a->n_touched++] = r;
		a->ranks_seen += rs->seen_t == NEVER;
		rs->seen_t = a->t;
		memset(rs->layer_bytes, 0, sizeof(rs->layer_bytes));
		rs->oldest_ns = 0;
		rs->had_ops = false;
	}
	return rs;
}

/* The slot of tick t in a ring of n entries of size bytes, each beginning
 * with its tick (int64_t t), (re)started when it held an older tick. */
static void *ring_slot(void **ring, size_t size, uint32_t n, int64_t t)
{
	if (!*ring) {
		*ring = calloc(n, size);
		if (!*ring)
			return NULL;
		for (uint32_t i = 0; i < n; i++)
			*(int64_t *)((char *)*ring + i * size) = NEVER;
	}
	void *w = (char *)*ring + ring_index(t, n) * size;
	if (*(int64_t *)w != t) {
		memset(w, 0, size);
		*(int64_t *)w = t;
	}
	return w;
}

static struct rank_win *win_slot(struct rank_win **ring, uint32_t n, int64_t t)
{
	_Static_assert(offsetof(struct rank_win, t) == 0, "a ring entry begins with its tick");
	return ring_slot((void **)ring, sizeof(**ring), n, t);
}

static struct coll_win *coll_slot(struct coll_win **ring, uint32_t n, int64_t t)
{
	_Static_assert(offsetof(struct coll_win, t) == 0, "a ring entry begins with its tick");
	return ring_slot((void **)ring, sizeof(**ring), n, t);
}

static enum iop_err add_rank_row(struct coll_alerts *a, const struct coll_key *key,
                                 const struct coll_cell *cell)
{
	struct rank_state *rs = rank_get(a, key->rank);
	if (!rs)
		return IOP_ERR_NOMEM;
	struct lc_sum *s = &a->cur->lc[key->layer][key->cls];
	s->ops += cell->ops;
	s->bytes += cell->bytes;
	s->time_ns += cell->time_ns;
	s->excl_ns += cell->excl_ns || cell->child_ops ? cell->excl_ns : cell->time_ns;
	s->child_ops += cell->child_ops;
	s->child_bytes += cell->child_bytes;
	s->off_ops += cell->off_ops;
	s->consec_ops += cell->consec_ops;
	s->fwd_ops += cell->fwd_ops;
	s->stride_ops += cell->stride_ops;
	s->small_ops += cell->size_ops[0] + cell->size_ops[1];
	s->coll_ops += cell->coll_ops;
	s->lock_ns += cell->lock_ns;
	s->wait_ns += cell->wait_ns;
	s->ranks += cell->ops > 0;
	rs->had_ops |= cell->ops > 0;
	if (cell->inflight && cell->oldest_ns &&
	    (!rs->oldest_ns || cell->oldest_ns < rs->oldest_ns)) {
		rs->oldest_ns = cell->oldest_ns;
		rs->oldest_layer = key->layer;
		rs->oldest_cls = key->cls;
	}
	if (cell->lock_ns) {
		struct rank_win *l = win_slot(&rs->lock, a->rt[COLL_ALERT_STRAGGLER].win, a->t);
		if (!l)
			return IOP_ERR_NOMEM;
		l->time_ns += cell->lock_ns;
	}
	uint64_t wait = cell->wait_ns < cell->time_ns ? cell->wait_ns : cell->time_ns;
	if (a->rt[COLL_ALERT_LATE_ARRIVAL].r.enabled && (cell->ops || cell->match_ops)) {
		struct coll_win *c = coll_slot(&rs->coll, a->rt[COLL_ALERT_LATE_ARRIVAL].win, a->t);
		if (!c)
			return IOP_ERR_NOMEM;
		c->match[key->layer] += cell->match_ops;
		c->last[key->layer] += cell->last_ops;
		c->late_ns[key->layer] += cell->late_ns;
		c->wait_ns += cell->wait_ns;
		uint64_t excl = cell->excl_ns || cell->child_ops ? cell->excl_ns : cell->time_ns;
		c->own_ns += excl > cell->wait_ns ? excl - cell->wait_ns : 0;
	}
	if (key->cls >= DATA_CLASSES || cell->ops == 0)
		return IOP_OK;
	rs->layer_bytes[key->layer] += cell->bytes;
	struct rank_win *w =
	    win_slot(&rs->grp[key->layer][key->cls], a->rt[COLL_ALERT_STRAGGLER].win, a->t);
	if (!w)
		return IOP_ERR_NOMEM;
	/* its own time: waiting for other ranks in a collective call is not
	 * a slow rank (the one they wait for is late_arrival's) */
	w->ops += cell->ops;
	w->time_ns += cell->time_ns - wait;
	w->bytes += cell->bytes;
	w->child_bytes += cell->child_bytes;
	return IOP_OK;
}

/* The bytes a rank's application asked for: those of the highest layer it
 * used, since lower layers carry the same bytes again (or, under collective
 * buffering, other ranks' bytes). */
static uint64_t app_bytes(const struct rank_state *rs)
{
	if (rs->layer_bytes[IOP_LAYER_HDF5])
		return rs->layer_bytes[IOP_LAYER_HDF5];
	if (rs->layer_bytes[IOP_LAYER_MPIIO])
		return rs->layer_bytes[IOP_LAYER_MPIIO];
	return rs->layer_bytes[IOP_LAYER_POSIX] + rs->layer_bytes[IOP_LAYER_STDIO];
}

enum iop_err sum_tick(struct coll_alerts *a)
{
	const struct coll_tick *k = a->tick;
	a->cur = &a->ring[ring_index(a->t, a->ring_n)];
	memset(a->cur, 0, sizeof(*a->cur));
	a->cur->t = a->t;
	a->cur->coll_known = true; /* cells count collective calls (coll_ops) */
	a->cur->events = a->ctx->events;
	a->cur->dropped = a->ctx->dropped;
	a->cur->late = a->ctx->late;
	a->n_touched = 0;
	uint64_t most[NL] = {0};
	for (uint32_t i = 0; i < k->n; i++) {
		const struct coll_key *key = &k->key[i];
		if (key->kind == COLL_ROW_FILE && key->layer < NL && k->cell[i].last_ops &&
		    key->id != COLL_ID_OTHER && k->cell[i].wait_ns >= most[key->layer]) {
			most[key->layer] = k->cell[i].wait_ns;
			a->coll_file[key->layer] = key->id;
			a->coll_cls[key->layer] = key->cls;
		}
		if (key->kind != COLL_ROW_RANK || key->rank >= COLL_ALERTS_MAX_RANKS ||
		    key->layer >= NL || key->cls >= NC)
			continue;
		enum iop_err e = add_rank_row(a, key, &k->cell[i]);
		if (e)
			return e;
	}
	for (uint32_t i = 0; i < a->n_touched; i++) {
		struct rank_state *rs = &a->rank[a->touched[i]];
		a->cur->io_ranks += rs->had_ops;
		uint64_t b = app_bytes(rs);
		if (!b)
			continue;
		struct rank_win *w = win_slot(&rs->imb, a->rt[COLL_ALERT_IMBALANCE].win, a->t);
		if (!w)
			return IOP_ERR_NOMEM;
		w->bytes = b;
		if (rs->moved_t != a->t - 1) { /* a new run of ticks that move data */
			rs->moved_before = rs->moved_t != NEVER;
			rs->run_from = a->t;
		}
		rs->moved_t = a->t;
	}
	return IOP_OK;
}

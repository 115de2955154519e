/* Tick rows: insertion-ordered arrays with an open-addressing index, cell
 * arithmetic and the tick delta's serialisation. See tick.h. */
#include "tick.h"

#include <stdlib.h>
#include <string.h>

#include "events.h"

void coll_cell_init(struct coll_cell *c)
{
	memset(c, 0, sizeof(*c));
	iop_hist_init(&c->hist);
}

void coll_tick_init(struct coll_tick *k, int64_t t, uint64_t tick_ns)
{
	memset(k, 0, sizeof(*k));
	k->t = t;
	k->tick_ns = tick_ns;
}

/* Bucket storage for the histograms a decode creates: blocks handed out
 * in order, all freed with the tick (a histogram that outgrows its piece
 * moves to memory of its own, hist.c). One malloc a block instead of one
 * a row: a keyframe holds a million rows. */
struct coll_tick_arena {
	struct coll_tick_arena *next;
	size_t used, cap; /* counts */
	uint32_t b[];
};

#define ARENA_FIRST 256       /* counts in the first block (1 KiB) */
#define ARENA_MAX   (1u << 18) /* a block grows (doubling) up to 1 MiB */

static uint32_t *arena_alloc(void *arg, size_t n)
{
	struct coll_tick_arena **head = arg, *a = *head;
	if (!a || a->cap - a->used < n) {
		size_t cap = !a ? ARENA_FIRST : a->cap < ARENA_MAX ? a->cap * 2 : ARENA_MAX;
		if (cap < n)
			cap = n;
		if (!(a = malloc(sizeof(*a) + cap * sizeof(uint32_t))))
			return NULL;
		a->next = *head;
		a->used = 0;
		a->cap = cap;
		*head = a;
	}
	uint32_t *p = a->b + a->used;
	a->used += n;
	return p;
}

static void arena_free(struct coll_tick_arena *a)
{
	while (a) {
		struct coll_tick_arena *next = a->next;
		free(a);
		a = next;
	}
}

enum iop_err coll_tick_pack(struct coll_tick *k)
{
	/* each histogram's width found once (a scan of its buckets), then used
	 * to size and to pack */
	size_t total = 0;
	uint8_t *width = malloc(k->n ? k->n : 1);
	if (!width)
		return IOP_ERR_NOMEM;
	for (uint32_t i = 0; i < k->n; i++) {
		width[i] = (uint8_t)iop_hist_pack_width(&k->cell[i].hist);
		total += iop_hist_packed_size_at(&k->cell[i].hist, width[i]);
	}
	struct coll_tick_arena *old = k->arena;
	k->arena = NULL;
	uint8_t *mem = NULL;
	if (total && !(mem = (uint8_t *)arena_alloc(&k->arena, total / sizeof(uint32_t)))) {
		k->arena = old;
		free(width);
		return IOP_ERR_NOMEM;
	}
	for (uint32_t i = 0; i < k->n; i++) {
		size_t used = iop_hist_pack_at(&k->cell[i].hist, mem, width[i]);
		if (used) /* mem is NULL when every histogram is empty */
			mem += used;
	}
	for (uint32_t i = k->n; i < k->n_kept; i++)
		iop_hist_free(&k->cell[i].hist);
	k->n_kept = k->n;
	arena_free(old); /* no histogram points into it any more */
	free(width);
	return IOP_OK;
}

void coll_tick_free(struct coll_tick *k)
{
	uint32_t n = k->n > k->n_kept ? k->n : k->n_kept;
	for (uint32_t i = 0; i < n; i++)
		iop_hist_free(&k->cell[i].hist);
	arena_free(k->arena);
	k->arena = NULL;
	free(k->key);
	free(k->cell);
	free(k->slot);
	coll_tick_init(k, 0, k->tick_ns);
}

/* The rows' histograms keep their buckets (zeroed) for the next rows in
 * their cells: a leaf fills and resets the same ticks all the time, and
 * allocating every histogram again each tick cost it a tenth of its time. */
void coll_tick_reset(struct coll_tick *k, int64_t t)
{
	for (uint32_t i = 0; i < k->n; i++)
		iop_hist_reset(&k->cell[i].hist);
	if (k->n > k->n_kept)
		k->n_kept = k->n;
	if (k->slot && k->n) /* with no rows, no slot is in use */
		memset(k->slot, 0, k->n_slots * sizeof(*k->slot));
	k->n = 0;
	k->t = t;
}

static uint64_t key_hash(const struct coll_key *key)
{
	uint64_t h = key->id ^ ((uint64_t)key->rank << 17) ^ ((uint64_t)key->kind << 49) ^
	             ((uint64_t)key->layer << 53) ^ ((uint64_t)key->cls << 57);
	h *= UINT64_C(0x9e3779b97f4a7c15);
	return h ^ h >> 29;
}

static bool key_eq(const struct coll_key *a, const struct coll_key *b)
{
	return a->id == b->id && a->rank == b->rank && a->kind == b->kind && a->layer == b->layer &&
	       a->cls == b->cls;
}

/* An index slot holds row + 1 (at most COLL_TICK_MAX_ROWS) in its low
 * ROW_BITS and a tag from the key's hash above: a probe passing other
 * rows' slots reads their keys only when the tags match (1 in 512), and
 * adding a new row reads no key at all. In a tick of hundreds of
 * thousands of rows every key read was a cache miss. */
#define ROW_BITS 23
#define ROW_MASK ((UINT32_C(1) << ROW_BITS) - 1)
_Static_assert(COLL_TICK_MAX_ROWS <= ROW_MASK, "a row + 1 must fit in a slot");

static uint32_t key_tag(uint64_t h)
{
	return (uint32_t)(h >> (64 - (32 - ROW_BITS))) << ROW_BITS;
}

/* The row of a non-empty slot. */
static uint32_t slot_row(uint32_t s)
{
	return (s & ROW_MASK) - 1;
}

static uint32_t make_slot(const struct coll_key *key, uint32_t row)
{
	return key_tag(key_hash(key)) | (row + 1);
}

/* Index slot of key: its row's slot, or the empty slot where it would go. */
static uint32_t probe(const struct coll_tick *k, const struct coll_key *key)
{
	uint64_t h = key_hash(key);
	uint32_t mask = k->n_slots - 1, i = (uint32_t)h & mask, tag = key_tag(h);
	for (uint32_t s; (s = k->slot[i]); i = (i + 1) & mask)
		if ((s & ~ROW_MASK) == tag && key_eq(&k->key[slot_row(s)], key))
			break;
	return i;
}

struct coll_cell *coll_tick_find(const struct coll_tick *k, const struct coll_key *key)
{
	if (k->n == 0)
		return NULL;
	uint32_t s = k->slot[probe(k, key)];
	return s ? &k->cell[slot_row(s)] : NULL;
}

void coll_tick_prefetch(const struct coll_tick *k, const struct coll_key *key)
{
	if (k->n_slots)
		__builtin_prefetch(&k->slot[(uint32_t)key_hash(key) & (k->n_slots - 1)]);
}

/* Room for at least want rows (0: twice the present room). A tick sized
 * for the rows it will hold (a decoded one, a copy) gets exactly that:
 * history ticks are never added to, and the spare half of a doubled
 * array cost memory and page faults. */
static enum iop_err grow(struct coll_tick *k, uint32_t want)
{
	uint32_t cap = k->cap ? k->cap * 2 : 64;
	if (cap < want)
		cap = want;
	if (cap > COLL_TICK_MAX_ROWS)
		return IOP_ERR_OVERSIZED;
	struct coll_key *key = realloc(k->key, cap * sizeof(*key));
	if (!key)
		return IOP_ERR_NOMEM;
	k->key = key;
	struct coll_cell *cell = realloc(k->cell, cap * sizeof(*cell));
	if (!cell)
		return IOP_ERR_NOMEM;
	k->cell = cell;
	uint32_t n_slots = 128; /* a power of two, 3 to 6 times the rows */
	while (n_slots < cap * 3)
		n_slots *= 2;
	uint32_t *slot = calloc(n_slots, sizeof(*slot));
	if (!slot)
		return IOP_ERR_NOMEM;
	free(k->slot);
	k->slot = slot;
	k->n_slots = n_slots;
	k->cap = cap;
	for (uint32_t i = 0; i < k->n; i++)
		k->slot[probe(k, &k->key[i])] = make_slot(&k->key[i], i);
	return IOP_OK;
}

/* Appends a zeroed row of key, absent, at index slot s (room checked). */
static struct coll_cell *append(struct coll_tick *k, const struct coll_key *key, uint32_t s)
{
	uint32_t i = k->n++;
	/* field by field: a decoder stores the key byte by byte just before,
	 * and a whole-struct copy (one 16-byte load) stalled on store
	 * forwarding, most of the decode's own time */
	k->key[i] = (struct coll_key){.id = key->id, .rank = key->rank, .kind = key->kind,
	                              .layer = key->layer, .cls = key->cls};
	if (i < k->n_kept) { /* an empty histogram with memory: keep it */
		struct iop_hist h = k->cell[i].hist;
		memset(&k->cell[i], 0, sizeof(k->cell[i]));
		k->cell[i].hist = h;
	} else {
		coll_cell_init(&k->cell[i]);
	}
	k->slot[s] = make_slot(key, i);
	return &k->cell[i];
}

enum iop_err coll_tick_row(struct coll_tick *k, const struct coll_key *key,
                           struct coll_cell **cell)
{
	uint32_t at = 0;
	if (k->n_slots) {
		at = probe(k, key);
		uint32_t s = k->slot[at];
		if (s) {
			*cell = &k->cell[slot_row(s)];
			return IOP_OK;
		}
	}
	if (k->n == k->cap) {
		enum iop_err e = grow(k, 0);
		if (e)
			return e;
		at = probe(k, key); /* a new index */
	}
	/* else the empty slot found: a leaf adds thousands of rows a tick,
	 * and probing again for each walked the same slots twice */
	*cell = append(k, key, at);
	return IOP_OK;
}

void coll_cell_add_call(struct coll_cell *c, uint64_t dur_ns, uint64_t bytes, bool has_bytes,
                        bool failed)
{
	coll_cell_add_call_at(c, dur_ns, iop_hist_bucket(dur_ns), bytes, has_bytes, failed);
}

enum iop_err coll_cell_merge(struct coll_cell *dst, const struct coll_cell *src)
{
	enum iop_err e = iop_hist_merge(&dst->hist, &src->hist);
	if (e)
		return e;
	dst->ops += src->ops;
	dst->bytes += src->bytes;
	dst->errors += src->errors;
	dst->time_ns += src->time_ns;
	dst->excl_ns += src->excl_ns;
	dst->busy_ns += src->busy_ns;
	dst->child_ops += src->child_ops;
	dst->child_bytes += src->child_bytes;
	dst->off_ops += src->off_ops;
	dst->consec_ops += src->consec_ops;
	dst->fwd_ops += src->fwd_ops;
	dst->stride_ops += src->stride_ops;
	for (unsigned i = 0; i < COLL_SIZE_CLASSES; i++)
		dst->size_ops[i] += src->size_ops[i];
	dst->coll_ops += src->coll_ops;
	dst->lock_ns += src->lock_ns;
	dst->wait_ns += src->wait_ns;
	dst->match_ops += src->match_ops;
	dst->last_ops += src->last_ops;
	dst->late_ns += src->late_ns;
	dst->inflight += src->inflight;
	if (src->oldest_ns && (!dst->oldest_ns || src->oldest_ns < dst->oldest_ns))
		dst->oldest_ns = src->oldest_ns;
	return IOP_OK;
}

/* Rebuilds the index over rows [0, n). */
static void reindex(struct coll_tick *k)
{
	if (k->slot)
		memset(k->slot, 0, k->n_slots * sizeof(*k->slot));
	for (uint32_t i = 0; i < k->n; i++)
		k->slot[probe(k, &k->key[i])] = make_slot(&k->key[i], i);
}

/* Into an empty tick a merge is a copy: rows in the same order, so the
 * arrays and (at the same size) the index copy whole, without a probe or
 * a histogram's bucket-by-bucket merge. The state's history takes every
 * closed tick this way. */
enum iop_err coll_tick_copy(struct coll_tick *dst, const struct coll_tick *src)
{
	if (dst->n || src->n == 0)
		return coll_tick_merge(dst, src);
	if (src->n > dst->cap || dst->n_slots == 0) {
		enum iop_err e = grow(dst, src->n);
		if (e)
			return e;
	}
	memcpy(dst->key, src->key, (size_t)src->n * sizeof(*dst->key));
	for (uint32_t i = 0; i < src->n; i++) {
		struct iop_hist h;
		if (i < dst->n_kept)
			h = dst->cell[i].hist; /* empty, with memory */
		else
			iop_hist_init(&h);
		enum iop_err e = iop_hist_merge(&h, &src->cell[i].hist);
		if (e) { /* the rows copied so far stay, as a failed merge leaves them */
			if (i >= dst->n_kept)
				iop_hist_free(&h);
			dst->n = i;
			reindex(dst);
			return e;
		}
		dst->cell[i] = src->cell[i];
		dst->cell[i].hist = h;
	}
	dst->n = src->n; /* cells past n, if any, keep their memory */
	if (dst->n_slots == src->n_slots)
		memcpy(dst->slot, src->slot, (size_t)src->n_slots * sizeof(*dst->slot));
	else
		reindex(dst);
	return IOP_OK;
}

/* Ahead of merging row i of src, the index slot of row i + 2 * AHEAD and
 * then the row of i + AHEAD are fetched: merging a leaf's thousands of
 * rows into the root's tick of hundreds of thousands waited on memory at
 * every probe. Only hints: what they read may change before it is used. */
#define AHEAD 8

/* inlined: GCC 12 drops a call whose only effect is a prefetch
 * (ipa-modref sees none) */
static inline __attribute__((always_inline)) void prefetch_row(const struct coll_tick *dst, const struct coll_tick *src, uint32_t i)
{
	uint32_t mask = dst->n_slots - 1;
	if (i + 2 * AHEAD < src->n)
		__builtin_prefetch(&dst->slot[key_hash(&src->key[i + 2 * AHEAD]) & mask]);
	if (i + AHEAD < src->n) {
		uint32_t s = dst->slot[key_hash(&src->key[i + AHEAD]) & mask];
		if (s) {
			__builtin_prefetch(&dst->key[slot_row(s)]);
			__builtin_prefetch(&dst->cell[slot_row(s)]);
		}
	}
}

/* dst += src; take: a row new to dst takes src's histogram (tick.h). */
static enum iop_err merge(struct coll_tick *dst, struct coll_tick *src, bool take)
{
	for (uint32_t i = 0; i < src->n; i++) {
		if (dst->n_slots)
			prefetch_row(dst, src, i);
		struct coll_cell *c;
		uint32_t n = dst->n;
		enum iop_err e = coll_tick_row(dst, &src->key[i], &c);
		if (e)
			return e;
		struct coll_cell *s = &src->cell[i];
		if (take && dst->n > n && !c->hist.borrowed && !s->hist.borrowed) {
			/* new, so zero: the merge would give src's cell exactly */
			struct iop_hist empty = c->hist;
			*c = *s;
			s->hist = empty;
		} else if ((e = coll_cell_merge(c, s))) {
			return e;
		}
	}
	return IOP_OK;
}

enum iop_err coll_tick_merge(struct coll_tick *dst, const struct coll_tick *src)
{
	/* src is only read when take is false */
	return merge(dst, (struct coll_tick *)src, false);
}

enum iop_err coll_tick_merge_take(struct coll_tick *dst, struct coll_tick *src)
{
	return merge(dst, src, true);
}

void coll_tick_rows_encode(const struct coll_tick *k, struct iop_wcur *c, unsigned version)
{
	for (uint32_t i = 0; i < k->n; i++) {
		const struct coll_key *key = &k->key[i];
		const struct coll_cell *cell = &k->cell[i];
		iop_put_u8(c, key->kind);
		iop_put_u8(c, (uint8_t)(key->layer << 4 | key->cls));
		iop_put_varint(c, key->rank);
		iop_put_u64le(c, key->id);
#define PUT(f) iop_put_varint(c, cell->f);
		COLL_CELL_FIELDS(PUT)
		if (version >= 3) {
			COLL_CELL_FIELDS_3(PUT)
		}
		if (version >= 4) {
			COLL_CELL_FIELDS_4(PUT)
		}
#undef PUT
		iop_hist_encode(&cell->hist, c);
	}
}

enum iop_err coll_tick_decoded_row(struct coll_tick *k, const struct coll_key *key,
                                   unsigned version, struct coll_cell **cell)
{
	if (key->kind < COLL_ROW_RANK || key->kind > (version >= 5 ? COLL_ROW_FS : COLL_ROW_SITE) ||
	    key->layer >= IOP_LAYER__COUNT || key->cls >= IOP_CLASS__COUNT)
		return IOP_ERR_MALFORMED;
	/* the caller sized the tick for every row: one probe finds a
	 * duplicate or the place of the new row */
	uint32_t s = probe(k, key);
	if (k->slot[s])
		return IOP_ERR_MALFORMED;
	*cell = append(k, key, s);
	return IOP_OK;
}

enum iop_err coll_tick_decode_hist(struct coll_tick *k, struct coll_cell *cell, struct iop_rcur *c)
{
	return iop_hist_decode_in(&cell->hist, c, k->own_hists ? NULL : arena_alloc, &k->arena);
}

enum iop_err coll_tick_decode_hist_parts(struct coll_tick *k, struct coll_cell *cell,
                                         uint64_t count, uint64_t min, uint64_t max, uint64_t sum,
                                         struct iop_rcur *c)
{
	return iop_hist_decode_parts_in(&cell->hist, count, min, max, sum, c,
	                                k->own_hists ? NULL : arena_alloc, &k->arena);
}

static enum iop_err decode_row(struct coll_tick *k, struct iop_rcur *c, unsigned version)
{
	struct coll_key key = {0};
	key.kind = iop_get_u8(c);
	uint8_t lc = iop_get_u8(c);
	key.layer = lc >> 4;
	key.cls = lc & 15;
	key.rank = (uint32_t)iop_get_varint_max(c, UINT32_MAX);
	key.id = iop_get_u64le(c);
	if (c->err)
		return c->err;
	struct coll_cell *cell;
	enum iop_err e = coll_tick_decoded_row(k, &key, version, &cell);
	if (e)
		return e;
#define GET(f) cell->f = iop_get_varint(c);
	COLL_CELL_FIELDS(GET)
	if (version >= 3) {
		COLL_CELL_FIELDS_3(GET)
	}
	if (version >= 4) {
		COLL_CELL_FIELDS_4(GET)
	}
#undef GET
	if (c->err)
		return c->err;
	return coll_tick_decode_hist(k, cell, c);
}

enum iop_err coll_tick_decode_begin(struct coll_tick *k, struct iop_rcur *c, uint32_t *n_rows)
{
	coll_tick_reset(k, 0);
	k->t = iop_get_svarint(c);
	k->tick_ns = iop_get_varint(c);
	if (!c->err && k->tick_ns == 0)
		c->err = IOP_ERR_MALFORMED;
	uint64_t n = iop_get_varint(c);
	enum iop_err e = c->err;
	if (!e && n > COLL_TICK_MAX_ROWS)
		e = IOP_ERR_OVERSIZED;
	/* Each row takes at least 12 bytes: a huge count with no bytes behind
	 * it is rejected before anything is allocated for it. */
	if (!e && n > iop_rcur_left(c) / 12)
		e = IOP_ERR_TRUNCATED;
	/* sized once for the rows announced (their bytes are there) */
	if (!e && n > k->cap)
		e = grow(k, (uint32_t)n);
	*n_rows = e ? 0 : (uint32_t)n;
	return e;
}

enum iop_err coll_tick_rows_decode(struct coll_tick *k, struct iop_rcur *c, uint32_t n,
                                   unsigned version)
{
	enum iop_err e = IOP_OK;
	for (uint32_t i = 0; !e && i < n; i++)
		e = decode_row(k, c, version);
	return e;
}

struct file_activity {
	uint64_t id, weight;
};

static int by_weight_desc(const void *a, const void *b)
{
	const struct file_activity *x = a, *y = b;
	if (x->weight != y->weight)
		return x->weight < y->weight ? 1 : -1;
	return x->id < y->id ? -1 : x->id > y->id; /* stable across collectors */
}

static void swap_fa(struct file_activity *a, struct file_activity *b)
{
	struct file_activity t = *a;
	*a = *b;
	*b = t;
}

/* Puts the k first of v in by_weight_desc's order (a total order: ids are
 * unique here) in v[0, k), in any order: the same set a full sort would
 * put there, without sorting 100 000 files to keep 2 047. */
static void select_top(struct file_activity *v, uint32_t n, uint32_t k)
{
	uint32_t lo = 0, hi = n; /* the k-th lies in [lo, hi) */
	while (hi - lo > 16) {
		uint32_t mid = lo + (hi - lo) / 2;
		/* median of three to v[lo] as the pivot */
		if (by_weight_desc(&v[mid], &v[lo]) < 0)
			swap_fa(&v[mid], &v[lo]);
		if (by_weight_desc(&v[hi - 1], &v[lo]) < 0)
			swap_fa(&v[hi - 1], &v[lo]);
		if (by_weight_desc(&v[hi - 1], &v[mid]) < 0)
			swap_fa(&v[hi - 1], &v[mid]);
		swap_fa(&v[lo], &v[mid]);
		struct file_activity pivot = v[lo];
		uint32_t store = lo + 1;
		for (uint32_t i = lo + 1; i < hi; i++)
			if (by_weight_desc(&v[i], &pivot) < 0)
				swap_fa(&v[i], &v[store++]);
		swap_fa(&v[lo], &v[store - 1]); /* the pivot at its place */
		uint32_t p = store - 1;
		if (p == k)
			return;
		if (p < k)
			lo = p + 1;
		else
			hi = p;
	}
	qsort(v + lo, hi - lo, sizeof(*v), by_weight_desc);
}

static int by_id(const void *a, const void *b)
{
	const struct file_activity *x = a, *y = b;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* A FILE row's file and weight, sorted by id to sum a file's rows. */
struct file_row {
	uint64_t id, weight;
	uint32_t row; /* its index in the tick */
};

#define RADIX_BITS   11
#define RADIX_PASSES ((64 + RADIX_BITS - 1) / RADIX_BITS)

/* Sorts v[0, n) by id with tmp[0, n) as room (LSD radix: the root sorts
 * a quarter of a million rows a tick, and qsort's comparisons were 5 % of
 * its time); returns whichever of the two holds the result. A pass whose
 * digit every id shares is skipped. */
static struct file_row *sort_by_id(struct file_row *v, struct file_row *tmp, uint32_t n)
{
	uint32_t count[RADIX_PASSES][1u << RADIX_BITS];
	memset(count, 0, sizeof(count));
	for (uint32_t i = 0; i < n; i++)
		for (unsigned p = 0; p < RADIX_PASSES; p++)
			count[p][(v[i].id >> (p * RADIX_BITS)) & ((1u << RADIX_BITS) - 1)]++;
	for (unsigned p = 0; p < RADIX_PASSES && n; p++) {
		unsigned shift = p * RADIX_BITS;
		uint32_t *at = count[p];
		if (at[(v[0].id >> shift) & ((1u << RADIX_BITS) - 1)] == n)
			continue;
		for (uint32_t d = 0, sum = 0; d < (1u << RADIX_BITS); d++) {
			uint32_t c = at[d];
			at[d] = sum;
			sum += c;
		}
		for (uint32_t i = 0; i < n; i++)
			tmp[at[(v[i].id >> shift) & ((1u << RADIX_BITS) - 1)]++] = v[i];
		struct file_row *t = v;
		v = tmp;
		tmp = t;
	}
	return v;
}

/* Ahead of folding row i, the histogram of row i + 2 * AHEAD and then the
 * first buckets of row i + AHEAD are fetched: the root folds a quarter of
 * a million rows whose buckets are cold. */
static inline __attribute__((always_inline)) void prefetch_fold(const struct coll_tick *k,
                                                                uint32_t i)
{
	if (i + 2 * AHEAD < k->n)
		__builtin_prefetch(&k->cell[i + 2 * AHEAD].hist);
	if (i + AHEAD < k->n && k->cell[i + AHEAD].hist.bucket) {
		const uint32_t *b = k->cell[i + AHEAD].hist.bucket;
		for (unsigned line = 0; line < 4; line++)
			__builtin_prefetch(b + line * 16);
	}
}

enum iop_err coll_tick_fold_plan(const struct coll_tick *k, uint32_t max_files, uint8_t **kept)
{
	*kept = NULL;
	/* One entry per FILE row; a file with several (layer, class) rows
	 * appears several times and its weight is summed after sorting by id. */
	uint32_t file_rows = 0;
	for (uint32_t i = 0; i < k->n; i++)
		file_rows += k->key[i].kind == COLL_ROW_FILE;
	if (max_files == 0 || file_rows <= max_files)
		return IOP_OK; /* fewer rows than the cap: fewer files too */
	/* rows[0, file_rows), room to sort them */
	struct file_row *rows = malloc(2 * (size_t)file_rows * sizeof(*rows));
	struct file_activity *v = malloc((size_t)file_rows * sizeof(*v));
	if (!rows || !v) {
		free(rows);
		free(v);
		return IOP_ERR_NOMEM;
	}
	uint32_t n = 0;
	for (uint32_t i = 0; i < k->n; i++)
		if (k->key[i].kind == COLL_ROW_FILE && k->key[i].id != COLL_ID_OTHER)
			rows[n++] = (struct file_row){k->key[i].id, k->cell[i].ops + k->cell[i].bytes / 4096 + k->cell[i].inflight, i};
	const struct file_row *sorted = sort_by_id(rows, rows + file_rows, n);
	uint32_t files = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (files && v[files - 1].id == sorted[i].id)
			v[files - 1].weight += sorted[i].weight;
		else
			v[files++] = (struct file_activity){sorted[i].id, sorted[i].weight};
	}
	enum iop_err e = IOP_OK;
	if (files > max_files && !(*kept = calloc(k->n ? k->n : 1, 1)))
		e = IOP_ERR_NOMEM;
	if (*kept) {
		uint32_t keep = max_files - 1; /* the "other" row takes the last place */
		select_top(v, files, keep);
		qsort(v, keep, sizeof(*v), by_id);
		/* the rows of the files kept: both lists in id order, walked once */
		for (uint32_t i = 0, j = 0; i < n && j < keep; i++) {
			while (j < keep && v[j].id < sorted[i].id)
				j++;
			if (j < keep && v[j].id == sorted[i].id)
				(*kept)[sorted[i].row] = 1;
		}
	}
	free(rows);
	free(v);
	return e;
}

static void fold_firsts(const struct coll_tick *k, const uint8_t *kept, uint8_t kind,
                        uint32_t first[IOP_LAYER__COUNT][IOP_CLASS__COUNT])
{
	memset(first, 0xff, sizeof(uint32_t) * IOP_LAYER__COUNT * IOP_CLASS__COUNT);
	for (uint32_t i = k->n; i-- > 0;)
		if (k->key[i].kind == kind && !kept[i])
			first[k->key[i].layer][k->key[i].cls] = i;
}

void coll_tick_fold_others(const struct coll_tick *k, const uint8_t *kept,
                           uint32_t first[IOP_LAYER__COUNT][IOP_CLASS__COUNT])
{
	fold_firsts(k, kept, COLL_ROW_FILE, first);
}

void coll_tick_fold_apply(struct coll_tick *k, const uint8_t *kept)
{
	coll_tick_fold_kind(k, kept, COLL_ROW_FILE);
}

void coll_tick_fold_kind(struct coll_tick *k, const uint8_t *kept, uint8_t kind)
{
	/* In place, rows keeping their order (as if the tick were built again
	 * with the folded keys): a folded row becomes its (layer, class)'s
	 * "other" row where the first of them stood (coll_tick_fold_others),
	 * or merges into it. A row whose merge fails (NOMEM, a full bucket:
	 * the merge then changes nothing) stays a row of its own, so totals
	 * are kept either way. */
	uint32_t first[IOP_LAYER__COUNT][IOP_CLASS__COUNT];
	fold_firsts(k, kept, kind, first);
	uint32_t other[IOP_LAYER__COUNT][IOP_CLASS__COUNT] = {{0}}; /* where it went */
	/* Cells [w, i) are spare: rows merged away, their histograms emptied
	 * but keeping their memory for the next rows in these cells (the
	 * root folds a quarter of a million rows a tick; freeing them and
	 * allocating them again the next tick was a tenth of its time). A
	 * kept row swaps places with the first spare cell. */
	uint32_t w = 0;
	for (uint32_t i = 0; i < k->n; i++) {
		prefetch_fold(k, i);
		struct coll_key key = k->key[i];
		if (key.kind == kind && !kept[i]) {
			uint32_t *o = &other[key.layer][key.cls];
			if (i == first[key.layer][key.cls]) {
				key.id = COLL_ID_OTHER;
				*o = w;
			} else if (coll_cell_merge(&k->cell[*o], &k->cell[i]) == IOP_OK) {
				iop_hist_reset(&k->cell[i].hist);
				continue;
			}
		}
		k->key[w] = key;
		if (w != i) {
			struct coll_cell spare = k->cell[w];
			k->cell[w] = k->cell[i];
			k->cell[i] = spare;
		}
		w++;
	}
	if (k->n_kept < k->n)
		k->n_kept = k->n;
	k->n = w;
	reindex(k);
}

enum iop_err coll_tick_fold_files(struct coll_tick *k, uint32_t max_files)
{
	uint8_t *kept;
	enum iop_err e = coll_tick_fold_plan(k, max_files, &kept);
	if (kept)
		coll_tick_fold_apply(k, kept);
	free(kept);
	return e;
}

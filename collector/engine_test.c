/* The aggregation engine: tick rows and their encoding, deltas between
 * collectors, the leaf's intake of real frames (from the workload
 * generator, built as the shim builds them), the root and the window
 * state with its history tiers. */
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctr_cols.h"
#include "delta.h"
#include "frame.h"
#include "hash.h"
#include "leaf.h"
#include "rank_dist.h"
#include "rec_view.h"
#include "root.h"
#include "state.h"
#include "summary.h"
#include "workload.h"

#define SEC   1000000000ull
#define T0    (1700000000ull * SEC)
#define JOB   0x1234abcdull

static struct iop_key test_key(uint8_t v)
{
	struct iop_key k;
	memset(k.b, v, sizeof k.b);
	return k;
}

static void fill_cell(struct coll_cell *c, uint64_t seed)
{
	for (int i = 0; i < 5; i++)
		coll_cell_add_call(c, 1000 * (seed + i), 4096 * (seed + 1), true, i == 3);
	c->excl_ns = seed * 7;
	c->busy_ns = seed * 11;
	c->child_ops = seed;
	c->off_ops = 9;
	c->consec_ops = 2;
	c->fwd_ops = seed % 4;
	c->stride_ops = 3;
	c->lock_ns = 777;
	c->inflight = seed % 3;
	c->oldest_ns = seed ? T0 + seed : 0;
}

static void make_tick(struct coll_tick *t, unsigned rows)
{
	coll_tick_init(t, 1700000000, SEC);
	for (unsigned i = 0; i < rows; i++) {
		struct coll_key k = i % 2 ? coll_key_rank(i, i % 4, i % 3) : coll_key_file(0x1000 + i, i % 4, i % 3);
		struct coll_cell *c;
		assert_int_equal(coll_tick_row(t, &k, &c), IOP_OK);
		fill_cell(c, i + 1);
	}
}

/* Every field the same, and the histograms' canonical encodings. */
static void assert_cells_equal(const struct coll_cell *a, const struct coll_cell *b)
{
#define SAME(f) assert_int_equal(a->f, b->f);
	COLL_CELL_FIELDS(SAME)
	COLL_CELL_FIELDS_3(SAME)
	COLL_CELL_FIELDS_4(SAME)
#undef SAME
	static uint8_t ea[16384], eb[16384];
	struct iop_wcur wa = iop_wcur_make(ea, sizeof ea), wb = iop_wcur_make(eb, sizeof eb);
	iop_hist_encode(&a->hist, &wa);
	iop_hist_encode(&b->hist, &wb);
	assert_int_equal(wa.err, IOP_OK);
	assert_int_equal(wa.p - ea, wb.p - eb);
	assert_memory_equal(ea, eb, (size_t)(wa.p - ea));
}

/* a holds b's rows (in any order) and no others, each equal. */
static void assert_ticks_equal(const struct coll_tick *a, const struct coll_tick *b)
{
	assert_int_equal(a->t, b->t);
	assert_int_equal(a->tick_ns, b->tick_ns);
	assert_int_equal(a->n, b->n);
	for (uint32_t i = 0; i < b->n; i++) {
		const struct coll_cell *c = coll_tick_find(a, &b->key[i]);
		assert_non_null(c);
		assert_cells_equal(c, &b->cell[i]);
	}
}

/* make_tick's rows and every kind of row and histogram the encodings tell
 * apart (tick_cols.h): node and FS rows; histograms empty, of one call,
 * of the row's calls (count and sum as ops and time) and not; exclusive
 * time above the inclusive; waits. */
static void make_varied_tick(struct coll_tick *t, unsigned rows)
{
	make_tick(t, rows);
	for (unsigned i = 0; i < t->n; i++) {
		struct coll_cell *c = &t->cell[i];
		if (i % 5 == 1)
			iop_hist_reset(&c->hist);
		if (i % 5 == 2)
			(void)iop_hist_record(&c->hist, 123456789); /* count 6 of 5 calls */
		if (i % 7 == 3)
			c->excl_ns = c->time_ns + 5;
		c->wait_ns = i * 3;
		c->match_ops = i % 4;
		c->last_ops = i % 2;
		c->late_ns = i * 1000;
		c->child_bytes = i * 4096;
		c->size_ops[i % COLL_SIZE_CLASSES] = i;
	}
	struct coll_key extra[] = {coll_key_node(3, 1, 1), coll_key_fs(UINT64_C(0xfeedfacecafebeef), 1, 2),
	                           coll_key_site(UINT64_MAX - 1, 0, 1), coll_key_layer(2, 0)};
	for (size_t j = 0; j < sizeof extra / sizeof extra[0]; j++) {
		struct coll_cell *c;
		assert_int_equal(coll_tick_row(t, &extra[j], &c), IOP_OK);
		coll_cell_add_call(c, 777 + j * 1000000, 512, true, false); /* one call */
	}
}

static void tick_round_trip(void **state)
{
	(void)state;
	struct coll_tick t, back;
	make_varied_tick(&t, 300);
	static uint8_t buf[1 << 20];
	coll_tick_init(&back, 0, SEC);
	/* this version's layout (by column) and the rows of version 5 */
	for (unsigned v = 5; v <= COLL_TICK_CELL_VERSION; v++) {
		struct iop_wcur wv = iop_wcur_make(buf, sizeof buf);
		coll_tick_encode_v(&t, &wv, v);
		assert_int_equal(wv.err, IOP_OK);
		struct iop_rcur rv = iop_rcur_make(buf, (size_t)(wv.p - buf));
		assert_int_equal(coll_tick_decode_v(&back, &rv, v), IOP_OK);
		assert_int_equal(iop_rcur_left(&rv), 0);
		assert_ticks_equal(&back, &t);
	}
	struct iop_wcur w = iop_wcur_make(buf, sizeof buf);
	coll_tick_encode(&t, &w);
	assert_int_equal(w.err, IOP_OK);
	size_t len = (size_t)(w.p - buf);
	struct iop_rcur r = iop_rcur_make(buf, len);
	assert_int_equal(coll_tick_decode(&back, &r), IOP_OK);
	assert_ticks_equal(&back, &t);
	/* every strict prefix fails cleanly and leaves the tick empty */
	for (size_t cut = 0; cut < len; cut += 1 + cut / 64) {
		struct iop_rcur rc = iop_rcur_make(buf, cut);
		assert_int_not_equal(coll_tick_decode(&back, &rc), IOP_OK);
		assert_int_equal(back.n, 0);
	}
	coll_tick_free(&t);
	coll_tick_free(&back);
}

static void tick_decode_rejects_duplicates(void **state)
{
	(void)state;
	struct coll_tick t, back;
	make_tick(&t, 1);
	uint8_t one[2048], buf[4096];
	/* version 5: rows one after another, one of them twice */
	struct iop_wcur w = iop_wcur_make(one, sizeof one);
	coll_tick_encode_v(&t, &w, 5);
	struct iop_rcur r = iop_rcur_make(one, (size_t)(w.p - one));
	(void)iop_get_svarint(&r); /* t, tick length, row count */
	(void)iop_get_varint(&r);
	(void)iop_get_varint(&r);
	size_t row = (size_t)(r.end - r.p);
	struct iop_wcur two = iop_wcur_make(buf, sizeof buf);
	iop_put_svarint(&two, t.t);
	iop_put_varint(&two, SEC);
	iop_put_varint(&two, 2);
	iop_put_bytes(&two, r.p, row); /* the same row twice */
	iop_put_bytes(&two, r.p, row);
	coll_tick_init(&back, 0, SEC);
	struct iop_rcur in = iop_rcur_make(buf, (size_t)(two.p - buf));
	assert_int_equal(coll_tick_decode_v(&back, &in, 5), IOP_ERR_MALFORMED);
	assert_int_equal(back.n, 0);
	coll_tick_free(&t);

	/* by column: ranks 1 and 2 made both 1 in the rank column (the
	 * third, after kind and layer-class); then a column one byte longer
	 * than its rows */
	coll_tick_init(&t, 5, SEC);
	struct coll_cell *c;
	for (uint32_t rank = 1; rank <= 2; rank++) {
		struct coll_key k = coll_key_rank(rank, 1, 1);
		assert_int_equal(coll_tick_row(&t, &k, &c), IOP_OK);
		coll_cell_add_call(c, 1000, 10, true, false);
	}
	w = iop_wcur_make(buf, sizeof buf);
	coll_tick_encode(&t, &w);
	size_t len = (size_t)(w.p - buf);
	r = iop_rcur_make(buf, len);
	(void)iop_get_svarint(&r);
	(void)iop_get_varint(&r);
	assert_int_equal(iop_get_varint(&r), 2);
	for (int col = 0; col < 2; col++)
		(void)iop_get_bytes(&r, iop_get_u32le(&r));
	assert_int_equal(iop_get_u32le(&r), 2);
	uint8_t *ranks = buf + (r.p - buf);
	assert_int_equal(ranks[0], 1);
	assert_int_equal(ranks[1], 2);
	in = iop_rcur_make(buf, len);
	assert_int_equal(coll_tick_decode(&back, &in), IOP_OK);
	assert_int_equal(back.n, 2);
	ranks[1] = 1;
	in = iop_rcur_make(buf, len);
	assert_int_equal(coll_tick_decode(&back, &in), IOP_ERR_MALFORMED);
	assert_int_equal(back.n, 0);
	ranks[1] = 2;
	/* the rank column's length 3, a byte inserted after its two */
	memmove(ranks + 3, ranks + 2, len - (size_t)(ranks + 2 - buf));
	ranks[2] = 0;
	iop_store_u32le(ranks - 4, 3);
	in = iop_rcur_make(buf, len + 1);
	assert_int_equal(coll_tick_decode(&back, &in), IOP_ERR_MALFORMED);
	assert_int_equal(back.n, 0);
	coll_tick_free(&t);
	coll_tick_free(&back);
}

static void fold_keeps_totals(void **state)
{
	(void)state;
	struct coll_tick t;
	coll_tick_init(&t, 5, SEC);
	uint64_t ops = 0;
	for (unsigned f = 0; f < 10; f++) {
		struct coll_key k = coll_key_file(100 + f, IOP_LAYER_POSIX, IOP_CLASS_WRITE);
		struct coll_cell *c;
		assert_int_equal(coll_tick_row(&t, &k, &c), IOP_OK);
		for (unsigned i = 0; i <= f; i++)
			coll_cell_add_call(c, 100, 10, true, false);
		ops += f + 1;
	}
	struct coll_key lk = coll_key_layer(IOP_LAYER_POSIX, IOP_CLASS_WRITE);
	struct coll_cell *lc;
	assert_int_equal(coll_tick_row(&t, &lk, &lc), IOP_OK);
	assert_int_equal(coll_tick_fold_files(&t, 4), IOP_OK);
	uint64_t files = 0, sum = 0;
	for (uint32_t i = 0; i < t.n; i++) {
		if (t.key[i].kind != COLL_ROW_FILE)
			continue;
		files++;
		sum += t.cell[i].ops;
	}
	assert_int_equal(files, 4);
	assert_int_equal(sum, ops);
	struct coll_key other = coll_key_file(COLL_ID_OTHER, IOP_LAYER_POSIX, IOP_CLASS_WRITE);
	assert_int_equal(coll_tick_find(&t, &other)->ops, 1 + 2 + 3 + 4 + 5 + 6 + 7);
	struct coll_key top = coll_key_file(109, IOP_LAYER_POSIX, IOP_CLASS_WRITE);
	assert_int_equal(coll_tick_find(&t, &top)->ops, 10);
	assert_non_null(coll_tick_find(&t, &lk));
	coll_tick_free(&t);
}

/* The fold against a plain model of it: random 64-bit ids (every radix
 * digit differs), files with rows in several (layer, class) pairs, weights
 * with ties, rows of other kinds between them; then the same tick reused
 * (its cells keep the folded rows' histogram memory) gives the same again. */
struct fold_ref {
	uint64_t id, weight;
};

static int fold_ref_order(const void *a, const void *b)
{
	const struct fold_ref *x = a, *y = b;
	if (x->weight != y->weight)
		return x->weight < y->weight ? 1 : -1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static uint64_t fold_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void fold_fill(struct coll_tick *t, uint64_t *ids, unsigned n_files)
{
	uint64_t s = 88172645463325252ull;
	for (unsigned i = 0; i < 3 * n_files; i++) {
		unsigned f = (unsigned)(fold_rand(&s) % n_files), lc = (unsigned)(fold_rand(&s) % 3);
		struct coll_key k = coll_key_file(ids[f], IOP_LAYER_POSIX + lc % 2, IOP_CLASS_READ + lc / 2);
		if (i % 7 == 0)
			k = coll_key_rank(i % 13, IOP_LAYER_POSIX, IOP_CLASS_WRITE);
		struct coll_cell *c;
		assert_int_equal(coll_tick_row(t, &k, &c), IOP_OK);
		coll_cell_add_call(c, 100 + fold_rand(&s) % 5000, 4096 * (fold_rand(&s) % 3), true, false);
	}
}

static void fold_matches_model(void **state)
{
	(void)state;
	enum { FILES = 1500, MAX = 100 };
	static uint64_t ids[FILES];
	uint64_t s = 0x9e3779b97f4a7c15ull;
	for (unsigned f = 0; f < FILES; f++)
		ids[f] = fold_rand(&s);
	struct coll_tick t, before;
	coll_tick_init(&t, 5, SEC);
	for (int round = 0; round < 2; round++) {
		coll_tick_reset(&t, 5);
		fold_fill(&t, ids, FILES);
		coll_tick_init(&before, 5, SEC);
		assert_int_equal(coll_tick_copy(&before, &t), IOP_OK);
		/* the model: weights summed per file, the MAX - 1 first kept */
		static struct fold_ref ref[FILES];
		unsigned n = 0;
		for (uint32_t i = 0; i < before.n; i++) {
			if (before.key[i].kind != COLL_ROW_FILE)
				continue;
			const struct coll_cell *c = &before.cell[i];
			uint64_t w = c->ops + c->bytes / 4096 + c->inflight;
			unsigned j = 0;
			while (j < n && ref[j].id != before.key[i].id)
				j++;
			if (j == n)
				ref[n++] = (struct fold_ref){before.key[i].id, 0};
			ref[j].weight += w;
		}
		qsort(ref, n, sizeof(*ref), fold_ref_order);
		assert_int_equal(coll_tick_fold_files(&t, MAX), IOP_OK);
		/* kept rows in their order, unchanged; the others summed per pair */
		uint64_t other_ops[IOP_LAYER__COUNT][IOP_CLASS__COUNT] = {{0}};
		uint64_t other_count[IOP_LAYER__COUNT][IOP_CLASS__COUNT] = {{0}};
		uint32_t w = 0;
		for (uint32_t i = 0; i < before.n; i++) {
			const struct coll_key *k = &before.key[i];
			bool keep = k->kind != COLL_ROW_FILE;
			for (unsigned j = 0; !keep && j < MAX - 1; j++)
				keep = ref[j].id == k->id;
			if (!keep) {
				other_ops[k->layer][k->cls] += before.cell[i].ops;
				other_count[k->layer][k->cls] += before.cell[i].hist.count;
				continue;
			}
			while (w < t.n && t.key[w].id == COLL_ID_OTHER)
				w++;
			assert_true(w < t.n);
			assert_true(t.key[w].id == k->id && t.key[w].rank == k->rank &&
			            t.key[w].kind == k->kind && t.key[w].layer == k->layer &&
			            t.key[w].cls == k->cls);
			assert_int_equal(t.cell[w].ops, before.cell[i].ops);
			assert_int_equal(t.cell[w].hist.count, before.cell[i].hist.count);
			assert_int_equal(iop_hist_quantile(&t.cell[w].hist, 0.5),
			                 iop_hist_quantile(&before.cell[i].hist, 0.5));
			w++;
		}
		for (unsigned l = 0; l < IOP_LAYER__COUNT; l++)
			for (unsigned c = 0; c < IOP_CLASS__COUNT; c++) {
				struct coll_key ok = coll_key_file(COLL_ID_OTHER, l, c);
				const struct coll_cell *oc = coll_tick_find(&t, &ok);
				assert_int_equal(oc ? oc->ops : 0, other_ops[l][c]);
				assert_int_equal(oc ? oc->hist.count : 0, other_count[l][c]);
			}
		coll_tick_free(&before);
	}
	coll_tick_free(&t);
}

/* coll_tick_merge_take gives what coll_tick_merge gives (the same bytes
 * encoded), into an empty tick and into one with rows of its own, with
 * src's histograms decoded into memory of their own or the arena's. */
static void merge_take_is_merge(void **state)
{
	(void)state;
	for (int own = 0; own < 2; own++)
		for (int prefilled = 0; prefilled < 2; prefilled++) {
			struct coll_tick src, a, b;
			make_tick(&src, 60);
			static uint8_t buf[1 << 16], ea[1 << 16], eb[1 << 16];
			struct iop_wcur w = iop_wcur_make(buf, sizeof buf);
			coll_tick_encode(&src, &w);
			coll_tick_free(&src);
			coll_tick_init(&src, 0, SEC);
			src.own_hists = own;
			struct iop_rcur r = iop_rcur_make(buf, (size_t)(w.p - buf));
			assert_int_equal(coll_tick_decode(&src, &r), IOP_OK);
			make_tick(&a, prefilled ? 30 : 0);
			make_tick(&b, prefilled ? 30 : 0);
			assert_int_equal(coll_tick_merge(&a, &src), IOP_OK);
			assert_int_equal(coll_tick_merge_take(&b, &src), IOP_OK);
			struct iop_wcur wa = iop_wcur_make(ea, sizeof ea), wb = iop_wcur_make(eb, sizeof eb);
			coll_tick_encode(&a, &wa);
			coll_tick_encode(&b, &wb);
			assert_int_equal(wa.err, IOP_OK);
			assert_int_equal(wa.p - ea, wb.p - eb);
			assert_memory_equal(ea, eb, (size_t)(wa.p - ea));
			coll_tick_reset(&src, 0); /* as its owner does after */
			coll_tick_free(&src);
			coll_tick_free(&a);
			coll_tick_free(&b);
		}
}

/* Counters after each other (version 5) and by column (6) read back the
 * same; by column, a column one byte longer than its counters, a layer
 * out of range, and a count beyond the columns' bytes are refused. */
static void counters_lists(void **state)
{
	(void)state;
	enum { N = 100 };
	struct coll_counter v[N];
	for (uint32_t i = 0; i < N; i++)
		v[i] = (struct coll_counter){.file = UINT64_C(0x9e3779b97f4a7c15) * (i + 1),
		                             .ops = i * 3, .bytes = (uint64_t)i << 33, .time_ns = i * 1000003,
		                             .errors = i % 3, .pat = {i, i / 2, 7, UINT32_MAX},
		                             .rank = i % 16, .node = 0xabcd0000u + i % 2, .pid = 4000 + i % 16,
		                             .image = i % 2, .layer = (uint8_t)(i % IOP_LAYER__COUNT),
		                             .cls = (uint8_t)(i % IOP_CLASS__COUNT)};
	static uint8_t buf[1 << 16];
	for (unsigned ver = 5; ver <= 6; ver++) {
		struct iop_wcur w = iop_wcur_make(buf, sizeof buf);
		coll_counters_encode(v, N, &w, ver);
		assert_int_equal(w.err, IOP_OK);
		struct iop_rcur r = iop_rcur_make(buf, (size_t)(w.p - buf));
		struct coll_ctr_reader rd;
		assert_int_equal(coll_ctr_reader_open(&rd, &r, N, ver), IOP_OK);
		assert_int_equal(rd.n, N);
		for (uint32_t i = 0; i < N; i++) {
			struct coll_counter k;
			assert_int_equal(coll_ctr_reader_next(&rd, &k), IOP_OK);
			assert_int_equal(k.file, v[i].file);
			assert_int_equal(k.ops, v[i].ops);
			assert_int_equal(k.bytes, v[i].bytes);
			assert_int_equal(k.time_ns, v[i].time_ns);
			assert_int_equal(k.errors, v[i].errors);
			assert_memory_equal(k.pat, v[i].pat, sizeof k.pat);
			assert_int_equal(k.rank, v[i].rank);
			assert_int_equal(k.node, v[i].node);
			assert_int_equal(k.pid, v[i].pid);
			assert_int_equal(k.image, v[i].image);
			assert_int_equal(k.layer, v[i].layer);
			assert_int_equal(k.cls, v[i].cls);
		}
		assert_int_equal(coll_ctr_reader_done(&rd), IOP_OK);
		assert_int_equal(iop_rcur_left(&r), 0);
	}
	/* by column: the rank column (the first, after the count's one byte)
	 * one byte longer */
	struct iop_wcur w = iop_wcur_make(buf, sizeof buf);
	coll_counters_encode(v, N, &w, 6);
	size_t len = (size_t)(w.p - buf);
	assert_int_equal(iop_load_u32le(buf + 1), N);
	memmove(buf + 5 + N + 1, buf + 5 + N, len - 5 - N);
	buf[5 + N] = 0;
	iop_store_u32le(buf + 1, N + 1);
	struct iop_rcur r = iop_rcur_make(buf, len + 1);
	struct coll_ctr_reader rd;
	assert_int_equal(coll_ctr_reader_open(&rd, &r, N, 6), IOP_OK);
	for (uint32_t i = 0; i < N; i++) {
		struct coll_counter k;
		assert_int_equal(coll_ctr_reader_next(&rd, &k), IOP_OK);
	}
	assert_int_equal(coll_ctr_reader_done(&rd), IOP_ERR_MALFORMED);
	/* a layer out of range */
	v[7].layer = 15;
	w = iop_wcur_make(buf, sizeof buf);
	coll_counters_encode(v, N, &w, 6);
	r = iop_rcur_make(buf, (size_t)(w.p - buf));
	assert_int_equal(coll_ctr_reader_open(&rd, &r, N, 6), IOP_OK);
	enum iop_err e = IOP_OK;
	for (uint32_t i = 0; !e && i < N; i++) {
		struct coll_counter k;
		e = coll_ctr_reader_next(&rd, &k);
	}
	assert_int_equal(e, IOP_ERR_MALFORMED);
	/* more counters announced than the columns hold */
	v[7].layer = 1;
	w = iop_wcur_make(buf, sizeof buf);
	coll_counters_encode(v, N, &w, 6);
	buf[0] = N + 1;
	r = iop_rcur_make(buf, (size_t)(w.p - buf));
	assert_int_equal(coll_ctr_reader_open(&rd, &r, N + 1, 6), IOP_OK);
	e = IOP_OK;
	for (uint32_t i = 0; !e && i < N + 1; i++) {
		struct coll_counter k;
		e = coll_ctr_reader_next(&rd, &k);
	}
	assert_int_equal(e, IOP_ERR_TRUNCATED);
}

static void delta_message(void **state)
{
	(void)state;
	struct coll_delta d, back;
	coll_delta_init(&d, 1700000000, SEC);
	coll_tick_free(&d.tick);
	make_tick(&d.tick, 50);
	assert_int_equal(coll_delta_add_name(&d, 0x1001, IOP_NAME_FILE, "/scratch/a", 10), IOP_OK);
	struct coll_counter c = {.file = 0x1001, .ops = 3, .bytes = 12288, .time_ns = 500, .rank = 7,
	                         .layer = IOP_LAYER_POSIX, .cls = IOP_CLASS_WRITE};
	assert_int_equal(coll_delta_add_counter(&d, &c), IOP_OK);
	struct coll_proc p = {.t_ns = T0, .rank = 7, .node = 99, .pid = 1234, .state = COLL_PROC_JOINED};
	assert_int_equal(coll_delta_add_proc(&d, &p), IOP_OK);
	d.mon.events = 42;
	d.mon.dropped = 2;
	d.dist = (struct coll_rank_dist){.t = 1700000000, .ranks = 2048, .lat_ranks = 2000,
	                                 .bytes = {1, 2, 3, 4, 5, 6}, .p99_ns = {10, 20, 30, 40, 50, 60}};
	struct iop_key key = test_key(7), other = test_key(8);
	struct coll_delta_hdr h = {.job_id = JOB, .sender = 3, .seq = 9}, hb;
	uint8_t *buf = NULL;
	size_t cap = 0, len;
	assert_int_equal(coll_delta_encode(&d, &h, &key, &buf, &cap, &len), IOP_OK);
	coll_delta_init(&back, 0, SEC);
	assert_int_equal(coll_delta_decode(&back, &hb, buf, len, &key, JOB), IOP_OK);
	assert_int_equal(hb.seq, 9);
	assert_int_equal(back.tick.n, 50);
	assert_int_equal(back.n_names, 1);
	assert_string_equal(back.names[0].text, "/scratch/a");
	assert_int_equal(back.ctr.n, 1);
	assert_int_equal(back.ctr.v[0].bytes, 12288);
	assert_int_equal(back.ctr.v[0].rank, 7);
	assert_int_equal(back.n_procs, 1);
	assert_int_equal(back.procs[0].pid, 1234);
	assert_int_equal(back.mon.events, 42);
	assert_memory_equal(&back.dist, &d.dist, sizeof d.dist);
	/* recordings' DELTAs of delta versions 4 (before the distribution)
	 * and 5 (rows one after another): each decodes to the same tick */
	for (unsigned v = 4; v <= 5; v++) {
		struct coll_delta old;
		static uint8_t body[1 << 16];
		struct iop_wcur wb = iop_wcur_make(body, sizeof body);
		coll_delta_encode_body_v(&d, &wb, v);
		assert_int_equal(wb.err, IOP_OK);
		coll_delta_init(&old, 0, SEC);
		struct iop_rcur rc = iop_rcur_make(body, (size_t)(wb.p - body));
		assert_int_equal(coll_delta_decode_body_v(&old, &rc, v), IOP_OK);
		assert_int_equal(iop_rcur_left(&rc), 0);
		assert_ticks_equal(&old.tick, &back.tick);
		assert_int_equal(old.ctr.n, 1);
		assert_int_equal(old.dist.ranks, v >= 5 ? d.dist.ranks : 0);
		coll_delta_free(&old);
	}
	/* a distribution out of order, or more ranks with latencies than
	 * ranks: refused */
	struct coll_rank_dist bad[2] = {d.dist, d.dist};
	bad[0].bytes[COLL_Q_MED] = 7;
	bad[1].lat_ranks = 2049;
	for (int i = 0; i < 2; i++) {
		uint8_t b[128];
		struct iop_wcur w = iop_wcur_make(b, sizeof b);
		coll_rank_dist_encode(&bad[i], &w);
		struct iop_rcur r = iop_rcur_make(b, (size_t)(w.p - b));
		struct coll_rank_dist got;
		assert_int_equal(coll_rank_dist_decode(&got, &r), IOP_ERR_MALFORMED);
		assert_int_equal(got.ranks, 0);
	}
	/* wrong key, another job, any changed byte, any prefix: refused, empty */
	assert_int_equal(coll_delta_decode(&back, &hb, buf, len, &other, JOB), IOP_ERR_BAD_MAC);
	assert_int_equal(coll_delta_decode(&back, &hb, buf, len, &key, JOB + 1), IOP_ERR_BAD_MAC);
	for (size_t i = 0; i < len; i += 7) {
		buf[i] ^= 0x10;
		assert_int_not_equal(coll_delta_decode(&back, &hb, buf, len, &key, JOB), IOP_OK);
		buf[i] ^= 0x10;
	}
	for (size_t cut = 0; cut < len; cut += 13)
		assert_int_not_equal(coll_delta_decode(&back, &hb, buf, cut, &key, JOB), IOP_OK);
	assert_int_equal(back.tick.n + back.n_names + back.ctr.n, 0);
	free(buf);
	coll_delta_free(&d);
	coll_delta_free(&back);
}

/* A message's bytes after a change, MAC'd again with the job's key: what
 * only a holder of the key could send. */
static void remac(uint8_t *buf, size_t len, const struct iop_key *key)
{
	assert_int_equal(iop_mac(key, buf, len - IOP_MAC_BYTES, buf + len - IOP_MAC_BYTES), IOP_OK);
}

/* A leaf's tick of thousands of rows goes compressed (zstd): the flag set,
 * fewer bytes than the body, and the same delta back. A compressed body
 * that is damaged, claims another length or more than the bound, or an
 * unknown flag, is refused even under a valid MAC. */
static void delta_message_compressed(void **state)
{
	(void)state;
	struct coll_delta d, back;
	coll_delta_init(&d, 1700000000, SEC);
	coll_tick_free(&d.tick);
	make_tick(&d.tick, 3000);
	struct iop_key key = test_key(7);
	struct coll_delta_hdr h = {.job_id = JOB, .sender = 3, .seq = 10}, hb;
	uint8_t *buf = NULL, *body = NULL, *body2 = NULL;
	size_t cap = 0, len, bcap = 0, blen, b2cap = 0, b2len;
	assert_int_equal(coll_delta_encode(&d, &h, &key, &buf, &cap, &len), IOP_OK);
	assert_int_equal(coll_delta_encode_body_buf(&d, SIZE_MAX, &body, &bcap, &blen), IOP_OK);
	assert_int_equal(iop_load_u16le(buf + 6), COLL_DELTA_F_ZSTD);
	assert_true(len < blen / 2);
	coll_delta_init(&back, 0, SEC);
	assert_int_equal(coll_delta_decode(&back, &hb, buf, len, &key, JOB), IOP_OK);
	assert_int_equal(hb.seq, 10);
	assert_int_equal(coll_delta_encode_body_buf(&back, SIZE_MAX, &body2, &b2cap, &b2len), IOP_OK);
	assert_int_equal(b2len, blen);
	assert_memory_equal(body, body2, blen);

	uint8_t *bad = malloc(len);
	/* the compressed bytes damaged: refused and empty, or (a literal
	 * changed: the MAC, not zstd, guards the bytes) another delta; never
	 * a crash (ASan) */
	unsigned refused = 0;
	for (size_t i = 40; i < len - IOP_MAC_BYTES; i += (len - 40) / 64) {
		memcpy(bad, buf, len);
		bad[i] ^= 0x5a;
		remac(bad, len, &key);
		if (coll_delta_decode(&back, &hb, bad, len, &key, JOB) != IOP_OK) {
			refused++;
			assert_int_equal(back.tick.n + back.n_names + back.ctr.n, 0);
		}
	}
	assert_true(refused > 0);
	/* an unknown flag */
	memcpy(bad, buf, len);
	iop_store_u16le(bad + 6, COLL_DELTA_F_ZSTD | 2);
	remac(bad, len, &key);
	assert_int_equal(coll_delta_decode(&back, &hb, bad, len, &key, JOB), IOP_ERR_MALFORMED);
	/* the flag without compression: the body is not a zstd frame */
	struct coll_delta small;
	coll_delta_init(&small, 1700000000, SEC);
	size_t slen;
	uint8_t *sbuf = NULL;
	size_t scap = 0;
	assert_int_equal(coll_delta_encode(&small, &h, &key, &sbuf, &scap, &slen), IOP_OK);
	assert_int_equal(iop_load_u16le(sbuf + 6), 0); /* too short to gain */
	iop_store_u16le(sbuf + 6, COLL_DELTA_F_ZSTD);
	remac(sbuf, slen, &key);
	assert_int_not_equal(coll_delta_decode(&back, &hb, sbuf, slen, &key, JOB), IOP_OK);
	/* a length past the bound, or one byte off the frame's */
	size_t zn = len - IOP_MAC_BYTES - 32;
	uint64_t lens[] = {(uint64_t)COLL_DELTA_Z_RATIO * zn + 1, blen + 1, blen - 1};
	for (size_t i = 0; i < sizeof lens / sizeof *lens; i++) {
		uint8_t *f = malloc(len + 16);
		memcpy(f, buf, 32);
		struct iop_wcur w = iop_wcur_make(f + 32, 16);
		iop_put_varint(&w, lens[i]);
		struct iop_rcur r = iop_rcur_make(buf + 32, len - 32);
		(void)iop_get_varint(&r);
		size_t rest = (size_t)(buf + len - r.p);
		memcpy(w.p, r.p, rest);
		size_t flen = (size_t)(w.p - f) + rest;
		remac(f, flen, &key);
		assert_int_equal(coll_delta_decode(&back, &hb, f, flen, &key, JOB), IOP_ERR_MALFORMED);
		free(f);
	}
	free(bad);
	free(buf);
	free(sbuf);
	free(body);
	free(body2);
	coll_delta_free(&d);
	coll_delta_free(&small);
	coll_delta_free(&back);
}

/* ---- leaf + root with real frames ---- */

struct pipeline {
	struct coll_leaf *leaf;
	struct coll_root *root;
	uint64_t ticks_closed;
};

static void to_root(void *arg, struct coll_delta *d)
{
	struct pipeline *p = arg;
	assert_int_equal(coll_root_delta(p->root, d), IOP_OK);
}

static void count_tick(void *arg, const struct coll_delta *d, const struct coll_state *s)
{
	(void)d;
	(void)s;
	((struct pipeline *)arg)->ticks_closed++;
}

static void pipeline_new(struct pipeline *p, uint64_t now)
{
	memset(p, 0, sizeof(*p));
	struct coll_leaf_cfg lc;
	coll_leaf_cfg_default(&lc);
	lc.job_id = JOB;
	lc.key = test_key(1);
	struct coll_root_cfg rc;
	coll_root_cfg_default(&rc, SEC);
	assert_int_equal(coll_leaf_new(&lc, now, &p->leaf), IOP_OK);
	assert_int_equal(coll_root_new(&rc, now, &p->root), IOP_OK);
}

static void pipeline_advance(struct pipeline *p, uint64_t now, bool flush)
{
	coll_leaf_advance(p->leaf, now, flush, to_root, p);
	coll_root_advance(p->root, now, flush, count_tick, p);
}

static void pipeline_free(struct pipeline *p)
{
	coll_leaf_free(p->leaf);
	coll_root_free(p->root);
}

static uint64_t total(const struct coll_state *s, unsigned layer, unsigned cls, bool bytes)
{
	uint64_t n = 0;
	for (struct coll_totals_it it = {.s = s}; coll_totals_next(&it);)
		if (it.key.layer == layer && it.key.cls == cls)
			n += bytes ? it.cell.bytes : it.cell.ops;
	return n;
}

/* A child's (empty) delta of tick t to the root, from sender. */
static void child_tick(struct coll_root *r, uint64_t sender, int64_t t)
{
	struct coll_delta d;
	coll_delta_init(&d, t, SEC);
	assert_int_equal(coll_root_delta_from(r, sender, &d), IOP_OK);
	coll_delta_free(&d);
}

/* A tick closes as soon as every child that sent the tick before it has
 * sent it, not at the end of its grace; a child that stops is waited for
 * once (the grace), then not; deltas with no sender close on the grace. */
static void root_closes_when_children_in(void **state)
{
	(void)state;
	struct pipeline p = {0};
	struct coll_root_cfg rc;
	coll_root_cfg_default(&rc, SEC);
	const uint64_t grace = rc.grace_ns, t0 = 100 * SEC + grace; /* tick 100 open first */
	assert_true(grace > SEC / 10);
	assert_int_equal(coll_root_new(&rc, t0, &p.root), IOP_OK);
	/* tick 100: from A and B (their first: nothing before to wait on) */
	child_tick(p.root, 0xa, 100);
	child_tick(p.root, 0xb, 100);
	assert_int_equal(coll_root_next_close_ns(p.root), 101 * SEC);
	coll_root_advance(p.root, 101 * SEC + SEC / 4, false, count_tick, &p);
	assert_int_equal(p.ticks_closed, 1);
	/* tick 101: A's alone waits for B ... */
	child_tick(p.root, 0xa, 101);
	assert_int_equal(coll_root_next_close_ns(p.root), 102 * SEC + grace);
	coll_root_advance(p.root, 102 * SEC + SEC / 4, false, count_tick, &p);
	assert_int_equal(p.ticks_closed, 1);
	/* ... until B's comes */
	child_tick(p.root, 0xb, 101);
	coll_root_advance(p.root, 102 * SEC + SEC / 4 + 1, false, count_tick, &p);
	assert_int_equal(p.ticks_closed, 2);
	/* tick 102: B stops. The grace is waited out once ... */
	child_tick(p.root, 0xa, 102);
	coll_root_advance(p.root, 103 * SEC + grace - 1, false, count_tick, &p);
	assert_int_equal(p.ticks_closed, 2);
	coll_root_advance(p.root, 103 * SEC + grace, false, count_tick, &p);
	assert_int_equal(p.ticks_closed, 3);
	/* ... and then A's ticks close as they come */
	child_tick(p.root, 0xa, 103);
	assert_int_equal(coll_root_next_close_ns(p.root), 104 * SEC);
	coll_root_advance(p.root, 104 * SEC + SEC / 4, false, count_tick, &p);
	assert_int_equal(p.ticks_closed, 4);
	/* B back: late for 103 (closed), in time for 104, which waits for it
	 * again once A has sent it */
	child_tick(p.root, 0xb, 103);
	child_tick(p.root, 0xa, 104);
	assert_int_equal(coll_root_next_close_ns(p.root), 105 * SEC + grace);
	child_tick(p.root, 0xb, 104);
	assert_int_equal(coll_root_next_close_ns(p.root), 105 * SEC);
	coll_root_free(p.root);

	/* no sender named: every tick waits out its grace */
	struct coll_root *r;
	assert_int_equal(coll_root_new(&rc, t0, &r), IOP_OK);
	struct coll_delta d;
	coll_delta_init(&d, 100, SEC);
	assert_int_equal(coll_root_delta(r, &d), IOP_OK);
	coll_delta_free(&d);
	assert_int_equal(coll_root_next_close_ns(r), 101 * SEC + grace);
	coll_root_free(r);
}

/* Four ranks of the mixed workload, frames fed as their time comes: the
 * state's totals are exactly the generators' counters, every event is in
 * a tick, none late. */
static void leaf_root_exact_totals(void **state)
{
	(void)state;
	enum { RANKS = 4 };
	struct iop_wl *w = calloc(RANKS, sizeof(*w));
	struct iop_key key = test_key(1);
	struct pipeline p;
	pipeline_new(&p, T0);
	static uint8_t buf[65536];
	uint64_t now = T0, events = 0; /* arrival time: the newest event sent */
	for (unsigned r = 0; r < RANKS; r++) {
		assert_true(iop_wl_init(&w[r], IOP_WL_MIXED, r, 11 + r, T0));
		w[r].job_id = JOB;
	}
	for (int round = 0; round < 400; round++) {
		for (unsigned r = 0; r < RANKS; r++) {
			if (round == 399)
				w[r].draining = true;
			size_t len;
			unsigned n;
			while (iop_wl_frame(&w[r], buf, sizeof buf, 256, &key, &len, &n) == IOP_OK) {
				uint64_t at = w[r].now_ns > now ? w[r].now_ns : now;
				assert_int_equal(coll_leaf_frame(p.leaf, buf, len, at), IOP_OK);
				events += n;
				if (!w[r].draining)
					break;
			}
			if (w[r].now_ns > now)
				now = w[r].now_ns;
		}
		/* time for the collector is what the slowest rank has reached:
		 * ranks of a real job run side by side */
		uint64_t slowest = UINT64_MAX;
		for (unsigned r = 0; r < RANKS; r++)
			if (w[r].now_ns < slowest)
				slowest = w[r].now_ns;
		pipeline_advance(&p, slowest, false);
	}
	pipeline_advance(&p, now + 10 * SEC, true);
	const struct coll_state *s = coll_root_state(p.root);
	assert_int_equal(s->mon.events, events);
	assert_int_equal(s->mon.late, 0);
	assert_int_equal(s->mon.rejected_frames, 0);
	assert_int_equal(coll_state_ranks_seen(s), RANKS);
	assert_int_equal(coll_state_ranks_live(s), 0); /* all sent FINAL */
	for (unsigned layer = 0; layer < IOP_LAYER__COUNT; layer++)
		for (unsigned cls = 0; cls < IOP_CLASS__COUNT; cls++) {
			uint64_t ops = 0, bytes = 0;
			for (unsigned r = 0; r < RANKS; r++)
				for (unsigned i = 0; i < IOP_WL_MAX_NAMES * 12; i++) {
					const struct iop_counter *k = &w[r].counters[i].k;
					if (k->ops && k->layer == layer && k->cls == cls) {
						ops += k->ops;
						bytes += k->bytes;
					}
				}
			assert_int_equal(total(s, layer, cls, false), ops);
			assert_int_equal(total(s, layer, cls, true), bytes);
		}
	/* every event is in some closed tick's LAYER rows */
	uint64_t in_ticks = 0;
	for (int64_t t = s->first_t; t <= s->last_t; t++) {
		const struct coll_tick *k = coll_state_tick(s, t);
		for (uint32_t i = 0; k && i < k->n; i++)
			if (k->key[i].kind == COLL_ROW_LAYER)
				in_ticks += k->cell[i].ops;
	}
	assert_int_equal(in_ticks, events);
	assert_true(p.ticks_closed > 2);
	/* FS rows (the leaf read this machine's mount table: the workload's
	 * absolute paths all lie on some mount): per tick, layer and class,
	 * the calls of every file (the ones folded into "other" too), each
	 * with its latency */
	uint64_t fs_ops = 0;
	for (int64_t t = s->first_t; t <= s->last_t; t++) {
		const struct coll_tick *k = coll_state_tick(s, t);
		uint64_t by[2][IOP_LAYER__COUNT][IOP_CLASS__COUNT] = {{{0}}};
		for (uint32_t i = 0; k && i < k->n; i++) {
			const struct coll_key *ky = &k->key[i];
			const struct coll_cell *c = &k->cell[i];
			if (ky->kind == COLL_ROW_FS) {
				assert_int_equal(c->hist.count, c->ops);
				fs_ops += c->ops;
			}
			if (ky->kind == COLL_ROW_FS || ky->kind == COLL_ROW_FILE)
				by[ky->kind == COLL_ROW_FS][ky->layer][ky->cls] += c->ops;
		}
		assert_memory_equal(by[0], by[1], sizeof by[0]);
	}
	assert_true(fs_ops > 0);
	for (unsigned r = 0; r < RANKS; r++)
		iop_wl_free(&w[r]);
	free(w);
	pipeline_free(&p);
}

/* A leaf killed mid-job and a new one started in its place: the shims
 * send their names and counters again (as after any refused send), and
 * the root's totals stay exact; a delta applied twice counts once. */
static void leaf_restart_keeps_totals(void **state)
{
	(void)state;
	enum { RANKS = 2 };
	struct iop_wl *w = calloc(RANKS, sizeof(*w));
	struct iop_key key = test_key(1);
	struct pipeline p;
	pipeline_new(&p, T0);
	static uint8_t buf[65536];
	uint64_t now = T0;
	for (unsigned r = 0; r < RANKS; r++) {
		assert_true(iop_wl_init(&w[r], IOP_WL_MIXED, r, 31 + r, T0));
		w[r].job_id = JOB;
	}
	for (int round = 0; round < 300; round++) {
		if (round == 150) {
			/* the leaf dies with its open ticks; a new one starts */
			coll_leaf_free(p.leaf);
			struct coll_leaf_cfg lc;
			coll_leaf_cfg_default(&lc);
			lc.job_id = JOB;
			lc.key = key;
			assert_int_equal(coll_leaf_new(&lc, now, &p.leaf), IOP_OK);
			for (unsigned r = 0; r < RANKS; r++) {
				for (uint32_t i = 0; i < w[r].n_names; i++)
					w[r].names[i].announced = false;
				for (unsigned i = 0; i < IOP_WL_MAX_NAMES * 12; i++)
					if (w[r].counters[i].k.ops)
						w[r].counters[i].dirty = true;
			}
		}
		for (unsigned r = 0; r < RANKS; r++) {
			w[r].draining = round == 299;
			size_t len;
			unsigned n;
			while (iop_wl_frame(&w[r], buf, sizeof buf, 256, &key, &len, &n) == IOP_OK) {
				uint64_t at = w[r].now_ns > now ? w[r].now_ns : now;
				assert_int_equal(coll_leaf_frame(p.leaf, buf, len, at), IOP_OK);
				if (!w[r].draining)
					break;
			}
			if (w[r].now_ns > now)
				now = w[r].now_ns;
		}
		pipeline_advance(&p, now, false);
	}
	pipeline_advance(&p, now + 10 * SEC, true);
	const struct coll_state *s = coll_root_state(p.root);
	uint64_t want_bytes = 0, want_ops = 0, got_bytes = 0, got_ops = 0;
	for (unsigned r = 0; r < RANKS; r++)
		for (unsigned i = 0; i < IOP_WL_MAX_NAMES * 12; i++) {
			want_ops += w[r].counters[i].k.ops;
			want_bytes += w[r].counters[i].k.bytes;
		}
	for (unsigned layer = 0; layer < IOP_LAYER__COUNT; layer++)
		for (unsigned cls = 0; cls < IOP_CLASS__COUNT; cls++) {
			got_ops += total(s, layer, cls, false);
			got_bytes += total(s, layer, cls, true);
		}
	assert_true(want_ops > 1000);
	assert_int_equal(got_ops, want_ops);
	assert_int_equal(got_bytes, want_bytes);

	/* the same counters once more, as a resend would bring them */
	struct coll_delta d;
	coll_delta_init(&d, s->last_t + 1, SEC);
	for (uint32_t i = 0; i < s->latest.n; i++)
		assert_int_equal(coll_delta_add_counter(&d, &s->latest.v[i]), IOP_OK);
	struct coll_state *again = (struct coll_state *)s;
	assert_int_equal(coll_state_apply(again, &d), IOP_OK);
	got_ops = got_bytes = 0;
	for (unsigned layer = 0; layer < IOP_LAYER__COUNT; layer++)
		for (unsigned cls = 0; cls < IOP_CLASS__COUNT; cls++) {
			got_ops += total(s, layer, cls, false);
			got_bytes += total(s, layer, cls, true);
		}
	assert_int_equal(got_ops, want_ops);
	assert_int_equal(got_bytes, want_bytes);
	coll_delta_free(&d);
	for (unsigned r = 0; r < RANKS; r++)
		iop_wl_free(&w[r]);
	free(w);
	pipeline_free(&p);
}

/* One frame of a small workload, for the fault cases below. */
static size_t one_frame(struct iop_wl *w, uint8_t *buf, size_t cap, const struct iop_key *key)
{
	size_t len;
	unsigned n;
	assert_int_equal(iop_wl_frame(w, buf, cap, 64, key, &len, &n), IOP_OK);
	return len;
}

static void leaf_rejects_bad_frames(void **state)
{
	(void)state;
	struct iop_wl *w = calloc(1, sizeof(*w));
	struct iop_key key = test_key(1), other = test_key(2);
	static uint8_t buf[65536], bad[65536];
	assert_true(iop_wl_init(w, IOP_WL_IOR_WRITE, 0, 5, T0));
	w->job_id = JOB;
	struct pipeline p;
	pipeline_new(&p, T0);
	size_t len = one_frame(w, buf, sizeof buf, &key);
	assert_int_equal(coll_leaf_frame(p.leaf, buf, len, T0), IOP_OK);
	/* the same frame again: a replay */
	assert_int_equal(coll_leaf_frame(p.leaf, buf, len, T0), IOP_ERR_STATE);
	/* garbage, a truncated frame, a forged one, another job's */
	memset(bad, 0xa5, 200);
	assert_int_not_equal(coll_leaf_frame(p.leaf, bad, 200, T0), IOP_OK);
	len = one_frame(w, buf, sizeof buf, &key);
	assert_int_not_equal(coll_leaf_frame(p.leaf, buf, len - 1, T0), IOP_OK);
	memcpy(bad, buf, len);
	bad[len / 2] ^= 1;
	assert_int_equal(coll_leaf_frame(p.leaf, bad, len, T0), IOP_ERR_BAD_MAC);
	w->job_id = JOB + 1;
	size_t flen = one_frame(w, bad, sizeof bad, &key);
	assert_int_equal(coll_leaf_frame(p.leaf, bad, flen, T0), IOP_ERR_BAD_MAC);
	size_t klen = one_frame(w, bad, sizeof bad, &other);
	assert_int_equal(coll_leaf_frame(p.leaf, bad, klen, T0), IOP_ERR_BAD_MAC);
	/* the good frame after all that is still accepted */
	assert_int_equal(coll_leaf_frame(p.leaf, buf, len, T0), IOP_OK);
	pipeline_advance(&p, T0 + 5 * SEC, true);
	const struct coll_state *s = coll_root_state(p.root);
	assert_int_equal(s->mon.rejected_frames, 6);
	assert_int_equal(s->mon.frames, 2);
	iop_wl_free(w);
	free(w);
	pipeline_free(&p);
}

/* Events whose tick has closed go into the oldest open tick, counted late. */
static void leaf_late_events(void **state)
{
	(void)state;
	struct iop_wl *w = calloc(1, sizeof(*w));
	struct iop_key key = test_key(1);
	static uint8_t buf[65536];
	assert_true(iop_wl_init(w, IOP_WL_IOR_WRITE, 0, 5, T0));
	w->job_id = JOB;
	struct pipeline p;
	pipeline_new(&p, T0);
	size_t len;
	unsigned n;
	assert_int_equal(iop_wl_frame(w, buf, sizeof buf, 50, &key, &len, &n), IOP_OK);
	/* arrives 5 s after its events: their ticks have closed */
	pipeline_advance(&p, T0 + 5 * SEC, false);
	assert_int_equal(coll_leaf_frame(p.leaf, buf, len, T0 + 5 * SEC), IOP_OK);
	pipeline_advance(&p, T0 + 20 * SEC, true);
	const struct coll_state *s = coll_root_state(p.root);
	assert_int_equal(s->mon.late, n);
	assert_int_equal(s->mon.events, n);
	iop_wl_free(w);
	free(w);
	pipeline_free(&p);
}

/* A process that goes silent without a FINAL frame is marked gone. */
static void leaf_gone_process(void **state)
{
	(void)state;
	struct iop_wl *w = calloc(1, sizeof(*w));
	struct iop_key key = test_key(1);
	static uint8_t buf[65536];
	assert_true(iop_wl_init(w, IOP_WL_IOR_WRITE, 3, 5, T0));
	w->job_id = JOB;
	struct pipeline p;
	pipeline_new(&p, T0);
	size_t len = one_frame(w, buf, sizeof buf, &key);
	assert_int_equal(coll_leaf_frame(p.leaf, buf, len, T0), IOP_OK);
	pipeline_advance(&p, T0 + 2 * SEC, false);
	assert_int_equal(coll_state_ranks_live(coll_root_state(p.root)), 1);
	pipeline_advance(&p, T0 + 10 * SEC, false);
	pipeline_advance(&p, T0 + 12 * SEC, false); /* the tick that says so has closed */
	const struct coll_state *s = coll_root_state(p.root);
	assert_int_equal(coll_state_ranks_live(s), 0);
	assert_int_equal(s->ranks[3].state, COLL_RANK_GONE);
	iop_wl_free(w);
	free(w);
	pipeline_free(&p);
}

/* At the end (flush), a process that has not ended is gone at once: a
 * rank killed by SIGINT sends no FINAL frame (docs/shim.md), and the job's
 * summary must not call it active. One that ended stays ended. */
static void leaf_flush_marks_gone(void **state)
{
	(void)state;
	struct iop_key key = test_key(1);
	static uint8_t buf[65536];
	struct pipeline p;
	pipeline_new(&p, T0);
	struct iop_wl *w[2];
	for (unsigned r = 0; r < 2; r++) {
		w[r] = calloc(1, sizeof(*w[r]));
		assert_true(iop_wl_init(w[r], IOP_WL_IOR_WRITE, r, 5 + r, T0));
		w[r]->job_id = JOB;
		size_t len = one_frame(w[r], buf, sizeof buf, &key);
		assert_int_equal(coll_leaf_frame(p.leaf, buf, len, T0), IOP_OK);
	}
	/* rank 1 ends: what it made, then its FINAL frame */
	w[1]->draining = true;
	while (!w[1]->final_sent) {
		size_t len = one_frame(w[1], buf, sizeof buf, &key);
		assert_int_equal(coll_leaf_frame(p.leaf, buf, len, T0 + SEC / 2), IOP_OK);
	}
	pipeline_advance(&p, T0 + 2 * SEC, true); /* well before gone_ns */
	const struct coll_state *s = coll_root_state(p.root);
	assert_int_equal(s->ranks[0].state, COLL_RANK_GONE);
	assert_int_equal(s->ranks[1].state, COLL_RANK_ENDED);
	assert_int_equal(coll_state_ranks_live(s), 0);
	for (unsigned r = 0; r < 2; r++) {
		iop_wl_free(w[r]);
		free(w[r]);
	}
	pipeline_free(&p);
}

/* A call claiming to have lasted since 1970 is counted, and costs no more
 * than any other: only the open ticks get its busy time (a leaf walking
 * every tick it spans never returned: found by ingest_fuzz). */
static void leaf_huge_duration(void **state)
{
	(void)state;
	struct iop_key key = test_key(1);
	static uint8_t buf[4096];
	struct iop_frame_hdr h = {.job_id = JOB, .seq = 0, .base_ns = T0, .node_id = 1, .rank = 0,
	                          .pid = 9};
	struct iop_stats st = {.events = 1};
	struct iop_frame_enc e;
	assert_int_equal(iop_enc_begin(&e, buf, sizeof buf, &h, &st), IOP_OK);
	struct iop_event ev = {.end_ns = T0 + 1000, .dur_ns = T0 + 1000, .bytes = 8,
	                       .layer = IOP_LAYER_POSIX, .op = IOP_OP_WRITE, .flags = IOP_EV_BYTES};
	assert_int_equal(iop_enc_event(&e, &ev), IOP_OK);
	size_t len;
	assert_int_equal(iop_enc_finish(&e, &key, &len), IOP_OK);
	struct pipeline p;
	pipeline_new(&p, T0);
	assert_int_equal(coll_leaf_frame(p.leaf, buf, len, T0 + 2000), IOP_OK);
	pipeline_advance(&p, T0 + 5 * SEC, true);
	const struct coll_tick *k = coll_state_tick(coll_root_state(p.root), (int64_t)(T0 / SEC));
	assert_non_null(k);
	struct coll_key rk = coll_key_rank(0, IOP_LAYER_POSIX, IOP_CLASS_WRITE);
	const struct coll_cell *c = coll_tick_find(k, &rk);
	assert_non_null(c);
	assert_int_equal(c->ops, 1);
	assert_true(c->busy_ns <= SEC); /* no more than the tick itself */
	pipeline_free(&p);
}

/* A frame of rank's process with 100 sequential 4 KiB writes to a named
 * file, ~3 us each, one every 10 us from T0 + 1 ms, as a run record or
 * call by call. */
static size_t run_frame(uint8_t *buf, size_t cap, uint32_t rank, bool runs, uint64_t *n_runs)
{
	struct iop_key key = test_key(1);
	struct iop_frame_hdr h = {.job_id = JOB, .seq = 0, .base_ns = T0, .node_id = 1,
	                          .rank = rank, .pid = 100 + rank};
	struct iop_stats st = {.events = 100};
	static struct iop_frame_enc e;
	assert_int_equal(iop_enc_begin(&e, buf, cap, &h, &st), IOP_OK);
	static const char path[] = "/scratch/run.dat";
	struct iop_name nm = {.kind = IOP_NAME_FILE, .id = 1, .text = path, .len = sizeof path - 1,
	                      .hash = iop_hash_str(path)};
	assert_int_equal(iop_enc_name(&e, &nm), IOP_OK);
	if (runs)
		iop_enc_coalesce(&e, SEC);
	for (uint64_t i = 0; i < 100; i++) {
		struct iop_event ev = {.end_ns = T0 + 1000000 + i * 10000, .dur_ns = 3000 + i % 7,
		                       .offset = i * 4096, .bytes = 4096, .thread = 1, .file = 1,
		                       .layer = IOP_LAYER_POSIX, .op = IOP_OP_WRITE,
		                       .flags = IOP_EV_OFFSET | IOP_EV_BYTES};
		assert_int_equal(iop_enc_event(&e, &ev), IOP_OK);
	}
	size_t len;
	assert_int_equal(iop_enc_finish(&e, &key, &len), IOP_OK);
	*n_runs = e.runs;
	return len;
}

/* A run's calls, which the leaf adds at once (add_run), give the rank the
 * busy time, calls, bytes and latencies that the same calls one by one
 * give another. */
static void leaf_run_as_calls(void **state)
{
	(void)state;
	static uint8_t buf[2][65536];
	uint64_t runs[2];
	size_t len[2] = {run_frame(buf[0], sizeof buf[0], 0, true, &runs[0]),
	                 run_frame(buf[1], sizeof buf[1], 1, false, &runs[1])};
	assert_int_equal(runs[0], 1);
	assert_int_equal(runs[1], 0);
	assert_true(len[0] * 4 < len[1]);
	struct pipeline p;
	pipeline_new(&p, T0);
	for (int i = 0; i < 2; i++)
		assert_int_equal(coll_leaf_frame(p.leaf, buf[i], len[i], T0 + 2000000), IOP_OK);
	pipeline_advance(&p, T0 + 5 * SEC, true);
	const struct coll_tick *k = coll_state_tick(coll_root_state(p.root), (int64_t)(T0 / SEC));
	assert_non_null(k);
	struct coll_key r0 = coll_key_rank(0, IOP_LAYER_POSIX, IOP_CLASS_WRITE);
	struct coll_key r1 = coll_key_rank(1, IOP_LAYER_POSIX, IOP_CLASS_WRITE);
	const struct coll_cell *a = coll_tick_find(k, &r0), *b = coll_tick_find(k, &r1);
	assert_non_null(a);
	assert_non_null(b);
	uint64_t want = 0;
	for (uint64_t i = 0; i < 100; i++)
		want += 3000 + i % 7;
	assert_int_equal(b->busy_ns, want);
	assert_int_equal(a->busy_ns, want);
	assert_int_equal(a->ops, 100);
	assert_int_equal(a->bytes, b->bytes);
	assert_int_equal(a->time_ns, b->time_ns);
	assert_int_equal(a->consec_ops, b->consec_ops);
	assert_int_equal(a->consec_ops, 100);
	assert_int_equal(iop_hist_quantile(&a->hist, 0.99), iop_hist_quantile(&b->hist, 0.99));
	assert_int_equal(a->hist.min, b->hist.min);
	assert_int_equal(a->hist.max, b->hist.max);
	pipeline_free(&p);
}

/* A long run the leaf cannot add at once (late: its tick closed before
 * it came) goes call by call: every call late, counted, its bytes and
 * latencies whole. */
static void leaf_late_run(void **state)
{
	(void)state;
	static uint8_t buf[65536];
	uint64_t runs;
	size_t len = run_frame(buf, sizeof buf, 0, true, &runs);
	assert_int_equal(runs, 1);
	struct pipeline p;
	pipeline_new(&p, T0);
	pipeline_advance(&p, T0 + 5 * SEC, false);
	assert_int_equal(coll_leaf_frame(p.leaf, buf, len, T0 + 5 * SEC), IOP_OK);
	pipeline_advance(&p, T0 + 20 * SEC, true);
	const struct coll_state *s = coll_root_state(p.root);
	assert_int_equal(s->mon.late, 100);
	assert_int_equal(s->mon.events, 100);
	uint64_t ops = 0, bytes = 0, hist = 0;
	for (int64_t t = (int64_t)(T0 / SEC); t < (int64_t)(T0 / SEC) + 20; t++) {
		const struct coll_tick *k = coll_state_tick(s, t);
		struct coll_key r0 = coll_key_rank(0, IOP_LAYER_POSIX, IOP_CLASS_WRITE);
		const struct coll_cell *c = k ? coll_tick_find(k, &r0) : NULL;
		if (c) {
			ops += c->ops;
			bytes += c->bytes;
			hist += c->hist.count;
		}
	}
	assert_int_equal(ops, 100);
	assert_int_equal(bytes, 100 * 4096);
	assert_int_equal(hist, 100);
	pipeline_free(&p);
}

/* Frame seq of process 9 with two 8-byte writes (events so far: 2 per
 * frame up to this one) from base, FINAL when final. */
static size_t seq_frame_at(uint8_t *buf, size_t cap, uint64_t seq, bool final, uint64_t base)
{
	struct iop_key key = test_key(1);
	struct iop_frame_hdr h = {.job_id = JOB, .seq = seq, .base_ns = base, .node_id = 1, .rank = 0,
	                          .pid = 9};
	struct iop_stats st = {.events = 2 * (seq + 1)};
	struct iop_frame_enc e;
	assert_int_equal(iop_enc_begin(&e, buf, cap, &h, &st), IOP_OK);
	for (int i = 0; i < 2; i++) {
		struct iop_event ev = {.end_ns = base + 1000 * (seq * 2 + (uint64_t)i + 1), .dur_ns = 500,
		                       .bytes = 8, .layer = IOP_LAYER_POSIX, .op = IOP_OP_WRITE,
		                       .flags = IOP_EV_BYTES};
		assert_int_equal(iop_enc_event(&e, &ev), IOP_OK);
	}
	if (final)
		iop_enc_set_flags(&e, IOP_FRAME_FINAL);
	size_t len;
	assert_int_equal(iop_enc_finish(&e, &key, &len), IOP_OK);
	return len;
}

static size_t seq_frame(uint8_t *buf, size_t cap, uint64_t seq, bool final)
{
	return seq_frame_at(buf, cap, seq, final, T0);
}

/* The FINAL frame travels on its own socket and can overtake the last
 * frames sent before it: those are still taken once, the process stays
 * ended, and one seen twice is refused. (A sequence 0 after the FINAL
 * frame is a new program image, after an exec: not tried here.) */
static void leaf_final_overtakes(void **state)
{
	(void)state;
	static uint8_t buf[4][4096];
	size_t len[4];
	for (uint64_t q = 0; q < 4; q++)
		len[q] = seq_frame(buf[q], sizeof buf[q], q, q == 3);
	struct pipeline p;
	pipeline_new(&p, T0);
	assert_int_equal(coll_leaf_frame(p.leaf, buf[0], len[0], T0), IOP_OK);
	assert_int_equal(coll_leaf_frame(p.leaf, buf[3], len[3], T0), IOP_OK); /* FINAL first */
	assert_int_equal(coll_leaf_frame(p.leaf, buf[1], len[1], T0), IOP_OK);
	assert_int_equal(coll_leaf_frame(p.leaf, buf[2], len[2], T0), IOP_OK);
	assert_int_equal(coll_leaf_frame(p.leaf, buf[2], len[2], T0), IOP_ERR_STATE);
	assert_int_equal(coll_leaf_frame(p.leaf, buf[1], len[1], T0), IOP_ERR_STATE);
	pipeline_advance(&p, T0 + 5 * SEC, true);
	const struct coll_state *s = coll_root_state(p.root);
	assert_int_equal(s->mon.events, 8);
	assert_int_equal(s->mon.produced, 8);
	assert_int_equal(s->mon.rejected_frames, 2);
	assert_int_equal(coll_state_ranks_live(s), 0);
	assert_int_equal(s->ranks[0].state, COLL_RANK_ENDED);
	pipeline_free(&p);
}

/* A FINAL frame comes twice when its process spooled a copy (no
 * acknowledgement in time, common/spool.h) and the first reached the leaf
 * after all: the copy is taken once, not refused or counted. A process's
 * only frame is FINAL and sequence 0: its copy is not a new program image
 * (which a frame of sequence 0 after a FINAL one is). The frames that
 * never came are lost on the way: the FINAL frame's stats count them. */
static void leaf_final_copy_once(void **state)
{
	(void)state;
	static uint8_t buf[4][4096];
	size_t len[4];
	for (uint64_t q = 0; q < 4; q++)
		len[q] = seq_frame(buf[q], sizeof buf[q], q, q == 3 || q == 0);
	struct pipeline p;
	pipeline_new(&p, T0);
	/* sequence 0 alone, FINAL, twice */
	assert_int_equal(coll_leaf_frame(p.leaf, buf[0], len[0], T0), IOP_OK);
	assert_int_equal(coll_leaf_frame(p.leaf, buf[0], len[0], T0), IOP_ERR_DUPLICATE);
	struct coll_leaf_procs pr;
	coll_leaf_procs(p.leaf, &pr);
	assert_int_equal(pr.seen, 1);
	assert_int_equal(pr.ended, 1);
	/* the same sequence and flags, other content: not a copy */
	static uint8_t other[4096];
	size_t olen = seq_frame_at(other, sizeof other, 0, true, T0 + 1);
	assert_int_not_equal(coll_leaf_frame(p.leaf, other, olen, T0), IOP_ERR_DUPLICATE);
	pipeline_advance(&p, T0 + 5 * SEC, true);
	const struct coll_state *s = coll_root_state(p.root);
	assert_int_equal(s->mon.rejected_frames, 0);
	pipeline_free(&p);

	/* frames 1 and 2 lost; FINAL 3 over the socket, then its spooled copy */
	len[0] = seq_frame(buf[0], sizeof buf[0], 0, false);
	pipeline_new(&p, T0);
	assert_int_equal(coll_leaf_frame(p.leaf, buf[0], len[0], T0), IOP_OK);
	assert_int_equal(coll_leaf_frame(p.leaf, buf[3], len[3], T0), IOP_OK);
	assert_int_equal(coll_leaf_frame(p.leaf, buf[3], len[3], T0), IOP_ERR_DUPLICATE);
	pipeline_advance(&p, T0 + 5 * SEC, true);
	s = coll_root_state(p.root);
	assert_int_equal(s->mon.events, 4);
	assert_int_equal(s->mon.produced, 8);
	assert_int_equal(coll_monitor_lost(&s->mon), 4);
	assert_int_equal(s->mon.rejected_frames, 0);
	assert_int_equal(s->ranks[0].state, COLL_RANK_ENDED);
	pipeline_free(&p);
}

/* Spooled frames (common/spool.h) carry their image's start. Of the image
 * the leaf has: those it has already (the frames kept and sent again) are
 * copies, not counted; the rest are taken in order. Of a later image
 * whose first frames were lost (an exec while the collector was stopped):
 * it starts that image, though its sequence is not above the last one's.
 * Of an earlier image, once a later one is taken: refused. Before the
 * spool is read, a frame of sequence 0 for a process still running is
 * seen to start its next image (coll_leaf_frame_restarts). */
static void leaf_spooled_images(void **state)
{
	(void)state;
	static uint8_t a[6][4096], b[4096];
	size_t la[6];
	for (uint64_t q = 0; q < 6; q++)
		la[q] = seq_frame(a[q], sizeof a[q], q, q == 5);
	size_t lb = seq_frame_at(b, sizeof b, 1, true, T0 + SEC / 2); /* its frame 0 lost */
	const uint64_t image_a = T0 - 1000, image_b = T0 + SEC / 2 - 1000;
	struct pipeline p;
	pipeline_new(&p, T0);
	for (int q = 0; q < 3; q++)
		assert_int_equal(coll_leaf_frame(p.leaf, a[q], la[q], T0), IOP_OK);
	assert_true(coll_leaf_frame_restarts(p.leaf, a[0], la[0]));
	/* the spool: frames 1-5 of image a, 1 and 2 taken already */
	assert_true(coll_leaf_spool_ready(p.leaf, a[1], la[1], image_a));
	assert_false(coll_leaf_spool_ready(p.leaf, a[4], la[4], image_a)); /* 3 not in yet */
	for (int q = 1; q < 3; q++)
		assert_int_equal(coll_leaf_frame_spooled(p.leaf, a[q], la[q], image_a, T0),
		                 IOP_ERR_DUPLICATE);
	for (int q = 3; q < 6; q++)
		assert_int_equal(coll_leaf_frame_spooled(p.leaf, a[q], la[q], image_a, T0), IOP_OK);
	assert_false(coll_leaf_frame_restarts(p.leaf, a[0], la[0])); /* ended: no wait */
	assert_int_equal(coll_leaf_frame_spooled(p.leaf, a[5], la[5], image_a, T0),
	                 IOP_ERR_DUPLICATE);
	/* over the socket, image b's FINAL frame (sequence 1 <= 5) is refused */
	assert_int_equal(coll_leaf_frame(p.leaf, b, lb, T0 + SEC / 2), IOP_ERR_STATE);
	/* spooled, with its image's start: taken, a new image */
	assert_false(coll_leaf_spool_ready(p.leaf, b, lb, image_b)); /* its frame 0 may come */
	assert_int_equal(coll_leaf_frame_spooled(p.leaf, b, lb, image_b, T0 + SEC / 2), IOP_OK);
	assert_int_equal(coll_leaf_frame_spooled(p.leaf, b, lb, image_b, T0 + SEC / 2),
	                 IOP_ERR_DUPLICATE);
	/* image a's again, now: refused */
	assert_int_equal(coll_leaf_frame_spooled(p.leaf, a[4], la[4], image_a, T0 + SEC / 2),
	                 IOP_ERR_STATE);
	pipeline_advance(&p, T0 + 5 * SEC, true);
	const struct coll_state *s = coll_root_state(p.root);
	assert_int_equal(s->mon.events, 12 + 2);
	assert_int_equal(s->mon.produced, 12 + 4);
	assert_int_equal(coll_monitor_lost(&s->mon), 2);
	assert_int_equal(s->mon.rejected_frames, 2);
	assert_int_equal(s->ranks[0].state, COLL_RANK_ENDED);
	pipeline_free(&p);
}

static int cmp_u64_ref(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return (a > b) - (a < b);
}

/* The ranks' distribution (rank_dist.h): its quantiles, taken by
 * selection, are those of a sorted copy (nearest rank), for sizes from 1
 * up, values with many equal; a tick's rank figures come out by rank
 * whether its ranks are dense (a counting sort) or far apart (qsort). */
static void rank_dist_exact(void **state)
{
	(void)state;
	static const double at[COLL_Q__N] = {0, 0.25, 0.5, 0.75, 0.99, 1};
	uint64_t seed = 12345;
	static struct coll_rank_fig f[3000];
	static uint64_t sorted[3000];
	for (uint32_t n = 1; n <= 3000; n += n < 40 ? 1 : 97) {
		for (uint32_t i = 0; i < n; i++) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			uint64_t v = (seed >> 33) % (n % 3 == 0 ? 5 : 1000000); /* many equal, or few */
			f[i] = (struct coll_rank_fig){.rank = i, .bytes = v, .p99_ns = v * 3,
			                              .has_lat = i % 4 != 1};
			sorted[i] = v;
		}
		struct coll_rank_dist d;
		assert_int_equal(coll_rank_dist_of(f, n, 7, &d), IOP_OK);
		qsort(sorted, n, sizeof *sorted, cmp_u64_ref);
		for (int q = 0; q < COLL_Q__N; q++) {
			uint64_t idx = (uint64_t)(at[q] * n + 0.999999999);
			assert_int_equal(d.bytes[q], sorted[idx ? idx - 1 : 0]);
		}
		uint32_t m = 0;
		for (uint32_t i = 0; i < n; i++)
			if (f[i].has_lat)
				sorted[m++] = f[i].p99_ns;
		qsort(sorted, m, sizeof *sorted, cmp_u64_ref);
		assert_int_equal(d.lat_ranks, m);
		for (int q = 0; q < COLL_Q__N && m; q++) {
			uint64_t idx = (uint64_t)(at[q] * m + 0.999999999);
			assert_int_equal(d.p99_ns[q], sorted[idx ? idx - 1 : 0]);
		}
	}
	/* rank figures by rank: dense ranks in a shuffled order, then two far apart */
	for (int sparse = 0; sparse < 2; sparse++) {
		struct coll_tick k;
		coll_tick_init(&k, 0, SEC);
		for (uint32_t i = 0; i < 500; i++) {
			uint32_t r = sparse ? (i % 2 ? 4000000000u - i : i) : (i * 7919) % 500;
			struct coll_cell *c;
			struct coll_key key = coll_key_rank(r, IOP_LAYER_POSIX, i % 3 ? IOP_CLASS_WRITE : IOP_CLASS_READ);
			assert_int_equal(coll_tick_row(&k, &key, &c), IOP_OK);
			coll_cell_add_call(c, 1000, r % 1000 + 1, true, false);
		}
		struct coll_rank_fig *out;
		uint32_t n;
		assert_int_equal(coll_rank_figs(&k, &out, &n), IOP_OK);
		assert_int_equal(n, 500);
		for (uint32_t i = 1; i < n; i++)
			assert_true(out[i - 1].rank < out[i].rank);
		for (uint32_t i = 0; i < n; i++)
			assert_int_equal(out[i].bytes, out[i].rank % 1000 + 1);
		free(out);
		coll_tick_free(&k);
	}
}

/* Rank 0's first frame (pid 9, from tick boundary t0): a name (or none)
 * and one event; its length. */
static size_t one_event_frame(uint8_t *buf, size_t cap, uint64_t t0, const struct iop_name *nm,
                              const struct iop_event *ev)
{
	struct iop_key key = test_key(1);
	struct iop_frame_hdr h = {.job_id = JOB, .seq = 0, .base_ns = t0, .node_id = 1, .rank = 0,
	                          .pid = 9};
	struct iop_stats st = {.events = 1};
	struct iop_frame_enc e;
	assert_int_equal(iop_enc_begin(&e, buf, cap, &h, &st), IOP_OK);
	if (nm)
		assert_int_equal(iop_enc_name(&e, nm), IOP_OK);
	assert_int_equal(iop_enc_event(&e, ev), IOP_OK);
	size_t len;
	assert_int_equal(iop_enc_finish(&e, &key, &len), IOP_OK);
	return len;
}

/* A call that was still running when a tick ended, and returned before
 * that tick closed (in its grace period): the closed tick counts it in
 * flight, with its start, though no in-flight slot shows it any more. */
static void leaf_call_across_tick_end(void **state)
{
	(void)state;
	static uint8_t buf[4096];
	uint64_t t0 = (T0 / SEC) * SEC; /* a tick boundary */
	/* from 0.5 s into tick t0 to 0.13 s into the next one */
	struct iop_event ev = {.end_ns = t0 + SEC + SEC / 100 * 13, .dur_ns = SEC / 2 + SEC / 100 * 13,
	                       .bytes = 8, .layer = IOP_LAYER_POSIX, .op = IOP_OP_WRITE,
	                       .flags = IOP_EV_BYTES};
	size_t len = one_event_frame(buf, sizeof buf, t0, NULL, &ev);
	struct pipeline p;
	pipeline_new(&p, t0);
	assert_int_equal(coll_leaf_frame(p.leaf, buf, len, t0 + SEC + SEC / 5), IOP_OK);
	pipeline_advance(&p, t0 + 5 * SEC, true);
	const struct coll_state *s = coll_root_state(p.root);
	struct coll_key rk = coll_key_rank(0, IOP_LAYER_POSIX, IOP_CLASS_WRITE);
	const struct coll_tick *k = coll_state_tick(s, (int64_t)(t0 / SEC));
	assert_non_null(k);
	const struct coll_cell *c = coll_tick_find(k, &rk);
	assert_non_null(c);
	assert_int_equal(c->inflight, 1);
	assert_int_equal(c->oldest_ns, t0 + SEC / 2);
	assert_int_equal(c->ops, 0); /* it ended in the next tick */
	k = coll_state_tick(s, (int64_t)(t0 / SEC) + 1);
	assert_non_null(k);
	c = coll_tick_find(k, &rk);
	assert_non_null(c);
	assert_int_equal(c->ops, 1);
	assert_int_equal(c->inflight, 0);
	pipeline_free(&p);
}

/* A frame arriving in tick t + 1 with a new file's name and events of tick
 * t (in its grace): the name and the process's join come with tick t's
 * delta, so the root knows the file when it applies tick t's rows. */
static void leaf_name_with_first_rows(void **state)
{
	(void)state;
	static uint8_t buf[4096];
	uint64_t t0 = (T0 / SEC) * SEC; /* a tick boundary */
	const char *path = "/scratch/late-name.dat";
	struct iop_name nm = {.hash = iop_hash_str(path), .text = path,
	                      .len = (uint32_t)strlen(path), .id = 1, .kind = IOP_NAME_FILE};
	struct iop_event ev = {.end_ns = t0 + SEC / 2, .dur_ns = 1000, .bytes = 8, .file = 1,
	                       .layer = IOP_LAYER_POSIX, .op = IOP_OP_WRITE, .flags = IOP_EV_BYTES};
	size_t len = one_event_frame(buf, sizeof buf, t0, &nm, &ev);
	struct pipeline p;
	pipeline_new(&p, t0);
	assert_int_equal(coll_leaf_frame(p.leaf, buf, len, t0 + SEC + SEC / 10), IOP_OK);
	/* tick t0 closes at the root; t0 + 1 is still open */
	pipeline_advance(&p, t0 + SEC + 900 * (SEC / 1000), false);
	const struct coll_state *s = coll_root_state(p.root);
	assert_int_equal(s->last_t, (int64_t)(t0 / SEC));
	const struct coll_tick *k = coll_state_tick(s, (int64_t)(t0 / SEC));
	assert_non_null(k);
	struct coll_key fk = {.id = nm.hash, .rank = COLL_RANK_NONE, .kind = COLL_ROW_FILE,
	                      .layer = IOP_LAYER_POSIX, .cls = IOP_CLASS_WRITE};
	const struct coll_cell *c = coll_tick_find(k, &fk);
	assert_non_null(c);
	assert_int_equal(c->bytes, 8);
	assert_non_null(coll_names_text(&s->names, nm.hash));
	assert_string_equal(coll_names_text(&s->names, nm.hash), path);
	assert_int_equal(s->ranks[0].state, COLL_RANK_ACTIVE);
	pipeline_free(&p);
}

/* A path that is not UTF-8 keeps its length and its well-formed characters;
 * the other bytes become '?', so JSON outputs take it (they refused it). */
static void names_not_utf8(void **state)
{
	(void)state;
	static const struct {
		const char *in, *out;
	} cases[] = {
	    {"/d/caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x98\x80.h5",
	     "/d/caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x98\x80.h5"},
	    {"/d/caf\xe9.dat", "/d/caf?.dat"}, /* Latin-1 */
	    {"/d/bad\xff\xfe", "/d/bad??"},
	    {"/d/cut\xe2\x9c", "/d/cut??"},     /* a character cut short */
	    {"/d/\xc0\xaf", "/d/??"},           /* overlong '/' */
	    {"/d/\xed\xa0\x80", "/d/???"},      /* a surrogate */
	    {"/d/\xf4\x90\x80\x80", "/d/????"}, /* past U+10FFFF */
	    {"/d/\x80x", "/d/?x"},              /* a lone continuation byte */
	};
	struct coll_names d;
	coll_names_init(&d, 64, 4096);
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		bool added;
		assert_int_equal(coll_names_add(&d, i + 1, IOP_NAME_FILE, cases[i].in,
		                                strlen(cases[i].in), &added),
		                 IOP_OK);
		assert_string_equal(coll_names_text(&d, i + 1), cases[i].out);
	}
	coll_names_free(&d);
}

/* A file's file system (COLL_NAME_FILE_FS) is held in the file's entry,
 * not as an entry of its own, and reads and writes out as the same
 * record; one that comes before its file, or is not an id, stays an
 * entry; the same name twice is not added twice. */
static void names_file_fs(void **state)
{
	(void)state;
	struct coll_names d;
	coll_names_init(&d, 64, 4096);
	bool added;
	const uint64_t f = 0x1234, g = 0x5678, h = 0x9abc;
	static const char id[] = "00000000deadbeef", other[] = "0000000000000042";
	assert_int_equal(coll_names_add(&d, f, IOP_NAME_FILE, "/d/f", 4, &added), IOP_OK);
	assert_int_equal(coll_names_add(&d, f ^ COLL_FILE_FS_SALT, COLL_NAME_FILE_FS, id, 16, &added),
	                 IOP_OK);
	assert_true(added);
	assert_int_equal(d.n, 1); /* held by the file's entry */
	assert_int_equal(d.n_file_fs, 1);
	uint64_t fs = 0;
	assert_true(coll_names_file_fs(&d, f, &fs));
	assert_true(fs == 0xdeadbeef);
	assert_null(coll_names_get(&d, f ^ COLL_FILE_FS_SALT));
	/* again, even with another text: not added, the first wins */
	assert_int_equal(coll_names_add(&d, f ^ COLL_FILE_FS_SALT, COLL_NAME_FILE_FS, other, 16,
	                                &added), IOP_OK);
	assert_false(added);
	assert_true(coll_names_file_fs(&d, f, &fs) && fs == 0xdeadbeef);
	/* written out as the record it came as */
	struct coll_name rec;
	char hex[COLL_FILE_FS_HEX + 1];
	assert_true(coll_names_fs_record(&d, coll_names_get(&d, f), &rec, hex));
	assert_true(rec.hash == (f ^ COLL_FILE_FS_SALT));
	assert_int_equal(rec.kind, COLL_NAME_FILE_FS);
	assert_int_equal(rec.len, 16);
	assert_string_equal(rec.text, id);
	/* before its file: an entry of its own, still found */
	assert_int_equal(coll_names_add(&d, g ^ COLL_FILE_FS_SALT, COLL_NAME_FILE_FS, other, 16,
	                                &added), IOP_OK);
	assert_true(added);
	assert_int_equal(coll_names_add(&d, g, IOP_NAME_FILE, "/d/g", 4, &added), IOP_OK);
	assert_int_equal(d.n, 3);
	assert_true(coll_names_file_fs(&d, g, &fs) && fs == 0x42);
	assert_false(coll_names_fs_record(&d, coll_names_get(&d, g), &rec, hex));
	/* a text that is no id: an entry, and no file system */
	assert_int_equal(coll_names_add(&d, h, IOP_NAME_FILE, "/d/h", 4, &added), IOP_OK);
	assert_int_equal(coll_names_add(&d, h ^ COLL_FILE_FS_SALT, COLL_NAME_FILE_FS,
	                                "00000000DEADBEEF", 16, &added), IOP_OK);
	assert_int_equal(d.n, 5);
	assert_false(coll_names_file_fs(&d, h, &fs));
	assert_int_equal(d.n_fs, 1); /* one file system held */
	coll_names_free(&d);
}

/* Ticks from..to applied to s, each one POSIX write of 1 byte taking
 * 1000 * (t - 999) ns. */
static void apply_one_call_ticks(struct coll_state *s, int64_t from, int64_t to)
{
	struct coll_delta d;
	coll_delta_init(&d, 0, SEC);
	for (int64_t t = from; t <= to; t++) {
		coll_delta_reset(&d, t);
		struct coll_key k = coll_key_layer(IOP_LAYER_POSIX, IOP_CLASS_WRITE);
		struct coll_cell *c;
		assert_int_equal(coll_tick_row(&d.tick, &k, &c), IOP_OK);
		coll_cell_add_call(c, 1000 * (uint64_t)(t - 999), 1, true, false);
		assert_int_equal(coll_state_apply(s, &d), IOP_OK);
	}
	coll_delta_free(&d);
}

/* History tiers: old ticks fold into bins; a bin holds what its ticks did. */
static void history_tiers(void **state)
{
	(void)state;
	struct coll_history_cfg h = {.full_ticks = 10, .bin1_ticks = 5, .bin1_count = 4,
	                             .bin2_ticks = 20, .bin2_count = 3};
	struct coll_state s;
	coll_state_init(&s, SEC, &h);
	/* tick t's call takes 1000 * (t - 999) ns: a bin's latencies are
	 * those of its ticks (their histograms merged, packed ones too) */
	apply_one_call_ticks(&s, 1000, 1099);
	/* the newest 10 at full resolution */
	const struct coll_tick *k = coll_state_tick(&s, 1095);
	assert_non_null(k);
	assert_int_equal(k->t, 1095);
	assert_int_equal(k->cell[0].ops, 1);
	assert_int_equal(k->cell[0].hist.count, 1);
	assert_int_equal(k->cell[0].hist.min, 96000);
	/* then 4 bins of 5 ticks: 1070..1089 */
	k = coll_state_tick(&s, 1072);
	assert_non_null(k);
	assert_int_equal(k->t, 1070);
	assert_int_equal(k->cell[0].ops, 5);
	assert_int_equal(k->cell[0].hist.count, 5);
	assert_int_equal(k->cell[0].hist.min, 71000);
	assert_int_equal(k->cell[0].hist.max, 75000);
	assert_int_equal(k->cell[0].hist.sum, 71000 + 72000 + 73000 + 74000 + 75000);
	/* then bins of 20 ticks: 1060..1069 landed in bin 1060 (half of it; the
	 * other half went before it was evicted), earlier ones in 1040, 1020 */
	k = coll_state_tick(&s, 1045);
	assert_non_null(k);
	assert_int_equal(k->t, 1040);
	assert_int_equal(k->cell[0].ops, 20);
	assert_int_equal(k->cell[0].hist.count, 20);
	assert_int_equal(k->cell[0].hist.min, 41000);
	assert_int_equal(k->cell[0].hist.max, 60000);
	assert_int_equal(k->cell[0].hist.sum, 20 * (41000 + 60000) / 2);
	/* the buckets too: the median of 41..60 us within its buckets */
	uint64_t p50 = iop_hist_quantile(&k->cell[0].hist, 0.5);
	assert_in_range(p50, iop_hist_bucket_low(iop_hist_bucket(50000)),
	                iop_hist_bucket_high(iop_hist_bucket(51000)));
	assert_null(coll_state_tick(&s, 1005)); /* forgotten: memory is bounded */
	assert_int_equal(s.ticks_applied, 100);
	coll_state_free(&s);

	/* a job whose first tick is not a bin's: ticks 1003..1015, the
	 * newest 10 whole, 1003..1005 in the bin of 1000..1004 and 1005's */
	coll_state_init(&s, SEC, &h);
	apply_one_call_ticks(&s, 1003, 1015);
	k = coll_state_tick(&s, 1004);
	assert_non_null(k);
	assert_int_equal(k->t, 1000); /* a bin is numbered by its first tick */
	assert_int_equal(k->cell[0].ops, 2);
	assert_int_equal(k->cell[0].hist.sum, 4000 + 5000);
	k = coll_state_tick(&s, 1005);
	assert_non_null(k);
	assert_int_equal(k->t, 1005);
	assert_int_equal(k->cell[0].ops, 1);
	coll_state_free(&s);
}

/* A tick of 40 ranks folded at a cap of 30: the 16 ranks at each end of
 * throughput and of p99 and the named rank keep their rows; the others'
 * rows sum into their node's, with every call and byte; the distribution
 * is that of the 40 ranks. */
static uint32_t node_of_rank(void *arg, uint32_t rank)
{
	(void)arg;
	return 100 + rank % 4;
}

static void fold_ranks_keeps_ends_and_named(void **state)
{
	(void)state;
	struct coll_tick k;
	coll_tick_init(&k, 1700000000, SEC);
	for (uint32_t r = 0; r < 40; r++) {
		struct coll_key key = coll_key_rank(r, IOP_LAYER_POSIX, IOP_CLASS_WRITE);
		struct coll_cell *c;
		assert_int_equal(coll_tick_row(&k, &key, &c), IOP_OK);
		/* bytes rise with the rank, latency falls: the same ends twice */
		coll_cell_add_call(c, (40 - r) * 1000, (r + 1) * 100, true, false);
		key = coll_key_layer(IOP_LAYER_POSIX, IOP_CLASS_WRITE);
		assert_int_equal(coll_tick_row(&k, &key, &c), IOP_OK);
		coll_cell_add_call(c, (40 - r) * 1000, (r + 1) * 100, true, false);
	}
	struct coll_rank_dist whole, d;
	assert_int_equal(coll_rank_dist_tick(&k, &whole), IOP_OK);
	assert_int_equal(whole.ranks, 40);
	assert_int_equal(whole.bytes[COLL_Q_MIN], 100);
	assert_int_equal(whole.bytes[COLL_Q_MED], 2000); /* the 20th of 40 */
	assert_int_equal(whole.bytes[COLL_Q_MAX], 4000);
	struct rec_named named = {0};
	assert_int_equal(rec_named_add(&named, 20), IOP_OK);

	/* at or under the cap nothing changes */
	assert_int_equal(rec_view_fold_ranks(&k, 40, &named, node_of_rank, NULL, &d), IOP_OK);
	assert_int_equal(d.ranks, 0);
	assert_int_equal(k.n, 41);

	assert_int_equal(rec_view_fold_ranks(&k, 30, &named, node_of_rank, NULL, &d), IOP_OK);
	assert_memory_equal(&d, &whole, sizeof d);
	uint64_t ops = 0, bytes = 0;
	uint32_t ranks = 0, nodes = 0;
	for (uint32_t i = 0; i < k.n; i++) {
		const struct coll_key *key = &k.key[i];
		if (key->kind != COLL_ROW_RANK)
			continue;
		ops += k.cell[i].ops;
		bytes += k.cell[i].bytes;
		if (coll_key_is_node(key)) {
			nodes++;
			uint32_t n = coll_key_node_id(key);
			assert_true(n >= 100 && n < 104);
			/* ranks 16..19 and 21..23 folded: node 100 has 16, node 101 17 and 21, ... */
			uint64_t want = 0;
			for (uint32_t r = 16; r < 24; r++)
				if (r != 20 && 100 + r % 4 == n)
					want += (r + 1) * 100;
			assert_int_equal(k.cell[i].bytes, want);
		} else {
			ranks++;
			assert_true(key->rank < 16 || key->rank >= 24 || key->rank == 20);
		}
	}
	assert_int_equal(ranks, 33);
	assert_int_equal(nodes, 4);
	assert_int_equal(ops, 40);
	assert_int_equal(bytes, 820 * 100);
	rec_named_free(&named);
	coll_tick_free(&k);
}

/* coll_state_nodes counts the distinct nodes of the ranks seen, ranks
 * never seen left out, at most 4096 (its set was linear; it is hashed). */
static void state_nodes_counted(void **st)
{
	(void)st;
	struct coll_state s;
	struct coll_history_cfg h;
	coll_history_cfg_default(&h, SEC);
	coll_state_init(&s, SEC, &h);
	assert_int_equal(coll_state_nodes(&s), 0);
	s.n_ranks = 70000;
	s.ranks = calloc(s.n_ranks, sizeof(*s.ranks));
	assert_non_null(s.ranks);
	for (uint32_t r = 0; r < 65536; r++) {
		s.ranks[r].state = COLL_RANK_ACTIVE;
		s.ranks[r].node = 0x5eed000000ull + r / 64; /* 1024 nodes */
	}
	s.ranks[65536].node = 12345; /* never seen: not counted */
	s.ranks[65537].state = COLL_RANK_ENDED; /* node 0 counts too */
	assert_int_equal(coll_state_nodes(&s), 1025);
	for (uint32_t r = 0; r < s.n_ranks; r++) {
		s.ranks[r].state = COLL_RANK_ACTIVE;
		s.ranks[r].node = (uint64_t)r << 40; /* 70 000 nodes: the count stops at 4096 */
	}
	assert_int_equal(coll_state_nodes(&s), 4096);
	coll_state_free(&s);
}

/* Counters past the set's room are refused, counted, and the summary says
 * so (monitor.counters_refused, and a WARNING line): the totals are short
 * of them, never silently (a 65,536-rank job had 16 % refused unsaid). */
static void counters_refused_said(void **st)
{
	(void)st;
	struct coll_ctrset set = {0};
	enum { N = 5000, MAX = 1000 };
	struct coll_counter *v = calloc(N, sizeof(*v));
	assert_non_null(v);
	for (uint32_t i = 0; i < N; i++)
		v[i] = (struct coll_counter){.file = 1000 + i, .ops = 1, .bytes = 10, .rank = i % 7,
		                             .node = 1, .pid = 2};
	uint64_t refused = 0;
	assert_int_equal(coll_ctrset_add_all_n(&set, v, N, MAX, &refused), IOP_ERR_OVERSIZED);
	assert_true(set.n >= MAX && set.n < N);
	assert_int_equal(refused, N - set.n);
	/* those it holds grow as before; they are never refused */
	uint32_t held = set.n;
	for (uint32_t i = 0; i < N; i++)
		v[i].bytes = 20;
	refused = 0;
	(void)coll_ctrset_add_all_n(&set, v, held, MAX, &refused);
	assert_int_equal(refused, 0);
	assert_int_equal(set.n, held);
	coll_ctrset_free(&set);
	free(v);

	struct coll_state s;
	coll_state_init(&s, SEC, NULL);
	struct coll_job_info job = {.id = 1, .start_ns = SEC, .tick_ns = SEC, .command = "t"};
	json_t *o = coll_summary_json(&s, &job, NULL);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(o, "monitor"),
	                                                    "counters_refused")), 0);
	json_decref(o);
	s.counters_refused = 123;
	o = coll_summary_json(&s, &job, NULL);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(o, "monitor"),
	                                                    "counters_refused")), 123);
	json_decref(o);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	assert_non_null(f);
	coll_summary_print(f, &s, &job, 0);
	fclose(f);
	assert_non_null(strstr(text, "WARNING: 123 counter updates found no room"));
	assert_null(strstr(text, "never reached the collector"));
	free(text);
	/* calls lost on the way: in the JSON and said under the human summary */
	s.mon.produced = 1000, s.mon.dropped = 100, s.mon.events = 850;
	o = coll_summary_json(&s, &job, NULL);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(o, "monitor"), "lost")), 50);
	json_decref(o);
	f = open_memstream(&text, &len);
	assert_non_null(f);
	coll_summary_print(f, &s, &job, 0);
	fclose(f);
	assert_non_null(strstr(text, "WARNING: 50 of the 1000 calls recorded never reached the collector"));
	free(text);
	coll_state_free(&s);
}

/* A node's host name, from the hosts' index (state.c): past the index's
 * first growth, for every host, and none for a node never named; the
 * same after the index is made anew (as the keyframe reader does). */
static void state_hosts_named(void **st)
{
	(void)st;
	struct coll_state s;
	coll_state_init(&s, SEC, NULL);
	struct coll_delta d;
	coll_delta_init(&d, 0, SEC);
	char name[32];
	for (int i = 0; i < 300; i++) {
		snprintf(name, sizeof name, "host%03d", i);
		assert_int_equal(coll_delta_add_name(&d, iop_hash_str(name), IOP_NAME_HOST, name,
		                                     (uint32_t)strlen(name)),
		                 IOP_OK);
	}
	assert_int_equal(coll_state_apply(&s, &d), IOP_OK);
	assert_int_equal(s.n_hosts, 300);
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < 300; i++) {
			snprintf(name, sizeof name, "host%03d", i);
			const char *got = coll_state_host(&s, (uint32_t)iop_hash_str(name));
			assert_non_null(got);
			assert_string_equal(got, name);
		}
		assert_null(coll_state_host(&s, (uint32_t)iop_hash_str("elsewhere")));
		coll_state_index_hosts(&s);
	}
	coll_delta_free(&d);
	coll_state_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tick_round_trip),
		cmocka_unit_test(tick_decode_rejects_duplicates),
		cmocka_unit_test(fold_keeps_totals),
		cmocka_unit_test(fold_matches_model),
		cmocka_unit_test(fold_ranks_keeps_ends_and_named),
		cmocka_unit_test(merge_take_is_merge),
		cmocka_unit_test(counters_lists),
		cmocka_unit_test(delta_message),
		cmocka_unit_test(delta_message_compressed),
		cmocka_unit_test(root_closes_when_children_in),
		cmocka_unit_test(leaf_root_exact_totals),
		cmocka_unit_test(leaf_restart_keeps_totals),
		cmocka_unit_test(leaf_rejects_bad_frames),
		cmocka_unit_test(leaf_late_events),
		cmocka_unit_test(leaf_gone_process),
		cmocka_unit_test(leaf_flush_marks_gone),
		cmocka_unit_test(leaf_huge_duration),
		cmocka_unit_test(leaf_run_as_calls),
		cmocka_unit_test(leaf_late_run),
		cmocka_unit_test(leaf_final_overtakes),
		cmocka_unit_test(leaf_final_copy_once),
		cmocka_unit_test(rank_dist_exact),
		cmocka_unit_test(leaf_spooled_images),
		cmocka_unit_test(leaf_call_across_tick_end),
		cmocka_unit_test(leaf_name_with_first_rows),
		cmocka_unit_test(history_tiers),
		cmocka_unit_test(names_not_utf8),
		cmocka_unit_test(names_file_fs),
		cmocka_unit_test(state_nodes_counted),
		cmocka_unit_test(counters_refused_said),
		cmocka_unit_test(state_hosts_named),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* The leaf's ticks against a plain model of them: frames of a random
 * workload decoded with iop_frame_decode and every call added to its four
 * rows one by one, as docs/collector.md defines them. The leaf takes
 * shortcuts (rows remembered from the calls before, LAYER rows summed
 * from RANK rows when a tick closes, counters fetched ahead); this fails
 * if one of them miscounts, also with the files folded past max_files
 * (the FILE rows' latencies held back until then). Busy time and calls
 * in flight are left to engine_test: the model checks the rest of every
 * cell, histograms byte for byte. With frames of run records too: the
 * leaf adds a run's calls at once, the model one by one. */
#include "test_util.h"

#include <stdlib.h>
#include <string.h>

#include "delta.h"
#include "events.h"
#include "frame.h"
#include "leaf.h"
#include "pattern.h"
#include "workload.h"

#define SEC   1000000000ull
#define T0    (1700000000ull * SEC)
#define JOB   0x51ab1eull
#define RANKS 6
#define TICKS 64 /* model ticks from T0 on; more than the workload spans */

struct model {
	struct coll_tick tick[TICKS];
	uint64_t id_hash[RANKS][IOP_WL_MAX_NAMES];
	/* per rank, file, layer and data class: the previous call's start,
	 * end and stride (pattern.h, written again here from its words) */
	struct {
		uint64_t start, end, stride;
	} at[RANKS][IOP_WL_MAX_NAMES][IOP_LAYER__COUNT][2];
};

struct closed {
	struct coll_tick tick[TICKS];
	bool seen[TICKS];
	uint64_t late, events;
};

static uint64_t run_calls_seen; /* calls the model decoded from runs of > 8 */

static struct iop_key key_of(void)
{
	struct iop_key k;
	memset(k.b, 3, sizeof k.b);
	return k;
}

static void model_add(struct coll_tick *t, const struct coll_key *key, const struct iop_event *ev,
                      uint64_t excl, bool seq_known, int pattern)
{
	struct coll_cell *c;
	assert_int_equal(coll_tick_row(t, key, &c), IOP_OK);
	coll_cell_add_call(c, ev->dur_ns, ev->bytes, ev->flags & IOP_EV_BYTES,
	                   ev->flags & IOP_EV_ERROR);
	c->excl_ns += excl;
	c->coll_ops += ev->op == IOP_OP_READ_COLL || ev->op == IOP_OP_WRITE_COLL;
	c->lock_ns += ev->op == IOP_OP_LOCK ? ev->dur_ns : 0;
	if (ev->flags & IOP_EV_CHILDREN) {
		c->child_ops += ev->child_ops;
		c->child_bytes += ev->child_bytes;
	}
	c->off_ops += seq_known;
	c->consec_ops += seq_known && pattern == COLL_PAT_CONSEC;
	c->fwd_ops += seq_known && pattern == COLL_PAT_SEQ;
	c->stride_ops += seq_known && pattern == COLL_PAT_STRIDE;
}

/* One frame of rank r into the model, as the leaf is specified to count it. */
static void model_frame(struct model *m, unsigned r, const uint8_t *buf, size_t len)
{
	static struct iop_name names[1024];
	static struct iop_counter counters[4096];
	static struct iop_inflight inflight[64];
	static struct iop_event events[4096];
	struct iop_frame_out out = {.names = names, .counters = counters, .inflight = inflight,
	                            .events = events, .names_cap = 1024, .counters_cap = 4096,
	                            .inflight_cap = 64, .events_cap = 4096};
	struct iop_key key = key_of();
	assert_int_equal(iop_frame_decode(buf, len, &key, &out), IOP_OK);
	for (uint32_t i = 0; i < out.frame.n_names; i++)
		m->id_hash[r][names[i].id] = names[i].hash;
	for (uint32_t i = 0; i < out.frame.n_events; i++) {
		const struct iop_event *ev = &events[i];
		run_calls_seen += ev->run_calls > 8 ? ev->run_calls : 0;
		uint64_t t = ev->end_ns / SEC - T0 / SEC;
		assert_true(t < TICKS);
		struct coll_tick *k = &m->tick[t];
		unsigned cls = iop_op_class(ev->op);
		uint64_t excl = ev->dur_ns;
		if (ev->flags & IOP_EV_CHILDREN)
			excl = ev->child_ns < ev->dur_ns ? ev->dur_ns - ev->child_ns : 0;
		uint64_t file = ev->file ? m->id_hash[r][ev->file] : 0;
		uint64_t site = ev->site ? m->id_hash[r][ev->site] : 0;
		bool seq_known = file && cls != IOP_CLASS_META && (ev->flags & IOP_EV_OFFSET) &&
		                 (ev->flags & IOP_EV_BYTES);
		int sequential = -1;
		if (seq_known) {
			__typeof__(&m->at[0][0][0][0]) a = &m->at[r][ev->file][ev->layer][cls];
			uint64_t o = ev->offset;
			if (o == a->end)
				sequential = COLL_PAT_CONSEC;
			else if (o < a->end)
				sequential = COLL_PAT_RANDOM;
			else if (a->stride > 0 && o - a->start == a->stride)
				sequential = COLL_PAT_STRIDE;
			else
				sequential = COLL_PAT_SEQ;
			a->stride = o > a->start ? o - a->start : 0;
			a->start = o;
			a->end = o + ev->bytes;
		}
		struct coll_key keys[4] = {coll_key_rank(out.frame.hdr.rank, ev->layer, cls),
		                           coll_key_layer(ev->layer, cls),
		                           coll_key_file(file, ev->layer, cls),
		                           coll_key_site(site, ev->layer, cls)};
		for (int j = 0; j < 4; j++)
			if ((j != 2 || file) && (j != 3 || site))
				model_add(k, &keys[j], ev, excl, seq_known, sequential);
	}
}

static void keep(void *arg, struct coll_delta *d)
{
	struct closed *c = arg;
	c->late += d->mon.late;
	c->events += d->mon.events;
	if (d->tick.n == 0)
		return;
	uint64_t t = (uint64_t)d->tick.t - T0 / SEC;
	assert_true(t < TICKS);
	assert_false(c->seen[t]);
	c->seen[t] = true;
	assert_int_equal(coll_tick_copy(&c->tick[t], &d->tick), IOP_OK);
}

static void assert_hist_equal(const struct iop_hist *a, const struct iop_hist *b)
{
	static uint8_t ba[1 << 16], bb[1 << 16];
	struct iop_wcur wa = iop_wcur_make(ba, sizeof ba), wb = iop_wcur_make(bb, sizeof bb);
	iop_hist_encode(a, &wa);
	iop_hist_encode(b, &wb);
	assert_int_equal(wa.err, IOP_OK);
	assert_int_equal(wb.err, IOP_OK);
	assert_int_equal(wa.p - ba, wb.p - bb);
	assert_memory_equal(ba, bb, (size_t)(wa.p - ba));
}

/* Every field the model keeps: all but busy time and calls in flight
 * (the leaf's own; a LAYER row has neither, checked below). */
static void assert_calls_equal(const struct coll_cell *a, const struct coll_cell *b)
{
	assert_int_equal(a->ops, b->ops);
	assert_int_equal(a->bytes, b->bytes);
	assert_int_equal(a->errors, b->errors);
	assert_int_equal(a->time_ns, b->time_ns);
	assert_int_equal(a->excl_ns, b->excl_ns);
	assert_int_equal(a->child_ops, b->child_ops);
	assert_int_equal(a->child_bytes, b->child_bytes);
	assert_int_equal(a->off_ops, b->off_ops);
	assert_int_equal(a->consec_ops, b->consec_ops);
	assert_int_equal(a->fwd_ops, b->fwd_ops);
	assert_int_equal(a->stride_ops, b->stride_ops);
	for (int i = 0; i < COLL_SIZE_CLASSES; i++)
		assert_int_equal(a->size_ops[i], b->size_ops[i]);
	assert_int_equal(a->coll_ops, b->coll_ops);
	assert_int_equal(a->lock_ns, b->lock_ns);
	assert_hist_equal(&a->hist, &b->hist);
}

/* max_files 0: no folding, the model keeps every file. Else the model's
 * ticks, complete, are folded as the leaf folds its own when they close:
 * the leaf holds the latencies of its FILE rows back until then
 * (latlog.h), and the rows kept and the "other" rows must come out as
 * recorded call by call. */
static void leaf_matches_model(uint32_t max_files, uint64_t coalesce_ns)
{
	struct model *m = calloc(1, sizeof(*m));
	struct closed *c = calloc(1, sizeof(*c));
	struct iop_wl *w = calloc(RANKS, sizeof(*w));
	assert_non_null(m);
	assert_non_null(c);
	assert_non_null(w);
	for (int t = 0; t < TICKS; t++) {
		coll_tick_init(&m->tick[t], (int64_t)(T0 / SEC) + t, SEC);
		coll_tick_init(&c->tick[t], (int64_t)(T0 / SEC) + t, SEC);
	}
	struct coll_leaf_cfg cfg;
	coll_leaf_cfg_default(&cfg);
	cfg.job_id = JOB;
	cfg.key = key_of();
	cfg.max_files = max_files;
	cfg.no_fs = true; /* the model has the four kinds; FS rows: engine_test */
	struct coll_leaf *leaf;
	assert_int_equal(coll_leaf_new(&cfg, T0, &leaf), IOP_OK);
	/* the mixed workload and the IOR one (MPI-IO calls with children),
	 * frames of varied sizes */
	for (unsigned r = 0; r < RANKS; r++) {
		assert_true(iop_wl_init(&w[r], r % 3 ? IOP_WL_MIXED : IOP_WL_IOR_WRITE, r, 77 + r, T0));
		w[r].job_id = JOB;
		w[r].coalesce_ns = coalesce_ns;
	}
	run_calls_seen = 0;
	static uint8_t buf[1 << 16];
	struct iop_key key = key_of();
	uint64_t now = T0, sent = 0;
	for (int round = 0; round < 120; round++) {
		for (unsigned r = 0; r < RANKS; r++) {
			w[r].draining = round == 119;
			size_t len;
			unsigned n;
			unsigned per_frame = 16 + (unsigned)((round * 37 + r * 11) % 500);
			while (iop_wl_frame(&w[r], buf, sizeof buf, per_frame, &key, &len, &n) == IOP_OK) {
				if (w[r].now_ns > now)
					now = w[r].now_ns;
				assert_int_equal(coll_leaf_frame(leaf, buf, len, now), IOP_OK);
				model_frame(m, r, buf, len);
				sent += n;
				if (!w[r].draining)
					break;
			}
		}
		uint64_t slowest = UINT64_MAX;
		for (unsigned r = 0; r < RANKS; r++)
			if (w[r].now_ns < slowest)
				slowest = w[r].now_ns;
		coll_leaf_advance(leaf, slowest, false, keep, c);
	}
	coll_leaf_advance(leaf, now + 10 * SEC, true, keep, c);
	assert_int_equal(c->late, 0); /* the model places no call late */
	assert_int_equal(c->events, sent);
	unsigned ticks = 0, folded = 0;
	for (int t = 0; t < TICKS; t++) {
		uint32_t n = m->tick[t].n;
		assert_int_equal(coll_tick_fold_files(&m->tick[t], max_files), IOP_OK);
		folded += m->tick[t].n < n;
	}
	assert_true(max_files == 0 ? folded == 0 : folded > 3);
	for (int t = 0; t < TICKS; t++) {
		const struct coll_tick *a = &c->tick[t], *b = &m->tick[t];
		uint32_t with_calls = 0;
		for (uint32_t i = 0; i < a->n; i++) {
			const struct coll_cell *cell = &a->cell[i];
			if (!cell->ops)
				continue; /* a RANK row of busy time only */
			with_calls++;
			const struct coll_cell *want = coll_tick_find(b, &a->key[i]);
			assert_non_null(want);
			assert_calls_equal(cell, want);
			if (a->key[i].kind == COLL_ROW_LAYER)
				assert_true(!cell->busy_ns && !cell->inflight && !cell->oldest_ns);
		}
		assert_int_equal(with_calls, b->n);
		ticks += b->n > 0;
	}
	assert_true(ticks > 3);
	/* with runs: many calls came in runs long enough for the leaf to add
	 * them at once (add_run, past its memo's first calls) */
	assert_true(coalesce_ns ? run_calls_seen > 10000 : run_calls_seen == 0);
	for (int t = 0; t < TICKS; t++) {
		coll_tick_free(&m->tick[t]);
		coll_tick_free(&c->tick[t]);
	}
	for (unsigned r = 0; r < RANKS; r++)
		iop_wl_free(&w[r]);
	coll_leaf_free(leaf);
	free(w);
	free(c);
	free(m);
}

static void leaf_matches_model_all_files(void **state)
{
	(void)state;
	leaf_matches_model(0, 0);
}

static void leaf_matches_model_folded(void **state)
{
	(void)state;
	leaf_matches_model(8, 0);
}

/* Frames with run records (1 s windows, as under `iopulse run`): the
 * leaf adds a run's calls at once, the model call by call as decoded. */
static void leaf_matches_model_runs(void **state)
{
	(void)state;
	leaf_matches_model(0, SEC);
	leaf_matches_model(8, SEC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(leaf_matches_model_all_files),
	    cmocka_unit_test(leaf_matches_model_folded),
	    cmocka_unit_test(leaf_matches_model_runs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

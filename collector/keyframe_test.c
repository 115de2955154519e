/* The keyframe: a state rebuilt from a keyframe taken mid-job, with the
 * later ticks applied, equals the root's state byte for byte; damaged
 * keyframes are refused cleanly. */
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "events.h"
#include "keyframe.h"
#include "sim.h"

#define SEC 1000000000ull
#define T0  (1700000000ull * SEC)

struct blob {
	uint8_t *p;
	size_t len;
};

struct recorder {
	uint64_t snap_at; /* ticks closed when the keyframe is taken */
	uint64_t seen;
	struct blob kf;
	struct blob *after; /* delta bodies of the ticks after the keyframe */
	size_t n_after, cap_after;
};

static void on_tick(void *arg, const struct coll_delta *d, const struct coll_state *s)
{
	struct recorder *r = arg;
	r->seen++;
	if (r->seen == r->snap_at) {
		size_t cap = 0;
		assert_int_equal(coll_state_encode_keyframe(s, 0, &r->kf.p, &cap, &r->kf.len), IOP_OK);
	} else if (r->seen > r->snap_at) {
		if (r->n_after == r->cap_after) {
			r->cap_after = r->cap_after ? 2 * r->cap_after : 64;
			r->after = realloc(r->after, r->cap_after * sizeof(*r->after));
			assert_non_null(r->after);
		}
		struct blob *b = &r->after[r->n_after++];
		size_t cap = 0;
		b->p = NULL;
		assert_int_equal(coll_delta_encode_body_buf(d, 1u << 30, &b->p, &cap, &b->len), IOP_OK);
	}
}

static void recorder_free(struct recorder *r)
{
	for (size_t i = 0; i < r->n_after; i++)
		free(r->after[i].p);
	free(r->after);
	free(r->kf.p);
}

/* A host name, so that the hosts are in the state too. */
static void add_host(struct coll_sim *sim, const char *name, uint64_t hash)
{
	struct coll_delta d;
	coll_delta_init(&d, (int64_t)(T0 / SEC), SEC);
	assert_int_equal(coll_delta_add_name(&d, hash, IOP_NAME_HOST, name, (uint32_t)strlen(name)),
	                 IOP_OK);
	assert_int_equal(coll_root_delta(sim->root, &d), IOP_OK);
	coll_delta_free(&d);
}

/* Runs a job of `seconds` seconds, takes a keyframe after `snap` ticks, and
 * checks keyframe + later deltas == the root's state. */
static void check_rebuild(const struct coll_history_cfg *h, unsigned ranks, unsigned seconds,
                          uint64_t snap)
{
	struct recorder r = {.snap_at = snap};
	struct coll_sim sim;
	assert_int_equal(coll_sim_new(&sim, ranks, IOP_WL_MIXED, T0, h, on_tick, &r), IOP_OK);
	add_host(&sim, "node-a", 0x1111000000000007ull);
	add_host(&sim, "node-b", 0x2222000000000008ull);
	assert_int_equal(coll_sim_run_until(&sim, T0 + seconds * SEC, 64), IOP_OK);
	assert_int_equal(coll_sim_finish(&sim), IOP_OK);
	assert_true(r.seen > snap);
	assert_non_null(r.kf.p);

	struct coll_state s;
	assert_int_equal(coll_state_decode_keyframe(&s, r.kf.p, r.kf.len), IOP_OK);
	/* the keyframe of the decoded state is the keyframe */
	uint8_t *again = NULL;
	size_t cap = 0, len;
	assert_int_equal(coll_state_encode_keyframe(&s, 0, &again, &cap, &len), IOP_OK);
	assert_int_equal(len, r.kf.len);
	assert_memory_equal(again, r.kf.p, len);
	free(again);
	assert_int_equal(s.n_hosts, 2);
	assert_string_equal(coll_state_host(&s, 0x00000007u), "node-a");

	struct coll_delta d;
	coll_delta_init(&d, 0, SEC);
	for (size_t i = 0; i < r.n_after; i++) {
		struct iop_rcur c = iop_rcur_make(r.after[i].p, r.after[i].len);
		assert_int_equal(coll_delta_decode_body(&d, &c), IOP_OK);
		assert_int_equal(coll_state_apply(&s, &d), IOP_OK);
	}
	const struct coll_state *root = coll_root_state(sim.root);
	assert_int_equal(s.ticks_applied, root->ticks_applied);
	assert_int_equal(s.last_t, root->last_t);
	assert_int_equal(s.mon.events, sim.events);
	assert_int_equal(coll_state_ranks_seen(&s), ranks);
	assert_true(coll_sim_same_state(&s, root));
	coll_delta_free(&d);
	coll_state_free(&s);
	coll_sim_free(&sim);
	recorder_free(&r);
}

/* More hosts than encode_hosts keeps on its stack (1024): its table is
 * mapped, and the keyframe holds every host all the same. */
static void many_hosts(void **state)
{
	(void)state;
	struct coll_sim sim;
	assert_int_equal(coll_sim_new(&sim, 1, IOP_WL_MIXED, T0, NULL, NULL, NULL), IOP_OK);
	enum { HOSTS = 1500 };
	for (unsigned i = 0; i < HOSTS; i++) {
		char name[32];
		snprintf(name, sizeof name, "node%04u", i);
		add_host(&sim, name, (uint64_t)(i + 1) << 32 | (i + 1));
	}
	assert_int_equal(coll_sim_run_until(&sim, T0 + 3 * SEC, 64), IOP_OK);
	const struct coll_state *root = coll_root_state(sim.root);
	uint8_t *kf = NULL, *again = NULL;
	size_t cap = 0, cap2 = 0, len, len2;
	assert_int_equal(coll_state_encode_keyframe(root, 0, &kf, &cap, &len), IOP_OK);
	struct coll_state s;
	assert_int_equal(coll_state_decode_keyframe(&s, kf, len), IOP_OK);
	assert_true(s.n_hosts >= HOSTS);
	assert_string_equal(coll_state_host(&s, 1), "node0000");
	assert_string_equal(coll_state_host(&s, HOSTS), "node1499");
	assert_int_equal(coll_state_encode_keyframe(&s, 0, &again, &cap2, &len2), IOP_OK);
	assert_int_equal(len2, len);
	assert_memory_equal(again, kf, len);
	assert_true(coll_sim_same_state(&s, root));
	free(kf);
	free(again);
	coll_state_free(&s);
	coll_sim_free(&sim);
}

/* Small tiers, so that every ring wraps and bins fold before and after
 * the keyframe. */
static void rebuild_small_tiers(void **state)
{
	(void)state;
	struct coll_history_cfg h = {.full_ticks = 6, .bin1_ticks = 3, .bin1_count = 3,
	                             .bin2_ticks = 9, .bin2_count = 3};
	check_rebuild(&h, 3, 70, 37);
}

static void rebuild_default_tiers(void **state)
{
	(void)state;
	check_rebuild(NULL, 2, 20, 9);
}

/* A job's tick size as the budget counts it, for a budget of a few ticks. */
static uint64_t typical_tick_bytes(unsigned ranks)
{
	struct coll_sim sim;
	assert_int_equal(coll_sim_new(&sim, ranks, IOP_WL_MIXED, T0, NULL, NULL, NULL), IOP_OK);
	assert_int_equal(coll_sim_run_until(&sim, T0 + 8 * SEC, 64), IOP_OK);
	const struct coll_tick *k = coll_state_last(coll_root_state(sim.root));
	assert_non_null(k);
	uint64_t b = coll_tick_bytes(k);
	coll_sim_free(&sim);
	return b;
}

/* A budget of a few ticks: the oldest ticks and bins are thinned to their
 * LAYER rows before and after the keyframe, the same ones in the rebuilt
 * state as in the root's; the newest keep every row, the layers' bytes
 * stay whole. */
static void rebuild_thinned_history(void **state)
{
	(void)state;
	uint64_t tick = typical_tick_bytes(3);
	struct coll_history_cfg h = {.full_ticks = 12, .bin1_ticks = 3, .bin1_count = 4,
	                             .bin2_ticks = 9, .bin2_count = 3, .max_bytes = 20 * tick};
	check_rebuild(&h, 3, 70, 37);

	struct coll_sim sim;
	assert_int_equal(coll_sim_new(&sim, 3, IOP_WL_MIXED, T0, &h, NULL, NULL), IOP_OK);
	assert_int_equal(coll_sim_run_until(&sim, T0 + 70 * SEC, 64), IOP_OK);
	const struct coll_state *s = coll_root_state(sim.root);
	assert_true(s->thinned > 0);
	assert_true(s->history_bytes <= h.max_bytes);
	uint64_t sum = 0;
	for (int i = 0; i < 3; i++)
		for (uint32_t j = 0; j < s->tier[i].n; j++)
			sum += coll_tick_bytes(&s->tier[i].v[(s->tier[i].head + j) % s->tier[i].cap]);
	assert_int_equal(sum, s->history_bytes);
	const struct coll_tier *t0 = &s->tier[0];
	for (uint32_t j = 0; j < COLL_HISTORY_KEEP; j++)
		assert_false(coll_tick_thinned(&t0->v[(t0->head + t0->n - 1 - j) % t0->cap]));
	assert_true(coll_tick_thinned(&s->tier[2].v[s->tier[2].head]));
	/* every tick's layer rows are still there: the history's POSIX write
	 * bytes over tier 0 equal those of the ticks' RANK rows before thinning
	 * could not be checked here, so check that thinned ones have them */
	const struct coll_tick *old = &s->tier[2].v[s->tier[2].head];
	uint64_t layer_bytes = 0;
	for (uint32_t i = 0; i < old->n; i++)
		layer_bytes += old->cell[i].bytes;
	assert_true(layer_bytes > 0);
	coll_sim_free(&sim);
}

/* The history keeps its ticks packed (coll_tick_pack), all but each
 * tier's newest: the same rows, quantiles and budget bytes as unpacked. */
static void history_packed(void **state)
{
	(void)state;
	struct coll_sim sim;
	assert_int_equal(coll_sim_new(&sim, 3, IOP_WL_MIXED, T0, NULL, NULL, NULL), IOP_OK);
	assert_int_equal(coll_sim_run_until(&sim, T0 + 20 * SEC, 64), IOP_OK);
	const struct coll_tier *t0 = &coll_root_state(sim.root)->tier[0];
	assert_true(t0->n > 10);
	unsigned narrow = 0;
	for (uint32_t j = 0; j + 1 < t0->n; j++) {
		const struct coll_tick *k = &t0->v[(t0->head + j) % t0->cap];
		for (uint32_t i = 0; i < k->n; i++) {
			const struct iop_hist *h = &k->cell[i].hist;
			if (h->count)
				assert_true(h->borrowed); /* in the tick's own block */
			narrow += h->width == 1;
		}
	}
	assert_true(narrow > 0);
	/* the newest tick, copied, then packed: the same contents and bytes */
	const struct coll_tick *last = coll_state_last(coll_root_state(sim.root));
	struct coll_tick a, b;
	coll_tick_init(&a, last->t, last->tick_ns);
	coll_tick_init(&b, last->t, last->tick_ns);
	assert_int_equal(coll_tick_copy(&a, last), IOP_OK);
	assert_int_equal(coll_tick_copy(&b, last), IOP_OK);
	uint64_t bytes = coll_tick_bytes(&a);
	assert_int_equal(coll_tick_pack(&a), IOP_OK);
	assert_int_equal(coll_tick_bytes(&a), bytes);
	assert_int_equal(a.n, b.n);
	for (uint32_t i = 0; i < a.n; i++) {
		assert_true(a.cell[i].hist.count == 0 || a.cell[i].hist.borrowed);
		for (int q = 0; q <= 100; q++)
			assert_int_equal(iop_hist_quantile(&a.cell[i].hist, q / 100.0),
			                 iop_hist_quantile(&b.cell[i].hist, q / 100.0));
	}
	/* merging into a packed tick works as into any */
	assert_int_equal(coll_tick_merge(&a, last), IOP_OK);
	assert_int_equal(coll_tick_merge(&b, last), IOP_OK);
	for (uint32_t i = 0; i < a.n; i++)
		assert_int_equal(iop_hist_quantile(&a.cell[i].hist, 0.9),
		                 iop_hist_quantile(&b.cell[i].hist, 0.9));
	coll_tick_free(&a);
	coll_tick_free(&b);
	/* rows without a latency (no call ended in the tick): nothing to pack */
	struct coll_tick e;
	coll_tick_init(&e, 0, SEC);
	struct coll_cell *c;
	assert_int_equal(coll_tick_row(&e, &(struct coll_key){.kind = COLL_ROW_LAYER}, &c), IOP_OK);
	c->inflight = 1;
	assert_int_equal(coll_tick_pack(&e), IOP_OK);
	assert_int_equal(e.cell[0].inflight, 1);
	assert_null(e.arena);
	coll_tick_free(&e);
	coll_sim_free(&sim);
}

static void empty_state_round_trip(void **state)
{
	(void)state;
	struct coll_state s, back;
	coll_state_init(&s, SEC / 10, NULL);
	uint8_t *buf = NULL;
	size_t cap = 0, len;
	assert_int_equal(coll_state_encode_keyframe(&s, 0, &buf, &cap, &len), IOP_OK);
	assert_int_equal(coll_state_decode_keyframe(&back, buf, len), IOP_OK);
	assert_int_equal(back.tick_ns, SEC / 10);
	assert_int_equal(back.first_t, INT64_MIN);
	assert_int_equal(back.tier[0].cap, s.tier[0].cap);
	assert_true(coll_sim_same_state(&s, &back));
	free(buf);
	coll_state_free(&s);
	coll_state_free(&back);
}

/* A keyframe of a real job, for the damage tests. */
static void job_keyframe(uint8_t **kf, size_t *len)
{
	struct coll_history_cfg h = {.full_ticks = 6, .bin1_ticks = 3, .bin1_count = 3,
	                             .bin2_ticks = 9, .bin2_count = 2};
	struct coll_sim sim;
	assert_int_equal(coll_sim_new(&sim, 2, IOP_WL_MIXED, T0, &h, NULL, NULL), IOP_OK);
	add_host(&sim, "node-a", 0x1111000000000007ull);
	assert_int_equal(coll_sim_run_until(&sim, T0 + 14 * SEC, 32), IOP_OK);
	size_t cap = 0;
	*kf = NULL;
	assert_int_equal(coll_state_encode_keyframe(coll_root_state(sim.root), 0, kf, &cap, len),
	                 IOP_OK);
	coll_sim_free(&sim);
}

/* Keyframes written before this version still decode: versions 5 (ticks
 * of delta version 4, no ranks' distribution at the end) and 6 (ticks of
 * delta version 5, row after row) of a state without FS rows (thinned to
 * its LAYER rows here), as those writers wrote them, decode to the same
 * state. */
static void old_keyframes_read(void **state)
{
	(void)state;
	uint8_t *kf;
	size_t len;
	job_keyframe(&kf, &len);
	struct coll_state s, back;
	assert_int_equal(coll_state_decode_keyframe(&s, kf, len), IOP_OK);
	free(kf);
	/* the sim's files lie on this machine's file systems: each file's is
	 * held in its entry (names.h), and a keyframe gives it back so */
	assert_true(s.names.n_file_fs > 0);
	uint32_t held = 0;
	for (uint32_t i = 0; i < s.names.n; i++) {
		uint64_t fs;
		assert_int_not_equal(s.names.v[i].kind, COLL_NAME_FILE_FS);
		if (s.names.v[i].fs) {
			assert_true(coll_names_file_fs(&s.names, s.names.v[i].hash, &fs));
			assert_non_null(coll_names_get(&s.names, fs)); /* the file system's name */
			held++;
		}
	}
	assert_int_equal(held, s.names.n_file_fs);
	for (int i = 0; i < 3; i++)
		for (uint32_t j = 0; j < s.tier[i].n; j++)
			assert_int_equal(coll_tick_thin(&s.tier[i].v[(s.tier[i].head + j) % s.tier[i].cap]),
			                 IOP_OK);
	coll_state_history_measure(&s);
	/* versions 5 (no distribution), 6 (ticks row after row) and 7 (no
	 * node series; this job has no node samples) */
	size_t cap = 2 * len + 4096;
	uint8_t *buf = malloc(cap);
	assert_non_null(buf);
	for (unsigned v = 5; v <= 7; v++) {
		struct iop_wcur w = iop_wcur_make(buf, cap);
		coll_state_encode_keyframe_v(&s, &w, v);
		assert_int_equal(w.err, IOP_OK);
		size_t n = (size_t)(w.p - buf);
		assert_int_equal(buf[4] | buf[5] << 8, v);
		assert_int_equal(coll_state_decode_keyframe(&back, buf, n), IOP_OK);
		assert_true(coll_sim_same_state(&s, &back));
		assert_int_equal(back.dist.ranks, 0);
		coll_state_free(&back);
		/* a byte more is a byte left over */
		buf[n] = 0;
		assert_int_equal(coll_state_decode_keyframe(&back, buf, n + 1), IOP_ERR_INCONSISTENT);
		coll_state_free(&back);
	}
	free(buf);
	coll_state_free(&s);
}

/* Node samples: the latest, the peaks and the series (version 8) come
 * back; version 7 had no series, and reads as an empty one. */
static void node_series_kept(void **state)
{
	(void)state;
	struct coll_state s, back;
	coll_state_init(&s, SEC, NULL);
	for (int64_t t = 10; t < 20; t++) {
		struct coll_delta d;
		coll_delta_init(&d, t, SEC);
		struct coll_node_sample x = {.t = t, .node = 77, .flags = COLL_NODE_FULL,
		                             .psi_full_ppm = (uint32_t)(t * 1000), .n_fs = 1};
		x.fs[0] = (struct coll_node_fs){.fs = 5, .kind = COLL_NODE_FS_DEVICE, .util_ppm = 900000};
		assert_int_equal(coll_nodeset_put(&d.nodes, &x), IOP_OK);
		assert_int_equal(coll_state_apply(&s, &d), IOP_OK);
		coll_delta_free(&d);
	}
	uint8_t buf[8192];
	for (unsigned v = 7; v <= COLL_KEYFRAME_VERSION; v++) {
		struct iop_wcur w = iop_wcur_make(buf, sizeof buf);
		coll_state_encode_keyframe_v(&s, &w, v);
		assert_int_equal(w.err, IOP_OK);
		assert_int_equal(coll_state_decode_keyframe(&back, buf, (size_t)(w.p - buf)), IOP_OK);
		assert_int_equal(coll_nodeset_find(&back.nodes, 77)->psi_full_ppm, 19000);
		assert_int_equal(back.series.cap, s.series.cap);
		if (v == 7) {
			assert_int_equal(back.series.n, 0);
		} else {
			assert_int_equal(back.series.n, 10);
			const struct coll_node_point *p = coll_node_series_at(&back.series, 12, 77);
			assert_non_null(p);
			assert_int_equal(p->full_ppm, 12000);
			assert_int_equal(p->util_ppm, 900000);
			assert_true(coll_sim_same_state(&s, &back));
		}
		coll_state_free(&back);
	}
	coll_state_free(&s);
}

static void damaged_keyframes_refused(void **state)
{
	(void)state;
	uint8_t *kf;
	size_t len;
	job_keyframe(&kf, &len);
	struct coll_state s;
	/* every prefix fails and leaves an empty state */
	for (size_t cut = 0; cut < len; cut += 1 + cut / 25) {
		assert_int_not_equal(coll_state_decode_keyframe(&s, kf, cut), IOP_OK);
		assert_int_equal(s.ticks_applied, 0);
		assert_int_equal(s.names.n, 0);
		assert_int_equal(s.tier[0].n, 0);
		coll_state_free(&s);
	}
	/* bytes left over, wrong magic, a newer version */
	uint8_t *more = malloc(len + 1);
	memcpy(more, kf, len);
	more[len] = 0;
	assert_int_equal(coll_state_decode_keyframe(&s, more, len + 1), IOP_ERR_INCONSISTENT);
	coll_state_free(&s);
	more[0] ^= 1;
	assert_int_equal(coll_state_decode_keyframe(&s, more, len), IOP_ERR_BAD_MAGIC);
	coll_state_free(&s);
	more[0] ^= 1;
	more[4] = COLL_KEYFRAME_VERSION + 1;
	assert_int_equal(coll_state_decode_keyframe(&s, more, len), IOP_ERR_BAD_VERSION);
	coll_state_free(&s);
	more[4] = COLL_KEYFRAME_VERSION;
	/* any flipped byte: decodes or is refused, never crashes or leaks
	 * (the sanitizer build checks) */
	for (size_t i = 0; i < len; i += 1 + i / 60) {
		more[i] ^= 0x5a;
		(void)coll_state_decode_keyframe(&s, more, len);
		coll_state_free(&s);
		more[i] ^= 0x5a;
	}
	free(more);
	free(kf);
}

/* Counts that claim more than the bytes behind them are refused before
 * anything is allocated for them. */
static void huge_counts_refused(void **state)
{
	(void)state;
	uint8_t buf[64];
	struct iop_wcur w = iop_wcur_make(buf, sizeof buf);
	iop_put_u32le(&w, COLL_KEYFRAME_MAGIC);
	iop_put_u16le(&w, 1); /* the layout before the budget: still read */
	iop_put_u16le(&w, 0);
	iop_put_varint(&w, SEC);
	for (int i = 0; i < 3; i++) {
		iop_put_varint(&w, COLL_KEYFRAME_MAX_TIER); /* cap */
		iop_put_varint(&w, 1);
	}
	iop_put_svarint(&w, 1);
	iop_put_svarint(&w, 2);
	iop_put_varint(&w, 2);
	for (int i = 0; i < 7; i++)
		iop_put_varint(&w, 0);
	iop_put_varint(&w, IOP_LAYER__COUNT);
	for (int i = 0; i < IOP_LAYER__COUNT; i++)
		iop_put_varint(&w, 0);
	iop_put_varint(&w, 0);         /* names refused */
	iop_put_varint(&w, 1u << 19);  /* names: far more than the bytes left */
	struct coll_state s;
	assert_int_equal(coll_state_decode_keyframe(&s, buf, (size_t)(w.p - buf)),
	                 IOP_ERR_TRUNCATED);
	coll_state_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(many_hosts),
		cmocka_unit_test(rebuild_small_tiers),
		cmocka_unit_test(rebuild_default_tiers),
		cmocka_unit_test(rebuild_thinned_history),
		cmocka_unit_test(history_packed),
		cmocka_unit_test(empty_state_round_trip),
		cmocka_unit_test(old_keyframes_read),
		cmocka_unit_test(node_series_kept),
		cmocka_unit_test(damaged_keyframes_refused),
		cmocka_unit_test(huge_counts_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

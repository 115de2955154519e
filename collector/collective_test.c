/* Unit tests for collective calls matched across ranks (collective.h): the
 * instance set, its encoding, and the root's matching into tick rows. */
#include "test_util.h"

#include <stdlib.h>
#include <string.h>

#include "collective.h"
#include "events.h"

#define MS  1000000ull
#define F1  0x1111222233334444ull
#define F2  0x5555666677778888ull

static void arrive(struct coll_instset *s, uint64_t file, uint32_t seq, uint32_t size,
                   uint32_t rank, uint64_t dur, uint64_t excl)
{
	struct coll_arrival a = {.dur_ns = dur, .excl_ns = excl, .rank = rank};
	assert_int_equal(coll_instset_add(s, file, IOP_LAYER_MPIIO, IOP_OP_WRITE_COLL, seq, size, &a),
	                 IOP_OK);
}

static const struct coll_cell *rank_cell(const struct coll_tick *k, uint32_t rank)
{
	struct coll_key key = coll_key_rank(rank, IOP_LAYER_MPIIO, IOP_CLASS_WRITE);
	return coll_tick_find(k, &key);
}

/* Instances are keyed by (file, layer, number); arrivals join theirs. */
static void set_keys_instances(void **state)
{
	struct coll_instset s = {0};
	for (uint32_t seq = 1; seq <= 300; seq++)
		for (uint32_t r = 0; r < 4; r++)
			arrive(&s, seq % 2 ? F1 : F2, seq, 4, r, 10 * MS + r, 10 * MS + r);
	assert_int_equal(s.n, 300);
	assert_int_equal(s.na, 1200);
	for (uint32_t i = 0; i < s.n; i++)
		assert_int_equal(s.v[i].n, 4);
	coll_instset_free(&s);
}

/* Encode, decode: the same instances and arrivals; merging two halves. */
static void encode_decode_merge(void **state)
{
	struct coll_instset a = {0}, b = {0}, m = {0}, d = {0};
	for (uint32_t r = 0; r < 3; r++)
		arrive(&a, F1, 7, 6, r, 150 * MS + r, 150 * MS + r - (r == 1 ? 2 * MS : 0));
	for (uint32_t r = 3; r < 6; r++)
		arrive(&b, F1, 7, 6, r, r == 5 ? 1 * MS : 151 * MS, r == 5 ? 1 * MS : 151 * MS);
	assert_int_equal(coll_instset_merge(&m, &a), IOP_OK);
	assert_int_equal(coll_instset_merge(&m, &b), IOP_OK);
	assert_int_equal(m.n, 1);
	assert_int_equal(m.v[0].n, 6);
	uint8_t buf[4096];
	struct iop_wcur w = iop_wcur_make(buf, sizeof buf);
	coll_instset_encode(&m, &w);
	assert_int_equal(w.err, IOP_OK);
	struct iop_rcur r = iop_rcur_make(buf, (size_t)(w.p - buf));
	assert_int_equal(coll_instset_decode(&d, &r), IOP_OK);
	assert_int_equal(iop_rcur_left(&r), 0);
	assert_int_equal(d.n, 1);
	assert_int_equal(d.v[0].n, 6);
	assert_int_equal(d.v[0].seq, 7);
	assert_int_equal(d.v[0].size, 6);
	uint32_t i = 0;
	for (uint32_t at = d.v[0].head; at; at = d.a[at - 1].next, i++) {
		const struct coll_arrival *x = &d.a[at - 1];
		const struct coll_arrival *y = i < 3 ? &a.a[i] : &b.a[i - 3];
		assert_int_equal(x->rank, y->rank);
		assert_int_equal(x->dur_ns, y->dur_ns);
		assert_int_equal(x->excl_ns, y->excl_ns);
	}
	assert_int_equal(i, 6);
	/* out of range: op, a number 0, a child time above the duration */
	uint8_t bad[64];
	size_t n = (size_t)(w.p - buf);
	memcpy(bad, buf, n < sizeof bad ? n : sizeof bad);
	bad[1 + 8] = (uint8_t)(IOP_LAYER_MPIIO << 5 | 31);
	r = iop_rcur_make(bad, n);
	coll_instset_clear(&d);
	assert_int_equal(coll_instset_decode(&d, &r), IOP_ERR_MALFORMED);
	memcpy(bad, buf, n);
	bad[1 + 9] = 0; /* the number */
	r = iop_rcur_make(bad, n);
	assert_int_equal(coll_instset_decode(&d, &r), IOP_ERR_MALFORMED);
	r = iop_rcur_make(buf, n - 1);
	assert_int_not_equal(coll_instset_decode(&d, &r), IOP_OK);
	coll_instset_free(&a);
	coll_instset_free(&b);
	coll_instset_free(&m);
	coll_instset_free(&d);
}

/* The late rank (shortest duration) waits nothing; the others wait their
 * duration minus it, but only their exclusive time beyond the late rank's
 * (an aggregator's POSIX writes are not waiting). */
static void match_waits_and_last(void **state)
{
	struct coll_matcher m = {0};
	struct coll_instset s = {0};
	struct coll_tick k;
	coll_tick_init(&k, 100, 1000 * MS);
	arrive(&s, F1, 1, 4, 0, 160 * MS, 40 * MS);  /* aggregator: 120 ms in POSIX writes */
	arrive(&s, F1, 1, 4, 1, 155 * MS, 155 * MS);
	arrive(&s, F1, 1, 4, 2, 152 * MS, 152 * MS);
	arrive(&s, F1, 1, 4, 3, 5 * MS, 5 * MS);     /* the late one */
	coll_match_close(&m, &s, &k, false);
	assert_int_equal(s.n, 0);
	assert_int_equal(m.pending.n, 0);
	assert_int_equal(rank_cell(&k, 0)->wait_ns, 35 * MS);
	assert_int_equal(rank_cell(&k, 1)->wait_ns, 150 * MS);
	assert_int_equal(rank_cell(&k, 2)->wait_ns, 147 * MS);
	assert_int_equal(rank_cell(&k, 3)->wait_ns, 0);
	for (uint32_t r = 0; r < 4; r++) {
		assert_int_equal(rank_cell(&k, r)->match_ops, 1);
		assert_int_equal(rank_cell(&k, r)->last_ops, r == 3);
	}
	assert_int_equal(rank_cell(&k, 3)->late_ns, (35 + 150 + 147) * MS / 3);
	struct coll_key fk = coll_key_file(F1, IOP_LAYER_MPIIO, IOP_CLASS_WRITE);
	struct coll_key lk = coll_key_layer(IOP_LAYER_MPIIO, IOP_CLASS_WRITE);
	assert_int_equal(coll_tick_find(&k, &fk)->wait_ns, (35 + 150 + 147) * MS);
	assert_int_equal(coll_tick_find(&k, &fk)->match_ops, 4);
	assert_int_equal(coll_tick_find(&k, &lk)->last_ops, 1);
	assert_int_equal(m.matched, 1);
	coll_tick_free(&k);
	coll_instset_free(&s);
	coll_matcher_free(&m);
}

/* HDF5 over MPI-IO: the wait happens in the MPI-IO call; the H5Dwrite
 * around it (its MPI-IO call's time is its children's) counts only its
 * exclusive time beyond the late rank's, so a rank's waits at the two
 * layers add up to the time it waited once. */
static void nested_layers_count_once(void **state)
{
	struct coll_matcher m = {0};
	struct coll_instset s = {0};
	struct coll_tick k;
	coll_tick_init(&k, 100, 1000 * MS);
	/* MPI-IO write_at_all: ranks 0-2 wait 150 ms for rank 3 */
	for (uint32_t r = 0; r < 4; r++)
		arrive(&s, F1, 9, 4, r, r == 3 ? 4 * MS : 154 * MS, r == 3 ? 4 * MS : 154 * MS);
	/* H5Dwrite around it: 2 ms of HDF5's own work on every rank */
	for (uint32_t r = 0; r < 4; r++) {
		struct coll_arrival a = {.dur_ns = (r == 3 ? 4 : 154) * MS + 2 * MS,
		                         .excl_ns = 2 * MS, .rank = r};
		assert_int_equal(coll_instset_add(&s, F2, IOP_LAYER_HDF5, IOP_OP_WRITE_COLL, 5, 4, &a),
		                 IOP_OK);
	}
	coll_match_close(&m, &s, &k, false);
	struct coll_key h = coll_key_rank(0, IOP_LAYER_HDF5, IOP_CLASS_WRITE);
	assert_int_equal(rank_cell(&k, 0)->wait_ns, 150 * MS);
	assert_int_equal(coll_tick_find(&k, &h)->wait_ns, 0);
	assert_int_equal(coll_tick_find(&k, &h)->match_ops, 1);
	struct coll_key h3 = coll_key_rank(3, IOP_LAYER_HDF5, IOP_CLASS_WRITE);
	assert_int_equal(coll_tick_find(&k, &h3)->last_ops, 1);
	coll_tick_free(&k);
	coll_instset_free(&s);
	coll_matcher_free(&m);
}

/* An instance missing ranks waits COLL_MATCH_WAIT_TICKS ticks for them,
 * then is matched with what came; parts arriving over two ticks join; a
 * rank sent twice counts once; a lone arrival matches nothing. */
static void pending_then_matched(void **state)
{
	struct coll_matcher m = {0};
	struct coll_instset s = {0};
	struct coll_tick k;
	coll_tick_init(&k, 10, 1000 * MS);
	arrive(&s, F1, 1, 3, 0, 100 * MS, 100 * MS);
	arrive(&s, F2, 1, 3, 0, 9 * MS, 9 * MS); /* alone for good */
	coll_match_close(&m, &s, &k, false);
	assert_int_equal(m.pending.n, 2);
	assert_null(rank_cell(&k, 0));
	coll_tick_reset(&k, 11);
	arrive(&s, F1, 1, 3, 1, 10 * MS, 10 * MS);
	arrive(&s, F1, 1, 3, 1, 10 * MS, 10 * MS); /* sent again */
	coll_match_close(&m, &s, &k, false);
	assert_int_equal(m.pending.n, 2); /* 3 arrivals of 3 ranks, but rank 1 twice */
	coll_tick_reset(&k, 12);
	coll_match_close(&m, &s, &k, false); /* 2 ticks on: matched as it is */
	assert_int_equal(m.pending.n, 0);
	assert_int_equal(rank_cell(&k, 0)->wait_ns, 90 * MS);
	assert_int_equal(rank_cell(&k, 1)->last_ops, 1);
	assert_int_equal(rank_cell(&k, 1)->match_ops, 1);
	assert_int_equal(m.matched, 1);
	/* flush matches whatever is left */
	coll_tick_reset(&k, 13);
	arrive(&s, F1, 2, 3, 0, 50 * MS, 50 * MS);
	arrive(&s, F1, 2, 3, 2, 20 * MS, 20 * MS);
	coll_match_close(&m, &s, &k, true);
	assert_int_equal(m.pending.n, 0);
	assert_int_equal(rank_cell(&k, 0)->wait_ns, 30 * MS);
	assert_int_equal(m.matched, 2);
	coll_tick_free(&k);
	coll_instset_free(&s);
	coll_matcher_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(set_keys_instances),
		cmocka_unit_test(encode_decode_merge),
		cmocka_unit_test(match_waits_and_last),
		cmocka_unit_test(nested_layers_count_once),
		cmocka_unit_test(pending_then_matched),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

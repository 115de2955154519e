/* The nodes' figures tick by tick (series.h): what a tick keeps of each
 * node's sample, the window of ticks it keeps, and its encoding, with
 * every malformed form refused. */
#include <stdlib.h>
#include <string.h>

#include "series.h"
#include "test_util.h"

/* Two nodes' samples of a tick: node 9 with PSI and two devices, node 4
 * without PSI nor devices. */
static void tick_samples(struct coll_nodeset *x, int64_t t)
{
	x->n = 0;
	struct coll_node_sample a = {.t = t, .node = 9, .flags = COLL_NODE_PSI | COLL_NODE_FULL,
	                             .psi_some_ppm = 300000, .psi_full_ppm = (uint32_t)(1000 * t),
	                             .n_fs = 3};
	a.fs[0] = (struct coll_node_fs){.fs = 1, .kind = COLL_NODE_FS_DEVICE, .util_ppm = 200000};
	a.fs[1] = (struct coll_node_fs){.fs = 2, .kind = COLL_NODE_FS_DEVICE, .util_ppm = 700000};
	a.fs[2] = (struct coll_node_fs){.fs = 3, .kind = COLL_NODE_FS_NET, .util_ppm = 0};
	struct coll_node_sample b = {.t = t, .node = 4, .flags = COLL_NODE_IOWAIT};
	assert_int_equal(coll_nodeset_put(x, &a), IOP_OK);
	assert_int_equal(coll_nodeset_put(x, &b), IOP_OK);
}

static void points_and_window(void **st)
{
	(void)st;
	struct coll_node_series s;
	struct coll_nodeset x = {0};
	coll_node_series_init(&s, 5);
	for (int64_t t = 100; t < 110; t++) {
		if (t == 104)
			continue; /* a tick no node sampled */
		tick_samples(&x, t);
		assert_int_equal(coll_node_series_push(&s, t, &x), IOP_OK);
	}
	/* ticks 105-109 kept; 100-104 older than the window */
	assert_int_equal(s.n, 5);
	assert_null(coll_node_series_at(&s, 103, 9));
	assert_null(coll_node_series_at(&s, 110, 9));
	const struct coll_node_point *p = coll_node_series_at(&s, 107, 9);
	assert_non_null(p);
	assert_int_equal(p->full_ppm, 107000);
	assert_int_equal(p->util_ppm, 700000); /* the busiest device, not the client */
	p = coll_node_series_at(&s, 107, 4);
	assert_non_null(p);
	assert_int_equal(p->full_ppm, COLL_NODE_UNKNOWN);
	assert_int_equal(p->util_ppm, COLL_NODE_UNKNOWN);
	assert_null(coll_node_series_at(&s, 107, 5));
	/* an older tick is ignored, the newest again replaces it */
	tick_samples(&x, 50);
	assert_int_equal(coll_node_series_push(&s, 106, &x), IOP_OK);
	assert_int_equal(coll_node_series_at(&s, 106, 9)->full_ppm, 106000);
	assert_int_equal(coll_node_series_push(&s, 109, &x), IOP_OK);
	assert_int_equal(coll_node_series_at(&s, 109, 9)->full_ppm, 50000);
	assert_int_equal(s.n, 5);
	/* a gap longer than the window leaves the new tick alone */
	tick_samples(&x, 300);
	assert_int_equal(coll_node_series_push(&s, 300, &x), IOP_OK);
	assert_int_equal(s.n, 1);
	assert_non_null(coll_node_series_at(&s, 300, 4));
	/* empty samples take no room; a series of capacity 0 keeps nothing */
	struct coll_nodeset none = {0};
	assert_int_equal(coll_node_series_push(&s, 301, &none), IOP_OK);
	assert_int_equal(s.n, 1);
	coll_node_series_free(&s);
	coll_node_series_init(&s, 0);
	assert_int_equal(coll_node_series_push(&s, 1, &x), IOP_OK);
	assert_int_equal(s.n, 0);
	coll_node_series_free(&s);
	coll_nodeset_free(&x);
}

static size_t encode(const struct coll_node_series *s, uint8_t *buf, size_t cap)
{
	struct iop_wcur w = iop_wcur_make(buf, cap);
	coll_node_series_encode(s, &w);
	assert_int_equal(w.err, IOP_OK);
	return (size_t)(w.p - buf);
}

static void round_trip_and_refusals(void **st)
{
	(void)st;
	struct coll_node_series s, back;
	struct coll_nodeset x = {0};
	coll_node_series_init(&s, 4);
	for (int64_t t = -2; t < 3; t++) {
		tick_samples(&x, t < 0 ? 1 : t);
		assert_int_equal(coll_node_series_push(&s, t, &x), IOP_OK);
	}
	uint8_t buf[512], again[512];
	size_t n = encode(&s, buf, sizeof buf);
	coll_node_series_init(&back, 0);
	struct iop_rcur r = iop_rcur_make(buf, n);
	assert_int_equal(coll_node_series_decode(&back, &r), IOP_OK);
	assert_int_equal(iop_rcur_left(&r), 0);
	assert_int_equal(back.cap, 4);
	assert_int_equal(back.n, 4);
	assert_int_equal(coll_node_series_at(&back, 2, 9)->full_ppm, 2000);
	assert_int_equal(coll_node_series_at(&back, -1, 4)->util_ppm, COLL_NODE_UNKNOWN);
	assert_int_equal(encode(&back, again, sizeof again), n);
	assert_memory_equal(again, buf, n);
	/* every prefix fails and leaves it empty */
	for (size_t cut = 0; cut < n; cut++) {
		r = iop_rcur_make(buf, cut);
		assert_int_not_equal(coll_node_series_decode(&back, &r), IOP_OK);
		assert_int_equal(back.n, 0);
	}
	/* hand-made forms: cap, ticks, t, points, node, full + 1, util + 1 */
	static const struct {
		uint8_t b[24];
		size_t len;
		enum iop_err want;
	} bad[] = {
	    {{0x80, 0x80, 0x80, 0x01}, 4, IOP_ERR_MALFORMED}, /* cap 2^21 */
	    {{2, 3, 0}, 3, IOP_ERR_OVERSIZED},                /* 3 ticks, cap 2 */
	    {{2, 1, 0, 0}, 10, IOP_ERR_MALFORMED},            /* a tick of no node */
	    {{2, 1, 0, 1, 5, 0, 0, 0, 0xc2, 0x84, 0x3d, 0}, 12, IOP_ERR_MALFORMED}, /* 10^6 + 1 */
	    {{2, 1, 0, 2, 5, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0}, 16, IOP_ERR_MALFORMED}, /* node twice */
	    {{2, 2, 2, 1, 5, 0, 0, 0, 0, 0, 1, 1, 5, 0, 0, 0, 0, 0}, 18, IOP_ERR_MALFORMED}, /* t back */
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		r = iop_rcur_make(bad[i].b, bad[i].len);
		assert_int_equal(coll_node_series_decode(&back, &r), bad[i].want);
		assert_int_equal(back.n, 0);
	}
	/* and the good form of the last: t 1 then 2, full 10^6 (+ 1) */
	static const uint8_t good[] = {2, 2, 2, 1, 5, 0, 0, 0, 0, 0, 4, 1, 5, 0, 0, 0, 0xc1, 0x84, 0x3d, 0};
	r = iop_rcur_make(good, sizeof good);
	assert_int_equal(coll_node_series_decode(&back, &r), IOP_OK);
	assert_int_equal(coll_node_series_at(&back, 2, 5)->full_ppm, 1000000);
	assert_int_equal(coll_node_series_at(&back, 1, 5)->full_ppm, COLL_NODE_UNKNOWN);
	coll_node_series_free(&back);
	coll_node_series_free(&s);
	coll_nodeset_free(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(points_and_window),
	    cmocka_unit_test(round_trip_and_refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Unit tests for the diagnosis rules: each fires on a clearly bad pattern
 * kept up at volume, with the right subject, and stays quiet on the healthy
 * pattern next to it (large sequential or collective transfers, a few
 * opens and syncs around a checkpoint, a short burst of small writes). */
#include <stdio.h>
#include <string.h>

#include "alert_int.h" /* sum_hook, for no_collective */
#include "alert_synth.h"
#include "events.h"
#include "test_util.h"

#define TICKS 30

/* What every rank does in one tick. */
typedef void (*pattern_fn)(struct synth *s, uint32_t rank, void *arg);

struct run {
	struct coll_alerts *a;
	struct synth s;
	struct synth_log log;
};

static void run_pattern(struct run *r, uint32_t ranks, pattern_fn fn, void *arg,
                        const struct coll_alert_ctx *ctx)
{
	struct coll_rules rules;
	coll_rules_default(&rules);
	assert_int_equal(coll_alerts_new(&rules, &r->a), IOP_OK);
	synth_init(&r->s, 7);
	memset(&r->log, 0, sizeof(r->log));
	for (int64_t i = 0; i < TICKS; i++) {
		synth_begin(&r->s, SYNTH_T0 + i);
		for (uint32_t k = 0; k < ranks; k++)
			fn(&r->s, k, arg);
		r->log.now = i;
		assert_int_equal(coll_alerts_tick(r->a, &r->s.tick, ctx, synth_collect, &r->log),
		                 IOP_OK);
	}
}

static void run_free(struct run *r)
{
	coll_alerts_free(r->a);
	synth_free(&r->s);
	synth_log_free(&r->log);
}

/* The run reported a start of kind (and nothing else when only). */
static const struct synth_alert *expect(const struct run *r, enum coll_alert_kind kind)
{
	const struct synth_alert *x = synth_find(&r->log, kind, COLL_ALERT_START);
	if (!x) {
		synth_dump(&r->log);
		fail_msg("no %s alert", coll_alert_kind_name(kind));
	}
	return x;
}

static void expect_none(const struct run *r)
{
	if (r->log.n) {
		synth_dump(&r->log);
		fail_msg("%zu alerts on a healthy pattern", r->log.n);
	}
}

/* Data calls: n of `bytes`, latency lat, sequential share seq. */
struct data {
	unsigned layer, cls;
	uint64_t n, bytes;
	double lat, seq;
	double fwd, stride; /* sequential and strided shares (the rest random) */
	uint64_t children, child_bytes;
	bool collective;
};

/* layer, class, calls, bytes, latency, sequential share */
#define DATA(l, c, n_, b, lat_, seq_)                                                              \
	{                                                                                          \
		.layer = l, .cls = c, .n = n_, .bytes = b, .lat = lat_, .seq = seq_                \
	}

static void data_calls(struct synth *s, uint32_t rank, void *arg)
{
	const struct data *d = arg;
	synth_calls(s, &(struct synth_calls){.rank = rank,
	                                     .layer = d->layer,
	                                     .cls = d->cls,
	                                     .file = rank + 1,
	                                     .n = d->n,
	                                     .bytes = d->bytes,
	                                     .lat_s = d->lat,
	                                     .jitter = 0.3,
	                                     .seq = d->seq,
	                                     .fwd = d->fwd,
	                                     .stride = d->stride,
	                                     .children = d->children,
	                                     .child_bytes = d->child_bytes,
	                                     .collective = d->collective});
}

/* ---------------------------------------------------------------- small_io */

static void test_small_io(void **state)
{
	struct data d = DATA(IOP_LAYER_POSIX, IOP_CLASS_WRITE, 200, 1024, 1e-3, 1);
	struct run r;
	run_pattern(&r, 8, data_calls, &d, NULL);
	const struct synth_alert *x = expect(&r, COLL_ALERT_SMALL_IO);
	assert_int_equal(x->a.layer, IOP_LAYER_POSIX);
	assert_int_equal(x->a.severity, COLL_SEV_CRIT);
	assert_true(x->a.value > 0.99);
	assert_non_null(strstr(x->message, "posix 100% of"));
	assert_non_null(strstr(x->message, "under 64 KiB (mean 1.0 KiB per call)"));
	assert_int_equal(synth_count(&r.log, COLL_ALERT_RANDOM_IO, -1), 0);
	run_free(&r);
}

static void test_small_io_quiet(void **state)
{
	/* large transfers at the same rate; and small ones that cost nothing */
	struct data big = DATA(IOP_LAYER_POSIX, IOP_CLASS_WRITE, 200, 4 * MIB, 1e-3, 1);
	struct data cheap = DATA(IOP_LAYER_POSIX, IOP_CLASS_WRITE, 200, 1024, 5e-6, 1);
	struct run r;
	run_pattern(&r, 8, data_calls, &big, NULL);
	expect_none(&r);
	run_free(&r);
	run_pattern(&r, 8, data_calls, &cheap, NULL);
	expect_none(&r);
	run_free(&r);
}

/* --------------------------------------------------------------- random_io */

static void test_random_io(void **state)
{
	struct data d = DATA(IOP_LAYER_POSIX, IOP_CLASS_READ, 200, 256 * 1024, 1e-3, 0);
	struct run r;
	run_pattern(&r, 8, data_calls, &d, NULL);
	const struct synth_alert *x = expect(&r, COLL_ALERT_RANDOM_IO);
	assert_int_equal(x->a.layer, IOP_LAYER_POSIX);
	assert_int_equal(x->a.severity, COLL_SEV_CRIT);
	assert_non_null(strstr(x->message, "100% of"));
	assert_non_null(strstr(x->message, "data calls at random offsets"));
	assert_int_equal(synth_count(&r.log, COLL_ALERT_SMALL_IO, -1), 0);
	run_free(&r);
}

/* Ranks writing interleaved small blocks of one file (each a constant
 * forward stride, as Darshan counts it sequential): no random_io, but
 * small_io with the advice for small strided calls. */
static void test_strided_small_io(void **state)
{
	struct data d = DATA(IOP_LAYER_MPIIO, IOP_CLASS_WRITE, 200, 4096, 1e-3, 0);
	d.fwd = 0.02;
	d.stride = 0.98;
	struct run r;
	run_pattern(&r, 4, data_calls, &d, NULL);
	assert_int_equal(synth_count(&r.log, COLL_ALERT_RANDOM_IO, -1), 0);
	const struct synth_alert *x = expect(&r, COLL_ALERT_SMALL_IO);
	assert_int_equal(x->a.layer, IOP_LAYER_MPIIO);
	assert_non_null(strstr(x->message, "98% strided: collective buffering "
	                                   "(MPI_File_write_all / romio_cb_write), or larger "
	                                   "requests"));
	run_free(&r);
	/* forward jumps of no constant stride are not random either */
	d = (struct data)DATA(IOP_LAYER_POSIX, IOP_CLASS_READ, 200, 64 * 1024, 1e-3, 0.1);
	d.fwd = 0.9;
	run_pattern(&r, 4, data_calls, &d, NULL);
	expect_none(&r);
	run_free(&r);
	/* small calls that are not strided: small_io without that advice */
	d = (struct data)DATA(IOP_LAYER_POSIX, IOP_CLASS_WRITE, 200, 1024, 1e-3, 1);
	run_pattern(&r, 4, data_calls, &d, NULL);
	x = expect(&r, COLL_ALERT_SMALL_IO);
	assert_null(strstr(x->message, "strided"));
	run_free(&r);
}

/* Random among strided: the value is the random share alone. */
static void test_random_io_share(void **state)
{
	struct data d = DATA(IOP_LAYER_POSIX, IOP_CLASS_READ, 200, 256 * 1024, 1e-3, 0.1);
	d.stride = 0.6; /* 30 % random: WARN (0.2), not CRIT (0.4) */
	struct run r;
	run_pattern(&r, 8, data_calls, &d, NULL);
	const struct synth_alert *x = expect(&r, COLL_ALERT_RANDOM_IO);
	assert_int_equal(x->a.severity, COLL_SEV_WARN);
	assert_true(x->a.value > 0.29 && x->a.value < 0.31);
	run_free(&r);
}

static void test_random_io_quiet(void **state)
{
	/* sequential small-ish reads; strided large collective blocks */
	struct data seq = DATA(IOP_LAYER_POSIX, IOP_CLASS_READ, 200, 256 * 1024, 1e-3, 1);
	struct data strided = DATA(IOP_LAYER_MPIIO, IOP_CLASS_WRITE, 200, 8 * MIB, 1e-3, 0);
	strided.collective = true;
	struct run r;
	run_pattern(&r, 8, data_calls, &seq, NULL);
	expect_none(&r);
	run_free(&r);
	run_pattern(&r, 8, data_calls, &strided, NULL);
	expect_none(&r);
	run_free(&r);
}

/* ---------------------------------------------------------------- metadata */

struct meta {
	uint64_t meta_n;
	double meta_lat;
	unsigned every; /* meta calls only every this many ticks (1: always) */
	int64_t tick;
	bool lock; /* the meta calls are waits for locks */
};

static void meta_calls(struct synth *s, uint32_t rank, void *arg)
{
	struct meta *m = arg;
	synth_calls(s, &(struct synth_calls){.rank = rank,
	                                     .layer = IOP_LAYER_POSIX,
	                                     .cls = IOP_CLASS_WRITE,
	                                     .file = rank + 1,
	                                     .n = 20,
	                                     .bytes = MIB,
	                                     .lat_s = 5e-3,
	                                     .jitter = 0.3,
	                                     .seq = 1});
	if ((s->tick.t - SYNTH_T0) % m->every == 0)
		synth_calls(s, &(struct synth_calls){.rank = rank,
		                                     .layer = IOP_LAYER_POSIX,
		                                     .cls = IOP_CLASS_META,
		                                     .file = rank + 1,
		                                     .n = m->meta_n,
		                                     .lat_s = m->meta_lat,
		                                     .jitter = 0.3,
		                                     .seq = -1,
		                                     .lock = m->lock});
}

static void test_metadata(void **state)
{
	/* 80 % of I/O time in 200 opens/stats per rank per tick */
	struct meta m = {200, 2e-3, 1, 0, false};
	struct run r;
	run_pattern(&r, 8, meta_calls, &m, NULL);
	const struct synth_alert *x = expect(&r, COLL_ALERT_METADATA);
	assert_int_equal(x->a.rank, COLL_RANK_NONE);
	assert_int_equal(x->a.layer, -1);
	assert_int_equal(x->a.severity, COLL_SEV_CRIT);
	assert_true(x->a.value > 0.7 && x->a.value < 0.9);
	assert_non_null(strstr(x->message, "of I/O time in metadata calls"));
	run_free(&r);
}

static void test_metadata_not_lock_waits(void **state)
{
	/* the same time and calls, waiting for fcntl locks (MPI-IO's data
	 * sieving under contention): I/O time, not a metadata workload */
	struct meta m = {200, 2e-3, 1, 0, true};
	struct run r;
	run_pattern(&r, 8, meta_calls, &m, NULL);
	expect_none(&r);
	run_free(&r);
}

static void test_metadata_checkpoint_sync_quiet(void **state)
{
	/* every 10 ticks an open, a 2 s fsync and a close per rank: most of
	 * the I/O time, but not a metadata problem */
	struct meta m = {3, 2.0 / 3, 10, 0, false};
	struct run r;
	run_pattern(&r, 64, meta_calls, &m, NULL);
	expect_none(&r);
	run_free(&r);
}

/* ------------------------------------------------------------- stdio_share */

static void test_stdio_share(void **state)
{
	struct data d = DATA(IOP_LAYER_STDIO, IOP_CLASS_WRITE, 100, 64 * 1024, 1e-4, 1);
	struct run r;
	run_pattern(&r, 4, data_calls, &d, NULL);
	const struct synth_alert *x = expect(&r, COLL_ALERT_STDIO_SHARE);
	assert_int_equal(x->a.severity, COLL_SEV_CRIT);
	assert_non_null(strstr(x->message, "STDIO moved 100% of"));
	run_free(&r);
}

static void test_stdio_log_quiet(void **state)
{
	/* a text log through fprintf beside bulk POSIX writes */
	struct data log = DATA(IOP_LAYER_STDIO, IOP_CLASS_WRITE, 50, 100, 1e-5, 1);
	struct data bulk = DATA(IOP_LAYER_POSIX, IOP_CLASS_WRITE, 20, 4 * MIB, 5e-3, 1);
	struct run r;
	struct coll_rules rules;
	coll_rules_default(&rules);
	assert_int_equal(coll_alerts_new(&rules, &r.a), IOP_OK);
	synth_init(&r.s, 3);
	memset(&r.log, 0, sizeof(r.log));
	for (int64_t i = 0; i < TICKS; i++) {
		synth_begin(&r.s, SYNTH_T0 + i);
		for (uint32_t k = 0; k < 4; k++) {
			data_calls(&r.s, k, &log);
			data_calls(&r.s, k, &bulk);
		}
		assert_int_equal(coll_alerts_tick(r.a, &r.s.tick, NULL, synth_collect, &r.log),
		                 IOP_OK);
	}
	expect_none(&r);
	run_free(&r);
}

/* ----------------------------------------------------------- no_collective */

struct coll_counts {
	double share; /* of MPI-IO data calls that were collective */
};

static void tell_collective(struct tick_sum *cur, void *arg)
{
	const struct coll_counts *c = arg;
	cur->coll_known = true;
	for (unsigned cls = 0; cls < DATA_CLASSES; cls++) {
		struct lc_sum *s = &cur->lc[IOP_LAYER_MPIIO][cls];
		s->coll_ops = (uint64_t)((double)s->ops * c->share);
	}
}

static void no_collective_run(struct run *r, const struct coll_counts *counts)
{
	struct data d = {.layer = IOP_LAYER_MPIIO,
	                 .cls = IOP_CLASS_WRITE,
	                 .n = 20,
	                 .bytes = 4 * MIB,
	                 .lat = 10e-3,
	                 .seq = 1,
	                 .children = 1,
	                 .child_bytes = 4 * MIB};
	struct coll_rules rules;
	coll_rules_default(&rules);
	assert_int_equal(coll_alerts_new(&rules, &r->a), IOP_OK);
	if (counts) {
		r->a->sum_hook = tell_collective;
		r->a->sum_hook_arg = (void *)counts;
	}
	synth_init(&r->s, 5);
	memset(&r->log, 0, sizeof(r->log));
	for (int64_t i = 0; i < TICKS; i++) {
		synth_begin(&r->s, SYNTH_T0 + i);
		for (uint32_t k = 0; k < 8; k++)
			data_calls(&r->s, k, &d);
		r->log.now = i;
		assert_int_equal(coll_alerts_tick(r->a, &r->s.tick, NULL, synth_collect, &r->log),
		                 IOP_OK);
	}
}

static void test_no_collective(void **state)
{
	struct coll_counts none = {0}, all = {1};
	struct run r;
	no_collective_run(&r, &none);
	const struct synth_alert *x = expect(&r, COLL_ALERT_NO_COLLECTIVE);
	assert_int_equal(x->a.layer, IOP_LAYER_MPIIO);
	assert_int_equal(x->a.severity, COLL_SEV_WARN);
	assert_non_null(strstr(x->message, "by 8 ranks are independent"));
	run_free(&r);
	no_collective_run(&r, &all);
	expect_none(&r);
	run_free(&r);
	/* the cells' own count (coll_ops, none here): independent calls only */
	no_collective_run(&r, NULL);
	assert_int_equal(expect(&r, COLL_ALERT_NO_COLLECTIVE)->a.layer, IOP_LAYER_MPIIO);
	run_free(&r);
}

/* ----------------------------------------------------------- fragmentation */

static void test_fragmentation(void **state)
{
	/* each independent MPI-IO write becomes 32 POSIX writes of 4 KiB */
	struct data d = {.layer = IOP_LAYER_MPIIO,
	                 .cls = IOP_CLASS_WRITE,
	                 .n = 20,
	                 .bytes = 128 * 1024,
	                 .lat = 20e-3,
	                 .seq = 1,
	                 .children = 32,
	                 .child_bytes = 4096};
	struct run r;
	run_pattern(&r, 8, data_calls, &d, NULL);
	const struct synth_alert *x = expect(&r, COLL_ALERT_FRAGMENTATION);
	assert_int_equal(x->a.layer, IOP_LAYER_MPIIO);
	assert_int_equal(x->a.severity, COLL_SEV_WARN);
	assert_true(x->a.value > 31.9 && x->a.value < 32.1);
	assert_non_null(strstr(x->message, "mpiio 32.0 lower-layer calls per data call"));
	run_free(&r);
}

static void test_fragmentation_collective_quiet(void **state)
{
	/* a collective job: aggregators write buffer-sized pieces */
	struct synth_job j;
	synth_job_default(&j, 64);
	j.mpiio = true;
	j.bytes = 8 * MIB;
	j.lat_s = 0.05;
	struct coll_rules rules;
	coll_rules_default(&rules);
	struct run r;
	assert_int_equal(coll_alerts_new(&rules, &r.a), IOP_OK);
	synth_init(&r.s, 9);
	memset(&r.log, 0, sizeof(r.log));
	synth_run(&r.s, r.a, &j, NULL, &r.log, 0, TICKS);
	expect_none(&r);
	run_free(&r);
}

/* ------------------------------------------------------------ monitor_loss */

static void test_monitor_loss(void **state)
{
	struct data d = DATA(IOP_LAYER_POSIX, IOP_CLASS_WRITE, 20, MIB, 1e-3, 1);
	struct coll_alert_ctx lossy = {.ranks = 4, .events = 10000, .dropped = 400, .late = 100};
	struct coll_alert_ctx fine = {.ranks = 4, .events = 10000};
	struct run r;
	run_pattern(&r, 4, data_calls, &d, &lossy);
	const struct synth_alert *x = expect(&r, COLL_ALERT_MONITOR_LOSS);
	assert_int_equal(x->a.severity, COLL_SEV_WARN);
	assert_true(x->a.value > 0.047 && x->a.value < 0.048);
	assert_non_null(strstr(x->message, "monitor missed 4.8% of"));
	assert_non_null(strstr(x->message, "800 dropped by the shims, 200 late")); /* 2 ticks in */
	run_free(&r);
	run_pattern(&r, 4, data_calls, &d, &fine);
	expect_none(&r);
	run_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_small_io),
	    cmocka_unit_test(test_small_io_quiet),
	    cmocka_unit_test(test_random_io),
	    cmocka_unit_test(test_random_io_quiet),
	    cmocka_unit_test(test_strided_small_io),
	    cmocka_unit_test(test_random_io_share),
	    cmocka_unit_test(test_metadata),
	    cmocka_unit_test(test_metadata_not_lock_waits),
	    cmocka_unit_test(test_metadata_checkpoint_sync_quiet),
	    cmocka_unit_test(test_stdio_share),
	    cmocka_unit_test(test_stdio_log_quiet),
	    cmocka_unit_test(test_no_collective),
	    cmocka_unit_test(test_fragmentation),
	    cmocka_unit_test(test_fragmentation_collective_quiet),
	    cmocka_unit_test(test_monitor_loss),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

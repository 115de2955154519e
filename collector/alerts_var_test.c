/* Unit tests for the alert engine's variability rules and its state machine.
 *
 * Each fault test runs a healthy synthetic job (alert_synth.h) for a while,
 * injects one fault for a stretch of ticks, then heals it, and checks that
 * the right alert starts with the right subject within 3 ticks, escalates,
 * repeats no faster than min_interval, ends a few ticks after the fault,
 * and that nothing else fires. Healthy jobs of 2 and 64 ranks run 300 ticks
 * and must fire nothing at all. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "alert_int.h" /* to see the caps hold */
#include "alert_synth.h"
#include "events.h"
#include "test_util.h"

#define FAULT_AT  40 /* healthy ticks before a fault: baselines are full */
#define MAX_DELAY 3  /* a fault must start its alert within this many ticks */

struct fixture {
	struct coll_rules rules;
	struct coll_alerts *a;
	struct synth s;
	struct synth_job j;
	struct synth_log log;
};

static struct fixture *fixture_new(uint32_t ranks)
{
	struct fixture *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	coll_rules_default(&f->rules);
	synth_init(&f->s, 42 + ranks);
	synth_job_default(&f->j, ranks);
	return f;
}

static void fixture_start(struct fixture *f)
{
	assert_int_equal(coll_alerts_new(&f->rules, &f->a), IOP_OK);
}

static void fixture_free(struct fixture *f)
{
	coll_alerts_free(f->a);
	synth_free(&f->s);
	synth_log_free(&f->log);
	free(f);
}

static void run(struct fixture *f, int64_t from, int64_t to)
{
	synth_run(&f->s, f->a, &f->j, NULL, &f->log, from, to);
}

#define K(kind) (1u << COLL_ALERT_##kind)

/* Only alerts of the kinds in mask were reported; prints the log when not. */
static void assert_kinds(const struct synth_log *l, unsigned mask)
{
	for (size_t i = 0; i < l->n; i++)
		if (!(mask & (1u << l->v[i].a.kind))) {
			synth_dump(l);
			fail_msg("unexpected %s alert", coll_alert_kind_name(l->v[i].a.kind));
		}
}

static void assert_none(const struct synth_log *l)
{
	if (l->n) {
		synth_dump(l);
		fail_msg("%zu alerts on a healthy job", l->n);
	}
}

/* Non-escalating ongoing repeats of kind are at least min_interval apart,
 * and every start has its end. */
static void assert_cadence(const struct synth_log *l, enum coll_alert_kind kind, int64_t mi)
{
	int64_t last = INT64_MIN;
	for (size_t i = 0; i < l->n; i++) {
		const struct synth_alert *x = &l->v[i];
		if (x->a.kind != kind)
			continue;
		if (x->a.state == COLL_ALERT_ONGOING && !x->a.escalated && last != INT64_MIN)
			assert_true(x->tick - last >= mi);
		last = x->a.state == COLL_ALERT_END ? INT64_MIN : x->tick;
	}
	assert_int_equal(synth_count(l, kind, COLL_ALERT_START),
	                 synth_count(l, kind, COLL_ALERT_END));
}

/* ---------------------------------------------------------- healthy jobs */

static void healthy(struct fixture *f)
{
	fixture_start(f);
	run(f, 0, 300);
	coll_alerts_finish(f->a, (uint64_t)(SYNTH_T0 + 300) * SYNTH_TICK, synth_collect, &f->log);
	assert_none(&f->log);
	fixture_free(f);
}

static void test_healthy_2_ranks_few_small_writes(void **state)
{
	/* a test program: a few hundred 1 KiB writes in all, half of them
	 * not sequential, and an open and close each I/O phase */
	struct fixture *f = fixture_new(2);
	f->j.seq = 0.5;
	f->j.calls = 1;
	f->j.bytes = 1024;
	f->j.lat_s = 20e-6;
	f->j.jitter = 0.9;
	f->j.period = 2;
	f->j.burst = 1;
	healthy(f);
}

static void test_healthy_2_ranks_large_writes(void **state)
{
	struct fixture *f = fixture_new(2);
	f->j.bytes = 4 * MIB;
	f->j.lat_s = 20e-3;
	healthy(f);
}

static void test_healthy_64_ranks_posix(void **state)
{
	struct fixture *f = fixture_new(64);
	f->j.jitter = 0.5;
	f->j.files = 64;
	healthy(f);
}

static void test_healthy_64_ranks_collective_phases(void **state)
{
	/* checkpoints: 3 ticks of large collective MPI-IO writes every 10 */
	struct fixture *f = fixture_new(64);
	f->j.mpiio = true;
	f->j.calls = 4;
	f->j.bytes = 8 * MIB;
	f->j.lat_s = 0.2;
	f->j.period = 10;
	f->j.burst = 3;
	healthy(f);
}

static void test_healthy_noisy_filesystem(void **state)
{
	/* the file system slows everyone down by up to 2.5x for a tick now
	 * and then: not a fault any rule should call */
	struct fixture *f = fixture_new(16);
	fixture_start(f);
	for (int64_t i = 0; i < 300; i++) {
		f->j.all_factor = synth_uniform(&f->s) < 0.1 ? 1 + 1.5 * synth_uniform(&f->s) : 1;
		run(f, i, i + 1);
	}
	assert_none(&f->log);
	fixture_free(f);
}

static void test_healthy_heavy_tails(void **state)
{
	/* 1 call in 100 stalls 30x (write-back, a busy server): every rank
	 * has a bad tick now and then, the layer's p99 is the stall */
	struct fixture *f = fixture_new(64);
	f->j.tail_p = 0.01;
	f->j.tail_factor = 30;
	f->j.files = 64;
	healthy(f);
}

static void test_healthy_pattern_change(void **state)
{
	/* the application moves from 4 MiB writes to 64 KiB writes and back:
	 * bytes per second and latency change a lot, the file system did not */
	struct fixture *f = fixture_new(8);
	f->j.bytes = 4 * MIB;
	f->j.lat_s = 20e-3;
	fixture_start(f);
	run(f, 0, 100);
	f->j.bytes = 64 * 1024;
	f->j.lat_s = 1e-3;
	run(f, 100, 200);
	f->j.bytes = 4 * MIB;
	f->j.lat_s = 20e-3;
	run(f, 200, 300);
	assert_none(&f->log);
	fixture_free(f);
}

static void test_many_files_and_ranks_bounded(void **state)
{
	/* more files than the engine keeps baselines for, and ranks beyond
	 * the limit: judged as far as the caps allow, never a failure */
	struct fixture *f = fixture_new(0);
	f->rules.max_files = 16;
	fixture_start(f);
	for (int64_t i = 0; i < 60; i++) {
		synth_begin(&f->s, SYNTH_T0 + i);
		for (uint32_t k = 0; k < 200; k++)
			synth_calls(&f->s,
			            &(struct synth_calls){.rank = k % 4,
			                                  .layer = IOP_LAYER_POSIX,
			                                  .cls = IOP_CLASS_WRITE,
			                                  .file = 1000 + k + 37 * (uint64_t)i,
			                                  .n = 20,
			                                  .bytes = 4096,
			                                  .lat_s = 1e-4,
			                                  .jitter = 0.3,
			                                  .seq = 1});
		synth_calls(&f->s, &(struct synth_calls){.rank = COLL_ALERTS_MAX_RANKS + 5,
		                                         .layer = IOP_LAYER_POSIX,
		                                         .cls = IOP_CLASS_WRITE,
		                                         .n = 1,
		                                         .bytes = 1,
		                                         .lat_s = 1});
		f->log.now = i;
		assert_int_equal(coll_alerts_tick(f->a, &f->s.tick, NULL, synth_collect, &f->log),
		                 IOP_OK);
	}
	assert_true(f->a->files.n <= 16);
	assert_true(f->a->n_rank <= 64);
	fixture_free(f);
}

/* -------------------------------------------------------------- straggler */

static void test_straggler_64_ranks(void **state)
{
	struct fixture *f = fixture_new(64);
	fixture_start(f);
	run(f, 0, FAULT_AT);
	f->j.slow_rank = 12;
	f->j.slow_factor = 10;
	run(f, FAULT_AT, FAULT_AT + 70);
	f->j.slow_rank = COLL_RANK_NONE;
	run(f, FAULT_AT + 70, FAULT_AT + 90);

	assert_kinds(&f->log, K(STRAGGLER));
	const struct synth_alert *s = synth_find(&f->log, COLL_ALERT_STRAGGLER, COLL_ALERT_START);
	assert_non_null(s);
	assert_true(s->tick < FAULT_AT + MAX_DELAY);
	assert_int_equal(s->a.rank, 12);
	assert_int_equal(s->a.layer, IOP_LAYER_POSIX);
	assert_int_equal(s->a.severity, COLL_SEV_CRIT);
	assert_true(s->a.value > 8 && s->a.value < 13);
	assert_non_null(strstr(s->message, "rank 12 posix write"));
	assert_non_null(strstr(s->message, "median"));
	assert_non_null(strstr(s->message, "of 63 peers"));
	assert_null(strstr(s->message, "locks")); /* slow without waiting for locks */
	/* 70 ticks at min_interval 30: two repeats */
	assert_int_equal(synth_count(&f->log, COLL_ALERT_STRAGGLER, COLL_ALERT_ONGOING), 2);
	assert_cadence(&f->log, COLL_ALERT_STRAGGLER, 30);
	const struct synth_alert *e = synth_find(&f->log, COLL_ALERT_STRAGGLER, COLL_ALERT_END);
	assert_non_null(e);
	assert_true(e->tick >= FAULT_AT + 70 && e->tick <= FAULT_AT + 70 + 4);
	assert_int_equal(synth_count(&f->log, COLL_ALERT_STRAGGLER, COLL_ALERT_START), 1);
	fixture_free(f);
}

static void test_straggler_waiting_for_locks(void **state)
{
	/* rank 12 is slow and spends most of its time blocked on fcntl locks
	 * (0.8 s a tick beside its writes): the straggler message says so */
	struct fixture *f = fixture_new(64);
	fixture_start(f);
	run(f, 0, FAULT_AT);
	f->j.slow_rank = 12;
	f->j.slow_factor = 10;
	for (int64_t i = FAULT_AT; i < FAULT_AT + 20; i++) {
		synth_job_tick(&f->s, &f->j, i);
		synth_calls(&f->s, &(struct synth_calls){.rank = 12,
		                                         .layer = IOP_LAYER_POSIX,
		                                         .cls = IOP_CLASS_META,
		                                         .file = 13,
		                                         .n = 2,
		                                         .lat_s = 0.4,
		                                         .seq = -1,
		                                         .lock = true});
		f->log.now = i;
		assert_int_equal(coll_alerts_tick(f->a, &f->s.tick, NULL, synth_collect, &f->log),
		                 IOP_OK);
	}
	const struct synth_alert *s = synth_find(&f->log, COLL_ALERT_STRAGGLER, COLL_ALERT_START);
	assert_non_null(s);
	assert_int_equal(s->a.rank, 12);
	assert_non_null(strstr(s->message, "of its I/O time waiting for locks"));
	fixture_free(f);
}

static void test_straggler_escalates(void **state)
{
	struct fixture *f = fixture_new(8);
	fixture_start(f);
	run(f, 0, FAULT_AT);
	f->j.slow_rank = 3;
	f->j.slow_factor = 4;
	run(f, FAULT_AT, FAULT_AT + 10);
	f->j.slow_factor = 12;
	run(f, FAULT_AT + 10, FAULT_AT + 20);
	f->j.slow_rank = COLL_RANK_NONE;
	run(f, FAULT_AT + 20, FAULT_AT + 30);

	/* one rank in 8 carries more than 1 % of the calls: the layer's p99
	 * is that rank's latency, and latency_spike says so too */
	assert_kinds(&f->log, K(STRAGGLER) | K(LATENCY_SPIKE));
	const struct synth_alert *s = synth_find(&f->log, COLL_ALERT_STRAGGLER, COLL_ALERT_START);
	assert_non_null(s);
	assert_int_equal(s->a.severity, COLL_SEV_WARN);
	assert_int_equal(s->a.rank, 3);
	const struct synth_alert *o = synth_find(&f->log, COLL_ALERT_STRAGGLER, COLL_ALERT_ONGOING);
	assert_non_null(o);
	assert_true(o->a.escalated);
	assert_int_equal(o->a.severity, COLL_SEV_CRIT);
	assert_true(o->tick < FAULT_AT + 10 + MAX_DELAY);
	const struct synth_alert *e = synth_find(&f->log, COLL_ALERT_STRAGGLER, COLL_ALERT_END);
	assert_non_null(e);
	assert_int_equal(e->a.severity, COLL_SEV_CRIT); /* the peak */
	assert_cadence(&f->log, COLL_ALERT_STRAGGLER, 30);
	fixture_free(f);
}

static void test_straggler_2_ranks(void **state)
{
	/* 3x slower: below pair_ratio, so quiet; 10x: detected */
	struct fixture *f = fixture_new(2);
	fixture_start(f);
	run(f, 0, FAULT_AT);
	f->j.slow_rank = 1;
	f->j.slow_factor = 3;
	run(f, FAULT_AT, FAULT_AT + 20);
	assert_int_equal(synth_count(&f->log, COLL_ALERT_STRAGGLER, -1), 0);
	f->j.slow_factor = 10;
	run(f, FAULT_AT + 20, FAULT_AT + 40);
	f->j.slow_rank = COLL_RANK_NONE;
	run(f, FAULT_AT + 40, FAULT_AT + 50);

	/* these two ranks do not wait for each other, so the fast one also
	 * moves more bytes: imbalance is true as well */
	assert_kinds(&f->log, K(STRAGGLER) | K(IMBALANCE));
	const struct synth_alert *s = synth_find(&f->log, COLL_ALERT_STRAGGLER, COLL_ALERT_START);
	assert_non_null(s);
	assert_int_equal(s->a.rank, 1);
	assert_true(s->tick < FAULT_AT + 20 + MAX_DELAY);
	assert_non_null(strstr(s->message, "the other rank"));
	assert_non_null(synth_find(&f->log, COLL_ALERT_STRAGGLER, COLL_ALERT_END));
	fixture_free(f);
}

/* 4 ranks on a loaded node: the three healthy ones take 20, 100 and 400
 * us a call, rank 3 1.1 ms. Judged against its 3 peers (median 100 us,
 * MAD 80 us: 11x, z 8.4) it is a straggler. Judged with itself among them
 * (median 250 us, MAD 190 us: z 3.0) it was not, and a loaded CI run of
 * replay_e2e_events saw no straggler. */
static void test_straggler_against_peers_without_itself(void **state)
{
	static const double lat[4] = {20e-6, 100e-6, 400e-6, 1100e-6};
	struct fixture *f = fixture_new(4);
	fixture_start(f);
	for (int64_t i = 0; i < 10; i++) {
		synth_begin(&f->s, SYNTH_T0 + i);
		for (uint32_t r = 0; r < 4; r++)
			synth_calls(&f->s, &(struct synth_calls){.rank = r,
			                                         .layer = IOP_LAYER_POSIX,
			                                         .cls = IOP_CLASS_WRITE,
			                                         .file = r + 1,
			                                         .n = 200,
			                                         .bytes = 4096,
			                                         .lat_s = lat[r],
			                                         .seq = 1});
		f->log.now = i;
		assert_int_equal(coll_alerts_tick(f->a, &f->s.tick, NULL, synth_collect, &f->log),
		                 IOP_OK);
	}
	const struct synth_alert *s = synth_find(&f->log, COLL_ALERT_STRAGGLER, COLL_ALERT_START);
	if (!s)
		synth_dump(&f->log);
	assert_non_null(s);
	assert_int_equal(s->a.rank, 3);
	assert_true(s->a.value > 10 && s->a.value < 12);
	assert_non_null(strstr(s->message, "median 100 us of 3 peers"));
	assert_int_equal(synth_count(&f->log, COLL_ALERT_STRAGGLER, COLL_ALERT_START), 1);
	fixture_free(f);
}

/* Rank 0 writes 8x larger blocks and so takes longer per call: no
 * straggler among ranks peers. With two ranks their median (the mean) is
 * never a quarter of either's bytes a call, so each is compared with the
 * other (an aggregator's large POSIX writes beside HDF5's small metadata
 * writes were a 438x CRIT straggler). */
static void more_work_is_not_slowness(uint32_t ranks)
{
	struct fixture *f = fixture_new(ranks);
	fixture_start(f);
	f->j.heavy_rank = 0;
	f->j.heavy_factor = 8;
	run(f, 0, 60);
	assert_int_equal(synth_count(&f->log, COLL_ALERT_STRAGGLER, -1), 0);
	fixture_free(f);
}

static void test_straggler_more_work_is_not_slowness(void **state)
{
	more_work_is_not_slowness(8);
}

static void test_straggler_more_work_is_not_slowness_2_ranks(void **state)
{
	more_work_is_not_slowness(2);
}

/* -------------------------------------------------------- throughput_drop */

static void test_throughput_collapse(void **state)
{
	struct fixture *f = fixture_new(8);
	fixture_start(f);
	run(f, 0, FAULT_AT);
	f->j.all_factor = 10; /* every call 10x slower: 10 % of the throughput */
	run(f, FAULT_AT, FAULT_AT + 40);
	f->j.all_factor = 1;
	run(f, FAULT_AT + 40, FAULT_AT + 60);

	/* every call is 10x slower: that is a latency spike of the layer too
	 * (and not of the file, which is the whole layer) */
	assert_kinds(&f->log, K(THROUGHPUT_DROP) | K(LATENCY_SPIKE));
	for (size_t i = 0; i < f->log.n; i++)
		assert_int_equal(f->log.v[i].a.file, 0);
	const struct synth_alert *s =
	    synth_find(&f->log, COLL_ALERT_THROUGHPUT_DROP, COLL_ALERT_START);
	assert_non_null(s);
	assert_true(s->tick < FAULT_AT + MAX_DELAY);
	assert_int_equal(s->a.layer, IOP_LAYER_POSIX);
	assert_int_equal(s->a.rank, COLL_RANK_NONE);
	assert_int_equal(s->a.file, 0);
	assert_non_null(strstr(s->message, "posix write"));
	const struct synth_alert *e =
	    synth_find(&f->log, COLL_ALERT_THROUGHPUT_DROP, COLL_ALERT_END);
	assert_non_null(e);
	assert_int_equal(e->a.severity, COLL_SEV_CRIT);
	assert_true(e->a.value > 0.85);
	assert_true(e->tick >= FAULT_AT + 40 && e->tick <= FAULT_AT + 40 + 4);
	assert_int_equal(synth_count(&f->log, COLL_ALERT_THROUGHPUT_DROP, COLL_ALERT_START), 1);
	assert_cadence(&f->log, COLL_ALERT_THROUGHPUT_DROP, 30);
	fixture_free(f);
}

static void test_throughput_escalates(void **state)
{
	struct fixture *f = fixture_new(8);
	fixture_start(f);
	run(f, 0, FAULT_AT);
	f->j.all_factor = 3; /* 33 %: WARN */
	run(f, FAULT_AT, FAULT_AT + 10);
	f->j.all_factor = 20; /* 5 %: CRIT */
	run(f, FAULT_AT + 10, FAULT_AT + 20);
	f->j.all_factor = 1;
	run(f, FAULT_AT + 20, FAULT_AT + 30);

	assert_kinds(&f->log, K(THROUGHPUT_DROP) | K(LATENCY_SPIKE));
	const struct synth_alert *s =
	    synth_find(&f->log, COLL_ALERT_THROUGHPUT_DROP, COLL_ALERT_START);
	assert_non_null(s);
	assert_int_equal(s->a.severity, COLL_SEV_WARN);
	const struct synth_alert *o =
	    synth_find(&f->log, COLL_ALERT_THROUGHPUT_DROP, COLL_ALERT_ONGOING);
	assert_non_null(o);
	assert_true(o->a.escalated && o->a.severity == COLL_SEV_CRIT);
	assert_true(o->tick < FAULT_AT + 10 + MAX_DELAY);
	assert_non_null(synth_find(&f->log, COLL_ALERT_THROUGHPUT_DROP, COLL_ALERT_END));
	fixture_free(f);
}

/* ---------------------------------------------------------- latency_spike */

static void test_latency_spike_one_file(void **state)
{
	struct fixture *f = fixture_new(8);
	f->j.files = 8;
	fixture_start(f);
	run(f, 0, FAULT_AT);
	f->j.spike_file = 3;
	f->j.spike_factor = 20;
	run(f, FAULT_AT, FAULT_AT + 20);
	f->j.spike_factor = 1;
	run(f, FAULT_AT + 20, FAULT_AT + 30);

	/* the file's spike is the layer's p99 too, and its rank is slow: the
	 * file alert is the one that must be there */
	const struct synth_alert *s = NULL;
	for (size_t i = 0; i < f->log.n; i++)
		if (f->log.v[i].a.kind == COLL_ALERT_LATENCY_SPIKE && f->log.v[i].a.file &&
		    f->log.v[i].a.state == COLL_ALERT_START)
			s = &f->log.v[i];
	assert_non_null(s);
	assert_int_equal(s->a.file, 3);
	assert_int_equal(s->a.layer, IOP_LAYER_POSIX);
	assert_true(s->tick < FAULT_AT + MAX_DELAY);
	assert_int_equal(s->a.severity, COLL_SEV_CRIT);
	assert_non_null(strstr(s->message, "file 0x0000000000000003 posix write p99"));
	for (size_t i = 0; i < f->log.n; i++) {
		const struct synth_alert *x = &f->log.v[i];
		if (x->a.kind == COLL_ALERT_LATENCY_SPIKE && x->a.file)
			assert_int_equal(x->a.file, 3);
		if (x->a.kind == COLL_ALERT_STRAGGLER)
			assert_int_equal(x->a.rank, 2); /* rank 2 writes file 3 */
		/* and the rank-seconds spent per byte went up */
		assert_true(x->a.kind == COLL_ALERT_LATENCY_SPIKE ||
		            x->a.kind == COLL_ALERT_STRAGGLER ||
		            x->a.kind == COLL_ALERT_THROUGHPUT_DROP);
		if (x->a.state == COLL_ALERT_END)
			assert_true(x->tick <= FAULT_AT + 20 + 7);
	}
	assert_cadence(&f->log, COLL_ALERT_LATENCY_SPIKE, 30);
	fixture_free(f);
}

static void test_latency_spike_file_cap(void **state)
{
	/* 8 files, baselines for 4: the first 4 seen keep theirs, so a spike
	 * on one of them is told by file; one on file 7 only by its layer */
	for (uint64_t spiked = 2; spiked <= 7; spiked += 5) {
		struct fixture *f = fixture_new(8);
		f->j.files = 8;
		f->rules.max_files = 4;
		fixture_start(f);
		run(f, 0, FAULT_AT);
		f->j.spike_file = spiked;
		f->j.spike_factor = 20;
		run(f, FAULT_AT, FAULT_AT + 10);
		size_t by_file = 0, by_layer = 0;
		for (size_t i = 0; i < f->log.n; i++) {
			const struct synth_alert *x = &f->log.v[i];
			if (x->a.kind != COLL_ALERT_LATENCY_SPIKE || x->a.state != COLL_ALERT_START)
				continue;
			if (x->a.file)
				assert_int_equal(x->a.file, spiked);
			by_file += x->a.file != 0;
			by_layer += x->a.file == 0;
		}
		assert_int_equal(by_file, spiked == 2);
		assert_int_equal(by_layer, 1);
		fixture_free(f);
	}
}

/* ---------------------------------------------------------------- hung_io */

static void test_hung_io(void **state)
{
	struct fixture *f = fixture_new(4);
	fixture_start(f);
	run(f, 0, FAULT_AT);
	/* rank 2's write starts at FAULT_AT and returns 45 s later */
	uint64_t started = (uint64_t)(SYNTH_T0 + FAULT_AT) * SYNTH_TICK;
	for (int64_t i = FAULT_AT; i < FAULT_AT + 45; i++) {
		synth_job_tick(&f->s, &f->j, i);
		synth_inflight(&f->s, 2, IOP_LAYER_POSIX, IOP_CLASS_WRITE, started);
		f->log.now = i;
		assert_int_equal(coll_alerts_tick(f->a, &f->s.tick, NULL, synth_collect, &f->log),
		                 IOP_OK);
	}
	run(f, FAULT_AT + 45, FAULT_AT + 50);

	assert_kinds(&f->log, K(HUNG_IO));
	const struct synth_alert *s = synth_find(&f->log, COLL_ALERT_HUNG_IO, COLL_ALERT_START);
	assert_non_null(s);
	/* 10 s in flight at the end of tick FAULT_AT + 9 */
	assert_true(s->tick >= FAULT_AT + 9 && s->tick < FAULT_AT + 9 + MAX_DELAY);
	assert_int_equal(s->a.rank, 2);
	assert_int_equal(s->a.layer, IOP_LAYER_POSIX);
	assert_int_equal(s->a.severity, COLL_SEV_WARN);
	assert_non_null(strstr(s->message, "rank 2 posix write call in flight for 10 s"));
	const struct synth_alert *o = synth_find(&f->log, COLL_ALERT_HUNG_IO, COLL_ALERT_ONGOING);
	assert_non_null(o);
	assert_true(o->a.escalated);
	assert_int_equal(o->tick, FAULT_AT + 29);
	const struct synth_alert *e = synth_find(&f->log, COLL_ALERT_HUNG_IO, COLL_ALERT_END);
	assert_non_null(e);
	assert_int_equal(e->tick, FAULT_AT + 45);
	assert_true(e->a.value >= 45 - 1e-9);
	fixture_free(f);
}

/* -------------------------------------------------------------- imbalance */

static void test_imbalance(void **state)
{
	struct fixture *f = fixture_new(8);
	fixture_start(f);
	run(f, 0, FAULT_AT);
	f->j.heavy_rank = 5;
	f->j.heavy_factor = 5;
	run(f, FAULT_AT, FAULT_AT + 20);
	f->j.heavy_factor = 20;
	run(f, FAULT_AT + 20, FAULT_AT + 30);
	f->j.heavy_rank = COLL_RANK_NONE;
	run(f, FAULT_AT + 30, FAULT_AT + 40);

	/* larger blocks also take longer per call: straggler must not call
	 * that slowness, so only imbalance may speak */
	assert_kinds(&f->log, K(IMBALANCE));
	const struct synth_alert *s = synth_find(&f->log, COLL_ALERT_IMBALANCE, COLL_ALERT_START);
	assert_non_null(s);
	assert_true(s->tick < FAULT_AT + MAX_DELAY);
	assert_int_equal(s->a.rank, COLL_RANK_NONE);
	assert_int_equal(s->a.layer, -1);
	assert_int_equal(s->a.severity, COLL_SEV_WARN);
	assert_non_null(strstr(s->message, "rank 5 moved"));
	const struct synth_alert *o = synth_find(&f->log, COLL_ALERT_IMBALANCE, COLL_ALERT_ONGOING);
	assert_non_null(o);
	assert_true(o->a.escalated && o->a.severity == COLL_SEV_CRIT);
	const struct synth_alert *e = synth_find(&f->log, COLL_ALERT_IMBALANCE, COLL_ALERT_END);
	assert_non_null(e);
	assert_true(e->tick <= FAULT_AT + 30 + 7);
	fixture_free(f);
}

/* One tick of a wind-down: ranks below `until[r]` ticks write 4 MiB a tick
 * in 1 MiB calls; at tick `last` every rank closes its file (a meta call)
 * and prints a line (one small write), as ranks do at the end of a job. */
static void winddown_tick(struct fixture *f, int64_t i, const int64_t *until, uint32_t ranks,
                          int64_t last)
{
	synth_begin(&f->s, SYNTH_T0 + i);
	for (uint32_t r = 0; r < ranks; r++) {
		if (i < until[r])
			synth_calls(&f->s, &(struct synth_calls){.rank = r,
			                                         .layer = IOP_LAYER_POSIX,
			                                         .cls = IOP_CLASS_WRITE,
			                                         .file = 100 + r,
			                                         .n = 40,
			                                         .bytes = 1 << 20,
			                                         .lat_s = 2e-3,
			                                         .jitter = 0.1,
			                                         .seq = 1});
		if (i == last) {
			synth_calls(&f->s, &(struct synth_calls){.rank = r,
			                                         .layer = IOP_LAYER_POSIX,
			                                         .cls = IOP_CLASS_META,
			                                         .file = 100 + r,
			                                         .n = 1,
			                                         .lat_s = 1e-5,
			                                         .seq = -1});
			synth_calls(&f->s, &(struct synth_calls){.rank = r,
			                                         .layer = IOP_LAYER_POSIX,
			                                         .cls = IOP_CLASS_WRITE,
			                                         .file = 7,
			                                         .n = 1,
			                                         .bytes = 150,
			                                         .lat_s = 1e-5,
			                                         .seq = -1});
		}
	}
	f->log.now = i;
	assert_int_equal(coll_alerts_tick(f->a, &f->s.tick, NULL, synth_collect, &f->log), IOP_OK);
}

static void test_imbalance_not_at_wind_down(void **state)
{
	/* four healthy ranks end their I/O 2-4 ticks apart, then all close and
	 * print when the job ends, in the last rank's last tick: the last to
	 * finish moved the most of the last window, and is no imbalance */
	struct fixture *f = fixture_new(4);
	fixture_start(f);
	const int64_t until[4] = {20, 22, 24, 28};
	for (int64_t i = 0; i <= 27; i++)
		winddown_tick(f, i, until, 4, 27);
	assert_none(&f->log);
	fixture_free(f);
}

static void test_imbalance_of_a_rank_still_at_work(void **state)
{
	/* the same ranks, but rank 3 moves 10x the others' bytes while they
	 * all work: imbalance (the wind-down rule keeps ranks at work) */
	struct fixture *f = fixture_new(4);
	fixture_start(f);
	for (int64_t i = 0; i < 20; i++) {
		synth_begin(&f->s, SYNTH_T0 + i);
		for (uint32_t r = 0; r < 4; r++)
			synth_calls(&f->s, &(struct synth_calls){.rank = r,
			                                         .layer = IOP_LAYER_POSIX,
			                                         .cls = IOP_CLASS_WRITE,
			                                         .file = 100 + r,
			                                         .n = r == 3 ? 400 : 40,
			                                         .bytes = 1 << 20,
			                                         .lat_s = 2e-3,
			                                         .jitter = 0.1,
			                                         .seq = 1});
		f->log.now = i;
		assert_int_equal(coll_alerts_tick(f->a, &f->s.tick, NULL, synth_collect, &f->log),
		                 IOP_OK);
	}
	assert_non_null(synth_find(&f->log, COLL_ALERT_IMBALANCE, COLL_ALERT_START));
	fixture_free(f);
}

/* ------------------------------------------------------- the state machine */

static void test_restart_waits_min_interval(void **state)
{
	/* a fault that comes back soon after its alert ended starts a new
	 * alert only min_interval after that end */
	struct fixture *f = fixture_new(4);
	f->rules.rule[COLL_ALERT_STRAGGLER].min_interval_s = 20;
	fixture_start(f);
	run(f, 0, FAULT_AT);
	f->j.slow_rank = 1;
	f->j.slow_factor = 10;
	run(f, FAULT_AT, FAULT_AT + 8);
	f->j.slow_rank = COLL_RANK_NONE;
	run(f, FAULT_AT + 8, FAULT_AT + 14);
	f->j.slow_rank = 1;
	run(f, FAULT_AT + 14, FAULT_AT + 60);

	const struct synth_alert *e = synth_find(&f->log, COLL_ALERT_STRAGGLER, COLL_ALERT_END);
	assert_non_null(e);
	size_t starts = 0;
	for (size_t i = 0; i < f->log.n; i++) {
		const struct synth_alert *x = &f->log.v[i];
		if (x->a.state != COLL_ALERT_START || x->a.kind != COLL_ALERT_STRAGGLER)
			continue;
		if (++starts == 2) {
			assert_true(x->tick >= e->tick + 20);
			assert_true(x->tick <= e->tick + 21);
		}
	}
	assert_int_equal(starts, 2);
	fixture_free(f);
}

static void test_finish_and_history(void **state)
{
	struct fixture *f = fixture_new(8);
	fixture_start(f);
	run(f, 0, FAULT_AT);
	f->j.slow_rank = 6;
	f->j.slow_factor = 10;
	run(f, FAULT_AT, FAULT_AT + 10);
	uint64_t t_end = (uint64_t)(SYNTH_T0 + FAULT_AT + 10) * SYNTH_TICK + 500000000u;
	coll_alerts_finish(f->a, t_end, synth_collect, &f->log);

	const struct synth_alert *e = synth_find(&f->log, COLL_ALERT_STRAGGLER, COLL_ALERT_END);
	assert_non_null(e);
	assert_int_equal(e->a.t_ns, t_end);
	assert_non_null(strstr(e->message, "rank 6 ended after"));
	size_t n;
	uint64_t lost;
	const struct coll_alert_record *h = coll_alerts_history(f->a, &n, &lost);
	assert_int_equal(n, synth_count(&f->log, -1, COLL_ALERT_START));
	assert_int_equal(lost, 0);
	while (n && h->kind != COLL_ALERT_STRAGGLER) {
		h++;
		n--;
	}
	assert_true(n > 0);
	assert_int_equal(h[0].kind, COLL_ALERT_STRAGGLER);
	assert_int_equal(h[0].rank, 6);
	assert_int_equal(h[0].severity, COLL_SEV_CRIT);
	assert_int_equal(h[0].end_ns, t_end);
	assert_true(h[0].start_ns <= (uint64_t)(SYNTH_T0 + FAULT_AT + 1) * SYNTH_TICK);
	assert_true(h[0].peak_value >= 8);
	assert_non_null(strstr(h[0].message, "rank 6 posix write"));
	fixture_free(f);
}

static void test_deterministic(void **state)
{
	/* two engines fed the same ticks say the same things */
	struct fixture *f = fixture_new(16), *g = fixture_new(16);
	fixture_start(f);
	fixture_start(g);
	for (int64_t i = 0; i < 120; i++) {
		f->j.slow_rank = g->j.slow_rank = i >= 50 && i < 80 ? 9 : COLL_RANK_NONE;
		f->j.slow_factor = g->j.slow_factor = 10;
		f->j.all_factor = g->j.all_factor = i >= 90 && i < 110 ? 10 : 1;
		run(f, i, i + 1);
		run(g, i, i + 1);
	}
	assert_true(f->log.n > 0);
	assert_int_equal(f->log.n, g->log.n);
	for (size_t i = 0; i < f->log.n; i++) {
		assert_int_equal(f->log.v[i].tick, g->log.v[i].tick);
		assert_int_equal(f->log.v[i].a.state, g->log.v[i].a.state);
		assert_string_equal(f->log.v[i].message, g->log.v[i].message);
	}
	fixture_free(f);
	fixture_free(g);
}

static void test_ticks_in_order(void **state)
{
	struct fixture *f = fixture_new(2);
	fixture_start(f);
	run(f, 0, 5);
	synth_job_tick(&f->s, &f->j, 4);
	assert_int_equal(coll_alerts_tick(f->a, &f->s.tick, NULL, NULL, NULL), IOP_ERR_STATE);
	synth_job_tick(&f->s, &f->j, 5);
	f->s.tick.tick_ns = SYNTH_TICK / 2;
	assert_int_equal(coll_alerts_tick(f->a, &f->s.tick, NULL, NULL, NULL), IOP_ERR_STATE);
	fixture_free(f);
}

static void test_skipped_ticks_end_alerts(void **state)
{
	/* the root may not pass empty ticks: a gap is time where nothing held */
	struct fixture *f = fixture_new(4);
	fixture_start(f);
	run(f, 0, FAULT_AT);
	f->j.slow_rank = 0;
	f->j.slow_factor = 10;
	run(f, FAULT_AT, FAULT_AT + 6);
	assert_non_null(synth_find(&f->log, COLL_ALERT_STRAGGLER, COLL_ALERT_START));
	f->j.slow_rank = COLL_RANK_NONE;
	run(f, FAULT_AT + 30, FAULT_AT + 31);
	const struct synth_alert *e = synth_find(&f->log, COLL_ALERT_STRAGGLER, COLL_ALERT_END);
	assert_non_null(e);
	assert_int_equal(e->tick, FAULT_AT + 30);
	fixture_free(f);
}

static void test_bad_rules_refused(void **state)
{
	struct coll_rules r;
	struct coll_alerts *a;
	coll_rules_default(&r);
	r.rule[COLL_ALERT_IMBALANCE].warn = 10; /* above crit */
	assert_int_equal(coll_alerts_new(&r, &a), IOP_ERR_INVAL);
	assert_null(a);
	coll_rules_default(&r);
	r.rule[COLL_ALERT_HUNG_IO].min_duration_s = NAN;
	assert_int_equal(coll_alerts_new(&r, &a), IOP_ERR_INVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_healthy_2_ranks_few_small_writes),
	    cmocka_unit_test(test_healthy_2_ranks_large_writes),
	    cmocka_unit_test(test_healthy_64_ranks_posix),
	    cmocka_unit_test(test_healthy_64_ranks_collective_phases),
	    cmocka_unit_test(test_healthy_noisy_filesystem),
	    cmocka_unit_test(test_healthy_heavy_tails),
	    cmocka_unit_test(test_healthy_pattern_change),
	    cmocka_unit_test(test_many_files_and_ranks_bounded),
	    cmocka_unit_test(test_straggler_64_ranks),
	    cmocka_unit_test(test_straggler_waiting_for_locks),
	    cmocka_unit_test(test_straggler_escalates),
	    cmocka_unit_test(test_straggler_2_ranks),
	    cmocka_unit_test(test_straggler_against_peers_without_itself),
	    cmocka_unit_test(test_straggler_more_work_is_not_slowness),
	    cmocka_unit_test(test_straggler_more_work_is_not_slowness_2_ranks),
	    cmocka_unit_test(test_throughput_collapse),
	    cmocka_unit_test(test_throughput_escalates),
	    cmocka_unit_test(test_latency_spike_one_file),
	    cmocka_unit_test(test_latency_spike_file_cap),
	    cmocka_unit_test(test_hung_io),
	    cmocka_unit_test(test_imbalance),
	    cmocka_unit_test(test_imbalance_not_at_wind_down),
	    cmocka_unit_test(test_imbalance_of_a_rank_still_at_work),
	    cmocka_unit_test(test_restart_waits_min_interval),
	    cmocka_unit_test(test_finish_and_history),
	    cmocka_unit_test(test_deterministic),
	    cmocka_unit_test(test_ticks_in_order),
	    cmocka_unit_test(test_skipped_ticks_end_alerts),
	    cmocka_unit_test(test_bad_rules_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Run records (common/run_codec.c): a coalescing encoder's frames decode
 * to the same calls, every field exact but the run's inner ends (spread
 * evenly) and, in a long run, durations (each within its histogram
 * bucket, the sum exact); runs split where a call breaks them (a seek, a
 * size, another file, site or thread, a nested, failed or collective
 * call, a window boundary); a frame full of runs stays valid; every
 * malformed run record is rejected with its error. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "frame.h"
#include "frame_seal_test.h"
#include "test_util.h"

static const struct iop_key key = {{9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 1, 2, 3, 4, 5, 6}};
static const struct iop_frame_hdr hdr = {
    .job_id = 7, .seq = 1, .base_ns = 1800000000000000000u, .node_id = 5, .rank = 3, .pid = 44};
#define T0    hdr.base_ns
#define SPLIT 100000000u /* 100 ms */

static void same_event(const struct iop_event *a, const struct iop_event *b)
{
	assert_int_equal(a->end_ns, b->end_ns);
	assert_int_equal(a->dur_ns, b->dur_ns);
	assert_int_equal(a->offset, b->offset);
	assert_int_equal(a->bytes, b->bytes);
	assert_int_equal(a->file, b->file);
	assert_int_equal(a->site, b->site);
	assert_int_equal(a->thread, b->thread);
	assert_int_equal(a->run_calls, b->run_calls);
	assert_int_equal(a->layer, b->layer);
	assert_int_equal(a->op, b->op);
	assert_int_equal(a->flags, b->flags);
}

/* The frame decoded with long runs whole (runs: room for that many,
 * bk: for that many bucket counts) gives the calls iop_frame_events gives,
 * each whole run's iop_run_whole_calls those of its place; the runs
 * decoded whole. Errors as iop_frame_events'. */
static uint32_t whole_agrees(const uint8_t *buf, size_t len, enum iop_err want,
                             const struct iop_event *calls, uint32_t runs, size_t bk)
{
	struct iop_frame f;
	enum iop_err err = iop_frame_open(&f, buf, len, &key);
	uint32_t n = err == IOP_OK ? f.n_events : 0;
	struct iop_event *ev = calloc(n + 1, sizeof *ev), *one = calloc(n + 1, sizeof *one);
	struct iop_run_whole *w = calloc(runs + 1, sizeof *w);
	uint32_t *b = calloc(bk + 1, sizeof *b);
	assert_true(ev && one && w && b);
	struct iop_runs_out out = {.run = w, .cap = runs, .bk = b, .bk_cap = bk};
	uint32_t slots = 0;
	if (err == IOP_OK)
		err = iop_frame_events_whole(&f, ev, n, &out, &slots);
	if (err == IOP_OK)
		err = iop_frame_close(&f);
	assert_int_equal(err, want);
	uint32_t k = 0, i = 0;
	for (uint32_t s = 0; want == IOP_OK && s < slots; s++) {
		assert_true(i < n);
		if (!(ev[s].flags & IOP_EV_WHOLE)) {
			same_event(&ev[s], &calls[i++]);
			continue;
		}
		assert_true(k < out.n);
		assert_true(ev[s].run_calls > IOP_RUN_EXACT_MAX && ev[s].run_calls <= n - i);
		assert_int_equal(w[k].count, ev[s].run_calls);
		iop_run_whole_calls(&ev[s], &w[k++], one);
		for (uint32_t j = 0; j < ev[s].run_calls; j++)
			same_event(&one[j], &calls[i + j]);
		i += ev[s].run_calls;
	}
	assert_int_equal(k, out.n);
	if (want == IOP_OK)
		assert_int_equal(i, n);
	free(ev);
	free(one);
	free(w);
	free(b);
	return k;
}

struct coded {
	uint8_t buf[IOP_FRAME_MAX_LEN];
	size_t len;
	uint64_t runs;
	uint32_t taken; /* events the encoder accepted */
	struct iop_frame_out out;
	struct iop_event ev[IOP_FRAME_MAX_EVENTS];
};

static struct coded *coded_new(void)
{
	struct coded *c = calloc(1, sizeof *c);
	assert_non_null(c);
	c->out.events = c->ev;
	c->out.events_cap = IOP_FRAME_MAX_EVENTS;
	return c;
}

/* Encodes ev[0..n) coalesced into a frame of cap bytes (up to the first
 * FULL) and decodes it back into c->ev. */
static void code(struct coded *c, const struct iop_event *ev, uint32_t n, size_t cap,
                 uint64_t split_ns)
{
	struct iop_frame_enc e;
	assert_int_equal(iop_enc_begin(&e, c->buf, cap, &hdr, NULL), IOP_OK);
	iop_enc_coalesce(&e, split_ns);
	uint32_t i = 0;
	enum iop_err err = IOP_OK;
	while (i < n && (err = iop_enc_event(&e, &ev[i])) == IOP_OK)
		i++;
	assert_true(err == IOP_OK || err == IOP_ERR_FULL);
	c->taken = i;
	assert_int_equal(iop_enc_finish(&e, &key, &c->len), IOP_OK);
	c->runs = e.runs;
	assert_int_equal(iop_frame_decode(c->buf, c->len, &key, &c->out), IOP_OK);
	assert_int_equal(c->out.frame.n_events, i);
	/* long runs decoded whole: the same calls; with no room for them,
	 * every run call by call */
	uint32_t whole = whole_agrees(c->buf, c->len, IOP_OK, c->ev, (uint32_t)c->runs,
	                              (size_t)c->runs * IOP_HIST_BUCKETS);
	assert_true(whole <= c->runs);
	uint32_t long_runs = 0;
	for (uint32_t k = 0; k < i; k++)
		long_runs += c->ev[k].run_calls > IOP_RUN_EXACT_MAX;
	assert_int_equal(whole, long_runs);
	assert_int_equal(whole_agrees(c->buf, c->len, IOP_OK, c->ev, 0, 0), 0);
	if (whole > 1)
		assert_int_equal(whole_agrees(c->buf, c->len, IOP_OK, c->ev, 1, IOP_HIST_BUCKETS), 1);
}

static struct iop_event write_at(uint64_t end, uint64_t dur, uint64_t off, uint64_t bytes)
{
	return (struct iop_event){.end_ns = end, .dur_ns = dur, .offset = off, .bytes = bytes,
	                          .file = 1, .site = 2, .thread = 1, .layer = IOP_LAYER_POSIX,
	                          .op = IOP_OP_WRITE, .flags = IOP_EV_OFFSET | IOP_EV_BYTES};
}

/* Every field of a decoded call but those a run may place (end and
 * duration) equals what was sent; a call outside runs is exact. */
static void same_call(const struct iop_event *sent, const struct iop_event *got)
{
	assert_int_equal(got->layer, sent->layer);
	assert_int_equal(got->op, sent->op);
	assert_int_equal(got->file, sent->file);
	assert_int_equal(got->site, sent->site);
	assert_int_equal(got->thread, sent->thread);
	assert_int_equal(got->offset, sent->offset);
	assert_int_equal(got->bytes, sent->bytes);
	assert_int_equal(got->err, sent->err);
	assert_int_equal(got->parent_id, sent->parent_id);
	assert_int_equal(got->call_id, sent->call_id);
	assert_int_equal(got->child_ops, sent->child_ops);
	assert_int_equal(got->coll_seq, sent->coll_seq);
	assert_int_equal(got->flags & ~IOP_EV_RUN, sent->flags);
	if (!(got->flags & IOP_EV_RUN)) {
		assert_int_equal(got->end_ns, sent->end_ns);
		assert_int_equal(got->dur_ns, sent->dur_ns);
	}
	assert_true(got->dur_ns <= got->end_ns);
}

/* A stream broken on purpose: each break starts a new run (or is a call
 * of its own; metadata calls always are). Offsets and bytes are exact only if every split is where
 * it should be: a run carried across a seek or a size change would give
 * the calls after it the wrong ones. */
static void a_run_splits_where_it_should(void **state)
{
	(void)state;
	struct iop_event ev[400];
	uint32_t n = 0;
	uint64_t t = T0 + 1000, off = 0;
	/* 1: 12 sequential 1 KiB writes (short: each duration sent) */
	for (int i = 0; i < 12; i++, off += 1024)
		ev[n++] = write_at(t += 1500, 700 + (uint64_t)i, off, 1024);
	/* 2: a seek, then 20 more */
	off += 1 << 20;
	for (int i = 0; i < 20; i++, off += 1024)
		ev[n++] = write_at(t += 1500, 800, off, 1024);
	/* 3: a different size */
	for (int i = 0; i < 20; i++, off += 512)
		ev[n++] = write_at(t += 1500, 600, off, 512);
	/* 4: another file */
	for (int i = 0; i < 20; i++) {
		ev[n] = write_at(t += 1500, 650, (uint64_t)i * 4096, 4096);
		ev[n++].file = 9;
	}
	/* a nested call (inside an MPI-IO call): alone */
	ev[n] = write_at(t += 1500, 650, 20 * 4096, 4096);
	ev[n].file = 9;
	ev[n].flags |= IOP_EV_PARENT;
	ev[n++].parent_id = 77;
	/* 5: 20 more; then a failed call, alone */
	for (int i = 0; i < 20; i++) {
		ev[n] = write_at(t += 1500, 650, (uint64_t)(21 + i) * 4096, 4096);
		ev[n++].file = 9;
	}
	ev[n] = write_at(t += 1500, 650, 0, 0);
	ev[n].flags = IOP_EV_ERROR | IOP_EV_OFFSET;
	ev[n].err = 28;
	ev[n++].file = 9;
	/* 6: 20 from another site; 7: 20 from another thread; a collective */
	for (int i = 0; i < 20; i++) {
		ev[n] = write_at(t += 1500, 650, (uint64_t)i * 64, 64);
		ev[n++].site = 3;
	}
	for (int i = 0; i < 20; i++) {
		ev[n] = write_at(t += 1500, 650, (uint64_t)(20 + i) * 64, 64);
		ev[n].site = 3;
		ev[n++].thread = 2;
	}
	ev[n] = write_at(t += 1500, 650, 40 * 64, 64);
	ev[n].site = 3;
	ev[n].thread = 2;
	ev[n].flags |= IOP_EV_COLL;
	ev[n].coll_seq = 1;
	ev[n++].coll_size = 4;
	/* 8: a constant stride (every 4th KiB block), then a read: alone */
	for (int i = 0; i < 20; i++)
		ev[n++] = write_at(t += 1500, 650, (uint64_t)i * 4096, 1024);
	ev[n] = write_at(t += 1500, 650, 0, 1024);
	ev[n++].op = IOP_OP_READ;
	/* 20 lock calls (a take, a release...): not transfers, each alone */
	for (int i = 0; i < 20; i++) {
		ev[n] = write_at(t += 1500, 650 + (uint64_t)i * 1000, 0, 0);
		ev[n].flags = 0;
		ev[n++].op = IOP_OP_LOCK;
	}
	/* 9: 20 calls with no offset (a pipe); 10: across a window's end */
	for (int i = 0; i < 20; i++) {
		ev[n] = write_at(t += 1500, 650, 0, 100);
		ev[n++].flags = IOP_EV_BYTES;
	}
	t = (t / SPLIT + 1) * SPLIT - 10 * 1500;
	for (int i = 0; i < 20; i++, off += 1024)
		ev[n++] = write_at(t += 1500, 650, off, 1024);

	struct coded *c = coded_new();
	code(c, ev, n, sizeof c->buf, SPLIT);
	assert_int_equal(c->taken, n);
	assert_int_equal(c->runs, 11); /* 1-9, and the last one cut in two */
	uint32_t in_runs = 0;
	for (uint32_t i = 0; i < n; i++) {
		same_call(&ev[i], &c->ev[i]);
		in_runs += (c->ev[i].flags & IOP_EV_RUN) != 0;
	}
	/* all but the nested, failed, collective and read calls and the locks */
	assert_int_equal(in_runs, n - 4 - 20);
	/* a run's first and last calls keep their ends; its durations (short
	 * runs) are exact */
	assert_int_equal(c->ev[0].end_ns, ev[0].end_ns);
	assert_int_equal(c->ev[11].end_ns, ev[11].end_ns);
	for (int i = 0; i < 12; i++)
		assert_int_equal(c->ev[i].dur_ns, ev[i].dur_ns);
	/* a long run's (the second: 20 calls) end where it ended */
	assert_int_equal(c->ev[12].end_ns, ev[12].end_ns);
	assert_int_equal(c->ev[31].end_ns, ev[31].end_ns);
	/* the run across the window boundary: its halves on either side, the
	 * call that ends on the boundary's first nanosecond in the second */
	assert_int_equal(c->ev[n - 20].run_calls, 9);
	assert_int_equal(c->ev[n - 11].run_calls, 11);
	assert_int_equal(ev[n - 11].end_ns % SPLIT, 0);
	for (uint32_t i = n - 20; i < n; i++)
		assert_int_equal(c->ev[i].end_ns / SPLIT, ev[i].end_ns / SPLIT);
	/* and the wire: 11 runs and 24 events instead of 256 events */
	struct iop_frame_enc e;
	uint8_t *plain = malloc(IOP_FRAME_MAX_LEN);
	size_t plain_len;
	assert_int_equal(iop_enc_begin(&e, plain, IOP_FRAME_MAX_LEN, &hdr, NULL), IOP_OK);
	for (uint32_t i = 0; i < n; i++)
		assert_int_equal(iop_enc_event(&e, &ev[i]), IOP_OK);
	assert_int_equal(iop_enc_finish(&e, &key, &plain_len), IOP_OK);
	assert_true(c->len * 2 < plain_len);
	free(plain);
	free(c);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* A long run's durations come back from its histogram: min, max and the
 * sum exact, every quantile within the bucket error (1/64) of the truth. */
static void a_long_run_keeps_its_quantiles(void **state)
{
	(void)state;
	enum { N = 5000 };
	static struct iop_event ev[N];
	static uint64_t truth[N], back[N];
	uint64_t t = T0 + 1000, sum = 0;
	srand(7);
	for (int i = 0; i < N; i++) {
		/* a lognormal-ish spread around 2 us, a few slow calls */
		double u = (rand() + 1.0) / ((double)RAND_MAX + 2.0);
		uint64_t d = (uint64_t)(2000.0 * exp(0.6 * sqrt(-2.0 * log(u)) * cos(6.28 * u)));
		if (i % 997 == 3)
			d = 1500000 + (uint64_t)i;
		truth[i] = d;
		sum += d;
		ev[i] = write_at(t += 4000, d, (uint64_t)i * 1024, 1024);
	}
	struct coded *c = coded_new();
	code(c, ev, N, sizeof c->buf, 10 * (uint64_t)SPLIT);
	assert_int_equal(c->taken, N);
	assert_int_equal(c->runs, 1);
	uint64_t got_sum = 0;
	for (int i = 0; i < N; i++) {
		same_call(&ev[i], &c->ev[i]);
		assert_true(c->ev[i].flags & IOP_EV_RUN);
		assert_true(c->ev[i].end_ns >= ev[0].end_ns && c->ev[i].end_ns <= ev[N - 1].end_ns);
		back[i] = c->ev[i].dur_ns;
		got_sum += back[i];
	}
	assert_int_equal(got_sum, sum);
	qsort(truth, N, sizeof *truth, cmp_u64);
	qsort(back, N, sizeof *back, cmp_u64);
	assert_int_equal(back[0], truth[0]);
	assert_int_equal(back[N - 1], truth[N - 1]);
	static const double qs[] = {0.01, 0.1, 0.5, 0.9, 0.99, 0.999};
	for (unsigned k = 0; k < sizeof qs / sizeof *qs; k++) {
		size_t at = (size_t)(qs[k] * (N - 1));
		double err = fabs((double)back[at] - (double)truth[at]) / (double)truth[at];
		assert_true(err <= 1.0 / 64);
	}
	/* a few dozen bytes for 5000 calls */
	assert_true(c->len < 600);
	free(c);
}

/* A frame too small for everything: what the encoder took decodes, runs
 * and all (a run is never let grow past the room its record needs). */
static void a_full_frame_of_runs_stays_valid(void **state)
{
	(void)state;
	enum { N = 20000 };
	static struct iop_event ev[N];
	uint64_t t = T0 + 1000;
	for (int i = 0; i < N; i++) {
		/* runs of 7 calls (durations each sent), then of 300 (a
		 * histogram of many buckets: durations far apart) */
		int len = i < N / 2 ? 7 : 300;
		ev[i] = write_at(t += 1000, 100 + (uint64_t)(i * 7919) % 90000, (uint64_t)i * 8192,
		                 (uint64_t)(1 + i / len));
	}
	for (size_t cap = IOP_FRAME_OVERHEAD + 64; cap < 8000; cap += 67) {
		struct coded *c = coded_new();
		code(c, ev + (cap % 2 ? 0 : N / 2), N / 2, cap, 10 * (uint64_t)SPLIT);
		assert_true(c->len <= cap);
		assert_true(c->taken > 0 && c->taken < N / 2);
		for (uint32_t i = 0; i < c->taken; i++)
			same_call(&ev[i + (cap % 2 ? 0 : N / 2)], &c->ev[i]);
		free(c);
	}
}

/* ---- malformed run records ---- */

/* A v3 frame whose events section is raw[0..n), declaring calls calls. */
static size_t raw_frame(uint8_t *buf, const uint8_t *raw, size_t n, uint32_t calls,
                        uint16_t version)
{
	struct iop_wcur c = iop_wcur_make(buf + IOP_FRAME_HEADER_LEN, 4096);
	for (int i = 0; i < 4; i++)
		iop_put_varint(&c, 0);
	iop_put_bytes(&c, raw, n);
	size_t plen = (size_t)(c.p - (buf + IOP_FRAME_HEADER_LEN));
	return test_seal(buf, plen, version, &hdr, &key, calls, 0, 0, 0);
}

static enum iop_err decode_raw(const uint8_t *raw, size_t n, uint32_t calls, uint16_t version)
{
	uint8_t buf[4096 + IOP_FRAME_OVERHEAD];
	size_t len = raw_frame(buf, raw, n, calls, version);
	struct coded *c = coded_new();
	enum iop_err err = iop_frame_decode(buf, len, &key, &c->out);
	/* the call-by-call reader agrees */
	struct iop_frame f;
	enum iop_err one = iop_frame_open(&f, buf, len, &key);
	struct iop_event tmp;
	for (uint32_t i = 0; one == IOP_OK && i < calls; i++)
		one = iop_frame_event(&f, &tmp);
	if (one == IOP_OK)
		one = iop_frame_close(&f);
	assert_int_equal(one, err);
	/* and the reader of long runs whole */
	(void)whole_agrees(buf, len, err, c->ev, 8, 8 * IOP_HIST_BUCKETS);
	free(c);
	return err;
}

/* code (posix << 6 | 31), op write, flags bytes; end delta +2000 (zigzag
 * 4000), span, count; bytes 1024; then durations */
static size_t run_bytes(uint8_t *p, uint64_t span, uint64_t count, const uint64_t *dur)
{
	uint8_t *q = p;
	*q++ = 0x1f;
	*q++ = IOP_OP_WRITE;
	*q++ = 0x10;
	q = iop_store_varint(q, 4000);
	q = iop_store_varint(q, span);
	q = iop_store_varint(q, count);
	q = iop_store_varint(q, 1024);
	for (uint64_t i = 0; i < count && dur; i++)
		q = iop_store_varint(q, dur[i]);
	return (size_t)(q - p);
}

static void malformed_runs_are_rejected(void **state)
{
	(void)state;
	uint8_t raw[512];
	const uint64_t d3[3] = {100, 200, 300};
	size_t n = run_bytes(raw, 1000, 3, d3);
	assert_int_equal(decode_raw(raw, n, 3, 3), IOP_OK);
	/* the same bytes in a version 2 frame: op 31 does not exist there */
	assert_int_equal(decode_raw(raw, n, 3, 2), IOP_ERR_MALFORMED);
	/* a run of fewer than 2, or more calls than the frame declares */
	n = run_bytes(raw, 1000, 1, d3);
	assert_int_equal(decode_raw(raw, n, 1, 3), IOP_ERR_MALFORMED);
	n = run_bytes(raw, 1000, 3, d3);
	assert_int_equal(decode_raw(raw, n, 2, 3), IOP_ERR_MALFORMED);
	/* fewer calls than declared: the section runs out */
	assert_int_equal(decode_raw(raw, n, 4, 3), IOP_ERR_INCONSISTENT);
	/* a span longer than the time since the epoch */
	n = run_bytes(raw, hdr.base_ns + 5000, 3, d3);
	assert_int_equal(decode_raw(raw, n, 3, 3), IOP_ERR_MALFORMED);
	/* a duration longer than its call's end */
	const uint64_t long_dur[3] = {100, hdr.base_ns + 3000, 300};
	n = run_bytes(raw, 1000, 3, long_dur);
	assert_int_equal(decode_raw(raw, n, 3, 3), IOP_ERR_MALFORMED);
	/* flags a run cannot have: an error, nesting; the collective bit */
	n = run_bytes(raw, 1000, 3, d3);
	raw[2] = 0x30;
	assert_int_equal(decode_raw(raw, n, 3, 3), IOP_ERR_MALFORMED);
	raw[2] = 0x10;
	raw[0] = 0x3f;
	assert_int_equal(decode_raw(raw, n, 3, 3), IOP_ERR_MALFORMED);
	raw[0] = 0x1f;
	raw[1] = 31; /* no such op */
	assert_int_equal(decode_raw(raw, n, 3, 3), IOP_ERR_MALFORMED);
	raw[1] = IOP_OP_WRITE;
	/* cut anywhere: the record runs past the payload */
	for (size_t cut = 1; cut < n; cut++)
		assert_int_equal(decode_raw(raw, cut, 3, 3), IOP_ERR_INCONSISTENT);

	/* a long run: its histogram must hold exactly its calls */
	struct iop_hist h;
	iop_hist_init(&h);
	for (int i = 0; i < 20; i++)
		assert_int_equal(iop_hist_record(&h, 500 + (uint64_t)i * 10), IOP_OK);
	uint8_t *q = raw + run_bytes(raw, 1000, 20, NULL);
	struct iop_wcur w = iop_wcur_make(q, sizeof raw - (size_t)(q - raw));
	iop_hist_encode(&h, &w);
	n = (size_t)(w.p - raw);
	assert_int_equal(decode_raw(raw, n, 20, 3), IOP_OK);
	q = raw + run_bytes(raw, 1000, 21, NULL);
	w = iop_wcur_make(q, sizeof raw - (size_t)(q - raw));
	iop_hist_encode(&h, &w);
	assert_int_equal(decode_raw(raw, (size_t)(w.p - raw), 21, 3), IOP_ERR_INCONSISTENT);
	/* a sum no durations within [min, max] can make */
	h.sum = h.max * h.count + 1;
	q = raw + run_bytes(raw, 1000, 20, NULL);
	w = iop_wcur_make(q, sizeof raw - (size_t)(q - raw));
	iop_hist_encode(&h, &w);
	assert_int_equal(decode_raw(raw, (size_t)(w.p - raw), 20, 3), IOP_ERR_MALFORMED);
	iop_hist_free(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(a_run_splits_where_it_should),
	    cmocka_unit_test(a_long_run_keeps_its_quantiles),
	    cmocka_unit_test(a_full_frame_of_runs_stays_valid),
	    cmocka_unit_test(malformed_runs_are_rejected),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

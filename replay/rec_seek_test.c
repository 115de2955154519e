/* Seeking: to the last KEYFRAME at or before a time, through the END index,
 * an index built by scanning (no END), and indexes that had to stop growing
 * (the rest found by reading on); by fraction of the time span; past a
 * damaged keyframe to the one before. */
#include <stdlib.h>
#include <string.h>

#include "rec_reader_impl.h"
#include "rec_test_util.h"
#include "test_util.h"

#define SECONDS 100

/* One frame a second, a KEYFRAME (before that second's DELTA) at 5, 15, 25 ...,
 * NAMES every 7 s, an ALERT every 11 s. */
static size_t timeline(struct spec *s, size_t cap)
{
	size_t n = 0;
	s[n++] = (struct spec){REC_META, T0, strlen(test_meta), true};
	for (uint64_t t = 0; t < SECONDS; t++) {
		uint64_t at = T0 + t * SEC;
		if (t % 7 == 3)
			s[n++] = (struct spec){REC_NAMES, at, 50, true};
		if (t % 10 == 5)
			s[n++] = (struct spec){REC_KEYFRAME, at, 3000, true};
		s[n++] = (struct spec){REC_DELTA, at, 400 + t * 7, t % 3 != 0};
		if (t % 11 == 10)
			s[n++] = (struct spec){REC_ALERT, at, 80, false};
	}
	assert_true(n <= cap);
	return n;
}

struct rec {
	struct spec specs[256];
	size_t n;
	uint8_t *data;
	size_t len;
};

static void make(struct rec *r, const struct rec_writer_opts *opts, bool close)
{
	r->n = timeline(r->specs, 256);
	r->len = test_spec_bytes(&r->data, opts, r->specs, r->n, close, NULL);
}

/* seq of the frame a seek to t must land on */
static uint64_t expected(const struct rec *r, uint64_t t, uint64_t skip_seq)
{
	uint64_t best = 0;
	for (size_t i = 0; i < r->n; i++)
		if (r->specs[i].type == REC_KEYFRAME && r->specs[i].time_ns <= t && i != skip_seq)
			best = i;
	return best;
}

static void check_seeks(const struct rec *rc, size_t reader_index_max, bool want_clean,
                        bool want_complete)
{
	struct rec_io *io;
	struct rec_reader *r = test_open(rc->data, rc->len, &io);
	if (reader_index_max)
		rec_reader_set_index_max(r, reader_index_max);
	struct rec_frame f;
	const struct rec_index_entry *e;
	size_t n;
	assert_int_equal(rec_index(r, &e, &n), IOP_OK);
	assert_int_equal(r->index.complete, want_complete);
	/* from before the start to past the end, in half seconds, both ways */
	for (int dir = 0; dir < 2; dir++) {
		for (int h = -2; h <= 2 * SECONDS + 10; h++) {
			int step = dir ? 2 * SECONDS + 8 - h : h;
			uint64_t t = T0 + (uint64_t)((int64_t)step * (int64_t)SEC / 2);
			assert_int_equal(rec_seek_time(r, t), IOP_OK);
			assert_int_equal(rec_next(r, &f, NULL, 0), IOP_OK);
			assert_int_equal(f.seq, expected(rc, t, UINT64_MAX));
			assert_int_equal(rec_next(r, &f, NULL, 0), IOP_OK); /* and on from there */
			assert_int_equal(f.seq, expected(rc, t, UINT64_MAX) + 1);
		}
	}
	/* by fraction: 40 % of 99 s is 39.6 s, whose keyframe is at 35 s */
	assert_int_equal(rec_seek_fraction(r, 0.4), IOP_OK);
	assert_int_equal(rec_next(r, &f, NULL, 0), IOP_OK);
	assert_int_equal(f.type, REC_KEYFRAME);
	assert_true(f.time_ns == T0 + 35 * SEC);
	assert_int_equal(rec_seek_fraction(r, 0), IOP_OK);
	assert_int_equal(rec_next(r, &f, NULL, 0), IOP_OK);
	assert_int_equal(f.seq, 0);
	assert_int_equal(rec_seek_fraction(r, 7), IOP_OK); /* clamped to 1 */
	assert_int_equal(rec_next(r, &f, NULL, 0), IOP_OK);
	assert_true(f.time_ns == T0 + 95 * SEC);
	/* and then to the end */
	size_t left = rc->n - f.seq;
	while (rec_next(r, &f, NULL, 0) == IOP_OK)
		left--;
	assert_int_equal(left, 1);
	struct rec_info info;
	assert_int_equal(rec_info(r, &info), IOP_OK);
	assert_int_equal(info.clean, want_clean);
	assert_int_equal(info.keyframes, SECONDS / 10);
	assert_int_equal(info.frames_total, rc->n);
	test_close(r, io);
}

static void seek_with_end(void **state)
{
	struct rec rc;
	make(&rc, NULL, true);
	check_seeks(&rc, 0, true, true);
	free(rc.data);
}

static void seek_without_end(void **state)
{
	struct rec rc;
	make(&rc, NULL, false);
	check_seeks(&rc, 0, false, true);
	free(rc.data);
}

/* The index a scan builds is the one the writer puts in END. */
static void scanned_index_is_end_index(void **state)
{
	struct rec closed, open;
	make(&closed, NULL, true);
	make(&open, NULL, false);
	struct rec_io *io1, *io2;
	struct rec_reader *r1, *r2;
	assert_int_equal(rec_io_mem_view(closed.data, closed.len, &io1), IOP_OK);
	assert_int_equal(rec_io_mem_view(open.data, open.len, &io2), IOP_OK);
	assert_int_equal(rec_open(io1, &r1, NULL, 0), IOP_OK);
	assert_int_equal(rec_open(io2, &r2, NULL, 0), IOP_OK);
	const struct rec_index_entry *e1, *e2;
	size_t n1, n2;
	assert_int_equal(rec_index(r1, &e1, &n1), IOP_OK);
	assert_int_equal(rec_index(r2, &e2, &n2), IOP_OK);
	assert_int_equal(n1, n2);
	assert_true(n1 > SECONDS / 10);
	for (size_t i = 0; i < n1; i++) {
		assert_true(e1[i].time_ns == e2[i].time_ns && e1[i].offset == e2[i].offset);
		assert_true(e1[i].seq == e2[i].seq && e1[i].type == e2[i].type);
	}
	struct rec_info i1, i2;
	assert_int_equal(rec_info(r1, &i1), IOP_OK);
	assert_int_equal(rec_info(r2, &i2), IOP_OK);
	assert_false(i1.verified);
	assert_true(i2.verified);
	assert_memory_equal(i1.frames, i2.frames, sizeof i1.frames);
	assert_true(i1.first_ns == i2.first_ns && i1.last_ns == i2.last_ns);
	rec_reader_close(r1);
	test_close(r2, io1);
	rec_io_close(io2);
	free(closed.data);
	free(open.data);
}

/* Indexes too small for the pinned frames: complete up to a point, the
 * keyframes after it found by reading on. */
static void seek_with_full_index(void **state)
{
	struct rec rc;
	struct rec_writer_opts o = {.index_max = 6, .index_every = 1};
	make(&rc, &o, true);
	check_seeks(&rc, 0, true, false);
	free(rc.data);
	make(&rc, NULL, false);
	check_seeks(&rc, 5, false, false);
	free(rc.data);
}

/* A damaged keyframe: the seek lands on the one before. */
static void seek_past_damaged_keyframe(void **state)
{
	for (int close = 0; close < 2; close++) {
		struct rec rc;
		make(&rc, NULL, close);
		uint64_t kf = expected(&rc, T0 + 45 * SEC, UINT64_MAX);
		struct rec_io *io;
		struct rec_reader *r = test_open(rc.data, rc.len, &io);
		const struct rec_index_entry *e;
		size_t n;
		assert_int_equal(rec_index(r, &e, &n), IOP_OK);
		uint64_t off = 0;
		for (size_t i = 0; i < n; i++)
			if (e[i].seq == kf)
				off = e[i].offset;
		assert_true(off > 0);
		test_close(r, io);
		rc.data[off + REC_FRAME_HDR_LEN + 3] ^= 0x40;
		r = test_open(rc.data, rc.len, &io);
		assert_int_equal(rec_seek_time(r, T0 + 47 * SEC), IOP_OK);
		struct rec_frame f;
		assert_int_equal(rec_next(r, &f, NULL, 0), IOP_OK);
		assert_int_equal(f.seq, expected(&rc, T0 + 45 * SEC, kf));
		assert_true(f.time_ns == T0 + 35 * SEC);
		test_close(r, io);
		free(rc.data);
	}
}

/* Times at the far ends of u64 (a corrupt or hostile recording): a seek by
 * fraction stays within the span, with no overflow in between. */
static void seek_fraction_extreme_times(void **state)
{
	struct spec specs[] = {
	    {REC_META, 0, strlen(test_meta), true},
	    {REC_KEYFRAME, 1, 300, true},
	    {REC_DELTA, 2, 100, true},
	    {REC_KEYFRAME, UINT64_MAX - 1, 300, true},
	    {REC_DELTA, UINT64_MAX, 100, true},
	};
	uint8_t *data;
	size_t len = test_spec_bytes(&data, NULL, specs, sizeof specs / sizeof specs[0], true, NULL);
	struct rec_io *io;
	struct rec_reader *r = test_open(data, len, &io);
	struct rec_frame f;
	double fr[] = {1.0, 0.999999, 0.5, 0.0};
	uint64_t want[] = {3, 1, 1, 1}; /* the span starts at the first keyframe */
	for (size_t i = 0; i < 4; i++) {
		assert_int_equal(rec_seek_fraction(r, fr[i]), IOP_OK);
		assert_int_equal(rec_next(r, &f, NULL, 0), IOP_OK);
		assert_int_equal(f.seq, want[i]);
	}
	test_close(r, io);
	free(data);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(seek_with_end),
	    cmocka_unit_test(seek_without_end),
	    cmocka_unit_test(scanned_index_is_end_index),
	    cmocka_unit_test(seek_with_full_index),
	    cmocka_unit_test(seek_past_damaged_keyframe),
	    cmocka_unit_test(seek_fraction_extreme_times),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

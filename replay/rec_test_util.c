/* Test helpers for the recording library (rec_test_util.h). */
#include <stdlib.h>
#include <string.h>

#include "rec_test_util.h"
#include "test_util.h"

const char test_meta[] = "{\"v\":1,\"job\":{\"id\":\"4242\",\"ranks\":64,\"command\":\"./app\"},"
                         "\"tick_ms\":1000}";

void test_payload(const struct spec *s, uint64_t seq, uint8_t *out)
{
	uint64_t x = seq * 0x9e3779b97f4a7c15ull + s->time_ns + 1;
	for (size_t i = 0; i < s->len; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		out[i] = s->compressible ? (uint8_t)("aggregate "[i % 10] + (i / 640) % 3)
		                         : (uint8_t)(x >> 32);
	}
	if (s->len >= 8) /* the seq, so that two frames never look alike */
		memcpy(out, &seq, 8);
}

size_t test_sample(struct spec *out, size_t cap)
{
	static const struct spec sample[] = {
	    {REC_META, T0, sizeof test_meta - 1, true},
	    {REC_NAMES, T0, 300, true},
	    {REC_KEYFRAME, T0, 4000, true},
	    {REC_DELTA, T0 + 1 * SEC, 2000, true},
	    {REC_EVENTS, T0 + 1 * SEC, 700, false},
	    {REC_DELTA, T0 + 2 * SEC, 100, true},
	    {REC_ALERT, T0 + 2 * SEC, 0, false},
	    {REC_DELTA, T0 + 3 * SEC, 3000, true},
	    {REC_KEYFRAME, T0 + 3 * SEC, 5000, true},
	    {REC_NAMES, T0 + 3 * SEC, 40, false},
	    {REC_DELTA, T0 + 4 * SEC, 1000, false},
	    {REC_ALERT, T0 + 4 * SEC, 200, true},
	    {REC_DELTA, T0 + 5 * SEC, 2500, true},
	};
	size_t n = sizeof sample / sizeof *sample;
	assert_true(n <= cap);
	memcpy(out, sample, sizeof sample);
	return n;
}

void test_write(struct rec_io *io, const struct rec_writer_opts *opts, const struct spec *specs,
                size_t n, bool close, uint64_t *ends)
{
	struct rec_writer_opts o = opts ? *opts : (struct rec_writer_opts){0};
	o.start_ns = specs[0].time_ns;
	o.job_id = 4242;
	struct rec_writer *w;
	assert_int_equal(rec_writer_open(io, &o, test_meta, specs[0].len, &w), IOP_OK);
	struct rec_writer_stats st;
	rec_writer_stats(w, &st);
	if (ends)
		ends[0] = st.file_bytes;
	uint8_t *buf = malloc(1 << 20);
	assert_non_null(buf);
	for (size_t i = 1; i < n; i++) {
		test_payload(&specs[i], i, buf);
		assert_int_equal(rec_write(w, specs[i].type, specs[i].time_ns, buf, specs[i].len),
		                 IOP_OK);
		assert_int_equal(rec_flush(w), IOP_OK);
		rec_writer_stats(w, &st);
		if (ends)
			ends[i] = st.file_bytes;
	}
	free(buf);
	if (close)
		assert_int_equal(rec_close(w), IOP_OK);
	else
		rec_writer_abandon(w);
}

size_t test_read_all(const uint8_t *data, size_t len, const struct spec *specs, size_t n,
                     int64_t *last_seq, struct rec_info *info)
{
	struct rec_io *io;
	struct rec_reader *r = test_open(data, len, &io);
	uint8_t *want = malloc(1 << 20);
	assert_non_null(want);
	size_t got = 0;
	*last_seq = -1;
	struct rec_frame f;
	enum iop_err err;
	while ((err = rec_next(r, &f, NULL, 0)) == IOP_OK) {
		assert_true(f.seq < n);
		assert_true(*last_seq < (int64_t)f.seq);
		const struct spec *s = &specs[f.seq];
		assert_int_equal(f.type, s->type);
		assert_true(f.time_ns == s->time_ns);
		assert_int_equal(f.len, s->len);
		test_payload(s, f.seq, want);
		if (f.seq == 0)
			memcpy(want, test_meta, s->len);
		if (s->len)
			assert_memory_equal(f.payload, want, s->len);
		*last_seq = (int64_t)f.seq;
		got++;
	}
	assert_int_equal(err, IOP_ERR_NOT_FOUND);
	if (info)
		assert_int_equal(rec_info(r, info), IOP_OK);
	free(want);
	test_close(r, io);
	return got;
}

struct rec_reader *test_open(const uint8_t *data, size_t len, struct rec_io **io)
{
	struct rec_reader *r;
	assert_int_equal(rec_io_mem_view(data, len, io), IOP_OK);
	assert_int_equal(rec_open(*io, &r, NULL, 0), IOP_OK);
	return r;
}

void test_close(struct rec_reader *r, struct rec_io *io)
{
	rec_reader_close(r);
	rec_io_close(io);
}

uint8_t *test_mem_copy(struct rec_io *io, size_t *len)
{
	const uint8_t *p;
	rec_io_mem_data(io, &p, len);
	uint8_t *data = malloc(*len ? *len : 1);
	assert_non_null(data);
	memcpy(data, p, *len);
	rec_io_close(io);
	return data;
}

size_t test_spec_bytes(uint8_t **data, const struct rec_writer_opts *opts, const struct spec *specs,
                       size_t n, bool close, uint64_t *ends)
{
	struct rec_io *io;
	assert_int_equal(rec_io_mem_new(&io), IOP_OK);
	test_write(io, opts, specs, n, close, ends);
	size_t len;
	*data = test_mem_copy(io, &len);
	return len;
}

size_t test_sample_bytes(uint8_t **data, bool close, struct spec *specs, size_t *n, uint64_t *ends)
{
	*n = test_sample(specs, 64);
	return test_spec_bytes(data, NULL, specs, *n, close, ends);
}

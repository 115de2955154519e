/* Recording round trips: both stream backends, every frame type, payloads
 * stored compressed and raw, caller and reader buffers, the header checks
 * (magic, byte order, newer and unknown versions), END, the index and info. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codec.h"
#include "rec_format.h"
#include "rec_test_util.h"
#include "test_util.h"

static void round_trip_on(struct rec_io *io)
{
	struct spec specs[64];
	size_t n = test_sample(specs, 64);
	test_write(io, NULL, specs, n, true, NULL);

	struct rec_reader *r;
	char why[200];
	assert_int_equal(rec_open(io, &r, why, sizeof why), IOP_OK);
	const char *json;
	size_t json_len;
	assert_int_equal(rec_meta(r, &json, &json_len), IOP_OK);
	assert_int_equal(json_len, strlen(test_meta));
	assert_memory_equal(json, test_meta, json_len);

	uint8_t *want = malloc(1 << 20), *mine = malloc(1 << 20);
	assert_non_null(want);
	assert_non_null(mine);
	bool seen[REC_TYPE_COUNT] = {0}, compressed = false, raw = false;
	struct rec_frame f;
	for (size_t i = 0; i < n; i++) {
		/* odd frames into the caller's buffer, even ones the reader's */
		assert_int_equal(rec_next(r, &f, i % 2 ? mine : NULL, 1 << 20), IOP_OK);
		assert_int_equal(f.seq, i);
		assert_int_equal(f.type, specs[i].type);
		assert_true(f.time_ns == specs[i].time_ns);
		assert_int_equal(f.len, specs[i].len);
		assert_int_equal(f.skipped, 0);
		if (i % 2)
			assert_ptr_equal(f.payload, mine);
		test_payload(&specs[i], i, want);
		if (i == 0)
			memcpy(want, test_meta, specs[0].len);
		if (f.len)
			assert_memory_equal(f.payload, want, f.len);
		seen[f.type] = true;
		/* compressible payloads over the threshold are stored compressed */
		assert_int_equal(f.compressed, specs[i].compressible && specs[i].len >= 256);
		compressed |= f.compressed;
		raw |= !f.compressed;
	}
	for (unsigned t = REC_META; t < REC_END; t++)
		assert_true(seen[t]);
	assert_true(compressed && raw);
	assert_int_equal(rec_next(r, &f, NULL, 0), IOP_ERR_NOT_FOUND);
	assert_int_equal(rec_next(r, &f, NULL, 0), IOP_ERR_NOT_FOUND);

	struct rec_info info;
	assert_int_equal(rec_info(r, &info), IOP_OK);
	assert_int_equal(info.version, REC_VERSION);
	assert_true(info.job_id == 4242);
	assert_true(info.created_ns == T0);
	assert_true(info.first_ns == T0);
	assert_true(info.last_ns == T0 + 5 * SEC);
	assert_int_equal(info.frames_total, n);
	assert_int_equal(info.frames[REC_DELTA], 5);
	assert_int_equal(info.frames[REC_KEYFRAME], 2);
	assert_int_equal(info.keyframes, 2);
	assert_int_equal(info.frames[REC_META], 1);
	assert_int_equal(info.frames[REC_END], 0);
	assert_true(info.clean);
	assert_false(info.truncated);
	assert_int_equal(info.corrupt, 0);
	assert_false(info.verified);
	assert_int_equal(rec_verify(r), IOP_OK);
	assert_int_equal(rec_info(r, &info), IOP_OK);
	assert_true(info.verified && info.clean);
	assert_int_equal(info.frames_total, n);
	assert_int_equal(info.frames[REC_ALERT], 2);

	free(want);
	free(mine);
	rec_reader_close(r);
}

static void round_trip_memory(void **state)
{
	struct rec_io *io;
	assert_int_equal(rec_io_mem_new(&io), IOP_OK);
	round_trip_on(io);
	assert_int_equal(rec_io_close(io), IOP_OK);
}

static void round_trip_file(void **state)
{
	char dir[] = "/tmp/rec_test.XXXXXX", path[64];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/job.iop", dir);
	struct rec_io *io;
	assert_int_equal(rec_io_file_create(path, &io), IOP_OK);
	round_trip_on(io);
	assert_int_equal(rec_io_close(io), IOP_OK);
	/* and again through a read-only descriptor */
	assert_int_equal(rec_io_file_open(path, &io), IOP_OK);
	struct rec_reader *r;
	assert_int_equal(rec_open(io, &r, NULL, 0), IOP_OK);
	struct rec_info info;
	assert_int_equal(rec_info(r, &info), IOP_OK);
	assert_true(info.clean);
	rec_reader_close(r);
	assert_int_equal(rec_io_close(io), IOP_OK);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);
}

static void index_and_read_at(void **state)
{
	uint8_t *data;
	struct spec specs[64];
	size_t n;
	uint64_t ends[64];
	size_t len = test_sample_bytes(&data, true, specs, &n, ends);
	struct rec_io *io;
	struct rec_reader *r = test_open(data, len, &io);
	const struct rec_index_entry *e;
	size_t ne;
	assert_int_equal(rec_index(r, &e, &ne), IOP_OK);
	/* META, NAMES, ALERT and KEYFRAME always; every 16th other frame (the first) */
	size_t pinned = 0;
	for (size_t i = 0; i < n; i++)
		pinned += specs[i].type != REC_DELTA && specs[i].type != REC_EVENTS;
	assert_int_equal(ne, pinned + 1);
	for (size_t i = 0; i < ne; i++) {
		assert_true(e[i].seq < n);
		uint64_t off = e[i].seq ? ends[e[i].seq - 1] : REC_FILE_HDR_LEN;
		assert_true(e[i].offset == off);
		assert_int_equal(e[i].type, specs[e[i].seq].type);
		assert_true(e[i].time_ns == specs[e[i].seq].time_ns);
		struct rec_frame f;
		assert_int_equal(rec_read_at(r, e[i].offset, &f, NULL, 0), IOP_OK);
		assert_int_equal(f.seq, e[i].seq);
	}
	struct rec_frame f;
	assert_int_equal(rec_read_at(r, REC_FILE_HDR_LEN + 1, &f, NULL, 0), IOP_ERR_MALFORMED);
	assert_int_equal(rec_read_at(r, len + 10, &f, NULL, 0), IOP_ERR_TRUNCATED);
	/* read_at does not move the reader */
	assert_int_equal(rec_next(r, &f, NULL, 0), IOP_OK);
	assert_int_equal(f.seq, 0);
	test_close(r, io);
	free(data);
}

static void caller_buffer_too_small(void **state)
{
	uint8_t *data;
	struct spec specs[64];
	size_t n;
	size_t len = test_sample_bytes(&data, true, specs, &n, NULL);
	struct rec_io *io;
	struct rec_reader *r = test_open(data, len, &io);
	uint8_t small[64], *big = malloc(1 << 16);
	struct rec_frame f;
	assert_int_equal(rec_next(r, &f, small, sizeof small), IOP_ERR_FULL); /* META is longer */
	assert_int_equal(f.len, specs[0].len);
	assert_int_equal(rec_next(r, &f, big, 1 << 16), IOP_OK);
	assert_int_equal(f.seq, 0);
	assert_int_equal(rec_next(r, &f, NULL, 0), IOP_OK);
	assert_int_equal(f.seq, 1);
	free(big);
	test_close(r, io);
	free(data);
}

static void writer_rejects(void **state)
{
	struct rec_io *io;
	struct rec_writer *w;
	assert_int_equal(rec_io_mem_new(&io), IOP_OK);
	assert_int_equal(rec_writer_open(io, NULL, "{}", 2, &w), IOP_OK);
	uint8_t *big = calloc(1, REC_PAYLOAD_MAX + 1);
	assert_non_null(big);
	assert_int_equal(rec_write(w, REC_DELTA, T0, big, REC_PAYLOAD_MAX + 1), IOP_ERR_OVERSIZED);
	assert_int_equal(rec_write(w, REC_END, T0, big, 10), IOP_ERR_INVAL);
	assert_int_equal(rec_write(w, 0, T0, big, 10), IOP_ERR_INVAL);
	assert_int_equal(rec_write(w, REC_TYPE_COUNT, T0, big, 10), IOP_ERR_INVAL);
	/* still usable: the biggest payload allowed goes through */
	assert_int_equal(rec_write(w, REC_KEYFRAME, T0, big, REC_PAYLOAD_MAX), IOP_OK);
	struct rec_writer_stats st;
	rec_writer_stats(w, &st);
	assert_int_equal(st.frames, 2);
	assert_int_equal(st.err, IOP_OK);
	assert_int_equal(rec_close(w), IOP_OK);

	struct rec_reader *r;
	assert_int_equal(rec_open(io, &r, NULL, 0), IOP_OK);
	struct rec_frame f;
	assert_int_equal(rec_next(r, &f, NULL, 0), IOP_OK);
	assert_int_equal(rec_next(r, &f, NULL, 0), IOP_OK);
	assert_int_equal(f.len, REC_PAYLOAD_MAX);
	assert_true(f.compressed);
	assert_memory_equal(f.payload, big, REC_PAYLOAD_MAX);
	rec_reader_close(r);

	/* a writer needs an empty stream */
	assert_int_equal(rec_writer_open(io, NULL, "{}", 2, &w), IOP_ERR_STATE);
	assert_null(w);
	free(big);
	rec_io_close(io);
}

/* A header with one field changed, its checksum made right again. */
static void set_u16_and_fix(uint8_t *data, size_t at, uint16_t v)
{
	iop_store_u16le(data + at, v);
	rec_file_hdr_seal(data);
}

static enum iop_err open_bytes(const uint8_t *data, size_t len, char *why, size_t why_len)
{
	struct rec_io *io;
	struct rec_reader *r = NULL;
	assert_int_equal(rec_io_mem_view(data, len, &io), IOP_OK);
	enum iop_err err = rec_open(io, &r, why, why_len);
	assert_true((err == IOP_OK) == (r != NULL));
	test_close(r, io);
	return err;
}

static void header_checks(void **state)
{
	uint8_t *data;
	struct spec specs[64];
	size_t n;
	size_t len = test_sample_bytes(&data, true, specs, &n, NULL);
	char why[200];
	assert_int_equal(open_bytes(data, len, why, sizeof why), IOP_OK);
	assert_string_equal(why, "");

	set_u16_and_fix(data, 8, REC_VERSION + 1); /* a newer format */
	assert_int_equal(open_bytes(data, len, why, sizeof why), IOP_ERR_BAD_VERSION);
	assert_non_null(strstr(why, "version 2 is newer than this reader"));
	/* refused on the version alone, whatever follows it */
	assert_int_equal(open_bytes(data, 12, why, sizeof why), IOP_ERR_BAD_VERSION);
	set_u16_and_fix(data, 8, 0);
	assert_int_equal(open_bytes(data, len, why, sizeof why), IOP_ERR_BAD_VERSION);
	assert_non_null(strstr(why, "version 0"));
	set_u16_and_fix(data, 8, REC_VERSION);
	assert_int_equal(open_bytes(data, len, NULL, 0), IOP_OK);

	/* a big-endian byte-order mark */
	iop_store_u32le(data + 12, 0x04030201);
	rec_file_hdr_seal(data);
	assert_int_equal(open_bytes(data, len, why, sizeof why), IOP_ERR_MALFORMED);
	assert_non_null(strstr(why, "byte-order"));
	iop_store_u32le(data + 12, REC_BYTE_ORDER);
	data[20] ^= 1; /* job id: checksum no longer matches */
	assert_int_equal(open_bytes(data, len, why, sizeof why), IOP_ERR_MALFORMED);
	data[20] ^= 1;
	rec_file_hdr_seal(data);
	assert_int_equal(open_bytes(data, len, NULL, 0), IOP_OK);

	assert_int_equal(open_bytes(data, 0, NULL, 0), IOP_ERR_TRUNCATED);
	assert_int_equal(open_bytes(data, 5, NULL, 0), IOP_ERR_TRUNCATED);
	assert_int_equal(open_bytes(data, 63, why, sizeof why), IOP_ERR_TRUNCATED);
	assert_int_equal(open_bytes((const uint8_t *)"GIF89a", 6, why, sizeof why),
	                 IOP_ERR_BAD_MAGIC);
	assert_non_null(strstr(why, "not an iopulse recording"));
	/* header alone: opens, no META, no frames, truncated */
	assert_int_equal(open_bytes(data, REC_FILE_HDR_LEN, NULL, 0), IOP_OK);
	free(data);
}

static void empty_and_meta_only(void **state)
{
	struct rec_io *io;
	struct rec_writer *w;
	assert_int_equal(rec_io_mem_new(&io), IOP_OK);
	assert_int_equal(rec_writer_open(io, NULL, NULL, 0, &w), IOP_OK);
	assert_int_equal(rec_close(w), IOP_OK);
	struct rec_reader *r;
	assert_int_equal(rec_open(io, &r, NULL, 0), IOP_OK);
	const char *json;
	size_t json_len;
	assert_int_equal(rec_meta(r, &json, &json_len), IOP_OK);
	assert_int_equal(json_len, 0);
	struct rec_info info;
	assert_int_equal(rec_info(r, &info), IOP_OK);
	assert_true(info.clean);
	assert_int_equal(info.frames_total, 1);
	assert_int_equal(rec_seek_fraction(r, 0.5), IOP_OK);
	assert_int_equal(rec_seek_fraction(r, 0.0 / 0.0), IOP_ERR_INVAL);
	struct rec_frame f;
	assert_int_equal(rec_next(r, &f, NULL, 0), IOP_OK);
	assert_int_equal(f.type, REC_META);
	assert_int_equal(rec_next(r, &f, NULL, 0), IOP_ERR_NOT_FOUND);
	test_close(r, io);
}

static void names(void **state)
{
	assert_string_equal(rec_type_name(REC_KEYFRAME), "KEYFRAME");
	assert_string_equal(rec_type_name(0), "?");
	assert_string_equal(rec_type_name(99), "?");
	assert_string_equal(rec_damage_name(REC_DMG_PAYLOAD_CHECK), "payload checksum");
	assert_string_equal(rec_damage_name(0), "?");
	assert_string_equal(rec_damage_name(1000), "?");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(round_trip_memory),   cmocka_unit_test(round_trip_file),
	    cmocka_unit_test(index_and_read_at),   cmocka_unit_test(caller_buffer_too_small),
	    cmocka_unit_test(writer_rejects),      cmocka_unit_test(header_checks),
	    cmocka_unit_test(empty_and_meta_only), cmocka_unit_test(names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Recordings that went wrong: cut at every byte (a killed writer), one bit
 * flipped anywhere (a damaged frame is skipped, counted and logged; the rest
 * reads), a full disk at every byte (the writer fails, what it wrote reads
 * cleanly), forged lengths and decompression bombs (refused without
 * allocating what they claim), and more damage than the log holds. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "codec.h"
#include "rec_format.h"
#include "rec_test_util.h"
#include "test_util.h"

struct sample {
	uint8_t *data;
	size_t len, n;
	struct spec specs[64];
	uint64_t ends[64]; /* file size after frame i */
};

static void sample_make(struct sample *s, bool close)
{
	s->len = test_sample_bytes(&s->data, close, s->specs, &s->n, s->ends);
}

static uint64_t frame_start(const struct sample *s, size_t i)
{
	return i ? s->ends[i - 1] : REC_FILE_HDR_LEN;
}

static enum iop_err try_open(const uint8_t *data, size_t len)
{
	struct rec_io *io;
	struct rec_reader *r = NULL;
	assert_int_equal(rec_io_mem_view(data, len, &io), IOP_OK);
	enum iop_err err = rec_open(io, &r, NULL, 0);
	test_close(r, io);
	return err;
}

/* Every length from 0 to the whole file: reads exactly the whole frames. */
static void cut_at_every_byte(void **state)
{
	struct sample s;
	sample_make(&s, true);
	uint64_t end_frame_end = s.len - REC_TRAILER_LEN;
	for (size_t cut = 0; cut <= s.len; cut++) {
		if (cut < REC_FILE_HDR_LEN) {
			assert_int_equal(try_open(s.data, cut), IOP_ERR_TRUNCATED);
			continue;
		}
		size_t whole = 0;
		while (whole < s.n && s.ends[whole] <= cut)
			whole++;
		struct rec_info info;
		int64_t last;
		assert_int_equal(test_read_all(s.data, cut, s.specs, s.n, &last, &info), whole);
		assert_int_equal(last, (int64_t)whole - 1);
		assert_int_equal(info.corrupt, 0);
		assert_int_equal(info.frames_total, whole);
		bool clean = cut >= end_frame_end;
		assert_int_equal(info.clean, clean);
		assert_int_equal(info.truncated, !clean);
		if (!clean) {
			uint64_t whole_end = whole ? s.ends[whole - 1] : REC_FILE_HDR_LEN;
			assert_int_equal(info.tail_bytes, cut - whole_end);
			if (whole)
				assert_true(info.last_ns == s.specs[whole - 1].time_ns);
		}
	}
	free(s.data);
}

/* Reads data (a damaged sample) and checks that exactly frame `gone` (or
 * none, when gone >= n) is missing. */
static void read_without(const struct sample *s, const uint8_t *data, size_t gone,
                         struct rec_info *info)
{
	struct rec_io *io;
	struct rec_reader *r = test_open(data, s->len, &io);
	struct rec_frame f;
	enum iop_err err;
	size_t want = 0;
	uint32_t skipped = 0;
	while ((err = rec_next(r, &f, NULL, 0)) == IOP_OK) {
		if (want == gone)
			want++;
		assert_int_equal(f.seq, want);
		assert_int_equal(f.len, s->specs[want].len);
		skipped += f.skipped;
		want++;
	}
	assert_int_equal(err, IOP_ERR_NOT_FOUND);
	skipped += f.skipped;            /* damage just before the end is told at the end */
	if (want == gone && gone < s->n) /* the last frame was the damaged one */
		want++;
	assert_int_equal(want, s->n);
	assert_int_equal(rec_verify(r), IOP_OK);
	assert_int_equal(rec_info(r, info), IOP_OK);
	assert_int_equal(info->frames_total, gone < s->n ? s->n - 1 : s->n);
	const char *json;
	size_t json_len;
	assert_int_equal(rec_meta(r, &json, &json_len), gone == 0 ? IOP_ERR_NOT_FOUND : IOP_OK);
	if (gone < s->n) {
		assert_int_equal(skipped, 1);
		const struct rec_damage *d;
		size_t nd;
		rec_damage_log(r, &d, &nd);
		assert_int_equal(nd, 1);
		assert_int_equal(d[0].offset, frame_start(s, gone));
		assert_int_equal(d[0].bytes, s->ends[gone] - frame_start(s, gone));
	}
	test_close(r, io);
}

/* One bit flipped in every byte of every frame in turn. */
static void bit_flip_anywhere(void **state)
{
	struct sample s;
	sample_make(&s, true);
	uint8_t *copy = malloc(s.len);
	assert_non_null(copy);
	size_t frame = 0;
	for (size_t at = REC_FILE_HDR_LEN; at < s.len; at++) {
		memcpy(copy, s.data, s.len);
		copy[at] ^= (uint8_t)(1u << (at % 8));
		while (frame < s.n && s.ends[frame] <= at)
			frame++;
		struct rec_info info;
		if (frame < s.n) { /* a data frame: skipped, counted, the rest read */
			read_without(&s, copy, frame, &info);
			assert_int_equal(info.corrupt, 1);
			assert_true(info.clean);
			uint64_t in_frame = at - frame_start(&s, frame);
			const struct rec_damage *d;
			size_t nd;
			struct rec_io *io;
			struct rec_reader *r = test_open(copy, s.len, &io);
			assert_int_equal(rec_verify(r), IOP_OK);
			rec_damage_log(r, &d, &nd);
			assert_int_equal(nd, 1);
			enum rec_damage_kind kind = in_frame < REC_SYNC_LEN ? REC_DMG_NO_SYNC
			                            : in_frame < REC_FRAME_HDR_LEN
			                                ? REC_DMG_HEADER_CHECK
			                                : REC_DMG_PAYLOAD_CHECK;
			assert_int_equal(d[0].kind, kind);
			assert_int_equal(d[0].time_known, kind == REC_DMG_PAYLOAD_CHECK);
			if (d[0].time_known)
				assert_true(d[0].time_ns == s.specs[frame].time_ns);
			test_close(r, io);
		} else if (at < s.len - REC_TRAILER_LEN) { /* END: every frame, not clean */
			read_without(&s, copy, s.n, &info);
			assert_int_equal(info.corrupt, 1);
			assert_false(info.clean);
			assert_true(info.truncated);
		} else { /* the trailer: END is found by reading instead */
			read_without(&s, copy, s.n, &info);
			assert_int_equal(info.corrupt, 0);
			assert_true(info.clean);
			assert_true(info.verified);
		}
	}
	free(copy);
	free(s.data);
}

/* A full disk after every byte count: the writer fails at the frame that
 * does not fit, stays failed, and the bytes it got out read cleanly. */
static void full_disk_at_every_byte(void **state)
{
	struct sample s;
	sample_make(&s, true);
	uint8_t *buf = malloc(1 << 20);
	assert_non_null(buf);
	for (uint64_t limit = 0; limit <= s.len; limit++) {
		struct rec_io *io;
		struct rec_writer *w;
		assert_int_equal(rec_io_mem_new(&io), IOP_OK);
		rec_io_mem_fail_after(io, limit);
		struct rec_writer_opts o = {.job_id = 4242, .start_ns = T0};
		enum iop_err err = rec_writer_open(io, &o, test_meta, s.specs[0].len, &w);
		if (limit < s.ends[0]) {
			assert_int_equal(err, IOP_ERR_IO);
			assert_int_equal(rec_io_errno(io), ENOSPC);
			rec_io_close(io);
			continue;
		}
		assert_int_equal(err, IOP_OK);
		size_t ok = 1;
		for (size_t i = 1; i < s.n; i++) {
			test_payload(&s.specs[i], i, buf);
			err =
			    rec_write(w, s.specs[i].type, s.specs[i].time_ns, buf, s.specs[i].len);
			assert_int_equal(err, s.ends[i] <= limit ? IOP_OK : IOP_ERR_IO);
			ok += err == IOP_OK;
		}
		struct rec_writer_stats st;
		rec_writer_stats(w, &st);
		bool fits = limit >= s.len;
		assert_int_equal(st.err, ok == s.n ? IOP_OK : IOP_ERR_IO);
		assert_int_equal(st.sys_errno, ok == s.n ? 0 : ENOSPC);
		assert_int_equal(rec_flush(w), st.err);
		assert_int_equal(rec_close(w), fits ? IOP_OK : IOP_ERR_IO);

		const uint8_t *p;
		size_t len;
		rec_io_mem_data(io, &p, &len);
		assert_int_equal(len, fits ? s.len : limit);
		struct rec_info info;
		int64_t last;
		assert_int_equal(test_read_all(p, len, s.specs, s.n, &last, &info), ok);
		assert_int_equal(info.corrupt, 0);
		/* END out whole, the trailer not: the file is closed all the same */
		assert_int_equal(info.clean, limit >= s.len - REC_TRAILER_LEN);
		rec_io_close(io);
	}
	free(buf);
	free(s.data);
}

/* The sample (unclosed) with frame bytes put in before frame k. */
static uint8_t *splice(const struct sample *s, size_t k, const uint8_t *frame, size_t frame_len,
                       size_t *len)
{
	uint64_t at = frame_start(s, k);
	*len = s->len + frame_len;
	uint8_t *out = malloc(*len);
	assert_non_null(out);
	memcpy(out, s->data, at);
	memcpy(out + at, frame, frame_len);
	memcpy(out + at + frame_len, s->data + at, s->len - at);
	return out;
}

/* A frame with a well-formed header (checksums right) around any payload. */
static size_t forge(uint8_t *out, unsigned type, uint8_t flags, const void *stored,
                    uint32_t stored_len, uint32_t raw_len)
{
	struct rec_frame_hdr h = {.type = (uint8_t)type,
	                          .flags = flags,
	                          .stored_len = stored_len,
	                          .raw_len = raw_len,
	                          .seq = 999,
	                          .time_ns = T0 + 77,
	                          .payload_check = rec_payload_check(stored, stored_len)};
	rec_frame_hdr_encode(out, &h);
	memcpy(out + REC_FRAME_HDR_LEN, stored, stored_len);
	return REC_FRAME_HDR_LEN + stored_len;
}

/* Reads an unclosed sample with one forged frame spliced in before frame 5:
 * all sample frames read, the forged one counted as damage of kind. */
static void forged_is_skipped(const struct sample *s, const uint8_t *frame, size_t frame_len,
                              enum rec_damage_kind kind)
{
	size_t len;
	uint8_t *data = splice(s, 5, frame, frame_len, &len);
	struct rec_io *io;
	struct rec_reader *r = test_open(data, len, &io);
	struct rec_frame f;
	size_t got = 0;
	uint32_t skipped = 0;
	while (rec_next(r, &f, NULL, 0) == IOP_OK) {
		assert_int_equal(f.seq, got);
		skipped += f.skipped;
		got++;
	}
	assert_int_equal(got, s->n);
	assert_int_equal(skipped, 1);
	const struct rec_damage *d;
	size_t nd;
	rec_damage_log(r, &d, &nd);
	assert_int_equal(nd, 1);
	assert_int_equal(d[0].kind, kind);
	assert_int_equal(d[0].offset, frame_start(s, 5));
	assert_true(d[0].time_known && d[0].time_ns == T0 + 77);
	struct rec_info info;
	assert_int_equal(rec_info(r, &info), IOP_OK);
	assert_int_equal(info.corrupt, 1);
	assert_int_equal(info.frames_total, s->n);
	assert_int_equal(info.tail_bytes, 0);
	test_close(r, io);
	free(data);
}

static void forged_frames(void **state)
{
	struct sample s;
	sample_make(&s, false);
	uint8_t *frame = malloc(2 << 20), *zeros = calloc(1, 1 << 20), *z = malloc(1 << 20);
	assert_non_null(frame);
	assert_non_null(zeros);
	assert_non_null(z);
	uint8_t small[16] = {1, 2, 3};

	/* lengths over the limit, with the header checksum right */
	size_t n = forge(frame, REC_DELTA, 0, small, sizeof small, sizeof small);
	iop_store_u32le(frame + 8, 0xffffffffu);
	iop_store_u32le(frame + 12, 0xffffffffu);
	rec_frame_hdr_seal(frame);
	forged_is_skipped(&s, frame, n, REC_DMG_BAD_FIELD);
	/* a length within the limit but past the end of the file, mid-file */
	n = forge(frame, REC_DELTA, 0, small, sizeof small, sizeof small);
	iop_store_u32le(frame + 8, 1u << 20);
	iop_store_u32le(frame + 12, 1u << 20);
	rec_frame_hdr_seal(frame);
	forged_is_skipped(&s, frame, n, REC_DMG_BAD_FIELD);
	/* unknown type, unknown flag, raw with stored != raw */
	forged_is_skipped(&s, frame, forge(frame, 0, 0, small, 16, 16), REC_DMG_BAD_FIELD);
	forged_is_skipped(&s, frame, forge(frame, REC_END + 1, 0, small, 16, 16),
	                  REC_DMG_BAD_FIELD);
	forged_is_skipped(&s, frame, forge(frame, REC_DELTA, 0x80, small, 16, 16),
	                  REC_DMG_BAD_FIELD);
	forged_is_skipped(&s, frame, forge(frame, REC_DELTA, 0, small, 16, 17), REC_DMG_BAD_FIELD);

	/* a decompression bomb: 1 MiB of zeros in a few bytes, declared as 100 */
	size_t zn = ZSTD_compress(z, 1 << 20, zeros, 1 << 20, 1);
	assert_false(ZSTD_isError(zn));
	assert_true(zn < 1000);
	n = forge(frame, REC_DELTA, REC_FLAG_ZSTD, z, (uint32_t)zn, 100);
	forged_is_skipped(&s, frame, n, REC_DMG_DECOMPRESS);
	/* declared bigger than it is */
	n = forge(frame, REC_DELTA, REC_FLAG_ZSTD, z, (uint32_t)zn, (1 << 20) + 1);
	forged_is_skipped(&s, frame, n, REC_DMG_DECOMPRESS);
	/* not zstd at all */
	n = forge(frame, REC_DELTA, REC_FLAG_ZSTD, small, sizeof small, 1000);
	forged_is_skipped(&s, frame, n, REC_DMG_DECOMPRESS);
	/* a zstd frame that does not say its size (streamed) */
	ZSTD_CCtx *cc = ZSTD_createCCtx();
	ZSTD_CCtx_setParameter(cc, ZSTD_c_contentSizeFlag, 0);
	ZSTD_inBuffer in = {zeros, 5000, 0};
	ZSTD_outBuffer zout = {z, 1 << 20, 0};
	assert_int_equal(ZSTD_compressStream2(cc, &zout, &in, ZSTD_e_end), 0);
	ZSTD_freeCCtx(cc);
	n = forge(frame, REC_DELTA, REC_FLAG_ZSTD, z, (uint32_t)zout.pos, 5000);
	forged_is_skipped(&s, frame, n, REC_DMG_DECOMPRESS);
	/* an END whose index does not parse */
	n = forge(frame, REC_END, 0, small, sizeof small, sizeof small);
	forged_is_skipped(&s, frame, n, REC_DMG_BAD_END);
	/* control: a zstd frame declared right reads fine */
	zn = ZSTD_compress(z, 1 << 20, zeros, 5000, 1);
	n = forge(frame, REC_DELTA, REC_FLAG_ZSTD, z, (uint32_t)zn, 5000);
	size_t len;
	uint8_t *data = splice(&s, 5, frame, n, &len);
	struct rec_io *io;
	struct rec_reader *r = test_open(data, len, &io);
	struct rec_info info;
	assert_int_equal(rec_info(r, &info), IOP_OK);
	assert_int_equal(info.corrupt, 0);
	assert_int_equal(info.frames_total, s.n + 1);
	test_close(r, io);
	free(data);
	free(frame);
	free(zeros);
	free(z);
	free(s.data);
}

/* Forged headers one after the other, each claiming the rest of the file
 * with a payload checksum that does not match: the first is skipped whole,
 * so the reader checksums the file once, not once per header. */
static void nested_forgeries(void **state)
{
	enum { N = 20000 };
	size_t len = REC_FILE_HDR_LEN + (size_t)N * REC_FRAME_HDR_LEN;
	uint8_t *data = calloc(1, len);
	assert_non_null(data);
	struct rec_file_hdr fh = {.version = REC_VERSION, .job_id = 1, .created_ns = T0};
	rec_file_hdr_encode(data, &fh);
	for (size_t i = 0; i < N; i++) {
		uint64_t off = REC_FILE_HDR_LEN + i * REC_FRAME_HDR_LEN;
		uint32_t rest = (uint32_t)(len - off - REC_FRAME_HDR_LEN);
		struct rec_frame_hdr h = {.type = REC_DELTA,
		                          .stored_len = rest,
		                          .raw_len = rest,
		                          .time_ns = T0 + i,
		                          .payload_check = 12345};
		rec_frame_hdr_encode(data + off, &h);
	}
	struct rec_io *io;
	struct rec_reader *r = test_open(data, len, &io);
	struct rec_frame f;
	assert_int_equal(rec_next(r, &f, NULL, 0), IOP_ERR_NOT_FOUND);
	struct rec_info info;
	assert_int_equal(rec_info(r, &info), IOP_OK);
	assert_int_equal(info.corrupt, 1);
	assert_int_equal(info.frames_total, 0);
	assert_int_equal(info.tail_bytes, 0);
	test_close(r, io);
	free(data);
}

/* More damaged frames than the log holds: all counted, the first logged. */
static void damage_log_overflow(void **state)
{
	enum { N = REC_DAMAGE_LOG + 100 };
	struct rec_io *io;
	struct rec_writer *w;
	assert_int_equal(rec_io_mem_new(&io), IOP_OK);
	assert_int_equal(rec_writer_open(io, NULL, "{}", 2, &w), IOP_OK);
	uint8_t payload[32] = {0};
	for (int i = 0; i < N; i++)
		assert_int_equal(rec_write(w, REC_DELTA, T0 + (uint64_t)i, payload, sizeof payload),
		                 IOP_OK);
	rec_writer_abandon(w);
	size_t len;
	uint8_t *copy = test_mem_copy(io, &len);
	size_t first = REC_FILE_HDR_LEN + REC_FRAME_HDR_LEN + 2;
	size_t frame_len = REC_FRAME_HDR_LEN + sizeof payload;
	for (int i = 0; i < N; i++)
		copy[first + (size_t)i * frame_len + REC_FRAME_HDR_LEN + 5] ^= 0x10;
	struct rec_io *view;
	struct rec_reader *r = test_open(copy, len, &view);
	for (int pass = 0; pass < 2; pass++) { /* reading twice counts nothing twice */
		rec_rewind(r);
		struct rec_frame f;
		assert_int_equal(rec_next(r, &f, NULL, 0), IOP_OK);
		assert_int_equal(f.type, REC_META);
		assert_int_equal(rec_next(r, &f, NULL, 0), IOP_ERR_NOT_FOUND);
		struct rec_info info;
		assert_int_equal(rec_info(r, &info), IOP_OK);
		assert_int_equal(info.corrupt, N);
		assert_int_equal(info.corrupt_bytes, (uint64_t)N * frame_len);
		assert_int_equal(info.frames_total, 1);
	}
	const struct rec_damage *d;
	size_t nd;
	rec_damage_log(r, &d, &nd);
	assert_int_equal(nd, REC_DAMAGE_LOG);
	for (size_t i = 0; i < nd; i++)
		assert_int_equal(d[i].offset, first + i * frame_len);
	test_close(r, view);
	free(copy);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(cut_at_every_byte),       cmocka_unit_test(bit_flip_anywhere),
	    cmocka_unit_test(full_disk_at_every_byte), cmocka_unit_test(forged_frames),
	    cmocka_unit_test(damage_log_overflow),     cmocka_unit_test(nested_forgeries),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

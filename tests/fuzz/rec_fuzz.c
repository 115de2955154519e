/* libFuzzer target for the recording reader (replay/rec.h), over the memory
 * backend. The first input byte picks how the rest is read:
 *
 *   bit 0  seal it first: recompute the checksums of the file header, of
 *          each frame met walking from the first (header and payload), and
 *          of a trailer, so mutations reach what checksums guard
 *          (lengths, types, zstd frames, END indexes)
 *   bit 1  read payloads into a small caller buffer (IOP_ERR_FULL, then
 *          again into one big enough)
 *   bits 2-7  where the seeks go
 *
 * Oracle: no crash, no leak, no undefined behaviour (sanitizers), no single
 * allocation over scripts/fuzz's -malloc_limit_mb for this target, and
 * consistency: frames come in increasing offsets, a scan counts exactly the
 * frames rec_next() returned, index entries and damage are in file order,
 * a seek lands on a keyframe no later than asked or on the first frame. */
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "rec_format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(bool ok)
{
	if (!ok)
		abort();
}

static void seal(uint8_t *p, size_t len)
{
	if (len >= REC_FILE_HDR_LEN)
		rec_file_hdr_seal(p);
	size_t off = REC_FILE_HDR_LEN;
	while (off + REC_FRAME_HDR_LEN <= len && memcmp(p + off, REC_SYNC, REC_SYNC_LEN) == 0) {
		uint32_t stored = iop_load_u32le(p + off + 8);
		if (stored > len - off - REC_FRAME_HDR_LEN)
			break;
		iop_store_u64le(p + off + 32,
		                rec_payload_check(p + off + REC_FRAME_HDR_LEN, stored));
		rec_frame_hdr_seal(p + off);
		off += REC_FRAME_HDR_LEN + stored;
	}
	if (len >= REC_TRAILER_LEN && memcmp(p + len - 8, REC_TRAILER_MAGIC, 8) == 0)
		rec_trailer_seal(p + len - REC_TRAILER_LEN);
}

static uint64_t touch(const struct rec_frame *f)
{
	uint64_t sum = 0;
	for (size_t i = 0; i < f->len; i++)
		sum += f->payload[i];
	return sum;
}

/* Reads from the reader's position to the end; returns the frame count.
 * With small, payloads go to a small buffer first; after IOP_ERR_FULL the
 * same frame is asked for again with room for it (it may then turn out
 * damaged and be skipped: any answer is fine). */
static uint64_t read_on(struct rec_reader *r, bool small, uint64_t *sum)
{
	static uint8_t buf[64];
	uint8_t *big = NULL;
	uint64_t n = 0, last_off = 0;
	struct rec_frame f;
	for (;;) {
		uint8_t *dst = big ? big : small ? buf : NULL;
		size_t cap = big ? f.len : sizeof buf;
		enum iop_err err = rec_next(r, &f, dst, cap);
		if (err == IOP_OK)
			*sum += touch(&f);
		free(big);
		big = NULL;
		if (err == IOP_ERR_FULL) {
			check(dst && f.len > cap && f.len <= REC_PAYLOAD_MAX);
			big = malloc(f.len);
			check(big != NULL);
			continue;
		}
		if (err != IOP_OK) {
			check(err == IOP_ERR_NOT_FOUND);
			return n;
		}
		check(f.len <= REC_PAYLOAD_MAX && f.type >= REC_META && f.type < REC_END);
		check(n == 0 || f.offset > last_off);
		last_off = f.offset;
		n++;
	}
}

static void seek_and_check(struct rec_reader *r, uint64_t t, uint64_t first_off)
{
	check(rec_seek_time(r, t) == IOP_OK);
	struct rec_frame f;
	if (rec_next(r, &f, NULL, 0) == IOP_OK && f.offset > first_off)
		check(f.type == REC_KEYFRAME && f.time_ns <= t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	uint8_t mode = data[0];
	size_t len = size - 1;
	uint8_t *copy = malloc(len ? len : 1);
	check(copy != NULL);
	memcpy(copy, data + 1, len);
	if (mode & 1)
		seal(copy, len);

	struct rec_io *io;
	struct rec_reader *r;
	char why[160];
	check(rec_io_mem_view(copy, len, &io) == IOP_OK);
	enum iop_err err = rec_open(io, &r, why, sizeof why);
	if (err != IOP_OK) {
		check(r == NULL && memchr(why, '\0', sizeof why) != NULL);
		rec_io_close(io);
		free(copy);
		return 0;
	}
	const char *json;
	size_t json_len;
	if (rec_meta(r, &json, &json_len) == IOP_OK)
		check(json_len <= REC_PAYLOAD_MAX && json[json_len] == '\0');

	uint64_t sum = 0;
	uint64_t frames = read_on(r, mode & 2, &sum);
	struct rec_frame f;
	rec_rewind(r);
	uint64_t first_off = rec_next(r, &f, NULL, 0) == IOP_OK ? f.offset : 0;

	check(rec_verify(r) == IOP_OK);
	struct rec_info info;
	check(rec_info(r, &info) == IOP_OK);
	check(info.verified && info.frames_total == frames);
	check(info.truncated == !info.clean && info.tail_bytes <= len);
	check(frames == 0 || info.first_ns <= info.last_ns);

	const struct rec_index_entry *e;
	size_t ne;
	check(rec_index(r, &e, &ne) == IOP_OK && ne <= REC_INDEX_MAX);
	for (size_t i = 0; i < ne; i++) {
		check(e[i].offset < len && (i == 0 || e[i].offset > e[i - 1].offset));
		check(rec_read_at(r, e[i].offset, &f, NULL, 0) == IOP_OK);
		check(f.type == e[i].type && f.seq == e[i].seq);
	}
	const struct rec_damage *d;
	size_t nd;
	rec_damage_log(r, &d, &nd);
	check(nd <= info.corrupt);
	for (size_t i = 1; i < nd; i++)
		check(d[i].offset > d[i - 1].offset);

	uint64_t span = info.last_ns - info.first_ns;
	seek_and_check(r, info.first_ns ? info.first_ns - 1 : 0, first_off);
	seek_and_check(r, info.last_ns, first_off);
	seek_and_check(r, info.first_ns + span / 64 * (mode >> 2), first_off);
	check(rec_seek_fraction(r, (mode >> 2) / 63.0) == IOP_OK);
	read_on(r, false, &sum);

	rec_reader_close(r);
	rec_io_close(io);
	free(copy);
	return sum == 42 ? 0 : 0; /* sum keeps the payload reads */
}

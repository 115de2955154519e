/* File header, frame header and trailer of a recording (docs/recording.md).
 * Checksums: XXH32 (seed 0) over each header, XXH3-64 (seed 0) over each
 * stored payload, from libxxhash. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <xxhash.h>

#include "codec.h"
#include "rec_format.h"

__attribute__((format(printf, 3, 4))) static void say(char *why, size_t why_len, const char *fmt,
                                                      ...)
{
	if (why && why_len) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(why, why_len, fmt, ap);
		va_end(ap);
	}
}

static uint32_t check32(const uint8_t *p, size_t len)
{
	return XXH32(p, len, 0);
}

uint64_t rec_payload_check(const void *p, size_t len)
{
	return XXH3_64bits(p, len);
}

/* Each fixed-size piece ends (the trailer: before its magic) in the XXH32
 * of the bytes before its check. */
static void seal(uint8_t *p, size_t check_at)
{
	iop_store_u32le(p + check_at, check32(p, check_at));
}

void rec_file_hdr_seal(uint8_t p[REC_FILE_HDR_LEN])
{
	seal(p, REC_FILE_HDR_LEN - 4);
}

void rec_frame_hdr_seal(uint8_t p[REC_FRAME_HDR_LEN])
{
	seal(p, REC_FRAME_HDR_LEN - 4);
}

void rec_trailer_seal(uint8_t p[REC_TRAILER_LEN])
{
	seal(p, 12);
}

void rec_file_hdr_encode(uint8_t out[REC_FILE_HDR_LEN], const struct rec_file_hdr *h)
{
	struct iop_wcur c = iop_wcur_make(out, REC_FILE_HDR_LEN);
	iop_put_bytes(&c, REC_FILE_MAGIC, 8);
	iop_put_u16le(&c, h->version);
	iop_put_u16le(&c, REC_FILE_HDR_LEN);
	iop_put_u32le(&c, REC_BYTE_ORDER);
	iop_put_u64le(&c, h->job_id);
	iop_put_u64le(&c, h->created_ns);
	iop_put_u32le(&c, REC_PAYLOAD_MAX);
	while (iop_wcur_room(&c) > 0)
		iop_put_u8(&c, 0);
	rec_file_hdr_seal(out);
}

/* Version rule: a reader reads every version from 1 up to REC_VERSION, each
 * by its own layout (only version 1 exists), and refuses anything newer
 * before looking at a byte past the version field, whose meaning it cannot
 * know. */
enum iop_err rec_file_hdr_decode(const uint8_t *p, size_t len, struct rec_file_hdr *h, char *why,
                                 size_t why_len)
{
	size_t m = len < 8 ? len : 8;
	if (memcmp(p, REC_FILE_MAGIC, m) != 0) {
		say(why, why_len, "not an iopulse recording (bad magic)");
		return IOP_ERR_BAD_MAGIC;
	}
	if (len < 10) {
		say(why, why_len, "recording cut short inside its header (%zu bytes)", len);
		return IOP_ERR_TRUNCATED;
	}
	struct iop_rcur c = iop_rcur_make(p + 8, len - 8);
	h->version = iop_get_u16le(&c);
	if (h->version > REC_VERSION) {
		say(why, why_len,
		    "recording format version %u is newer than this reader (reads 1 to %d): "
		    "use a newer iopulse",
		    h->version, REC_VERSION);
		return IOP_ERR_BAD_VERSION;
	}
	if (h->version == 0) {
		say(why, why_len, "recording format version 0 does not exist (reads 1 to %d)",
		    REC_VERSION);
		return IOP_ERR_BAD_VERSION;
	}
	if (len < REC_FILE_HDR_LEN) {
		say(why, why_len, "recording cut short inside its header (%zu of %d bytes)", len,
		    REC_FILE_HDR_LEN);
		return IOP_ERR_TRUNCATED;
	}
	uint16_t hdr_len = iop_get_u16le(&c);
	uint32_t order = iop_get_u32le(&c);
	h->job_id = iop_get_u64le(&c);
	h->created_ns = iop_get_u64le(&c);
	if (order != REC_BYTE_ORDER) {
		say(why, why_len,
		    "recording has byte-order mark 0x%08x, not 0x%08x (little-endian)", order,
		    REC_BYTE_ORDER);
		return IOP_ERR_MALFORMED;
	}
	if (hdr_len != REC_FILE_HDR_LEN ||
	    iop_load_u32le(p + REC_FILE_HDR_LEN - 4) != check32(p, REC_FILE_HDR_LEN - 4)) {
		say(why, why_len, "recording header is damaged (length %u, or checksum)", hdr_len);
		return IOP_ERR_MALFORMED;
	}
	return IOP_OK;
}

void rec_frame_hdr_encode(uint8_t out[REC_FRAME_HDR_LEN], const struct rec_frame_hdr *h)
{
	struct iop_wcur c = iop_wcur_make(out, REC_FRAME_HDR_LEN);
	iop_put_bytes(&c, REC_SYNC, REC_SYNC_LEN);
	iop_put_u8(&c, h->type);
	iop_put_u8(&c, h->flags);
	iop_put_u16le(&c, 0);
	iop_put_u32le(&c, h->stored_len);
	iop_put_u32le(&c, h->raw_len);
	iop_put_u64le(&c, h->seq);
	iop_put_u64le(&c, h->time_ns);
	iop_put_u64le(&c, h->payload_check);
	iop_put_u32le(&c, 0);
	rec_frame_hdr_seal(out);
}

int rec_frame_hdr_decode(const uint8_t *p, size_t avail, struct rec_frame_hdr *h)
{
	size_t m = avail < REC_SYNC_LEN ? avail : REC_SYNC_LEN;
	if (memcmp(p, REC_SYNC, m) != 0)
		return REC_DMG_NO_SYNC;
	if (avail < REC_FRAME_HDR_LEN)
		return REC_FRAME_HDR_SHORT;
	if (iop_load_u32le(p + REC_FRAME_HDR_LEN - 4) != check32(p, REC_FRAME_HDR_LEN - 4))
		return REC_DMG_HEADER_CHECK;
	struct iop_rcur c = iop_rcur_make(p + REC_SYNC_LEN, REC_FRAME_HDR_LEN - REC_SYNC_LEN);
	h->type = iop_get_u8(&c);
	h->flags = iop_get_u8(&c);
	uint16_t reserved = iop_get_u16le(&c);
	h->stored_len = iop_get_u32le(&c);
	h->raw_len = iop_get_u32le(&c);
	h->seq = iop_get_u64le(&c);
	h->time_ns = iop_get_u64le(&c);
	h->payload_check = iop_get_u64le(&c);
	bool zstd = h->flags & REC_FLAG_ZSTD;
	if (h->type < REC_META || h->type >= REC_TYPE_COUNT || (h->flags & ~REC_FLAG_ZSTD) ||
	    reserved != 0 || h->stored_len > REC_PAYLOAD_MAX || h->raw_len > REC_PAYLOAD_MAX ||
	    (!zstd && h->stored_len != h->raw_len))
		return REC_DMG_BAD_FIELD;
	return 0;
}

void rec_trailer_encode(uint8_t out[REC_TRAILER_LEN], const struct rec_trailer *t)
{
	struct iop_wcur c = iop_wcur_make(out, REC_TRAILER_LEN);
	iop_put_u64le(&c, t->end_offset);
	iop_put_u32le(&c, t->end_len);
	iop_put_u32le(&c, 0);
	iop_put_bytes(&c, REC_TRAILER_MAGIC, 8);
	rec_trailer_seal(out);
}

bool rec_trailer_decode(const uint8_t p[REC_TRAILER_LEN], struct rec_trailer *t)
{
	if (memcmp(p + 16, REC_TRAILER_MAGIC, 8) != 0 || iop_load_u32le(p + 12) != check32(p, 12))
		return false;
	t->end_offset = iop_load_u64le(p);
	t->end_len = iop_load_u32le(p + 8);
	return true;
}

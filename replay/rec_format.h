/* The on-disk pieces of a recording, encoded and checked byte by byte with
 * common/codec.h: the file header, the frame header and the trailer.
 * docs/recording.md is the reference; this is its code. Internal to the
 * recording library (and its tests and fuzz target). */
#ifndef REC_FORMAT_H
#define REC_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "rec.h"

#define REC_FILE_MAGIC    "\x89IOPREC\n" /* 8 bytes, PNG-style: catches text-mode mangling */
#define REC_FILE_HDR_LEN  64
#define REC_BYTE_ORDER    0x01020304u        /* stored little-endian: 04 03 02 01 */
#define REC_SYNC          "\xa9\xf0\xe7\x5c" /* starts every frame */
#define REC_SYNC_LEN      4
#define REC_FRAME_HDR_LEN 44
#define REC_FLAG_ZSTD     0x01
#define REC_TRAILER_MAGIC "\x89IOPEND\n"
#define REC_TRAILER_LEN   24
#define REC_FRAME_MAX     (REC_FRAME_HDR_LEN + (size_t)REC_PAYLOAD_MAX)

struct rec_file_hdr {
	uint16_t version;
	uint64_t job_id;
	uint64_t created_ns;
};

void rec_file_hdr_encode(uint8_t out[REC_FILE_HDR_LEN], const struct rec_file_hdr *h);

/* Checks len bytes at the start of a file: see rec_open() for the errors.
 * why (may be NULL) receives a sentence for the user. */
enum iop_err rec_file_hdr_decode(const uint8_t *p, size_t len, struct rec_file_hdr *h, char *why,
                                 size_t why_len);

struct rec_frame_hdr {
	uint8_t type;
	uint8_t flags;
	uint32_t stored_len; /* payload bytes in the file */
	uint32_t raw_len;    /* payload bytes once decompressed */
	uint64_t seq;
	uint64_t time_ns;
	uint64_t payload_check; /* XXH3-64 of the stored payload */
};

/* Writes the header, its checksum included. */
void rec_frame_hdr_encode(uint8_t out[REC_FRAME_HDR_LEN], const struct rec_frame_hdr *h);

#define REC_FRAME_HDR_SHORT (-1) /* fewer bytes than a header, all a sync prefix */

/* Decodes a frame header from the avail bytes at p: 0 when intact and
 * valid, REC_FRAME_HDR_SHORT when the bytes end inside what could be one,
 * else why not (REC_DMG_NO_SYNC, REC_DMG_HEADER_CHECK, REC_DMG_BAD_FIELD). */
int rec_frame_hdr_decode(const uint8_t *p, size_t avail, struct rec_frame_hdr *h);

static inline uint64_t rec_frame_len(const struct rec_frame_hdr *h)
{
	return REC_FRAME_HDR_LEN + (uint64_t)h->stored_len;
}

uint64_t rec_payload_check(const void *p, size_t len);

/* Recompute the checksum of an encoded file header, frame header or
 * trailer in place (the encoders do; tests and the fuzz target use them to
 * forge well-formed damage). */
void rec_file_hdr_seal(uint8_t p[REC_FILE_HDR_LEN]);
void rec_frame_hdr_seal(uint8_t p[REC_FRAME_HDR_LEN]);
void rec_trailer_seal(uint8_t p[REC_TRAILER_LEN]);

struct rec_trailer {
	uint64_t end_offset; /* where the END frame starts */
	uint32_t end_len;    /* its length, header included */
};

void rec_trailer_encode(uint8_t out[REC_TRAILER_LEN], const struct rec_trailer *t);
bool rec_trailer_decode(const uint8_t p[REC_TRAILER_LEN], struct rec_trailer *t);

/* Grows *buf (capacity *cap) to hold need bytes; its contents stay. */
static inline enum iop_err rec_reserve(uint8_t **buf, size_t *cap, size_t need)
{
	if (need <= *cap)
		return IOP_OK;
	uint8_t *p = realloc(*buf, need);
	if (!p)
		return IOP_ERR_NOMEM;
	*buf = p;
	*cap = need;
	return IOP_OK;
}

#endif

/* The reader's state, shared by rec_walk.c (finding intact frames in the
 * bytes: read window, checks, resynchronisation, the damage log) and
 * rec_reader.c (the API: open, next, seek, info). Internal. */
#ifndef REC_READER_IMPL_H
#define REC_READER_IMPL_H

#include <zstd.h>

#include "rec_format.h"
#include "rec_index.h"

struct rec_reader {
	struct rec_io *io;
	uint64_t size; /* of the file at open */
	struct rec_file_hdr hdr;

	uint8_t *win; /* a window of the file: [win_off, win_off + win_len) */
	size_t win_cap, win_len;
	uint64_t win_off;

	ZSTD_DCtx *dctx;
	uint8_t *out; /* decompressed payloads */
	size_t out_cap;

	char *meta; /* META JSON, or NULL */
	size_t meta_len;

	uint64_t pos; /* where rec_next() looks next */
	bool pos_end; /* pos is at END */

	struct rec_tally tally; /* from END or a scan */
	struct rec_index index;
	size_t index_max;
	bool known;    /* tally and index are loaded */
	bool verified; /* ... from a scan of every frame */
	bool clean;    /* an intact END was seen */
	uint64_t tail_bytes;

	struct rec_damage *dmg; /* the log, sorted by offset */
	size_t n_dmg;
	uint64_t corrupt, corrupt_bytes;
	uint64_t dmg_overflow_end; /* past the log's capacity: counted up to here */
};

/* An intact frame as the walk finds it: header, and stored payload in the window. */
struct rec_found {
	struct rec_frame_hdr h;
	uint64_t off;
	const uint8_t *stored; /* valid until the window moves */
};

#define REC_FRAME_CUT (-2) /* an intact header whose frame runs past the end of the file */

/* Checks the frame at exactly off: 0 when intact (header and payload
 * checksum), REC_FRAME_HDR_SHORT when the file ends inside its header,
 * REC_FRAME_CUT when inside its payload, or a damage kind. IOP errors (I/O,
 * memory) go to *err. */
int rec_frame_at(struct rec_reader *r, uint64_t off, struct rec_found *f, enum iop_err *err);

/* The next intact frame at or after off, skipping (and logging) damage:
 * true with *f, false at the end of the data (r->tail_bytes then says how
 * much of an incomplete frame was left). *skipped counts damaged regions.
 * A frame whose header is intact but whose payload is not is skipped whole
 * (its length is covered by the header's checksum); any other damage is
 * skipped by looking for the next sync marker from the byte after its start. */
bool rec_walk(struct rec_reader *r, uint64_t off, struct rec_found *f, uint32_t *skipped,
              enum iop_err *err);

/* Logs a damaged region once (by offset), however many times it is met. */
void rec_note_damage(struct rec_reader *r, uint64_t off, uint64_t bytes, enum rec_damage_kind kind,
                     const struct rec_frame_hdr *h);

/* A compressed frame's zstd header declares the size its frame header does. */
bool rec_zstd_size_ok(const struct rec_found *f);

/* Decompresses (or copies) a found frame's payload into dst (cap bytes,
 * at least h.raw_len). 0 or REC_DMG_DECOMPRESS. */
int rec_decode_into(struct rec_reader *r, const struct rec_found *f, uint8_t *dst);

/* For tests: caps the index a scan builds (normally REC_INDEX_MAX). */
void rec_reader_set_index_max(struct rec_reader *r, size_t max);

#endif

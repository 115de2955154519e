/* iopulse recordings (.iop): the writer the root collector appends to, one
 * frame at a time, and the reader replay, verify, summary and export go
 * through. The library owns the container (header, framing, compression,
 * checksums, time index, recovery); payloads are opaque bytes the collector
 * encodes itself. The byte layout is in docs/recording.md.
 *
 * Writer: rec_writer_open() writes the header and the META frame (JSON text
 * the caller gives), rec_write() appends one frame (one write(2) on a file),
 * rec_close() appends END (a time index) and a trailer. A failed append
 * (full disk, I/O error) leaves the writer failed: every later call returns
 * the same error and what was written before stays readable.
 *
 * Reader: rec_open() checks the header, rec_next() returns the frames in
 * file order, rec_seek_time() / rec_seek_fraction() position at the last
 * KEYFRAME at or before a time. A file cut short reads up to its last whole
 * frame; a damaged frame is skipped (whole when its header is intact, else
 * by resynchronising on the next sync marker), counted and logged. Allocation is bounded whatever
 * the file says: no payload over REC_PAYLOAD_MAX, no index over REC_INDEX_MAX.
 *
 * Not thread-safe: one writer or reader, one thread at a time. */
#ifndef REC_H
#define REC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "rec_io.h"

#define REC_VERSION     1           /* format version this library writes and reads up to */
#define REC_PAYLOAD_MAX (16u << 20) /* largest payload, before and after compression */

/* Frame types. Values are on disk: append only. */
enum rec_type {
	REC_META = 1,     /* job metadata, JSON text (the first frame) */
	REC_NAMES = 2,    /* name records (files, sites, hosts) new since the last NAMES */
	REC_DELTA = 3,    /* one tick's aggregates */
	REC_EVENTS = 4,   /* raw event batches (optional) */
	REC_ALERT = 5,    /* an alert transition */
	REC_KEYFRAME = 6, /* the full window state, for seeking */
	REC_END = 7,      /* clean close: counts and the time index (written by rec_close) */
	REC_TYPE_COUNT
};

/* Name of a frame type ("DELTA"), "?" when out of range. */
const char *rec_type_name(unsigned type);

/* --- writer ------------------------------------------------------------------- */

struct rec_writer_opts {
	uint64_t job_id;       /* kept in the file header */
	uint64_t start_ns;     /* time of the META frame and the header; 0: now */
	int zstd_level;        /* 0: 1 (fast); zstd's levels otherwise */
	uint32_t compress_min; /* payloads shorter than this are stored raw; 0: 256 */
	uint32_t index_every;  /* besides META, NAMES, ALERT and KEYFRAME frames, the
	                          time index holds every Nth other frame; 0: 16 */
	uint32_t index_max;    /* most index entries; 0 (or more): REC_INDEX_MAX */
};

#define REC_INDEX_MAX (1u << 18)

struct rec_writer;

/* Writes the file header and the META frame (meta_json, meta_len bytes,
 * stored as given) to io, which must be empty. The writer does not own io:
 * close it after rec_close(). opts may be NULL (defaults). */
enum iop_err rec_writer_open(struct rec_io *io, const struct rec_writer_opts *opts,
                             const char *meta_json, size_t meta_len, struct rec_writer **out);

/* Appends one frame: type META to KEYFRAME (END is rec_close's), time_ns
 * (nanoseconds since the epoch), len bytes of payload (0 is fine). The
 * sequence number is the writer's count of frames. Keep times nondecreasing
 * (seeking assumes it). Errors that leave the writer usable: IOP_ERR_INVAL
 * (bad type), IOP_ERR_OVERSIZED (len > REC_PAYLOAD_MAX), IOP_ERR_NOMEM (no
 * room to build the frame). A failed append (IOP_ERR_IO) is sticky: every
 * later call returns it and nothing more is written. */
enum iop_err rec_write(struct rec_writer *w, enum rec_type type, uint64_t time_ns,
                       const void *payload, size_t len);

/* Returns the writer's failure, if any. rec_write() leaves nothing in user
 * space, so after each tick the file holds every frame written. */
enum iop_err rec_flush(struct rec_writer *w);

/* Writes END and the trailer (unless the writer has failed), frees the
 * writer and returns the first error met, IOP_OK after a clean close. */
enum iop_err rec_close(struct rec_writer *w);

/* Frees the writer without writing END, as a crash would leave the file. */
void rec_writer_abandon(struct rec_writer *w);

struct rec_writer_stats {
	uint64_t frames;        /* written, META included */
	uint64_t payload_bytes; /* given to rec_write, before compression */
	uint64_t file_bytes;    /* in the file so far */
	enum iop_err err;       /* IOP_OK, or why the writer failed */
	int sys_errno;          /* errno of that failure (ENOSPC, EIO ...), or 0 */
};

void rec_writer_stats(const struct rec_writer *w, struct rec_writer_stats *st);

/* --- reader ------------------------------------------------------------------- */

struct rec_reader;

/* Opens a recording on io (which the reader does not own). Errors:
 * IOP_ERR_TRUNCATED (shorter than the header), IOP_ERR_BAD_MAGIC (not a
 * recording), IOP_ERR_BAD_VERSION (a version this reader does not know:
 * newer than REC_VERSION, or 0), IOP_ERR_MALFORMED (byte-order mark or
 * header checksum wrong), IOP_ERR_IO, IOP_ERR_NOMEM. When why is not NULL it
 * receives a sentence for the user, e.g. "recording format version 2 is
 * newer than this reader (reads 1 to 1): use a newer iopulse". */
enum iop_err rec_open(struct rec_io *io, struct rec_reader **out, char *why, size_t why_len);

void rec_reader_close(struct rec_reader *r);

/* The META frame's JSON, len bytes (and a NUL after them), read at open;
 * IOP_ERR_NOT_FOUND when the first frame is not an intact META frame. Valid
 * until close. */
enum iop_err rec_meta(const struct rec_reader *r, const char **json, size_t *len);

struct rec_frame {
	enum rec_type type;
	uint64_t time_ns;
	uint64_t seq;
	uint64_t offset;        /* where the frame starts in the file */
	const uint8_t *payload; /* the decompressed payload */
	size_t len;
	bool compressed;  /* stored compressed */
	uint32_t skipped; /* damaged regions skipped just before this frame (or
	                     before the end, with IOP_ERR_NOT_FOUND) */
};

/* The next frame in file order (META first; END is not returned). With
 * buf == NULL the payload is the reader's, valid until the next call on r;
 * otherwise it is decompressed into buf: IOP_ERR_FULL when cap < f->len,
 * and the frame stays next. Returns IOP_ERR_NOT_FOUND at the end of the
 * recording (END, or the end of the last whole frame); IOP_ERR_IO or
 * IOP_ERR_NOMEM otherwise. Damaged frames are skipped, never returned. */
enum iop_err rec_next(struct rec_reader *r, struct rec_frame *f, void *buf, size_t cap);

/* Positions the reader so that rec_next() returns the last KEYFRAME whose
 * time is at or before t_ns, or the first frame when there is none. Uses the
 * END index, or else an index built by scanning the file once (cached). */
enum iop_err rec_seek_time(struct rec_reader *r, uint64_t t_ns);

/* The same for the time first + fraction * (last - first), fraction in
 * [0, 1]: 0.4 seeks to 40 % of the recording's time span. */
enum iop_err rec_seek_fraction(struct rec_reader *r, double fraction);

/* Back to the first frame. */
void rec_rewind(struct rec_reader *r);

struct rec_info {
	uint16_t version;
	uint64_t job_id;
	uint64_t created_ns;
	uint64_t file_bytes;
	uint64_t first_ns, last_ns;      /* earliest and latest frame time (0 when no frames);
	                                    last_ns is the time of the last good frame */
	uint64_t frames[REC_TYPE_COUNT]; /* per type, END excluded */
	uint64_t frames_total;
	uint64_t keyframes;
	bool clean;          /* END was found: the writer closed the file */
	bool truncated;      /* no END: the writer was killed, the disk filled, or it
	                        is still writing (the reader sees the size at open) */
	uint64_t tail_bytes; /* bytes of an incomplete frame at the end */
	uint64_t corrupt;    /* damaged regions skipped (so far, unless verified) */
	uint64_t corrupt_bytes;
	bool verified; /* counts come from reading every frame, not from END */
};

/* What the recording holds. For a closed file the counts come from END (as
 * the writer wrote them) and corrupt counts what reads have met so far; for
 * any other file, and after rec_verify(), from one pass over every frame. */
enum iop_err rec_info(struct rec_reader *r, struct rec_info *info);

/* The time a reader reads up to: the last good frame's, or the header's
 * when no frame is whole (a file cut inside its first frame). */
static inline uint64_t rec_info_read_to_ns(const struct rec_info *info)
{
	return info->last_ns ? info->last_ns : info->created_ns;
}

/* Reads and checks every frame (checksums, decompression), once; rec_info()
 * then reports what is really readable. */
enum iop_err rec_verify(struct rec_reader *r);

struct rec_index_entry {
	uint64_t time_ns;
	uint64_t offset;
	uint64_t seq;
	uint8_t type;
};

/* The time index, in file order: every META, NAMES, ALERT and KEYFRAME frame
 * and every Nth other frame (unless it had to be thinned past REC_INDEX_MAX
 * entries). From END, or built by scanning. Valid until rec_verify() or close. */
enum iop_err rec_index(struct rec_reader *r, const struct rec_index_entry **entries, size_t *n);

/* Reads the frame at offset (an index entry's) into f, as rec_next() does,
 * without moving the reader: IOP_ERR_MALFORMED when no intact frame (or an
 * END) starts there, IOP_ERR_TRUNCATED when the file ends inside it. Lets a
 * replay load the NAMES frames before a seek point. */
enum iop_err rec_read_at(struct rec_reader *r, uint64_t offset, struct rec_frame *f, void *buf,
                         size_t cap);

/* A recording still being written (no END yet): takes in what was
 * appended since open or the last call, so that rec_next() goes on past
 * what was the end, and a frame that was cut there is read whole. *grew
 * tells whether the file is longer. The tally and the index are built
 * again when next asked for (info, seek). Does nothing on a closed file. */
enum iop_err rec_refresh(struct rec_reader *r, bool *grew);
/* An intact END has been read: the writer closed the file. */
bool rec_closed(const struct rec_reader *r);

/* Why a region was skipped. */
enum rec_damage_kind {
	REC_DMG_NO_SYNC = 1,   /* no sync marker where a frame should start */
	REC_DMG_HEADER_CHECK,  /* the frame header's checksum does not match */
	REC_DMG_BAD_FIELD,     /* an intact header with an unknown type or flag, or a bad length */
	REC_DMG_PAYLOAD_CHECK, /* the payload's checksum does not match */
	REC_DMG_DECOMPRESS,    /* the payload does not decompress to its declared size */
	REC_DMG_BAD_END,       /* an intact END frame whose index does not parse */
};

/* "payload checksum" and so on; "?" when out of range. */
const char *rec_damage_name(unsigned kind);

struct rec_damage {
	uint64_t offset;  /* where the damaged bytes start */
	uint64_t bytes;   /* how many were skipped */
	uint64_t time_ns; /* the damaged frame's time when its header was intact */
	bool time_known;
	enum rec_damage_kind kind;
};

#define REC_DAMAGE_LOG 1024 /* damaged regions logged in detail; more are only counted */

/* The damaged regions met so far, in file order. Valid until the next call on r. */
void rec_damage_log(const struct rec_reader *r, const struct rec_damage **d, size_t *n);

#endif

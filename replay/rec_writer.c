/* The recording writer. Each frame is built whole in one buffer (header,
 * then the payload, zstd-compressed when that pays) and handed to the stream
 * in a single append, so a killed writer leaves at most one partial frame at
 * the end, which readers treat as truncation. The tally and the time index
 * grow as frames go out and become the END frame at rec_close(). The first
 * failed append makes the writer failed for good: the file keeps what came
 * before, readable, and the caller reports the error. */
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "clock.h"
#include "rec_format.h"
#include "rec_index.h"

#define DEFAULT_COMPRESS_MIN 256
#define DEFAULT_INDEX_EVERY  16

struct rec_writer {
	struct rec_io *io;
	ZSTD_CCtx *cctx;
	uint8_t *buf; /* the frame (and what goes out with it) being built */
	size_t cap;
	uint64_t off; /* file length so far: where the next frame starts */
	uint64_t seq;
	uint64_t payload_bytes;
	uint32_t compress_min;
	struct rec_tally tally;
	struct rec_index index;
	enum iop_err err;
	int sys_errno;
};

/* Builds the frame at buf + pos; *len receives its length. */
static enum iop_err build_frame(struct rec_writer *w, size_t pos, unsigned type, uint64_t time_ns,
                                const void *payload, size_t len, size_t *frame_len)
{
	bool try_zstd = len >= w->compress_min && len > 0;
	size_t room = try_zstd ? ZSTD_compressBound(len) : len;
	enum iop_err err =
	    rec_reserve(&w->buf, &w->cap, pos + REC_FRAME_HDR_LEN + room + REC_TRAILER_LEN);
	if (err != IOP_OK)
		return err;
	uint8_t *out = w->buf + pos + REC_FRAME_HDR_LEN;
	struct rec_frame_hdr h = {.type = (uint8_t)type,
	                          .raw_len = (uint32_t)len,
	                          .stored_len = (uint32_t)len,
	                          .seq = w->seq,
	                          .time_ns = time_ns};
	if (try_zstd) {
		size_t n = ZSTD_compress2(w->cctx, out, room, payload, len);
		if (!ZSTD_isError(n) && n < len) {
			h.flags = REC_FLAG_ZSTD;
			h.stored_len = (uint32_t)n;
		}
	}
	if (!(h.flags & REC_FLAG_ZSTD) && len)
		memcpy(out, payload, len);
	h.payload_check = rec_payload_check(out, h.stored_len);
	rec_frame_hdr_encode(w->buf + pos, &h);
	*frame_len = REC_FRAME_HDR_LEN + h.stored_len;
	return IOP_OK;
}

static enum iop_err fail(struct rec_writer *w, enum iop_err err)
{
	w->err = err;
	w->sys_errno = rec_io_errno(w->io);
	return err;
}

/* Appends the first total bytes of buf, which hold a frame at frame_pos,
 * and accounts for the frame. */
static enum iop_err emit(struct rec_writer *w, size_t total, size_t frame_pos, unsigned type,
                         uint64_t time_ns)
{
	enum iop_err err = rec_io_append(w->io, w->buf, total);
	if (err != IOP_OK)
		return fail(w, err);
	uint64_t frame_off = w->off + frame_pos;
	if (type != REC_END) {
		rec_tally_note(&w->tally, type, time_ns);
		rec_index_note(&w->index, type, time_ns, frame_off, w->seq);
	}
	w->off += total;
	w->seq++;
	return IOP_OK;
}

static void writer_free(struct rec_writer *w)
{
	ZSTD_freeCCtx(w->cctx);
	free(w->buf);
	rec_index_free(&w->index);
	free(w);
}

enum iop_err rec_writer_open(struct rec_io *io, const struct rec_writer_opts *opts,
                             const char *meta_json, size_t meta_len, struct rec_writer **out)
{
	static const struct rec_writer_opts defaults;
	*out = NULL;
	if (!opts)
		opts = &defaults;
	uint64_t size;
	enum iop_err err = rec_io_size(io, &size);
	if (err != IOP_OK)
		return err;
	if (size != 0)
		return IOP_ERR_STATE;
	if (meta_len && !meta_json)
		return IOP_ERR_INVAL;
	if (meta_len > REC_PAYLOAD_MAX)
		return IOP_ERR_OVERSIZED;
	struct rec_writer *w = calloc(1, sizeof *w);
	if (!w || !(w->cctx = ZSTD_createCCtx())) {
		free(w);
		return IOP_ERR_NOMEM;
	}
	w->io = io;
	w->compress_min = opts->compress_min ? opts->compress_min : DEFAULT_COMPRESS_MIN;
	rec_index_init(&w->index, opts->index_every ? opts->index_every : DEFAULT_INDEX_EVERY,
	               opts->index_max);
	ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel,
	                       opts->zstd_level ? opts->zstd_level : 1);
	uint64_t start = opts->start_ns ? opts->start_ns : iop_real_ns();
	struct rec_file_hdr fh = {
	    .version = REC_VERSION, .job_id = opts->job_id, .created_ns = start};
	size_t frame_len;
	err = rec_reserve(&w->buf, &w->cap, REC_FILE_HDR_LEN);
	if (err == IOP_OK)
		err = build_frame(w, REC_FILE_HDR_LEN, REC_META, start, meta_json, meta_len,
		                  &frame_len);
	if (err == IOP_OK) {
		rec_file_hdr_encode(w->buf, &fh);
		err = emit(w, REC_FILE_HDR_LEN + frame_len, REC_FILE_HDR_LEN, REC_META, start);
	}
	if (err != IOP_OK) {
		writer_free(w);
		return err;
	}
	w->payload_bytes = meta_len;
	*out = w;
	return IOP_OK;
}

enum iop_err rec_write(struct rec_writer *w, enum rec_type type, uint64_t time_ns,
                       const void *payload, size_t len)
{
	if (w->err != IOP_OK)
		return w->err;
	if (type < REC_META || type >= REC_END || (len && !payload))
		return IOP_ERR_INVAL;
	if (len > REC_PAYLOAD_MAX)
		return IOP_ERR_OVERSIZED;
	size_t frame_len;
	enum iop_err err = build_frame(w, 0, type, time_ns, payload, len, &frame_len);
	if (err != IOP_OK) /* out of memory before anything went out: not a failed file */
		return err;
	err = emit(w, frame_len, 0, type, time_ns);
	if (err == IOP_OK)
		w->payload_bytes += len;
	return err;
}

enum iop_err rec_flush(struct rec_writer *w)
{
	if (w->err != IOP_OK)
		return w->err;
	enum iop_err err = rec_io_flush(w->io);
	return err == IOP_OK ? IOP_OK : fail(w, err);
}

/* END, with the trailer behind it in the same append. */
static enum iop_err write_end(struct rec_writer *w)
{
	size_t len = rec_end_len(&w->index);
	uint8_t *payload = malloc(len);
	if (!payload)
		return fail(w, IOP_ERR_NOMEM);
	rec_end_encode(payload, len, &w->tally, &w->index);
	size_t frame_len;
	enum iop_err err = build_frame(w, 0, REC_END, w->tally.last_ns, payload, len, &frame_len);
	free(payload);
	if (err != IOP_OK)
		return fail(w, err);
	struct rec_trailer t = {.end_offset = w->off, .end_len = (uint32_t)frame_len};
	rec_trailer_encode(w->buf + frame_len, &t);
	return emit(w, frame_len + REC_TRAILER_LEN, 0, REC_END, w->tally.last_ns);
}

enum iop_err rec_close(struct rec_writer *w)
{
	if (!w)
		return IOP_OK;
	enum iop_err err = w->err;
	if (err == IOP_OK)
		err = write_end(w);
	if (err == IOP_OK)
		err = rec_flush(w);
	writer_free(w);
	return err;
}

void rec_writer_abandon(struct rec_writer *w)
{
	if (w)
		writer_free(w);
}

void rec_writer_stats(const struct rec_writer *w, struct rec_writer_stats *st)
{
	st->frames = w->seq;
	st->payload_bytes = w->payload_bytes;
	st->file_bytes = w->off;
	st->err = w->err;
	st->sys_errno = w->sys_errno;
}

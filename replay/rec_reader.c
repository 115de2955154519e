/* The recording reader: open (header, META, and the END frame the trailer
 * points at, when the file was closed), frames in order, seeking by time
 * through the time index, and what the file holds. Without END, the tally
 * and the index come from one scan of every frame, done when first needed
 * and kept. rec_walk.c finds the intact frames. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "rec_reader_impl.h"

#define SCAN_INDEX_EVERY 16

/* The payload of a found frame into f: into buf when given (IOP_ERR_FULL
 * when it is too small), else the reader's (a raw payload is not copied).
 * 0, or REC_DMG_DECOMPRESS in *dmg. */
static enum iop_err take_payload(struct rec_reader *r, const struct rec_found *fd,
                                 struct rec_frame *f, void *buf, size_t cap, int *dmg)
{
	f->type = fd->h.type;
	f->time_ns = fd->h.time_ns;
	f->seq = fd->h.seq;
	f->offset = fd->off;
	f->len = fd->h.raw_len;
	f->compressed = fd->h.flags & REC_FLAG_ZSTD;
	f->payload = NULL;
	*dmg = 0;
	uint8_t *dst = buf;
	if (buf && cap < fd->h.raw_len)
		return IOP_ERR_FULL;
	if (!buf && !f->compressed) {
		f->payload = fd->stored;
		return IOP_OK;
	}
	if (f->compressed && !rec_zstd_size_ok(fd)) { /* before allocating raw_len */
		*dmg = REC_DMG_DECOMPRESS;
		return IOP_OK;
	}
	if (!buf) {
		enum iop_err err =
		    rec_reserve(&r->out, &r->out_cap, fd->h.raw_len ? fd->h.raw_len : 1);
		if (err != IOP_OK)
			return err;
		dst = r->out;
	}
	*dmg = rec_decode_into(r, fd, dst);
	f->payload = dst;
	return IOP_OK;
}

/* Decodes an END frame; true (and *t, *x filled) when it is sound. */
static bool read_end(struct rec_reader *r, const struct rec_found *fd, struct rec_tally *t,
                     struct rec_index *x, enum iop_err *err)
{
	struct rec_frame f;
	int dmg;
	*err = take_payload(r, fd, &f, NULL, 0, &dmg);
	rec_index_init(x, 1, r->index_max);
	if (*err != IOP_OK)
		return false;
	if (dmg == 0) {
		enum iop_err e = rec_end_decode(f.payload, f.len, fd->off, t, x);
		if (e == IOP_OK)
			return true;
		if (e == IOP_ERR_NOMEM) {
			*err = e;
			return false;
		}
		dmg = REC_DMG_BAD_END;
	}
	rec_note_damage(r, fd->off, rec_frame_len(&fd->h), dmg, &fd->h);
	return false;
}

/* Takes an END met while reading: the file was closed. */
static bool take_end(struct rec_reader *r, const struct rec_found *fd, enum iop_err *err)
{
	struct rec_tally t;
	struct rec_index x;
	if (!read_end(r, fd, &t, &x, err))
		return false;
	r->clean = true;
	if (!r->known) {
		rec_index_free(&r->index);
		r->index = x;
		r->tally = t;
		r->known = true;
	} else {
		rec_index_free(&x);
	}
	return true;
}

/* A closed file ends with a trailer pointing at END: load END's tally and
 * index without reading the rest. Any doubt, and this quietly gives up. */
static enum iop_err try_trailer(struct rec_reader *r)
{
	uint8_t b[REC_TRAILER_LEN];
	size_t got;
	struct rec_trailer t;
	if (r->size < REC_FILE_HDR_LEN + REC_FRAME_HDR_LEN + REC_TRAILER_LEN)
		return IOP_OK;
	enum iop_err err = rec_io_pread(r->io, b, sizeof b, r->size - REC_TRAILER_LEN, &got);
	if (err != IOP_OK || got != sizeof b || !rec_trailer_decode(b, &t))
		return err;
	if (t.end_offset < REC_FILE_HDR_LEN ||
	    t.end_offset + t.end_len + REC_TRAILER_LEN != r->size)
		return IOP_OK;
	struct rec_found fd;
	if (rec_frame_at(r, t.end_offset, &fd, &err) != 0 || err != IOP_OK ||
	    fd.h.type != REC_END || rec_frame_len(&fd.h) != t.end_len)
		return err;
	take_end(r, &fd, &err);
	return err;
}

static enum iop_err read_meta(struct rec_reader *r)
{
	struct rec_found fd;
	struct rec_frame f;
	enum iop_err err = IOP_OK;
	int dmg;
	if (rec_frame_at(r, REC_FILE_HDR_LEN, &fd, &err) != 0 || fd.h.type != REC_META)
		return err;
	if (!(r->meta = malloc(fd.h.raw_len + 1)))
		return IOP_ERR_NOMEM;
	err = take_payload(r, &fd, &f, r->meta, fd.h.raw_len, &dmg);
	if (err != IOP_OK || dmg) {
		free(r->meta);
		r->meta = NULL;
		return err;
	}
	r->meta[f.len] = '\0';
	r->meta_len = f.len;
	return IOP_OK;
}

enum iop_err rec_open(struct rec_io *io, struct rec_reader **out, char *why, size_t why_len)
{
	*out = NULL;
	if (why && why_len)
		why[0] = '\0';
	uint64_t size;
	uint8_t hb[REC_FILE_HDR_LEN];
	size_t got;
	struct rec_file_hdr hdr;
	enum iop_err err = rec_io_size(io, &size);
	if (err == IOP_OK)
		err = rec_io_pread(io, hb, sizeof hb, 0, &got);
	if (err == IOP_OK)
		err = rec_file_hdr_decode(hb, got, &hdr, why, why_len);
	if (err != IOP_OK)
		return err;
	struct rec_reader *r = calloc(1, sizeof *r);
	if (!r)
		return IOP_ERR_NOMEM;
	r->io = io;
	r->size = size;
	r->hdr = hdr;
	r->pos = REC_FILE_HDR_LEN;
	r->index_max = REC_INDEX_MAX;
	rec_index_init(&r->index, SCAN_INDEX_EVERY, r->index_max);
	r->dctx = ZSTD_createDCtx();
	err = r->dctx ? try_trailer(r) : IOP_ERR_NOMEM;
	if (err == IOP_OK)
		err = read_meta(r);
	if (err != IOP_OK) {
		rec_reader_close(r);
		return err;
	}
	*out = r;
	return IOP_OK;
}

void rec_reader_close(struct rec_reader *r)
{
	if (!r)
		return;
	ZSTD_freeDCtx(r->dctx);
	free(r->win);
	free(r->out);
	free(r->meta);
	free(r->dmg);
	rec_index_free(&r->index);
	free(r);
}

enum iop_err rec_meta(const struct rec_reader *r, const char **json, size_t *len)
{
	if (!r->meta)
		return IOP_ERR_NOT_FOUND;
	*json = r->meta;
	*len = r->meta_len;
	return IOP_OK;
}

enum iop_err rec_next(struct rec_reader *r, struct rec_frame *f, void *buf, size_t cap)
{
	enum iop_err err = IOP_OK;
	struct rec_found fd;
	f->skipped = 0;
	while (!r->pos_end) {
		if (!rec_walk(r, r->pos, &fd, &f->skipped, &err)) {
			if (err == IOP_OK)
				r->pos = r->size;
			return err != IOP_OK ? err : IOP_ERR_NOT_FOUND;
		}
		r->pos = fd.off;
		if (fd.h.type == REC_END) {
			if (take_end(r, &fd, &err)) {
				r->pos_end = true;
				break;
			}
		} else {
			int dmg;
			err = take_payload(r, &fd, f, buf, cap, &dmg);
			if (err == IOP_OK && dmg == 0) {
				r->pos = fd.off + rec_frame_len(&fd.h);
				return IOP_OK;
			}
			if (dmg)
				rec_note_damage(r, fd.off, rec_frame_len(&fd.h), dmg, &fd.h);
		}
		if (err != IOP_OK)
			return err;
		f->skipped++; /* an intact frame around a bad payload: skipped whole */
		r->pos = fd.off + rec_frame_len(&fd.h);
	}
	return IOP_ERR_NOT_FOUND;
}

/* Reads every frame once, checking it whole: the tally and the index then
 * describe what is really readable. */
static enum iop_err scan(struct rec_reader *r)
{
	struct rec_tally t = {0};
	struct rec_index x;
	rec_index_init(&x, SCAN_INDEX_EVERY, r->index_max);
	enum iop_err err = IOP_OK;
	uint64_t off = REC_FILE_HDR_LEN;
	struct rec_found fd;
	uint32_t skipped = 0;
	while (rec_walk(r, off, &fd, &skipped, &err)) {
		struct rec_frame f;
		int dmg = 0;
		if (fd.h.type == REC_END) {
			if (take_end(r, &fd, &err))
				break;
		} else if ((err = take_payload(r, &fd, &f, NULL, 0, &dmg)) == IOP_OK && !dmg) {
			rec_tally_note(&t, fd.h.type, fd.h.time_ns);
			rec_index_note(&x, fd.h.type, fd.h.time_ns, fd.off, fd.h.seq);
			off = fd.off + rec_frame_len(&fd.h);
			continue;
		} else if (dmg) {
			rec_note_damage(r, fd.off, rec_frame_len(&fd.h), dmg, &fd.h);
		}
		if (err != IOP_OK)
			break;
		off = fd.off + rec_frame_len(&fd.h);
	}
	if (err != IOP_OK) {
		rec_index_free(&x);
		return err;
	}
	rec_index_free(&r->index);
	r->index = x;
	r->tally = t;
	r->known = r->verified = true;
	return IOP_OK;
}

static enum iop_err ensure_known(struct rec_reader *r)
{
	return r->known ? IOP_OK : scan(r);
}

enum iop_err rec_verify(struct rec_reader *r)
{
	return r->verified ? IOP_OK : scan(r);
}

static bool keyframe_at(struct rec_reader *r, uint64_t off, enum iop_err *err)
{
	struct rec_found fd;
	return rec_frame_at(r, off, &fd, err) == 0 && fd.h.type == REC_KEYFRAME;
}

enum iop_err rec_seek_time(struct rec_reader *r, uint64_t t_ns)
{
	enum iop_err err = ensure_known(r);
	if (err != IOP_OK)
		return err;
	uint64_t best = REC_FILE_HDR_LEN;
	for (size_t i = r->index.n; i-- > 0;) {
		const struct rec_index_entry *e = &r->index.e[i];
		if (e->type == REC_KEYFRAME && e->time_ns <= t_ns &&
		    keyframe_at(r, e->offset, &err)) {
			best = e->offset;
			break;
		}
		if (err != IOP_OK)
			return err;
	}
	if (!r->index.complete) { /* keyframes past covered_end are not indexed: look */
		uint64_t off = r->index.covered_end;
		struct rec_found fd;
		uint32_t skipped = 0;
		while (rec_walk(r, off, &fd, &skipped, &err) && fd.h.type != REC_END &&
		       fd.h.time_ns <= t_ns) {
			if (fd.h.type == REC_KEYFRAME)
				best = fd.off;
			off = fd.off + rec_frame_len(&fd.h);
		}
		if (err != IOP_OK)
			return err;
	}
	r->pos = best;
	r->pos_end = false;
	return IOP_OK;
}

enum iop_err rec_seek_fraction(struct rec_reader *r, double fraction)
{
	if (isnan(fraction))
		return IOP_ERR_INVAL;
	enum iop_err err = ensure_known(r);
	if (err != IOP_OK)
		return err;
	fraction = fraction < 0 ? 0 : fraction > 1 ? 1 : fraction;
	uint64_t first = r->tally.first_ns, last = r->tally.last_ns;
	uint64_t span = last > first ? last - first : 0;
	uint64_t off = iop_sat_u64(fraction * (double)span);
	return rec_seek_time(r, first + (off < span ? off : span));
}

void rec_rewind(struct rec_reader *r)
{
	r->pos = REC_FILE_HDR_LEN;
	r->pos_end = false;
}

enum iop_err rec_info(struct rec_reader *r, struct rec_info *info)
{
	enum iop_err err = ensure_known(r);
	if (err != IOP_OK)
		return err;
	memset(info, 0, sizeof *info);
	info->version = r->hdr.version;
	info->job_id = r->hdr.job_id;
	info->created_ns = r->hdr.created_ns;
	info->file_bytes = r->size;
	info->frames_total = rec_tally_total(&r->tally);
	if (info->frames_total) {
		info->first_ns = r->tally.first_ns;
		info->last_ns = r->tally.last_ns;
	}
	memcpy(info->frames, r->tally.frames, sizeof info->frames);
	info->keyframes = r->tally.frames[REC_KEYFRAME];
	info->clean = r->clean;
	info->truncated = !r->clean;
	info->tail_bytes = r->clean ? 0 : r->tail_bytes;
	info->corrupt = r->corrupt;
	info->corrupt_bytes = r->corrupt_bytes;
	info->verified = r->verified;
	return IOP_OK;
}

enum iop_err rec_index(struct rec_reader *r, const struct rec_index_entry **entries, size_t *n)
{
	enum iop_err err = ensure_known(r);
	*entries = r->index.e;
	*n = err == IOP_OK ? r->index.n : 0;
	return err;
}

enum iop_err rec_read_at(struct rec_reader *r, uint64_t offset, struct rec_frame *f, void *buf,
                         size_t cap)
{
	enum iop_err err = IOP_OK;
	struct rec_found fd;
	f->skipped = 0;
	int st = rec_frame_at(r, offset, &fd, &err);
	if (err != IOP_OK)
		return err;
	if (st == REC_FRAME_HDR_SHORT || st == REC_FRAME_CUT)
		return IOP_ERR_TRUNCATED;
	if (st != 0 || fd.h.type == REC_END)
		return IOP_ERR_MALFORMED;
	int dmg;
	err = take_payload(r, &fd, f, buf, cap, &dmg);
	return err != IOP_OK ? err : dmg ? IOP_ERR_MALFORMED : IOP_OK;
}

void rec_damage_log(const struct rec_reader *r, const struct rec_damage **d, size_t *n)
{
	*d = r->dmg;
	*n = r->n_dmg;
}

void rec_reader_set_index_max(struct rec_reader *r, size_t max)
{
	r->index_max = max;
}

const char *rec_type_name(unsigned type)
{
	static const char *const names[REC_TYPE_COUNT] = {
	    [REC_META] = "META",     [REC_NAMES] = "NAMES", [REC_DELTA] = "DELTA",
	    [REC_EVENTS] = "EVENTS", [REC_ALERT] = "ALERT", [REC_KEYFRAME] = "KEYFRAME",
	    [REC_END] = "END"};
	return type < REC_TYPE_COUNT && names[type] ? names[type] : "?";
}

const char *rec_damage_name(unsigned kind)
{
	static const char *const names[] = {
	    [REC_DMG_NO_SYNC] = "no sync marker",     [REC_DMG_HEADER_CHECK] = "header checksum",
	    [REC_DMG_BAD_FIELD] = "bad header field", [REC_DMG_PAYLOAD_CHECK] = "payload checksum",
	    [REC_DMG_DECOMPRESS] = "decompression",   [REC_DMG_BAD_END] = "bad END index"};
	return kind < sizeof names / sizeof *names && names[kind] ? names[kind] : "?";
}

enum iop_err rec_refresh(struct rec_reader *r, bool *grew)
{
	*grew = false;
	if (r->clean)
		return IOP_OK; /* closed: nothing more will come */
	uint64_t size;
	enum iop_err err = rec_io_size(r->io, &size);
	if (err != IOP_OK || size <= r->size)
		return err;
	/* A frame cut by the old end is whole now, or will be: read it again
	 * from its start rather than from the old end. */
	if (r->pos >= r->size && !r->pos_end)
		r->pos = r->size - (r->tail_bytes <= r->size ? r->tail_bytes : 0);
	r->size = size;
	r->win_len = 0;
	r->tail_bytes = 0;
	r->known = r->verified = false; /* the tally and the index are scanned again when asked */
	*grew = true;
	return IOP_OK;
}

bool rec_closed(const struct rec_reader *r)
{
	return r->clean;
}

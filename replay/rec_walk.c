/* Finding intact frames in a recording's bytes: a read window over the
 * stream, the per-frame checks (sync, header checksum, fields, payload
 * checksum, decompression) and getting past damage: a frame with an intact
 * header is skipped whole, anything else by looking for the next sync
 * marker from the byte after the damage starts.
 * Whatever the bytes say, nothing is allocated past one window of at most
 * REC_FRAME_MAX bytes and one payload of at most REC_PAYLOAD_MAX. */
#include <stdlib.h>
#include <string.h>

#include "rec_reader_impl.h"

#define WINDOW_MIN (256u << 10)

/* Makes [off, off + n) (cut at the end of the file) available; *avail says
 * how much of it is (less than n only at the end). n <= REC_FRAME_MAX. */
static const uint8_t *fetch(struct rec_reader *r, uint64_t off, size_t n, size_t *avail,
                            enum iop_err *err)
{
	*avail = 0;
	if (off >= r->size)
		return NULL;
	size_t want = r->size - off < n ? (size_t)(r->size - off) : n;
	if (off >= r->win_off && off + want <= r->win_off + r->win_len) {
		*avail = want;
		return r->win + (off - r->win_off);
	}
	size_t len = want > WINDOW_MIN ? want : WINDOW_MIN;
	if (len > r->size - off)
		len = (size_t)(r->size - off);
	size_t got;
	r->win_len = 0;
	enum iop_err e = rec_reserve(&r->win, &r->win_cap, len);
	if (e == IOP_OK)
		e = rec_io_pread(r->io, r->win, len, off, &got);
	if (e != IOP_OK) {
		*err = e;
		return NULL;
	}
	r->win_off = off;
	r->win_len = got;
	*avail = got < want ? got : want;
	return r->win;
}

int rec_frame_at(struct rec_reader *r, uint64_t off, struct rec_found *f, enum iop_err *err)
{
	size_t avail;
	const uint8_t *p = fetch(r, off, REC_FRAME_HDR_LEN, &avail, err);
	if (!p)
		return REC_FRAME_HDR_SHORT;
	int st = rec_frame_hdr_decode(p, avail, &f->h);
	if (st != 0)
		return st;
	f->off = off;
	uint64_t len = rec_frame_len(&f->h);
	if (len > r->size - off)
		return REC_FRAME_CUT;
	p = fetch(r, off, (size_t)len, &avail, err);
	if (!p || avail < len)
		return REC_FRAME_CUT;
	f->stored = p + REC_FRAME_HDR_LEN;
	if (rec_payload_check(f->stored, f->h.stored_len) != f->h.payload_check)
		return REC_DMG_PAYLOAD_CHECK;
	return 0;
}

/* The first sync marker (or, in the last bytes, a prefix of one) at or
 * after off; the file size when there is none. */
static uint64_t resync(struct rec_reader *r, uint64_t off, enum iop_err *err)
{
	while (off < r->size) {
		size_t avail;
		const uint8_t *p = fetch(r, off, WINDOW_MIN, &avail, err);
		if (!p)
			return r->size;
		const uint8_t *hit = memmem(p, avail, REC_SYNC, REC_SYNC_LEN);
		if (hit)
			return off + (uint64_t)(hit - p);
		if (off + avail == r->size) { /* a sync cut off by the end of the file? */
			for (size_t i = avail > REC_SYNC_LEN ? avail - REC_SYNC_LEN + 1 : 0;
			     i < avail; i++)
				if (memcmp(p + i, REC_SYNC, avail - i) == 0)
					return off + i;
			return r->size;
		}
		off += avail - (REC_SYNC_LEN - 1);
	}
	return r->size;
}

static int damage_cmp(const void *key, const void *elem)
{
	uint64_t off = *(const uint64_t *)key;
	const struct rec_damage *d = elem;
	return (off > d->offset) - (off < d->offset);
}

void rec_note_damage(struct rec_reader *r, uint64_t off, uint64_t bytes, enum rec_damage_kind kind,
                     const struct rec_frame_hdr *h)
{
	if (r->n_dmg && bsearch(&off, r->dmg, r->n_dmg, sizeof *r->dmg, damage_cmp))
		return;
	if (r->n_dmg < REC_DAMAGE_LOG) {
		if (!r->dmg && !(r->dmg = malloc(REC_DAMAGE_LOG * sizeof *r->dmg)))
			return; /* not even counted: the log is how repeats are told apart */
		size_t i = r->n_dmg;
		while (i > 0 && r->dmg[i - 1].offset > off)
			i--;
		memmove(r->dmg + i + 1, r->dmg + i, (r->n_dmg - i) * sizeof *r->dmg);
		r->dmg[i] = (struct rec_damage){.offset = off,
		                                .bytes = bytes,
		                                .time_ns = h ? h->time_ns : 0,
		                                .time_known = h != NULL,
		                                .kind = kind};
		r->n_dmg++;
	} else if (off >= r->dmg_overflow_end && off > r->dmg[r->n_dmg - 1].offset) {
		r->dmg_overflow_end = off + bytes;
	} else {
		return;
	}
	r->corrupt++;
	r->corrupt_bytes += bytes;
}

/* The last bytes of the file are a trailer, and begin at off. */
static bool is_trailer(struct rec_reader *r, uint64_t off, enum iop_err *err)
{
	struct rec_trailer t;
	size_t avail;
	const uint8_t *p =
	    r->size - off == REC_TRAILER_LEN ? fetch(r, off, REC_TRAILER_LEN, &avail, err) : NULL;
	return p && avail == REC_TRAILER_LEN && rec_trailer_decode(p, &t);
}

/* A frame cut by the end of the file is how a killed writer leaves its
 * last one; the same in the middle of the file (an intact frame follows
 * somewhere) is damage, a length that cannot be. */
bool rec_walk(struct rec_reader *r, uint64_t off, struct rec_found *f, uint32_t *skipped,
              enum iop_err *err)
{
	uint64_t cut = UINT64_MAX; /* where a cut frame starts, until a later frame is found */
	struct rec_frame_hdr cut_hdr;
	for (;;) {
		int st = rec_frame_at(r, off, f, err);
		if (*err != IOP_OK)
			return false;
		if (st == 0 && cut != UINT64_MAX) {
			rec_note_damage(r, cut, off - cut, REC_DMG_BAD_FIELD, &cut_hdr);
			(*skipped)++;
		}
		if (st == 0)
			return true;
		if (st == REC_DMG_NO_SYNC && is_trailer(r, off, err)) { /* after a damaged END */
			r->tail_bytes = cut != UINT64_MAX ? off - cut : 0;
			return false;
		}
		if (st == REC_FRAME_HDR_SHORT) {
			r->tail_bytes = r->size - (cut != UINT64_MAX ? cut
			                           : off < r->size   ? off
			                                             : r->size);
			return false;
		}
		/* whole-frame skips also keep a forged file from making the reader
		 * checksum the same bytes again and again */
		uint64_t next = st == REC_DMG_PAYLOAD_CHECK ? off + rec_frame_len(&f->h)
		                                            : resync(r, off + 1, err);
		if (*err != IOP_OK)
			return false;
		if (st == REC_FRAME_CUT) {
			if (cut == UINT64_MAX) {
				cut = off;
				cut_hdr = f->h;
			}
		} else {
			bool intact = st == REC_DMG_BAD_FIELD || st == REC_DMG_PAYLOAD_CHECK;
			rec_note_damage(r, off, next - off, st, intact ? &f->h : NULL);
			(*skipped)++;
		}
		off = next;
	}
}

/* The zstd frame must declare exactly the size the header does, so that
 * nothing decompresses past raw_len (<= REC_PAYLOAD_MAX). */
bool rec_zstd_size_ok(const struct rec_found *f)
{
	return ZSTD_getFrameContentSize(f->stored, f->h.stored_len) == f->h.raw_len;
}

int rec_decode_into(struct rec_reader *r, const struct rec_found *f, uint8_t *dst)
{
	const struct rec_frame_hdr *h = &f->h;
	if (!(h->flags & REC_FLAG_ZSTD)) {
		if (h->raw_len)
			memcpy(dst, f->stored, h->raw_len);
		return 0;
	}
	if (!rec_zstd_size_ok(f))
		return REC_DMG_DECOMPRESS;
	size_t n = ZSTD_decompressDCtx(r->dctx, dst, h->raw_len, f->stored, h->stored_len);
	return ZSTD_isError(n) || n != h->raw_len ? REC_DMG_DECOMPRESS : 0;
}

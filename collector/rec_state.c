/* The state at a time of a recording: keyframe, then DELTAs. See
 * rec_state.h; the KEYFRAME payload is described in record.h and
 * docs/recording.md. */
#include "rec_state.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "keyframe.h"
#include "record.h"

#define DEFAULT_TICK_NS 1000000000ull

struct kf_part {
	int64_t t;
	uint64_t part, parts, total;
	const uint8_t *bytes;
	size_t len;
};

static bool parse_part(const struct rec_frame *f, struct kf_part *p)
{
	struct iop_rcur c = iop_rcur_make(f->payload, f->len);
	if (iop_get_u8(&c) != COLL_REC_KEYFRAME_LAYOUT)
		return false;
	p->t = iop_get_svarint(&c);
	p->part = iop_get_varint(&c);
	p->parts = iop_get_varint(&c);
	p->total = iop_get_varint(&c);
	p->len = iop_rcur_left(&c);
	p->bytes = c.p;
	return !c.err && p->parts >= 1 && p->parts <= COLL_REC_KEYFRAME_PARTS &&
	       p->part < p->parts && p->total <= COLL_REC_KEYFRAME_MAX && p->len <= p->total;
}

/* Where the frame at offset is in the index, or n. */
static size_t index_of(const struct rec_index_entry *ix, size_t n, uint64_t offset)
{
	size_t lo = 0, hi = n; /* the index is in file order */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ix[mid].offset < offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && ix[lo].offset == offset ? lo : n;
}

/* Copies part p into the keyframe being put together (parts are copied
 * last first, each to its place). */
static bool place(uint8_t *kf, const struct kf_part *p, const struct kf_part *last,
                  size_t *end)
{
	if (p->t != last->t || p->parts != last->parts || p->total != last->total ||
	    p->len > *end)
		return false;
	/* every part but the last is full, so a part's place is known from the
	 * end backwards */
	memcpy(kf + *end - p->len, p->bytes, p->len);
	*end -= p->len;
	return true;
}

/* Builds *s from the keyframe whose last part is f (the reader's frame):
 * its other parts are the KEYFRAME frames just before it in the index. */
static bool load_keyframe(struct rec_reader *r, const struct rec_frame *f, struct coll_state *s,
                          int64_t *tick)
{
	struct kf_part last, p;
	if (!parse_part(f, &last) || last.part != last.parts - 1)
		return false;
	uint8_t *kf = malloc(last.total ? last.total : 1);
	if (!kf)
		return false;
	size_t end = last.total;
	bool ok = place(kf, &last, &last, &end);
	if (ok && last.parts > 1) {
		const struct rec_index_entry *ix;
		size_t n;
		ok = rec_index(r, &ix, &n) == IOP_OK;
		size_t at = ok ? index_of(ix, n, f->offset) : 0;
		ok = ok && at < n && at >= last.parts - 1;
		for (uint64_t k = 1; ok && k < last.parts; k++) {
			const struct rec_index_entry *e = &ix[at - k];
			struct rec_frame g;
			ok = e->type == REC_KEYFRAME &&
			     rec_read_at(r, e->offset, &g, NULL, 0) == IOP_OK && parse_part(&g, &p) &&
			     p.part == last.parts - 1 - k && place(kf, &p, &last, &end);
		}
	}
	ok = ok && end == 0;
	if (ok) {
		ok = coll_state_decode_keyframe(s, kf, last.total) == IOP_OK;
		if (!ok)
			coll_state_free(s);
	}
	free(kf);
	*tick = last.t;
	return ok;
}

unsigned coll_rec_delta_version(struct rec_reader *r)
{
	const char *meta;
	size_t len;
	unsigned v = COLL_DELTA_VERSION;
	if (rec_meta(r, &meta, &len) == IOP_OK) {
		json_t *m = json_loadb(meta, len, 0, NULL);
		json_int_t dv = json_integer_value(json_object_get(m, "delta_version"));
		if (dv > 0 && dv <= COLL_DELTA_VERSION)
			v = (unsigned)dv;
		json_decref(m);
	}
	return v;
}

/* Applies the DELTA frames from the reader's position while their time is
 * at or before t_ns. *s is initialised at the first one when !*have. */
static enum iop_err apply_deltas(struct rec_reader *r, uint64_t t_ns, struct coll_state *s,
                                 bool *have, struct coll_rec_state_info *info)
{
	struct coll_delta d;
	coll_delta_init(&d, 0, DEFAULT_TICK_NS);
	unsigned version = coll_rec_delta_version(r);
	struct rec_frame f;
	enum iop_err e;
	while ((e = rec_next(r, &f, NULL, 0)) == IOP_OK) {
		if (f.type != REC_DELTA)
			continue;
		if (f.time_ns > t_ns)
			break;
		struct iop_rcur c = iop_rcur_make(f.payload, f.len);
		if (coll_delta_decode_body_v(&d, &c, version) != IOP_OK) {
			info->bad_deltas++;
			continue;
		}
		if (!*have) {
			coll_state_init(s, d.tick.tick_ns, NULL);
			*have = true;
		}
		(void)coll_state_apply_take(s, &d); /* d is decoded afresh next */
		info->deltas++;
	}
	coll_delta_free(&d);
	return e == IOP_ERR_NOT_FOUND ? IOP_OK : e;
}

static enum iop_err from_start(struct rec_reader *r, uint64_t t_ns, struct coll_state *out,
                               struct coll_rec_state_info *info)
{
	bool have = false;
	rec_rewind(r);
	enum iop_err e = apply_deltas(r, t_ns, out, &have, info);
	if (!have)
		coll_state_init(out, DEFAULT_TICK_NS, NULL);
	return e;
}

/* The caller's info, or scratch when it gave none; zeroed. */
static struct coll_rec_state_info *info_or(struct coll_rec_state_info *info,
                                           struct coll_rec_state_info *scratch)
{
	info = info ? info : scratch;
	memset(info, 0, sizeof(*info));
	return info;
}

enum iop_err coll_rec_state_replay(struct rec_reader *r, uint64_t t_ns, struct coll_state *out,
                                   struct coll_rec_state_info *info)
{
	struct coll_rec_state_info scratch;
	return from_start(r, t_ns, out, info_or(info, &scratch));
}

enum iop_err coll_rec_state_at(struct rec_reader *r, uint64_t t_ns, struct coll_state *out,
                               struct coll_rec_state_info *info)
{
	struct coll_rec_state_info scratch;
	info = info_or(info, &scratch);
	uint64_t at = t_ns;
	for (;;) {
		enum iop_err e = rec_seek_time(r, at);
		if (e)
			return e;
		struct rec_frame f;
		e = rec_next(r, &f, NULL, 0);
		if (e == IOP_ERR_NOT_FOUND || (!e && f.type != REC_KEYFRAME))
			return from_start(r, t_ns, out, info); /* no keyframe before t */
		if (e)
			return e;
		uint64_t kf_time = f.time_ns;
		if (load_keyframe(r, &f, out, &info->keyframe_tick)) {
			/* the reader is after the keyframe's last part: the DELTAs
			 * that follow apply to it */
			bool have = true;
			info->from_keyframe = true;
			return apply_deltas(r, t_ns, out, &have, info);
		}
		info->keyframes_passed++;
		if (kf_time == 0)
			return from_start(r, t_ns, out, info);
		at = kf_time - 1; /* the keyframe before this one */
	}
}

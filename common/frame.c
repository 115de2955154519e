/* Frame writer and reader (docs/wire-format.md). The reader trusts nothing:
 * the header's lengths are checked against the buffer, the MAC before any
 * payload byte is interpreted, the counts against the smallest size their
 * records can have, and every record's fields against their ranges. */
#include <stddef.h>
#include <string.h>

#include "event_codec.h"
#include "frame.h"
#include "hash.h"
#include "run_codec.h"

/* Header field offsets. */
enum {
	H_MAGIC = 0,
	H_VERSION = 4,
	H_FLAGS = 6,
	H_JOB = 8,
	H_NODE = 16,
	H_RANK = 20,
	H_PID = 24,
	H_PAYLOAD_LEN = 28,
	H_SEQ = 32,
	H_BASE = 40,
	H_N_EVENTS = 48,
	H_N_NAMES = 52,
	H_N_COUNTERS = 54,
	H_N_INFLIGHT = 56,
	H_RESERVED = 58,
};
_Static_assert(H_RESERVED + 2 == IOP_FRAME_HEADER_LEN, "header layout");

/* Smallest encoding of each record, for the up-front count check. */
enum { MIN_STATS = 4, MIN_NAME = 12, MIN_COUNTER = 6, MIN_INFLIGHT = 5 };

/* Sections in payload order. */
enum { S_NAMES, S_COUNTERS, S_INFLIGHT, S_EVENTS, S_END };

/* ------------------------------------------------------------------ writer */

enum iop_err iop_enc_begin(struct iop_frame_enc *e, uint8_t *buf, size_t cap,
                           const struct iop_frame_hdr *hdr, const struct iop_stats *st)
{
	if (!buf || cap < IOP_FRAME_OVERHEAD + 64 || (hdr->flags & ~IOP_FRAME_KNOWN_FLAGS))
		return IOP_ERR_INVAL;
	if (cap > IOP_FRAME_MAX_LEN)
		cap = IOP_FRAME_MAX_LEN;
	/* not the run state (~5 KiB): a frame a round, it needs only its count */
	memset(e, 0, offsetof(struct iop_frame_enc, run));
	e->run.count = 0;
	e->buf = buf;
	e->c = iop_wcur_make(buf + IOP_FRAME_HEADER_LEN, cap - IOP_FRAME_OVERHEAD);
	/* The header is written at finish, when the counts are known; keep the
	 * caller's fields there now. */
	iop_store_u32le(buf + H_MAGIC, IOP_FRAME_MAGIC);
	iop_store_u16le(buf + H_VERSION, IOP_WIRE_VERSION);
	iop_store_u16le(buf + H_FLAGS, hdr->flags);
	iop_store_u64le(buf + H_JOB, hdr->job_id);
	iop_store_u32le(buf + H_NODE, hdr->node_id);
	iop_store_u32le(buf + H_RANK, hdr->rank);
	iop_store_u32le(buf + H_PID, hdr->pid);
	iop_store_u64le(buf + H_SEQ, hdr->seq);
	iop_store_u64le(buf + H_BASE, hdr->base_ns);
	iop_ev_pred_init(&e->pred, hdr->base_ns);

	iop_put_varint(&e->c, st ? st->events : 0);
	iop_put_varint(&e->c, st ? st->dropped : 0);
	iop_put_varint(&e->c, st ? st->shim_ns : 0);
	iop_put_varint(&e->c, st ? st->send_failures : 0);
	return e->c.err;
}

/* Moves the writer to section s; STATE when it is already past it, FULL when
 * the section's count cannot grow. */
static enum iop_err enter(struct iop_frame_enc *e, unsigned s, uint32_t count, uint32_t max)
{
	if (e->stage > s)
		return IOP_ERR_STATE;
	if (count >= max)
		return IOP_ERR_FULL;
	e->stage = (uint8_t)s;
	return IOP_OK;
}

/* Runs an encoding of one record; on FULL rewinds the cursor so the frame
 * stays as it was. */
static enum iop_err commit(struct iop_frame_enc *e, uint8_t *start)
{
	if (e->c.err != IOP_OK) {
		e->c.p = start;
		e->c.err = IOP_OK;
		return IOP_ERR_FULL;
	}
	return IOP_OK;
}

static bool name_kind_ok(uint8_t kind)
{
	return kind >= IOP_NAME_FILE && kind <= IOP_NAME_HOST;
}

static bool name_hash_checked(uint8_t kind)
{
	return kind == IOP_NAME_FILE || kind == IOP_NAME_DATASET;
}

enum iop_err iop_enc_name(struct iop_frame_enc *e, const struct iop_name *n)
{
	if (!name_kind_ok(n->kind) || n->id > IOP_ID_MAX || n->len == 0 || n->len > IOP_NAME_MAX ||
	    memchr(n->text, '\0', n->len))
		return IOP_ERR_INVAL;
	if (name_hash_checked(n->kind) && n->hash != iop_hash64(n->text, n->len))
		return IOP_ERR_INVAL;
	enum iop_err err = enter(e, S_NAMES, e->n_names, UINT16_MAX);
	if (err != IOP_OK)
		return err;
	uint8_t *start = e->c.p;
	iop_put_u8(&e->c, n->kind);
	iop_put_varint(&e->c, n->id);
	iop_put_u64le(&e->c, n->hash);
	iop_put_varint(&e->c, n->len);
	iop_put_bytes(&e->c, n->text, n->len);
	if ((err = commit(e, start)) == IOP_OK)
		e->n_names++;
	return err;
}

enum iop_err iop_enc_counter(struct iop_frame_enc *e, const struct iop_counter *k)
{
	if (k->file > IOP_ID_MAX || k->layer >= IOP_LAYER__COUNT || k->cls >= IOP_CLASS__COUNT)
		return IOP_ERR_INVAL;
	enum iop_err err = enter(e, S_COUNTERS, e->n_counters, UINT16_MAX);
	if (err != IOP_OK)
		return err;
	uint8_t *start = e->c.p;
	iop_put_varint(&e->c, k->file);
	iop_put_u8(&e->c, (uint8_t)(k->layer << 2 | k->cls));
	iop_put_varint(&e->c, k->ops);
	iop_put_varint(&e->c, k->bytes);
	iop_put_varint(&e->c, k->time_ns);
	iop_put_varint(&e->c, k->errors);
	if ((err = commit(e, start)) == IOP_OK)
		e->n_counters++;
	return err;
}

enum iop_err iop_enc_inflight(struct iop_frame_enc *e, const struct iop_inflight *f)
{
	if (f->thread > IOP_ID_MAX || f->file > IOP_ID_MAX || f->layer >= IOP_LAYER__COUNT ||
	    f->op >= IOP_OP__COUNT)
		return IOP_ERR_INVAL;
	enum iop_err err = enter(e, S_INFLIGHT, e->n_inflight, UINT16_MAX);
	if (err != IOP_OK)
		return err;
	uint8_t *start = e->c.p;
	iop_put_varint(&e->c, f->thread);
	iop_put_u8(&e->c, (uint8_t)(f->layer << 6 | f->op));
	iop_put_varint(&e->c, f->file);
	iop_put_svarint(&e->c, (int64_t)(f->start_ns - e->pred.prev_end));
	iop_put_varint(&e->c, f->bytes);
	if ((err = commit(e, start)) == IOP_OK)
		e->n_inflight++;
	return err;
}

static bool event_ok(const struct iop_event *ev)
{
	return ev->layer < IOP_LAYER__COUNT && ev->op < IOP_OP__COUNT && ev->dur_ns <= ev->end_ns &&
	       ev->thread <= IOP_ID_MAX && ev->file <= IOP_ID_MAX && ev->site <= IOP_ID_MAX &&
	       (!(ev->flags & IOP_EV_ERROR) || ev->err <= UINT16_MAX);
}

/* Stores one event record, if it fits. */
static enum iop_err store_event(struct iop_frame_enc *e, const struct iop_event *ev)
{
	if (iop_wcur_room(&e->c) >= IOP_EVENT_MAX_BYTES) {
		e->c.p = iop_ev_store(e->c.p, &e->pred, ev);
		return IOP_OK;
	}
	/* Near the end: encode aside, keep it only if it fits. */
	uint8_t tmp[IOP_EVENT_MAX_BYTES];
	struct iop_ev_pred pred = e->pred;
	size_t n = (size_t)(iop_ev_store(tmp, &pred, ev) - tmp);
	if (n > iop_wcur_room(&e->c))
		return IOP_ERR_FULL;
	memcpy(e->c.p, tmp, n);
	e->c.p += n;
	e->pred = pred;
	return IOP_OK;
}

/* Writes the pending run: its room was kept (iop_enc_event never lets a
 * run grow past what is left), so it always fits. */
static void flush_run(struct iop_frame_enc *e)
{
	struct iop_run_w *r = &e->run;
	if (r->count == 1)
		(void)store_event(e, &r->first);
	else if (r->count > 1) {
		e->c.p = iop_run_store(e->c.p, &e->pred, r);
		e->runs++;
	}
	r->count = 0;
}

void iop_enc_coalesce(struct iop_frame_enc *e, uint64_t split_ns)
{
	if (e->run.count)
		flush_run(e);
	e->split_ns = split_ns;
}

enum iop_err iop_enc_event(struct iop_frame_enc *e, const struct iop_event *ev)
{
	if (!event_ok(ev))
		return IOP_ERR_INVAL;
	enum iop_err err = enter(e, S_EVENTS, e->n_events, IOP_FRAME_MAX_EVENTS);
	if (err != IOP_OK)
		return err;
	if (e->c.err != IOP_OK)
		return e->c.err;
	if (!e->split_ns) {
		if ((err = store_event(e, ev)) != IOP_OK)
			return err;
		e->n_events++;
		return IOP_OK;
	}
	struct iop_run_w *r = &e->run;
	bool eligible = iop_run_eligible(ev);
	if (r->count && eligible && iop_run_extends(r, ev, e->split_ns)) {
		size_t room = iop_wcur_room(&e->c);
		if (room < IOP_RUN_BOUND_MAX && iop_run_bound(r, 1, ev->dur_ns) > room)
			return IOP_ERR_FULL;
		iop_run_add(r, ev);
		e->n_events++;
		return IOP_OK;
	}
	flush_run(e);
	if (eligible) {
		/* as a run of one it goes out as an event: that much room */
		if (iop_wcur_room(&e->c) < IOP_EVENT_MAX_BYTES) {
			uint8_t tmp[IOP_EVENT_MAX_BYTES];
			struct iop_ev_pred pred = e->pred;
			if ((size_t)(iop_ev_store(tmp, &pred, ev) - tmp) > iop_wcur_room(&e->c))
				return IOP_ERR_FULL;
		}
		iop_run_start(r, ev, e->split_ns);
	} else if ((err = store_event(e, ev)) != IOP_OK) {
		return err;
	}
	e->n_events++;
	return IOP_OK;
}

enum iop_err iop_enc_set_flags(struct iop_frame_enc *e, uint16_t flags)
{
	if (flags & ~IOP_FRAME_KNOWN_FLAGS)
		return IOP_ERR_INVAL;
	iop_store_u16le(e->buf + H_FLAGS, flags);
	return IOP_OK;
}

enum iop_err iop_enc_finish(struct iop_frame_enc *e, const struct iop_key *key, size_t *len)
{
	if (e->stage == S_END)
		return IOP_ERR_STATE;
	if (e->run.count)
		flush_run(e);
	if (e->c.err != IOP_OK)
		return e->c.err;
	size_t payload = (size_t)(e->c.p - (e->buf + IOP_FRAME_HEADER_LEN));
	iop_store_u32le(e->buf + H_PAYLOAD_LEN, (uint32_t)payload);
	iop_store_u32le(e->buf + H_N_EVENTS, e->n_events);
	iop_store_u16le(e->buf + H_N_NAMES, e->n_names);
	iop_store_u16le(e->buf + H_N_COUNTERS, e->n_counters);
	iop_store_u16le(e->buf + H_N_INFLIGHT, e->n_inflight);
	iop_store_u16le(e->buf + H_RESERVED, 0);
	size_t body = IOP_FRAME_HEADER_LEN + payload;
	enum iop_err err = iop_mac(key, e->buf, body, e->buf + body);
	if (err != IOP_OK)
		return err;
	e->stage = S_END;
	*len = body + IOP_MAC_BYTES;
	return IOP_OK;
}

/* ------------------------------------------------------------------ reader */

/* Checks what can be checked without the key; *payload_len on success. */
static enum iop_err check_header(const uint8_t *buf, size_t len, struct iop_frame_hdr *hdr,
                                 uint32_t *payload_len)
{
	if (len < 4)
		return IOP_ERR_TRUNCATED;
	if (iop_load_u32le(buf + H_MAGIC) != IOP_FRAME_MAGIC)
		return IOP_ERR_BAD_MAGIC;
	if (len < H_VERSION + 2)
		return IOP_ERR_TRUNCATED;
	uint16_t version = iop_load_u16le(buf + H_VERSION);
	if (version < IOP_WIRE_VERSION_MIN || version > IOP_WIRE_VERSION)
		return IOP_ERR_BAD_VERSION;
	if (len < IOP_FRAME_HEADER_LEN)
		return IOP_ERR_TRUNCATED;
	uint32_t plen = iop_load_u32le(buf + H_PAYLOAD_LEN);
	if (plen > IOP_FRAME_MAX_PAYLOAD)
		return IOP_ERR_OVERSIZED;
	if (len < (size_t)IOP_FRAME_OVERHEAD + plen)
		return IOP_ERR_TRUNCATED;
	if (len > (size_t)IOP_FRAME_OVERHEAD + plen)
		return IOP_ERR_INCONSISTENT;
	hdr->flags = iop_load_u16le(buf + H_FLAGS);
	hdr->job_id = iop_load_u64le(buf + H_JOB);
	hdr->node_id = iop_load_u32le(buf + H_NODE);
	hdr->rank = iop_load_u32le(buf + H_RANK);
	hdr->pid = iop_load_u32le(buf + H_PID);
	hdr->seq = iop_load_u64le(buf + H_SEQ);
	hdr->base_ns = iop_load_u64le(buf + H_BASE);
	*payload_len = plen;
	return IOP_OK;
}

enum iop_err iop_frame_peek(const uint8_t *buf, size_t len, struct iop_frame_hdr *hdr)
{
	uint32_t plen;
	return check_header(buf, len, hdr, &plen);
}

/* Skips empty sections so that f->stage names the section of the next record. */
static void settle(struct iop_frame *f)
{
	while (f->left == 0 && f->stage < S_END) {
		f->stage++;
		switch (f->stage) {
		case S_COUNTERS:
			f->left = f->n_counters;
			break;
		case S_INFLIGHT:
			f->left = f->n_inflight;
			break;
		case S_EVENTS:
			f->left = f->n_events;
			break;
		default:
			break;
		}
	}
}

enum iop_err iop_frame_open(struct iop_frame *f, const uint8_t *buf, size_t len,
                            const struct iop_key *key)
{
	uint32_t plen;
	/* not the run state (~10 KiB), read only once a run record opens it:
	 * a leaf opens thousands of frames a second */
	memset(f, 0, offsetof(struct iop_frame, run));
	f->run.count = f->run.i = 0;
	enum iop_err err = check_header(buf, len, &f->hdr, &plen);
	if (err != IOP_OK)
		return err;
	size_t body = IOP_FRAME_HEADER_LEN + (size_t)plen;
	if (!iop_mac_ok(key, buf, body, buf + body))
		return IOP_ERR_BAD_MAC;
	if ((f->hdr.flags & ~IOP_FRAME_KNOWN_FLAGS) || iop_load_u16le(buf + H_RESERVED) != 0)
		return IOP_ERR_MALFORMED;
	f->version = iop_load_u16le(buf + H_VERSION);
	f->n_events = iop_load_u32le(buf + H_N_EVENTS);
	f->n_names = iop_load_u16le(buf + H_N_NAMES);
	f->n_counters = iop_load_u16le(buf + H_N_COUNTERS);
	f->n_inflight = iop_load_u16le(buf + H_N_INFLIGHT);
	uint64_t least =
	    MIN_STATS + (uint64_t)f->n_names * MIN_NAME + (uint64_t)f->n_counters * MIN_COUNTER +
	    (uint64_t)f->n_inflight * MIN_INFLIGHT;
	/* from version 3 a run record holds many calls in a few bytes */
	least += f->version < 3 ? (uint64_t)f->n_events * IOP_EVENT_MIN_BYTES : f->n_events > 0;
	if (f->n_events > IOP_FRAME_MAX_EVENTS)
		return IOP_ERR_OVERSIZED;
	if (least > plen)
		return IOP_ERR_INCONSISTENT;

	f->c = iop_rcur_make(buf + IOP_FRAME_HEADER_LEN, plen);
	f->stats.events = iop_get_varint(&f->c);
	f->stats.dropped = iop_get_varint(&f->c);
	f->stats.shim_ns = iop_get_varint(&f->c);
	f->stats.send_failures = iop_get_varint(&f->c);
	if (f->c.err != IOP_OK)
		return f->c.err == IOP_ERR_TRUNCATED ? IOP_ERR_INCONSISTENT : f->c.err;
	iop_ev_pred_init(&f->pred, f->hdr.base_ns);
	f->stage = S_NAMES;
	f->left = f->n_names;
	settle(f);
	return IOP_OK;
}

/* Starts reading one record of section s. */
static enum iop_err take(struct iop_frame *f, unsigned s)
{
	if (f->c.err != IOP_OK)
		return IOP_ERR_STATE; /* an earlier record failed: the frame is done */
	if (f->stage != s || f->left == 0)
		return IOP_ERR_STATE;
	return IOP_OK;
}

/* Ends reading a record: running out of payload inside a record means the
 * declared counts promised more than the payload holds. */
static enum iop_err done(struct iop_frame *f, enum iop_err err)
{
	if (err == IOP_OK && f->c.err != IOP_OK)
		err = f->c.err;
	if (err == IOP_ERR_TRUNCATED)
		err = IOP_ERR_INCONSISTENT;
	if (err != IOP_OK) {
		if (f->c.err == IOP_OK)
			f->c.err = err;
		return err;
	}
	f->left--;
	settle(f);
	return IOP_OK;
}

enum iop_err iop_frame_name(struct iop_frame *f, struct iop_name *n)
{
	enum iop_err err = take(f, S_NAMES);
	if (err != IOP_OK)
		return err;
	n->kind = iop_get_u8(&f->c);
	n->id = (uint32_t)iop_get_varint_max(&f->c, IOP_ID_MAX);
	n->hash = iop_get_u64le(&f->c);
	uint64_t len = iop_get_varint(&f->c);
	if (f->c.err == IOP_OK && len > IOP_NAME_MAX)
		return done(f, IOP_ERR_OVERSIZED);
	n->len = (uint32_t)len;
	n->text = (const char *)iop_get_bytes(&f->c, n->len);
	if (f->c.err == IOP_OK &&
	    (!name_kind_ok(n->kind) || n->len == 0 || memchr(n->text, '\0', n->len) ||
	     (name_hash_checked(n->kind) && n->hash != iop_hash64(n->text, n->len))))
		err = IOP_ERR_MALFORMED;
	return done(f, err);
}

enum iop_err iop_frame_counter(struct iop_frame *f, struct iop_counter *k)
{
	enum iop_err err = take(f, S_COUNTERS);
	if (err != IOP_OK)
		return err;
	k->file = (uint32_t)iop_get_varint_max(&f->c, IOP_ID_MAX);
	uint8_t lc = iop_get_u8(&f->c);
	k->layer = lc >> 2;
	k->cls = lc & 3;
	k->ops = iop_get_varint(&f->c);
	k->bytes = iop_get_varint(&f->c);
	k->time_ns = iop_get_varint(&f->c);
	k->errors = iop_get_varint(&f->c);
	if (f->c.err == IOP_OK && (k->layer >= IOP_LAYER__COUNT || k->cls >= IOP_CLASS__COUNT))
		err = IOP_ERR_MALFORMED;
	return done(f, err);
}

enum iop_err iop_frame_inflight(struct iop_frame *f, struct iop_inflight *fl)
{
	enum iop_err err = take(f, S_INFLIGHT);
	if (err != IOP_OK)
		return err;
	fl->thread = (uint32_t)iop_get_varint_max(&f->c, IOP_ID_MAX);
	uint8_t code = iop_get_u8(&f->c);
	fl->layer = code >> 6;
	fl->op = code & 63;
	fl->file = (uint32_t)iop_get_varint_max(&f->c, IOP_ID_MAX);
	fl->start_ns = f->pred.prev_end + (uint64_t)iop_get_svarint(&f->c);
	fl->bytes = iop_get_varint(&f->c);
	if (f->c.err == IOP_OK && (fl->op >= IOP_OP__COUNT || fl->layer >= IOP_LAYER__COUNT))
		err = IOP_ERR_MALFORMED;
	return done(f, err);
}

/* Whether the next record of the events section is a run record. */
static bool run_next(const struct iop_frame *f)
{
	return iop_ev_run_ahead(&f->c, f->version >= 3);
}

/* Hands out up to n calls of the open run into ev; the calls handed. */
static uint32_t run_calls(struct iop_frame *f, struct iop_event *ev, uint32_t n)
{
	uint32_t k = 0;
	for (; k < n && f->run.i < f->run.count; k++)
		iop_run_next(&f->run, &ev[k]);
	f->left -= k;
	settle(f);
	return k;
}

/* Opens the run record next in the payload. */
static enum iop_err open_run(struct iop_frame *f)
{
	enum iop_err err = iop_run_open(&f->c, &f->pred, f->left, &f->run);
	if (err == IOP_ERR_TRUNCATED)
		err = IOP_ERR_INCONSISTENT;
	if (err != IOP_OK) {
		f->run.count = f->run.i = 0;
		if (f->c.err == IOP_OK)
			f->c.err = err;
	}
	return err;
}

enum iop_err iop_frame_event(struct iop_frame *f, struct iop_event *ev)
{
	enum iop_err err = take(f, S_EVENTS);
	if (err != IOP_OK)
		return err;
	if (f->run.i < f->run.count) {
		run_calls(f, ev, 1);
		return IOP_OK;
	}
	if (run_next(f)) {
		if ((err = open_run(f)) != IOP_OK)
			return err;
		run_calls(f, ev, 1);
		return IOP_OK;
	}
	return done(f, iop_ev_load(&f->c, &f->pred, ev));
}

/* The open run (nothing of it handed out yet) into ev[0] and out's next
 * run, whole, when it is long, fits in room calls and out has room for it;
 * the calls taken (0: none). */
static uint32_t run_whole(struct iop_frame *f, struct iop_event *ev, uint32_t room,
                          struct iop_runs_out *out)
{
	const struct iop_run_r *r = &f->run;
	const struct iop_hist *h = &r->hist;
	size_t nb = (size_t)(h->hi - h->lo);
	if (!out || r->i != 0 || r->count <= IOP_RUN_EXACT_MAX || r->count > room ||
	    out->n >= out->cap || out->bk_cap - out->bk_used < nb)
		return 0;
	struct iop_run_whole *w = &out->run[out->n++];
	*w = (struct iop_run_whole){.first_end = r->first_end, .span = r->span,
	                            .first_offset = r->first_offset, .stride = r->stride,
	                            .count = r->count, .hist = *h};
	w->hist.bucket = out->bk + out->bk_used;
	w->hist.borrowed = 1;
	memcpy(w->hist.bucket, h->bucket, nb * sizeof *h->bucket);
	out->bk_used += nb;
	iop_run_next(&f->run, ev);
	ev->flags |= IOP_EV_WHOLE;
	f->run.i = f->run.count;
	f->left -= r->count;
	settle(f);
	return w->count;
}

/* n calls into ev; *slots: the entries of ev written, one a call but
 * for a run taken whole (out). */
static enum iop_err events(struct iop_frame *f, struct iop_event *ev, uint32_t n,
                           struct iop_runs_out *out, uint32_t *slots)
{
	*slots = 0;
	if (n == 0)
		return IOP_OK;
	enum iop_err err = take(f, S_EVENTS);
	if (err != IOP_OK)
		return err;
	uint32_t want = n < f->left ? n : f->left, i = 0, j = 0;
	while (i < want) {
		if (f->run.i < f->run.count) {
			uint32_t k = run_whole(f, ev + j, want - i, out);
			if (k) {
				i += k;
				j++;
			} else {
				k = run_calls(f, ev + j, want - i);
				i += k;
				j += k;
			}
			continue;
		}
		if (run_next(f)) {
			if ((err = open_run(f)) != IOP_OK)
				return err;
			continue;
		}
		/* plain events up to the next run record (or the first error) */
		uint32_t got = iop_ev_load_n(&f->c, &f->pred, ev + j, want - i,
		                             f->version >= 3, &err);
		f->left -= got;
		i += got;
		j += got;
		*slots = j;
		if (err != IOP_OK)
			return done(f, err);
		settle(f);
	}
	*slots = j;
	return want < n ? IOP_ERR_STATE : IOP_OK; /* asked past the last event */
}

enum iop_err iop_frame_events(struct iop_frame *f, struct iop_event *ev, uint32_t n)
{
	uint32_t slots;
	return events(f, ev, n, NULL, &slots);
}

enum iop_err iop_frame_events_whole(struct iop_frame *f, struct iop_event *ev, uint32_t n,
                                    struct iop_runs_out *out, uint32_t *slots)
{
	return events(f, ev, n, out, slots);
}

enum iop_err iop_frame_close(struct iop_frame *f)
{
	if (f->c.err != IOP_OK)
		return f->c.err;
	if (f->stage != S_END)
		return IOP_ERR_STATE;
	if (iop_rcur_left(&f->c) != 0)
		return IOP_ERR_INCONSISTENT; /* bytes after the last declared record */
	return IOP_OK;
}

enum iop_err iop_frame_decode(const uint8_t *buf, size_t len, const struct iop_key *key,
                              struct iop_frame_out *out)
{
	struct iop_frame *f = &out->frame;
	enum iop_err err = iop_frame_open(f, buf, len, key);
	if (err != IOP_OK)
		return err;
	if (f->n_names > out->names_cap || f->n_counters > out->counters_cap ||
	    f->n_inflight > out->inflight_cap || f->n_events > out->events_cap)
		return IOP_ERR_OVERSIZED;
	for (uint32_t i = 0; i < f->n_names; i++)
		if ((err = iop_frame_name(f, &out->names[i])) != IOP_OK)
			return err;
	for (uint32_t i = 0; i < f->n_counters; i++)
		if ((err = iop_frame_counter(f, &out->counters[i])) != IOP_OK)
			return err;
	for (uint32_t i = 0; i < f->n_inflight; i++)
		if ((err = iop_frame_inflight(f, &out->inflight[i])) != IOP_OK)
			return err;
	if ((err = iop_frame_events(f, out->events, f->n_events)) != IOP_OK)
		return err;
	return iop_frame_close(f);
}

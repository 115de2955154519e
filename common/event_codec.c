/* Event record codec (docs/wire-format.md, "Event records").
 *
 * An event costs two bytes (op code, wire flags) and two varints (end time as
 * a signed delta from the previous event's end, duration); every other field
 * is sent only when it carries information. A sequential 1 MiB write to the
 * same file from the same site is about 10 bytes. */
#include <string.h>

#include "event_codec.h"

#define IOP_LIKELY(x) __builtin_expect(!!(x), 1)

void iop_ev_pred_init(struct iop_ev_pred *p, uint64_t base_ns)
{
	memset(p, 0, sizeof *p);
	p->prev_end = base_ns;
	for (unsigned i = 0; i < 16; i++)
		p->off[i].file = UINT32_MAX; /* matches no id (ids are <= IOP_ID_MAX) */
}

uint8_t *iop_ev_store(uint8_t *out, struct iop_ev_pred *p, const struct iop_event *ev)
{
	uint8_t wf = 0;
	if (ev->thread != p->thread)
		wf |= EVW_THREAD;
	if (ev->file != p->file)
		wf |= EVW_FILE;
	if (ev->site != p->site)
		wf |= EVW_SITE;
	if (ev->flags & IOP_EV_OFFSET)
		wf |= EVW_OFFSET;
	if (ev->flags & IOP_EV_BYTES)
		wf |= EVW_BYTES;
	if (ev->flags & IOP_EV_ERROR)
		wf |= EVW_ERROR;
	if (ev->flags & IOP_EV_PARENT)
		wf |= EVW_PARENT;
	if (ev->flags & IOP_EV_CHILDREN)
		wf |= EVW_CHILDREN;

	uint8_t *q = out;
	bool coll = ev->flags & IOP_EV_COLL;
	*q++ = (uint8_t)(ev->layer << 6 | (coll ? EVC_COLL : 0) | (ev->op & EVC_OP));
	*q++ = wf;
	q = iop_store_varint(q, iop_zigzag((int64_t)(ev->end_ns - p->prev_end)));
	q = iop_store_varint(q, ev->dur_ns);
	p->prev_end = ev->end_ns;
	q = iop_ev_store_ids(q, p, wf, ev);
	if (wf & EVW_OFFSET) {
		uint64_t want = iop_ev_predicted_offset(p, ev->file);
		q = iop_store_varint(q, iop_zigzag((int64_t)(ev->offset - want)));
		iop_ev_learn_offset(p, ev->file, ev->offset + (wf & EVW_BYTES ? ev->bytes : 0));
	}
	if (wf & EVW_BYTES)
		q = iop_store_varint(q, ev->bytes);
	if (wf & EVW_ERROR)
		q = iop_store_varint(q, ev->err);
	if (wf & EVW_PARENT) {
		q = iop_store_varint(q, iop_zigzag((int64_t)(ev->parent_id - p->prev_id)));
		p->prev_id = ev->parent_id;
	}
	if (wf & EVW_CHILDREN) {
		q = iop_store_varint(q, iop_zigzag((int64_t)(ev->call_id - p->prev_id)));
		p->prev_id = ev->call_id;
		q = iop_store_varint(q, ev->child_ops);
		q = iop_store_varint(q, ev->child_bytes);
		q = iop_store_varint(q, ev->child_ns);
	}
	if (coll) {
		q = iop_store_varint(q, ev->coll_seq);
		q = iop_store_varint(q, ev->coll_size);
	}
	return q;
}

/* Unchecked varint read for the fast path: the caller has made sure that
 * IOP_VARINT_MAX bytes are there. Sets *bad on an overlong encoding. */
static inline uint64_t take_varint(const uint8_t **pp, bool *bad)
{
	const uint8_t *p = *pp;
	uint64_t v = *p & 0x7f;
	if (IOP_LIKELY(*p++ < 0x80)) {
		*pp = p;
		return v;
	}
	for (unsigned shift = 7; shift < 63; shift += 7) {
		uint8_t b = *p++;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (b < 0x80) {
			*pp = p;
			return v;
		}
	}
	uint8_t b = *p++; /* 10th byte: only bit 63 left */
	if (b > 1)
		*bad = true;
	v |= (uint64_t)b << 63;
	*pp = p;
	return v;
}

/* Fast path: the whole event is known to fit in what is left, so fields are
 * read without per-byte bounds checks; values are range-checked as ever. */
static inline __attribute__((always_inline)) enum iop_err
load_fast(struct iop_rcur *c, struct iop_ev_pred *p, struct iop_event *ev)
{
	const uint8_t *q = c->p;
	bool bad = false;
	uint8_t code = *q++;
	uint8_t wf = *q++;
	uint64_t end = p->prev_end + (uint64_t)iop_unzigzag(take_varint(&q, &bad));
	uint64_t dur = take_varint(&q, &bad);
	if ((code & EVC_OP) >= IOP_OP__COUNT || (code >> 6) >= IOP_LAYER__COUNT || dur > end)
		return IOP_ERR_MALFORMED;
	ev->end_ns = end;
	ev->dur_ns = dur;
	ev->layer = code >> 6;
	ev->op = code & EVC_OP;
	p->prev_end = end;
	uint64_t v;
	if (wf & EVW_THREAD) {
		if ((v = take_varint(&q, &bad)) > IOP_ID_MAX)
			return IOP_ERR_MALFORMED;
		p->thread = (uint32_t)v;
	}
	if (wf & EVW_FILE) {
		if ((v = take_varint(&q, &bad)) > IOP_ID_MAX)
			return IOP_ERR_MALFORMED;
		p->file = (uint32_t)v;
	}
	if (wf & EVW_SITE) {
		if ((v = take_varint(&q, &bad)) > IOP_ID_MAX)
			return IOP_ERR_MALFORMED;
		p->site = (uint32_t)v;
	}
	ev->thread = p->thread;
	ev->file = p->file;
	ev->site = p->site;
	uint8_t flags = 0;
	ev->offset = 0;
	if (wf & EVW_OFFSET) {
		ev->offset = iop_ev_predicted_offset(p, ev->file) + (uint64_t)iop_unzigzag(take_varint(&q, &bad));
		flags |= IOP_EV_OFFSET;
	}
	ev->bytes = 0;
	if (wf & EVW_BYTES) {
		ev->bytes = take_varint(&q, &bad);
		flags |= IOP_EV_BYTES;
	}
	if (wf & EVW_OFFSET)
		iop_ev_learn_offset(p, ev->file, ev->offset + ev->bytes);
	ev->err = 0;
	if (wf & EVW_ERROR) {
		if ((v = take_varint(&q, &bad)) > UINT16_MAX)
			return IOP_ERR_MALFORMED;
		ev->err = (uint32_t)v;
		flags |= IOP_EV_ERROR;
	}
	ev->parent_id = 0;
	if (wf & EVW_PARENT) {
		ev->parent_id = p->prev_id = p->prev_id + (uint64_t)iop_unzigzag(take_varint(&q, &bad));
		flags |= IOP_EV_PARENT;
	}
	ev->call_id = ev->child_bytes = ev->child_ns = 0;
	ev->child_ops = 0;
	if (wf & EVW_CHILDREN) {
		ev->call_id = p->prev_id = p->prev_id + (uint64_t)iop_unzigzag(take_varint(&q, &bad));
		if ((v = take_varint(&q, &bad)) > UINT32_MAX)
			return IOP_ERR_MALFORMED;
		ev->child_ops = (uint32_t)v;
		ev->child_bytes = take_varint(&q, &bad);
		ev->child_ns = take_varint(&q, &bad);
		flags |= IOP_EV_CHILDREN;
	}
	ev->coll_seq = ev->coll_size = ev->run_calls = 0;
	if (code & EVC_COLL) {
		uint64_t seq = take_varint(&q, &bad), size = take_varint(&q, &bad);
		if (seq == 0 || seq > UINT32_MAX || size == 0 || size > UINT32_MAX)
			return IOP_ERR_MALFORMED;
		ev->coll_seq = (uint32_t)seq;
		ev->coll_size = (uint32_t)size;
		flags |= IOP_EV_COLL;
	}
	ev->flags = flags;
	if (bad)
		return IOP_ERR_MALFORMED;
	c->p = q;
	return IOP_OK;
}

static enum iop_err load_checked(struct iop_rcur *c, struct iop_ev_pred *p, struct iop_event *ev);

enum iop_err iop_ev_load(struct iop_rcur *c, struct iop_ev_pred *p, struct iop_event *ev)
{
	if (c->err == IOP_OK && iop_rcur_left(c) >= IOP_EVENT_MAX_BYTES)
		return load_fast(c, p, ev);
	return load_checked(c, p, ev);
}

uint32_t iop_ev_load_n(struct iop_rcur *c, struct iop_ev_pred *p, struct iop_event *ev, uint32_t n,
                       bool runs, enum iop_err *err)
{
	*err = IOP_OK;
	/* load_fast inline while the longest event fits, with the cursor and
	 * the prediction in registers: a call an event, saving and restoring
	 * them, was an eighth of the decoding's instructions */
	struct iop_rcur fast = *c;
	struct iop_ev_pred pred = *p;
	uint32_t i = 0;
	if (fast.err == IOP_OK)
		for (; i < n && iop_rcur_left(&fast) >= IOP_EVENT_MAX_BYTES; i++) {
			if (iop_ev_run_ahead(&fast, runs))
				break;
			if ((*err = load_fast(&fast, &pred, &ev[i])) != IOP_OK)
				break;
		}
	*c = fast;
	*p = pred;
	if (*err != IOP_OK)
		return i;
	for (; i < n; i++) {
		if (iop_ev_run_ahead(c, runs))
			return i;
		if ((*err = iop_ev_load(c, p, &ev[i])) != IOP_OK)
			return i;
	}
	return n;
}

/* Slow path near the end of the payload: every byte is bounds-checked. */
static enum iop_err load_checked(struct iop_rcur *c, struct iop_ev_pred *p, struct iop_event *ev)
{
	uint8_t code = iop_get_u8(c);
	uint8_t wf = iop_get_u8(c);
	uint64_t end = p->prev_end + (uint64_t)iop_get_svarint(c);
	uint64_t dur = iop_get_varint(c);
	if (c->err != IOP_OK)
		return c->err;
	if ((code & EVC_OP) >= IOP_OP__COUNT || (code >> 6) >= IOP_LAYER__COUNT || dur > end)
		return IOP_ERR_MALFORMED;

	ev->end_ns = end;
	ev->dur_ns = dur;
	ev->layer = code >> 6;
	ev->op = code & EVC_OP;
	ev->flags = 0;
	p->prev_end = end;
	iop_ev_load_ids(c, p, wf);
	ev->thread = p->thread;
	ev->file = p->file;
	ev->site = p->site;
	if (wf & EVW_OFFSET) {
		ev->offset = iop_ev_predicted_offset(p, ev->file) + (uint64_t)iop_get_svarint(c);
		ev->flags |= IOP_EV_OFFSET;
	} else {
		ev->offset = 0;
	}
	if (wf & EVW_BYTES) {
		ev->bytes = iop_get_varint(c);
		ev->flags |= IOP_EV_BYTES;
	} else {
		ev->bytes = 0;
	}
	if (wf & EVW_OFFSET)
		iop_ev_learn_offset(p, ev->file, ev->offset + ev->bytes);
	if (wf & EVW_ERROR) {
		ev->err = (uint32_t)iop_get_varint_max(c, UINT16_MAX);
		ev->flags |= IOP_EV_ERROR;
	} else {
		ev->err = 0;
	}
	if (wf & EVW_PARENT) {
		ev->parent_id = p->prev_id = p->prev_id + (uint64_t)iop_get_svarint(c);
		ev->flags |= IOP_EV_PARENT;
	} else {
		ev->parent_id = 0;
	}
	if (wf & EVW_CHILDREN) {
		ev->call_id = p->prev_id = p->prev_id + (uint64_t)iop_get_svarint(c);
		ev->child_ops = (uint32_t)iop_get_varint_max(c, UINT32_MAX);
		ev->child_bytes = iop_get_varint(c);
		ev->child_ns = iop_get_varint(c);
		ev->flags |= IOP_EV_CHILDREN;
	} else {
		ev->call_id = ev->child_ops = 0;
		ev->child_bytes = ev->child_ns = 0;
	}
	ev->coll_seq = ev->coll_size = ev->run_calls = 0;
	if (code & EVC_COLL) {
		uint64_t seq = iop_get_varint(c), size = iop_get_varint(c);
		if (c->err != IOP_OK)
			return c->err;
		if (seq == 0 || seq > UINT32_MAX || size == 0 || size > UINT32_MAX)
			return IOP_ERR_MALFORMED;
		ev->coll_seq = (uint32_t)seq;
		ev->coll_size = (uint32_t)size;
		ev->flags |= IOP_EV_COLL;
	}
	return c->err;
}

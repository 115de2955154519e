/* Run records (docs/wire-format.md, "Run records").
 *
 * A run is what a thread does when it streams: the same call on the same
 * file from the same place, the same size, the offset moving by the same
 * stride. Sent call by call it costs ~5 bytes a call; as one record, the
 * first call's fields, the stride, the count, the span of its ends and its
 * durations (each one up to IOP_RUN_EXACT_MAX calls, a histogram above),
 * a few dozen bytes a run. The reader gives the calls back: offsets and
 * bytes exact, ends spread evenly over the span, durations exact or, from
 * a histogram, each within its bucket (1.6 %) and adding up to the exact
 * sum. */
#include <string.h>

#include "event_codec.h"
#include "run_codec.h"

#define RUN_WIRE (EVW_THREAD | EVW_FILE | EVW_SITE | EVW_OFFSET | EVW_BYTES)

void iop_run_start(struct iop_run_w *r, const struct iop_event *ev, uint64_t split_ns)
{
	r->first = *ev;
	r->window = ev->end_ns / split_ns;
	r->last_end = ev->end_ns;
	r->last_offset = ev->offset;
	r->stride = 0;
	r->count = 1;
	r->nonzero = 0;
	r->dur[0] = ev->dur_ns;
}

static void hist_add(struct iop_run_w *r, uint64_t ns)
{
	unsigned b = iop_hist_bucket(ns);
	r->nonzero += r->bk[b] == 0;
	iop_hist_record_full(&r->hist, ns, b);
}

void iop_run_add_short(struct iop_run_w *r, const struct iop_event *ev)
{
	if (r->count == 1)
		r->stride = ev->offset - r->first.offset;
	if (r->count < IOP_RUN_EXACT_MAX) {
		r->dur[r->count] = ev->dur_ns;
	} else { /* its durations move to a histogram */
		memset(r->bk, 0, sizeof r->bk);
		iop_hist_init(&r->hist);
		r->hist.bucket = r->bk;
		r->hist.lo = 0;
		r->hist.hi = IOP_HIST_BUCKETS;
		r->hist.borrowed = 1;
		r->nonzero = 0;
		for (unsigned i = 0; i < IOP_RUN_EXACT_MAX; i++)
			hist_add(r, r->dur[i]);
		hist_add(r, ev->dur_ns);
	}
	r->count++;
	r->last_end = ev->end_ns;
	r->last_offset = ev->offset;
}

/* code, op, flags; end delta, span, count; thread, file, site; offset,
 * stride, bytes */
#define FIXED_MAX (3 + 3 * IOP_VARINT_MAX + 3 * 4 + 3 * IOP_VARINT_MAX)

size_t iop_run_bound(const struct iop_run_w *r, unsigned more, uint64_t dur_ns)
{
	uint64_t n = (uint64_t)r->count + more;
	if (n <= IOP_RUN_EXACT_MAX)
		return FIXED_MAX + n * IOP_VARINT_MAX;
	uint64_t nz = r->count > IOP_RUN_EXACT_MAX ? r->nonzero : IOP_RUN_EXACT_MAX;
	if (more && (r->count <= IOP_RUN_EXACT_MAX || r->bk[iop_hist_bucket(dur_ns)] == 0))
		nz++;
	/* count, min, max, sum; buckets; each a gap (< 1216) and a count */
	return FIXED_MAX + 4 * IOP_VARINT_MAX + 2 + nz * (2 + 5);
}

uint8_t *iop_run_store(uint8_t *out, struct iop_ev_pred *p, const struct iop_run_w *r)
{
	const struct iop_event *f = &r->first;
	uint8_t wf = f->flags & IOP_EV_OFFSET ? EVW_OFFSET : 0;
	wf |= f->flags & IOP_EV_BYTES ? EVW_BYTES : 0;
	wf |= f->thread != p->thread ? EVW_THREAD : 0;
	wf |= f->file != p->file ? EVW_FILE : 0;
	wf |= f->site != p->site ? EVW_SITE : 0;
	uint8_t *q = out;
	*q++ = (uint8_t)(f->layer << 6 | EVC_RUN);
	*q++ = f->op;
	*q++ = wf;
	q = iop_store_varint(q, iop_zigzag((int64_t)(r->last_end - p->prev_end)));
	q = iop_store_varint(q, r->last_end - f->end_ns);
	q = iop_store_varint(q, r->count);
	p->prev_end = r->last_end;
	q = iop_ev_store_ids(q, p, wf, f);
	if (wf & EVW_OFFSET) {
		uint64_t want = iop_ev_predicted_offset(p, f->file);
		q = iop_store_varint(q, iop_zigzag((int64_t)(f->offset - want)));
		q = iop_store_varint(q, iop_zigzag((int64_t)r->stride));
		iop_ev_learn_offset(p, f->file, r->last_offset + (wf & EVW_BYTES ? f->bytes : 0));
	}
	if (wf & EVW_BYTES)
		q = iop_store_varint(q, f->bytes);
	if (r->count <= IOP_RUN_EXACT_MAX) {
		for (uint32_t i = 0; i < r->count; i++)
			q = iop_store_varint(q, r->dur[i]);
		return q;
	}
	struct iop_wcur c = iop_wcur_make(q, iop_run_bound(r, 0, 0));
	iop_hist_encode(&r->hist, &c);
	return c.p;
}

/* ------------------------------------------------------------------ reader */

static uint32_t *run_buckets(void *arg, size_t n)
{
	struct iop_run_r *r = arg;
	return n <= IOP_HIST_BUCKETS ? r->bk : NULL;
}

/* The middle of bucket b, within [min, max]: where a duration starts. */
static uint64_t mid_in(const struct iop_hist *h, unsigned b)
{
	uint64_t lo = iop_hist_bucket_low(b), hi = iop_hist_bucket_high(b);
	uint64_t mid = lo + (hi - lo) / 2;
	return mid < h->min ? h->min : mid > h->max ? h->max : mid;
}

static uint32_t bucket_count(const struct iop_run_r *r, unsigned b)
{
	return b >= r->hist.lo && b < r->hist.hi ? r->hist.bucket[b - r->hist.lo] : 0;
}

/* Moves the durations' cursor to bucket b. */
static void at_bucket(struct iop_run_r *r, unsigned b)
{
	const struct iop_hist *h = &r->hist;
	uint64_t lo = iop_hist_bucket_low(b), hi = iop_hist_bucket_high(b);
	r->b = b;
	r->b_left = bucket_count(r, b);
	r->b_mid = mid_in(h, b);
	r->b_lo = lo > h->min ? lo : h->min;
	r->b_hi = hi < h->max ? hi : h->max;
}

/* The durations of a long run: its histogram, checked against the run;
 * the residual its sum leaves after every duration at its bucket's
 * middle (the first at min, the last at max). */
static void begin_hist(struct iop_run_r *r);

static enum iop_err open_hist(struct iop_rcur *c, struct iop_run_r *r)
{
	iop_hist_init(&r->hist);
	enum iop_err err = iop_hist_decode_in(&r->hist, c, run_buckets, r);
	if (err != IOP_OK)
		return err;
	const struct iop_hist *h = &r->hist;
	if (h->count != r->count)
		return IOP_ERR_INCONSISTENT;
	/* every call ends at first_end or later, so lasted at most that long */
	if (h->max > r->first_end || (unsigned __int128)h->sum < (unsigned __int128)h->min * h->count ||
	    (unsigned __int128)h->sum > (unsigned __int128)h->max * h->count)
		return IOP_ERR_MALFORMED;
	begin_hist(r);
	return IOP_OK;
}

/* The durations of a long run whose histogram r->hist holds (checked):
 * from the first. */
static void begin_hist(struct iop_run_r *r)
{
	const struct iop_hist *h = &r->hist;
	__int128 base = 0;
	for (unsigned b = h->lo; b < h->hi; b++)
		base += (__int128)mid_in(h, b) * bucket_count(r, b);
	base += (__int128)h->min - mid_in(h, iop_hist_bucket(h->min));
	base += (__int128)h->max - mid_in(h, iop_hist_bucket(h->max));
	r->resid = (__int128)h->sum - base;
	at_bucket(r, iop_hist_bucket(h->min));
}

static uint64_t end_of(const struct iop_run_r *r, uint32_t i)
{
	return r->first_end + (uint64_t)((unsigned __int128)r->span * i / (r->count - 1));
}

/* The ends of a run's calls, from the first. */
static void begin_ends(struct iop_run_r *r, uint64_t first_end, uint64_t span, uint32_t count)
{
	r->count = count;
	r->i = 0;
	r->first_end = first_end;
	r->span = span;
	r->next_end = first_end;
	r->step = span / (count - 1);
	r->rem = span % (count - 1);
	r->acc = 0;
}

enum iop_err iop_run_open(struct iop_rcur *c, struct iop_ev_pred *p, uint32_t left,
                          struct iop_run_r *r)
{
	uint8_t code = iop_get_u8(c);
	uint8_t op = iop_get_u8(c);
	uint8_t wf = iop_get_u8(c);
	uint64_t end = p->prev_end + (uint64_t)iop_get_svarint(c);
	uint64_t span = iop_get_varint(c);
	uint64_t count = iop_get_varint(c);
	if (c->err != IOP_OK)
		return c->err;
	if ((code & EVC_OP) != EVC_RUN || (code & EVC_COLL) || (code >> 6) >= IOP_LAYER__COUNT ||
	    op >= IOP_OP__COUNT || (wf & ~RUN_WIRE) || span > end || count < 2 || count > left)
		return IOP_ERR_MALFORMED;
	p->prev_end = end;
	iop_ev_load_ids(c, p, wf);
	struct iop_event *ev = &r->ev;
	memset(ev, 0, sizeof *ev);
	ev->layer = code >> 6;
	ev->op = op;
	ev->thread = p->thread;
	ev->file = p->file;
	ev->site = p->site;
	ev->flags = IOP_EV_RUN;
	r->first_offset = r->stride = 0;
	if (wf & EVW_OFFSET) {
		r->first_offset = iop_ev_predicted_offset(p, ev->file) + (uint64_t)iop_get_svarint(c);
		r->stride = (uint64_t)iop_get_svarint(c);
		ev->flags |= IOP_EV_OFFSET;
	}
	if (wf & EVW_BYTES) {
		ev->bytes = iop_get_varint(c);
		ev->flags |= IOP_EV_BYTES;
	}
	if (wf & EVW_OFFSET)
		iop_ev_learn_offset(p, ev->file,
		                    r->first_offset + (count - 1) * r->stride + ev->bytes);
	if (c->err != IOP_OK)
		return c->err;
	begin_ends(r, end - span, span, (uint32_t)count);
	if (count > IOP_RUN_EXACT_MAX)
		return open_hist(c, r);
	for (uint32_t i = 0; i < count; i++) {
		r->dur[i] = iop_get_varint(c);
		if (c->err == IOP_OK && r->dur[i] > end_of(r, i))
			return IOP_ERR_MALFORMED;
	}
	return c->err;
}

/* The next duration of a long run, in bucket order. */
static uint64_t next_hist_dur(struct iop_run_r *r)
{
	const struct iop_hist *h = &r->hist;
	while (r->b_left == 0 && r->b + 1 < h->hi)
		at_bucket(r, r->b + 1);
	r->b_left--;
	if (r->i == 0)
		return h->min;
	if (r->i + 1 == r->count)
		return h->max;
	uint64_t v = r->b_mid;
	if (r->resid > 0) {
		uint64_t room = r->b_hi - v;
		uint64_t d = r->resid < (__int128)room ? (uint64_t)r->resid : room;
		v += d;
		r->resid -= d;
	} else if (r->resid < 0) {
		uint64_t room = v - r->b_lo;
		uint64_t d = -r->resid < (__int128)room ? (uint64_t)-r->resid : room;
		v -= d;
		r->resid += d;
	}
	return v;
}

void iop_run_next(struct iop_run_r *r, struct iop_event *ev)
{
	*ev = r->ev;
	ev->run_calls = r->i == 0 ? r->count : 0;
	ev->end_ns = r->next_end;
	/* the next one: floor(span * (i + 1) / (count - 1)) past first_end */
	r->next_end += r->step;
	r->acc += r->rem;
	if (r->acc >= r->count - 1) {
		r->acc -= r->count - 1;
		r->next_end++;
	}
	ev->offset = r->ev.flags & IOP_EV_OFFSET ? r->first_offset + r->i * r->stride : 0;
	ev->dur_ns = r->count <= IOP_RUN_EXACT_MAX ? r->dur[r->i] : next_hist_dur(r);
	r->i++;
}

void iop_run_whole_calls(const struct iop_event *first, const struct iop_run_whole *w,
                         struct iop_event *ev)
{
	struct iop_run_r r; /* its bk (~5 KiB) unused: the buckets are w's */
	r.ev = *first;
	r.ev.flags &= (uint8_t)~IOP_EV_WHOLE;
	r.ev.run_calls = 0;
	r.first_offset = w->first_offset;
	r.stride = w->stride;
	begin_ends(&r, w->first_end, w->span, w->count);
	r.hist = w->hist;
	begin_hist(&r);
	for (uint32_t i = 0; i < w->count; i++)
		iop_run_next(&r, &ev[i]);
}

/* Internal to common/: run records (docs/wire-format.md, "Run records"),
 * a thread's consecutive like calls sent as one record. The writer side
 * grows a run call by call (struct iop_run_w) and stores it; the reader
 * side opens a run record and hands its calls out one by one (struct
 * iop_run_r), so every receiver sees calls, as from plain event records. */
#ifndef IOP_RUN_CODEC_H
#define IOP_RUN_CODEC_H

#include <stdbool.h>

#include "frame.h"

_Static_assert(IOP_OP__COUNT <= 31, "op 31 marks a run record on the wire");

/* Fields a run's calls share; anything else (an error, nesting, a
 * collective number) keeps a call out of runs. */
#define IOP_RUN_FLAGS (IOP_EV_OFFSET | IOP_EV_BYTES)

/* Whether ev may be part of a run at all: a transfer (read or write
 * class: a lock's take and release, a stat after a stat, stay calls of
 * their own, each with its own time), no error, no nesting, no collective
 * number, a duration the histogram holds exactly. (Inline, as the two
 * below: the sender asks them for every call.) */
static inline bool iop_run_eligible(const struct iop_event *ev)
{
	return (ev->flags & ~IOP_RUN_FLAGS) == 0 && ev->dur_ns <= IOP_HIST_MAX_NS &&
	       iop_op_class((enum iop_op)ev->op) != IOP_CLASS_META;
}

/* Starts r with ev (eligible); r->count becomes 1. */
void iop_run_start(struct iop_run_w *r, const struct iop_event *ev, uint64_t split_ns);

/* Whether eligible ev continues r (count >= 1). */
static inline bool iop_run_extends(const struct iop_run_w *r, const struct iop_event *ev,
                                   uint64_t split_ns)
{
	const struct iop_event *f = &r->first;
	if (ev->flags != f->flags || ev->op != f->op || ev->layer != f->layer ||
	    ev->file != f->file || ev->site != f->site || ev->thread != f->thread ||
	    ev->bytes != f->bytes || ev->end_ns < r->last_end || ev->end_ns / split_ns != r->window ||
	    ev->dur_ns > f->end_ns || r->count >= IOP_FRAME_MAX_EVENTS)
		return false;
	if (!(ev->flags & IOP_EV_OFFSET))
		return true;
	return r->count == 1 || ev->offset - r->last_offset == r->stride;
}

/* Adds ev, which iop_run_extends accepted; the out-of-line part for the
 * first IOP_RUN_EXACT_MAX + 1 calls. */
void iop_run_add_short(struct iop_run_w *r, const struct iop_event *ev);
static inline void iop_run_add(struct iop_run_w *r, const struct iop_event *ev)
{
	if (r->count <= IOP_RUN_EXACT_MAX) {
		iop_run_add_short(r, ev);
		return;
	}
	unsigned b = iop_hist_bucket(ev->dur_ns);
	r->nonzero += r->bk[b] == 0;
	iop_hist_record_full(&r->hist, ev->dur_ns, b);
	r->count++;
	r->last_end = ev->end_ns;
	r->last_offset = ev->offset;
}

/* The most bytes any run's record takes (every bucket of the histogram
 * used): with this much room left a call never needs iop_run_bound. */
#define IOP_RUN_BOUND_MAX (3 + 3 * IOP_VARINT_MAX + 3 * 4 + 3 * IOP_VARINT_MAX + \
                           4 * IOP_VARINT_MAX + 2 + IOP_HIST_BUCKETS * (2 + 5) + \
                           IOP_RUN_EXACT_MAX * IOP_VARINT_MAX)

/* The most bytes r's record takes with one more call of duration dur_ns
 * (more: 1) or as it is (more: 0). */
size_t iop_run_bound(const struct iop_run_w *r, unsigned more, uint64_t dur_ns);
/* Stores r (count >= 2) at out, which has iop_run_bound(r, 0, 0) bytes of
 * room, and updates the predictor; returns the byte after it. */
uint8_t *iop_run_store(uint8_t *out, struct iop_ev_pred *p, const struct iop_run_w *r);

/* Reads a run record (its code byte next at c) into r, checking every
 * field; left is the calls the section still holds. Errors: the cursor's
 * (TRUNCATED), MALFORMED, INCONSISTENT. */
enum iop_err iop_run_open(struct iop_rcur *c, struct iop_ev_pred *p, uint32_t left,
                          struct iop_run_r *r);
/* The next call of an opened run (r->i < r->count). */
void iop_run_next(struct iop_run_r *r, struct iop_event *ev);

#endif

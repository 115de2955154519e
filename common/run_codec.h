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

/* Whether ev may be part of a run at all: no error, no nesting, no
 * collective number, a duration the histogram holds exactly. */
bool iop_run_eligible(const struct iop_event *ev);

/* Starts r with ev (eligible); r->count becomes 1. */
void iop_run_start(struct iop_run_w *r, const struct iop_event *ev, uint64_t split_ns);
/* Whether eligible ev continues r (count >= 1). */
bool iop_run_extends(const struct iop_run_w *r, const struct iop_event *ev, uint64_t split_ns);
/* Adds ev, which iop_run_extends accepted. */
void iop_run_add(struct iop_run_w *r, const struct iop_event *ev);
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

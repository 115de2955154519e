/* Internal to common/: the event record codec used by frame.c. Events are
 * coded against a predictor (struct iop_ev_pred) so that the usual case, the
 * same thread, file and site as before, a sequential offset, costs nothing. */
#ifndef IOP_EVENT_CODEC_H
#define IOP_EVENT_CODEC_H

#include "frame.h"

/* Wire flags of an encoded event (second byte). */
enum {
	EVW_THREAD = 1u << 0,   /* thread id follows (it changed) */
	EVW_FILE = 1u << 1,     /* file id follows (it changed) */
	EVW_SITE = 1u << 2,     /* site id follows (it changed) */
	EVW_OFFSET = 1u << 3,   /* offset follows, as a delta from the predicted one */
	EVW_BYTES = 1u << 4,    /* bytes follow */
	EVW_ERROR = 1u << 5,    /* errno follows */
	EVW_PARENT = 1u << 6,   /* parent id follows, as a delta from the last id */
	EVW_CHILDREN = 1u << 7, /* own call id (delta) and child ops, bytes, ns follow */
};

/* Bit 5 of the op code byte (layer << 6 | coll | op): a collective call,
 * its number and its communicator's size follow the other fields. */
#define EVC_COLL 0x20u
#define EVC_OP   0x1fu

void iop_ev_pred_init(struct iop_ev_pred *p, uint64_t base_ns);

/* Encodes ev at out, which has IOP_EVENT_MAX_BYTES of room, and updates the
 * predictor; returns the byte after the event. */
uint8_t *iop_ev_store(uint8_t *out, struct iop_ev_pred *p, const struct iop_event *ev);

/* Decodes one event and updates the predictor. Errors: the cursor's
 * (TRUNCATED, MALFORMED) or MALFORMED for values out of range. */
enum iop_err iop_ev_load(struct iop_rcur *c, struct iop_ev_pred *p, struct iop_event *ev);

/* iop_ev_load into ev[0], ev[1]... up to n events or the first error
 * (*err; IOP_OK when none): the events loaded. */
uint32_t iop_ev_load_n(struct iop_rcur *c, struct iop_ev_pred *p, struct iop_event *ev, uint32_t n,
                       enum iop_err *err);

#endif

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
/* The op field that marks a run record instead (version 3, run_codec.h). */
#define EVC_RUN  0x1fu

void iop_ev_pred_init(struct iop_ev_pred *p, uint64_t base_ns);

/* Whether runs are read (version 3) and a run record is next at c. */
static inline bool iop_ev_run_ahead(const struct iop_rcur *c, bool runs)
{
	return runs && iop_rcur_left(c) && (*c->p & EVC_OP) == EVC_RUN;
}

/* The offset predicted for an access to file, and what the predictor
 * learns from one (where it ended). */
static inline uint64_t iop_ev_predicted_offset(const struct iop_ev_pred *p, uint32_t file)
{
	return p->off[file & 15].file == file ? p->off[file & 15].next : 0;
}

static inline void iop_ev_learn_offset(struct iop_ev_pred *p, uint32_t file, uint64_t next)
{
	p->off[file & 15].file = file;
	p->off[file & 15].next = next;
}

/* The thread, file and site fields that wf flags, stored at q (the
 * predictor takes them) or read from c (into the predictor; MALFORMED
 * above IOP_ID_MAX, through the cursor). Events and run records share
 * them. */
static inline uint8_t *iop_ev_store_ids(uint8_t *q, struct iop_ev_pred *p, uint8_t wf,
                                        const struct iop_event *ev)
{
	if (wf & EVW_THREAD)
		q = iop_store_varint(q, p->thread = ev->thread);
	if (wf & EVW_FILE)
		q = iop_store_varint(q, p->file = ev->file);
	if (wf & EVW_SITE)
		q = iop_store_varint(q, p->site = ev->site);
	return q;
}

static inline void iop_ev_load_ids(struct iop_rcur *c, struct iop_ev_pred *p, uint8_t wf)
{
	if (wf & EVW_THREAD)
		p->thread = (uint32_t)iop_get_varint_max(c, IOP_ID_MAX);
	if (wf & EVW_FILE)
		p->file = (uint32_t)iop_get_varint_max(c, IOP_ID_MAX);
	if (wf & EVW_SITE)
		p->site = (uint32_t)iop_get_varint_max(c, IOP_ID_MAX);
}

/* Encodes ev at out, which has IOP_EVENT_MAX_BYTES of room, and updates the
 * predictor; returns the byte after the event. */
uint8_t *iop_ev_store(uint8_t *out, struct iop_ev_pred *p, const struct iop_event *ev);

/* Decodes one event and updates the predictor. Errors: the cursor's
 * (TRUNCATED, MALFORMED) or MALFORMED for values out of range. */
enum iop_err iop_ev_load(struct iop_rcur *c, struct iop_ev_pred *p, struct iop_event *ev);

/* iop_ev_load into ev[0], ev[1]... up to n events, the first error (*err;
 * IOP_OK when none) or, when runs, the first run record (not read): the
 * events loaded. */
uint32_t iop_ev_load_n(struct iop_rcur *c, struct iop_ev_pred *p, struct iop_event *ev, uint32_t n,
                       bool runs, enum iop_err *err);

#endif

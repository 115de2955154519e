/* Records held back in memory, in the order they came, and written later
 * in that order: what a recording writes while its keyframe is encoded
 * beside the loop (record.c), so that the keyframe still follows the DELTA
 * of its tick in the file. */
#ifndef COLL_REC_HOLD_H
#define COLL_REC_HOLD_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "rec.h"

struct rec_hold {
	uint8_t *buf; /* records: type (1), time (8), length (8), payload */
	size_t len, cap;
	uint64_t count;
};

/* NOMEM when it cannot be held (nothing is held then). */
enum iop_err rec_hold_add(struct rec_hold *h, enum rec_type type, uint64_t time_ns,
                          const void *payload, size_t len);
/* Writes every held record to w, in order, and empties h (also on an
 * error: the first one is returned). */
enum iop_err rec_hold_write(struct rec_hold *h, struct rec_writer *w);
void rec_hold_free(struct rec_hold *h);

#endif

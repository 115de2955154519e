/* What a recording's END frame holds, kept the same way by the writer (as it
 * appends) and by the reader (when it scans a file that has no END): the
 * frame counts and time span (the tally) and the time index, with its
 * encoding as the END payload. Internal to the recording library. */
#ifndef REC_INDEX_H
#define REC_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rec.h"

struct rec_tally {
	uint64_t frames[REC_TYPE_COUNT]; /* END is never counted */
	uint64_t first_ns, last_ns;      /* meaningful when some frame was counted */
};

void rec_tally_note(struct rec_tally *t, unsigned type, uint64_t time_ns);
uint64_t rec_tally_total(const struct rec_tally *t);

/* The time index: every pinned frame (META, NAMES, ALERT, KEYFRAME) and every
 * stride-th other frame, in file order. When it would pass max entries,
 * every other unpinned entry goes and the stride doubles; when only pinned
 * entries are left it stops growing and is no longer complete: pinned frames
 * from covered_end on are missing. */
struct rec_index {
	struct rec_index_entry *e;
	size_t n, alloc, max;
	uint32_t stride;
	uint64_t unpinned; /* unpinned frames seen */
	bool complete;
	uint64_t covered_end; /* with !complete: offset of the first frame left out */
};

void rec_index_init(struct rec_index *x, uint32_t stride, size_t max);
void rec_index_free(struct rec_index *x);
void rec_index_note(struct rec_index *x, unsigned type, uint64_t time_ns, uint64_t offset,
                    uint64_t seq);

/* The END payload: its length for the index, its encoding, and decoding it
 * (entries checked: known types, offsets increasing and before end_offset,
 * at most max of them). Decoding replaces x's entries. */
size_t rec_end_len(const struct rec_index *x);
void rec_end_encode(uint8_t *out, size_t len, const struct rec_tally *t, const struct rec_index *x);
enum iop_err rec_end_decode(const uint8_t *p, size_t len, uint64_t end_offset, struct rec_tally *t,
                            struct rec_index *x);

#endif

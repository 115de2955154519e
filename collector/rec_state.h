/* The window state at a time of a recording, the fast way: from the last
 * KEYFRAME at or before the time (record.h writes one every N seconds),
 * then the DELTAs after it, instead of every DELTA from the start. The
 * result is the state the root had when the last tick ending at or before
 * that time closed (rec_state_test checks it against the slow way). */
#ifndef COLL_REC_STATE_H
#define COLL_REC_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include "rec.h"
#include "state.h"

struct coll_rec_state_info {
	bool from_keyframe;      /* else from the first frame */
	int64_t keyframe_tick;   /* the keyframe's last tick */
	uint64_t keyframes_passed; /* keyframes that did not check out, passed over */
	uint64_t deltas;         /* DELTA frames applied after it */
	uint64_t bad_deltas;     /* DELTA frames that did not decode, skipped */
};

/* Builds *out (uninitialised before the call; free it with
 * coll_state_free() whatever is returned) from the DELTA frames whose time
 * (their tick's end) is at or before t_ns (UINT64_MAX: all). Moves r.
 * Errors: the reader's (IO, NOMEM). A damaged keyframe is passed over for
 * the one before it (or the start); a DELTA that does not decode is
 * skipped and counted, as `iopulse summary` does. info may be NULL. */
enum iop_err coll_rec_state_at(struct rec_reader *r, uint64_t t_ns, struct coll_state *out,
                               struct coll_rec_state_info *info);

/* The delta version (delta.h) of the recording's DELTA payloads, from its
 * META ("delta_version"); COLL_DELTA_VERSION when META does not say. */
unsigned coll_rec_delta_version(struct rec_reader *r);

/* The same, the slow way: every DELTA from the start (for checks). */
enum iop_err coll_rec_state_replay(struct rec_reader *r, uint64_t t_ns, struct coll_state *out,
                                   struct coll_rec_state_info *info);

#endif

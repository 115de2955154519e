/* The keyframe: the root's whole window state (state.h) as bytes, so that a
 * reader can start from it instead of from the first tick. A recording
 * writes one every N seconds (KEYFRAME frames, record.h) and a viewer
 * fetches one when it joins (viewsrv.h); both then apply the tick deltas
 * that follow it.
 *
 * The encoding holds everything the state holds: the tick length and
 * history configuration, first and last tick, ticks applied, monitor
 * counts, per-layer exclusive time, the name dictionary in its order, the
 * hosts, the ranks, each process's latest counters (the exact totals) in
 * their order, and every history tier (its ticks or bins, oldest first).
 * So decode(encode(S)) with the same deltas applied after it ends equal to
 * S with those deltas: same rows in the same order, same encoding byte for
 * byte. The layout is in docs/collector.md ("Keyframe").
 *
 * The decoder takes untrusted bytes (a file, a peer): every count is
 * checked against its cap and against the bytes left before anything is
 * allocated for it; it never reads out of bounds and leaves an empty state
 * on failure. */
#ifndef COLL_KEYFRAME_H
#define COLL_KEYFRAME_H

#include <stddef.h>
#include <stdint.h>

#include "codec.h"
#include "err.h"
#include "state.h"

#define COLL_KEYFRAME_MAGIC   0x4b504f49u /* "IOPK" */
#define COLL_KEYFRAME_VERSION 8 /* 2: the history's budget; 3: no totals (the
                                  * counters' sums); 4: ticks and counters of
                                  * delta version 3 (access patterns); 5: of
                                  * delta version 4, ranks' and layers' waits
                                  * (collective calls); 6: of delta version 5,
                                  * the last tick's ranks' distribution after
                                  * the tiers; 7: of delta version 6 (rows by
                                  * column), the nodes' latest samples last;
                                  * 8: then the nodes' figures tick by tick
                                  * (node/series.h); 1 to 7 stay readable */

/* Limits the decoder enforces besides the state's own (names, counters,
 * rows per tick). */
#define COLL_KEYFRAME_MAX_TIER  (1u << 20) /* ticks or bins a tier holds */
#define COLL_KEYFRAME_MAX_HOSTS (1u << 20)
#define COLL_KEYFRAME_MAX_RANK  (1u << 24) /* as state.c: higher ranks are not kept */

/* Encodes s at the cursor (FULL when out of room). */
void coll_state_encode_keyframe_cur(const struct coll_state *s, struct iop_wcur *c);
/* The same as a writer of keyframe version version (5 up to
 * COLL_KEYFRAME_VERSION) wrote it, for tests of the readers of old
 * recordings. */
void coll_state_encode_keyframe_v(const struct coll_state *s, struct iop_wcur *c, unsigned version);

/* Encodes s into a buffer it grows (*buf, *cap; free() it, at least
 * 64 KiB), not past max bytes (0: no limit), else OVERSIZED; NOMEM.
 * *len = bytes written. */
enum iop_err coll_state_encode_keyframe(const struct coll_state *s, size_t max, uint8_t **buf,
                                        size_t *cap, size_t *len);

/* Builds *s (uninitialised or freed before the call) from the keyframe at
 * the cursor (the _cur form leaves the cursor after it; the other wants
 * exactly len bytes). On success the caller frees *s with
 * coll_state_free(); on failure *s is an empty state (free it too) and the
 * error says why: BAD_MAGIC, BAD_VERSION, TRUNCATED, OVERSIZED, MALFORMED,
 * INCONSISTENT (bytes left over, a count that does not match), NOMEM. */
enum iop_err coll_state_decode_keyframe_cur(struct coll_state *s, struct iop_rcur *c);
enum iop_err coll_state_decode_keyframe(struct coll_state *s, const uint8_t *buf, size_t len);

#endif

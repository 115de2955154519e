/* The root collector's engine: merges the tick deltas of its children (its
 * own leaf in a single-node job), closes each tick after a grace period,
 * applies it to the window state (state.h) and hands it to the caller
 * (alerts, output, recording, viewers).
 *
 * A delta for a tick the root has already closed is merged into the oldest
 * open tick and its events counted as late, as the leaf does: nothing is
 * lost, and the recorded stream stays the single truth replay reads. */
#ifndef COLL_ROOT_H
#define COLL_ROOT_H

#include <stdbool.h>
#include <stdint.h>

#include "delta.h"
#include "state.h"

struct coll_root_cfg {
	uint64_t tick_ns;
	uint64_t grace_ns; /* after a tick ends; longer than the leaves' grace */
	struct coll_history_cfg history;
	bool no_state; /* a mid: merges and closes ticks, keeps no window state */
	uint32_t max_files; /* FILE rows a closed tick keeps (the rest fold into
	                       "other", as in a leaf); 0: no limit. Default 2048 */
};
void coll_root_cfg_default(struct coll_root_cfg *cfg, uint64_t tick_ns);

struct coll_root;
/* Called with each tick as it closes, after it is applied to the state. */
typedef void coll_tick_fn(void *arg, const struct coll_delta *closed, const struct coll_state *s);

enum iop_err coll_root_new(const struct coll_root_cfg *cfg, uint64_t now_ns,
                           struct coll_root **out);
void coll_root_free(struct coll_root *r);

/* Merges a delta (it is not kept); its tick closes on the grace. */
enum iop_err coll_root_delta(struct coll_root *r, const struct coll_delta *d);
/* Merges the delta of a child that sends one for every tick, in order (a
 * leaf or a mid), named by its sender id; it may take d's histograms
 * instead of copying them (coll_delta_merge_take): d is to be reset or
 * freed after, as the downlink's and the leaf's deltas are. Once every
 * child that sent the tick before a tick has sent it (and one has), that
 * tick closes at once instead of at the end of its grace. A child that
 * did not send the tick before (gone, stalled, just started) is not
 * waited for. */
enum iop_err coll_root_delta_from(struct coll_root *r, uint64_t sender, struct coll_delta *d);
/* Closes the ticks whose end + grace <= now_ns, or whose every child has
 * sent them (coll_root_delta_from), every open one when flush; oldest
 * first. */
void coll_root_advance(struct coll_root *r, uint64_t now_ns, bool flush, coll_tick_fn *fn,
                       void *arg);
uint64_t coll_root_next_close_ns(const struct coll_root *r);

/* How much longer than its own default a root waits when its children
 * reach it over the network (their deltas leave them a leaf's grace after
 * the tick's end, then cross a link: under load that takes more than the
 * 150 ms a root on the leaf's own node can spare). */
#define COLL_ROOT_REMOTE_SLACK_NS 400000000ull

/* Children on other nodes report to this root: from now on it waits
 * COLL_ROOT_REMOTE_SLACK_NS longer before closing a tick (once; later
 * calls do nothing). `iopulse run` calls it when a remote leaf's first
 * delta arrives, so a single-node job keeps the shorter wait. */
void coll_root_remote_children(struct coll_root *r);
const struct coll_state *coll_root_state(const struct coll_root *r);

#endif

/* The leaf's intake: frames from the ranks' shims in, tick deltas out.
 *
 * Every frame is checked (header, MAC, job, sequence) before anything in it
 * is used; a rejected frame is counted (monitor.rejected_frames) and changes
 * nothing else. Each process (node id, pid) has its own small state: the
 * ids of its names, the last cumulative counters (their increments go up as
 * exact totals), the access pattern of its data calls on each file
 * (consecutive, sequential, strided, random: pattern.h), and the calls it
 * has in flight.
 *
 * Events are placed into ticks by their own end time. Ticks stay open for a
 * grace period after they end (frames arrive every 10 ms, so a short one
 * suffices); an event for a tick already closed is put into the oldest open
 * tick and counted as late, so no byte leaves the per-tick series.
 * coll_leaf_advance() closes the ticks whose grace has passed and hands
 * each one's delta to a callback. */
#ifndef COLL_LEAF_H
#define COLL_LEAF_H

#include <stddef.h>
#include <stdint.h>

#include "auth.h"
#include "delta.h"

struct coll_leaf_cfg {
	uint64_t tick_ns;  /* tick length (100 ms to 60 s) */
	uint64_t grace_ns; /* a tick closes this long after it ends */
	uint64_t gone_ns;  /* a process silent this long without a FINAL frame is gone */
	uint64_t job_id;
	struct iop_key key;
	uint32_t max_files; /* file rows per tick; the least active fold into "other" */
	bool no_fs;         /* do not name files' file systems (fsmap.h) */
	const char *mountinfo; /* the mount table (NULL: /proc/self/mountinfo), read
	                          when the leaf starts */
	const char *proc;      /* where the node's figures are read (NULL: /proc;
	                          node/probe.h); no_fs: none are */
};

/* A leaf's files a tick: its 511 most active and "other". The root keeps
 * 2048 across the tree (coll_root_cfg.max_files), ranked from what the
 * leaves kept. Each leaf keeping 2048 made 64 leaves of per-rank files
 * send the root 258 000 file rows a tick to fold back to 2048: half of
 * its CPU (docs/collector.md, "Root cost"). As before, a file folded on
 * some nodes and kept on others shows at the root with the kept nodes'
 * part (the rest is in "other"); exact totals do not depend on it: the
 * counters keep every file's. */
#define COLL_LEAF_MAX_FILES 512

/* Defaults: 1 s ticks, 250 ms grace, gone after 5 s, COLL_LEAF_MAX_FILES. */
void coll_leaf_cfg_default(struct coll_leaf_cfg *cfg);

struct coll_leaf;
typedef void coll_delta_fn(void *arg, struct coll_delta *delta);

enum iop_err coll_leaf_new(const struct coll_leaf_cfg *cfg, uint64_t now_ns,
                           struct coll_leaf **out);
void coll_leaf_free(struct coll_leaf *leaf);

/* Takes one frame as received at now_ns (CLOCK_REALTIME). Returns IOP_OK,
 * IOP_ERR_DUPLICATE for a copy of the FINAL frame its process ended with
 * (a spooled one, common/spool.h: nothing taken, nothing counted), or why
 * the frame was rejected (counted). */
enum iop_err coll_leaf_frame(struct coll_leaf *leaf, const uint8_t *buf, size_t len,
                             uint64_t now_ns);

/* True when the frame in buf (its header only is read, unchecked) is the
 * next its process sends: every frame before it has been taken, or it is
 * the first of a process not seen yet. A last frame that comes over its
 * own socket need not wait for earlier ones then (coll_intake_final). */
bool coll_leaf_frame_is_next(const struct coll_leaf *leaf, const uint8_t *buf, size_t len);

/* coll_leaf_frame for a frame from the spool (common/spool.h), of the
 * process image that began at image_ns (its file's header): a frame the
 * leaf has is IOP_ERR_DUPLICATE (nothing taken, nothing counted); one of a
 * later image than the leaf's starts it; one of an earlier image is
 * refused (IOP_ERR_STATE). */
enum iop_err coll_leaf_frame_spooled(struct coll_leaf *leaf, const uint8_t *buf, size_t len,
                                     uint64_t image_ns, uint64_t now_ns);
/* Whether a spooled file whose first frame is buf (header only, unchecked)
 * can be taken now: its process's frames before it have been (or it is a
 * copy of them, or of an image that is over). */
bool coll_leaf_spool_ready(const struct coll_leaf *leaf, const uint8_t *buf, size_t len,
                           uint64_t image_ns);

/* True when the frame in buf (its header only is read, unchecked) starts
 * a process's next program image (sequence 0) while the leaf still takes
 * the process for running: its FINAL frame has not come (it may be in the
 * spool). */
bool coll_leaf_frame_restarts(const struct coll_leaf *leaf, const uint8_t *buf, size_t len);

/* Closes every tick whose end + grace <= now_ns (all of them when flush),
 * oldest first, calling fn with each delta (the leaf resets it after fn
 * returns: fn may take its histograms, coll_root_delta_from). Also marks
 * silent processes gone, and with flush (the end) every process that did
 * not end. */
void coll_leaf_advance(struct coll_leaf *leaf, uint64_t now_ns, bool flush, coll_delta_fn *fn,
                       void *arg);

/* Processes seen and how many of them ended (FINAL frame) or are gone. */
struct coll_leaf_procs {
	uint32_t seen, ended, gone;
};
void coll_leaf_procs(const struct coll_leaf *leaf, struct coll_leaf_procs *out);

/* When the next tick will close (for a poll timeout). */
uint64_t coll_leaf_next_close_ns(const struct coll_leaf *leaf);

#endif

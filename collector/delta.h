/* A tick delta: what a collector sends its parent when a tick closes, and
 * what the root records (DELTA frames). It holds the tick's rows and
 * everything else the parent needs to stay exact:
 *   names     hash -> text, each sent once per link
 *   counters  increments of the ranks' cumulative counters seen in the
 *             tick, per (rank, file, layer, class): totals stay exact even
 *             when events are dropped
 *   procs     processes that appeared, ended (FINAL frame) or went silent
 *   monitor   the monitor's own counts for the tick
 *   inst      the ranks' parts of collective calls ended in the tick, for
 *             the root to match (collective.h)
 * Deltas of the same tick merge (mids, root); docs/collector.md gives the
 * encoding. */
#ifndef COLL_DELTA_H
#define COLL_DELTA_H

#include <stdbool.h>
#include <stdint.h>

#include "auth.h"
#include "collective.h"
#include "cols.h"
#include "counter.h"
#include "names.h"
#include "nodes.h"
#include "pattern.h"
#include "rank_dist.h"
#include "tick.h"

/* A set of counters, one per (process, file, rank, layer, class). */
struct coll_ctrset {
	struct coll_counter *v;
	uint32_t n, cap;
	uint32_t *slot; /* index over v: position + 1, 0 = empty */
	uint32_t n_slots;
};
void coll_ctrset_free(struct coll_ctrset *s);
void coll_ctrset_clear(struct coll_ctrset *s);
/* Adds c, or raises the counter already there to the larger of each
 * value. *grew (may be NULL) = how much each value went up. OVERSIZED past
 * max counters, NOMEM; the set is unchanged then. */
enum iop_err coll_ctrset_add(struct coll_ctrset *s, const struct coll_counter *c, uint32_t max,
                             struct coll_counter *grew);
/* Adds the n counters of v in turn, as coll_ctrset_add does, fetching the
 * index slots and counters of those a few ahead while it works: the root
 * adds hundreds of thousands a tick to a set of a million, and each add
 * waited on memory twice. Goes on past a counter it cannot add and
 * returns the first error. */
enum iop_err coll_ctrset_add_all(struct coll_ctrset *s, const struct coll_counter *v, uint32_t n,
                                 uint32_t max);
/* The same, adding to *refused (may be NULL) how many it could not add. */
enum iop_err coll_ctrset_add_all_n(struct coll_ctrset *s, const struct coll_counter *v, uint32_t n,
                                   uint32_t max, uint64_t *refused);

enum coll_proc_state {
	COLL_PROC_JOINED = 1, /* first frame of a process */
	COLL_PROC_ENDED = 2,  /* its FINAL frame arrived */
	COLL_PROC_GONE = 3,   /* silent too long without a FINAL frame: died */
};

struct coll_proc {
	uint64_t t_ns;
	uint32_t rank, node, pid;
	uint8_t state;
};

struct coll_monitor {
	uint64_t frames;          /* frames accepted */
	uint64_t events;          /* events received */
	uint64_t produced;        /* events the shims produced (their cumulative stats) */
	uint64_t dropped;         /* of those, dropped in the shims */
	uint64_t late;            /* events that arrived after their tick closed */
	uint64_t rejected_frames; /* malformed, foreign, forged or replayed frames */
	uint64_t shim_ns;         /* time the shims spent in themselves */
};

/* Of the events the shims produced, those neither dropped in a shim nor
 * received: lost on the way (frames a collector kept off the CPU could not
 * take before their processes ended: their totals come whole with the
 * FINAL frames, their calls do not). Known once every process has ended. */
static inline uint64_t coll_monitor_lost(const struct coll_monitor *m)
{
	return m->produced > m->dropped + m->events ? m->produced - m->dropped - m->events : 0;
}

struct coll_delta {
	struct coll_tick tick;
	struct coll_name *names; /* texts owned by the delta */
	struct coll_ctrset ctr; /* the counters that grew */
	struct coll_proc *procs;
	uint32_t n_names, n_procs;
	uint32_t cap_names, cap_procs;
	struct coll_monitor mon;
	struct coll_instset inst;
	/* the tick's ranks' distribution, computed before its RANK rows were
	 * folded (a recording above its rank cap, record.h); ranks 0: none.
	 * Merging keeps dst's, else takes src's */
	struct coll_rank_dist dist;
	/* the nodes' samples of the tick (node/nodes.h; delta version 6 on):
	 * a leaf's of its own node; merged, one a node, the later wins */
	struct coll_nodeset nodes;
};

void coll_delta_init(struct coll_delta *d, int64_t t, uint64_t tick_ns);
void coll_delta_free(struct coll_delta *d);
/* Empties it for tick t, keeping its memory. */
void coll_delta_reset(struct coll_delta *d, int64_t t);
/* When both are empty, gives from's memory (rows, histograms, names,
 * counters) to to, and to's to from, each keeping its tick number; false
 * (nothing done) otherwise. A ring of pending ticks uses it to keep the
 * memory of a closed tick for the next one instead of in a slot that
 * waits a whole turn of the ring. */
bool coll_delta_pass_memory(struct coll_delta *from, struct coll_delta *to);

enum iop_err coll_delta_add_name(struct coll_delta *d, uint64_t hash, uint8_t kind,
                                 const char *text, uint32_t len);
/* Adds a counter, or raises the one of the same process and key. */
enum iop_err coll_delta_add_counter(struct coll_delta *d, const struct coll_counter *c);
/* coll_delta_add_counter for each of v[0..n), in order
 * (coll_ctrset_add_all: a leaf adds a frame's counters to a tick's tens
 * of thousands); one that fails is left out, the others added. The
 * first error. */
enum iop_err coll_delta_add_counters(struct coll_delta *d, const struct coll_counter *v, uint32_t n);
enum iop_err coll_delta_add_proc(struct coll_delta *d, const struct coll_proc *p);
void coll_monitor_add(struct coll_monitor *dst, const struct coll_monitor *src);
/* dst += src: rows, names, counters, processes and monitor counts. The
 * _take form may take src's histograms (coll_tick_merge_take): src is to
 * be reset or freed after. */
enum iop_err coll_delta_merge(struct coll_delta *dst, const struct coll_delta *src);
enum iop_err coll_delta_merge_take(struct coll_delta *dst, struct coll_delta *src);

/* The message between collectors: header (magic "IOPD", version, job id,
 * sender id, sequence), the delta, and a MAC with the job key. encode
 * writes into a buffer it grows (*buf, *cap; free() it). */
#define COLL_DELTA_MAGIC   0x44504f49u /* "IOPD" */
#define COLL_DELTA_VERSION 6 /* 2: counters are per process and absolute; 3:
                                * access patterns in cells and counters; 4:
                                * collective calls (cells' waits, instances);
                                * 5: the ranks' distribution (rank_dist.h);
                                * 6: the tick's rows by column (tick_cols.h) */
#define COLL_DELTA_VERSION_MIN 2 /* the oldest a decoder reads (without patterns) */
_Static_assert(COLL_TICK_CELL_VERSION == COLL_DELTA_VERSION, "tick.c encodes this version");
_Static_assert(COLL_COUNTER_VERSION == COLL_DELTA_VERSION, "ctr_cols.c decodes this version");
/* Flags (the u16 after the version): the body is zstd-compressed, after
 * a varint of its length. An encoder compresses bodies of COLL_DELTA_Z_MIN
 * bytes or more when that shortens them (a 64-rank leaf's tick: 2.7x), so
 * the 64 deltas a root holds at once at each tick's end take a third of
 * the memory. A decoder, after the MAC, refuses a length above
 * COLL_DELTA_Z_RATIO times the compressed bytes (the encoder sends those
 * as they are) or COLL_DELTA_MAX_BODY, a frame that expands to another
 * length, and any other flag. */
#define COLL_DELTA_F_ZSTD   1u
#define COLL_DELTA_Z_MIN    2048
#define COLL_DELTA_Z_RATIO  256
#define COLL_DELTA_Z_LEVEL  1
#define COLL_DELTA_MAX_BODY ((size_t)1 << 31)
struct coll_delta_hdr {
	uint64_t job_id;
	uint64_t sender; /* the sending collector's id */
	uint64_t seq;    /* its message sequence */
};
enum iop_err coll_delta_encode(const struct coll_delta *d, const struct coll_delta_hdr *h,
                               const struct iop_key *key, uint8_t **buf, size_t *cap,
                               size_t *len);
/* Checks magic, version, job and MAC, then decodes into *d (reset first).
 * Errors as the frame decoder's; *d is empty on failure. */
enum iop_err coll_delta_decode(struct coll_delta *d, struct coll_delta_hdr *h, const uint8_t *buf,
                               size_t len, const struct iop_key *key, uint64_t job_id);

/* The body alone (no header, no MAC): the recording's DELTA payload. The
 * _buf form writes it into a buffer it grows (*buf, *cap; free() it), up
 * to max bytes (else OVERSIZED). */
void coll_delta_encode_body(const struct coll_delta *d, struct iop_wcur *c);
/* The body as a writer of delta version version (4 up to
 * COLL_DELTA_VERSION) wrote it, for tests of the readers of old
 * recordings: what that version lacks is left out. */
void coll_delta_encode_body_v(const struct coll_delta *d, struct iop_wcur *c, unsigned version);
enum iop_err coll_delta_encode_body_buf(const struct coll_delta *d, size_t max, uint8_t **buf,
                                        size_t *cap, size_t *len);
enum iop_err coll_delta_decode_body(struct coll_delta *d, struct iop_rcur *c);
/* The body as a writer of delta version version (COLL_DELTA_VERSION_MIN up
 * to COLL_DELTA_VERSION) wrote it: a recording's META says which. Fields a
 * version lacks are 0. */
enum iop_err coll_delta_decode_body_v(struct coll_delta *d, struct iop_rcur *c, unsigned version);

/* The monitor counts as the body encodes them (7 varints); decode leaves
 * its errors in the cursor. */
void coll_monitor_encode(const struct coll_monitor *m, struct iop_wcur *c);
void coll_monitor_decode(struct coll_monitor *m, struct iop_rcur *c);

/* One name as the body encodes it. Decode points n->text into the
 * cursor's bytes (not NUL-terminated: n->len) and returns the cursor's
 * error or MALFORMED (an unknown kind, a NUL in the text). */
void coll_name_encode(const struct coll_name *n, struct iop_wcur *c);
enum iop_err coll_name_decode(struct coll_name *n, struct iop_rcur *c);

/* Runs fill on a cursor over *buf (less tail bytes), doubling the buffer
 * (at least 64 KiB) until it fits or would pass max (OVERSIZED); NOMEM.
 * *len = bytes filled. For encoders that write a whole record at once. */
enum iop_err coll_encode_grown(uint8_t **buf, size_t *cap, size_t max, size_t tail,
                               void (*fill)(const void *arg, struct iop_wcur *c), const void *arg,
                               size_t *len);

#endif

/* A leaf's state of one monitored process (internal to the leaf): the ids
 * of its names, its last cumulative counters, the access pattern of its
 * data calls on each file (pattern.h), and its calls in flight; and the
 * table of a leaf's processes. */
#ifndef COLL_PROC_H
#define COLL_PROC_H

#include <stdbool.h>
#include <stdint.h>

#include "delta.h"
#include "frame.h"
#include "pattern.h"

#define PROC_MAX_IDS      (1u << 20) /* name ids a process may use */
#define PROC_MAX_COUNTERS (1u << 20)
#define PROC_MAX_INFLIGHT 64

struct proc_counter {
	uint64_t key; /* (file id << 8 | layer << 4 | class) + 1; 0 = empty slot */
	uint64_t ops, bytes, time_ns, errors;
	struct coll_pat pat; /* its data calls' pattern, from the events */
	bool pat_dirty;      /* pat.n changed since the counter was last sent */
};

/* A leaf's cache of where a row is in an open tick. Ticks t are filled
 * in place until they close, rows only appended, so (t, key) -> row stays
 * true while the tick is open; tag 0 (kind 0) is an empty entry. */
struct proc_rowc {
	int64_t t;
	uint64_t id;
	uint32_t rank, row; /* row: index in the tick */
	uint32_t tag;       /* kind | layer << 8 | class << 16 (see leaf.c) */
};

#define PROC_ROWC 64 /* FILE and SITE row cache entries, direct-mapped */

struct proc {
	uint32_t node, pid, rank;
	uint32_t image;      /* program images seen before this one (exec) */
	uint64_t seq;        /* last accepted frame */
	uint64_t base_ns;    /* its base_ns */
	uint64_t image_first_ns; /* base_ns of the first frame taken of this image */
	uint64_t prev_last_ns;   /* base_ns of the last frame of the image before */
	/* Once ended: frames from this sequence number up to the FINAL one's
	 * may still come (the FINAL frame travels on its own socket and may
	 * overtake the last frames sent before it). */
	uint64_t overtaken_from;
	bool ended, gone;
	uint8_t final_mac[IOP_MAC_BYTES]; /* once ended: its FINAL frame's MAC */
	uint64_t seen_ns;    /* arrival of its last frame */
	struct iop_stats stats;
	uint64_t *id_hash;   /* [id]: the name's hash, 0 = unknown */
	uint32_t n_ids;      /* its allocated length */
	struct proc_counter *ctr;
	uint32_t n_ctr, ctr_slots;
	uint64_t *dirty;     /* keys of the counters whose pat_dirty was set */
	uint32_t n_dirty, cap_dirty;
	uint64_t busy_until[4][4]; /* [layer][class]: end of the busy time counted */
	struct proc_rowc row[4][4];        /* [layer][class]: its RANK rows */
	struct proc_rowc rowc[PROC_ROWC]; /* FILE and SITE rows of its names */
	struct iop_inflight inflight[PROC_MAX_INFLIGHT];
	uint32_t n_inflight;
};

/* A leaf's processes, found by (node, pid). */
struct proc_table {
	struct proc *v;
	uint32_t n, cap;
	uint32_t *slot; /* (node, pid) index: position in v + 1 */
	uint32_t n_slots;
};
/* The process (node, pid), added when new (with rank, and seq UINT64_MAX:
 * no frame accepted yet). OVERSIZED past 4 M processes, NOMEM. */
enum iop_err proc_table_find(struct proc_table *t, uint32_t node, uint32_t pid, uint32_t rank,
                             struct proc **out);
/* The process (node, pid), or NULL when the table has none. */
const struct proc *proc_table_get(const struct proc_table *t, uint32_t node, uint32_t pid);
void proc_table_free(struct proc_table *t);

void proc_init(struct proc *p, uint32_t node, uint32_t pid, uint32_t rank);
void proc_free(struct proc *p);
/* Forgets names, counters and patterns: a new program image (exec). */
void proc_restart(struct proc *p);

/* The hash behind a name id, 0 when unknown. */
static inline uint64_t proc_hash(const struct proc *p, uint32_t id)
{
	return id < p->n_ids ? p->id_hash[id] : 0;
}
enum iop_err proc_set_name(struct proc *p, uint32_t id, uint64_t hash);

/* A counter's key in p's set: +1 keeps file 0, layer 0, class 0 apart
 * from an empty slot. */
static inline uint64_t proc_counter_key(const struct iop_counter *c)
{
	return ((uint64_t)c->file << 8 | (uint64_t)c->layer << 4 | c->cls) + 1;
}

/* The slot where the probe for key starts. */
static inline uint32_t proc_counter_home(const struct proc *p, uint64_t key)
{
	return (uint32_t)((key * UINT64_C(0x9e3779b97f4a7c15)) >> 40) & (p->ctr_slots - 1);
}

/* Starts fetching c's slot: a frame's counters are looked up in a set of
 * a process seen 64 frames ago, each a cache miss when waited for one
 * after the other. always_inline: GCC drops a call whose only effect is
 * a prefetch (docs/collector.md). */
__attribute__((always_inline)) static inline void proc_counter_prefetch(const struct proc *p,
                                                                        const struct iop_counter *c)
{
	if (p->ctr_slots)
		__builtin_prefetch(&p->ctr[proc_counter_home(p, proc_counter_key(c))]);
}

/* Stores a cumulative counter: *latest = the process's values now (each
 * the largest seen: a count going backwards is not trusted), *changed =
 * whether they grew; pat = its pattern counts (pattern.h), taken as sent
 * when changed. */
enum iop_err proc_counter(struct proc *p, const struct iop_counter *c, struct iop_counter *latest,
                          bool *changed, uint64_t pat[COLL_PAT__COUNT]);

/* The pattern of a data call (layer, class) at offset moving bytes on name
 * id file (a named file), counted in the process's counter of (file, layer,
 * class), made when absent (the shim's counter may come later). A counter
 * that cannot be made (NOMEM, OVERSIZED): COLL_PAT_RANDOM, uncounted. */
enum coll_pattern proc_pattern(struct proc *p, uint32_t file, unsigned layer, unsigned cls,
                               uint64_t offset, uint64_t bytes);
/* proc_pattern in two steps, for a caller that keeps the counter across
 * calls of one (file, layer, class): the counter (NULL when it cannot be
 * made), valid while p->ctr and p->ctr_slots stay as they are; then the
 * pattern of a call counted in it. */
struct proc_counter *proc_pattern_counter(struct proc *p, uint32_t file, unsigned layer,
                                          unsigned cls);
/* s marked as changed since sent (proc_take_pattern); false when it
 * cannot be (no memory). */
bool proc_pattern_mark(struct proc *p, struct proc_counter *s);
static inline enum coll_pattern proc_pattern_at(struct proc *p, struct proc_counter *s,
                                                uint64_t offset, uint64_t bytes)
{
	/* inline: a call of its own was ~4 % of the leaf's instructions */
	if (!s->pat_dirty && !proc_pattern_mark(p, s))
		return COLL_PAT_RANDOM;
	return coll_pat_next(&s->pat, offset, bytes);
}
/* proc_pattern_at for the n calls of a run (coll_pat_run): each
 * pattern's calls added to got[]; false, nothing counted, when the
 * counter cannot be marked for sending (no memory). */
bool proc_pattern_run(struct proc *p, struct proc_counter *s, uint64_t offset, uint64_t stride,
                      uint64_t bytes, uint64_t n, uint64_t got[COLL_PAT__COUNT]);

/* The next counter whose pattern counts changed since it was last sent,
 * as the leaf sends counters (absolute, with its pattern counts); false
 * when none is left. A leaf takes them after a frame's events. */
bool proc_take_pattern(struct proc *p, struct coll_counter *out);

#endif

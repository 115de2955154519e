/* One tick's aggregates: the unit every part of the collector tree passes
 * around. A leaf fills ticks from events, sends each closed tick up as a
 * delta; mids and the root merge deltas of the same tick; the root keeps
 * closed ticks as its history, runs the alerts on them and writes them to
 * the recording; replay reads them back into the same structure.
 *
 * A tick is a set of rows, each a key and a cell. The key says what the row
 * aggregates:
 *   RANK   one rank's calls of one layer and op class   (rank, layer, cls)
 *   FILE   one file's (or dataset's) calls, all ranks    (id = path hash, layer, cls)
 *   LAYER  every call of one layer and op class          (layer, cls)
 *   SITE   one call site's calls                         (id = site hash, layer, cls)
 * Rows are kept in insertion order in arrays (so iteration is cheap and
 * stable) with an open-addressing index over them.
 *
 * Ticks are numbered from the Unix epoch: tick t covers the times
 * [t * tick_ns, (t + 1) * tick_ns), so every collector agrees on numbering
 * without talking to the others. */
#ifndef COLL_TICK_H
#define COLL_TICK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codec.h"
#include "err.h"
#include "events.h"
#include "hist.h"

enum coll_row_kind {
	COLL_ROW_RANK = 1,
	COLL_ROW_FILE = 2,
	COLL_ROW_LAYER = 3,
	COLL_ROW_SITE = 4,
};

#define COLL_RANK_NONE UINT32_MAX /* rank field of rows that are not per rank */
#define COLL_ID_OTHER  UINT64_MAX /* id of the row the least active files fold into */

/* Transfer sizes the small-request rules look at: [0, 4 KiB), [4 KiB,
 * 64 KiB), [64 KiB, 1 MiB), 1 MiB and more. */
enum { COLL_SIZE_CLASSES = 4 };

struct coll_key {
	uint64_t id; /* file or site hash; 0 for RANK and LAYER rows */
	uint32_t rank;
	uint8_t kind; /* enum coll_row_kind */
	uint8_t layer;
	uint8_t cls;
};

struct coll_cell {
	uint64_t ops;         /* calls that ended in the tick */
	uint64_t bytes;       /* bytes they moved */
	uint64_t errors;      /* of those calls, failed ones */
	uint64_t time_ns;     /* inclusive time: sum of durations */
	uint64_t excl_ns;     /* exclusive time: minus the time of calls they issued */
	uint64_t busy_ns;     /* time of the tick during which a call was in progress */
	uint64_t child_ops;   /* calls issued below these calls (MPI-IO fragmentation) */
	uint64_t child_bytes; /* bytes those moved */
	uint64_t off_ops;     /* transfers with an offset; of those (pattern.h): */
	uint64_t consec_ops;  /* consecutive: where the previous one on the file ended */
	uint64_t fwd_ops;     /* sequential: forward, not at a constant stride */
	uint64_t stride_ops;  /* strided: forward by a constant stride (random: the rest) */
	uint64_t size_ops[COLL_SIZE_CLASSES];
	uint64_t coll_ops;    /* collective calls (read_coll, write_coll) */
	uint64_t lock_ns;     /* of time_ns, that of lock calls (waits for fcntl and flock locks) */
	/* collective calls matched across ranks (collective.h): */
	uint64_t wait_ns;     /* of excl_ns, the time spent waiting for the last rank to arrive */
	uint64_t match_ops;   /* calls matched (each rank's part of an instance) */
	uint64_t last_ops;    /* of those, the ones where this rank (RANK rows) arrived last;
	                         FILE and LAYER rows: instances matched */
	uint64_t late_ns;     /* for those, the other ranks' mean wait: how late it came */
	uint64_t inflight;    /* calls in progress when the tick closed */
	uint64_t oldest_ns;   /* start time of the oldest of those; 0 when none */
	struct iop_hist hist; /* latencies of the calls that ended in the tick */
};

struct coll_tick_arena;

struct coll_tick {
	int64_t t;          /* tick number */
	uint64_t tick_ns;   /* tick length */
	uint32_t n, cap;    /* rows */
	uint32_t n_kept;    /* cells [n, n_kept) keep histogram memory for reuse */
	struct coll_key *key;
	struct coll_cell *cell;
	uint32_t *slot;     /* open addressing: row index + 1, 0 = empty */
	uint32_t n_slots;   /* power of two, >= 3 * cap */
	struct coll_tick_arena *arena; /* bucket storage of decoded histograms
	                                  (tick.c); freed with the tick */
	bool own_hists; /* decode gives each histogram memory of its own, not
	                   the arena's: a tick merged with coll_tick_merge_take */
};

/* Limits a decoder enforces (a delta from a peer is not trusted). */
#define COLL_TICK_MAX_ROWS (1u << 22)

void coll_tick_init(struct coll_tick *k, int64_t t, uint64_t tick_ns);
void coll_tick_free(struct coll_tick *k);
/* Empties it for tick t, keeping its memory (histograms' included). */
void coll_tick_reset(struct coll_tick *k, int64_t t);

/* The row of key, added (zeroed) when absent. NOMEM leaves the tick as it was. */
enum iop_err coll_tick_row(struct coll_tick *k, const struct coll_key *key,
                           struct coll_cell **cell);
/* The row of key, or NULL. */
struct coll_cell *coll_tick_find(const struct coll_tick *k, const struct coll_key *key);
/* Starts fetching the index slot where a look-up of key begins: a caller
 * about to add a row (a leaf, a file new in the tick) hides the cache
 * miss behind other work. Only a hint; nothing changes. */
void coll_tick_prefetch(const struct coll_tick *k, const struct coll_key *key);

void coll_cell_init(struct coll_cell *c);
/* dst += src. In-flight counts add; the oldest start is the earlier one. */
enum iop_err coll_cell_merge(struct coll_cell *dst, const struct coll_cell *src);
/* dst += every row of src (the tick numbers need not match: downsampling
 * merges several ticks into one). */
enum iop_err coll_tick_merge(struct coll_tick *dst, const struct coll_tick *src);

/* coll_tick_merge that may take src's histograms: a row new to dst takes
 * src's histogram (when neither is the arena's) and leaves src's cell the
 * empty one dst had, instead of copying every bucket. src is to be reset
 * (or freed) after. */
enum iop_err coll_tick_merge_take(struct coll_tick *dst, struct coll_tick *src);

/* dst += src, as a copy when dst is empty (the same rows in the same
 * order, much faster than merging row by row). */
enum iop_err coll_tick_copy(struct coll_tick *dst, const struct coll_tick *src);

/* Packs every row's histogram (iop_hist_pack) into one block of the
 * tick's own, and lets go of spare rows' memory: for a tick that is kept
 * and no longer added to (the root's history). Rows added or merged into
 * later still work, their histograms moving back to memory of their own.
 * NOMEM leaves the tick as it was. */
enum iop_err coll_tick_pack(struct coll_tick *k);

/* Keeps the max_files - 1 most active files' rows and folds the rest into
 * rows with id COLL_ID_OTHER (0 = no limit). */
enum iop_err coll_tick_fold_files(struct coll_tick *k, uint32_t max_files);

/* coll_tick_fold_files in two steps, for a caller with work to do in
 * between (the leaf's latencies held back, leaf.c). plan: *kept = a flag
 * per row (malloc'd, the caller frees it), set for the FILE rows of the
 * files kept, or NULL when nothing folds. The rows folded into a (layer,
 * class)'s "other" row are its FILE rows without the flag; the "other"
 * row takes the place of the first of them. apply folds them. */
enum iop_err coll_tick_fold_plan(const struct coll_tick *k, uint32_t max_files, uint8_t **kept);
void coll_tick_fold_apply(struct coll_tick *k, const uint8_t *kept);
/* coll_tick_fold_apply for the rows of another kind (COLL_ROW_SITE): those
 * without the flag fold into their (layer, class)'s COLL_ID_OTHER row. */
void coll_tick_fold_kind(struct coll_tick *k, const uint8_t *kept, uint8_t kind);
/* The row each (layer, class)'s folded FILE rows go to under plan kept:
 * the first of them, which apply makes the "other" row (UINT32_MAX when
 * none folds). */
void coll_tick_fold_others(const struct coll_tick *k, const uint8_t *kept,
                           uint32_t first[IOP_LAYER__COUNT][IOP_CLASS__COUNT]);

/* Size class of a transfer of n bytes. */
static inline unsigned coll_size_class(uint64_t n)
{
	return n < 4096 ? 0 : n < 65536 ? 1 : n < 1048576 ? 2 : 3;
}

/* Records one call in a cell but for its latency in the histogram. */
static inline void coll_cell_add_sums(struct coll_cell *c, uint64_t dur_ns, uint64_t bytes,
                                      bool has_bytes, bool failed)
{
	c->ops++;
	c->errors += failed;
	c->time_ns += dur_ns;
	if (has_bytes) {
		c->bytes += bytes;
		c->size_ops[coll_size_class(bytes)]++;
	}
}

/* Records one call in a cell; the _at form when the latency's bucket
 * (iop_hist_bucket(dur_ns)) is known, as for a call recorded in several
 * rows. */
static inline void coll_cell_add_call_at(struct coll_cell *c, uint64_t dur_ns, unsigned bucket,
                                         uint64_t bytes, bool has_bytes, bool failed)
{
	coll_cell_add_sums(c, dur_ns, bytes, has_bytes, failed);
	/* A bucket holding UINT32_MAX calls in one tick cannot happen at any
	 * real rate; if it did, the latency would be missing, the counts not. */
	(void)iop_hist_record_at(&c->hist, dur_ns, bucket);
}
void coll_cell_add_call(struct coll_cell *c, uint64_t dur_ns, uint64_t bytes, bool has_bytes,
                        bool failed);

/* Serialisation (docs/collector.md, "Tick delta"): rows in order, each key
 * and cell as varints (COLL_DELTA_VERSION's layout), the histogram in its sparse form. Encode sets the
 * cursor's FULL error when out of room. Decode replaces *k's rows; it
 * rejects duplicate keys, unknown kinds and more than COLL_TICK_MAX_ROWS
 * rows (MALFORMED / OVERSIZED), and leaves *k empty on failure. */
void coll_tick_encode(const struct coll_tick *k, struct iop_wcur *c);
enum iop_err coll_tick_decode(struct coll_tick *k, struct iop_rcur *c);
/* The delta version (delta.h) whose cell layout encode writes. */
#define COLL_TICK_CELL_VERSION 4
/* coll_tick_decode of a tick a writer of delta version version encoded
 * (delta.h): before 3, cells have no fwd_ops, stride_ops and lock_ns;
 * before 4, no wait_ns, match_ops, last_ops and late_ns (left 0). */
enum iop_err coll_tick_decode_v(struct coll_tick *k, struct iop_rcur *c, unsigned version);

static inline struct coll_key coll_key_rank(uint32_t rank, unsigned layer, unsigned cls)
{
	return (struct coll_key){.id = 0, .rank = rank, .kind = COLL_ROW_RANK, .layer = layer, .cls = cls};
}
static inline struct coll_key coll_key_file(uint64_t id, unsigned layer, unsigned cls)
{
	return (struct coll_key){.id = id, .rank = COLL_RANK_NONE, .kind = COLL_ROW_FILE, .layer = layer, .cls = cls};
}
static inline struct coll_key coll_key_layer(unsigned layer, unsigned cls)
{
	return (struct coll_key){.id = 0, .rank = COLL_RANK_NONE, .kind = COLL_ROW_LAYER, .layer = layer, .cls = cls};
}
static inline struct coll_key coll_key_site(uint64_t id, unsigned layer, unsigned cls)
{
	return (struct coll_key){.id = id, .rank = COLL_RANK_NONE, .kind = COLL_ROW_SITE, .layer = layer, .cls = cls};
}

#endif

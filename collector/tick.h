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
 *   FS     one file system's calls                       (id = fs id, layer, cls)
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
	COLL_ROW_FS = 5, /* one file system's calls (id = its id, fsmap.h), from a
	                    leaf's FILE rows of the files on it (delta version 5) */
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

/* Records calls in a cell but for their latency in the histogram:
 * n calls that did not fail, of bytes each, time_ns in all (a run of
 * calls, collector/leaf.c; one call below). */
static inline void coll_cell_add_sums_n(struct coll_cell *c, uint64_t n, uint64_t time_ns,
                                        uint64_t bytes, bool has_bytes)
{
	c->ops += n;
	c->time_ns += time_ns;
	if (has_bytes) {
		c->bytes += n * bytes;
		c->size_ops[coll_size_class(bytes)] += n;
	}
}
static inline void coll_cell_add_sums(struct coll_cell *c, uint64_t dur_ns, uint64_t bytes,
                                      bool has_bytes, bool failed)
{
	coll_cell_add_sums_n(c, 1, dur_ns, bytes, has_bytes);
	c->errors += failed;
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

/* Serialisation (docs/collector.md, "Tick delta"; tick_cols.c): the rows
 * by column (COLL_DELTA_VERSION's layout), the histogram in its sparse form. Encode sets the
 * cursor's FULL error when out of room. Decode replaces *k's rows; it
 * rejects duplicate keys, unknown kinds and more than COLL_TICK_MAX_ROWS
 * rows (MALFORMED / OVERSIZED), and leaves *k empty on failure. */
void coll_tick_encode(const struct coll_tick *k, struct iop_wcur *c);
enum iop_err coll_tick_decode(struct coll_tick *k, struct iop_rcur *c);
/* The delta version (delta.h) whose layout encode writes. */
#define COLL_TICK_CELL_VERSION 6 /* 6: rows by column (tick_cols.h); 5: cells as in 4 */
/* coll_tick_decode of a tick a writer of delta version version encoded
 * (delta.h): before 3, cells have no fwd_ops, stride_ops and lock_ns;
 * before 4, no wait_ns, match_ops, last_ops and late_ns (left 0); before
 * 6, row after row. */
enum iop_err coll_tick_decode_v(struct coll_tick *k, struct iop_rcur *c, unsigned version);
/* coll_tick_encode in the layout of delta version version (2 up to
 * COLL_TICK_CELL_VERSION): what an older writer wrote, for tests of the
 * readers of old recordings. */
void coll_tick_encode_v(const struct coll_tick *k, struct iop_wcur *c, unsigned version);

/* The cell's counters in wire order; one list so encoders and decoders
 * agree. _3 came with delta version 3, _4 with 4 (delta.h). */
#define COLL_CELL_FIELDS(X)                                                                        \
	X(ops) X(bytes) X(errors) X(time_ns) X(excl_ns) X(busy_ns) X(child_ops) X(child_bytes)     \
	X(off_ops) X(consec_ops) X(size_ops[0]) X(size_ops[1]) X(size_ops[2]) X(size_ops[3])       \
	X(inflight) X(oldest_ns) X(coll_ops)
#define COLL_CELL_FIELDS_3(X) X(fwd_ops) X(stride_ops) X(lock_ns)
#define COLL_CELL_FIELDS_4(X) X(wait_ns) X(match_ops) X(last_ops) X(late_ns)

/* The parts of the serialisation (tick_cols.c puts them together): the
 * rows one after another as delta versions up to 5 wrote them; reading the
 * header (tick, length, row count: checked, and the tick sized for the
 * rows) into an empty k; those rows. */
void coll_tick_rows_encode(const struct coll_tick *k, struct iop_wcur *c, unsigned version);
enum iop_err coll_tick_decode_begin(struct coll_tick *k, struct iop_rcur *c, uint32_t *n);
enum iop_err coll_tick_rows_decode(struct coll_tick *k, struct iop_rcur *c, uint32_t n,
                                   unsigned version);

/* For decoders of a tick's rows (tick.c, tick_cols.c): the row of key,
 * new in k, which was sized for every row; MALFORMED for a key that is
 * not valid in delta version version or a duplicate. */
enum iop_err coll_tick_decoded_row(struct coll_tick *k, const struct coll_key *key,
                                   unsigned version, struct coll_cell **cell);
/* cell's histogram, read from c into k's storage; _parts as
 * iop_hist_decode_parts_in. */
enum iop_err coll_tick_decode_hist(struct coll_tick *k, struct coll_cell *cell, struct iop_rcur *c);
enum iop_err coll_tick_decode_hist_parts(struct coll_tick *k, struct coll_cell *cell,
                                         uint64_t count, uint64_t min, uint64_t max, uint64_t sum,
                                         struct iop_rcur *c);

static inline struct coll_key coll_key_rank(uint32_t rank, unsigned layer, unsigned cls)
{
	return (struct coll_key){.id = 0, .rank = rank, .kind = COLL_ROW_RANK, .layer = layer, .cls = cls};
}
/* A RANK row of no one rank: the rows of the ranks a recording above its
 * rank cap did not keep, summed per node and (layer, class) (record.h,
 * rec_view.h). Its rank is COLL_RANK_NONE, its id COLL_NODE_TAG | the
 * node's id. */
#define COLL_NODE_TAG (UINT64_C(1) << 32)
static inline struct coll_key coll_key_node(uint32_t node, unsigned layer, unsigned cls)
{
	return (struct coll_key){.id = COLL_NODE_TAG | node, .rank = COLL_RANK_NONE, .kind = COLL_ROW_RANK, .layer = layer, .cls = cls};
}
static inline bool coll_key_is_node(const struct coll_key *k)
{
	return k->kind == COLL_ROW_RANK && k->rank == COLL_RANK_NONE;
}
static inline uint32_t coll_key_node_id(const struct coll_key *k)
{
	return (uint32_t)k->id;
}
static inline struct coll_key coll_key_file(uint64_t id, unsigned layer, unsigned cls)
{
	return (struct coll_key){.id = id, .rank = COLL_RANK_NONE, .kind = COLL_ROW_FILE, .layer = layer, .cls = cls};
}
static inline struct coll_key coll_key_layer(unsigned layer, unsigned cls)
{
	return (struct coll_key){.id = 0, .rank = COLL_RANK_NONE, .kind = COLL_ROW_LAYER, .layer = layer, .cls = cls};
}
static inline struct coll_key coll_key_fs(uint64_t id, unsigned layer, unsigned cls)
{
	return (struct coll_key){.id = id, .rank = COLL_RANK_NONE, .kind = COLL_ROW_FS, .layer = layer, .cls = cls};
}
static inline struct coll_key coll_key_site(uint64_t id, unsigned layer, unsigned cls)
{
	return (struct coll_key){.id = id, .rank = COLL_RANK_NONE, .kind = COLL_ROW_SITE, .layer = layer, .cls = cls};
}

#endif

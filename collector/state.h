/* The job's window state: everything known from the closed ticks so far.
 * The root applies each tick delta to it as the tick closes; replay applies
 * the recorded deltas in the same way, so live and replay views agree by
 * construction.
 *
 *   names    the dictionary (paths, datasets, sites, hosts)
 *   totals   exact cumulative counters per (rank, file, layer, class), from
 *            the shims' counters, not from events: they stay exact when
 *            events are dropped. Each process's latest counters are kept
 *            (latest), each value the largest received, so one received
 *            twice (a resend, a restarted leaf) counts once; a total is the
 *            sum of its processes' counters (coll_totals_next walks them)
 *   ranks    per rank: node, processes, state, exclusive I/O time
 *   history  closed ticks: full resolution for the last hist_ticks, then
 *            bins of bin1_ticks for bin1_count bins, then bins of bin2_ticks
 *            for bin2_count bins; older ones are forgotten. Its memory is
 *            bounded by max_bytes: past it, the oldest ticks and bins are
 *            thinned to their LAYER rows (their RANK, FILE and SITE rows
 *            dropped), never the newest COLL_HISTORY_KEEP ticks. A thinned
 *            bin stays thinned as ticks merge into it. Sizes are counted
 *            from the rows themselves (coll_tick_bytes), so a state rebuilt
 *            from a keyframe thins the same ticks as the one it came from.
 *            docs/collector.md ("History") gives the figures.
 *   monitor  the monitor's own counts */
#ifndef COLL_STATE_H
#define COLL_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include "delta.h"
#include "events.h"
#include "names.h"
#include "series.h"
#include "tick.h"

/* Processes x (file, layer, class) counters the state keeps: what the
 * index can hold (delta.c), 80 bytes each, taken as they come (~320 MiB
 * at most). 1 Mi before: a 65,536-rank job (bench/tree_bench) had 1.24 M,
 * and the root refused 16 % of them, their totals missing without a word.
 * What is refused now is counted (counters_refused) and said. */
#define COLL_STATE_MAX_COUNTERS (1u << 22)

struct coll_history_cfg {
	uint32_t full_ticks;            /* default 600 (10 min of 1 s ticks) */
	uint32_t bin1_ticks, bin1_count; /* default 10 ticks x 720 (2 h) */
	uint32_t bin2_ticks, bin2_count; /* default 60 ticks x 1440 (24 h) */
	uint64_t max_bytes;             /* the history's memory budget, as
	                                   coll_tick_bytes() counts it; 0 = none
	                                   (default COLL_HISTORY_BYTES) */
};
#define COLL_HISTORY_BYTES ((uint64_t)48 << 20)
/* Ticks the budget never thins: the newest ones keep every row. */
#define COLL_HISTORY_KEEP 2
void coll_history_cfg_default(struct coll_history_cfg *cfg, uint64_t tick_ns);

struct coll_tier {
	struct coll_tick *v; /* ring */
	uint64_t *bytes;     /* coll_tick_bytes() of each v[i] */
	uint32_t cap, n, head; /* head: index of the oldest */
	uint32_t ticks_per_bin;
};

enum coll_rank_state { COLL_RANK_ACTIVE = 1, COLL_RANK_ENDED = 2, COLL_RANK_GONE = 3 };

struct coll_rank {
	uint64_t node;      /* host name hash (node id of the frames) */
	uint64_t excl_ns;   /* time in I/O calls, nested calls counted once */
	uint64_t wait_ns;   /* of that, time waiting for other ranks in collective
	                       calls (collective.h): own I/O time = excl - wait */
	uint32_t procs;     /* processes that joined under this rank */
	uint32_t live;      /* of those, not ended nor gone */
	uint8_t state;      /* enum coll_rank_state; 0 = never seen */
};

struct coll_state {
	uint64_t tick_ns;
	struct coll_names names;
	struct coll_ctrset latest; /* each process's latest counters; totals are their sums */
	uint64_t counters_refused; /* updates of counters latest had no room for: the
	                              totals are short of them (summary, monitor) */
	struct coll_host {
		uint32_t node; /* node id: the host name's hash cut to 32 bits */
		const char *name; /* in names */
	} *hosts;
	uint32_t n_hosts, hosts_cap;
	/* their index by node id (table.h: position + 1, 0 empty; n_slots 0:
	 * none, coll_state_host searches the array) */
	uint32_t *host_slot;
	uint32_t host_slots;
	struct coll_rank *ranks;
	uint32_t n_ranks;        /* ranks[0..n_ranks) allocated; max rank seen + 1 */
	uint64_t layer_excl_ns[IOP_LAYER__COUNT];
	uint64_t layer_wait_ns[IOP_LAYER__COUNT]; /* of those, waiting in collective calls */
	struct coll_monitor mon;
	struct coll_tier tier[3];
	uint64_t max_bytes;      /* the history's budget (coll_history_cfg) */
	uint64_t history_bytes;  /* what the tiers hold now, by coll_tick_bytes() */
	uint64_t thinned;        /* ticks and bins the budget has thinned */
	int64_t first_t, last_t; /* ticks applied; first_t = INT64_MIN before any */
	uint32_t detail_ticks;   /* a lean recording's (record.h): its ticks hold their
	                            RANK, FILE and SITE rows once in this many (and
	                            when a process ends); 0 or 1: every tick. Set by
	                            its reader, not kept in keyframes */
	uint64_t ticks_applied;
	struct coll_rank_dist dist; /* the last applied delta's (delta.h): the
	                               ranks' distribution of a recorded tick
	                               whose RANK rows were folded; ranks 0: none */
	struct coll_nodeset nodes;  /* each node's latest sample (node/nodes.h) */
	struct coll_nodeset peaks;  /* each node's figures' peaks over the job */
	struct coll_node_series series; /* each node's pressure and busiest device,
	                                   tick by tick (node/series.h): as many
	                                   ticks as tier 0 holds */
};

/* A rank's own I/O time: in I/O calls, without waiting for other ranks in
 * collective ones. */
static inline uint64_t coll_rank_own_ns(const struct coll_rank *r)
{
	return r->excl_ns > r->wait_ns ? r->excl_ns - r->wait_ns : 0;
}

void coll_state_init(struct coll_state *s, uint64_t tick_ns, const struct coll_history_cfg *h);
void coll_state_free(struct coll_state *s);
/* Applies a closed tick's delta. NOMEM leaves part of it applied; the
 * state stays consistent (a count may be short). */
enum iop_err coll_state_apply(struct coll_state *s, const struct coll_delta *d);
/* The same, for a delta the caller is done with: its tick's rows may move
 * into the history instead of being copied, leaving d's tick empty (d
 * stays valid: reset or free it as usual). Replay and seeking use it. */
enum iop_err coll_state_apply_take(struct coll_state *s, struct coll_delta *d);

/* History: the closed tick (or bin) containing tick t, or NULL. */
const struct coll_tick *coll_state_tick(const struct coll_state *s, int64_t t);
/* The most recent closed tick, or NULL. */
const struct coll_tick *coll_state_last(const struct coll_state *s);

/* A tick's memory as the history budget counts it: its rows (key, cell,
 * index) and each row's histogram buckets from its min's to its max's.
 * Depends only on the rows, not on how their arrays grew. */
uint64_t coll_tick_bytes(const struct coll_tick *k);
/* Recounts the history's bytes (after a keyframe built the tiers). */
void coll_state_history_measure(struct coll_state *s);
/* Whether the tick or bin was thinned: LAYER rows and no other. */
bool coll_tick_thinned(const struct coll_tick *k);
/* Keeps k's LAYER rows only, in their order (what the budget leaves of a
 * tick, and a lean recording's tick between whole ones). NOMEM leaves k
 * as it was. */
enum iop_err coll_tick_thin(struct coll_tick *k);

/* The exact totals, walked: each process's latest counter that is not all
 * zero, as a FILE row's key (file, rank, layer, class) and a cell with
 * its ops, bytes, time and errors, and its access patterns (off_ops,
 * consec_ops, fwd_ops, stride_ops; the rest 0). A (file, rank, layer,
 * class) that several processes counted comes once for each: sums over
 * the walk are the totals. Start with {.s = state}; the key and cell are
 * valid until the next call.
 *   for (struct coll_totals_it it = {.s = s}; coll_totals_next(&it);)
 *           use(&it.key, &it.cell); */
struct coll_totals_it {
	const struct coll_state *s;
	uint32_t i;
	struct coll_key key;
	struct coll_cell cell;
};
bool coll_totals_next(struct coll_totals_it *it);

/* Ranks alive (not ended nor gone) and seen. */
uint32_t coll_state_ranks_live(const struct coll_state *s);
uint32_t coll_state_ranks_seen(const struct coll_state *s);
uint32_t coll_state_nodes(const struct coll_state *s);
/* The host name of a node id, or NULL. */
const char *coll_state_host(const struct coll_state *s, uint32_t node);
/* Indexes every host anew for coll_state_host, hosts_cap being n_hosts
 * (add_host keeps the index; whoever fills hosts otherwise, the keyframe
 * reader, calls this). Without memory lookups search the array. */
void coll_state_index_hosts(struct coll_state *s);

#endif

/* A whole collector pipeline in one process, for tests and benchmarks:
 * synthetic ranks (tests/support/workload.h) send real frames to a leaf,
 * the leaf's deltas go to a root, and each tick the root closes is handed
 * to a callback with the state it was applied to. Time is the workload's:
 * nothing waits on a clock. */
#ifndef COLL_SIM_H
#define COLL_SIM_H

#include <stdbool.h>
#include <stdint.h>

#include "leaf.h"
#include "root.h"
#include "workload.h"

struct coll_sim {
	struct coll_leaf *leaf;
	struct coll_root *root;
	struct iop_wl *w;
	unsigned ranks;
	struct iop_key key;
	uint64_t job_id;
	uint64_t now_ns;    /* newest event sent */
	uint64_t slowest_ns; /* the slowest rank's time: the pipeline's clock */
	uint64_t events;
	uint64_t ticks_closed;
	coll_tick_fn *on_tick;
	void *arg;
	uint8_t buf[65536];
};

/* ranks ranks of kind, from start_ns, 1 s ticks; history may be NULL
 * (the default). fn (may be NULL) gets each closed tick. */
enum iop_err coll_sim_new(struct coll_sim *s, unsigned ranks, enum iop_wl_kind kind,
                          uint64_t start_ns, const struct coll_history_cfg *history,
                          coll_tick_fn *fn, void *arg);
void coll_sim_free(struct coll_sim *s);

/* One frame from each rank (at most max_events events each), then the leaf
 * and the root advance to the slowest rank's time. */
enum iop_err coll_sim_round(struct coll_sim *s, unsigned max_events);
/* Rounds until the pipeline's clock reaches t_ns. */
enum iop_err coll_sim_run_until(struct coll_sim *s, uint64_t t_ns, unsigned max_events);
/* Every rank sends what it has left and ends; every tick closes. */
enum iop_err coll_sim_finish(struct coll_sim *s);

/* True when a and b have the same keyframe encoding (keyframe.h): the
 * same state, byte for byte. */
bool coll_sim_same_state(const struct coll_state *a, const struct coll_state *b);

#endif

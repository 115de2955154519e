/* The root's pending ticks and closing. See root.h. */
#include "root.h"

#include <stdlib.h>
#include <string.h>

#include "table.h"

#define RING 64
#define EARLY_FOLD 4 /* rows of a pending tick, in max_files, before it folds */
#define MAX_CHILDREN 65536 /* children whose deltas a tick's close waits for */

struct coll_root {
	struct coll_root_cfg cfg;
	bool remote; /* coll_root_remote_children() was called */
	struct coll_delta ring[RING]; /* tick t pending in ring[t % RING] */
	uint32_t folded_n[RING];      /* its rows after it last folded */
	int64_t oldest;
	bool any; /* a delta has arrived in the oldest open tick or later */
	struct coll_state state;
	struct coll_matcher match; /* collective calls not matched yet */
	struct root_child {        /* children that named themselves */
		uint64_t sender;
		int64_t last; /* the newest tick it sent */
	} *kids;
	uint32_t n_kids, cap_kids;
	/* of them, for the oldest open tick t (kept as deltas come, counted
	 * again when t closes: next_close is asked at every wake-up) */
	uint32_t n_wait; /* sent t - 1 and not t: waited for */
	uint32_t n_in;   /* sent t (or later) */
};

void coll_root_cfg_default(struct coll_root_cfg *cfg, uint64_t tick_ns)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->tick_ns = tick_ns;
	cfg->grace_ns = 400000000ull;
	cfg->max_files = 2048;
	if (cfg->grace_ns > tick_ns / 2 + 250000000ull)
		cfg->grace_ns = tick_ns / 2 + 250000000ull;
	coll_history_cfg_default(&cfg->history, tick_ns);
}

static int64_t tick_of(const struct coll_root *r, uint64_t ns)
{
	return (int64_t)(ns / r->cfg.tick_ns);
}

enum iop_err coll_root_new(const struct coll_root_cfg *cfg, uint64_t now_ns,
                           struct coll_root **out)
{
	if (cfg->tick_ns == 0)
		return IOP_ERR_INVAL;
	struct coll_root *r = calloc(1, sizeof(*r));
	if (!r)
		return IOP_ERR_NOMEM;
	r->cfg = *cfg;
	r->oldest = tick_of(r, now_ns > cfg->grace_ns ? now_ns - cfg->grace_ns : 0);
	for (int64_t t = r->oldest; t < r->oldest + RING; t++)
		coll_delta_init(&r->ring[t % RING], t, cfg->tick_ns);
	coll_state_init(&r->state, cfg->tick_ns, &cfg->history);
	*out = r;
	return IOP_OK;
}

void coll_root_free(struct coll_root *r)
{
	if (!r)
		return;
	for (int i = 0; i < RING; i++)
		coll_delta_free(&r->ring[i]);
	coll_state_free(&r->state);
	coll_matcher_free(&r->match);
	free(r->kids);
	free(r);
}

static enum iop_err root_delta(struct coll_root *r, struct coll_delta *d, bool take)
{
	int64_t t = d->tick.t;
	bool late = t < r->oldest;
	if (late)
		t = r->oldest;
	if (t >= r->oldest + RING)
		t = r->oldest + RING - 1;
	struct coll_delta *dst = &r->ring[t % RING];
	enum iop_err e = take ? coll_delta_merge_take(dst, d) : coll_delta_merge(dst, d);
	/* Leaves with files of their own (per-rank files) would make the
	 * pending tick hold every leaf's max_files file rows (64 leaves:
	 * 130 000 rows, 100 MiB a tick) until it closes and folds: it folds
	 * as it fills instead, once its rows pass EARLY_FOLD times the cap
	 * (docs/collector.md, "Root"). */
	uint32_t *base = &r->folded_n[t % RING];
	if (r->cfg.max_files && dst->tick.n > *base + EARLY_FOLD * r->cfg.max_files) {
		(void)coll_tick_fold_files(&dst->tick, r->cfg.max_files);
		*base = dst->tick.n;
	}
	if (late) {
		/* Its events reached no closed tick: count them as late. */
		dst->mon.late += d->mon.events - d->mon.late;
	}
	return e;
}

enum iop_err coll_root_delta(struct coll_root *r, const struct coll_delta *d)
{
	/* d is only read when take is false */
	return root_delta(r, (struct coll_delta *)d, false);
}

/* A child whose newest tick is last, in n_wait or n_in (add) or out of
 * them (!add), for the oldest open tick. */
static void count_child(struct coll_root *r, int64_t last, bool add)
{
	uint32_t *n = last >= r->oldest ? &r->n_in : last == r->oldest - 1 ? &r->n_wait : NULL;
	if (n)
		*n = add ? *n + 1 : *n - 1;
}

/* n_wait and n_in for a new oldest open tick. */
static void count_children(struct coll_root *r)
{
	r->n_wait = r->n_in = 0;
	for (uint32_t i = 0; i < r->n_kids; i++)
		count_child(r, r->kids[i].last, true);
}

/* sender sent a delta of tick t. A child past MAX_CHILDREN, or with no
 * memory for it, is not waited for: its ticks close on the grace. (The
 * downlink keeps its children too, by sender, for their sequence numbers;
 * this table also holds `iopulse run`'s own leaf.) */
static void child_sent(struct coll_root *r, uint64_t sender, int64_t t)
{
	for (uint32_t i = 0; i < r->n_kids; i++)
		if (r->kids[i].sender == sender) {
			if (t > r->kids[i].last) {
				count_child(r, r->kids[i].last, false);
				r->kids[i].last = t;
				count_child(r, t, true);
			}
			return;
		}
	if (r->n_kids < MAX_CHILDREN &&
	    coll_array_room((void **)&r->kids, sizeof(*r->kids), r->n_kids, &r->cap_kids, 16) ==
	        IOP_OK) {
		r->kids[r->n_kids++] = (struct root_child){sender, t};
		count_child(r, t, true);
	}
}

enum iop_err coll_root_delta_from(struct coll_root *r, uint64_t sender, struct coll_delta *d)
{
	child_sent(r, sender, d->tick.t);
	return root_delta(r, d, true);
}

/* The oldest open tick t has come from every child that sent the tick
 * before it, and from one at least: nothing more of it is awaited. A
 * child that did not send t - 1 (gone, stalled, or new) is not waited
 * for; its deltas, if they come, count late as ever. */
static bool children_in(const struct coll_root *r)
{
	return r->n_wait == 0 && r->n_in > 0;
}

void coll_root_remote_children(struct coll_root *r)
{
	if (!r->remote) {
		r->remote = true;
		r->cfg.grace_ns += COLL_ROOT_REMOTE_SLACK_NS;
	}
}

uint64_t coll_root_next_close_ns(const struct coll_root *r)
{
	uint64_t end = (uint64_t)(r->oldest + 1) * r->cfg.tick_ns;
	return children_in(r) ? end : end + r->cfg.grace_ns;
}

void coll_root_advance(struct coll_root *r, uint64_t now_ns, bool flush, coll_tick_fn *fn,
                       void *arg)
{
	int64_t last = tick_of(r, now_ns) + 1;
	while (flush ? r->oldest <= last : coll_root_next_close_ns(r) <= now_ns) {
		struct coll_delta *d = &r->ring[r->oldest % RING];
		d->tick.t = r->oldest;
		/* Each leaf keeps its own 2048 most active files; many leaves
		 * with files of their own would otherwise give the root (its
		 * history, its recording) tens of thousands of file rows a tick. */
		(void)coll_tick_fold_files(&d->tick, r->cfg.max_files);
		/* A mid passes the collective calls' parts up; the root
		 * matches them into the tick's rows (after the fold: a file
		 * row it adds is one a matched call names) */
		if (!r->cfg.no_state) {
			coll_match_close(&r->match, &d->inst, &d->tick, flush && r->oldest >= last);
			(void)coll_state_apply(&r->state, d);
		}
		if (fn)
			fn(arg, d, &r->state);
		coll_delta_reset(d, r->oldest + RING);
		r->folded_n[r->oldest % RING] = 0;
		r->oldest++;
		count_children(r);
		/* its memory to the next ticks to fill, not 64 slots on */
		for (int64_t t = r->oldest; t < r->oldest + 2; t++)
			if (coll_delta_pass_memory(d, &r->ring[t % RING]))
				break;
	}
}

const struct coll_state *coll_root_state(const struct coll_root *r)
{
	return &r->state;
}

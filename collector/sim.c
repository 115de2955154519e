/* See sim.h. */
#include "sim.h"

#include <stdlib.h>
#include <string.h>

#include "keyframe.h"

static void to_root(void *arg, struct coll_delta *d)
{
	struct coll_sim *s = arg;
	(void)coll_root_delta(s->root, d);
}

static void closed(void *arg, const struct coll_delta *d, const struct coll_state *st)
{
	struct coll_sim *s = arg;
	s->ticks_closed++;
	if (s->on_tick)
		s->on_tick(s->arg, d, st);
}

enum iop_err coll_sim_new(struct coll_sim *s, unsigned ranks, enum iop_wl_kind kind,
                          uint64_t start_ns, const struct coll_history_cfg *history,
                          coll_tick_fn *fn, void *arg)
{
	memset(s, 0, sizeof(*s));
	s->ranks = ranks;
	s->job_id = 0x1234abcdull;
	memset(s->key.b, 1, sizeof s->key.b);
	s->now_ns = s->slowest_ns = start_ns;
	s->on_tick = fn;
	s->arg = arg;
	struct coll_leaf_cfg lc;
	coll_leaf_cfg_default(&lc);
	lc.job_id = s->job_id;
	lc.key = s->key;
	struct coll_root_cfg rc;
	coll_root_cfg_default(&rc, lc.tick_ns);
	if (history)
		rc.history = *history;
	enum iop_err e = coll_leaf_new(&lc, start_ns, &s->leaf);
	if (!e)
		e = coll_root_new(&rc, start_ns, &s->root);
	if (!e && !(s->w = calloc(ranks, sizeof(*s->w))))
		e = IOP_ERR_NOMEM;
	for (unsigned r = 0; !e && r < ranks; r++) {
		if (!iop_wl_init(&s->w[r], kind, r, 11 + r, start_ns))
			e = IOP_ERR_NOMEM;
		s->w[r].job_id = s->job_id;
	}
	if (e)
		coll_sim_free(s);
	return e;
}

void coll_sim_free(struct coll_sim *s)
{
	for (unsigned r = 0; s->w && r < s->ranks; r++)
		iop_wl_free(&s->w[r]);
	free(s->w);
	coll_leaf_free(s->leaf);
	coll_root_free(s->root);
	memset(s, 0, sizeof(*s));
}

static void advance(struct coll_sim *s, uint64_t now, bool flush)
{
	coll_leaf_advance(s->leaf, now, flush, to_root, s);
	coll_root_advance(s->root, now, flush, closed, s);
}

/* Sends rank r's next frame, or every frame it has left when draining. */
static enum iop_err send_rank(struct coll_sim *s, unsigned r, unsigned max_events)
{
	struct iop_wl *w = &s->w[r];
	size_t len;
	unsigned n;
	enum iop_err e;
	while ((e = iop_wl_frame(w, s->buf, sizeof s->buf, max_events, &s->key, &len, &n)) ==
	       IOP_OK) {
		uint64_t at = w->now_ns > s->now_ns ? w->now_ns : s->now_ns;
		if ((e = coll_leaf_frame(s->leaf, s->buf, len, at)))
			return e;
		s->events += n;
		if (w->now_ns > s->now_ns)
			s->now_ns = w->now_ns;
		if (!w->draining)
			return IOP_OK;
	}
	return e == IOP_ERR_STATE ? IOP_OK : e;
}

enum iop_err coll_sim_round(struct coll_sim *s, unsigned max_events)
{
	uint64_t slowest = UINT64_MAX;
	for (unsigned r = 0; r < s->ranks; r++) {
		enum iop_err e = send_rank(s, r, max_events);
		if (e)
			return e;
		if (s->w[r].now_ns < slowest)
			slowest = s->w[r].now_ns;
	}
	/* ranks of a real job run side by side: the collector's time is what
	 * the slowest one has reached */
	if (slowest != UINT64_MAX && slowest > s->slowest_ns)
		s->slowest_ns = slowest;
	advance(s, s->slowest_ns, false);
	return IOP_OK;
}

enum iop_err coll_sim_run_until(struct coll_sim *s, uint64_t t_ns, unsigned max_events)
{
	while (s->slowest_ns < t_ns) {
		enum iop_err e = coll_sim_round(s, max_events);
		if (e)
			return e;
	}
	return IOP_OK;
}

enum iop_err coll_sim_finish(struct coll_sim *s)
{
	for (unsigned r = 0; r < s->ranks; r++) {
		s->w[r].draining = true;
		enum iop_err e = send_rank(s, r, 256);
		if (e)
			return e;
	}
	advance(s, s->now_ns + 10000000000ull, true);
	return IOP_OK;
}

bool coll_sim_same_state(const struct coll_state *a, const struct coll_state *b)
{
	uint8_t *x = NULL, *y = NULL;
	size_t cx = 0, cy = 0, lx = 0, ly = 0;
	bool same = !coll_state_encode_keyframe(a, 0, &x, &cx, &lx) &&
	            !coll_state_encode_keyframe(b, 0, &y, &cy, &ly) && lx == ly &&
	            !memcmp(x, y, lx);
	free(x);
	free(y);
	return same;
}

/* Variability rules: what changes while the job runs. Each judge computes
 * its value per subject from the summaries (alert_sum.c), applies its
 * gates, and reports the subjects it could judge; the engine applies the
 * thresholds. Formulas and defaults: docs/alerts.md. */
#include "alert_int.h"

#include <stdio.h>
#include <stdlib.h>

#define MAD_SCALE 1.4826 /* MAD of a normal sample is 0.6745 sigma */
#define MAD_FLOOR 0.1    /* of the median: peers that agree exactly are not infinitely strict */
#define LIKE_SIZE 4      /* like for like: bytes per call within this factor */

static double secs(uint64_t ns)
{
	return (double)ns / 1e9;
}

static void layer_cls(char *buf, size_t len, unsigned layer, unsigned cls)
{
	fmt_text(buf, len, "%s %s", iop_layer_name((enum iop_layer)layer),
	         iop_class_name((enum iop_class)cls));
}

/* Ranks of a healthy job end their I/O seconds apart, and the ones that
 * finished early make a last few calls (close, a line on stdout) when the
 * job ends. Counted as peers that moved (almost) nothing, they made the
 * last rank to finish an imbalance (WARN "rank 3 moved 74.0 MiB in 3.0 s =
 * 3.5x the mean 21.2 MiB of 3 other ranks", CRIT "100x" when the others had
 * ended). So a rank that did I/O has wound down, and leaves imbalance's
 * peers, when it moved nothing in this tick, or when it came back after a
 * pause less than a window ago (the ranks that finished early, printing at
 * the end). A rank whose first data came within the window is at work. A
 * rank that never did I/O stays a peer that moved nothing. Straggler keeps
 * its peers: it compares time per call, which ending apart does not change,
 * and its classic case is one slow rank still at work after the others are
 * done. */
static bool wound_down(const struct coll_alerts *a, const struct rank_state *rs, uint32_t win)
{
	if (rs->moved_t != a->t)
		return true;
	return rs->moved_before && a->t - rs->run_from + 1 < (int64_t)win;
}

/* --------------------------------------------------------------- straggler */

struct peer {
	uint32_t rank;
	double per_call; /* seconds per call */
	double per_call_bytes;
	bool aggregates; /* its calls moved mostly other ranks' data below them */
	double win_time; /* seconds of I/O in the whole window */
};

/* A rank's latest calls in the window: walking back from this tick until
 * min_ops calls are in, so a rank that went slow is judged on its slow calls
 * and not diluted by its earlier ones. False when the window has fewer. */
static bool peer_of(const struct coll_alerts *a, const struct rule_rt *rt,
                    const struct rank_win *ring, uint32_t rank, struct peer *p)
{
	uint64_t ops = 0, time = 0, bytes = 0, child = 0, win_time = 0;
	uint64_t need = rt->r.min_ops ? rt->r.min_ops : 1;
	for (uint32_t i = 0; i < rt->win; i++) {
		const struct rank_win *w = win_at(ring, rt->win, a->t - i);
		if (!w)
			continue;
		win_time += w->time_ns;
		if (ops < need) {
			ops += w->ops;
			time += w->time_ns;
			bytes += w->bytes;
			child += w->child_bytes;
		}
	}
	if (ops < need)
		return false;
	*p = (struct peer){.rank = rank,
	                   .per_call = secs(time) / (double)ops,
	                   .per_call_bytes = (double)bytes / (double)ops,
	                   .aggregates = child > 2 * bytes,
	                   .win_time = secs(win_time)};
	return true;
}

/* When waits for locks make most of a straggler's time in the window, the
 * message says so: the cause is another process holding the lock (MPI-IO's
 * data sieving on a shared file), not the rank's storage. Lock calls are
 * inside an MPI-IO or HDF5 call's time, beside a POSIX call's. */
static void lock_note(const struct coll_alerts *a, const struct rule_rt *rt, const struct peer *p,
                      unsigned layer, char *buf, size_t len)
{
	buf[0] = 0;
	const struct rank_win *ring = a->rank[p->rank].lock;
	double lock = 0;
	for (uint32_t i = 0; ring && i < rt->win; i++) {
		const struct rank_win *w = win_at(ring, rt->win, a->t - i);
		lock += w ? secs(w->time_ns) : 0;
	}
	bool inside = layer == IOP_LAYER_MPIIO || layer == IOP_LAYER_HDF5;
	double of = inside ? p->win_time : p->win_time + lock;
	if (lock <= 0 || of <= 0 || lock < 0.5 * of)
		return;
	char l[16];
	coll_fmt_secs(l, sizeof(l), lock);
	fmt_text(buf, len, "; %.0f%% of its I/O time waiting for locks (%s)",
	         100 * (lock < of ? lock / of : 1), l);
}

/* The MAD of the peers' per_call but peers[skip]'s about med. Above
 * LOO_MAX peers one rank moves it by no more than one order statistic, and
 * the whole group's serves (the loop is O(n log n) a candidate). */
#define LOO_MAX 32
static double mad_without(struct coll_alerts *a, const struct peer *peers, size_t n, size_t skip,
                          double med)
{
	size_t m = 0;
	for (size_t j = 0; j < n; j++)
		if (j != skip)
			a->scratch2[m++] = peers[j].per_call > med ? peers[j].per_call - med
			                                           : med - peers[j].per_call;
	return median(a->scratch2, m);
}

static enum iop_err straggler_group(struct coll_alerts *a, const struct rule_rt *rt, unsigned layer,
                                    unsigned cls, struct peer *peers)
{
	size_t n = 0;
	for (uint32_t r = 0; r < a->n_rank; r++) {
		const struct rank_win *ring = a->rank[r].grp[layer][cls];
		if (ring && peer_of(a, rt, ring, r, &peers[n]))
			n++;
	}
	if (n < 2 || n < rt->r.min_ranks)
		return IOP_OK;
	enum iop_err e = scratch_reserve(a, n);
	if (e)
		return e;
	for (size_t i = 0; i < n; i++)
		a->scratch[i] = peers[i].per_call_bytes;
	double med_bytes = median(a->scratch, n);
	for (size_t i = 0; i < n; i++)
		a->scratch[i] = peers[i].per_call;
	double med = median(a->scratch, n); /* a->scratch is sorted from here */
	double spread = mad(a->scratch, n, med, a->scratch2);
	char lc[32];
	layer_cls(lc, sizeof(lc), layer, cls);
	for (size_t i = 0; i < n; i++) {
		const struct peer *p = &peers[i];
		/* against its peers, itself left out: with 4 ranks under load
		 * (20, 100, 400 us a call and the straggler's 1.1 ms) the median
		 * with itself is 250 us and its MAD 190 us, z 3.0; of the three
		 * others, 100 and 80 us, z 8.4. With two ranks that is the other */
		double ref = median_without(a->scratch, n, p->per_call);
		if (ref <= 0 || p->per_call < rt->r.warn * ref || p->win_time < rt->r.min_time_s)
			continue;
		/* more work per call, not a slower rank (with two ranks against
		 * the other's: their median, the mean, is never a quarter of
		 * either; an aggregator's 4 MiB POSIX writes were judged against
		 * HDF5's metadata writes of a few KiB, "438x") */
		double ref_bytes = n == 2 ? peers[1 - i].per_call_bytes : med_bytes;
		if (ref_bytes > 0 && p->per_call_bytes > LIKE_SIZE * ref_bytes)
			continue;
		if (p->aggregates)
			continue; /* an aggregator: its calls write the others' data too */
		double ratio = p->per_call / ref;
		char took[16], base[16];
		coll_fmt_secs(took, sizeof(took), p->per_call);
		coll_fmt_secs(base, sizeof(base), ref);
		struct cond c;
		cond_init(&c, COLL_ALERT_STRAGGLER);
		c.rank = p->rank;
		c.shown_layer = (int)layer;
		c.value = ratio;
		c.baseline = ref;
		fmt_text(c.subject, sizeof(c.subject), "rank %u", p->rank);
		char locks[64];
		lock_note(a, rt, p, layer, locks, sizeof(locks));
		if (n == 2) {
			if (ratio < rt->r.pair_ratio)
				continue;
			fmt_text(c.detail, sizeof(c.detail),
			         "%s %s/call = %.1fx the other rank's %s%s", lc, took, ratio, base, locks);
		} else {
			double sp = n <= LOO_MAX ? mad_without(a, peers, n, i, ref) : spread;
			if (sp < MAD_FLOOR * ref)
				sp = MAD_FLOOR * ref;
			double z = (p->per_call - ref) / (MAD_SCALE * sp);
			if (z < rt->r.min_z)
				continue;
			fmt_text(c.detail, sizeof(c.detail),
			         "%s %s/call = %.1fx median %s of %zu peers%s", lc, took, ratio, base,
			         n - 1, locks);
		}
		e = alerts_report(a, rt, &c);
		if (e)
			return e;
	}
	return IOP_OK;
}

enum iop_err judge_straggler(struct coll_alerts *a, const struct rule_rt *rt)
{
	if (a->n_rank < 2)
		return IOP_OK;
	struct peer *peers = malloc(a->n_rank * sizeof(*peers));
	if (!peers)
		return IOP_ERR_NOMEM;
	enum iop_err e = IOP_OK;
	for (unsigned l = 0; !e && l < NL; l++)
		for (unsigned c = 0; !e && c < DATA_CLASSES; c++)
			e = straggler_group(a, rt, l, c, peers);
	free(peers);
	return e;
}

/* --------------------------------------------------------- throughput_drop */

enum iop_err judge_throughput_drop(struct coll_alerts *a, const struct rule_rt *rt)
{
	struct tick_sum ws;
	sum_window(a, rt->win, &ws);
	enum iop_err e = scratch_reserve(a, rt->r.baseline_n + BASELINE_MIN);
	for (unsigned l = 0; !e && l < NL; l++)
		for (unsigned cls = 0; !e && cls < DATA_CLASSES; cls++) {
			const struct lc_sum *s = &ws.lc[l][cls];
			double in_calls = secs(s->time_ns);
			if (s->ops == 0 || s->ops < rt->r.min_ops || in_calls < rt->r.min_time_s)
				continue;
			/* Bytes per second of call time: it does not fall when the
			 * job computes between I/O phases, nor with where tick
			 * boundaries cut long calls (a call counts whole when it
			 * ends), nor while one call hangs (hung_io's business). */
			double rate = (double)s->bytes / in_calls;
			double size = (double)s->bytes / (double)s->ops;
			struct baseline *b = &a->tput[l][cls];
			double base = baseline_value(b, 0.5, a->scratch);
			/* much smaller requests move fewer bytes per second on any
			 * file system: the application changed, the baseline
			 * will follow */
			bool like = size * LIKE_SIZE >= baseline_size(b, a->scratch);
			double drop = base > 0 && like ? 1 - rate / base : 0;
			if (drop < 0)
				drop = 0;
			if (s->bytes >= rt->r.min_bytes)
				baseline_offer(b, rate, size, drop >= rt->r.warn);
			if (base <= 0 || !like)
				continue;
			struct cond c;
			cond_init(&c, COLL_ALERT_THROUGHPUT_DROP);
			c.layer = c.shown_layer = (int)l;
			c.cls = (int)cls;
			c.value = drop;
			c.baseline = base;
			layer_cls(c.subject, sizeof(c.subject), l, cls);
			char now[24], was[24];
			coll_fmt_bytes(now, sizeof(now), rate);
			coll_fmt_bytes(was, sizeof(was), base);
			fmt_text(c.detail, sizeof(c.detail),
			         "%s/s in calls = %.0f%% of baseline %s/s", now, 100 * rate / base,
			         was);
			e = alerts_report(a, rt, &c);
		}
	return e;
}

/* ----------------------------------------------------------- latency_spike */

/* The p99 of a cell's calls, but never above the TAIL_CALLS-th slowest:
 * with fewer than a few hundred calls the p99 is the slowest call, and one
 * stalled call in a tick is not a spike. */
#define TAIL_CALLS 3
static double p99_of(const struct coll_cell *cell)
{
	double q = 1 - (double)TAIL_CALLS / (double)cell->hist.count;
	return secs(iop_hist_quantile(&cell->hist, q < 0.99 ? q : 0.99));
}

/* One row's p99 against its baseline: the 90th percentile of the recent
 * p99s, since a tail statistic jumps from tick to tick by nature; a spike
 * is worse than what one tick in ten reaches. */
static enum iop_err spike_row(struct coll_alerts *a, const struct rule_rt *rt,
                              const struct coll_key *key, const struct coll_cell *cell,
                              struct baseline *b)
{
	double p99 = p99_of(cell);
	double size = (double)cell->bytes / (double)cell->ops;
	double base = baseline_value(b, 0.9, a->scratch);
	/* much larger requests take longer: the application changed */
	double base_size = baseline_size(b, a->scratch);
	bool like = base_size < 0 || size <= LIKE_SIZE * base_size;
	double ratio = base > 0 && like ? p99 / base : 0;
	baseline_offer(b, p99, size, ratio >= rt->r.warn);
	if (base <= 0 || !like || secs(cell->time_ns) < rt->r.min_time_s)
		return IOP_OK;
	struct cond c;
	cond_init(&c, COLL_ALERT_LATENCY_SPIKE);
	c.layer = c.shown_layer = key->layer;
	c.cls = key->cls;
	c.value = ratio;
	c.baseline = base;
	char lc[32], now[16], was[16], calls[16];
	layer_cls(lc, sizeof(lc), key->layer, key->cls);
	if (key->kind == COLL_ROW_FILE) {
		char file[112];
		c.file = key->id;
		fmt_file(a, file, sizeof(file), key->id);
		fmt_text(c.subject, sizeof(c.subject), "%s %s", file, lc);
	} else {
		fmt_text(c.subject, sizeof(c.subject), "%s", lc);
	}
	coll_fmt_secs(now, sizeof(now), p99);
	coll_fmt_secs(was, sizeof(was), base);
	coll_fmt_count(calls, sizeof(calls), (double)cell->ops);
	fmt_text(c.detail, sizeof(c.detail), "p99 %s = %.1fx baseline %s (%s calls)", now, ratio,
	         was, calls);
	return alerts_report(a, rt, &c);
}

enum iop_err judge_latency_spike(struct coll_alerts *a, const struct rule_rt *rt)
{
	const struct coll_tick *k = a->tick;
	enum iop_err e = scratch_reserve(a, rt->r.baseline_n + BASELINE_MIN);
	for (uint32_t i = 0; !e && i < k->n; i++) {
		const struct coll_key *key = &k->key[i];
		const struct coll_cell *cell = &k->cell[i];
		if (cell->ops < rt->r.min_ops || cell->ops == 0 || key->layer >= NL ||
		    key->cls >= NC)
			continue;
		if (key->kind == COLL_ROW_LAYER) {
			e = spike_row(a, rt, key, cell, &a->lat[key->layer][key->cls]);
		} else if (key->kind == COLL_ROW_FILE && key->id != 0 && key->id != COLL_ID_OTHER) {
			/* a file with most of its layer's calls is the layer: the
			 * layer's alert says it, once */
			struct coll_key lk = coll_key_layer(key->layer, key->cls);
			const struct coll_cell *layer = coll_tick_find(k, &lk);
			if (layer && 2 * cell->ops >= layer->ops)
				continue;
			struct file_state *f = file_get(a, key->id, key->layer, key->cls);
			if (!f)
				continue; /* at the cap, every tracked file busy now */
			f->last_t = a->t;
			e = spike_row(a, rt, key, cell, &f->b);
		}
	}
	return e;
}

/* ----------------------------------------------------------------- hung_io */

enum iop_err judge_hung_io(struct coll_alerts *a, const struct rule_rt *rt)
{
	uint64_t end = (uint64_t)(a->t + 1) * a->tick_ns;
	for (uint32_t i = 0; i < a->n_touched; i++) {
		uint32_t r = a->touched[i];
		const struct rank_state *rs = &a->rank[r];
		if (!rs->oldest_ns || rs->oldest_ns >= end)
			continue;
		struct cond c;
		cond_init(&c, COLL_ALERT_HUNG_IO);
		c.rank = r;
		c.shown_layer = rs->oldest_layer;
		c.value = secs(end - rs->oldest_ns);
		c.baseline = rt->r.warn;
		fmt_text(c.subject, sizeof(c.subject), "rank %u", r);
		char lc[32], age[16];
		layer_cls(lc, sizeof(lc), rs->oldest_layer, rs->oldest_cls);
		coll_fmt_secs(age, sizeof(age), c.value);
		fmt_text(c.detail, sizeof(c.detail), "%s call in flight for %s", lc, age);
		enum iop_err e = alerts_report(a, rt, &c);
		if (e)
			return e;
	}
	return IOP_OK;
}

/* --------------------------------------------------------------- imbalance */

enum iop_err judge_imbalance(struct coll_alerts *a, const struct rule_rt *rt)
{
	uint64_t total = 0, max = 0;
	uint32_t max_rank = 0, movers = 0, gone = 0;
	for (uint32_t r = 0; r < a->n_rank; r++) {
		const struct rank_win *ring = a->rank[r].imb;
		if (!ring)
			continue;
		if (wound_down(a, &a->rank[r], rt->win)) {
			gone++;
			continue;
		}
		uint64_t b = 0;
		for (uint32_t i = 0; i < rt->win; i++) {
			const struct rank_win *w = win_at(ring, rt->win, a->t - i);
			b += w ? w->bytes : 0;
		}
		total += b;
		movers += b > 0;
		if (b > max) {
			max = b;
			max_rank = r;
		}
	}
	/* ranks that moved nothing count as zeros; wound-down ones not at all */
	uint64_t ranks = a->ctx->ranks ? a->ctx->ranks : a->ranks_seen;
	ranks = ranks > gone ? ranks - gone : 0;
	if (ranks < movers)
		ranks = movers;
	if (total < rt->r.min_bytes || total == 0 || ranks < 2 || ranks < rt->r.min_ranks)
		return IOP_OK;
	double others = (double)(total - max) / (double)(ranks - 1);
	/* When the others moved (almost) nothing the ratio would be unbounded:
	 * it stops at 100, which is CRIT by any sensible table. */
	double ref = others > (double)max / 100 ? others : (double)max / 100;
	struct cond c;
	cond_init(&c, COLL_ALERT_IMBALANCE);
	c.value = (double)max / ref;
	c.baseline = others;
	char moved[24], mean[24], span[16];
	coll_fmt_bytes(moved, sizeof(moved), (double)max);
	coll_fmt_bytes(mean, sizeof(mean), others);
	coll_fmt_secs(span, sizeof(span), secs(rt->win * a->tick_ns));
	if (ranks == 2)
		fmt_text(c.detail, sizeof(c.detail),
		         "rank %u moved %s in %s = %.1fx the other rank's %s", max_rank, moved,
		         span, c.value, mean);
	else
		fmt_text(c.detail, sizeof(c.detail),
		         "rank %u moved %s in %s = %.1fx the mean %s of %llu other ranks", max_rank,
		         moved, span, c.value, mean, (unsigned long long)(ranks - 1));
	return alerts_report(a, rt, &c);
}

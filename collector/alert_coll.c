/* late_arrival: the rank the others wait for in collective calls
 * (docs/alerts.md). The root matches collective calls across ranks
 * (collective.h): each rank's wait, and which rank came last. A rank that
 * comes last to most of its collective calls in the window, while the
 * others spend a large share of their time waiting for it, holds the job
 * back; the cause is before the call, in the late rank, and the waiting
 * ranks are not slow (straggler judges their own time, without the wait). */
#include "alert_int.h"

#include <stdio.h>
#include <string.h>

static double secs(uint64_t ns)
{
	return (double)ns / 1e9;
}

/* One rank's collective calls over the window. */
struct coll_sum {
	uint64_t match[NL], last[NL], late_ns[NL];
	uint64_t wait_ns, own_ns;
	uint32_t ticks; /* ticks of the window with its calls */
};

static bool coll_sum_of(const struct coll_alerts *a, const struct rule_rt *rt,
                        const struct coll_win *ring, struct coll_sum *s)
{
	memset(s, 0, sizeof(*s));
	bool any = false;
	for (uint32_t i = 0; ring && i < rt->win; i++) {
		const struct coll_win *w = &ring[ring_index(a->t - i, rt->win)];
		if (w->t != a->t - i)
			continue;
		uint64_t m = 0;
		for (unsigned l = 0; l < NL; l++) {
			s->match[l] += w->match[l];
			s->last[l] += w->last[l];
			s->late_ns[l] += w->late_ns[l];
			m += w->match[l];
		}
		s->wait_ns += w->wait_ns;
		s->own_ns += w->own_ns;
		s->ticks += m > 0;
		any |= m > 0;
	}
	return any;
}

/* The highest layer where the rank came last to most of its matched calls
 * (at least min_ops of them); -1 when none. */
static int late_layer(const struct rule_rt *rt, const struct coll_sum *s)
{
	uint64_t need = rt->r.min_ops ? rt->r.min_ops : 1;
	for (int l = NL - 1; l >= 0; l--)
		if (s->match[l] >= need && 2 * s->last[l] > s->match[l])
			return l;
	return -1;
}

/* "0-2, 5, 7-9": ranks in increasing order, as ranges; cut with "..." when
 * the buffer is short. */
struct rank_list {
	char *buf;
	size_t len, used;
	uint32_t from, to;
	bool open, cut;
};

static void list_flush(struct rank_list *r)
{
	if (!r->open || r->cut)
		return;
	char one[32];
	if (r->from == r->to)
		snprintf(one, sizeof(one), "%s%u", r->used ? ", " : "", r->from);
	else
		snprintf(one, sizeof(one), "%s%u-%u", r->used ? ", " : "", r->from, r->to);
	size_t n = strlen(one);
	if (r->used + n + 5 > r->len) {
		snprintf(r->buf + r->used, r->len - r->used, ", ...");
		r->cut = true;
		return;
	}
	memcpy(r->buf + r->used, one, n + 1);
	r->used += n;
}

static void list_add(struct rank_list *r, uint32_t rank)
{
	if (r->open && rank == r->to + 1) {
		r->to = rank;
		return;
	}
	list_flush(r);
	r->from = r->to = rank;
	r->open = true;
}

/* What the late rank was doing: its own I/O took most of its lateness, or
 * the time was spent outside I/O (computing, communicating). */
static void cause_text(char *buf, size_t len, const struct coll_sum *late, uint64_t lateness)
{
	if (late->own_ns * 2 >= lateness) {
		char own[16];
		coll_fmt_secs(own, sizeof(own), secs(late->own_ns));
		fmt_text(buf, len, "it spent %s in its own I/O", own);
	} else {
		fmt_text(buf, len, "the delay is outside I/O");
	}
}

/* The job's ranks with matched calls over the window, and the ticks they
 * were in. */
struct coll_job {
	uint64_t ticks, ranks;
};

static enum iop_err judge_rank(struct coll_alerts *a, const struct rule_rt *rt, uint32_t r,
                               const struct coll_sum *me, int layer, const struct coll_job *job)
{
	/* the others: every rank with matched calls but this one; the wait
	 * this rank caused them: its mean lateness at each call it came last
	 * to, once per other rank */
	uint64_t peers = job->ranks - 1, span_ticks = job->ticks - me->ticks;
	uint64_t wait = me->late_ns[layer] * peers;
	if (peers + 1 < (rt->r.min_ranks ? rt->r.min_ranks : 2) || span_ticks == 0 ||
	    secs(wait) < rt->r.min_time_s)
		return IOP_OK;
	double share = (double)wait / ((double)span_ticks * (double)a->tick_ns);
	if (share > 1)
		share = 1;
	uint64_t lateness = me->late_ns[layer] / me->last[layer];
	struct cond c;
	cond_init(&c, COLL_ALERT_LATE_ARRIVAL);
	c.rank = r;
	c.layer = layer;
	c.shown_layer = layer;
	c.value = share;
	c.baseline = secs(lateness);
	bool named = a->coll_file[layer] != 0;
	c.file = named ? a->coll_file[layer] : 0;
	fmt_text(c.subject, sizeof(c.subject), "rank %u", r);
	/* the ranks that waited in the window, but this one */
	char list[48] = "";
	struct rank_list rl = {.buf = list, .len = sizeof(list)};
	struct coll_sum o;
	for (uint32_t q = 0; q < a->n_rank; q++)
		if (q != r && coll_sum_of(a, rt, a->rank[q].coll, &o) && o.wait_ns)
			list_add(&rl, q);
	list_flush(&rl);
	char late[16], waited[16], file[96] = "", cause[64];
	coll_fmt_secs(late, sizeof(late), secs(lateness));
	coll_fmt_secs(waited, sizeof(waited), secs(wait));
	if (named) {
		char f[88];
		fmt_file(a, f, sizeof(f), c.file);
		fmt_text(file, sizeof(file), " on %s", f);
	}
	cause_text(cause, sizeof(cause), me, me->late_ns[layer]);
	unsigned cls = named ? a->coll_cls[layer] : IOP_CLASS_WRITE;
	fmt_text(c.detail, sizeof(c.detail),
	         "arrives %s late to collective %s %s calls%s (last at %llu of %llu); "
	         "ranks %s waited %s (%.0f%% of their time): %s",
	         late, iop_layer_name((enum iop_layer)layer),
	         iop_class_name((enum iop_class)cls), file, (unsigned long long)me->last[layer],
	         (unsigned long long)me->match[layer], list[0] ? list : "-", waited, 100 * share,
	         cause);
	return alerts_report(a, rt, &c);
}

enum iop_err judge_late_arrival(struct coll_alerts *a, const struct rule_rt *rt)
{
	struct coll_job job = {0};
	struct coll_sum s;
	for (uint32_t q = 0; q < a->n_rank; q++) {
		if (!coll_sum_of(a, rt, a->rank[q].coll, &s))
			continue;
		job.ranks++;
		job.ticks += s.ticks;
	}
	if (job.ranks < 2)
		return IOP_OK;
	for (uint32_t r = 0; r < a->n_rank; r++) {
		if (!coll_sum_of(a, rt, a->rank[r].coll, &s))
			continue;
		int layer = late_layer(rt, &s);
		if (layer < 0)
			continue;
		enum iop_err e = judge_rank(a, rt, r, &s, layer, &job);
		if (e)
			return e;
	}
	return IOP_OK;
}

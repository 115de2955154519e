/* The alert engine: for each closed tick, summarise it, let every enabled
 * rule report the subjects whose condition holds, then move each alert
 * through start / ongoing / end.
 *
 * An alert's identity is (kind, rank, file, layer, class). Identities live
 * in an insertion-ordered array with an open-addressing index, so alerts of
 * one tick are reported in a stable order. State is kept in tick numbers
 * (when the condition began to hold, when it last held, when the alert last
 * spoke, when it ended), which makes skipped ticks count as ticks where
 * nothing held, and lets a subject that is not judged at all (a rank that
 * went quiet) end like one judged false. An identity that is not active,
 * not holding and not inside its restart interval is forgotten. */
#include "alert_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NEVER INT64_MIN

struct ident {
	struct cond c; /* identity, and the latest value and text */
	bool active;
	enum coll_alert_sev level; /* when c.value was reported */
	enum coll_alert_sev sev;   /* last sent in a start or ongoing */
	enum coll_alert_sev peak;
	int64_t hold_since, last_true, last_emit, ended_at;
	uint64_t start_ns;
	double peak_value, peak_baseline;
	char peak_detail[DETAIL_LEN];
	size_t hist; /* history record, SIZE_MAX when not kept */
};

void cond_init(struct cond *c, enum coll_alert_kind kind)
{
	memset(c, 0, sizeof(*c));
	c->kind = kind;
	c->rank = COLL_RANK_NONE;
	c->layer = -1;
	c->cls = -1;
	c->shown_layer = -1;
}

/* --------------------------------------------------------------- identities */

static bool same_subject(const struct cond *x, const struct cond *y)
{
	return x->kind == y->kind && x->rank == y->rank && x->file == y->file &&
	       x->node == y->node && x->layer == y->layer && x->cls == y->cls;
}

static uint32_t subject_hash(const struct cond *c)
{
	uint64_t h = c->file ^ ((uint64_t)c->rank << 20) ^ ((uint64_t)c->node << 24) ^
	             ((uint64_t)c->kind << 52) ^
	             ((uint64_t)(c->layer + 1) << 56) ^ ((uint64_t)(c->cls + 1) << 60);
	h ^= h >> 31;
	h *= UINT64_C(0x9e3779b97f4a7c15);
	return (uint32_t)(h >> 32);
}

static uint32_t id_probe(const struct coll_alerts *a, const struct cond *c)
{
	uint32_t mask = a->n_id_slots - 1, i = subject_hash(c) & mask;
	while (a->id_slot[i] && !same_subject(&a->id[a->id_slot[i] - 1].c, c))
		i = (i + 1) & mask;
	return i;
}

static enum iop_err id_reindex(struct coll_alerts *a, uint32_t n_slots)
{
	uint32_t *slot = calloc(n_slots, sizeof(*slot));
	if (!slot)
		return IOP_ERR_NOMEM;
	free(a->id_slot);
	a->id_slot = slot;
	a->n_id_slots = n_slots;
	for (uint32_t i = 0; i < a->n_id; i++)
		a->id_slot[id_probe(a, &a->id[i].c)] = i + 1;
	return IOP_OK;
}

static enum iop_err id_get(struct coll_alerts *a, const struct cond *c, struct ident **out)
{
	if (a->n_id_slots) {
		uint32_t s = a->id_slot[id_probe(a, c)];
		if (s) {
			*out = &a->id[s - 1];
			return IOP_OK;
		}
	}
	if (a->n_id == a->cap_id) {
		uint32_t cap = a->cap_id ? a->cap_id * 2 : 32;
		struct ident *id = realloc(a->id, cap * sizeof(*id));
		if (!id)
			return IOP_ERR_NOMEM;
		a->id = id;
		a->cap_id = cap;
		enum iop_err e = id_reindex(a, cap * 4);
		if (e)
			return e;
	}
	struct ident *x = &a->id[a->n_id++];
	memset(x, 0, sizeof(*x));
	x->c = *c;
	x->hold_since = x->last_true = x->last_emit = x->ended_at = NEVER;
	x->hist = SIZE_MAX;
	a->id_slot[id_probe(a, c)] = a->n_id;
	*out = x;
	return IOP_OK;
}

/* Drops identities that no longer hold any state worth keeping. */
static void id_purge(struct coll_alerts *a)
{
	uint32_t kept = 0;
	for (uint32_t i = 0; i < a->n_id; i++) {
		struct ident *x = &a->id[i];
		const struct rule_rt *rt = &a->rt[x->c.kind];
		bool holding = x->last_true == a->t;
		bool cooling = x->ended_at != NEVER && a->t - x->ended_at < (int64_t)rt->mi;
		if (x->active || holding || cooling)
			a->id[kept++] = *x;
	}
	if (kept != a->n_id) {
		a->n_id = kept;
		/* rebuilt in place: the index needs no more room than before */
		memset(a->id_slot, 0, a->n_id_slots * sizeof(*a->id_slot));
		for (uint32_t i = 0; i < a->n_id; i++)
			a->id_slot[id_probe(a, &a->id[i].c)] = i + 1;
	}
}

/* ------------------------------------------------------------------ report */

static enum coll_alert_sev level_of(const struct rule_rt *rt, double v)
{
	return v >= rt->r.crit ? COLL_SEV_CRIT : v >= rt->r.warn ? COLL_SEV_WARN : COLL_SEV_NONE;
}

enum iop_err alerts_report(struct coll_alerts *a, const struct rule_rt *rt, const struct cond *c)
{
	enum coll_alert_sev level = level_of(rt, c->value);
	if (level == COLL_SEV_NONE || !isfinite(c->value))
		return IOP_OK;
	struct ident *x;
	enum iop_err e = id_get(a, c, &x);
	if (e)
		return e;
	if (x->last_true == a->t &&
	    (x->level > level || (x->level == level && x->c.value >= c->value)))
		return IOP_OK; /* reported twice in one tick: keep the worse */
	if (x->last_true != a->t && x->last_true != a->t - 1)
		x->hold_since = a->t;
	x->last_true = a->t;
	x->level = level;
	x->c = *c;
	return IOP_OK;
}

/* --------------------------------------------------------------- emission */

static void join(char *buf, size_t len, const char *subject, const char *rest)
{
	fmt_text(buf, len, "%s%s%s", subject, *subject ? " " : "", rest);
}

static uint64_t tick_end_ns(const struct coll_alerts *a)
{
	return (uint64_t)(a->t + 1) * a->tick_ns;
}

static void history_start(struct coll_alerts *a, struct ident *x)
{
	if (a->n_hist == a->cap_hist) {
		size_t cap = a->cap_hist ? a->cap_hist * 2 : 64;
		struct coll_alert_record *h = NULL;
		if (cap <= COLL_ALERTS_MAX_HISTORY)
			h = realloc(a->hist, cap * sizeof(*h));
		if (!h) {
			a->hist_dropped++;
			return;
		}
		a->hist = h;
		a->cap_hist = cap;
	}
	x->hist = a->n_hist++;
	struct coll_alert_record *r = &a->hist[x->hist];
	*r = (struct coll_alert_record){.kind = x->c.kind,
	                                .rank = x->c.rank,
	                                .file = x->c.file,
	                                .node = x->c.node,
	                                .layer = x->c.shown_layer,
	                                .start_ns = x->start_ns};
}

static void history_peak(struct coll_alerts *a, const struct ident *x)
{
	if (x->hist == SIZE_MAX)
		return;
	struct coll_alert_record *r = &a->hist[x->hist];
	r->severity = x->peak;
	r->peak_value = x->peak_value;
	r->baseline = x->peak_baseline;
	join(r->message, sizeof(r->message), x->c.subject, x->peak_detail);
}

/* Takes this tick's value as the peak when it is worse. */
static void update_peak(struct coll_alerts *a, struct ident *x)
{
	if (x->peak > x->level || (x->peak == x->level && x->peak_value >= x->c.value))
		return;
	x->peak = x->level;
	x->peak_value = x->c.value;
	x->peak_baseline = x->c.baseline;
	fmt_text(x->peak_detail, sizeof(x->peak_detail), "%s", x->c.detail);
	history_peak(a, x);
}

static const char *sev_word(enum coll_alert_sev s)
{
	return s == COLL_SEV_CRIT ? "CRIT" : "WARN";
}

static void emit(struct coll_alerts *a, struct ident *x, enum coll_alert_state state, uint64_t t_ns,
                 bool escalated, coll_alert_fn cb, void *arg)
{
	char msg[SUBJECT_LEN + DETAIL_LEN + 64];
	struct coll_alert al = {.state = state,
	                        .kind = x->c.kind,
	                        .escalated = escalated,
	                        .start_ns = x->start_ns,
	                        .t_ns = t_ns,
	                        .rank = x->c.rank,
	                        .file = x->c.file,
	                        .node = x->c.node,
	                        .layer = x->c.shown_layer,
	                        .message = msg};
	if (state == COLL_ALERT_END) {
		char dur[32], rest[DETAIL_LEN + 64];
		coll_fmt_secs(dur, sizeof(dur),
		         t_ns > x->start_ns ? (double)(t_ns - x->start_ns) / 1e9 : 0);
		fmt_text(rest, sizeof(rest), "ended after %s, peak %s: %s", dur, sev_word(x->peak),
		         x->peak_detail);
		join(msg, sizeof(msg), x->c.subject, rest);
		al.severity = x->peak;
		al.value = x->peak_value;
		al.baseline = x->peak_baseline;
	} else {
		join(msg, sizeof(msg), x->c.subject, x->c.detail);
		al.severity = x->level;
		al.value = x->c.value;
		al.baseline = x->c.baseline;
	}
	if (cb)
		cb(arg, &al);
}

static void end_alert(struct coll_alerts *a, struct ident *x, uint64_t t_ns, coll_alert_fn cb,
                      void *arg)
{
	emit(a, x, COLL_ALERT_END, t_ns, false, cb, arg);
	if (x->hist != SIZE_MAX)
		a->hist[x->hist].end_ns = t_ns;
	x->active = false;
	x->ended_at = a->t;
	x->hist = SIZE_MAX;
}

static void step(struct coll_alerts *a, coll_alert_fn cb, void *arg)
{
	for (uint32_t i = 0; i < a->n_id; i++) {
		struct ident *x = &a->id[i];
		const struct rule_rt *rt = &a->rt[x->c.kind];
		if (x->last_true == a->t && !x->active) {
			bool held = a->t - x->hold_since + 1 >= (int64_t)rt->md;
			bool rested = x->ended_at == NEVER || a->t - x->ended_at >= (int64_t)rt->mi;
			if (!held || !rested)
				continue;
			x->active = true;
			x->start_ns = (uint64_t)x->hold_since * a->tick_ns;
			x->sev = x->level;
			x->peak = COLL_SEV_NONE;
			x->last_emit = a->t;
			history_start(a, x);
			update_peak(a, x);
			emit(a, x, COLL_ALERT_START, tick_end_ns(a), false, cb, arg);
		} else if (x->last_true == a->t) {
			update_peak(a, x);
			bool escalated = x->level > x->sev;
			if (escalated || a->t - x->last_emit >= (int64_t)rt->mi) {
				x->sev = x->level;
				x->last_emit = a->t;
				emit(a, x, COLL_ALERT_ONGOING, tick_end_ns(a), escalated, cb, arg);
			}
		} else if (x->active && a->t - x->last_true >= (int64_t)rt->md) {
			end_alert(a, x, tick_end_ns(a), cb, arg);
		}
	}
	id_purge(a);
}

/* ------------------------------------------------------------------ engine */

const rule_judge_fn rule_judges[COLL_ALERT__COUNT] = {
#define X(id, name, scope) [COLL_ALERT_##id] = judge_##name,
    COLL_ALERT_KINDS(X)
#undef X
};

static bool rule_ok(const struct coll_rule *r)
{
	/* NaN fails every comparison, so each test is written to pass only
	 * for a number in range. */
	return r->warn >= 0 && r->crit >= r->warn && r->min_duration_s >= 0 &&
	       r->min_duration_s <= 3600 && r->min_interval_s >= 0 && r->min_interval_s <= 86400 &&
	       r->window_s >= 0 && r->window_s <= 600 && r->min_time_s >= 0 && r->min_z >= 0 &&
	       r->pair_ratio >= 0;
}

enum iop_err coll_alerts_new(const struct coll_rules *rules, struct coll_alerts **out)
{
	*out = NULL;
	for (unsigned k = 0; k < COLL_ALERT__COUNT; k++)
		if (!rule_ok(&rules->rule[k]))
			return IOP_ERR_INVAL;
	struct coll_alerts *a = calloc(1, sizeof(*a));
	if (!a)
		return IOP_ERR_NOMEM;
	a->rules = *rules;
	if (a->rules.max_files == 0)
		a->rules.max_files = 1;
	*out = a;
	return IOP_OK;
}

void coll_alerts_free(struct coll_alerts *a)
{
	if (!a)
		return;
	sum_free(a);
	free(a->id);
	free(a->id_slot);
	free(a->hist);
	free(a);
}

static enum iop_err first_tick(struct coll_alerts *a, const struct coll_tick *tick)
{
	if (tick->tick_ns == 0)
		return IOP_ERR_INVAL;
	a->tick_ns = tick->tick_ns;
	for (unsigned k = 0; k < COLL_ALERT__COUNT; k++) {
		struct rule_rt *rt = &a->rt[k];
		rt->r = a->rules.rule[k];
		rt->kind = (enum coll_alert_kind)k;
		rt->md = ticks_of(a, rt->r.min_duration_s, 1);
		rt->mi = ticks_of(a, rt->r.min_interval_s, 0);
		rt->win = ticks_of(a, rt->r.window_s, 1);
	}
	enum iop_err e = sum_setup(a);
	if (e)
		return e;
	a->started = true;
	return IOP_OK;
}

enum iop_err coll_alerts_tick(struct coll_alerts *a, const struct coll_tick *tick,
                              const struct coll_alert_ctx *ctx, coll_alert_fn cb, void *arg)
{
	static const struct coll_alert_ctx no_ctx;
	enum iop_err e;
	if (!a->started) {
		e = first_tick(a, tick);
		if (e)
			return e;
	} else if (tick->tick_ns != a->tick_ns || tick->t <= a->t) {
		return IOP_ERR_STATE;
	}
	a->t = tick->t;
	a->tick = tick;
	a->ctx = ctx ? ctx : &no_ctx;
	e = sum_tick(a);
	if (!e && a->sum_hook)
		a->sum_hook(a->cur, a->sum_hook_arg);
	for (unsigned k = 0; !e && k < COLL_ALERT__COUNT; k++)
		if (a->rt[k].r.enabled)
			e = rule_judges[k](a, &a->rt[k]);
	if (!e)
		step(a, cb, arg);
	a->tick = NULL;
	a->ctx = NULL;
	return e;
}

void coll_alerts_finish(struct coll_alerts *a, uint64_t t_end_ns, coll_alert_fn cb, void *arg)
{
	for (uint32_t i = 0; i < a->n_id; i++)
		if (a->id[i].active)
			end_alert(a, &a->id[i], t_end_ns, cb, arg);
}

const struct coll_alert_record *coll_alerts_history(const struct coll_alerts *a, size_t *n,
                                                    uint64_t *not_kept)
{
	*n = a->n_hist;
	if (not_kept)
		*not_kept = a->hist_dropped;
	return a->hist;
}

/* Synthetic ticks and a small job model for the alert tests; see
 * alert_synth.h. Randomness is a seeded splitmix64 so failures reproduce. */
#include "alert_synth.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "events.h"

void synth_init(struct synth *s, uint64_t seed)
{
	coll_tick_init(&s->tick, SYNTH_T0, SYNTH_TICK);
	s->rng = seed;
}

void synth_free(struct synth *s)
{
	coll_tick_free(&s->tick);
}

void synth_begin(struct synth *s, int64_t t)
{
	coll_tick_reset(&s->tick, t);
}

double synth_uniform(struct synth *s)
{
	uint64_t z = (s->rng += UINT64_C(0x9e3779b97f4a7c15));
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	z ^= z >> 31;
	return (double)(z >> 11) * 0x1p-53;
}

static struct coll_cell *row(struct synth *s, struct coll_key key)
{
	struct coll_cell *c;
	if (coll_tick_row(&s->tick, &key, &c))
		abort(); /* a test cannot go on without memory */
	return c;
}

/* Calls of each pattern among n (consecutive, sequential, strided). */
struct pats {
	uint64_t consec, fwd, stride;
};

static void add_calls(struct synth *s, struct coll_cell *cell, const struct synth_calls *c,
                      const uint64_t *dur, struct pats seq)
{
	bool data = c->cls != IOP_CLASS_META;
	uint64_t total = 0;
	for (uint64_t i = 0; i < c->n; i++) {
		coll_cell_add_call(cell, dur[i], c->bytes, data, false);
		total += dur[i];
	}
	/* children take 80 % of their parent's time; a call without children
	 * leaves excl_ns 0 as a leaf may */
	if (c->children)
		cell->excl_ns += total / 5;
	cell->busy_ns += total;
	if (cell->busy_ns > s->tick.tick_ns)
		cell->busy_ns = s->tick.tick_ns;
	cell->child_ops += c->n * c->children;
	if (c->collective && data)
		cell->coll_ops += c->n;
	if (c->lock && !data)
		cell->lock_ns += total;
	cell->child_bytes += c->n * c->children * c->child_bytes;
	if (c->seq >= 0 && data) {
		cell->off_ops += c->n;
		cell->consec_ops += seq.consec;
		cell->fwd_ops += seq.fwd;
		cell->stride_ops += seq.stride;
	}
}

void synth_calls(struct synth *s, const struct synth_calls *c)
{
	if (c->n == 0)
		return;
	uint64_t *dur = malloc(c->n * sizeof(*dur));
	if (!dur)
		abort();
	for (uint64_t i = 0; i < c->n; i++) {
		double f = 1 + c->jitter * (2 * synth_uniform(s) - 1);
		if (c->tail_p > 0 && synth_uniform(s) < c->tail_p)
			f *= c->tail_factor;
		dur[i] = (uint64_t)(c->lat_s * f * 1e9) + 1;
	}
	struct pats seq = {(uint64_t)((double)c->n * (c->seq < 0 ? 0 : c->seq) + 0.5),
	                   (uint64_t)((double)c->n * c->fwd + 0.5),
	                   (uint64_t)((double)c->n * c->stride + 0.5)};
	add_calls(s, row(s, coll_key_rank(c->rank, c->layer, c->cls)), c, dur, seq);
	add_calls(s, row(s, coll_key_layer(c->layer, c->cls)), c, dur, seq);
	if (c->file)
		add_calls(s, row(s, coll_key_file(c->file, c->layer, c->cls)), c, dur, seq);
	free(dur);
}

void synth_inflight(struct synth *s, uint32_t rank, unsigned layer, unsigned cls, uint64_t start_ns)
{
	struct coll_cell *keys[] = {row(s, coll_key_rank(rank, layer, cls)),
	                            row(s, coll_key_layer(layer, cls))};
	for (unsigned i = 0; i < 2; i++) {
		struct coll_cell *c = keys[i];
		c->inflight++;
		if (!c->oldest_ns || start_ns < c->oldest_ns)
			c->oldest_ns = start_ns;
		c->busy_ns = s->tick.tick_ns;
	}
}

/* ------------------------------------------------------------------ the job */

void synth_job_default(struct synth_job *j, uint32_t ranks)
{
	*j = (struct synth_job){.ranks = ranks,
	                        .cls = IOP_CLASS_WRITE,
	                        .calls = 20,
	                        .bytes = MIB,
	                        .lat_s = 2e-3,
	                        .jitter = 0.3,
	                        .seq = 1,
	                        .files = 1,
	                        .slow_rank = COLL_RANK_NONE,
	                        .slow_factor = 1,
	                        .all_factor = 1,
	                        .spike_factor = 1,
	                        .heavy_rank = COLL_RANK_NONE,
	                        .heavy_factor = 1};
}

static void job_rank(struct synth *s, const struct synth_job *j, uint32_t r, bool phase_start)
{
	uint64_t file = r % (j->files ? j->files : 1) + 1;
	double f = j->all_factor * (r == j->slow_rank ? j->slow_factor : 1);
	double lat = j->lat_s * f * (file == j->spike_file ? j->spike_factor : 1);
	/* a slower rank spends the same time in I/O and so makes fewer calls */
	uint64_t n = (uint64_t)((double)j->calls / f + 0.5);
	if (n == 0)
		n = 1;
	uint64_t bytes = j->bytes;
	if (r == j->heavy_rank) { /* larger blocks, which take longer */
		bytes = (uint64_t)((double)bytes * j->heavy_factor);
		lat *= j->heavy_factor;
	}
	unsigned top = j->mpiio ? IOP_LAYER_MPIIO : IOP_LAYER_POSIX;
	if (phase_start)
		synth_calls(s, &(struct synth_calls){.rank = r,
		                                     .layer = top,
		                                     .cls = IOP_CLASS_META,
		                                     .file = file,
		                                     .n = 2,
		                                     .lat_s = 200e-6,
		                                     .jitter = j->jitter,
		                                     .seq = -1});
	bool aggregator = j->mpiio && r % 8 == 0;
	synth_calls(s, &(struct synth_calls){.rank = r,
	                                     .layer = top,
	                                     .cls = j->cls,
	                                     .file = file,
	                                     .n = n,
	                                     .bytes = bytes,
	                                     .lat_s = lat,
	                                     .jitter = j->jitter,
	                                     .tail_p = j->tail_p,
	                                     .tail_factor = j->tail_factor,
	                                     .seq = j->mpiio ? 0 : j->seq,
	                                     .children = aggregator ? 8 : 0,
	                                     .child_bytes = bytes,
	                                     .collective = j->mpiio});
	if (aggregator)
		synth_calls(s, &(struct synth_calls){.rank = r,
		                                     .layer = IOP_LAYER_POSIX,
		                                     .cls = j->cls,
		                                     .file = file,
		                                     .n = n * 8,
		                                     .bytes = bytes,
		                                     .lat_s = lat / 10,
		                                     .jitter = j->jitter,
		                                     .seq = 1});
}

void synth_job_tick(struct synth *s, const struct synth_job *j, int64_t i)
{
	synth_begin(s, SYNTH_T0 + i);
	unsigned pos = j->period ? (unsigned)(i % j->period) : 1;
	if (j->period && pos >= j->burst)
		return; /* computing */
	for (uint32_t r = 0; r < j->ranks; r++)
		job_rank(s, j, r, j->period && pos == 0);
}

/* ------------------------------------------------------------------ the log */

void synth_collect(void *arg, const struct coll_alert *a)
{
	struct synth_log *l = arg;
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 16;
		l->v = realloc(l->v, l->cap * sizeof(*l->v));
		if (!l->v)
			abort();
	}
	struct synth_alert *x = &l->v[l->n++];
	x->a = *a;
	x->tick = l->now;
	snprintf(x->message, sizeof(x->message), "%s", a->message);
	x->a.message = NULL; /* the engine's text dies with the callback */
}

void synth_log_free(struct synth_log *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}

size_t synth_count(const struct synth_log *l, int kind, int state)
{
	size_t n = 0;
	for (size_t i = 0; i < l->n; i++)
		n += (kind < 0 || (int)l->v[i].a.kind == kind) &&
		     (state < 0 || (int)l->v[i].a.state == state);
	return n;
}

const struct synth_alert *synth_find(const struct synth_log *l, enum coll_alert_kind kind,
                                     int state)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].a.kind == kind && (state < 0 || (int)l->v[i].a.state == state))
			return &l->v[i];
	return NULL;
}

void synth_dump(const struct synth_log *l)
{
	static const char *const states[] = {"start", "ongoing", "end"};
	for (size_t i = 0; i < l->n; i++) {
		const struct synth_alert *x = &l->v[i];
		printf("  tick %lld %s %s %s: %s\n", (long long)x->tick, states[x->a.state],
		       x->a.severity == COLL_SEV_CRIT ? "CRIT" : "WARN",
		       coll_alert_kind_name(x->a.kind), x->message);
	}
}

void synth_run(struct synth *s, struct coll_alerts *a, const struct synth_job *j,
               const struct coll_alert_ctx *ctx, struct synth_log *log, int64_t from, int64_t to)
{
	for (int64_t i = from; i < to; i++) {
		synth_job_tick(s, j, i);
		log->now = i;
		if (coll_alerts_tick(a, &s->tick, ctx, synth_collect, log))
			abort();
	}
}

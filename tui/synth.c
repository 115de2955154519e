/* The synthetic state of synth.h. */
#include "synth.h"

#include <stdio.h>
#include <string.h>

#include "events.h"
#include "frame.h"
#include "hash.h"

static enum iop_err add_row(struct coll_delta *d, struct coll_key k, uint64_t ops, uint64_t bytes,
                            uint64_t lat_ns)
{
	struct coll_cell *c;
	enum iop_err e = coll_tick_row(&d->tick, &k, &c);
	if (e)
		return e;
	c->ops += ops;
	c->bytes += bytes;
	c->time_ns += ops * lat_ns;
	c->excl_ns += ops * lat_ns;
	c->busy_ns += ops * lat_ns;
	/* a spread of latencies, as real calls have: half at lat, a quarter at
	 * 3x, the rest at a third */
	e = iop_hist_record_n(&c->hist, lat_ns, ops / 2);
	if (!e && ops / 4)
		e = iop_hist_record_n(&c->hist, lat_ns * 3, ops / 4);
	if (!e && ops - ops / 2 - ops / 4)
		e = iop_hist_record_n(&c->hist, lat_ns / 3, ops - ops / 2 - ops / 4);
	return e;
}

static enum iop_err first_tick(struct coll_delta *d, uint32_t ranks)
{
	char name[64];
	enum iop_err e = IOP_OK;
	for (uint32_t n = 0; n * 64 < ranks && !e; n++) {
		snprintf(name, sizeof name, "node%03u", n);
		e = coll_delta_add_name(d, iop_hash_str(name), IOP_NAME_HOST, name, (uint32_t)strlen(name));
	}
	for (uint32_t r = 0; r < ranks && !e; r++) {
		snprintf(name, sizeof name, "/scratch/job/out.%u", r);
		e = coll_delta_add_name(d, iop_hash_str(name), IOP_NAME_FILE, name, (uint32_t)strlen(name));
		snprintf(name, sizeof name, "node%03u", r / 64);
		struct coll_proc p = {.t_ns = (uint64_t)d->tick.t * 1000000000ull, .rank = r,
		                      .node = (uint32_t)iop_hash_str(name), .pid = 1000 + r,
		                      .state = COLL_PROC_JOINED};
		if (!e)
			e = coll_delta_add_proc(d, &p);
	}
	return e;
}

static enum iop_err one_tick(struct coll_delta *d, uint32_t ranks, uint32_t slow, uint32_t i)
{
	char path[64];
	enum iop_err e = IOP_OK;
	for (uint32_t r = 0; r < ranks && !e; r++) {
		bool s = r == slow;
		uint64_t ops = s ? 10 : 100 + (r + i) % 7, bytes = ops * 65536;
		uint64_t lat = (s ? 2000000 : 200000) + (uint64_t)(r % 13) * 1000;
		snprintf(path, sizeof path, "/scratch/job/out.%u", r);
		uint64_t file = iop_hash_str(path);
		e = add_row(d, coll_key_rank(r, IOP_LAYER_POSIX, IOP_CLASS_WRITE), ops, bytes, lat);
		if (!e)
			e = add_row(d, coll_key_file(file, IOP_LAYER_POSIX, IOP_CLASS_WRITE), ops, bytes, lat);
		if (!e)
			e = add_row(d, coll_key_layer(IOP_LAYER_POSIX, IOP_CLASS_WRITE), ops, bytes, lat);
		/* counters are each process's cumulative values (delta.h) */
		uint64_t cum_ops = 0, cum_time = 0;
		for (uint32_t j = 0; j <= i; j++) {
			uint64_t o = s ? 10 : 100 + (r + j) % 7;
			cum_ops += o;
			cum_time += o * lat;
		}
		struct coll_counter c = {.file = file, .ops = cum_ops, .bytes = cum_ops * 65536,
		                         .time_ns = cum_time, .rank = r, .pid = 1000 + r,
		                         .layer = IOP_LAYER_POSIX, .cls = IOP_CLASS_WRITE};
		if (!e)
			e = coll_delta_add_counter(d, &c);
	}
	return e;
}

enum iop_err tui_synth_state(struct coll_state *s, uint32_t ranks, uint32_t ticks, uint32_t slow)
{
	return tui_synth_state_budget(s, ranks, ticks, slow, COLL_HISTORY_BYTES);
}

enum iop_err tui_synth_state_budget(struct coll_state *s, uint32_t ranks, uint32_t ticks,
                                    uint32_t slow, uint64_t max_bytes)
{
	return tui_synth_state_lean(s, ranks, ticks, slow, max_bytes, 0);
}

enum iop_err tui_synth_state_lean(struct coll_state *s, uint32_t ranks, uint32_t ticks,
                                  uint32_t slow, uint64_t max_bytes, uint32_t detail)
{
	struct coll_history_cfg h;
	coll_history_cfg_default(&h, 1000000000ull);
	h.max_bytes = max_bytes;
	coll_state_init(s, 1000000000ull, &h);
	struct coll_delta d;
	coll_delta_init(&d, TUI_SYNTH_T0, 1000000000ull);
	enum iop_err e = IOP_OK;
	for (uint32_t i = 0; i < ticks && !e; i++) {
		coll_delta_reset(&d, TUI_SYNTH_T0 + (int64_t)i);
		if (i == 0)
			e = first_tick(&d, ranks);
		if (!e)
			e = one_tick(&d, ranks, slow, i);
		if (!e && detail > 1 && (d.tick.t + 1) % detail != 0)
			e = coll_tick_thin(&d.tick); /* a lean tick (record.h) */
		if (!e)
			e = coll_state_apply(s, &d);
	}
	s->detail_ticks = detail;
	coll_delta_free(&d);
	return e;
}

static const struct coll_state *src_state(void *self)
{
	return self;
}

static const struct coll_alert_record *src_no_alerts(void *self, size_t *n)
{
	*n = 0;
	return NULL;
}

static void src_job(void *self, struct tui_job *out)
{
	*out = (struct tui_job){.id = 42, .start_ns = (uint64_t)TUI_SYNTH_T0 * 1000000000ull,
	                        .tick_ns = 1000000000ull};
}

static int src_no_fd(void *self)
{
	return -1;
}

static void src_range(void *self, int64_t *first, int64_t *last)
{
	tui_state_range(self, first, last);
}

static const struct tui_source_ops synth_ops = {
	.name = "synth", .mode = TUI_SRC_MODE_LIVE, .state = src_state, .alerts = src_no_alerts,
	.job = src_job, .fd = src_no_fd, .range = src_range};

struct tui_source tui_synth_source(struct coll_state *s)
{
	return (struct tui_source){&synth_ops, s};
}

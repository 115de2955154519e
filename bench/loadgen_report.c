/* iop-loadgen's report (see loadgen.h): one JSON object on stdout saying
 * what was generated and what went out, per rank and in total, so a test
 * can compare a collector's totals with it exactly. The per-rank "counters"
 * and "events" trees have the shape of iop-sink's (tests/support/sink_json.c):
 * {layer: {class: {...}}} with only non-empty classes, so the two compare
 * key by key:
 *
 *   counters  what the cumulative counters say (every generated call,
 *             delivered as an event or not): ops, bytes, time_ns, errors
 *   events    the event records in frames the sockets accepted: ops, bytes,
 *             errors
 *
 * Rates: a rank's active time is its schedule's position when it stopped
 * (k events due at k / E seconds, skipped slots included), so a thread that
 * could not keep up shows a lower achieved rate. */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "loadgen.h"

struct tally {
	uint64_t ops[IOP_LAYER__COUNT][IOP_CLASS__COUNT], bytes[IOP_LAYER__COUNT][IOP_CLASS__COUNT];
	uint64_t time_ns[IOP_LAYER__COUNT][IOP_CLASS__COUNT],
	    errors[IOP_LAYER__COUNT][IOP_CLASS__COUNT];
};

static bool oom;

static void set(json_t *o, const char *key, json_t *v)
{
	if (!o || json_object_set_new(o, key, v) != 0)
		oom = true;
}

static json_t *num(uint64_t v)
{
	return json_integer(v > INT64_MAX ? INT64_MAX : (json_int_t)v);
}

static void add_tally(struct tally *d, const struct tally *s)
{
	for (int l = 0; l < IOP_LAYER__COUNT; l++)
		for (int c = 0; c < IOP_CLASS__COUNT; c++) {
			d->ops[l][c] += s->ops[l][c];
			d->bytes[l][c] += s->bytes[l][c];
			d->time_ns[l][c] += s->time_ns[l][c];
			d->errors[l][c] += s->errors[l][c];
		}
}

static void counters_of(const struct lg_rank *r, struct tally *t)
{
	*t = (struct tally){0};
	for (uint32_t i = 0; i < r->cum_files * LG_CELLS; i++) {
		unsigned l = i % LG_CELLS / IOP_CLASS__COUNT, c = i % IOP_CLASS__COUNT;
		t->ops[l][c] += r->cum[i].ops;
		t->bytes[l][c] += r->cum[i].bytes;
		t->time_ns[l][c] += r->cum[i].time_ns;
		t->errors[l][c] += r->cum[i].errors;
	}
}

static void events_of(const struct lg_rank *r, struct tally *t)
{
	*t = (struct tally){0};
	memcpy(t->ops, r->sent.ops, sizeof t->ops);
	memcpy(t->bytes, r->sent.bytes, sizeof t->bytes);
	memcpy(t->errors, r->sent.errors, sizeof t->errors);
}

/* {layer: {class: {...}}}, non-empty classes only; with_time: counters. */
static json_t *tree(const struct tally *t, bool with_time)
{
	json_t *o = json_object();
	for (int l = 0; l < IOP_LAYER__COUNT; l++) {
		json_t *lo = NULL;
		for (int c = 0; c < IOP_CLASS__COUNT; c++) {
			uint64_t time = with_time ? t->time_ns[l][c] : 0;
			if (!(t->ops[l][c] | t->bytes[l][c] | t->errors[l][c] | time))
				continue;
			json_t *co = json_object();
			set(co, "ops", num(t->ops[l][c]));
			set(co, "bytes", num(t->bytes[l][c]));
			if (with_time)
				set(co, "time_ns", num(time));
			set(co, "errors", num(t->errors[l][c]));
			if (!lo)
				lo = json_object();
			set(lo, iop_class_name(c), co);
		}
		if (lo)
			set(o, iop_layer_name(l), lo);
	}
	return o;
}

static double active_s(const struct lg_rank *r, const struct lg_opts *o)
{
	return (double)r->sched_k / o->events_per_s;
}

static double rate(uint64_t n, double s)
{
	return s > 0 ? (double)n / s : 0;
}

/* The counts a rank and the totals both report, in this order. */
enum {
	C_EVENTS,
	C_SENT,
	C_DROPPED,
	C_FRAMES,
	C_REFUSED,
	C_WIRE,
	C_INFLIGHT,
	C_SKIPPED,
	C_COLLS,
	C_COLL_SKIPPED,
	C__COUNT
};
static const char *const count_names[C__COUNT] = {
    "events",     "events_sent",      "dropped", "frames",      "refused_sends",
    "wire_bytes", "inflight_records", "skipped", "collectives", "collectives_skipped"};

static void counts_of(const struct lg_rank *r, uint64_t v[C__COUNT])
{
	const uint64_t c[C__COUNT] = {r->events,  r->events_sent, r->dropped,  r->frames,
	                              r->refused, r->wire_bytes,  r->inflight, r->skipped,
	                              r->colls,   r->coll_skipped};
	memcpy(v, c, sizeof c);
}

/* The counts, and the two trees: what counters say, what events added up to. */
static void set_sums(json_t *j, const uint64_t v[C__COUNT], const struct tally *c,
                     const struct tally *e)
{
	for (int k = 0; k < C__COUNT; k++)
		set(j, count_names[k], num(v[k]));
	set(j, "counters", tree(c, true));
	set(j, "events_by_layer", tree(e, false));
}

static json_t *rank_json(const struct lg_rank *r, const struct lg_opts *o)
{
	struct tally c, e;
	uint64_t v[C__COUNT];
	counters_of(r, &c);
	events_of(r, &e);
	counts_of(r, v);
	json_t *j = json_object();
	set(j, "rank", num(r->rank));
	set(j, "node", num(r->node));
	set(j, "host", json_string(r->host));
	set(j, "node_id", num(r->node_id));
	set(j, "pid", num(r->pid));
	set(j, "url", json_string(o->urls[r->url]));
	set(j, "slow_factor", json_real(r->slow));
	set(j, "final", json_boolean(r->final_sent));
	set(j, "active_s", json_real(active_s(r, o)));
	set(j, "event_rate_per_s", json_real(rate(r->events, active_s(r, o))));
	set_sums(j, v, &c, &e);
	return j;
}

static json_t *config_json(const struct lg_opts *o)
{
	static const char *const workloads[] = {"ior", "random", "meta", "mixed"};
	char job[17];
	snprintf(job, sizeof job, "%016llx", (unsigned long long)o->job_id);
	json_t *urls = json_array();
	for (unsigned u = 0; u < o->n_urls; u++)
		if (json_array_append_new(urls, json_string(o->urls[u])) != 0)
			oom = true;
	json_t *j = json_object();
	set(j, "urls", urls);
	set(j, "ranks", num(o->ranks));
	set(j, "rank_base", num(o->rank_base));
	set(j, "nodes", num(o->nodes));
	set(j, "threads", num(o->threads));
	set(j, "events_per_s", json_real(o->events_per_s));
	set(j, "duration_s", json_real(o->duration_s));
	set(j, "max_events", num(o->max_events));
	set(j, "batch_ms", num(o->batch_ms));
	set(j, "workload", json_string(workloads[o->workload]));
	set(j, "slow_rank", o->slow_rank >= 0 ? num((uint64_t)o->slow_rank) : json_null());
	set(j, "slow_factor", json_real(o->slow_factor));
	set(j, "send_timeout_ms", num((uint64_t)o->send_timeout_ms));
	set(j, "job", json_string(job));
	set(j, "coll_per_s", json_real(o->coll_per_s));
	set(j, "coll_group", num(o->coll_group));
	return j;
}

static json_t *totals_json(const struct lg_run *run, double elapsed)
{
	const struct lg_opts *o = run->opt;
	struct tally c = {0}, e = {0}, t;
	uint64_t sum[C__COUNT] = {0}, v[C__COUNT], finals = 0;
	for (uint32_t i = 0; i < o->ranks; i++) {
		const struct lg_rank *r = &run->ranks[i];
		counters_of(r, &t);
		add_tally(&c, &t);
		events_of(r, &t);
		add_tally(&e, &t);
		counts_of(r, v);
		for (int k = 0; k < C__COUNT; k++)
			sum[k] += v[k];
		finals += r->final_sent;
	}
	json_t *j = json_object();
	set(j, "final_frames", num(finals));
	set(j, "bytes_per_event",
	    json_real(sum[C_SENT] ? (double)sum[C_WIRE] / (double)sum[C_SENT] : 0));
	set(j, "requested_rate_per_s", json_real(o->events_per_s * o->ranks));
	set(j, "event_rate_per_s", json_real(rate(sum[C_EVENTS], elapsed)));
	set(j, "sent_event_rate_per_s", json_real(rate(sum[C_SENT], elapsed)));
	set_sums(j, sum, &c, &e);
	return j;
}

bool lg_report(const struct lg_run *run)
{
	const struct lg_opts *o = run->opt;
	double elapsed = 0;
	for (uint32_t i = 0; i < o->ranks; i++)
		if (active_s(&run->ranks[i], o) > elapsed)
			elapsed = active_s(&run->ranks[i], o);
	oom = false;
	json_t *doc = json_object(), *ranks = json_array();
	set(doc, "v", json_integer(1));
	set(doc, "type", json_string("loadgen"));
	set(doc, "config", config_json(o));
	set(doc, "elapsed_s", json_real(elapsed));
	set(doc, "wall_s", json_real(run->wall_s));
	set(doc, "interrupted", json_boolean(run->interrupted));
	set(doc, "totals", totals_json(run, elapsed));
	for (uint32_t i = 0; i < o->ranks; i++)
		if (json_array_append_new(ranks, rank_json(&run->ranks[i], o)) != 0)
			oom = true;
	set(doc, "ranks", ranks);
	bool ok = !oom && json_dumpf(doc, stdout, JSON_INDENT(1)) == 0 &&
	          fputc('\n', stdout) != EOF && fflush(stdout) == 0;
	json_decref(doc);
	if (!ok)
		fprintf(stderr, "iop-loadgen: cannot write the report\n");
	return ok;
}

/* The end-of-job summary: JSON and the human table. See summary.h. */
#include "summary.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "events.h"
#include "rank_sum.h"
#include "summary_files.h"
#include "summary_fs.h"
#include "summary_nodes.h"
#include "units.h"
#include "frame.h"

void coll_iso_time(uint64_t ns, char *buf, size_t len)
{
	time_t s = (time_t)(ns / 1000000000ull);
	struct tm tm;
	gmtime_r(&s, &tm);
	char base[24];
	strftime(base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%03uZ", base, (unsigned)(ns / 1000000ull % 1000));
}



static void layer_sums(const struct coll_state *s, struct coll_layer_sum out[IOP_LAYER__COUNT])
{
	memset(out, 0, sizeof(struct coll_layer_sum) * IOP_LAYER__COUNT);
	for (struct coll_totals_it it = {.s = s}; coll_totals_next(&it);)
		if (it.key.layer < IOP_LAYER__COUNT)
			coll_layer_sum_add(&out[it.key.layer], &it.key, &it.cell);
}

static json_t *layer_json(const struct coll_layer_sum *l)
{
	return json_pack("{s:I,s:I,s:I,s:I,s:I,s:f}", "read_bytes", (json_int_t)l->read_bytes,
	                 "write_bytes", (json_int_t)l->write_bytes, "read_ops",
	                 (json_int_t)l->read_ops, "write_ops", (json_int_t)l->write_ops, "meta_ops",
	                 (json_int_t)l->meta_ops, "time_s", l->time_ns / 1e9);
}

static json_t *layers_json(const struct coll_state *s)
{
	struct coll_layer_sum l[IOP_LAYER__COUNT];
	layer_sums(s, l);
	json_t *o = json_object();
	for (int i = 0; i < IOP_LAYER__COUNT; i++) {
		json_t *one = layer_json(&l[i]);
		json_object_set_new(one, "excl_time_s", json_real(s->layer_excl_ns[i] / 1e9));
		json_object_set_new(one, "wait_s", json_real(s->layer_wait_ns[i] / 1e9));
		json_object_set_new(o, iop_layer_name(i), one);
	}
	return o;
}

/* A rank's layers: those it made calls at. */
static json_t *rank_layers_json(const struct coll_rank_sum *r)
{
	json_t *o = json_object();
	for (int i = 0; i < IOP_LAYER__COUNT; i++) {
		const struct coll_layer_sum *l = &r->layer[i];
		if (l->read_ops || l->write_ops || l->meta_ops)
			json_object_set_new(o, iop_layer_name(i), layer_json(l));
	}
	return o;
}

static json_t *ranks_json(const struct coll_state *s)
{
	json_t *a = json_array();
	struct coll_rank_sum *sum = coll_rank_sums(s);
	if (!sum)
		return a;
	for (uint32_t r = 0; r < s->n_ranks; r++) {
		if (!s->ranks[r].state)
			continue;
		const struct coll_rank_sum *rs = &sum[r];
		const struct coll_layer_sum *p = &rs->layer[IOP_LAYER_POSIX];
		const struct coll_layer_sum *f = &rs->layer[IOP_LAYER_STDIO];
		const char *node = coll_state_host(s, (uint32_t)s->ranks[r].node);
		json_array_append_new(
			a, json_pack("{s:I,s:s,s:I,s:I,s:f,s:f,s:b,s:o,s:s}", "rank", (json_int_t)r,
			             "node", node ? node : "?", "read_bytes",
			             (json_int_t)(p->read_bytes + f->read_bytes), "write_bytes",
			             (json_int_t)(p->write_bytes + f->write_bytes), "io_time_s",
			             coll_rank_own_ns(&s->ranks[r]) / 1e9, "wait_s",
			             s->ranks[r].wait_ns / 1e9, "aggregator", rs->aggregator, "layers",
			             rank_layers_json(rs), "state",
			             s->ranks[r].state == COLL_RANK_GONE ? "gone" :
			             s->ranks[r].state == COLL_RANK_ENDED ? "ended" : "active"));
	}
	free(sum);
	return a;
}

/* A replayed job ends with its last tick, which can end before the job
 * started (a job shorter than a tick, a recording cut before its first
 * tick): such a job ended as it began, rather than 584 years later. */
static uint64_t end_ns(const struct coll_job_info *job)
{
	return job->end_ns > job->start_ns ? job->end_ns : job->start_ns;
}

json_t *coll_summary_json(const struct coll_state *s, const struct coll_job_info *job,
                          json_t *alerts)
{
	char id[17], start[32], end[32];
	snprintf(id, sizeof id, "%016" PRIx64, job->id);
	coll_iso_time(job->start_ns, start, sizeof start);
	coll_iso_time(end_ns(job), end, sizeof end);
	const struct coll_monitor *m = &s->mon;
	json_t *o = json_pack(
		"{s:i,s:s,s:{s:s,s:I,s:I,s:s,s:s,s:s,s:f,s:f},s:o,s:o,s:o,s:o,s:{s:I,s:I,s:I,s:I,s:I,s:I,s:f}}",
		"v", 1, "type", "summary", "job", "id", id, "ranks",
		(json_int_t)coll_state_ranks_seen(s), "nodes", (json_int_t)coll_state_nodes(s), "start",
		start, "end", end, "command", job->command ? job->command : "", "duration_s",
		(end_ns(job) - job->start_ns) / 1e9, "tick_s", job->tick_ns / 1e9, "layers",
		layers_json(s), "files", coll_summary_files(s, job->summary_files), "ranks", ranks_json(s), "alerts",
		alerts ? alerts : json_array(), "monitor", "events", (json_int_t)m->events, "produced",
		(json_int_t)m->produced, "dropped", (json_int_t)m->dropped, "late", (json_int_t)m->late,
		"rejected_frames", (json_int_t)m->rejected_frames, "frames", (json_int_t)m->frames,
		"shim_time_s", m->shim_ns / 1e9);
	json_object_set_new(json_object_get(o, "monitor"), "counters_refused",
	                    json_integer((json_int_t)s->counters_refused));
	json_object_set_new(json_object_get(o, "monitor"), "lost",
	                    json_integer((json_int_t)coll_monitor_lost(m)));
	json_object_set_new(o, "filesystems", coll_summary_filesystems(s));
	json_object_set_new(o, "nodes", coll_summary_nodes(s));
	if (job->live)
		json_object_set_new(json_object_get(o, "job"), "interrupted",
		                    job->interrupted ? json_string(job->interrupted) : json_false());
	return o;
}

struct rank_time {
	uint32_t rank;
	uint64_t ns;
};

static int by_time_desc(const void *a, const void *b)
{
	const struct rank_time *x = a, *y = b;
	if (x->ns != y->ns)
		return x->ns < y->ns ? 1 : -1;
	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* The ranks with the most time in their own I/O calls (without waiting
 * for other ranks in collective calls), each with its bandwidth there: the
 * application's own bytes / that time, and its wait when it waited. */
static void print_ranks(FILE *to, const struct coll_state *s)
{
	struct rank_time *v = malloc((s->n_ranks + 1) * sizeof(*v));
	struct coll_rank_sum *sum = coll_rank_sums(s);
	if (!v || !sum) {
		free(v);
		free(sum);
		return;
	}
	uint32_t n = 0;
	for (uint32_t r = 0; r < s->n_ranks; r++)
		if (s->ranks[r].state)
			v[n++] = (struct rank_time){r, coll_rank_own_ns(&s->ranks[r])};
	qsort(v, n, sizeof(*v), by_time_desc);
	fprintf(to, "  slowest ranks (own time in I/O calls, bandwidth):");
	for (uint32_t i = 0; i < n && i < 5; i++) {
		char bw[24] = "-", wait[40] = "";
		if (v[i].ns)
			coll_fmt_bytes(bw, sizeof bw, coll_rank_own_bytes(&sum[v[i].rank]) / (v[i].ns / 1e9));
		uint64_t w = s->ranks[v[i].rank].wait_ns;
		if (w >= 1000000)
			snprintf(wait, sizeof wait, " (+%.3f s waiting for others)", w / 1e9);
		fprintf(to, "%s rank %" PRIu32 " %.3f s %s%s%s%s", i ? "," : "", v[i].rank,
		        v[i].ns / 1e9, bw, v[i].ns ? "/s" : "", sum[v[i].rank].aggregator ? " AGG" : "",
		        wait);
	}
	fprintf(to, "%s\n", n ? "" : " none");
	free(v);
	free(sum);
}

void coll_summary_print(FILE *to, const struct coll_state *s, const struct coll_job_info *job,
                        size_t n_alerts)
{
	struct coll_layer_sum l[IOP_LAYER__COUNT];
	layer_sums(s, l);
	char rd[24], wr[24], id[17];
	snprintf(id, sizeof id, "%016" PRIx64, job->id);
	uint32_t ranks = coll_state_ranks_seen(s), nodes = coll_state_nodes(s);
	fprintf(to, "iopulse: job %s: %u rank%s on %u node%s, %.1f s%s%s%s\n", id, ranks,
	        ranks == 1 ? "" : "s", nodes, nodes == 1 ? "" : "s",
	        (end_ns(job) - job->start_ns) / 1e9,
	        job->interrupted ? ", interrupted (" : "", job->interrupted ? job->interrupted : "",
	        job->interrupted ? ") before the command finished" : "");
	fprintf(to, "  %-7s %12s %12s %10s %10s %10s %10s %10s %10s\n", "layer", "read", "written",
	        "read ops", "write ops", "meta ops", "time s", "excl s", "wait s");
	for (int i = 0; i < IOP_LAYER__COUNT; i++) {
		if (!l[i].read_ops && !l[i].write_ops && !l[i].meta_ops)
			continue;
		coll_fmt_bytes(rd, sizeof rd, (double)l[i].read_bytes);
		coll_fmt_bytes(wr, sizeof wr, (double)l[i].write_bytes);
		fprintf(to,
		        "  %-7s %12s %12s %10" PRIu64 " %10" PRIu64 " %10" PRIu64 " %10.3f %10.3f %10.3f\n",
		        iop_layer_label(i), rd, wr, l[i].read_ops, l[i].write_ops, l[i].meta_ops,
		        l[i].time_ns / 1e9, s->layer_excl_ns[i] / 1e9, s->layer_wait_ns[i] / 1e9);
	}
	size_t n;
	struct coll_file_sum *f = coll_file_sums(s, &n);
	char buf[40];
	for (size_t i = 0; i < n && i < 5; i++) {
		coll_fmt_bytes(rd, sizeof rd, (double)f[i].read_bytes);
		coll_fmt_bytes(wr, sizeof wr, (double)f[i].write_bytes);
		fprintf(to, "  %s %-6s read %s, written %s, %u rank%s: %s\n", i ? "    " : "files",
		        iop_layer_name(f[i].layer), rd, wr, f[i].ranks, f[i].ranks == 1 ? "" : "s",
		        coll_file_text(s, f[i].file, buf, sizeof buf));
	}
	if (n > 5)
		fprintf(to, "        ... and %zu more\n", n - 5);
	free(f);
	json_t *fs = coll_summary_filesystems(s);
	for (size_t i = 0; i < json_array_size(fs) && i < 4; i++) {
		json_t *x = json_array_get(fs, i);
		coll_fmt_bytes(rd, sizeof rd, (double)json_integer_value(json_object_get(x, "read_bytes")));
		coll_fmt_bytes(wr, sizeof wr, (double)json_integer_value(json_object_get(x, "write_bytes")));
		fprintf(to, "  %s %s (%s, %s): read %s, written %s\n", i ? "           " : "file systems",
		        json_string_value(json_object_get(x, "mount")),
		        json_string_value(json_object_get(x, "type")),
		        json_string_value(json_object_get(x, "device")), rd, wr);
	}
	json_decref(fs);
	coll_summary_nodes_print(to, s);
	print_ranks(to, s);
	const struct coll_monitor *m = &s->mon;
	fprintf(to, "  alerts: %zu; monitor: %" PRIu64 " events, %" PRIu64 " dropped, %" PRIu64
	            " late, %" PRIu64 " rejected frames, shim time %.3f s\n",
	        n_alerts, m->events, m->dropped, m->late, m->rejected_frames, m->shim_ns / 1e9);
	if (coll_monitor_lost(m))
		fprintf(to, "  WARNING: %" PRIu64 " of the %" PRIu64 " calls recorded never reached the "
		            "collector (it could not take them before their processes ended): the "
		            "totals above are whole, the per-tick rows, latencies and traces miss "
		            "them\n",
		        coll_monitor_lost(m), m->produced);
	if (s->counters_refused)
		fprintf(to, "  WARNING: %" PRIu64 " counter updates found no room (the root keeps at "
		            "most %u counters, one per process, file, layer and class): the totals "
		            "above are short of them\n",
		        s->counters_refused, COLL_STATE_MAX_COUNTERS);
}

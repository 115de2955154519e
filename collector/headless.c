/* Headless output. See headless.h. */
#include "headless.h"

#include <errno.h>
#include <string.h>
#include <time.h>

#include "events.h"
#include "units.h"

void coll_headless_init(struct coll_headless *h, FILE *jsonl, FILE *alerts, bool text)
{
	memset(h, 0, sizeof(*h));
	h->jsonl = jsonl;
	h->alerts = alerts;
	h->text = text;
}

void coll_headless_free(struct coll_headless *h)
{
	(void)h;
}

/* One JSON line; a failed write is reported once and the job goes on. */
static void emit(struct coll_headless *h, FILE *to, json_t *o)
{
	if (!to || !o)
		return;
	if (json_dumpf(o, to, JSON_COMPACT | JSON_REAL_PRECISION(16)) != 0 || fputc('\n', to) == EOF || fflush(to) != 0) {
		if (!h->write_errors++)
			fprintf(stderr, "iopulse: cannot write output (%s); the job goes on\n",
			        strerror(errno));
	}
}

void coll_headless_meta(struct coll_headless *h, const struct coll_job_info *job)
{
	if (!h->jsonl)
		return;
	char id[17], start[32];
	snprintf(id, sizeof id, "%016llx", (unsigned long long)job->id);
	coll_iso_time(job->start_ns, start, sizeof start);
	json_t *o = json_pack("{s:i,s:s,s:s,s:s,s:s,s:f}", "v", 1, "type", "meta", "job", id, "start",
	                      start, "command", job->command ? job->command : "", "tick_s",
	                      job->tick_ns / 1e9);
	emit(h, h->jsonl, o);
	json_decref(o);
}

void coll_headless_tick(struct coll_headless *h, const struct coll_delta *d,
                        const struct coll_state *s)
{
	if (!h->jsonl)
		return;
	const struct coll_tick *k = &d->tick;
	double secs = k->tick_ns / 1e9;
	struct {
		uint64_t rd, wr, rops, wops, mops;
		struct iop_hist hist;
	} l[IOP_LAYER__COUNT];
	memset(l, 0, sizeof l);
	uint64_t inflight = 0, oldest = 0;
	for (uint32_t i = 0; i < k->n; i++) {
		const struct coll_key *key = &k->key[i];
		const struct coll_cell *c = &k->cell[i];
		if (key->kind == COLL_ROW_RANK) {
			inflight += c->inflight;
			if (c->oldest_ns && (!oldest || c->oldest_ns < oldest))
				oldest = c->oldest_ns;
		}
		if (key->kind != COLL_ROW_LAYER || key->layer >= IOP_LAYER__COUNT)
			continue;
		if (key->cls == IOP_CLASS_READ) {
			l[key->layer].rd += c->bytes;
			l[key->layer].rops += c->ops;
		} else if (key->cls == IOP_CLASS_WRITE) {
			l[key->layer].wr += c->bytes;
			l[key->layer].wops += c->ops;
		} else {
			l[key->layer].mops += c->ops;
		}
		(void)iop_hist_merge(&l[key->layer].hist, &c->hist);
	}
	json_t *layers = json_object();
	for (int i = 0; i < IOP_LAYER__COUNT; i++) {
		if (l[i].rops || l[i].wops || l[i].mops)
			json_object_set_new(
				layers, iop_layer_name(i),
				json_pack("{s:f,s:f,s:I,s:I,s:I,s:f,s:f}", "read_Bps", l[i].rd / secs,
				          "write_Bps", l[i].wr / secs, "read_ops", (json_int_t)l[i].rops,
				          "write_ops", (json_int_t)l[i].wops, "meta_ops", (json_int_t)l[i].mops,
				          "p50_s", iop_hist_quantile(&l[i].hist, 0.5) / 1e9, "p99_s",
				          iop_hist_quantile(&l[i].hist, 0.99) / 1e9));
		iop_hist_free(&l[i].hist);
	}
	uint64_t end_ns = (uint64_t)(k->t + 1) * k->tick_ns;
	/* "t" as in alert records: seconds since the epoch (the tick's end) */
	json_t *o = json_pack("{s:i,s:s,s:f,s:I,s:o,s:I,s:I,s:f,s:I,s:I,s:I}", "v", 1, "type", "sample",
	                      "t", end_ns / 1e9, "tick", (json_int_t)k->t, "layers", layers, "ranks_live",
	                      (json_int_t)coll_state_ranks_live(s), "inflight", (json_int_t)inflight,
	                      "oldest_inflight_s", oldest && oldest < end_ns ? (end_ns - oldest) / 1e9 : 0.0,
	                      "events", (json_int_t)d->mon.events, "dropped", (json_int_t)d->mon.dropped,
	                      "late", (json_int_t)d->mon.late);
	emit(h, h->jsonl, o);
	json_decref(o);
}

void coll_headless_alert(struct coll_headless *h, json_t *record, const char *line, int severity,
                         bool started)
{
	if (started) {
		h->n_alerts++;
		if (severity > h->worst)
			h->worst = severity;
	}
	if (h->text && line)
		fprintf(stderr, "%s\n", line);
	emit(h, h->jsonl, record);
	emit(h, h->alerts, record);
}

void coll_headless_status(struct coll_headless *h, const struct coll_state *s, uint64_t now_ns)
{
	const struct coll_tick *k = coll_state_last(s);
	uint64_t rd = 0, wr = 0, inflight = 0;
	for (uint32_t i = 0; k && i < k->n; i++) {
		if (k->key[i].kind == COLL_ROW_RANK)
			inflight += k->cell[i].inflight;
		if (k->key[i].kind != COLL_ROW_LAYER ||
		    (k->key[i].layer != IOP_LAYER_POSIX && k->key[i].layer != IOP_LAYER_STDIO))
			continue;
		if (k->key[i].cls == IOP_CLASS_READ)
			rd += k->cell[i].bytes;
		else if (k->key[i].cls == IOP_CLASS_WRITE)
			wr += k->cell[i].bytes;
	}
	double secs = k ? k->tick_ns / 1e9 : 1;
	char when[16], r[24], w[24];
	time_t now = (time_t)(now_ns / 1000000000ull);
	struct tm tm;
	localtime_r(&now, &tm);
	strftime(when, sizeof when, "%H:%M:%S", &tm);
	coll_fmt_bytes(r, sizeof r, rd / secs);
	coll_fmt_bytes(w, sizeof w, wr / secs);
	fprintf(stderr, "%s status: %u ranks live of %u, read %s/s, write %s/s, %llu in flight, %zu alerts\n",
	        when, coll_state_ranks_live(s), coll_state_ranks_seen(s), r, w,
	        (unsigned long long)inflight, h->n_alerts);
}

int coll_headless_summary(struct coll_headless *h, const struct coll_state *s,
                          const struct coll_job_info *job, json_t *alerts, const char *path)
{
	if (h->text)
		coll_summary_print(stderr, s, job, h->n_alerts);
	json_t *o = coll_summary_json(s, job, alerts);
	if (!o)
		return -1;
	emit(h, h->jsonl, o);
	int rc = 0;
	if (path && json_dump_file(o, path, JSON_INDENT(1) | JSON_REAL_PRECISION(16)) != 0) {
		fprintf(stderr, "iopulse: cannot write the summary to %s: %s\n", path, strerror(errno));
		rc = -1;
	}
	json_decref(o);
	return rc;
}

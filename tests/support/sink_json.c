/* iop-sink's report (see sink.c for the tool, sink.h for its state): after
 * the last frame, each process's ids are resolved to paths through its own
 * names, its latest counters and its event sums are added up per file, per
 * rank and per layer, its events per call site (job-wide, by site name),
 * its calls are matched parent to children, and all of it becomes one JSON
 * document (jansson). Only non-zero classes and non-empty layers are
 * written, so a test can compare two trees key by key. Files are in
 * "files", call sites in "sites".
 *
 * jansson reports running out of memory by returning NULL or -1 from deep
 * inside the builders; they note it in json_oom and carry on, and the
 * document is refused at the end. The tool is single-threaded. */
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sink.h"

enum view { V_COUNTERS, V_EVENTS, V_LAYERS };

/* Totals that do not come from a file: per rank and per layer. */
struct rank_tally {
	uint32_t rank;
	struct sink_tally t;
};

struct totals {
	struct sink_tally layers;
	struct sink_table ranks; /* struct rank_tally, by rank */
	uint64_t *unknown_ids;   /* per process */
	uint64_t children, parents, linked, orphans, ops_mismatch, bytes_mismatch;
	uint64_t unnamed_site_events; /* events with site 0 or an id never named */
};

static bool json_oom;

static void set(json_t *obj, const char *key, json_t *val)
{
	if (!obj || json_object_set_new(obj, key, val) != 0)
		json_oom = true; /* jansson has freed val */
}

static void append(json_t *arr, json_t *val)
{
	if (!arr || json_array_append_new(arr, val) != 0)
		json_oom = true;
}

/* JSON integers are signed 64-bit; larger counts (never met) saturate. */
static json_int_t num(uint64_t v)
{
	return v > INT64_MAX ? INT64_MAX : (json_int_t)v;
}

/* ------------------------------------------------------------- totalling */

static void add_sums(struct sink_sums *d, const struct sink_sums *v)
{
	d->c_ops += v->c_ops;
	d->c_bytes += v->c_bytes;
	d->c_time += v->c_time;
	d->c_err += v->c_err;
	d->e_ops += v->e_ops;
	d->e_bytes += v->e_bytes;
	d->e_err += v->e_err;
}

/* A file lists each rank once per process (proc is the process's index). */
static enum iop_err file_add_rank(struct sink_file *f, size_t proc, uint32_t rank)
{
	if (f->last_proc == proc)
		return IOP_OK;
	void *q = f->ranks;
	if (f->n_ranks == f->cap_ranks) {
		size_t cap = f->cap_ranks ? 2 * f->cap_ranks : 4;
		if (!(q = reallocarray(f->ranks, cap, sizeof *f->ranks)))
			return IOP_ERR_NOMEM;
		f->cap_ranks = cap;
	}
	f->ranks = q;
	f->ranks[f->n_ranks++] = rank;
	f->last_proc = proc;
	return IOP_OK;
}

/* The file an id of process p names; false for an id never named. */
static enum iop_err resolve_id(struct sink *s, const struct sink_proc *p, uint32_t id,
                               uint32_t *file, bool *known)
{
	*known = true;
	if (id == 0)
		return sink_file_intern(s, 0, "", 0, 0, file);
	const struct sink_name *n = sink_table_get(&p->names, id);
	*known = n != NULL;
	*file = n ? n->file : 0;
	return IOP_OK;
}

static enum iop_err total_cells(struct sink *s, struct totals *t, size_t pi)
{
	const struct sink_proc *p = sink_table_at(&s->procs, pi);
	struct rank_tally *r = sink_table_find(&t->ranks, p->rank);
	struct sink_map unknown = {0};
	enum iop_err err = r ? IOP_OK : IOP_ERR_NOMEM;
	if (r)
		r->rank = p->rank;
	for (size_t i = 0; i < p->cells.n && err == IOP_OK; i++) {
		const struct sink_cell *c = sink_table_at(&p->cells, i);
		uint32_t id = (uint32_t)(c->key >> 4), fi;
		unsigned l = (c->key >> 2) & 3, k = c->key & 3;
		bool known;
		add_sums(&t->layers.v[l][k], &c->v);
		add_sums(&r->t.v[l][k], &c->v);
		if ((err = resolve_id(s, p, id, &fi, &known)) != IOP_OK)
			break;
		if (!known) {
			err = sink_map_put(&unknown, id, 1);
			continue;
		}
		struct sink_file *f = sink_table_at(&s->files, fi);
		add_sums(&f->t.v[l][k], &c->v);
		err = file_add_rank(f, pi, p->rank);
	}
	t->unknown_ids[pi] = unknown.n;
	sink_map_free(&unknown);
	return err;
}

/* Every name a process announced lists its rank, used or not. */
static enum iop_err total_names(struct sink *s, size_t pi)
{
	const struct sink_proc *p = sink_table_at(&s->procs, pi);
	for (size_t i = 0; i < p->names.n; i++) {
		const struct sink_name *n = sink_table_at(&p->names, i);
		if (file_add_rank(sink_table_at(&s->files, n->file), pi, p->rank) != IOP_OK)
			return IOP_ERR_NOMEM;
	}
	return IOP_OK;
}

/* Events per site name: a site's row is its name's sink_file, whose event
 * sums (e_*) hold them. */
static enum iop_err total_sites(struct sink *s, struct totals *t, size_t pi)
{
	const struct sink_proc *p = sink_table_at(&s->procs, pi);
	for (size_t i = 0; i < p->sites.n; i++) {
		const struct sink_site *c = sink_table_at(&p->sites, i);
		uint32_t id = (uint32_t)(c->key >> 4);
		unsigned l = (c->key >> 2) & 3, k = c->key & 3;
		const struct sink_name *n = id ? sink_table_get(&p->names, id) : NULL;
		struct sink_file *f = n ? sink_table_at(&s->files, n->file) : NULL;
		if (!f || f->kind != IOP_NAME_SITE) {
			t->unnamed_site_events += c->ops;
			continue;
		}
		f->t.v[l][k].e_ops += c->ops;
		f->t.v[l][k].e_bytes += c->bytes;
		f->t.v[l][k].e_err += c->errors;
		if (file_add_rank(f, pi, p->rank) != IOP_OK)
			return IOP_ERR_NOMEM;
	}
	return IOP_OK;
}

static void total_nesting(const struct sink_proc *p, struct totals *t)
{
	t->children += p->children;
	t->parents += p->parents;
	for (size_t i = 0; i < p->calls.n; i++) {
		const struct sink_call *c = sink_table_at(&p->calls, i);
		if (!c->is_parent) {
			t->orphans += c->got_ops;
			continue;
		}
		t->linked += c->got_ops;
		t->ops_mismatch += c->want_ops != c->got_ops;
		t->bytes_mismatch += c->want_bytes != c->got_bytes;
	}
}

static enum iop_err total(struct sink *s, struct totals *t)
{
	*t = (struct totals){.ranks = {.size = sizeof(struct rank_tally)}};
	t->unknown_ids = calloc(s->procs.n + 1, sizeof *t->unknown_ids);
	if (!t->unknown_ids)
		return IOP_ERR_NOMEM;
	for (size_t pi = 0; pi < s->procs.n; pi++) {
		enum iop_err err = total_cells(s, t, pi);
		if (err == IOP_OK)
			err = total_names(s, pi);
		if (err == IOP_OK)
			err = total_sites(s, t, pi);
		if (err != IOP_OK)
			return err;
		total_nesting(sink_table_at(&s->procs, pi), t);
	}
	return IOP_OK;
}

/* ------------------------------------------------------------ JSON trees */

static bool class_empty(const struct sink_sums *v, enum view w)
{
	uint64_t c = v->c_ops | v->c_bytes | v->c_time | v->c_err;
	uint64_t e = v->e_ops | v->e_bytes | v->e_err;
	return w == V_COUNTERS ? !c : w == V_EVENTS ? !e : !(c | e);
}

static json_t *class_json(const struct sink_sums *v, enum view w)
{
	if (w == V_COUNTERS)
		return json_pack("{s:I,s:I,s:I,s:I}", "ops", num(v->c_ops), "bytes",
		                 num(v->c_bytes), "time_ns", num(v->c_time), "errors",
		                 num(v->c_err));
	if (w == V_EVENTS)
		return json_pack("{s:I,s:I,s:I}", "ops", num(v->e_ops), "bytes", num(v->e_bytes),
		                 "errors", num(v->e_err));
	return json_pack("{s:I,s:I,s:I,s:I,s:I,s:I}", "counter_ops", num(v->c_ops), "counter_bytes",
	                 num(v->c_bytes), "counter_errors", num(v->c_err), "event_ops",
	                 num(v->e_ops), "event_bytes", num(v->e_bytes), "event_errors",
	                 num(v->e_err));
}

/* {layer: {class: {...}}} with only the non-empty ones. */
static json_t *tally_json(const struct sink_tally *t, enum view w)
{
	json_t *o = json_object();
	for (int l = 0; l < IOP_LAYER__COUNT; l++) {
		json_t *lo = NULL;
		for (int c = 0; c < IOP_CLASS__COUNT; c++) {
			if (class_empty(&t->v[l][c], w))
				continue;
			if (!lo)
				lo = json_object();
			set(lo, iop_class_name(c), class_json(&t->v[l][c], w));
		}
		if (lo)
			set(o, iop_layer_name(l), lo);
	}
	return o;
}

static int cmp_proc(const void *a, const void *b, void *ctx)
{
	const struct sink_proc *p = sink_table_at(ctx, *(const size_t *)a);
	const struct sink_proc *q = sink_table_at(ctx, *(const size_t *)b);
	if (p->rank != q->rank)
		return p->rank < q->rank ? -1 : 1;
	if (p->node_id != q->node_id)
		return p->node_id < q->node_id ? -1 : 1;
	if (p->pid != q->pid)
		return p->pid < q->pid ? -1 : 1;
	return p->image < q->image ? -1 : p->image > q->image;
}

static int cmp_file(const void *a, const void *b, void *ctx)
{
	const struct sink_file *f = sink_table_at(ctx, *(const size_t *)a);
	const struct sink_file *g = sink_table_at(ctx, *(const size_t *)b);
	int d = memcmp(f->path, g->path, f->len < g->len ? f->len : g->len);
	if (d == 0)
		d = f->len < g->len ? -1 : f->len > g->len;
	return d ? d : f->kind - g->kind;
}

static int cmp_rank(const void *a, const void *b, void *ctx)
{
	const struct rank_tally *r = sink_table_at(ctx, *(const size_t *)a);
	const struct rank_tally *q = sink_table_at(ctx, *(const size_t *)b);
	return r->rank < q->rank ? -1 : r->rank > q->rank;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* Indexes 0..n-1 of a table, sorted; NULL when out of memory. */
static size_t *sorted(struct sink_table *t, int (*cmp)(const void *, const void *, void *))
{
	size_t *idx = malloc((t->n + 1) * sizeof *idx);
	if (!idx)
		return NULL;
	for (size_t i = 0; i < t->n; i++)
		idx[i] = i;
	qsort_r(idx, t->n, sizeof *idx, cmp, t);
	return idx;
}

static json_t *process_json(const struct sink_proc *p, uint64_t unknown_ids)
{
	/* seqs first..last hold frames distinct ones: the rest are missing
	 * (written so that a span of 2^64 cannot wrap) */
	uint64_t missing = p->frames ? (p->last_seq - p->first_seq) - (p->frames - 1) : 0;
	return json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:b,s:{s:I,s:I,s:I,s:I},s:I}",
	                 "node_id", num(p->node_id), "pid", num(p->pid), "image", num(p->image),
	                 "rank", num(p->rank), "frames", num(p->frames), "first_seq",
	                 num(p->first_seq), "last_seq", num(p->last_seq), "missing_seqs",
	                 num(missing), "duplicate_frames", num(p->dup_frames), "final", p->final,
	                 "stats", "events", num(p->stats.events), "dropped", num(p->stats.dropped),
	                 "shim_ns", num(p->stats.shim_ns), "send_failures",
	                 num(p->stats.send_failures), "unknown_ids", num(unknown_ids));
}

static json_t *processes_json(struct sink *s, const struct totals *t)
{
	json_t *a = json_array();
	size_t *idx = sorted(&s->procs, cmp_proc);
	for (size_t i = 0; idx && i < s->procs.n; i++)
		append(a, process_json(sink_table_at(&s->procs, idx[i]), t->unknown_ids[idx[i]]));
	json_oom |= !idx;
	free(idx);
	return a;
}

/* Paths are bytes; JSON strings are UTF-8. A path that is not valid UTF-8
 * has its non-ASCII bytes written as '?' (and says so). A site's text is
 * its "name". */
static void set_path(json_t *o, const struct sink_file *f)
{
	const char *key = f->kind == IOP_NAME_SITE ? "name" : "path";
	json_t *str = json_stringn(f->path, f->len);
	if (str) {
		set(o, key, str);
		return;
	}
	char *copy = strndup(f->path, f->len);
	for (size_t i = 0; copy && i < f->len; i++)
		copy[i] = (unsigned char)copy[i] < 0x80 ? copy[i] : '?';
	set(o, key, copy ? json_stringn(copy, f->len) : NULL);
	set(o, "path_lossy", json_true());
	free(copy);
}

static json_t *file_json(struct sink_file *f)
{
	static const char *const kinds[] = {"none", "file", "dataset", "site", "host"};
	char hash[17];
	snprintf(hash, sizeof hash, "%016" PRIx64, f->hash);
	json_t *o = json_object(), *ranks = json_array();
	set_path(o, f);
	set(o, "kind", json_string(f->kind < 5 ? kinds[f->kind] : "?"));
	set(o, "hash", json_string(hash));
	if (f->kind != IOP_NAME_SITE) /* sites have events only */
		set(o, "counters", tally_json(&f->t, V_COUNTERS));
	set(o, "events", tally_json(&f->t, V_EVENTS));
	qsort(f->ranks, f->n_ranks, sizeof *f->ranks, cmp_u32);
	for (size_t i = 0; i < f->n_ranks; i++)
		if (i == 0 || f->ranks[i] != f->ranks[i - 1])
			append(ranks, json_integer(f->ranks[i]));
	set(o, "ranks", ranks);
	return o;
}

/* Names of the kind sites (want_sites) or of every other kind. */
static json_t *files_json(struct sink *s, bool want_sites)
{
	json_t *a = json_array();
	size_t *idx = sorted(&s->files, cmp_file);
	for (size_t i = 0; idx && i < s->files.n; i++) {
		struct sink_file *f = sink_table_at(&s->files, idx[i]);
		if ((f->kind == IOP_NAME_SITE) == want_sites)
			append(a, file_json(f));
	}
	json_oom |= !idx;
	free(idx);
	return a;
}

static json_t *ranks_json(struct totals *t)
{
	json_t *a = json_array();
	size_t *idx = sorted(&t->ranks, cmp_rank);
	for (size_t i = 0; idx && i < t->ranks.n; i++) {
		const struct rank_tally *r = sink_table_at(&t->ranks, idx[i]);
		json_t *o = json_object();
		set(o, "rank", json_integer(r->rank));
		set(o, "counters", tally_json(&r->t, V_COUNTERS));
		set(o, "events", tally_json(&r->t, V_EVENTS));
		append(a, o);
	}
	json_oom |= !idx;
	free(idx);
	return a;
}

static json_t *latency_json(const struct sink *s)
{
	json_t *o = json_object();
	for (int l = 0; l < IOP_LAYER__COUNT; l++) {
		const struct iop_hist *h = &s->lat[l];
		if (h->count)
			set(o, iop_layer_name(l),
			    json_pack("{s:I,s:I,s:I}", "p50_ns", num(iop_hist_quantile(h, 0.5)),
			              "p99_ns", num(iop_hist_quantile(h, 0.99)), "max_ns",
			              num(h->max)));
	}
	return o;
}

static json_t *rejected_json(const struct sink *s)
{
	json_t *o = json_object();
	for (int e = 0; e < IOP_ERR__COUNT; e++)
		if (s->rejected[e])
			set(o, iop_errname(e), json_integer(num(s->rejected[e])));
	return o;
}

static json_t *report(struct sink *s, struct totals *t)
{
	json_t *o = json_object();
	set(o, "frames", json_integer(num(s->frames)));
	set(o, "final_frames", json_integer(num(s->final_frames)));
	set(o, "finals_answered", json_integer(num(s->finals_answered)));
	set(o, "events", json_integer(num(s->events)));
	set(o, "run_calls", json_integer(num(s->run_calls)));
	set(o, "wire_bytes", json_integer(num(s->wire_bytes)));
	set(o, "rejected", rejected_json(s));
	set(o, "processes", processes_json(s, t));
	set(o, "files", files_json(s, false));
	set(o, "sites", files_json(s, true));
	set(o, "unnamed_site_events", json_integer(num(t->unnamed_site_events)));
	set(o, "ranks", ranks_json(t));
	set(o, "layers", tally_json(&t->layers, V_LAYERS));
	set(o, "nesting",
	    json_pack("{s:I,s:I,s:I,s:I,s:I,s:I}", "children", num(t->children), "parents",
	              num(t->parents), "linked", num(t->linked), "orphans", num(t->orphans),
	              "child_ops_mismatch", num(t->ops_mismatch), "child_bytes_mismatch",
	              num(t->bytes_mismatch)));
	set(o, "inflight",
	    json_pack("{s:I,s:I}", "reports", num(s->inflight_reports), "max_age_ns",
	              num(s->inflight_max_age)));
	set(o, "latency", latency_json(s));
	set(o, "duplicate_frames", json_integer(num(s->dup_frames)));
	set(o, "stop_reason", json_string(s->stop_reason ? s->stop_reason : "error"));
	return o;
}

/* ---------------------------------------------------------------- output */

static enum iop_err dump(json_t *doc, const char *path)
{
	size_t flags = JSON_INDENT(1);
	if (!path) {
		bool ok = json_dumpf(doc, stdout, flags) == 0 && fputc('\n', stdout) != EOF;
		return fflush(stdout) == 0 && ok ? IOP_OK : IOP_ERR_IO;
	}
	size_t len = strlen(path) + 5;
	char *tmp = malloc(len);
	if (!tmp)
		return IOP_ERR_NOMEM;
	snprintf(tmp, len, "%s.tmp", path);
	enum iop_err err = IOP_OK;
	if (json_dump_file(doc, tmp, flags) != 0 || rename(tmp, path) != 0) {
		remove(tmp);
		err = IOP_ERR_IO;
	}
	free(tmp);
	return err;
}

enum iop_err sink_write_json(struct sink *s, const char *path)
{
	struct totals t;
	enum iop_err err = total(s, &t);
	json_t *doc = NULL;
	json_oom = false;
	if (err == IOP_OK) {
		doc = report(s, &t);
		err = json_oom || !doc ? IOP_ERR_NOMEM : dump(doc, path);
	}
	json_decref(doc);
	sink_table_free(&t.ranks);
	free(t.unknown_ids);
	return err;
}

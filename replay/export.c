/* `iopulse export FILE --format csv|jsonl|chrome [-o OUT]`: a recording's ticks
 * as rows a spreadsheet, pandas or jq reads, one per (tick, row key) with
 * calls: the tick's end time, the row's kind (rank, file, layer, site),
 * rank, file path (or call site), layer, op class and the tick's ops,
 * bytes, errors, inclusive and exclusive time. Rows come from the DELTA
 * frames (events placed in each tick): when the shims dropped no events
 * (the summary's monitor.dropped), the layer rows summed over the ticks
 * are the summary's layer totals. Names come from the ticks' own name
 * records. Damage is skipped and reported as replay does. */
#include "export.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "events.h"
#include "frame.h"
#include "fsmap.h"
#include "names.h"
#include "rec_open.h"
#include "rec_state.h"
#include "replay_cmd.h"

enum format { FMT_NONE, FMT_CSV, FMT_JSONL, FMT_CHROME };

static const char *const kind_names[] = {[COLL_ROW_RANK] = "rank", [COLL_ROW_FILE] = "file",
                                         [COLL_ROW_LAYER] = "layer", [COLL_ROW_SITE] = "site",
                                         [COLL_ROW_FS] = "fs"};

static void usage(FILE *to)
{
	fprintf(to,
	        "usage: iopulse export FILE --format csv|jsonl|chrome [--totals] [-o OUT]\n"
	        "Writes a recording's ticks as rows, one per tick and row (rank, file, layer,\n"
	        "call site, node) with calls: t_s (the tick's end, seconds since the epoch),\n"
	        "tick, kind, rank, file (path, call site, or a node row's host), layer, class\n"
	        "(read, write, meta),\n"
	        "ops, bytes, errors, time_s, excl_s (docs/replay.md).\n"
	        "\n"
	        "  --format csv|jsonl|chrome\n"
	        "                        csv: a header line, then comma-separated rows (RFC\n"
	        "                        4180 quoting); jsonl: one JSON object per row, with\n"
	        "                        \"v\":1 and \"type\":\"tick_row\"; chrome: the raw events\n"
	        "                        (recorded with iopulse run --record-events) as a Chrome\n"
	        "                        trace for ui.perfetto.dev or chrome://tracing: a track\n"
	        "                        per rank, calls as slices, sub-calls nested\n"
	        "  --totals              csv and jsonl: instead of the ticks, the job's exact\n"
	        "                        totals, one row per rank, file, layer and class\n"
	        "                        (kind \"total\"; every file, none folded; t_s and tick:\n"
	        "                        the last tick's; no excl_s), from the recording's\n"
	        "                        end state\n"
	        "  -o, --output OUT      write to OUT (default: standard output)\n"
	        "  -h, --help            this text\n"
	        "\n"
	        "Exit status: 0; 1 usage (OUT is the recording itself); 2 the file cannot be read\n"
	        "or OUT cannot be written.\n");
}

/* A CSV field, quoted when it needs to be. */
static void csv_text(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

struct row {
	double t_s;
	int64_t tick;
	const char *kind, *file, *layer, *cls;
	int64_t rank; /* -1: none */
	const struct coll_cell *c;
	bool no_excl; /* exclusive time not known (totals): an empty cell, no key */
};

static void put_csv(FILE *f, const struct row *r)
{
	fprintf(f, "%.3f,%" PRId64 ",%s,", r->t_s, r->tick, r->kind);
	if (r->rank >= 0)
		fprintf(f, "%" PRId64, r->rank);
	fputc(',', f);
	csv_text(f, r->file ? r->file : "");
	fprintf(f, ",%s,%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.9f,", r->layer, r->cls, r->c->ops,
	        r->c->bytes, r->c->errors, r->c->time_ns / 1e9);
	if (!r->no_excl)
		fprintf(f, "%.9f", r->c->excl_ns / 1e9);
	fputc('\n', f);
}

static void put_jsonl(FILE *f, const struct row *r)
{
	json_t *o = json_pack("{s:i,s:s,s:f,s:I,s:s,s:s,s:s,s:I,s:I,s:I,s:f}", "v", 1, "type",
	                      r->no_excl ? "total_row" : "tick_row", "t_s", r->t_s, "tick",
	                      (json_int_t)r->tick, "kind", r->kind, "layer", r->layer, "class",
	                      r->cls, "ops", (json_int_t)r->c->ops, "bytes",
	                      (json_int_t)r->c->bytes, "errors", (json_int_t)r->c->errors, "time_s",
	                      r->c->time_ns / 1e9);
	if (o && !r->no_excl)
		json_object_set_new(o, "excl_s", json_real(r->c->excl_ns / 1e9));
	if (o && r->rank >= 0)
		json_object_set_new(o, "rank", json_integer(r->rank));
	if (o && r->file)
		json_object_set_new(o, "file", json_string(r->file));
	if (o)
		json_dumpf(o, f, JSON_COMPACT | JSON_REAL_PRECISION(16));
	fputc('\n', f);
	json_decref(o);
}

/* The names so far, and the host names by node id (a host name's hash
 * cut to 32 bits), for node rows. */
struct export_names {
	struct coll_names all, hosts;
};

static const char *host_name(const struct coll_names *hosts, uint32_t node, char *buf, size_t len)
{
	const char *t = coll_names_text(hosts, node);
	if (t)
		return t;
	snprintf(buf, len, "0x%08" PRIx32, node);
	return buf;
}

/* A file's path, a site's name, or the node of a node's row ("0x..."
 * when no name record came). */
static const char *subject(const struct export_names *en, const struct coll_key *k, char *buf,
                           size_t len)
{
	const struct coll_names *names = &en->all;
	if (coll_key_is_node(k))
		return host_name(&en->hosts, coll_key_node_id(k), buf, len);
	if (k->kind == COLL_ROW_FS) { /* its mount point */
		struct coll_fs fs;
		if (coll_fs_get(names, k->id, &fs))
			snprintf(buf, len, "%s", fs.point);
		else
			snprintf(buf, len, "0x%016" PRIx64, k->id);
		return buf;
	}
	if (k->kind != COLL_ROW_FILE && k->kind != COLL_ROW_SITE)
		return NULL;
	if (k->id == COLL_ID_OTHER)
		return k->kind == COLL_ROW_FILE ? "(other files)" : "(other call sites)";
	const char *t = coll_names_text(names, k->id);
	if (t)
		return t;
	snprintf(buf, len, "0x%016" PRIx64, k->id);
	return buf;
}

static void put_tick(FILE *f, enum format fmt, const struct coll_delta *d,
                     const struct export_names *names)
{
	const struct coll_tick *k = &d->tick;
	for (uint32_t i = 0; i < k->n; i++) {
		const struct coll_key *key = &k->key[i];
		const struct coll_cell *c = &k->cell[i];
		if (!c->ops || key->kind < COLL_ROW_RANK || key->kind > COLL_ROW_FS ||
		    key->layer >= IOP_LAYER__COUNT || key->cls >= IOP_CLASS__COUNT)
			continue;
		char buf[1024];
		struct row r = {.t_s = rec_tick_end_ns(d) / 1e9, .tick = k->t,
		                .kind = coll_key_is_node(key) ? "node" : kind_names[key->kind],
		                .file = subject(names, key, buf, sizeof buf),
		                .layer = iop_layer_name((enum iop_layer)key->layer),
		                .cls = iop_class_name((enum iop_class)key->cls),
		                .rank = key->rank == COLL_RANK_NONE ? -1 : (int64_t)key->rank, .c = c};
		(fmt == FMT_CSV ? put_csv : put_jsonl)(f, &r);
	}
}

/* JSON lines only: each node's sample of the tick (node/nodes.h), as
 * {"v":1,"type":"node_sample","t_s","tick","node" (its host),
 * "io_pressure_some","io_pressure_full","iowait","dirty_kib",
 * "writeback_kib" (each when sampled), "filesystems":[{"mount","type",
 * "device","kind","util" (devices),"wait_ms","read_Bps","write_Bps",
 * "read_iops","write_iops","job_Bps","job_ops"}]}. */
static void put_nodes(FILE *f, const struct coll_delta *d, const struct export_names *names)
{
	for (uint32_t i = 0; i < d->nodes.n; i++) {
		const struct coll_node_sample *x = &d->nodes.v[i];
		char host[32];
		json_t *o = json_pack("{s:i,s:s,s:f,s:I,s:s}", "v", 1, "type", "node_sample", "t_s",
		                      rec_tick_end_ns(d) / 1e9, "tick", (json_int_t)x->t, "node",
		                      host_name(&names->hosts, x->node, host, sizeof host));
		if (!o)
			continue;
		if (x->flags & COLL_NODE_PSI)
			json_object_set_new(o, "io_pressure_some", json_real(x->psi_some_ppm / 1e6));
		if (x->flags & COLL_NODE_FULL)
			json_object_set_new(o, "io_pressure_full", json_real(x->psi_full_ppm / 1e6));
		if (x->flags & COLL_NODE_IOWAIT)
			json_object_set_new(o, "iowait", json_real(x->iowait_ppm / 1e6));
		if (x->flags & COLL_NODE_MEM) {
			json_object_set_new(o, "dirty_kib", json_integer((json_int_t)x->dirty_kib));
			json_object_set_new(o, "writeback_kib", json_integer((json_int_t)x->writeback_kib));
		}
		json_t *fss = json_array();
		for (uint32_t j = 0; j < x->n_fs && j < COLL_NODE_FS_MAX; j++) {
			const struct coll_node_fs *y = &x->fs[j];
			struct coll_fs fs;
			bool dev = y->kind == COLL_NODE_FS_DEVICE;
			json_t *e = json_pack("{s:s,s:f,s:I,s:I,s:I,s:I,s:I,s:I}", "kind",
			                      dev ? "device" : "network", "wait_ms", y->wait_us / 1e3,
			                      "read_Bps", (json_int_t)y->read_Bps, "write_Bps",
			                      (json_int_t)y->write_Bps, "read_iops",
			                      (json_int_t)y->read_iops, "write_iops",
			                      (json_int_t)y->write_iops, "job_Bps", (json_int_t)y->job_Bps,
			                      "job_ops", (json_int_t)y->job_ops);
			if (e && coll_fs_get(&names->all, y->fs, &fs)) {
				json_object_set_new(e, "mount", json_string(fs.point));
				json_object_set_new(e, "type", json_string(fs.type));
				json_object_set_new(e, "device", json_string(fs.device));
			}
			if (e && dev)
				json_object_set_new(e, "util", json_real(y->util_ppm / 1e6));
			json_array_append_new(fss, e);
		}
		json_object_set_new(o, "filesystems", fss);
		json_dumpf(o, f, JSON_COMPACT | JSON_REAL_PRECISION(16));
		fputc('\n', f);
		json_decref(o);
	}
}

/* The tick rows of every DELTA frame; 0 or 2. */
static int export_rows(struct rec_opened *o, const char *path, enum format fmt, FILE *f,
                       uint64_t *bad)
{
	if (fmt == FMT_CSV)
		fputs("t_s,tick,kind,rank,file,layer,class,ops,bytes,errors,time_s,excl_s\n", f);
	struct export_names names;
	coll_names_init(&names.all, 1u << 20, (size_t)256 << 20);
	coll_names_init(&names.hosts, 1u << 20, (size_t)64 << 20);
	struct coll_delta d;
	coll_delta_init(&d, 0, o->tick_ns);
	enum iop_err e;
	while ((e = rec_next_delta(o, &d, NULL, bad)) == IOP_OK) {
		for (uint32_t i = 0; i < d.n_names; i++) {
			const struct coll_name *n = &d.names[i];
			bool added;
			(void)coll_names_add(&names.all, n->hash, n->kind, n->text, n->len, &added);
			if (n->kind == IOP_NAME_HOST)
				(void)coll_names_add(&names.hosts, (uint32_t)n->hash, n->kind, n->text, n->len,
				                     &added);
		}
		put_tick(f, fmt, &d, &names);
		if (fmt == FMT_JSONL)
			put_nodes(f, &d, &names);
	}
	coll_delta_free(&d);
	coll_names_free(&names.all);
	coll_names_free(&names.hosts);
	if (e != IOP_ERR_NOT_FOUND) {
		fprintf(stderr, "iopulse export: %s: reading stopped: %s\n", path, iop_strerror(e));
		return 2;
	}
	return 0;
}

/* --totals: the exact totals of the state at the recording's end (its
 * last keyframe and the DELTAs after it), a row per (rank, file, layer,
 * class) with calls, the processes' counters of each summed. Every file
 * (the summary keeps the top 1000 by default; this is the whole list).
 * 0 or 2. */
static int export_totals(struct rec_opened *o, const char *path, enum format fmt, FILE *f,
                         uint64_t *bad)
{
	struct coll_state s;
	struct coll_rec_state_info info = {0};
	enum iop_err e = coll_rec_state_at(o->r, UINT64_MAX, &s, &info);
	*bad += info.bad_deltas;
	struct coll_tick sum;
	coll_tick_init(&sum, s.last_t, s.tick_ns ? s.tick_ns : 1);
	for (struct coll_totals_it it = {.s = &s}; !e && coll_totals_next(&it);) {
		struct coll_cell *c;
		e = coll_tick_row(&sum, &it.key, &c);
		if (!e)
			e = coll_cell_merge(c, &it.cell);
	}
	if (e) {
		fprintf(stderr, "iopulse export: %s: the totals could not be read: %s\n", path,
		        iop_strerror(e));
		coll_tick_free(&sum);
		coll_state_free(&s);
		return 2;
	}
	if (fmt == FMT_CSV)
		fputs("t_s,tick,kind,rank,file,layer,class,ops,bytes,errors,time_s,excl_s\n", f);
	double t_s = (double)(s.last_t + 1) * (double)sum.tick_ns / 1e9;
	for (uint32_t i = 0; i < sum.n; i++) {
		const struct coll_key *key = &sum.key[i];
		if (!sum.cell[i].ops || key->layer >= IOP_LAYER__COUNT || key->cls >= IOP_CLASS__COUNT)
			continue;
		char buf[1024];
		const char *path_text = coll_names_text(&s.names, key->id);
		if (!path_text) {
			snprintf(buf, sizeof buf, "0x%016" PRIx64, key->id);
			path_text = buf;
		}
		struct row r = {.t_s = t_s, .tick = s.last_t, .kind = "total", .file = path_text,
		                .layer = iop_layer_name((enum iop_layer)key->layer),
		                .cls = iop_class_name((enum iop_class)key->cls),
		                .rank = key->rank == COLL_RANK_NONE ? -1 : (int64_t)key->rank,
		                .c = &sum.cell[i], .no_excl = true};
		(fmt == FMT_CSV ? put_csv : put_jsonl)(f, &r);
	}
	coll_tick_free(&sum);
	coll_state_free(&s);
	return 0;
}

static int export(const char *path, enum format fmt, bool totals, const char *out_path)
{
	struct rec_opened o;
	int rc = rec_opened_open("export", path, &o);
	if (rc)
		return rc;
	if (coll_same_file(path, out_path)) {
		fprintf(stderr, "iopulse export: %s is the recording itself; give another -o\n",
		        out_path);
		rec_opened_close(&o);
		return 1;
	}
	FILE *f = out_path ? fopen(out_path, "w") : stdout;
	if (!f) {
		fprintf(stderr, "iopulse export: cannot write %s: %s\n", out_path, strerror(errno));
		rec_opened_close(&o);
		return 2;
	}
	uint64_t bad = 0;
	rc = fmt == FMT_CHROME ? rec_export_chrome(&o, path, f)
	     : totals          ? export_totals(&o, path, fmt, f, &bad)
	                       : export_rows(&o, path, fmt, f, &bad);
	bool werr = fflush(f) != 0 || ferror(f);
	if (out_path && fclose(f))
		werr = true;
	if (werr && !rc) {
		fprintf(stderr, "iopulse export: cannot write %s: %s\n", out_path ? out_path : "output",
		        strerror(errno));
		rc = 2;
	}
	rec_report_damage("export", path, o.r, bad);
	rec_opened_close(&o);
	return rc;
}

int rec_cmd_export(int argc, char **argv)
{
	static const struct option opts[] = {{"format", required_argument, NULL, 'f'},
	                                     {"output", required_argument, NULL, 'o'},
	                                     {"totals", no_argument, NULL, 't'},
	                                     {"help", no_argument, NULL, 'h'},
	                                     {0}};
	enum format fmt = FMT_NONE;
	const char *out = NULL;
	bool totals = false;
	int ch;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
		if (ch == 'f' && (!strcmp(optarg, "csv") || !strcmp(optarg, "jsonl") ||
		                  !strcmp(optarg, "chrome"))) {
			fmt = !strcmp(optarg, "csv") ? FMT_CSV : !strcmp(optarg, "jsonl") ? FMT_JSONL
			                                                                  : FMT_CHROME;
		} else if (ch == 'f') {
			fprintf(stderr, "iopulse export: unknown format '%s' (csv, jsonl or chrome)\n",
			        optarg);
			return 1;
		} else if (ch == 'o') {
			out = optarg;
		} else if (ch == 't') {
			totals = true;
		} else {
			usage(ch == 'h' ? stdout : stderr);
			return ch == 'h' ? 0 : 1;
		}
	}
	if (optind != argc - 1 || fmt == FMT_NONE) {
		fprintf(stderr, "iopulse export: %s; usage: iopulse export FILE --format csv|jsonl|chrome "
		                "[-o OUT]\n", optind != argc - 1 ? "give one recording" : "--format is required");
		return 1;
	}
	if (totals && fmt == FMT_CHROME) {
		fprintf(stderr, "iopulse export: --totals writes csv or jsonl, not chrome\n");
		return 1;
	}
	return export(argv[optind], fmt, totals, out);
}

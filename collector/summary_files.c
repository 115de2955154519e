/* The summary's files. See summary_files.h. */
#include "summary_files.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "events.h"
#include "summary_fs.h"

/* One rank's part of a (file, layer): sum.file and sum.layer name it. */
struct file_rank {
	struct coll_file_sum sum;
	uint32_t rank;
};

/* A totals cell's calls per pattern (coll_totals_next). */
static void cell_patterns(const struct coll_cell *c, uint64_t pat[COLL_PAT__COUNT])
{
	uint64_t ordered = c->consec_ops + c->fwd_ops + c->stride_ops;
	pat[COLL_PAT_CONSEC] = c->consec_ops;
	pat[COLL_PAT_SEQ] = c->fwd_ops;
	pat[COLL_PAT_STRIDE] = c->stride_ops;
	pat[COLL_PAT_RANDOM] = c->off_ops > ordered ? c->off_ops - ordered : 0;
}

static int by_file_layer_rank(const void *a, const void *b)
{
	const struct file_rank *x = a, *y = b;
	if (x->sum.file != y->sum.file)
		return x->sum.file < y->sum.file ? -1 : 1;
	if (x->sum.layer != y->sum.layer)
		return x->sum.layer < y->sum.layer ? -1 : 1;
	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

static int by_bytes_desc(const void *a, const void *b)
{
	const struct coll_file_sum *x = a, *y = b;
	uint64_t bx = x->read_bytes + x->write_bytes, by = y->read_bytes + y->write_bytes;
	if (bx != by)
		return bx < by ? 1 : -1;
	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	return x->layer - y->layer;
}

static void sum_add(struct coll_file_sum *to, const struct coll_file_sum *x)
{
	to->read_bytes += x->read_bytes;
	to->write_bytes += x->write_bytes;
	to->ops += x->ops;
	to->read_ops += x->read_ops;
	to->write_ops += x->write_ops;
	to->time_ns += x->time_ns;
	for (unsigned p = 0; p < COLL_PAT__COUNT; p++)
		to->pat[p] += x->pat[p];
}

struct coll_file_sum *coll_file_sums(const struct coll_state *s, size_t *n)
{
	*n = 0;
	struct file_rank *v = malloc((s->latest.n + 1) * sizeof(*v));
	if (!v)
		return NULL;
	size_t m = 0;
	for (struct coll_totals_it it = {.s = s}; coll_totals_next(&it);) {
		const struct coll_key *k = &it.key;
		const struct coll_cell *c = &it.cell;
		if (!k->id)
			continue;
		bool rd = k->cls == IOP_CLASS_READ, wr = k->cls == IOP_CLASS_WRITE;
		v[m++] = (struct file_rank){.sum = {.file = k->id, .layer = k->layer,
		                                    .read_bytes = rd ? c->bytes : 0,
		                                    .write_bytes = wr ? c->bytes : 0, .ops = c->ops,
		                                    .read_ops = rd ? c->ops : 0,
		                                    .write_ops = wr ? c->ops : 0,
		                                    .time_ns = c->time_ns},
		                            .rank = k->rank};
		cell_patterns(c, v[m - 1].sum.pat);
	}
	qsort(v, m, sizeof(*v), by_file_layer_rank);
	struct coll_file_sum *out = malloc((m + 1) * sizeof(*out));
	if (!out) {
		free(v);
		return NULL;
	}
	size_t f = 0;
	for (size_t i = 0; i < m; i++) {
		bool same_file = f && out[f - 1].file == v[i].sum.file &&
		                 out[f - 1].layer == v[i].sum.layer;
		if (!same_file)
			out[f++] = (struct coll_file_sum){.file = v[i].sum.file, .layer = v[i].sum.layer};
		sum_add(&out[f - 1], &v[i].sum);
		if (!same_file || v[i - 1].rank != v[i].rank)
			out[f - 1].ranks++;
	}
	free(v);
	qsort(out, f, sizeof(*out), by_bytes_desc);
	*n = f;
	return out;
}

const char *coll_file_text(const struct coll_state *s, uint64_t file, char *buf, size_t len)
{
	const char *t = coll_names_text(&s->names, file);
	if (t)
		return t;
	snprintf(buf, len, "<unnamed %016" PRIx64 ">", file);
	return buf;
}

static json_t *entry_json(const struct coll_file_sum *f, const char *kind, const char *path,
                          json_t *mount)
{
	json_t *pat = json_object();
	for (unsigned p = 0; p < COLL_PAT__COUNT; p++)
		json_object_set_new(pat, coll_pat_name(p), json_integer((json_int_t)f->pat[p]));
	json_t *o = json_pack("{s:s,s:s,s:s,s:I,s:I,s:I,s:I,s:I,s:f,s:I}", "kind", kind, "path", path,
	                      "layer", iop_layer_name(f->layer), "read_bytes",
	                      (json_int_t)f->read_bytes, "write_bytes", (json_int_t)f->write_bytes,
	                      "read_ops", (json_int_t)f->read_ops, "write_ops",
	                      (json_int_t)f->write_ops, "meta_ops",
	                      (json_int_t)(f->ops - f->read_ops - f->write_ops), "time_s",
	                      f->time_ns / 1e9, "ranks", (json_int_t)f->ranks);
	json_object_set_new(o, "pattern", pat);
	json_object_set_new(o, "mount", mount);
	return o;
}

struct by_time {
	uint64_t time_ns;
	size_t i; /* in the list by bytes */
};

static int by_time_desc(const void *a, const void *b)
{
	const struct by_time *x = a, *y = b;
	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? 1 : -1;
	return (x->i > y->i) - (x->i < y->i);
}

/* keep[i] for the top max of f by bytes (its order) and by time. */
static bool choose(const struct coll_file_sum *f, size_t n, uint32_t max, uint8_t *keep)
{
	for (size_t i = 0; i < n; i++)
		keep[i] = i < max;
	if (n <= max)
		return true;
	struct by_time *t = malloc(n * sizeof(*t));
	if (!t)
		return false;
	for (size_t i = 0; i < n; i++)
		t[i] = (struct by_time){f[i].time_ns, i};
	qsort(t, n, sizeof(*t), by_time_desc);
	for (size_t i = 0; i < max; i++)
		keep[t[i].i] = 1;
	free(t);
	return true;
}

struct file_layer {
	uint64_t file;
	uint8_t layer;
};

static int fl_cmp(const void *a, const void *b)
{
	const struct file_layer *x = a, *y = b;
	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	return (x->layer > y->layer) - (x->layer < y->layer);
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* The distinct ranks, per layer, of the entries not kept: each (layer,
 * rank) of a folded entry's counters once, sorted, then counted. */
static void other_ranks(const struct coll_state *s, const struct coll_file_sum *f, size_t n,
                        const uint8_t *keep, struct coll_file_sum other[IOP_LAYER__COUNT])
{
	struct file_layer *gone = malloc((n + 1) * sizeof(*gone));
	uint64_t *pairs = malloc((s->latest.n + 1) * sizeof(*pairs)); /* layer << 32 | rank */
	size_t m = 0, p = 0;
	for (size_t i = 0; gone && i < n; i++)
		if (!keep[i])
			gone[m++] = (struct file_layer){f[i].file, f[i].layer};
	if (gone && pairs) {
		qsort(gone, m, sizeof(*gone), fl_cmp);
		for (struct coll_totals_it it = {.s = s}; coll_totals_next(&it);) {
			struct file_layer k = {it.key.id, it.key.layer};
			if (k.file && k.layer < IOP_LAYER__COUNT && it.key.rank != COLL_RANK_NONE &&
			    bsearch(&k, gone, m, sizeof(*gone), fl_cmp))
				pairs[p++] = (uint64_t)k.layer << 32 | it.key.rank;
		}
		qsort(pairs, p, sizeof(*pairs), u64_cmp);
		for (size_t i = 0; i < p; i++)
			if (!i || pairs[i] != pairs[i - 1])
				other[pairs[i] >> 32].ranks++;
	}
	free(gone);
	free(pairs);
}

json_t *coll_summary_files(const struct coll_state *s, uint32_t max)
{
	json_t *a = json_array();
	size_t n;
	struct coll_file_sum *f = coll_file_sums(s, &n);
	uint8_t *keep = malloc(n + 1);
	if (!f || !keep || !choose(f, n, max ? max : COLL_SUMMARY_FILES, keep)) {
		free(f);
		free(keep);
		return a;
	}
	struct coll_file_sum other[IOP_LAYER__COUNT] = {0};
	uint64_t folded[IOP_LAYER__COUNT] = {0};
	char buf[40], mount[1024];
	for (size_t i = 0; i < n; i++) {
		if (!keep[i]) {
			if (f[i].layer < IOP_LAYER__COUNT) {
				sum_add(&other[f[i].layer], &f[i]);
				folded[f[i].layer]++;
			}
			continue;
		}
		const struct coll_name *nm = coll_names_get(&s->names, f[i].file);
		const char *mp = coll_summary_mount(s, f[i].file, mount, sizeof mount);
		json_array_append_new(a, entry_json(&f[i], nm && nm->kind == IOP_NAME_DATASET ? "dataset"
		                                                                             : "file",
		                                    coll_file_text(s, f[i].file, buf, sizeof buf),
		                                    mp ? json_string(mp) : json_null()));
	}
	other_ranks(s, f, n, keep, other);
	for (unsigned l = 0; l < IOP_LAYER__COUNT; l++) {
		if (!folded[l])
			continue;
		other[l].layer = (uint8_t)l;
		json_t *o = entry_json(&other[l], "other", "other", json_null());
		json_object_set_new(o, "files", json_integer((json_int_t)folded[l]));
		json_array_append_new(a, o);
	}
	free(f);
	free(keep);
	return a;
}

int coll_parse_summary_files(const char *text, uint32_t *max)
{
	if (!strcmp(text, "all")) {
		*max = COLL_SUMMARY_FILES_ALL;
		return 0;
	}
	char *end;
	unsigned long n = strtoul(text, &end, 10);
	if (!*text || *end || text[0] == '-' || n < 1 || n > (1ul << 24))
		return -1;
	*max = (uint32_t)n;
	return 0;
}

/* Recording size per rank and hour, at 1 s ticks, without raw events:
 *
 *   recording_kib_per_rank_hour   the .iop file's bytes / ranks / hours
 *
 * RANKS (default 16) iop-loadgen ranks (bench/loadgen_rank.c: the MIXED
 * workload, paced at EVENTS_PER_S each, default 100) send frames to a
 * real leaf, whose deltas go to a real root (in this process); every
 * tick the root closes is recorded the way `iopulse run --record` does it
 * (coll_record_tick_state, the default detail "view": a DELTA a tick
 * with every rank's rows and files and sites up to 256, keyframes spaced
 * by their cost; record.h), into a
 * temporary file. Time is simulated (nothing waits on a clock), SECONDS of
 * it (default 3600: the keyframes grow as the history fills, so a shorter
 * run under-counts); KEEP_RECORDING=1 keeps the file; KEYFRAMES=0 leaves the keyframes out, to see the
 * DELTAs' share. Alerts are not recorded (a few frames per alert).
 *
 *   recording_kib_per_rank_hour_1024      the default at 1024 ranks (600 s) and
 *   recording_kib_per_rank_hour_4096      4096 ranks (300 s; SECONDS_BIG sets both)
 *   recording_kib_per_rank_hour_full      the same with --record-detail full
 *                                         (every tick whole: ~16 times more)
 *   recording_kib_per_rank_hour_by_rate   the lean one at 1 and 10 calls/s a rank
 *
 *   recording_rows_by_kind                every closed tick's rows by kind (RANK,
 *                                         FILE, LAYER, SITE), each compressed
 *                                         alone, with the previous tick as a
 *                                         prefix, and without histograms: where a
 *                                         tick's bytes go (docs/recording.md); and
 *                                         the ticks' counters, as written and as
 *                                         changes since their last values
 *
 * Each line also splits the file into its DELTA and KEYFRAME frames' bytes.
 * Usage: recsize_bench [NAME...]. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zstd.h>

#include "bench_util.h"
#include "clock.h"
#include "ctr_cols.h"
#include "leaf.h"
#include "loadgen.h"
#include "rec.h"
#include "rec_io.h"
#include "record.h"
#include "root.h"

#define SEC    1000000000ull
#define T0     (1700000000ull * SEC)
/* issue 19: 512 KiB a rank and hour up to 1024 ranks, 128 at 4096 */
#define TARGET(ranks) ((ranks) >= 4096 ? 128.0 : 512.0)

static const struct iop_key key = {{3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3}};
static const uint64_t job_id = 0x7ec0;

/* What each kind of row of the root's closed ticks costs, each tick's
 * rows of one kind encoded alone and compressed as a recording's frame is
 * (zstd level 1): as they are, with the previous tick's encoding as a
 * zstd prefix (what delta-coding against the last tick could win at
 * most), and without their histograms; and the ticks with FILE rows
 * folded to 256 (the "other" row). Bytes summed over the run. */
enum { ROWS_AS_IS, ROWS_PREFIX, ROWS_NO_HIST, ROWS_COUNT, ROWS__N };

/* The same rows coded by column (each field of every row, then the next
 * field), to measure what a columnar DELTA could win before building one:
 * COLS_PLAIN the same varints; COLS_INDEX with each 8-byte file or site id
 * as its index in a recording-wide dictionary (first appearance);
 * COLS_TIGHT besides, a histogram's count and sum left out where they equal
 * the row's ops and time (a flag), its max as max - min, excl_ns as
 * time_ns - excl_ns, oldest_ns from the tick's end; COLS_COARSE besides,
 * the histogram's buckets merged to 8 an octave (p50/p99 to ~9 %, not the
 * engine's 32: the live dashboard would have to show the coarse values). */
enum { COLS_PLAIN, COLS_INDEX, COLS_TIGHT, COLS_COARSE, COLS_V__N };
struct id_dict {
	uint64_t *id;
	uint32_t *at, n, n_slots;
};
struct rows_by_kind {
	uint64_t by[COLL_ROW_SITE + 1][ROWS__N];
	uint64_t ctr_rows;                         /* as delta version 5 wrote them */
	uint64_t ctr_abs, ctr_chg, ctr_idx, ctr_n; /* the ticks' counters: as written, as
	                                              changes, as changes keyed by an index */
	struct coll_ctrset ctr_last;      /* each counter's last value */
	uint64_t folded256; /* every row, FILE rows folded to 256 */
	uint64_t cols[COLS_V__N]; /* those rows by column (cols_tick), per variant */
	struct id_dict ids;       /* FILE and SITE ids by first appearance */
	uint8_t *colbuf;          /* C__N columns of COL_CAP bytes */
	uint64_t col_alone[64];   /* COLS_COARSE's columns, each compressed alone */
	struct coll_tick one;
	uint8_t *raw, *prev[COLL_ROW_SITE + 1], *z;
	size_t prev_n[COLL_ROW_SITE + 1];
	ZSTD_CCtx *cc;
};

struct pipe {
	struct coll_root *root;
	struct coll_record *rec;
	uint64_t ticks;
	bool keyframes;
	struct rows_by_kind *rows; /* the recording_rows_by_kind benchmark */
};

#define ROWS_BUF (16u << 20)

/* Compressed bytes of raw[0, n), with prefix pre[0, pn) when pn > 0. */
static uint64_t compressed(struct rows_by_kind *r, size_t n, const uint8_t *pre, size_t pn)
{
	ZSTD_CCtx_reset(r->cc, ZSTD_reset_session_only);
	ZSTD_CCtx_setParameter(r->cc, ZSTD_c_compressionLevel, 1);
	if (pn)
		ZSTD_CCtx_refPrefix(r->cc, pre, pn);
	size_t z = ZSTD_compress2(r->cc, r->z, ZSTD_compressBound(ROWS_BUF), r->raw, n);
	return ZSTD_isError(z) ? 0 : z;
}

static size_t encoded(struct rows_by_kind *r, const struct coll_tick *k)
{
	struct iop_wcur c = iop_wcur_make(r->raw, ROWS_BUF);
	coll_tick_encode(k, &c);
	return c.err ? 0 : (size_t)(c.p - r->raw);
}

/* r->one := k's rows of kind (0: every kind). */
static void rows_of(struct rows_by_kind *r, const struct coll_tick *k, int kind)
{
	coll_tick_reset(&r->one, k->t);
	for (uint32_t i = 0; i < k->n; i++) {
		struct coll_cell *c;
		if ((!kind || k->key[i].kind == kind) && !coll_tick_row(&r->one, &k->key[i], &c))
			(void)coll_cell_merge(c, &k->cell[i]);
	}
}

static void die(const char *what, enum iop_err e)
{
	fprintf(stderr, "recsize_bench: %s: %s\n", what, iop_strerror(e));
	exit(1);
}

/* A DELTA's counters, compressed: as written (each one's job totals so
 * far) and as each one's change since its last value. */
static void counters_tick(struct rows_by_kind *r, const struct coll_ctrset *ctr)
{
	struct iop_wcur c = iop_wcur_make(r->raw, ROWS_BUF);
	coll_counters_encode(ctr->v, ctr->n, &c, COLL_DELTA_VERSION);
	if (c.err)
		die("counters", c.err);
	r->ctr_abs += compressed(r, (size_t)(c.p - r->raw), NULL, 0);
	c = iop_wcur_make(r->raw, ROWS_BUF);
	coll_counters_encode(ctr->v, ctr->n, &c, 5);
	r->ctr_rows += compressed(r, (size_t)(c.p - r->raw), NULL, 0);
	c = iop_wcur_make(r->raw, ROWS_BUF);
	for (uint32_t i = 0; i < ctr->n; i++) {
		struct coll_counter grew;
		if (coll_ctrset_add(&r->ctr_last, &ctr->v[i], UINT32_MAX, &grew))
			die("counters", IOP_ERR_NOMEM);
		coll_counter_encode(&grew, &c);
	}
	if (c.err)
		die("counters", c.err);
	size_t n = (size_t)(c.p - r->raw);
	r->ctr_chg += compressed(r, n, NULL, 0);
	/* the key (rank, node, pid, image, file, layer, class) as the index
	 * of the counter in a recording's dictionary of them: estimated by a
	 * 14-bit hash of the key in its place, values as above */
	struct iop_rcur rc = iop_rcur_make(r->raw, n);
	uint8_t *out = r->raw + n;
	struct iop_wcur w = iop_wcur_make(out, ROWS_BUF - n);
	for (uint32_t i = 0; i < ctr->n; i++) {
		struct coll_counter g;
		if (coll_counter_decode(&g, &rc))
			die("counters", IOP_ERR_MALFORMED);
		const struct coll_counter *k = &ctr->v[i];
		uint64_t h = (k->file ^ (uint64_t)k->rank << 40 ^ (uint64_t)k->pid << 20 ^
		              (uint64_t)(k->layer << 4 | k->cls)) * UINT64_C(0x9e3779b97f4a7c15);
		iop_put_varint(&w, h >> 50);
		iop_put_varint(&w, g.ops);
		iop_put_varint(&w, g.bytes);
		iop_put_varint(&w, g.time_ns);
		iop_put_varint(&w, g.errors);
		for (unsigned p = 0; p < COLL_PAT__COUNT; p++)
			iop_put_varint(&w, g.pat[p]);
	}
	size_t m = (size_t)(w.p - out);
	memmove(r->raw, out, m);
	r->ctr_idx += compressed(r, m, NULL, 0);
	r->ctr_n += ctr->n;
}

/* id's index in d, added at the end when new (the table never fills: 1 << 22
 * slots for an hour's files) */
static uint32_t id_index(struct id_dict *d, uint64_t id)
{
	if (!d->id) {
		d->n_slots = 1u << 22;
		if (!(d->id = calloc(d->n_slots, sizeof(*d->id))) ||
		    !(d->at = calloc(d->n_slots, sizeof(*d->at))))
			die("ids", IOP_ERR_NOMEM);
	}
	uint32_t i = (uint32_t)((id * UINT64_C(0x9e3779b97f4a7c15)) >> 42) & (d->n_slots - 1);
	for (; d->at[i]; i = (i + 1) & (d->n_slots - 1))
		if (d->id[i] == id)
			return d->at[i] - 1;
	if (d->n + 1 >= d->n_slots / 2)
		die("ids", IOP_ERR_OVERSIZED);
	d->id[i] = id;
	d->at[i] = ++d->n;
	return d->n - 1;
}

enum { C_KIND, C_LC, C_RANK, C_ID, C_CELL, C_HFLAG = C_CELL + 24, C_HCOUNT, C_HMIN, C_HMAX,
       C_HSUM, C_HNNZ, C_HGAP, C_HK, C__N };
#define COL_CAP (1u << 19)

/* k's rows coded by column as variant v (above), compressed as a frame is. */
static uint64_t cols_tick(struct rows_by_kind *r, const struct coll_tick *k, int v)
{
	struct iop_wcur w[C__N];
	for (int i = 0; i < C__N; i++)
		w[i] = iop_wcur_make(r->colbuf + (size_t)i * COL_CAP, COL_CAP);
	uint64_t tick_end = (uint64_t)(k->t + 1) * k->tick_ns;
	uint8_t hbuf[1 << 14];
	for (uint32_t i = 0; i < k->n; i++) {
		const struct coll_key *rk = &k->key[i];
		const struct coll_cell *c = &k->cell[i];
		bool tight = v >= COLS_TIGHT;
		iop_put_u8(&w[C_KIND], rk->kind);
		iop_put_u8(&w[C_LC], (uint8_t)(rk->layer << 4 | rk->cls));
		iop_put_varint(&w[C_RANK], rk->rank);
		if (v == COLS_PLAIN || !rk->id)
			iop_put_u64le(&w[C_ID], rk->id);
		else
			iop_put_varint(&w[C_ID], id_index(&r->ids, rk->id));
		const uint64_t f[24] = {
			c->ops, c->bytes, c->errors, c->time_ns,
			tight ? c->time_ns - c->excl_ns : c->excl_ns, c->busy_ns, c->child_ops,
			c->child_bytes, c->off_ops, c->consec_ops, c->size_ops[0], c->size_ops[1],
			c->size_ops[2], c->size_ops[3], c->inflight,
			tight && c->oldest_ns ? tick_end - c->oldest_ns : c->oldest_ns, c->coll_ops,
			c->fwd_ops, c->stride_ops, c->lock_ns, c->wait_ns, c->match_ops, c->last_ops,
			c->late_ns};
		for (int j = 0; j < 24; j++)
			iop_put_varint(&w[C_CELL + j], f[j]);
		/* the histogram as encoded, taken apart */
		struct iop_wcur hw = iop_wcur_make(hbuf, sizeof hbuf);
		iop_hist_encode(&c->hist, &hw);
		struct iop_rcur hr = iop_rcur_make(hbuf, (size_t)(hw.p - hbuf));
		uint64_t count = iop_get_varint(&hr);
		if (!count) {
			iop_put_varint(&w[tight ? C_HFLAG : C_HCOUNT], 0);
			continue;
		}
		uint64_t min = iop_get_varint(&hr), max = iop_get_varint(&hr),
			 sum = iop_get_varint(&hr), nnz = iop_get_varint(&hr);
		bool same = tight && count == c->ops && sum == c->time_ns;
		if (tight)
			iop_put_varint(&w[C_HFLAG], same ? 1 : 2);
		if (!same) {
			iop_put_varint(&w[C_HCOUNT], count);
			iop_put_varint(&w[C_HSUM], sum);
		}
		iop_put_varint(&w[C_HMIN], min);
		iop_put_varint(&w[C_HMAX], tight ? max - min : max);
		if (count == 1 && tight)
			continue; /* its one bucket is min's */
		uint64_t at = 0, q_last = UINT64_MAX, k_acc = 0, q_next = 0, n_out = 0;
		struct iop_wcur pairs = iop_wcur_make(hbuf + sizeof hbuf / 2, sizeof hbuf / 2);
		for (uint64_t j = 0; j < nnz; j++) {
			at += iop_get_varint(&hr);
			uint64_t kk = iop_get_varint(&hr);
			uint64_t q = v >= COLS_COARSE && at >= 64 ? 64 + ((at - 64) >> 2) : at;
			if (q != q_last && q_last != UINT64_MAX) {
				iop_put_varint(&pairs, q_last - q_next);
				iop_put_varint(&pairs, k_acc);
				q_next = q_last + 1;
				n_out++;
				k_acc = 0;
			}
			q_last = q;
			k_acc += kk;
			at++;
		}
		iop_put_varint(&pairs, q_last - q_next);
		iop_put_varint(&pairs, k_acc);
		n_out++;
		iop_put_varint(&w[C_HNNZ], n_out);
		struct iop_rcur pr = iop_rcur_make(hbuf + sizeof hbuf / 2,
		                                   (size_t)(pairs.p - (hbuf + sizeof hbuf / 2)));
		for (uint64_t j = 0; j < n_out; j++) {
			iop_put_varint(&w[C_HGAP], iop_get_varint(&pr));
			iop_put_varint(&w[C_HK], iop_get_varint(&pr));
		}
	}
	size_t n = 0;
	for (int i = 0; i < C__N; i++) {
		if (w[i].err)
			die("columns", w[i].err);
		size_t len = (size_t)(w[i].p - (r->colbuf + (size_t)i * COL_CAP));
		if (v == COLS_COARSE && len) {
			memcpy(r->raw, r->colbuf + (size_t)i * COL_CAP, len);
			r->col_alone[i] += compressed(r, len, NULL, 0);
		}
		n += len;
	}
	n = 0;
	for (int i = 0; i < C__N; i++) {
		size_t len = (size_t)(w[i].p - (r->colbuf + (size_t)i * COL_CAP));
		memcpy(r->raw + n, r->colbuf + (size_t)i * COL_CAP, len);
		n += len;
	}
	return compressed(r, n, NULL, 0);
}

static void rows_tick(struct rows_by_kind *r, const struct coll_tick *k)
{
	for (int kind = COLL_ROW_RANK; kind <= COLL_ROW_SITE; kind++) {
		rows_of(r, k, kind);
		uint64_t *by = r->by[kind];
		by[ROWS_COUNT] += r->one.n;
		size_t n = encoded(r, &r->one);
		by[ROWS_AS_IS] += compressed(r, n, NULL, 0);
		by[ROWS_PREFIX] += compressed(r, n, r->prev[kind], r->prev_n[kind]);
		memcpy(r->prev[kind], r->raw, n);
		r->prev_n[kind] = n;
		for (uint32_t i = 0; i < r->one.n; i++)
			iop_hist_reset(&r->one.cell[i].hist);
		by[ROWS_NO_HIST] += compressed(r, encoded(r, &r->one), NULL, 0);
	}
	rows_of(r, k, 0);
	(void)coll_tick_fold_files(&r->one, 256);
	r->folded256 += compressed(r, encoded(r, &r->one), NULL, 0);
	for (int v = 0; v < COLS_V__N; v++)
		r->cols[v] += cols_tick(r, &r->one, v);
}

static void to_root(void *arg, struct coll_delta *d)
{
	struct pipe *p = arg;
	(void)coll_root_delta(p->root, d);
}

static void record(void *arg, const struct coll_delta *d, const struct coll_state *s)
{
	struct pipe *p = arg;
	if (p->rows) {
		rows_tick(p->rows, &d->tick);
		counters_tick(p->rows, &d->ctr);
		p->ticks++;
		return;
	}
	if (p->keyframes)
		coll_record_tick_state(p->rec, d, s);
	else
		coll_record_tick(p->rec, d);
	p->ticks++;
}

/* Stored bytes of each frame type in the file at path (a frame's bytes
 * run to the next frame's offset, the last one's to the file's end). */
static void bytes_by_type(const char *path, uint64_t by_type[REC_TYPE_COUNT])
{
	struct rec_io *io;
	struct rec_reader *rd;
	char why[256];
	if (rec_io_file_open(path, &io) || rec_open(io, &rd, why, sizeof why))
		die(path, IOP_ERR_IO);
	struct rec_info info;
	rec_info(rd, &info);
	struct rec_frame f;
	uint64_t at = 0;
	int type = -1;
	while (rec_next(rd, &f, NULL, 0) == IOP_OK) {
		if (type >= 0)
			by_type[type] += f.offset - at;
		at = f.offset;
		type = (int)f.type;
	}
	if (type >= 0)
		by_type[type] += info.file_bytes - at; /* END's bytes go with the last frame */
	rec_reader_close(rd);
}

struct result {
	double kib, delta_kib, key_kib; /* a rank and hour: the file, its DELTAs, its KEYFRAMEs */
	uint64_t ticks, events, keyframes, key_raw, file_bytes;
	double cpu_s;
};

/* Records SECONDS of RANKS loadgen ranks at rate calls/s each (above). */
static void measure(unsigned ranks, unsigned seconds, double rate, uint64_t detail_ns,
                    bool keyframes, bool keep, struct rows_by_kind *rows, struct result *res)
{
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char path[4096];
	snprintf(path, sizeof path, "%s/recsize_bench.%d.%g.iop", tmp, (int)getpid(), rate);

	struct lg_opts o = {.ranks = ranks, .nodes = ranks > 64 ? ranks / 64 : 1, .threads = 1, .events_per_s = rate,
	                    .duration_s = -1, .batch_ms = 100, .slow_rank = -1, .slow_factor = 1,
	                    .workload = IOP_WL_MIXED, .seed = 1, .job_id = job_id, .key = key,
	                    .n_urls = 1};
	struct lg_rank *r = calloc(ranks, sizeof(*r));
	for (unsigned i = 0; r && i < ranks; i++)
		if (!lg_rank_init(&r[i], &o, i))
			r = NULL;
	if (!r)
		die("ranks", IOP_ERR_NOMEM);
	struct coll_leaf_cfg lc;
	coll_leaf_cfg_default(&lc);
	lc.job_id = job_id;
	lc.key = key;
	struct coll_root_cfg rc;
	coll_root_cfg_default(&rc, lc.tick_ns);
	struct coll_leaf *leaf;
	struct pipe p = {.keyframes = keyframes, .rows = rows};
	enum iop_err e = coll_leaf_new(&lc, T0, &leaf);
	if (!e)
		e = coll_root_new(&rc, T0, &p.root);
	if (e)
		die("collector", e);
	struct coll_job_info job = {.id = job_id, .start_ns = T0, .command = "recsize_bench",
	                            .tick_ns = SEC};
	struct coll_record_opts ro = {
		.detail_ns = detail_ns,
		.keyframe_share = getenv("KF_SHARE") ? atof(getenv("KF_SHARE")) : 0,
		.keyframe_periods = getenv("KF_PERIODS") ? (uint32_t)atoi(getenv("KF_PERIODS")) : 0};
	p.rec = coll_record_open_opts(path, &job, &ro);
	if (!p.rec)
		exit(1);

	static uint8_t buf[LG_FRAME_CAP];
	uint64_t step = o.batch_ms * 1000000ull, events = 0, c0 = bench_cpu_ns();
	for (uint64_t now = step; now <= (uint64_t)seconds * SEC; now += step) {
		for (unsigned i = 0; i < ranks; i++)
			if ((e = lg_rank_to_leaf(&r[i], &o, now, T0, buf, leaf, &events)))
				die("frames to the leaf", e);
		coll_leaf_advance(leaf, T0 + now, false, to_root, &p);
		coll_root_advance(p.root, T0 + now, false, record, &p);
	}
	struct coll_record_stats st;
	coll_record_stats(p.rec, &st);
	coll_record_close(p.rec);
	struct stat sb;
	if (stat(path, &sb) != 0)
		die(path, IOP_ERR_IO);
	uint64_t by_type[REC_TYPE_COUNT] = {0};
	bytes_by_type(path, by_type);
	if (!keep)
		unlink(path);
	else
		fprintf(stderr, "recsize_bench: kept %s\n", path);
	double per = 1024.0 * ranks * ((double)p.ticks / 3600.0);
	*res = (struct result){.kib = (double)sb.st_size / per,
	                       .delta_kib = (double)by_type[REC_DELTA] / per,
	                       .key_kib = (double)by_type[REC_KEYFRAME] / per,
	                       .ticks = p.ticks,
	                       .events = events,
	                       .keyframes = st.keyframes,
	                       .key_raw = st.keyframe_bytes,
	                       .file_bytes = (uint64_t)sb.st_size,
	                       .cpu_s = (double)(bench_cpu_ns() - c0) / 1e9};
	for (unsigned i = 0; i < ranks; i++)
		lg_rank_free(&r[i]);
	free(r);
	coll_leaf_free(leaf);
	coll_root_free(p.root);
}

static void print(const char *name, unsigned ranks, double rate, const struct result *x)
{
	printf("%s %.1f KiB (target <= %.0f; %u ranks at %g calls/s each, %" PRIu64
	       " ticks, %" PRIu64 " events, %.1f MiB file: DELTAs %.1f, KEYFRAMEs %.1f KiB a "
	       "rank and hour (%.0f %% of the file; target < 25), %" PRIu64
	       " keyframes, the last %.1f MiB raw; %.1f s CPU)\n",
	       name, x->kib, TARGET(ranks), ranks, rate, x->ticks, x->events,
	       (double)x->file_bytes / (1 << 20), x->delta_kib, x->key_kib,
	       x->kib > 0 ? 100 * x->key_kib / x->kib : 0, x->keyframes,
	       (double)x->key_raw / (1 << 20), x->cpu_s);
}

int main(int argc, char **argv)
{
	unsigned ranks = getenv("RANKS") ? (unsigned)atoi(getenv("RANKS")) : 16;
	unsigned seconds = getenv("SECONDS") ? (unsigned)atoi(getenv("SECONDS")) : 3600;
	double rate = getenv("EVENTS_PER_S") ? atof(getenv("EVENTS_PER_S")) : 100;
	if (ranks == 0 || seconds < 60 || rate <= 0)
		die("RANKS >= 1, SECONDS >= 60, EVENTS_PER_S > 0", IOP_ERR_INVAL);
	bool keyframes = !getenv("KEYFRAMES") || atoi(getenv("KEYFRAMES"));
	bool keep = getenv("KEEP_RECORDING") != NULL;
	struct result x;
	if (bench_wanted(argc, argv, "recording_kib_per_rank_hour")) {
		measure(ranks, seconds, rate, 0, keyframes, keep, NULL, &x);
		print("recording_kib_per_rank_hour", ranks, rate, &x);
	}
	/* larger jobs (issue 19): 1024 ranks (every rank kept a tick), 4096
	 * (above the rank cap: node rows and the ranks' ends); shorter spans,
	 * SECONDS_BIG (default 600 and 300), as an hour of them takes long */
	static const unsigned big[] = {1024, 4096};
	for (size_t i = 0; i < sizeof big / sizeof big[0]; i++) {
		char name[64];
		snprintf(name, sizeof name, "recording_kib_per_rank_hour_%u", big[i]);
		if (!bench_wanted(argc, argv, name))
			continue;
		unsigned span = getenv("SECONDS_BIG") ? (unsigned)atoi(getenv("SECONDS_BIG"))
		                                      : big[i] > 1024 ? 300 : 600;
		measure(big[i], span < 60 ? 60 : span, rate, 0, keyframes, keep, NULL, &x);
		print(name, big[i], rate, &x);
	}
	/* --record-detail full: every tick whole, as the live root had it */
	if (bench_wanted(argc, argv, "recording_kib_per_rank_hour_full")) {
		measure(ranks, seconds, rate, UINT64_MAX, keyframes, keep, NULL, &x);
		print("recording_kib_per_rank_hour_full", ranks, rate, &x);
	}
	/* the same job at lower call rates: what a recording costs depends on
	 * how busy the ranks are (docs/recording.md, "Figures") */
	if (bench_wanted(argc, argv, "recording_kib_per_rank_hour_by_rate")) {
		static const double rates[] = {1, 10};
		for (size_t i = 0; i < sizeof rates / sizeof rates[0]; i++) {
			char name[96];
			snprintf(name, sizeof name, "recording_kib_per_rank_hour_at_%g_calls_per_s",
			         rates[i]);
			measure(ranks, seconds, rates[i], 0, keyframes, keep, NULL, &x);
			print(name, ranks, rates[i], &x);
		}
	}
	/* every closed tick whole, its rows by kind (rows_tick) */
	if (bench_wanted(argc, argv, "recording_rows_by_kind")) {
		struct rows_by_kind *r = calloc(1, sizeof(*r));
		if (!r || !(r->raw = malloc(ROWS_BUF)) || !(r->z = malloc(ZSTD_compressBound(ROWS_BUF))) ||
		    !(r->cc = ZSTD_createCCtx()))
			die("rows", IOP_ERR_NOMEM);
		for (int k = COLL_ROW_RANK; k <= COLL_ROW_SITE; k++)
			if (!(r->prev[k] = malloc(ROWS_BUF)))
				die("rows", IOP_ERR_NOMEM);
		if (!(r->colbuf = malloc((size_t)C__N * COL_CAP)))
			die("rows", IOP_ERR_NOMEM);
		coll_tick_init(&r->one, 0, SEC);
		measure(ranks, seconds, rate, UINT64_MAX, false, false, r, &x);
		double per = 1024.0 * ranks * ((double)x.ticks / 3600.0);
		static const char *const kind[] = {"", "rank", "file", "layer", "site"};
		for (int k = COLL_ROW_RANK; k <= COLL_ROW_SITE; k++) {
			const uint64_t *b = r->by[k];
			printf("recording_rows_%s_kib_per_rank_hour %.1f KiB (%u ranks at %g calls/s each, "
			       "%.1f rows a tick; with the previous tick as a zstd prefix %.1f, "
			       "without histograms %.1f)\n",
			       kind[k], b[ROWS_AS_IS] / per, ranks, rate,
			       (double)b[ROWS_COUNT] / (double)x.ticks, b[ROWS_PREFIX] / per,
			       b[ROWS_NO_HIST] / per);
		}
		printf("recording_rows_files_folded_256_kib_per_rank_hour %.1f KiB (every row, FILE "
		       "rows folded to 256 a tick)\n",
		       r->folded256 / per);
		printf("recording_rows_columns_kib_per_rank_hour %.1f KiB (those rows by column: "
		       "the same varints; with ids by a recording-wide index %.1f (%u ids); also "
		       "histogram count and sum left out where they are ops and time, differences "
		       "%.1f; also histograms of 8 buckets an octave %.1f)\n",
		       r->cols[COLS_PLAIN] / per, r->cols[COLS_INDEX] / per, r->ids.n,
		       r->cols[COLS_TIGHT] / per, r->cols[COLS_COARSE] / per);
		if (getenv("COLUMNS_DETAIL"))
			for (int i = 0; i < C__N; i++)
				printf("  column %d: %.1f KiB a rank and hour alone\n", i,
				       r->col_alone[i] / per);
		printf("recording_counters_kib_per_rank_hour %.1f KiB (%.1f counters a tick, each "
		       "the job's totals so far, by column; counter after counter, as delta "
		       "version 5 wrote them, %.1f; as each one's change since its last value %.1f; "
		       "those with the key as a 14-bit dictionary index, estimated, %.1f)\n",
		       r->ctr_abs / per, (double)r->ctr_n / (double)x.ticks, r->ctr_rows / per,
		       r->ctr_chg / per, r->ctr_idx / per);
		coll_ctrset_free(&r->ctr_last);
		free(r->ids.id);
		free(r->colbuf);
		free(r->ids.at);
		coll_tick_free(&r->one);
		for (int k = COLL_ROW_RANK; k <= COLL_ROW_SITE; k++)
			free(r->prev[k]);
		ZSTD_freeCCtx(r->cc);
		free(r->raw);
		free(r->z);
		free(r);
	}
	return 0;
}

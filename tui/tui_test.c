/* Unit tests of the dashboard's pure parts: filter and seek parsing,
 * formatting, table building on a synthetic state, sort stability, held
 * order and the heatmap's flags. */
#include <inttypes.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "events.h"
#include "filter.h"
#include "fsmap.h"
#include "hash.h"
#include "fmt.h"
#include "model.h"
#include "synth.h"

static void filter_parse(void **st)
{
	struct tui_filter f;
	char err[128];
	assert_int_equal(tui_filter_parse(&f, "rank=0-3,7", err, sizeof err), 0);
	assert_int_equal(f.n, 1);
	assert_int_equal(f.t[0].kind, TUI_TERM_RANK);
	assert_int_equal(f.t[0].n_r, 2);
	assert_int_equal(f.t[0].r[1].lo, 7);
	assert_int_equal(tui_filter_parse(&f, "!file=*.h5|layer=MPI-IO| foo ", err, sizeof err), 0);
	assert_true(f.invert);
	assert_int_equal(f.n, 3);
	assert_int_equal(f.t[1].layer, IOP_LAYER_MPIIO);
	assert_string_equal(f.t[2].text, "foo");
	/* errors leave the filter as it was */
	assert_int_equal(tui_filter_parse(&f, "rank=3-1", err, sizeof err), -1);
	assert_int_equal(f.n, 3);
	assert_int_equal(tui_filter_parse(&f, "layer=nfs", err, sizeof err), -1);
	assert_int_equal(tui_filter_parse(&f, "size=3", err, sizeof err), -1);
	assert_non_null(strstr(err, "unknown key"));
	assert_int_equal(tui_filter_parse(&f, "a||b", err, sizeof err), 0); /* strtok skips empties */
	assert_int_equal(tui_filter_parse(&f, "!", err, sizeof err), -1);
	assert_int_equal(tui_filter_parse(&f, "", err, sizeof err), 0);
	assert_int_equal(f.n, 0);
}

static void filter_match(void **st)
{
	struct tui_filter f;
	char err[128];
	struct tui_subject r5 = {.rank = 5, .node = "n001", .layers = 1u << IOP_LAYER_POSIX};
	struct tui_subject h5 = {.rank = UINT32_MAX, .path = "/d/particles.h5", .label = "/d/particles.h5",
	                         .layers = 1u << IOP_LAYER_HDF5};
	memset(&f, 0, sizeof f);
	assert_true(tui_filter_match(&f, &r5)); /* no filter: every row */
	assert_int_equal(tui_filter_parse(&f, "rank=0-4", err, sizeof err), 0);
	assert_false(tui_filter_match(&f, &r5));
	assert_false(tui_filter_match(&f, &h5)); /* no rank: no match */
	assert_int_equal(tui_filter_parse(&f, "!rank=0-4", err, sizeof err), 0);
	assert_true(tui_filter_match(&f, &r5));
	assert_int_equal(tui_filter_parse(&f, "file=*.h5|rank=5", err, sizeof err), 0);
	assert_true(tui_filter_match(&f, &r5));
	assert_true(tui_filter_match(&f, &h5));
	assert_int_equal(tui_filter_parse(&f, "PARTICLES", err, sizeof err), 0);
	assert_true(tui_filter_match(&f, &h5));
	assert_false(tui_filter_match(&f, &r5));
	assert_int_equal(tui_filter_parse(&f, "layer=hdf5", err, sizeof err), 0);
	assert_true(tui_filter_match(&f, &h5));
	assert_false(tui_filter_match(&f, &r5));
	assert_int_equal(tui_filter_parse(&f, "node=n00*", err, sizeof err), 0);
	assert_true(tui_filter_match(&f, &r5));
	assert_int_equal(tui_filter_parse(&f, "5", err, sizeof err), 0); /* rank number as text */
	assert_true(tui_filter_match(&f, &r5));
}

static void seek_parse(void **st)
{
	int64_t t;
	const uint64_t s = 1000000000ull;
	assert_int_equal(tui_seek_parse("+30s", 1000, 900, 1100, s, &t), 0);
	assert_int_equal(t, 1030);
	assert_int_equal(tui_seek_parse("-5m", 1000, 900, 1100, s, &t), 0);
	assert_int_equal(t, 900); /* clamped */
	assert_int_equal(tui_seek_parse("50%", 1000, 900, 1100, s, &t), 0);
	assert_int_equal(t, 1000);
	assert_int_equal(tui_seek_parse("+2", 1000, 900, 1100, 500000000ull, &t), 0);
	assert_int_equal(t, 1004); /* half-second ticks */
	assert_int_equal(tui_seek_parse("12:00", 1700000000, 1600000000, 1800000000, s, &t), 0);
	assert_int_equal((t + 1) % 60, 0); /* the tick that ends at 12:00, as the header says */
	assert_int_equal(tui_seek_parse("25:00", 1000, 900, 1100, s, &t), -1);
	assert_int_equal(tui_seek_parse("soon", 1000, 900, 1100, s, &t), -1);
	assert_int_equal(tui_seek_parse("140%", 1000, 900, 1100, s, &t), -1);
	/* typed numbers beyond any recording: clamped or refused, never overflowed */
	assert_int_equal(tui_seek_parse("+1e300", 1000, 900, 1100, s, &t), 0);
	assert_int_equal(t, 1100);
	assert_int_equal(tui_seek_parse("-1e300h", 1000, 900, 1100, s, &t), 0);
	assert_int_equal(t, 900);
	assert_int_equal(tui_seek_parse("+inf", 1000, 900, 1100, s, &t), -1);
	assert_int_equal(tui_seek_parse("+nan", 1000, 900, 1100, s, &t), -1);
	assert_int_equal(tui_seek_parse("nan%", 1000, 900, 1100, s, &t), -1);
}

static void formatting(void **st)
{
	char b[64];
	tui_fmt_cell(b, sizeof b, TUI_COL_RD, 12.0 * 1024 * 1024, false);
	assert_string_equal(b, "12.0 MiB/s");
	tui_fmt_cell(b, sizeof b, TUI_COL_RD, 512, false);
	assert_string_equal(b, "512 B/s");
	tui_fmt_cell(b, sizeof b, TUI_COL_WR, 512 * 1024, true);
	assert_string_equal(b, "0.5 MiB/s");
	tui_fmt_cell(b, sizeof b, TUI_COL_P99, 0.041, false);
	assert_string_equal(b, "41 ms");
	tui_fmt_cell(b, sizeof b, TUI_COL_P50, 850e-6, false);
	assert_string_equal(b, "850 us");
	tui_fmt_cell(b, sizeof b, TUI_COL_P50, 0, false);
	assert_string_equal(b, "-");
	tui_fmt_cell(b, sizeof b, TUI_COL_IOPS, 4100, false);
	assert_string_equal(b, "4.1k");
	tui_fmt_cell(b, sizeof b, TUI_COL_EXCL_PC, 0.25, false);
	assert_string_equal(b, "25%");
	tui_fmt_cell(b, sizeof b, TUI_COL_SEV, 12, false);
	assert_string_equal(b, "CRIT");
	tui_fmt_elapsed(b, sizeof b, 3723);
	assert_string_equal(b, "1:02:03");
	tui_fmt_elapsed(b, sizeof b, 83);
	assert_string_equal(b, "01:23");
}

static void query(struct tui_query *q, enum tui_list l, const struct coll_state *s, uint32_t w)
{
	memset(q, 0, sizeof *q);
	q->list = l;
	q->t_end = s->last_t;
	q->window = w;
	q->layer = -1;
}

static void ranks_table(void **st)
{
	struct coll_state s;
	assert_int_equal(tui_synth_state(&s, 8, 20, 3), IOP_OK);
	struct tui_table t = {0};
	struct tui_query q;
	query(&q, TUI_LIST_RANKS, &s, 10);
	assert_int_equal(tui_table_build(&t, &s, &q), IOP_OK);
	assert_int_equal(t.n, 8);
	assert_true(t.window_s == 10.0);
	tui_table_sort(&t, TUI_COL_P99, true);
	assert_int_equal(t.rows[0].rank, 3); /* the slow rank first */
	assert_true(t.rows[0].v[TUI_COL_P99] > 5.8e-3 && t.rows[0].v[TUI_COL_P99] < 6.2e-3);
	assert_string_equal(t.rows[0].node_name, "node000");
	/* its rate: 10 ops x 64 KiB per 1 s tick */
	assert_true(t.rows[0].v[TUI_COL_WR] == 655360.0);
	/* bytes: exact totals of 20 ticks */
	assert_true(t.rows[0].v[TUI_COL_BYTES] == 20 * 655360.0);
	/* a filter */
	struct tui_filter f;
	char err[64];
	assert_int_equal(tui_filter_parse(&f, "rank=2-4", err, sizeof err), 0);
	q.filter = &f;
	assert_int_equal(tui_table_build(&t, &s, &q), IOP_OK);
	assert_int_equal(t.n, 3);
	/* grouped per node */
	q.filter = NULL;
	q.list = TUI_LIST_NODES;
	assert_int_equal(tui_table_build(&t, &s, &q), IOP_OK);
	assert_int_equal(t.n, 1);
	assert_true(t.rows[0].v[TUI_COL_RANKS] == 8);
	/* files, layers, a rank's detail, a file's ranks */
	q.list = TUI_LIST_FILES;
	assert_int_equal(tui_table_build(&t, &s, &q), IOP_OK);
	assert_int_equal(t.n, 8);
	assert_true(t.rows[0].v[TUI_COL_RANKS] == 1);
	uint64_t file = t.rows[0].id;
	q.list = TUI_LIST_LAYERS;
	assert_int_equal(tui_table_build(&t, &s, &q), IOP_OK);
	assert_int_equal(t.n, IOP_LAYER__COUNT);
	assert_true(t.rows[IOP_LAYER_POSIX].v[TUI_COL_EXCL_PC] == 1.0);
	q.list = TUI_LIST_RANK_DETAIL;
	q.rank = 3;
	assert_int_equal(tui_table_build(&t, &s, &q), IOP_OK);
	assert_int_equal(t.n, 2); /* [POSIX] and its file */
	assert_int_equal(t.rows[0].kind, TUI_ROW_LAYER);
	assert_string_equal(t.rows[1].name, "/scratch/job/out.3");
	/* every row has its rates over the window and its totals: the layer
	 * row its bytes and calls of the run, the file (only rank 3's) the
	 * rate and latency of its rows in the window */
	for (int i = 0; i < 2; i++) {
		assert_true(t.rows[i].v[TUI_COL_WR] == 655360.0);
		assert_true(t.rows[i].v[TUI_COL_WR_BYTES] == 20 * 655360.0);
		assert_true(t.rows[i].v[TUI_COL_OPS] == 20 * 10.0);
		assert_true(t.rows[i].v[TUI_COL_P99] > 5.8e-3 && t.rows[i].v[TUI_COL_P99] < 6.2e-3);
	}
	/* another rank writes out.3 too: the view has no rate of rank 3's
	 * alone there (rows per file are not per rank): blank, not 0 */
	uint64_t out3 = t.rows[1].id;
	struct coll_delta d;
	coll_delta_init(&d, s.last_t + 1, s.tick_ns);
	struct coll_counter other = {.file = out3, .ops = 1, .bytes = 4096, .time_ns = 1000, .rank = 4,
	                             .pid = 999, .layer = IOP_LAYER_POSIX, .cls = IOP_CLASS_WRITE};
	assert_int_equal(coll_delta_add_counter(&d, &other), IOP_OK);
	assert_int_equal(coll_state_apply(&s, &d), IOP_OK);
	coll_delta_free(&d);
	q.t_end = s.last_t;
	assert_int_equal(tui_table_build(&t, &s, &q), IOP_OK);
	assert_int_equal(t.n, 2);
	assert_true(isnan(t.rows[1].v[TUI_COL_WR]) && isnan(t.rows[1].v[TUI_COL_P99]));
	assert_true(t.rows[1].v[TUI_COL_WR_BYTES] == 20 * 655360.0); /* its own totals */
	char cell[32] = "x";
	tui_fmt_cell(cell, sizeof cell, TUI_COL_WR, t.rows[1].v[TUI_COL_WR], false);
	assert_string_equal(cell, "");
	q.list = TUI_LIST_FILE_RANKS;
	q.file = file;
	assert_int_equal(tui_table_build(&t, &s, &q), IOP_OK);
	assert_int_equal(t.n, 1);
	tui_table_free(&t);
	coll_state_free(&s);
}

/* Rows of every section, values with ties and NaNs: sorted in the
 * table's order (sections, values with NaN last either way, then rank,
 * name, id), each row moved whole. */
static void sort_moves_rows_whole(void **st)
{
	(void)st;
	enum { N = 1000 };
	struct tui_table t = {.rows = calloc(N + 7, sizeof(struct tui_row)), .cap = N + 7};
	assert_non_null(t.rows);
	static const char *const names[] = {"/x", "/y", NULL};
	srand(5);
	for (int i = 0; i < N; i++) {
		struct tui_row *r = &t.rows[t.n++];
		r->kind = (uint8_t)(i % 3 == 0 ? TUI_ROW_LAYER : i % 3 == 1 ? TUI_ROW_FILE : TUI_ROW_RANK);
		r->rank = (uint32_t)(rand() % 50);
		r->id = (uint64_t)i;
		r->name = names[rand() % 3];
		r->v[TUI_COL_BYTES] = rand() % 7 == 0 ? NAN : (double)(rand() % 20);
		r->spark[0] = (float)i; /* what the row is */
	}
	for (int dir = 0; dir < 2; dir++) {
		tui_table_sort(&t, TUI_COL_BYTES, dir);
		assert_int_equal(t.n, N);
		uint64_t seen = 0;
		for (size_t i = 0; i < t.n; i++) {
			assert_int_equal((uint64_t)t.rows[i].spark[0], t.rows[i].id);
			seen += t.rows[i].id;
		}
		assert_int_equal(seen, (uint64_t)N * (N - 1) / 2);
		for (size_t i = 1; i < t.n; i++) {
			const struct tui_row *a = &t.rows[i - 1], *b = &t.rows[i];
			int sa = a->kind == TUI_ROW_LAYER ? 0 : a->kind == TUI_ROW_RANK ? 2 : 1;
			int sb = b->kind == TUI_ROW_LAYER ? 0 : b->kind == TUI_ROW_RANK ? 2 : 1;
			assert_true(sa <= sb);
			if (sa < sb)
				continue;
			double x = a->v[TUI_COL_BYTES], y = b->v[TUI_COL_BYTES];
			assert_false(isnan(x) && !isnan(y)); /* no value: last */
			if (!isnan(x) && !isnan(y) && x != y) {
				assert_true(dir ? x > y : x < y);
				continue;
			}
			if (!isnan(x) && isnan(y))
				continue;
			assert_true(a->rank <= b->rank);
			if (a->rank < b->rank)
				continue;
			int c = a->name && b->name ? strcmp(a->name, b->name) : 0;
			assert_true(c <= 0);
			if (c == 0)
				assert_true(a->id < b->id);
		}
	}
	tui_table_free(&t);
}

static void sort_stable(void **st)
{
	struct tui_table t = {0};
	const char *names[] = {"/b", "/a", "/c", "/a2"};
	for (int i = 0; i < 40; i++) {
		struct tui_row *r = &(struct tui_row){0};
		if (t.n == t.cap) {
			t.cap = 64;
			t.rows = realloc(t.rows, t.cap * sizeof *t.rows);
		}
		r = &t.rows[t.n++];
		memset(r, 0, sizeof *r);
		r->kind = TUI_ROW_RANK;
		r->rank = (uint32_t)(39 - i);
		r->id = r->rank;
		r->v[TUI_COL_BYTES] = i % 3; /* many ties */
	}
	tui_table_sort(&t, TUI_COL_BYTES, true);
	for (size_t i = 1; i < t.n; i++) {
		const struct tui_row *a = &t.rows[i - 1], *b = &t.rows[i];
		assert_true(a->v[TUI_COL_BYTES] > b->v[TUI_COL_BYTES] ||
		            (a->v[TUI_COL_BYTES] == b->v[TUI_COL_BYTES] && a->rank < b->rank));
	}
	/* files: ties by path */
	t.n = 0;
	for (int i = 0; i < 4; i++) {
		struct tui_row *r = &t.rows[t.n++];
		memset(r, 0, sizeof *r);
		r->kind = TUI_ROW_FILE;
		r->rank = COLL_RANK_NONE;
		r->name = names[i];
		r->id = (uint64_t)(100 - i);
	}
	tui_table_sort(&t, TUI_COL_RD, false);
	assert_string_equal(t.rows[0].name, "/a");
	assert_string_equal(t.rows[1].name, "/a2");
	assert_string_equal(t.rows[3].name, "/c");
	/* `=`: a held order wins over values; unknown rows go last */
	uint64_t held[] = {99, 97};
	tui_table_hold(&t, held, 2);
	assert_int_equal(t.rows[0].id, 99);
	assert_int_equal(t.rows[1].id, 97);
	assert_string_equal(t.rows[2].name, "/b");
	tui_table_free(&t);
}

static void heat_flags(void **st)
{
	struct coll_state s;
	assert_int_equal(tui_synth_state(&s, 16, 30, 5), IOP_OK);
	struct tui_table t = {0};
	struct tui_query q;
	query(&q, TUI_LIST_RANKS, &s, 10);
	assert_int_equal(tui_table_build(&t, &s, &q), IOP_OK);
	tui_table_sort(&t, TUI_COL_BYTES, true); /* the slow rank last */
	assert_int_equal(t.rows[15].rank, 5);
	struct tui_heat h = {0};
	assert_int_equal(tui_heat_build(&h, &s, &t, &q, 40, TUI_HEAT_P99), IOP_OK);
	assert_int_equal(h.rows, 16);
	assert_int_equal(h.t0, s.last_t - 39);
	for (uint32_t c = 0; c < 40; c++) {
		bool has = h.t0 + c >= s.first_t;
		assert_int_equal(h.flag[tui_heat_at(&h, 15, c)], has ? 1 : 0);
		assert_int_equal(h.flag[tui_heat_at(&h, 0, c)], 0);
	}
	/* throughput: no outlier flag, but an alert on rank 0 flags its ticks */
	struct coll_alert_record a = {.kind = COLL_ALERT_STRAGGLER, .severity = COLL_SEV_CRIT,
	                              .rank = t.rows[0].rank,
	                              .start_ns = (uint64_t)(s.last_t - 2) * 1000000000ull};
	q.alerts = &a;
	q.n_alerts = 1;
	assert_int_equal(tui_heat_build(&h, &s, &t, &q, 40, TUI_HEAT_BYTES), IOP_OK);
	assert_int_equal(h.flag[tui_heat_at(&h, 15, 39)], 0);
	assert_int_equal(h.flag[tui_heat_at(&h, 0, 39)], 2);
	assert_int_equal(h.flag[tui_heat_at(&h, 0, 36)], 0);
	assert_true(h.vmax > 6e6);
	tui_heat_free(&h);
	tui_table_free(&t);
	coll_state_free(&s);
}

/* `M` on the node metrics: each row shows its node's I/O pressure or
 * busiest device, tick by tick, blank where the node had no figure, full
 * at 100 %; a node_pressure alert flags its node's rows, a rank's alert
 * does not. */
static void heat_node_metrics(void **st)
{
	(void)st;
	struct coll_state s;
	assert_int_equal(tui_synth_state(&s, 128, 2, 7), IOP_OK); /* 2 nodes */
	assert_int_equal(s.n_hosts, 2);
	uint32_t n0 = s.hosts[0].node, n1 = s.hosts[1].node;
	int64_t t1 = s.last_t + 1;
	/* ticks t1 .. t1 + 4: node 0 at 10 %, 20 % ... 50 % pressure, device 50 %;
	 * node 1 without PSI, its device at 30 % in every other tick, no sample
	 * in the others */
	for (int64_t k = 0; k < 5; k++) {
		struct coll_delta x;
		coll_delta_init(&x, t1 + k, s.tick_ns);
		struct coll_node_sample a = {.t = t1 + k, .node = n0, .flags = COLL_NODE_FULL,
		                             .psi_full_ppm = (uint32_t)(100000 * (k + 1)), .n_fs = 1},
		                        b = {.t = t1 + k, .node = n1, .n_fs = 1};
		a.fs[0] = (struct coll_node_fs){.fs = 1, .util_ppm = 500000};
		b.fs[0] = (struct coll_node_fs){.fs = 1, .util_ppm = 300000};
		assert_int_equal(coll_nodeset_put(&x.nodes, &a), IOP_OK);
		if (k % 2 == 0)
			assert_int_equal(coll_nodeset_put(&x.nodes, &b), IOP_OK);
		assert_int_equal(coll_state_apply(&s, &x), IOP_OK);
		coll_delta_free(&x);
	}
	struct coll_alert_record al[2] = {
	    {.kind = COLL_ALERT_NODE_PRESSURE, .severity = COLL_SEV_WARN, .rank = COLL_RANK_NONE,
	     .node = n0, .start_ns = (uint64_t)(t1 + 3) * s.tick_ns},
	    {.kind = COLL_ALERT_STRAGGLER, .severity = COLL_SEV_CRIT, .rank = 70, /* node 1 */
	     .start_ns = (uint64_t)t1 * s.tick_ns}};
	for (int grouped = 0; grouped < 2; grouped++) {
		struct tui_table t = {0};
		struct tui_query q;
		query(&q, grouped ? TUI_LIST_NODES : TUI_LIST_RANKS, &s, 10);
		q.alerts = al;
		q.n_alerts = 2;
		assert_int_equal(tui_table_build(&t, &s, &q), IOP_OK);
		assert_int_equal(t.n, grouped ? 2 : 128);
		struct tui_heat h = {0};
		for (int m = TUI_HEAT_PRESSURE; m <= TUI_HEAT_DEVICE; m++) {
			assert_int_equal(tui_heat_build(&h, &s, &t, &q, 8, (enum tui_heat_metric)m),
			                 IOP_OK);
			assert_true(h.vmax == 1);
			assert_int_equal(h.t0, t1 - 3);
			for (uint32_t r = 0; r < h.rows; r++) {
				bool on0 = t.rows[r].node == n0;
				assert_true(on0 || t.rows[r].node == n1);
				for (uint32_t c = 0; c < 8; c++) {
					int64_t k = h.t0 + c - t1; /* -3 .. 4 */
					float v = h.v[tui_heat_at(&h, r, c)], want;
					if (k < 0)
						want = -1;
					else if (m == TUI_HEAT_PRESSURE)
						want = on0 ? 0.1f * (float)(k + 1) : -1;
					else
						want = on0 ? 0.5f : k % 2 == 0 ? 0.3f : -1;
					if (fabsf(v - want) > 1e-6f)
						fail_msg("metric %d row %u (node %u) tick %" PRId64 ": %g, not %g",
						         m, r, t.rows[r].node, k, v, want);
					assert_int_equal(h.flag[tui_heat_at(&h, r, c)], on0 && k >= 3 ? 2 : 0);
				}
			}
		}
		/* the rank metrics keep the rank's alert, not the node's */
		assert_int_equal(tui_heat_build(&h, &s, &t, &q, 8, TUI_HEAT_BYTES), IOP_OK);
		for (uint32_t r = 0; r < h.rows; r++) {
			bool r70 = grouped ? t.rows[r].node == n1 : t.rows[r].rank == 70;
			assert_int_equal(h.flag[tui_heat_at(&h, r, 7)], r70 ? 2 : 0);
		}
		tui_heat_free(&h);
		tui_table_free(&t);
	}
	assert_string_equal(tui_heat_metric_name(TUI_HEAT_PRESSURE), "io pressure");
	coll_state_free(&s);
}

/* A history thinned by its budget: rates over the ticks that kept their
 * per-rank rows, exact totals, blank heat columns, whole layers. */
static void thinned_history(void **st)
{
	(void)st;
	struct coll_state s;
	assert_int_equal(tui_synth_state(&s, 8, 20, 3), IOP_OK);
	uint64_t tick = coll_tick_bytes(coll_state_last(&s));
	coll_state_free(&s);
	assert_int_equal(tui_synth_state_budget(&s, 8, 20, 3, 8 * tick), IOP_OK);
	assert_true(s.thinned > 0);
	uint32_t kept = 0;
	for (int64_t t = s.last_t - 9; t <= s.last_t; t++)
		kept += !coll_tick_thinned(coll_state_tick(&s, t));
	assert_true(kept >= COLL_HISTORY_KEEP && kept < 10);
	struct tui_table t = {0};
	struct tui_query q;
	query(&q, TUI_LIST_RANKS, &s, 10);
	assert_int_equal(tui_table_build(&t, &s, &q), IOP_OK);
	assert_int_equal(t.n, 8);
	tui_table_sort(&t, TUI_COL_P99, true);
	assert_int_equal(t.rows[0].rank, 3);
	assert_true(t.rows[0].v[TUI_COL_WR] == 655360.0); /* not diluted by thinned ticks */
	assert_true(t.rows[0].v[TUI_COL_BYTES] == 20 * 655360.0);
	q.list = TUI_LIST_LAYERS;
	assert_int_equal(tui_table_build(&t, &s, &q), IOP_OK);
	assert_true(t.rows[IOP_LAYER_POSIX].v[TUI_COL_WR] > 0);
	query(&q, TUI_LIST_RANKS, &s, 10);
	assert_int_equal(tui_table_build(&t, &s, &q), IOP_OK);
	struct tui_heat h = {0};
	assert_int_equal(tui_heat_build(&h, &s, &t, &q, 20, TUI_HEAT_BYTES), IOP_OK);
	for (uint32_t c = 0; c < 20; c++) {
		bool thin = coll_tick_thinned(coll_state_tick(&s, h.t0 + c));
		assert_int_equal(h.flag[tui_heat_at(&h, 0, c)] == 3, thin);
		assert_true(thin || h.v[tui_heat_at(&h, 0, c)] > 0);
	}
	assert_int_equal(h.flag[tui_heat_at(&h, 0, 19)], 0);
	tui_heat_free(&h);
	tui_table_free(&t);
	coll_state_free(&s);
}

/* Latencies left out of a build (lazy_latency: the dashboard's, for the
 * rows shown) and filled after, for some rows then all: every row then
 * equals the full build's, column for column, grouped per node or not;
 * rows not filled yet stay pending (NaN) and are the only ones changed. */
static void lazy_latency_rows(void **st)
{
	(void)st;
	struct coll_state s;
	assert_int_equal(tui_synth_state(&s, 200, 20, 7), IOP_OK); /* 4 nodes */
	for (int grouped = 0; grouped < 2; grouped++) {
		struct tui_table full = {0}, lazy = {0};
		struct tui_query q;
		query(&q, grouped ? TUI_LIST_NODES : TUI_LIST_RANKS, &s, 10);
		assert_int_equal(tui_table_build(&full, &s, &q), IOP_OK);
		q.lazy_latency = true;
		assert_int_equal(tui_table_build(&lazy, &s, &q), IOP_OK);
		assert_int_equal(lazy.n, full.n);
		assert_int_equal(full.n, grouped ? 4 : 200);
		tui_table_sort(&full, TUI_COL_BYTES, true);
		tui_table_sort(&lazy, TUI_COL_BYTES, true);
		for (size_t i = 0; i < lazy.n; i++) {
			assert_true(lazy.rows[i].lat_pending);
			assert_true(isnan(lazy.rows[i].v[TUI_COL_P99]));
			assert_false(full.rows[i].lat_pending);
			assert_true(full.rows[i].v[TUI_COL_P99] > 0);
		}
		/* the rows shown: 1 .. 3 */
		assert_int_equal(tui_table_fill_latency(&lazy, &s, &q, 1, 3), IOP_OK);
		for (size_t i = 0; i < lazy.n; i++)
			assert_int_equal(lazy.rows[i].lat_pending, i < 1 || i >= 3);
		/* then all (a saved view) */
		assert_int_equal(tui_table_fill_latency(&lazy, &s, &q, 0, lazy.n + 5), IOP_OK);
		for (size_t i = 0; i < lazy.n; i++) {
			assert_int_equal(lazy.rows[i].id, full.rows[i].id);
			assert_false(lazy.rows[i].lat_pending);
			assert_memory_equal(lazy.rows[i].v, full.rows[i].v, sizeof full.rows[i].v);
		}
		tui_table_free(&full);
		tui_table_free(&lazy);
	}
	assert_true(tui_col_latency(TUI_COL_P99) && !tui_col_latency(TUI_COL_BYTES));
	coll_state_free(&s);
}

/* A lean recording read back (record.h): the rank, file and site views
 * between whole ticks show the last whole tick's rates, not diluted by
 * the lean ticks; the layers are every tick's; the heatmap leaves the
 * lean ticks blank. Without detail_ticks a lean tick shows no rank rates. */
static void lean_recording(void **st)
{
	(void)st;
	struct coll_state s;
	assert_int_equal(tui_synth_state_lean(&s, 8, 27, 3, COLL_HISTORY_BYTES, 10), IOP_OK);
	int64_t whole = s.last_t;
	while ((whole + 1) % 10)
		whole--;
	assert_true(whole < s.last_t); /* the last tick is a lean one */
	struct tui_table t = {0};
	struct tui_query q;
	for (int w = 1; w <= 10; w += 9) {
		query(&q, TUI_LIST_RANKS, &s, w);
		assert_int_equal(tui_table_build(&t, &s, &q), IOP_OK);
		assert_int_equal(t.n, 8);
		tui_table_sort(&t, TUI_COL_P99, true);
		assert_int_equal(t.rows[0].rank, 3);
		assert_true(t.rows[0].v[TUI_COL_WR] == 655360.0); /* the whole tick's rate */
	}
	q.list = TUI_LIST_LAYERS;
	query(&q, TUI_LIST_LAYERS, &s, 1);
	assert_int_equal(tui_table_build(&t, &s, &q), IOP_OK);
	assert_true(t.rows[IOP_LAYER_POSIX].v[TUI_COL_WR] > 8 * 655360.0); /* the lean tick's */
	query(&q, TUI_LIST_RANKS, &s, 10);
	assert_int_equal(tui_table_build(&t, &s, &q), IOP_OK);
	struct tui_heat h = {0};
	assert_int_equal(tui_heat_build(&h, &s, &t, &q, 20, TUI_HEAT_BYTES), IOP_OK);
	for (uint32_t c = 0; c < 20; c++)
		assert_int_equal(h.flag[tui_heat_at(&h, 0, c)] == 3, (h.t0 + c + 1) % 10 != 0);
	tui_heat_free(&h);
	s.detail_ticks = 0; /* read as a full recording: no rank rates at a lean tick */
	query(&q, TUI_LIST_RANKS, &s, 1);
	assert_int_equal(tui_table_build(&t, &s, &q), IOP_OK);
	assert_int_equal(t.n, 8);
	for (size_t i = 0; i < t.n; i++)
		assert_true(t.rows[i].v[TUI_COL_WR] == 0);
	tui_table_free(&t);
	coll_state_free(&s);
}

/* Enter on a file system: its files (those named on it), then the ranks
 * that made calls on them, each with its totals over those files only;
 * another file system's file and a rank that used only it are not there. */
static void filesystem_detail(void **state)
{
	(void)state;
	static const char disk[] = "/var/tmp\text4\tvda", shm[] = "/dev/shm\ttmpfs\ttmpfs";
	struct coll_delta d;
	coll_delta_init(&d, 100, 1000000000ull);
	assert_int_equal(coll_delta_add_name(&d, iop_hash_str(disk), COLL_NAME_FS, disk, strlen(disk)),
	                 IOP_OK);
	assert_int_equal(coll_delta_add_name(&d, iop_hash_str(shm), COLL_NAME_FS, shm, strlen(shm)),
	                 IOP_OK);
	static const struct {
		const char *path, *fs;
		uint32_t rank;
		uint64_t bytes;
	} calls[] = {{"/var/tmp/a", disk, 0, 4096}, {"/var/tmp/a", disk, 1, 8192},
	             {"/var/tmp/b", disk, 1, 100}, {"/dev/shm/c", shm, 2, 65536}};
	for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
		uint64_t f = iop_hash_str(calls[i].path), id = iop_hash_str(calls[i].fs);
		char hex[17];
		snprintf(hex, sizeof hex, "%016llx", (unsigned long long)id);
		(void)coll_delta_add_name(&d, f, IOP_NAME_FILE, calls[i].path,
		                          (uint32_t)strlen(calls[i].path));
		(void)coll_delta_add_name(&d, f ^ COLL_FILE_FS_SALT, COLL_NAME_FILE_FS, hex, 16);
		struct coll_counter c = {.file = f, .ops = 1, .bytes = calls[i].bytes, .time_ns = 1000,
		                         .rank = calls[i].rank, .node = 7, .pid = 100 + calls[i].rank,
		                         .layer = IOP_LAYER_POSIX, .cls = IOP_CLASS_WRITE};
		assert_int_equal(coll_delta_add_counter(&d, &c), IOP_OK);
	}
	struct coll_state s;
	coll_state_init(&s, 1000000000ull, NULL);
	assert_int_equal(coll_state_apply(&s, &d), IOP_OK);
	coll_delta_free(&d);
	struct tui_query q;
	query(&q, TUI_LIST_FS_DETAIL, &s, 1);
	q.file = iop_hash_str(disk);
	struct tui_table t = {0};
	assert_int_equal(tui_table_build(&t, &s, &q), IOP_OK);
	tui_table_sort(&t, TUI_COL_BYTES, true);
	assert_int_equal(t.n, 4); /* 2 files, 2 ranks */
	assert_int_equal(t.rows[0].kind, TUI_ROW_FILE);
	assert_string_equal(t.rows[0].name, "/var/tmp/a");
	assert_true(t.rows[0].v[TUI_COL_WR_BYTES] == 12288);
	assert_string_equal(t.rows[1].name, "/var/tmp/b");
	assert_int_equal(t.rows[2].kind, TUI_ROW_RANK);
	assert_int_equal(t.rows[2].rank, 1);
	assert_true(t.rows[2].v[TUI_COL_BYTES] == 8292);
	assert_int_equal(t.rows[3].rank, 0);
	assert_true(t.rows[3].v[TUI_COL_OPS] == 1);
	tui_table_free(&t);
	coll_state_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(filter_parse), cmocka_unit_test(filter_match),
		cmocka_unit_test(seek_parse),   cmocka_unit_test(formatting),
		cmocka_unit_test(ranks_table),  cmocka_unit_test(sort_stable), cmocka_unit_test(sort_moves_rows_whole),
		cmocka_unit_test(heat_flags),   cmocka_unit_test(heat_node_metrics),   cmocka_unit_test(thinned_history),
		cmocka_unit_test(lean_recording),     cmocka_unit_test(lazy_latency_rows),     cmocka_unit_test(filesystem_detail),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

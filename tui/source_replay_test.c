/* Replay fidelity: the replay source's state at tick T, however it got
 * there (played through, sought back to a keyframe, stepped forward), is
 * the live root's state when T closed, byte for byte, and the dashboard's
 * tables built from both are the same. A sim job (collector/sim.h) goes
 * through the real leaf and root and is recorded with a keyframe every 10
 * s, three ways at once: full, the default ("view") with no cap (a job
 * under its cap: this sim has up to 512 files a tick, over the 256 of
 * iopulse run) and the default with a cap of 2 files and sites a tick,
 * under which the kept rows are the live ones and the "other" rows hold
 * the rest's sums. The live state is
 * snapshot at every tick as the root closes it. Also: a truncated copy
 * opens, ends at its last whole tick and says TRUNCATED; what is not a
 * recording is refused with a sentence. */
#include "test_util.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "keyframe.h"
#include "model.h"
#include "record.h"
#include "sim.h"
#include "source_replay.h"

#define SEC   1000000000ull
#define T0    (1700000000ull * SEC)
/* Under AddressSanitizer every path runs at about a fifth of the speed:
 * fewer ticks there (still four keyframes), the same paths (300 s of the
 * CI's sanitizer stage at 90). */
#if defined(__SANITIZE_ADDRESS__)
#define TICKS 40
#else
#define TICKS 90
#endif

struct snap {
	uint8_t *state; /* keyframe encoding */
	size_t len;
	char *table;    /* the Ranks, Files and Layers tables as text */
	char *heat;     /* the heatmap's cells, throughput and p99 */
	struct tui_table files; /* the Files view over this tick alone */
};

enum { FULL, VIEW, CAPPED, RECS };
#define CAP 2 /* files (sites) a tick CAPPED keeps */

static struct snap live[TICKS * 2]; /* the sim closes some ticks past TICKS */
static int64_t first_tick = -1, last_tick = -1;
static struct coll_record *recs[RECS];
static struct coll_record *rec; /* the one alerts go to as well */

/* The tables a view shows at t_end, every value printed exactly. */
static char *tables(const struct coll_state *s, int64_t t_end)
{
	char *buf;
	size_t len;
	FILE *f = open_memstream(&buf, &len);
	static const enum tui_list lists[] = {TUI_LIST_RANKS, TUI_LIST_FILES, TUI_LIST_LAYERS,
	                                      TUI_LIST_SITES};
	for (size_t l = 0; l < sizeof lists / sizeof *lists; l++) {
		struct tui_table t = {0};
		struct tui_query q = {.list = lists[l], .t_end = t_end, .window = 10, .layer = -1};
		assert_int_equal(tui_table_build(&t, s, &q), IOP_OK);
		tui_table_sort(&t, TUI_COL_BYTES, true);
		for (size_t i = 0; i < t.n; i++) {
			const struct tui_row *r = &t.rows[i];
			fprintf(f, "%d %u %" PRIu64 " %s", (int)l, r->rank, r->id, r->name ? r->name : "-");
			for (int c = 0; c < TUI_COL__COUNT; c++)
				fprintf(f, " %a", r->v[c]);
			for (int c = 0; c < TUI_SPARK; c++)
				fprintf(f, " %a", (double)r->spark[c]);
			fputc('\n', f);
		}
		tui_table_free(&t);
	}
	fclose(f);
	return buf;
}

/* The heatmap's cells at t_end (30 ticks of the Ranks view), exactly. */
static char *heat(const struct coll_state *s, int64_t t_end)
{
	char *buf;
	size_t len;
	FILE *f = open_memstream(&buf, &len);
	struct tui_table t = {0};
	struct tui_query q = {.list = TUI_LIST_RANKS, .t_end = t_end, .window = 10, .layer = -1};
	assert_int_equal(tui_table_build(&t, s, &q), IOP_OK);
	for (int m = 0; m < TUI_HEAT__COUNT; m++) {
		struct tui_heat h = {0};
		assert_int_equal(tui_heat_build(&h, s, &t, &q, 30, (enum tui_heat_metric)m), IOP_OK);
		for (uint32_t i = 0; i < h.rows * h.cols; i++)
			fprintf(f, "%a/%u ", (double)h.v[i], h.flag[i]);
		fputc('\n', f);
		tui_heat_free(&h);
	}
	tui_table_free(&t);
	fclose(f);
	return buf;
}

static void files_of_tick(const struct coll_state *s, int64_t t, struct tui_table *out)
{
	*out = (struct tui_table){0};
	struct tui_query q = {.list = TUI_LIST_FILES, .t_end = t, .window = 1, .layer = -1};
	assert_int_equal(tui_table_build(out, s, &q), IOP_OK);
}

static void snapshot(const struct coll_state *s, struct snap *out)
{
	size_t cap = 0;
	out->state = NULL;
	assert_int_equal(coll_state_encode_keyframe(s, 0, &out->state, &cap, &out->len), IOP_OK);
	out->table = tables(s, s->last_t);
	out->heat = heat(s, s->last_t);
	files_of_tick(s, s->last_t, &out->files);
}

/* An alert on rank 2 recorded over ticks 20-26 of the job: warn 2.0 at
 * its start, crit 5.0, then crit 3.0 (its peak stays 5.0), then its end. */
static const struct {
	int64_t at;
	const char *state, *sev;
	double value;
} alert_script[] = {{20, "start", "warn", 2.0}, {22, "ongoing", "crit", 5.0},
                    {24, "ongoing", "crit", 3.0}, {26, "end", "crit", 5.0}};

static void record_alert(int64_t i, int64_t t)
{
	for (size_t k = 0; k < sizeof alert_script / sizeof *alert_script; k++) {
		if (alert_script[k].at != i)
			continue;
		double end_s = (double)(t + 1), start_s = (double)(t + 1 - i + 20);
		json_t *a = json_pack("{s:i,s:s,s:s,s:s,s:s,s:f,s:f,s:i,s:f,s:f,s:s}", "v", 1, "type",
		                      "alert", "state", alert_script[k].state, "kind", "straggler",
		                      "severity", alert_script[k].sev, "t", end_s, "start", start_s,
		                      "rank", 2, "value", alert_script[k].value, "baseline", 1.0,
		                      "message", alert_script[k].state);
		for (int r = 0; r < RECS; r++)
			coll_record_alert(recs[r], (uint64_t)(t + 1) * SEC, a);
		json_decref(a);
	}
}

static void on_tick(void *arg, const struct coll_delta *d, const struct coll_state *s)
{
	(void)arg;
	for (int i = 0; i < RECS; i++)
		coll_record_tick_state(recs[i], d, s);
	if (first_tick < 0)
		first_tick = d->tick.t;
	record_alert(d->tick.t - first_tick, d->tick.t);
	last_tick = d->tick.t;
	int64_t i = d->tick.t - first_tick;
	if (i >= 0 && i < (int64_t)(sizeof live / sizeof *live) && !live[i].state)
		snapshot(s, &live[i]);
}

static char dir[] = "/tmp/iop-srcreplay-XXXXXX", paths[RECS][256];
static const char *path = paths[FULL];

static int setup(void **st)
{
	(void)st;
	if (!mkdtemp(dir))
		return -1;
	struct coll_job_info job = {.id = 0x5eed, .start_ns = T0, .command = "sim", .tick_ns = SEC};
	static const char *const name[RECS] = {"job", "view", "capped"};
	const struct coll_record_opts o[RECS] = {
		{.keyframe_every_ns = 10 * SEC, .detail_ns = UINT64_MAX},
		{.keyframe_every_ns = 10 * SEC, .view_cap = UINT32_MAX},
		{.keyframe_every_ns = 10 * SEC, .view_cap = CAP}};
	for (int i = 0; i < RECS; i++) {
		snprintf(paths[i], sizeof paths[i], "%s/%s.iop", dir, name[i]);
		if (!(recs[i] = coll_record_open_opts(paths[i], &job, &o[i])))
			return -1;
	}
	rec = recs[FULL];
	struct coll_sim sim;
	if (coll_sim_new(&sim, 4, IOP_WL_MIXED, T0, NULL, on_tick, NULL) ||
	    coll_sim_run_until(&sim, T0 + TICKS * SEC, 32) || coll_sim_finish(&sim))
		return -1;
	for (int i = 0; i < RECS; i++)
		coll_record_close(recs[i]);
	coll_sim_free(&sim);
	return 0;
}

static int teardown(void **st)
{
	(void)st;
	for (size_t i = 0; i < sizeof live / sizeof *live; i++) {
		free(live[i].state);
		free(live[i].table);
		free(live[i].heat);
		tui_table_free(&live[i].files);
	}
	char cmd[512];
	snprintf(cmd, sizeof cmd, getenv("KEEP_TMP") ? "true %s" : "rm -rf %s", dir);
	return system(cmd);
}

/* The source shows tick t exactly as the live root had it. */
static void assert_live(const struct tui_source *src, int64_t t)
{
	const struct coll_state *s = src->ops->state(src->self);
	assert_int_equal(s->last_t, t);
	const struct snap *want = &live[t - first_tick];
	if (!want->state)
		fprintf(stderr, "no live snapshot of tick %lld (first %lld)\n", (long long)t,
		        (long long)first_tick);
	assert_non_null(want->state);
	struct snap got;
	snapshot(s, &got);
	assert_int_equal(got.len, want->len);
	assert_memory_equal(got.state, want->state, got.len);
	assert_string_equal(got.table, want->table);
	assert_string_equal(got.heat, want->heat);
	free(got.state);
	free(got.table);
	free(got.heat);
	tui_table_free(&got.files);
}

/* Played through, sought back and forth, stepped: every tick of the
 * recording at p is the live one (tables, heatmap, the whole state). */
static void fidelity_of(const char *p)
{
	struct tui_source src;
	char why[256];
	assert_int_equal(tui_source_replay_open(&src, p, false, why, sizeof why), IOP_OK);
	assert_int_equal(src.ops->mode, TUI_SRC_MODE_REPLAY);
	int64_t first, last;
	src.ops->range(src.self, &first, &last);
	assert_int_equal(first, first_tick);
	assert_true(last - first >= TICKS - 2);
	assert_live(&src, first); /* the first tick is shown at open */

	/* played through, as fast as it goes: every tick on the way */
	src.ops->set_speed(src.self, 1e6);
	unsigned got = 0;
	for (int i = 0; i < 10000 && !(got & TUI_SRC_ENDED); i++) {
		got |= src.ops->pump(src.self, 0);
		assert_live(&src, src.ops->state(src.self)->last_t);
	}
	assert_true(got & TUI_SRC_TICK);
	assert_true(got & TUI_SRC_ENDED);
	assert_int_equal(src.ops->state(src.self)->last_t, last);

	/* sought: back far (keyframes), forward a little, back one, the ends */
	src.ops->set_paused(src.self, true);
	int64_t to[] = {first + TICKS / 2,     first + TICKS / 2 + 3, first + TICKS / 2 + 2,
	                first + 12,            first + 9,             first + TICKS * 7 / 9,
	                first,                 last,                  first + 31,
	                first + 31 + 119,      first + 5};
	for (size_t i = 0; i < sizeof to / sizeof *to; i++) {
		int64_t want = to[i] > last ? last : to[i];
		assert_int_equal(src.ops->seek(src.self, to[i]), want);
		assert_live(&src, want);
	}
	/* out of range: clamped */
	assert_int_equal(src.ops->seek(src.self, first - 100), first);
	assert_int_equal(src.ops->seek(src.self, last + 100), last);
	/* paused: pumping shows nothing new */
	assert_int_equal(src.ops->seek(src.self, first + 20), first + 20);
	assert_int_equal(src.ops->pump(src.self, 0) & TUI_SRC_TICK, 0);
	assert_int_equal(src.ops->state(src.self)->last_t, first + 20);
	assert_null(src.ops->error(src.self));
	src.ops->close(src.self);
}

static void fidelity(void **st)
{
	(void)st;
	fidelity_of(paths[FULL]);
}

/* The default recording of a job with fewer than 256 files and call sites
 * a tick keeps every row: a replay is the live run, tick for tick. */
static void fidelity_default(void **st)
{
	(void)st;
	fidelity_of(paths[VIEW]);
}

/* The lines of tables() text of one list ('0' the Ranks, '2' the Layers). */
static char *lines_of(const char *text, char list)
{
	char *buf;
	size_t len;
	FILE *f = open_memstream(&buf, &len);
	for (const char *l = text; *l;) {
		const char *end = strchr(l, '\n');
		size_t n = end ? (size_t)(end - l) + 1 : strlen(l);
		if (l[0] == list && l[1] == ' ')
			fwrite(l, 1, n, f);
		l += n;
	}
	fclose(f);
	return buf;
}

/* A row of the Files table over one tick, by file. */
static const struct tui_row *row_of(const struct tui_table *t, uint64_t id)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->rows[i].id == id)
			return &t->rows[i];
	return NULL;
}

/* Over the cap (2 files a tick here): the Ranks, Layers and heatmap are
 * still the live ones; in each tick's Files table, every row but "other"
 * equals the live row, at most 2 * CAP are kept (top by bytes, top by
 * time), and the rows' sums of bytes and calls equal the live ones. */
static void capped(void **st)
{
	(void)st;
	struct tui_source src;
	char why[256];
	assert_int_equal(tui_source_replay_open(&src, paths[CAPPED], false, why, sizeof why), IOP_OK);
	src.ops->set_paused(src.self, true);
	int64_t first, last;
	src.ops->range(src.self, &first, &last);
	unsigned folded = 0;
	for (int64_t t = first; t <= last; t++) {
		assert_int_equal(src.ops->seek(src.self, t), t);
		const struct coll_state *s = src.ops->state(src.self);
		const struct snap *want = &live[t - first_tick];
		assert_non_null(want->state);
		struct tui_table got;
		files_of_tick(s, t, &got);
		double sum[2][3] = {{0}};
		size_t kept = 0; /* files with calls in the tick, as live */
		bool other = false;
		for (size_t i = 0; i < got.n; i++) {
			const struct tui_row *r = &got.rows[i];
			if (r->id == COLL_ID_OTHER) {
				other = true;
			} else {
				const struct tui_row *w = row_of(&want->files, r->id);
				assert_non_null(w);
				bool same = !memcmp(r->v, w->v, sizeof r->v);
				/* folded this tick: listed (its totals), no calls of its own */
				bool gone = r->v[TUI_COL_IOPS] == 0 && r->v[TUI_COL_RD] == 0 &&
				            r->v[TUI_COL_WR] == 0;
				if (!same && !gone)
					for (int c = 0; c < TUI_COL__COUNT; c++)
						if (memcmp(&r->v[c], &w->v[c], sizeof r->v[c]))
							fail_msg("tick %lld, file %s: column %d is %a, live %a",
							         (long long)(t - first), r->name, c, r->v[c],
							         w->v[c]);
				kept += same && w->v[TUI_COL_IOPS] > 0;
			}
			sum[0][0] += r->v[TUI_COL_RD];
			sum[0][1] += r->v[TUI_COL_WR];
			sum[0][2] += r->v[TUI_COL_IOPS];
		}
		for (size_t i = 0; i < want->files.n; i++) {
			sum[1][0] += want->files.rows[i].v[TUI_COL_RD];
			sum[1][1] += want->files.rows[i].v[TUI_COL_WR];
			sum[1][2] += want->files.rows[i].v[TUI_COL_IOPS];
		}
		for (int c = 0; c < 3; c++)
			assert_true(fabs(sum[0][c] - sum[1][c]) <= 1e-9 * (sum[1][c] + 1));
		assert_true(kept <= 2 * CAP);
		folded += other;
		char *tb = tables(s, t), *hm = heat(s, t);
		/* the Ranks (0) and Layers (2) tables' lines */
		for (char list = '0'; list <= '2'; list += 2) {
			char *a = lines_of(tb, list), *b = lines_of(want->table, list);
			assert_true(a[0] != 0);
			assert_string_equal(a, b);
			free(a);
			free(b);
		}
		assert_string_equal(hm, want->heat);
		free(tb);
		free(hm);
		tui_table_free(&got);
	}
	assert_true(folded >= 10); /* the cap did fold files in most ticks */
	src.ops->close(src.self);
}

/* The alert list at a tick is the live one's then: severity and peak so
 * far, not yet ended; later alerts are listed by their start only. */
static void alerts_as_of_tick(void **st)
{
	(void)st;
	struct tui_source src;
	char why[256];
	assert_int_equal(tui_source_replay_open(&src, path, false, why, sizeof why), IOP_OK);
	src.ops->set_paused(src.self, true);
	static const struct {
		int64_t at;
		int sev;
		double peak;
		bool ended;
	} want[] = {{19, COLL_SEV_WARN, 2.0, false}, {20, COLL_SEV_WARN, 2.0, false},
	            {21, COLL_SEV_WARN, 2.0, false}, {22, COLL_SEV_CRIT, 5.0, false},
	            {24, COLL_SEV_CRIT, 5.0, false}, {25, COLL_SEV_CRIT, 5.0, false},
	            {26, COLL_SEV_CRIT, 5.0, true},  {TICKS - 10, COLL_SEV_CRIT, 5.0, true},
	            {21, COLL_SEV_WARN, 2.0, false}};
	for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
		int64_t t = first_tick + want[i].at;
		assert_int_equal(src.ops->seek(src.self, t), t);
		size_t n;
		const struct coll_alert_record *a = src.ops->alerts(src.self, &n);
		assert_int_equal(n, 1);
		assert_int_equal(a[0].rank, 2);
		assert_int_equal((int)a[0].severity, want[i].sev);
		assert_true(a[0].peak_value == want[i].peak);
		assert_int_equal(a[0].end_ns != 0, want[i].ended);
		assert_int_equal(a[0].start_ns, (uint64_t)(first_tick + 21) * SEC);
	}
	src.ops->close(src.self);
}

static void truncated(void **st)
{
	(void)st;
	char cut[300];
	snprintf(cut, sizeof cut, "%s/cut.iop", dir);
	FILE *in = fopen(path, "rb"), *out = fopen(cut, "wb");
	assert_non_null(in);
	assert_non_null(out);
	fseek(in, 0, SEEK_END);
	long size = ftell(in);
	rewind(in);
	char *buf = malloc((size_t)size);
	assert_int_equal(fread(buf, 1, (size_t)size, in), (size_t)size);
	fwrite(buf, 1, (size_t)(size * 2 / 3), out); /* mid-frame, most likely */
	fclose(in);
	fclose(out);
	free(buf);
	struct tui_source src;
	char why[256];
	assert_int_equal(tui_source_replay_open(&src, cut, false, why, sizeof why), IOP_OK);
	int64_t first, last;
	src.ops->range(src.self, &first, &last);
	assert_true(last > first + 10 && last < last_tick - 5);
	assert_int_equal(src.ops->seek(src.self, last), last);
	assert_live(&src, last);
	assert_int_equal(src.ops->seek(src.self, first + 3), first + 3);
	assert_live(&src, first + 3);
	const char *e = src.ops->error(src.self);
	assert_non_null(e);
	assert_non_null(strstr(e, "TRUNCATED at "));
	src.ops->close(src.self);

	/* not a recording, missing */
	assert_int_not_equal(tui_source_replay_open(&src, "/etc/passwd", false, why, sizeof why),
	                     IOP_OK);
	assert_non_null(strstr(why, "not an iopulse recording"));
	assert_int_not_equal(tui_source_replay_open(&src, "/nonexistent.iop", false, why, sizeof why),
	                     IOP_OK);
	assert_non_null(strstr(why, "No such file"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fidelity),
		cmocka_unit_test(fidelity_default),
		cmocka_unit_test(capped),
		cmocka_unit_test(alerts_as_of_tick),
		cmocka_unit_test(truncated),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

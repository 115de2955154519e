/* A default recording of a job above the rank cap (issue 19, "Larger
 * jobs"): 2048 iop-loadgen ranks on 32 nodes (bench/loadgen_rank.c, the
 * MIXED workload, rank 1500 slowed down 8 times) send real frames to a
 * real leaf, whose deltas go to a real root, whose closed ticks are judged
 * by the alert rules and recorded as `iopulse run --record` does, all in
 * simulated time. Then the file is read back:
 *
 *   - every DELTA carries the ranks' distribution (rank_dist.h) equal to
 *     the one computed from the live root's whole tick;
 *   - each tick's RANK rows and node rows, summed per node and per
 *     (layer, class), equal the live tick's rows of that node's ranks:
 *     folding loses no call and no byte;
 *   - a tick keeps at most the ends' ranks (16 at each end of throughput
 *     and of p99) and the ranks alerts named;
 *   - the rank each alert names is in every recorded tick from the one it
 *     was raised in to its end (the slowed rank is among them);
 *   - the counters (held back above the cap, once a minute) give the live
 *     root's totals at the end;
 *   - `iopulse export` names node rows by their host, and each tick's rank
 *     and node rows add up to the live tick's bytes;
 *   - a state built by seeking (coll_rec_state_at: a keyframe, then DELTAs)
 *     has the live distribution of its last tick, and at a keyframe's own
 *     tick the live totals, and the dashboard's
 *     distribution line (tui_rank_dist) at that tick is it too. */
#include "test_util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "export.h"
#include "judge.h"
#include "model.h"
#include "leaf.h"
#include "loadgen.h"
#include "rank_dist.h"
#include "rec.h"
#include "rec_io.h"
#include "rec_state.h"
#include "rec_view.h"
#include "record.h"
#include "root.h"
#include "rules.h"

#define SEC     1000000000ull
#define T0      (1700000000ull * SEC)
#define RANKS   2048
#define NODES   32
#define SLOW    1500
#define SECONDS 40
#define MAXT    (SECONDS + 8)
#define LC      (IOP_LAYER__COUNT * IOP_CLASS__COUNT)

static const struct iop_key job_key = {{2, 7, 1, 8, 2, 8, 1, 8, 2, 8, 4, 5, 9, 0, 4, 5}};
static const uint64_t job_id = 0x2048;

struct sums {
	uint64_t ops, bytes, time_ns;
};

struct alert_seen {
	uint32_t rank;
	uint64_t raised_ns, end_ns; /* end 0: to the last tick */
};

struct live {
	struct coll_root *root;
	struct coll_record *rec;
	struct coll_alerts *alerts;
	int64_t t0;      /* the first tick */
	int64_t last_t;  /* the last */
	uint32_t node[NODES]; /* node ids, in the order first seen */
	struct coll_rank_dist dist[MAXT];
	uint64_t tot_ops[MAXT]; /* the live totals' calls after each tick */
	struct sums by_node[MAXT][NODES][LC];
	struct alert_seen seen[64];
	size_t n_seen;
};

static unsigned node_index(struct live *l, uint32_t node)
{
	for (unsigned i = 0; i < NODES; i++) {
		if (l->node[i] == node)
			return i;
		if (!l->node[i]) {
			l->node[i] = node;
			return i;
		}
	}
	fail_msg("more than %d nodes", NODES);
	return 0;
}

static void add_sums(struct sums *s, const struct coll_cell *c)
{
	s->ops += c->ops;
	s->bytes += c->bytes;
	s->time_ns += c->time_ns;
}

static void on_alert(void *arg, const struct coll_alert *a)
{
	struct live *l = arg;
	json_t *rec = coll_alert_json(a, NULL, NULL);
	coll_record_alert(l->rec, a->t_ns, rec);
	json_decref(rec);
	if (a->rank == COLL_RANK_NONE)
		return;
	for (size_t i = 0; i < l->n_seen; i++)
		if (l->seen[i].rank == a->rank && !l->seen[i].end_ns) {
			if (a->state == COLL_ALERT_END)
				l->seen[i].end_ns = a->t_ns;
			return;
		}
	if (a->state == COLL_ALERT_START && l->n_seen < 64)
		l->seen[l->n_seen++] = (struct alert_seen){a->rank, a->t_ns, 0};
}

static uint64_t ops_of(const struct coll_state *s)
{
	uint64_t n = 0;
	for (uint32_t i = 0; i < s->latest.n; i++)
		n += s->latest.v[i].ops;
	return n;
}

static void on_tick(void *arg, const struct coll_delta *d, const struct coll_state *s)
{
	struct live *l = arg;
	const struct coll_tick *k = &d->tick;
	if (l->t0 == INT64_MIN)
		l->t0 = k->t;
	int64_t i = k->t - l->t0;
	assert_true(i >= 0 && i < MAXT);
	l->last_t = k->t;
	assert_int_equal(coll_rank_dist_tick(k, &l->dist[i]), IOP_OK);
	l->tot_ops[i] = ops_of(s);
	for (uint32_t r = 0; r < k->n; r++) {
		const struct coll_key *key = &k->key[r];
		if (key->kind != COLL_ROW_RANK)
			continue;
		assert_false(coll_key_is_node(key)); /* the live tick is whole */
		assert_true(key->rank < s->n_ranks);
		unsigned n = node_index(l, (uint32_t)s->ranks[key->rank].node);
		add_sums(&l->by_node[i][n][key->layer * IOP_CLASS__COUNT + key->cls], &k->cell[r]);
	}
	assert_int_equal(coll_judge_tick(l->alerts, d, s, on_alert, l), IOP_OK);
	coll_record_tick_state(l->rec, d, s);
}

static void to_root(void *arg, struct coll_delta *d)
{
	struct live *l = arg;
	assert_int_equal(coll_root_delta(l->root, d), IOP_OK);
}

/* Runs the job and records it to path. */
static void record_job(struct live *l, const char *path)
{
	struct lg_opts o = {.ranks = RANKS, .nodes = NODES, .threads = 1, .events_per_s = 20,
	                    .duration_s = -1, .batch_ms = 100, .slow_rank = SLOW, .slow_factor = 8,
	                    .workload = IOP_WL_MIXED, .seed = 7, .job_id = job_id, .key = job_key,
	                    .n_urls = 1};
	struct lg_rank *r = calloc(RANKS, sizeof(*r));
	assert_non_null(r);
	for (unsigned i = 0; i < RANKS; i++)
		assert_true(lg_rank_init(&r[i], &o, i));
	struct coll_leaf_cfg lc;
	coll_leaf_cfg_default(&lc);
	lc.job_id = job_id;
	lc.key = job_key;
	struct coll_root_cfg rc;
	coll_root_cfg_default(&rc, lc.tick_ns);
	struct coll_leaf *leaf;
	assert_int_equal(coll_leaf_new(&lc, T0, &leaf), IOP_OK);
	assert_int_equal(coll_root_new(&rc, T0, &l->root), IOP_OK);
	struct coll_rules rules;
	coll_rules_default(&rules);
	assert_int_equal(coll_alerts_new(&rules, &l->alerts), IOP_OK);
	struct coll_job_info job = {.id = job_id, .start_ns = T0, .command = "rec_ranks_test",
	                            .tick_ns = SEC};
	/* keyframes every 10 s, so that seeking starts from one */
	struct coll_record_opts ro = {.keyframe_every_ns = 10 * SEC};
	l->rec = coll_record_open_opts(path, &job, &ro);
	assert_non_null(l->rec);

	static uint8_t buf[LG_FRAME_CAP];
	uint64_t step = o.batch_ms * 1000000ull, events = 0;
	for (uint64_t now = step; now <= SECONDS * SEC; now += step) {
		for (unsigned i = 0; i < RANKS; i++)
			assert_int_equal(lg_rank_to_leaf(&r[i], &o, now, T0, buf, leaf, &events), IOP_OK);
		coll_leaf_advance(leaf, T0 + now, false, to_root, l);
		coll_root_advance(l->root, T0 + now, false, on_tick, l);
	}
	coll_leaf_advance(leaf, T0 + (SECONDS + 5) * SEC, true, to_root, l);
	coll_root_advance(l->root, T0 + (SECONDS + 5) * SEC, true, on_tick, l);
	coll_alerts_finish(l->alerts, (uint64_t)(l->last_t + 1) * SEC, on_alert, l);
	coll_record_close(l->rec);
	printf("# %" PRIu64 " events, ticks %" PRId64 "..%" PRId64 ", %zu alerts about a rank\n",
	       events, l->t0, l->last_t, l->n_seen);
	for (unsigned i = 0; i < RANKS; i++)
		lg_rank_free(&r[i]);
	free(r);
	coll_leaf_free(leaf);
	coll_alerts_free(l->alerts);
}

static void assert_dist_equal(const struct coll_rank_dist *a, const struct coll_rank_dist *b)
{
	assert_int_equal(a->t, b->t);
	assert_int_equal(a->ranks, b->ranks);
	assert_int_equal(a->lat_ranks, b->lat_ranks);
	for (int q = 0; q < COLL_Q__N; q++) {
		assert_int_equal(a->bytes[q], b->bytes[q]);
		assert_int_equal(a->p99_ns[q], b->p99_ns[q]);
	}
}

static bool has_rank(const struct coll_tick *k, uint32_t rank)
{
	for (uint32_t i = 0; i < k->n; i++)
		if (k->key[i].kind == COLL_ROW_RANK && k->key[i].rank == rank)
			return true;
	return false;
}

static void check_recording(struct live *l, const char *path)
{
	struct rec_io *io;
	struct rec_reader *rd;
	char why[256];
	assert_int_equal(rec_io_file_open(path, &io), IOP_OK);
	assert_int_equal(rec_open(io, &rd, why, sizeof why), IOP_OK);
	assert_int_equal(coll_rec_delta_version(rd), COLL_DELTA_VERSION);
	/* the state a reader builds, for each rank's node */
	struct coll_state s;
	coll_state_init(&s, SEC, NULL);
	struct coll_delta d;
	coll_delta_init(&d, 0, SEC);
	struct rec_frame f;
	unsigned ticks = 0, folded = 0;
	uint32_t most_kept = 0;
	bool slow_kept = false;
	while (rec_next(rd, &f, NULL, 0) == IOP_OK) {
		if (f.type != REC_DELTA)
			continue;
		struct iop_rcur c = iop_rcur_make(f.payload, f.len);
		assert_int_equal(coll_delta_decode_body(&d, &c), IOP_OK);
		assert_int_equal(coll_state_apply(&s, &d), IOP_OK);
		const struct coll_tick *k = &d.tick;
		int64_t i = k->t - l->t0;
		assert_true(i >= 0 && i < MAXT);
		ticks++;
		if (l->dist[i].ranks <= COLL_REC_RANK_CAP) { /* whole: nothing folded */
			assert_int_equal(d.dist.ranks, 0);
			continue;
		}
		folded++;
		assert_dist_equal(&d.dist, &l->dist[i]);
		/* the rows summed per node equal the live ones */
		static struct sums got[NODES][LC];
		memset(got, 0, sizeof got);
		for (uint32_t r = 0; r < k->n; r++) {
			const struct coll_key *key = &k->key[r];
			if (key->kind != COLL_ROW_RANK)
				continue;
			uint32_t node = coll_key_is_node(key) ? coll_key_node_id(key)
			                                      : (uint32_t)s.ranks[key->rank].node;
			add_sums(&got[node_index(l, node)][key->layer * IOP_CLASS__COUNT + key->cls],
			         &k->cell[r]);
		}
		assert_memory_equal(got, l->by_node[i], sizeof got);
		/* ranks kept: the ends' and the named ones */
		struct coll_rank_fig *fig;
		uint32_t nf;
		assert_int_equal(coll_rank_figs(k, &fig, &nf), IOP_OK);
		free(fig);
		assert_true(nf <= 4 * COLL_REC_RANK_ENDS + l->n_seen);
		assert_true(nf >= 2 * COLL_REC_RANK_ENDS);
		if (nf > most_kept)
			most_kept = nf;
		slow_kept |= has_rank(k, SLOW);
		/* each alert's rank in every tick from its raising to its end */
		uint64_t end_ns = (uint64_t)(k->t + 1) * SEC;
		for (size_t a = 0; a < l->n_seen; a++)
			if (end_ns >= l->seen[a].raised_ns &&
			    (!l->seen[a].end_ns || end_ns <= l->seen[a].end_ns)) {
				if (!has_rank(k, l->seen[a].rank))
					fail_msg("tick %" PRId64 ": rank %u, named by an alert, is not kept",
					         k->t, l->seen[a].rank);
			}
	}
	printf("# %u ticks read, %u folded, at most %u ranks kept a tick\n", ticks, folded, most_kept);
	/* the counters, held back above the cap, are all there at the end:
	 * the totals equal the live root's */
	const struct coll_state *live = coll_root_state(l->root);
	struct sums tot[2] = {{0}};
	const struct coll_state *both[2] = {live, &s};
	for (int w = 0; w < 2; w++)
		for (uint32_t i = 0; i < both[w]->latest.n; i++) {
			tot[w].ops += both[w]->latest.v[i].ops;
			tot[w].bytes += both[w]->latest.v[i].bytes;
			tot[w].time_ns += both[w]->latest.v[i].time_ns;
		}
	printf("# totals: %" PRIu64 " calls, %" PRIu64 " bytes\n", tot[0].ops, tot[0].bytes);
	assert_true(tot[0].ops > 1000000);
	assert_int_equal(live->latest.n, s.latest.n);
	assert_memory_equal(&tot[0], &tot[1], sizeof tot[0]);
	assert_true(folded >= SECONDS - 5);
	assert_true(slow_kept);
	bool slow_named = false;
	for (size_t a = 0; a < l->n_seen; a++)
		slow_named |= l->seen[a].rank == SLOW;
	assert_true(slow_named);

	/* seeking: from a keyframe, then DELTAs; at a keyframe's own tick too */
	unsigned seeks = 0, from_key = 0;
	for (int64_t t = l->t0 + 5; t <= l->last_t; t += 7) {
		if (l->dist[t - l->t0].ranks <= COLL_REC_RANK_CAP)
			continue;
		struct coll_state at;
		struct coll_rec_state_info info;
		assert_int_equal(coll_rec_state_at(rd, (uint64_t)(t + 1) * SEC, &at, &info), IOP_OK);
		assert_int_equal(at.last_t, t);
		assert_dist_equal(&at.dist, &l->dist[t - l->t0]);
		struct coll_rank_dist shown;
		assert_int_equal(tui_rank_dist(&at, t, &shown), IOP_OK);
		assert_dist_equal(&shown, &l->dist[t - l->t0]);
		seeks++;
		if (info.from_keyframe && info.deltas == 0) {
			/* a keyframe's totals are exact: its DELTA carried every
			 * counter held back */
			from_key++;
			assert_int_equal(ops_of(&at), l->tot_ops[t - l->t0]);
		}
		coll_state_free(&at);
	}
	printf("# %u seeks, %u of them to a keyframe's own tick\n", seeks, from_key);
	assert_true(seeks >= 4);
	assert_true(from_key >= 1);
	coll_delta_free(&d);
	coll_state_free(&s);
	rec_reader_close(rd);
	rec_io_close(io);
}

/* `iopulse export` of the recording: node rows named by their host
 * (loadgen's lgnodeNNNN), and each tick's rank and node rows' bytes sum
 * to the live tick's ranks' bytes. */
static void check_export(struct live *l, const char *path)
{
	char csv[4200];
	snprintf(csv, sizeof csv, "%s.csv", path);
	char *argv[] = {"export", (char *)path, "--format", "csv", "-o", csv, NULL};
	assert_int_equal(rec_cmd_export(6, argv), 0);
	FILE *f = fopen(csv, "r");
	assert_non_null(f);
	static uint64_t got[MAXT];
	memset(got, 0, sizeof got);
	char line[1024];
	unsigned node_rows = 0;
	assert_non_null(fgets(line, sizeof line, f)); /* the header */
	while (fgets(line, sizeof line, f)) {
		char *field[12], *p = line;
		int n = 0;
		for (char *t; n < 12 && (t = strsep(&p, ",")); )
			field[n++] = t;
		assert_int_equal(n, 12);
		bool node = !strcmp(field[2], "node");
		if (!node && strcmp(field[2], "rank"))
			continue;
		if (node) {
			if (strncmp(field[4], "lgnode", 6))
				fail_msg("a node row's host is '%s'", field[4]);
			node_rows++;
		}
		int64_t i = strtoll(field[1], NULL, 10) - l->t0;
		assert_true(i >= 0 && i < MAXT);
		got[i] += strtoull(field[8], NULL, 10);
	}
	fclose(f);
	unlink(csv);
	assert_true(node_rows > 0);
	for (int64_t i = 0; i <= l->last_t - l->t0; i++) {
		uint64_t want = 0;
		for (unsigned n = 0; n < NODES; n++)
			for (unsigned c = 0; c < LC; c++)
				want += l->by_node[i][n][c].bytes;
		assert_int_equal(got[i], want);
	}
	printf("# export: %u node rows, every tick's bytes as the live ones\n", node_rows);
}

static void larger_job(void **state)
{
	(void)state;
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char path[4096];
	snprintf(path, sizeof path, "%s/rec_ranks_test.%d.iop", tmp, (int)getpid());
	struct live *l = calloc(1, sizeof(*l));
	assert_non_null(l);
	l->t0 = INT64_MIN;
	record_job(l, path);
	check_recording(l, path);
	check_export(l, path);
	coll_root_free(l->root);
	unlink(path);
	free(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(larger_job),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

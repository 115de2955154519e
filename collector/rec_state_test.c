/* Recordings with keyframes: the state at any time built from the last
 * keyframe before it equals the state built from every DELTA from the
 * start, with keyframes in one frame or in many, and when the last
 * keyframe is damaged. */
#include "test_util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fcntl.h>
#include <jansson.h>

#include "inspect.h"
#include "keyframe.h"
#include "rec_io.h"
#include "rec_state.h"
#include "record.h"
#include "sim.h"

#define SEC 1000000000ull
#define T0  (1700000000ull * SEC)

/* Every STEP_S seconds of a recording, its state the fast way and the slow
 * way; under AddressSanitizer, where all of it runs at about a fifth of
 * the speed, half as many (the CI's sanitizer stage spent 185 s here). */
#if defined(__SANITIZE_ADDRESS__)
#define STEP_S 10
#else
#define STEP_S 5
#endif
#define FROM_KF(n) ((n) * 5 / STEP_S) /* n times checked from a keyframe at STEP_S 5 */

static void record_tick(void *arg, const struct coll_delta *d, const struct coll_state *s)
{
	coll_record_tick_state(arg, d, s);
}

static void encode(const struct coll_state *s, uint8_t **buf, size_t *len)
{
	size_t cap = 0;
	*buf = NULL;
	assert_int_equal(coll_state_encode_keyframe(s, 0, buf, &cap, len), IOP_OK);
}

/* Records a 60 s job of 2 ranks with a keyframe every 10 s into path;
 * *root gets the root's final state (encoded). */
static void record_job_detail(const char *path, size_t part_max, uint64_t every,
                              uint64_t detail_ns, uint8_t **root, size_t *root_len);

static void record_job(const char *path, size_t part_max, uint64_t every, uint8_t **root,
                       size_t *root_len)
{
	record_job_detail(path, part_max, every, UINT64_MAX, root, root_len);
}

/* The same with --record-detail's detail_ns (record.h; 0: view, the default). */
static void record_job_detail(const char *path, size_t part_max, uint64_t every,
                              uint64_t detail_ns, uint8_t **root, size_t *root_len)
{
	/* the default history: replaying from the start (as `iopulse summary`
	 * does) builds the state with it; keyframe_test covers rings that wrap */
	struct coll_job_info job = {.id = 0x1234abcd, .start_ns = T0, .command = "sim",
	                            .tick_ns = SEC};
	struct coll_record_opts o = {.keyframe_every_ns = every, .keyframe_part_max = part_max,
	                             .detail_ns = detail_ns};
	struct coll_record *rec = coll_record_open_opts(path, &job, &o);
	assert_non_null(rec);
	struct coll_sim sim;
	assert_int_equal(coll_sim_new(&sim, 2, IOP_WL_MIXED, T0, NULL, record_tick, rec), IOP_OK);
	assert_int_equal(coll_sim_run_until(&sim, T0 + 60 * SEC, 32), IOP_OK);
	assert_int_equal(coll_sim_finish(&sim), IOP_OK);
	struct coll_record_stats st;
	coll_record_stats(rec, &st);
	assert_int_equal(st.keyframes_skipped, 0);
	if (every == UINT64_MAX)
		assert_int_equal(st.keyframes, 0);
	else
		assert_true(st.keyframes >= 5);
	if (part_max && every != UINT64_MAX && detail_ns == UINT64_MAX)
		assert_true(st.keyframe_frames > st.keyframes); /* in parts */
	else
		assert_int_equal(st.keyframe_frames, st.keyframes);
	/* each encoded by a child beside the loop (record.c), none in place;
	 * the records written meanwhile were held and follow it (the states
	 * the seeks below build say the file reads as before) */
	assert_int_equal(st.keyframes_beside, st.keyframes);
	print_message("keyframes %" PRIu64 ", beside the loop %" PRIu64 ", most records held %" PRIu64
	              "\n", st.keyframes, st.keyframes_beside, st.records_held_max);
	encode(coll_root_state(sim.root), root, root_len);
	coll_record_close(rec);
	coll_sim_free(&sim);
}

static void assert_same_bytes(const struct coll_state *s, const uint8_t *want, size_t len)
{
	uint8_t *x;
	size_t lx;
	encode(s, &x, &lx);
	assert_int_equal(lx, len);
	assert_memory_equal(x, want, lx);
	free(x);
}

struct opened {
	struct rec_io *io;
	struct rec_reader *r;
};

static void open_rec(const char *path, struct opened *o)
{
	assert_int_equal(rec_io_file_open(path, &o->io), IOP_OK);
	assert_int_equal(rec_open(o->io, &o->r, NULL, 0), IOP_OK);
}

static void close_rec(struct opened *o)
{
	rec_reader_close(o->r);
	rec_io_close(o->io);
}

/* state_at(t) == replay(t) at times around every keyframe; returns how
 * many of them came from a keyframe. */
static unsigned check_times(const char *path, uint64_t *passed)
{
	struct opened o;
	open_rec(path, &o);
	unsigned from_kf = 0;
	*passed = 0;
	for (uint64_t s = 0; s <= 70; s += STEP_S) {
		uint64_t t = T0 + s * SEC + (s % 2 ? SEC / 2 : 0);
		struct coll_state fast, slow;
		struct coll_rec_state_info fi, si;
		assert_int_equal(coll_rec_state_at(o.r, t, &fast, &fi), IOP_OK);
		assert_int_equal(coll_rec_state_replay(o.r, t, &slow, &si), IOP_OK);
		assert_true(coll_sim_same_state(&fast, &slow));
		assert_int_equal(fi.bad_deltas + si.bad_deltas, 0);
		if (fi.from_keyframe) {
			from_kf++;
			assert_true(fi.deltas < si.deltas);
			assert_true(fi.deltas <= 10);
		}
		*passed += fi.keyframes_passed;
		coll_state_free(&fast);
		coll_state_free(&slow);
	}
	close_rec(&o);
	return from_kf;
}

static void seek_equals_replay(size_t part_max)
{
	char dir[] = "/tmp/iop-recstate-XXXXXX", path[256];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/job.iop", dir);
	uint8_t *root;
	size_t root_len;
	record_job(path, part_max, 10 * SEC, &root, &root_len);
	uint64_t passed;
	assert_true(check_times(path, &passed) >= FROM_KF(10));
	assert_int_equal(passed, 0);
	/* the whole recording gives the root's final state */
	struct opened o;
	open_rec(path, &o);
	struct coll_state all;
	struct coll_rec_state_info info;
	assert_int_equal(coll_rec_state_at(o.r, UINT64_MAX, &all, &info), IOP_OK);
	assert_true(info.from_keyframe);
	assert_same_bytes(&all, root, root_len);
	coll_state_free(&all);
	int64_t last_kf = info.keyframe_tick;

	/* damage the last keyframe's last frame: it is passed over, the state
	 * comes from the keyframe before it, and is the same */
	const struct rec_index_entry *ix;
	size_t n;
	assert_int_equal(rec_index(o.r, &ix, &n), IOP_OK);
	uint64_t off = 0;
	for (size_t i = 0; i < n; i++)
		if (ix[i].type == REC_KEYFRAME)
			off = ix[i].offset;
	assert_true(off > 0);
	close_rec(&o);
	FILE *f = fopen(path, "r+b");
	assert_non_null(f);
	assert_int_equal(fseek(f, (long)off + 60, SEEK_SET), 0);
	int ch = fgetc(f);
	assert_int_equal(fseek(f, (long)off + 60, SEEK_SET), 0);
	fputc(ch ^ 0xff, f);
	fclose(f);
	uint64_t passed_before;
	assert_true(check_times(path, &passed_before) >= FROM_KF(10));
	open_rec(path, &o);
	assert_int_equal(coll_rec_state_at(o.r, UINT64_MAX, &all, &info), IOP_OK);
	assert_true(info.from_keyframe);
	assert_true(info.keyframe_tick < last_kf); /* the one before */
	assert_same_bytes(&all, root, root_len);
	coll_state_free(&all);
	struct rec_info ri;
	assert_int_equal(rec_verify(o.r), IOP_OK);
	assert_int_equal(rec_info(o.r, &ri), IOP_OK);
	assert_int_equal(ri.corrupt, 1);
	close_rec(&o);
	free(root);
	unlink(path);
	rmdir(dir);
}

static void keyframes_in_one_frame(void **state)
{
	(void)state;
	seek_equals_replay(0);
}

static void keyframes_in_parts(void **state)
{
	(void)state;
	seek_equals_replay(3000);
}

/* `iopulse summary FILE --json`'s output, into out. */
static void summary_json(const char *path, const char *out)
{
	fflush(stdout);
	int saved = dup(1), fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(saved >= 0 && fd >= 0);
	dup2(fd, 1);
	close(fd);
	char *argv[] = {"summary", (char *)path, "--json", NULL};
	int rc = rec_cmd_summary(3, argv);
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	assert_int_equal(rc, 0);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	static char buf[1 << 20];
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	return strdup(buf);
}

/* Two recordings of the job (record_job_detail) and a JSON file for each,
 * in a temporary directory. */
struct two {
	char dir[32], rec[2][256], json[2][256];
	uint8_t *root[2];
	size_t root_len[2];
};

static void two_record(struct two *t, const char *const name[2], const uint64_t every[2],
                       const uint64_t detail[2])
{
	snprintf(t->dir, sizeof t->dir, "/tmp/iop-recstate-XXXXXX");
	assert_non_null(mkdtemp(t->dir));
	char dir[sizeof t->dir]; /* a copy: gcc -O1 took t->dir to overlap t->rec */
	memcpy(dir, t->dir, sizeof dir);
	for (int i = 0; i < 2; i++) {
		snprintf(t->rec[i], sizeof t->rec[i], "%s/%s.iop", dir, name[i]);
		snprintf(t->json[i], sizeof t->json[i], "%s/%s.json", dir, name[i]);
		record_job_detail(t->rec[i], 0, every[i], detail[i], &t->root[i], &t->root_len[i]);
	}
}

static void two_free(struct two *t)
{
	for (int i = 0; i < 2; i++) {
		free(t->root[i]);
		unlink(t->rec[i]);
		unlink(t->json[i]);
	}
	rmdir(t->dir);
}

/* The summary reads the same from a recording with keyframes as from one
 * without: it applies the DELTAs and passes the KEYFRAMEs by. */
static void summary_ignores_keyframes(void **state)
{
	(void)state;
	struct two t;
	two_record(&t, (const char *const[]){"with", "without"}, (const uint64_t[]){10 * SEC, UINT64_MAX},
	           (const uint64_t[]){UINT64_MAX, UINT64_MAX});
	summary_json(t.rec[0], t.json[0]);
	summary_json(t.rec[1], t.json[1]);
	char *ta = slurp(t.json[0]), *tb = slurp(t.json[1]);
	assert_true(strlen(ta) > 100);
	assert_string_equal(ta, tb);
	free(ta);
	free(tb);
	two_free(&t);
}

/* The keyframe spacing rule of the default period (record.h): once a
 * minute's end has passed since the last keyframe, the next one follows
 * the first DELTA written once the DELTA bytes since the last one reach
 * that one's bytes (a lean recording's: 8 times them, the default's: 4),
 * or that is 10 minutes (lean: 60, the default: 30) after it; never
 * sooner. A 1-rank job of 4 minutes: its history
 * grows past a minute of DELTAs, so the rule spaces its keyframes. */
static void spaced_rule(uint64_t detail_ns, uint64_t share, uint64_t periods,
                        unsigned *n_keyframes, unsigned *n_spaced)
{
	char path[] = "/tmp/rec_state_test_spacedXXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	struct coll_job_info job = {.id = 0x5eac, .start_ns = T0, .command = "sim", .tick_ns = SEC};
	struct coll_record_opts ro = {.detail_ns = detail_ns};
	struct coll_record *rec = coll_record_open_opts(path, &job, &ro);
	assert_non_null(rec);
	struct coll_sim sim;
	assert_int_equal(coll_sim_new(&sim, 1, IOP_WL_MIXED, T0, NULL, record_tick, rec), IOP_OK);
	assert_int_equal(coll_sim_run_until(&sim, T0 + 4 * 60 * SEC, 32), IOP_OK);
	assert_int_equal(coll_sim_finish(&sim), IOP_OK);
	coll_record_close(rec);
	coll_sim_free(&sim);

	struct opened o;
	open_rec(path, &o);
	struct rec_frame f;
	uint64_t since = 0, key_len = 0, key_ns = 0, first_ns = 0, minute = 60 * SEC;
	unsigned keyframes = 0, spaced = 0;
	bool due = false; /* the last DELTA ended a minute the rule allowed a keyframe at */
	while (rec_next(o.r, &f, NULL, 0) == IOP_OK) {
		if (f.type == REC_DELTA) {
			if (due)
				fail_msg("no keyframe after the DELTA before %" PRIu64 " s: %" PRIu64
				         " DELTA bytes since one of %" PRIu64,
				         (f.time_ns - T0) / SEC, since, key_len);
			if (!first_ns)
				first_ns = f.time_ns;
			/* decided before the DELTA is written (its counters go out
			 * with it): the bytes before it count */
			due = keyframes && f.time_ns / minute > key_ns / minute &&
			      (since >= key_len * share || f.time_ns - key_ns >= periods * minute);
			since += f.len;
			continue;
		}
		if (f.type != REC_KEYFRAME)
			continue;
		/* layout, tick, part, parts, length: a keyframe counts at its last part */
		struct iop_rcur c = iop_rcur_make(f.payload, f.len);
		assert_int_equal(iop_get_u8(&c), COLL_REC_KEYFRAME_LAYOUT);
		(void)iop_get_svarint(&c);
		uint64_t part = iop_get_varint(&c), parts = iop_get_varint(&c);
		uint64_t len = iop_get_varint(&c);
		assert_int_equal(c.err, IOP_OK);
		if (part + 1 < parts)
			continue;
		if (keyframes) {
			assert_true(f.time_ns / minute > key_ns / minute);
			assert_true(since >= key_len * share || f.time_ns - key_ns >= periods * minute);
			spaced += f.time_ns - key_ns > minute;
		} else {
			assert_int_equal(f.time_ns - first_ns < 2 * minute, true);
		}
		keyframes++;
		key_len = len;
		key_ns = f.time_ns;
		since = 0;
		due = false;
	}
	close_rec(&o);
	unlink(path);
	*n_keyframes = keyframes;
	*n_spaced = spaced;
}

static void keyframes_spaced_by_cost(void **state)
{
	(void)state;
	unsigned keyframes, spaced;
	spaced_rule(UINT64_MAX, 1, 10, &keyframes, &spaced); /* full */
	assert_true(keyframes >= 3);
	assert_true(spaced >= 1); /* the rule did space some */
	/* lean: 8 times their bytes of DELTAs, or an hour; the first one a
	 * minute in, then none in 4 minutes of this job */
	spaced_rule(60 * SEC, 8, 60, &keyframes, &spaced);
	assert_int_equal(keyframes, 1);
	/* the default (view): 4 times their bytes, or half an hour */
	spaced_rule(0, 4, 30, &keyframes, &spaced);
	assert_true(keyframes >= 1);
}


/* A summary record without its alerts (judged again from a full
 * recording's ticks; a lean one's are its ALERT frames, none here). */
static json_t *summary_sans_alerts(const char *path, const char *out)
{
	summary_json(path, out);
	json_t *j = json_load_file(out, 0, NULL);
	assert_non_null(j);
	json_object_del(j, "alerts");
	return j;
}

/* A lean recording (record.h) of the same job as a full one: every tick's
 * LAYER rows, the whole tick once a minute and when processes end, and
 * the same summary (exact totals, each rank's I/O time, the layers); the
 * state at any time from its keyframes equals the state from its DELTAs;
 * far fewer DELTA bytes. */
static void lean_recording(void **state)
{
	(void)state;
	struct two t;
	two_record(&t, (const char *const[]){"full", "lean"}, (const uint64_t[]){10 * SEC, 10 * SEC},
	           (const uint64_t[]){UINT64_MAX, 60 * SEC});
	const char *full = t.rec[0], *lean = t.rec[1];
	uint64_t passed;
	assert_true(check_times(lean, &passed) >= FROM_KF(5));

	uint64_t bytes[2] = {0, 0};
	unsigned whole = 0, lean_ticks = 0;
	for (int i = 0; i < 2; i++) {
		struct opened o;
		open_rec(i ? lean : full, &o);
		struct rec_frame f;
		struct coll_delta d;
		coll_delta_init(&d, 0, SEC);
		while (rec_next(o.r, &f, NULL, 0) == IOP_OK) {
			if (f.type != REC_DELTA)
				continue;
			bytes[i] += f.len;
			struct iop_rcur c = iop_rcur_make(f.payload, f.len);
			assert_int_equal(coll_delta_decode_body(&d, &c), IOP_OK);
			if (!i || !d.tick.n)
				continue;
			bool ends = false;
			for (uint32_t p = 0; p < d.n_procs; p++)
				ends |= d.procs[p].state != COLL_PROC_JOINED;
			if ((d.tick.t + 1) % 60 == 0 || ends) {
				assert_false(coll_tick_thinned(&d.tick)); /* whole */
				whole++;
			} else {
				assert_true(coll_tick_thinned(&d.tick)); /* its LAYER rows */
				assert_int_equal(d.ctr.n, 0);            /* counters wait */
				lean_ticks++;
			}
		}
		coll_delta_free(&d);
		close_rec(&o);
	}
	assert_true(whole >= 2);
	assert_true(lean_ticks >= 50);
	assert_true(bytes[1] * 3 < bytes[0]);

	json_t *sf = summary_sans_alerts(full, t.json[0]), *sl = summary_sans_alerts(lean, t.json[1]);
	if (!json_equal(sf, sl)) {
		char *x = json_dumps(sf, JSON_COMPACT), *y = json_dumps(sl, JSON_COMPACT);
		fail_msg("summaries differ:\n%s\n%s", x, y);
	}
	json_decref(sf);
	json_decref(sl);
	two_free(&t);
}

/* The rank cap counts ranks, not RANK rows: a 2-rank job's ticks hold
 * more RANK rows (a row per layer and class) than a cap of 3, and are
 * recorded whole, every tick's counters with it, as the live root had
 * them (no distribution, no node rows, nothing held back). */
struct live_ctr {
	struct coll_record *rec;
	uint32_t ctr[512], rank_rows_max;
	int64_t t0;
	unsigned n;
};

static void count_and_record(void *arg, const struct coll_delta *d, const struct coll_state *s)
{
	struct live_ctr *l = arg;
	if (!l->n)
		l->t0 = d->tick.t;
	uint32_t rows = 0;
	for (uint32_t i = 0; i < d->tick.n; i++)
		rows += d->tick.key[i].kind == COLL_ROW_RANK;
	if (rows > l->rank_rows_max)
		l->rank_rows_max = rows;
	if (d->tick.t - l->t0 < 512)
		l->ctr[d->tick.t - l->t0] = d->ctr.n;
	l->n++;
	coll_record_tick_state(l->rec, d, s);
}

static void rank_cap_counts_ranks(void **state)
{
	(void)state;
	char path[] = "/tmp/rec_state_test_capXXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	struct coll_job_info job = {.id = 0xca9, .start_ns = T0, .command = "sim", .tick_ns = SEC};
	struct coll_record_opts ro = {.rank_cap = 3};
	static struct live_ctr l;
	memset(&l, 0, sizeof l);
	assert_non_null(l.rec = coll_record_open_opts(path, &job, &ro));
	struct coll_sim sim;
	assert_int_equal(coll_sim_new(&sim, 2, IOP_WL_MIXED, T0, NULL, count_and_record, &l), IOP_OK);
	assert_int_equal(coll_sim_run_until(&sim, T0 + 30 * SEC, 32), IOP_OK);
	assert_int_equal(coll_sim_finish(&sim), IOP_OK);
	coll_record_close(l.rec);
	coll_sim_free(&sim);
	assert_true(l.rank_rows_max > 3); /* the case: more rows than the cap */

	struct opened o;
	open_rec(path, &o);
	struct coll_delta d;
	coll_delta_init(&d, 0, SEC);
	struct rec_frame f;
	unsigned deltas = 0, with_ctr = 0;
	while (rec_next(o.r, &f, NULL, 0) == IOP_OK) {
		if (f.type != REC_DELTA)
			continue;
		struct iop_rcur c = iop_rcur_make(f.payload, f.len);
		assert_int_equal(coll_delta_decode_body(&d, &c), IOP_OK);
		assert_int_equal(d.dist.ranks, 0);
		for (uint32_t i = 0; i < d.tick.n; i++)
			assert_false(coll_key_is_node(&d.tick.key[i]));
		assert_int_equal(d.ctr.n, l.ctr[d.tick.t - l.t0]);
		with_ctr += d.ctr.n > 0;
		deltas++;
	}
	assert_int_equal(deltas, l.n);
	assert_true(with_ctr > 10);
	coll_delta_free(&d);
	close_rec(&o);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(keyframes_in_one_frame),
		cmocka_unit_test(keyframes_in_parts),
		cmocka_unit_test(summary_ignores_keyframes),
		cmocka_unit_test(lean_recording),
		cmocka_unit_test(keyframes_spaced_by_cost),
		cmocka_unit_test(rank_cap_counts_ranks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Seeking in a recording with keyframes, on a synthetic 1-hour, 1024-rank
 * job recorded by the root's writer (collector/record.c) into a temporary
 * file: a tick a second, each with a row per rank (writes; a read row for
 * every 4th rank), 64 shared files, the layers, a counter per rank; a
 * keyframe every 60 s.
 *
 *   seek_ms              the state at a random time: the last keyframe
 *                        before it decoded, the DELTAs after it applied
 *                        (coll_rec_state_at), mean of 20 (wall clock; the
 *                        thread's CPU time beside it, for a shared machine)
 *   seek_max_ms          the slowest of those 20
 *   keyframe_MiB         the last keyframe's size, before compression
 *   rec_keyframe_write_ms  writing one keyframe (encode, compress, write),
 *                        mean over the hour
 *   rec_tick_max_ms_beside  the longest a tick's recording call kept the
 *                        caller's loop, with keyframes encoded by a forked
 *                        child (the default, record.c), the same ticks
 *                        recorded into a second file in the same loop;
 *                        rec_tick_max_ms_in_loop: the same with keyframes
 *                        encoded in the loop (the first file)
 *   replay_speedup       `iopulse replay FILE --headless` of the recording
 *                        (every DELTA applied, the alerts re-run, the
 *                        summary): how many times faster than real time
 *
 * Usage: seek_bench [NAME...] (default: all). Prints "NAME VALUE UNIT".
 * RANKS and SECONDS in the environment make a smaller job. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"
#include "clock.h"
#include "events.h"
#include "frame.h"
#include "rec_io.h"
#include "rec_state.h"
#include "record.h"

#define SEC   1000000000ull
#define T0    (1700000000ull * SEC)
#define FILES 64

static uint64_t rng = 88172645463325252u;

static uint64_t next_rand(void)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return rng;
}

static void must(enum iop_err e, const char *what)
{
	if (e) {
		fprintf(stderr, "seek_bench: %s: %s\n", what, iop_strerror(e));
		exit(1);
	}
}

static void add_calls(struct coll_tick *k, struct coll_key key, unsigned calls, uint64_t bytes)
{
	struct coll_cell *c;
	must(coll_tick_row(k, &key, &c), "row");
	for (unsigned i = 0; i < calls; i++)
		coll_cell_add_call(c, 20000 + next_rand() % 500000, bytes, true, false);
	c->excl_ns = c->time_ns;
	c->busy_ns = c->time_ns;
	c->off_ops = calls;
	c->consec_ops = calls / 2;
	c->stride_ops = calls / 4;
}

/* Tick t's delta: what 1024 ranks did in one second. */
static void make_tick(struct coll_delta *d, int64_t t, unsigned ranks, uint64_t *ctr_ops)
{
	coll_delta_reset(d, t);
	char name[64];
	if (t == (int64_t)(T0 / SEC)) {
		for (unsigned f = 0; f < FILES; f++) {
			int n = snprintf(name, sizeof name, "/scratch/job/out.%02u.h5", f);
			must(coll_delta_add_name(d, 0x1000 + f, IOP_NAME_FILE, name, (uint32_t)n), "name");
		}
		must(coll_delta_add_name(d, 0xabcd00000007ull, IOP_NAME_HOST, "node-0007", 9), "host");
		for (unsigned r = 0; r < ranks; r++) {
			struct coll_proc p = {.t_ns = T0, .rank = r, .node = 7, .pid = 1000 + r,
			                      .state = COLL_PROC_JOINED};
			must(coll_delta_add_proc(d, &p), "proc");
		}
	}
	uint64_t ops = 0, bytes = 0;
	for (unsigned r = 0; r < ranks; r++) {
		unsigned calls = 1 + (unsigned)(next_rand() % 8);
		add_calls(&d->tick, coll_key_rank(r, IOP_LAYER_POSIX, IOP_CLASS_WRITE), calls, 1 << 20);
		if (r % 4 == 0)
			add_calls(&d->tick, coll_key_rank(r, IOP_LAYER_POSIX, IOP_CLASS_READ), 2, 65536);
		ctr_ops[r] += calls;
		ops += calls;
		bytes += (uint64_t)calls << 20;
		struct coll_counter c = {.file = 0x1000 + r % FILES, .ops = ctr_ops[r],
		                         .bytes = ctr_ops[r] << 20, .time_ns = ctr_ops[r] * 250000,
		                         .rank = r, .node = 7, .pid = 1000 + r,
		                         .layer = IOP_LAYER_POSIX, .cls = IOP_CLASS_WRITE};
		must(coll_delta_add_counter(d, &c), "counter");
	}
	for (unsigned f = 0; f < FILES; f++)
		add_calls(&d->tick, coll_key_file(0x1000 + f, IOP_LAYER_POSIX, IOP_CLASS_WRITE),
		          (unsigned)(ops / FILES), 1 << 20);
	add_calls(&d->tick, coll_key_layer(IOP_LAYER_POSIX, IOP_CLASS_WRITE), 16, 1 << 20);
	add_calls(&d->tick, coll_key_layer(IOP_LAYER_POSIX, IOP_CLASS_READ), 4, 65536);
	d->mon.frames = ranks * 100;
	d->mon.events = ops;
	d->mon.produced = ops;
	(void)bytes;
}

/* Headless replay of path by the iopulse binary built beside this one:
 * seconds of recording per second of replay (0 when it failed). */
static double replay_speedup(const char *path, unsigned seconds)
{
	char exe[4096], cmd[8400];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return 0;
	exe[n] = 0;
	char *slash = strrchr(exe, '/');
	if (slash)
		*slash = 0;
	snprintf(cmd, sizeof cmd, "'%s/../cli/iopulse' replay '%s' --headless 2>/dev/null", exe,
	         path);
	uint64_t t0 = iop_mono_ns();
	int rc = system(cmd);
	double secs = (double)(iop_mono_ns() - t0) / 1e9;
	if (rc != 0) {
		fprintf(stderr, "seek_bench: %s: exit %d\n", cmd, rc);
		return 0;
	}
	return seconds / secs;
}

int main(int argc, char **argv)
{
	unsigned ranks = getenv("RANKS") ? (unsigned)atoi(getenv("RANKS")) : 1024;
	unsigned seconds = getenv("SECONDS") ? (unsigned)atoi(getenv("SECONDS")) : 3600;
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char path[4096];
	snprintf(path, sizeof path, "%s/seek_bench.%d.iop", tmp, (int)getpid());

	struct coll_job_info job = {.id = 1, .start_ns = T0, .command = "seek_bench",
	                            .tick_ns = SEC};
	/* KF_SHARE and KF_PERIODS override the keyframe spacing (record.h) */
	/* in the loop: rec_keyframe_write_ms times the encoding too */
	struct coll_record_opts ro = {
		.keyframe_in_loop = true,
		.keyframe_share = getenv("KF_SHARE") ? atof(getenv("KF_SHARE")) : 0,
		.keyframe_periods = getenv("KF_PERIODS") ? (uint32_t)atoi(getenv("KF_PERIODS")) : 0};
	struct coll_record *rec = coll_record_open_opts(path, &job, &ro);
	if (!rec)
		return 1;
	char path2[4200];
	snprintf(path2, sizeof path2, "%s.beside", path);
	struct coll_record_opts ro2 = ro;
	ro2.keyframe_in_loop = false;
	struct coll_record *rec2 = coll_record_open_opts(path2, &job, &ro2);
	if (!rec2)
		return 1;
	double tick_max_ms = 0, tick_max2_ms = 0;
	struct coll_state s;
	coll_state_init(&s, SEC, NULL);
	struct coll_delta d;
	coll_delta_init(&d, 0, SEC);
	uint64_t *ctr_ops = calloc(ranks, sizeof(*ctr_ops));
	double kf_ms = 0;
	uint64_t kf_before = 0;
	for (unsigned i = 0; i < seconds; i++) {
		make_tick(&d, (int64_t)(T0 / SEC) + i, ranks, ctr_ops);
		must(coll_state_apply(&s, &d), "apply");
		uint64_t t0 = iop_mono_ns();
		coll_record_tick_state(rec, &d, &s);
		double ms = (double)(iop_mono_ns() - t0) / 1e6;
		struct coll_record_stats st;
		coll_record_stats(rec, &st);
		if (st.keyframes != kf_before) {
			kf_ms += ms;
			kf_before = st.keyframes;
		}
		if (ms > tick_max_ms)
			tick_max_ms = ms;
		t0 = iop_mono_ns();
		coll_record_tick_state(rec2, &d, &s);
		ms = (double)(iop_mono_ns() - t0) / 1e6;
		if (ms > tick_max2_ms)
			tick_max2_ms = ms;
	}
	struct coll_record_stats st, st2;
	coll_record_stats(rec, &st);
	coll_record_close(rec);
	coll_record_stats(rec2, &st2);
	coll_record_close(rec2);
	unlink(path2);
	coll_delta_free(&d);
	coll_state_free(&s);
	free(ctr_ops);

	struct rec_io *io;
	struct rec_reader *r;
	must(rec_io_file_open(path, &io), path);
	must(rec_open(io, &r, NULL, 0), "open");
	enum { SEEKS = 20 };
	double sum = 0, max = 0, cpu_sum = 0, deltas = 0;
	struct coll_state at;
	must(coll_rec_state_at(r, T0 + SEC * seconds / 2, &at, NULL), "warm-up seek");
	coll_state_free(&at);
	for (int i = 0; i < SEEKS; i++) {
		uint64_t t = T0 + next_rand() % (seconds * SEC);
		uint64_t t0 = iop_mono_ns(), c0 = bench_cpu_ns();
		struct coll_rec_state_info info;
		must(coll_rec_state_at(r, t, &at, &info), "seek");
		double ms = (double)(iop_mono_ns() - t0) / 1e6;
		cpu_sum += (double)(bench_cpu_ns() - c0) / 1e6;
		deltas += (double)info.deltas;
		coll_state_free(&at);
		sum += ms;
		if (ms > max)
			max = ms;
	}
	rec_reader_close(r);
	rec_io_close(io);
	double speedup = bench_wanted(argc, argv, "replay_speedup") ? replay_speedup(path, seconds) : 0;
	unlink(path);
	if (bench_wanted(argc, argv, "seek_ms"))
		printf("seek_ms %.1f ms (target <= 200; mean of %d; the thread's CPU time %.1f ms; "
		       "%" PRIu64 " keyframes, %.0f DELTAs applied after one on average)\n",
		       sum / SEEKS, SEEKS, cpu_sum / SEEKS, st.keyframes, deltas / SEEKS);
	if (bench_wanted(argc, argv, "seek_max_ms"))
		printf("seek_max_ms %.1f ms\n", max);
	if (bench_wanted(argc, argv, "keyframe_MiB"))
		printf("keyframe_MiB %.1f MiB\n", (double)st.keyframe_bytes / (1 << 20));
	if (bench_wanted(argc, argv, "rec_keyframe_write_ms"))
		printf("rec_keyframe_write_ms %.1f ms\n", st.keyframes ? kf_ms / (double)st.keyframes : 0.0);
	if (bench_wanted(argc, argv, "replay_speedup"))
		printf("replay_speedup %.1f x\n", speedup);
	if (bench_wanted(argc, argv, "rec_tick_max_ms_beside")) {
		printf("rec_tick_max_ms_beside %.1f ms (%" PRIu64 " keyframes by a child, most records "
		       "held %" PRIu64 ")\n", tick_max2_ms, st2.keyframes_beside, st2.records_held_max);
		printf("rec_tick_max_ms_in_loop %.1f ms\n", tick_max_ms);
	}
	return 0;
}

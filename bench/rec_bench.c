/* Recording benchmarks, one core, on a synthetic 1-hour recording in a
 * temporary file: 3600 DELTA frames of ~50 KiB (one a second; rows of
 * per-rank, per-file counters and latency histograms as varints, as the
 * collector's aggregates will look) and a ~200 KiB KEYFRAME every 60 s.
 *
 *   rec_write_MiB_per_s    payload MiB appended per second (compression,
 *                          checksums, one write(2) per frame)
 *   rec_read_MiB_per_s     payload MiB read back per second (checks,
 *                          decompression), from the page cache
 *   rec_replay_x_realtime  the hour's length over the time to read it all
 *   rec_seek_ms            seek to a random time through END's index and
 *                          read the keyframe there, mean of 200
 *   rec_seek_noindex_ms    the same file without END (a killed writer):
 *                          open and the first seek, which scans the file
 *
 * Write and read figures are the median of 3 runs. Usage: rec_bench [NAME...]
 * (default: all). Prints "NAME VALUE UNIT". Files go to $TMPDIR or /tmp. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"
#include "clock.h"
#include "codec.h"
#include "rec.h"

#define TICKS     3600
#define KEY_EVERY 60
#define POOL      16
#define RUNS      3
#define T0        1700000000000000000ull
#define SEC       1000000000ull

static uint64_t rng = 88172645463325252u;

static uint64_t next_rand(void)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return rng;
}

/* Rows until the payload holds about target bytes: rank, file, layer and
 * class, ops, bytes, busy time, and a sparse latency histogram. */
static size_t aggregates(uint8_t *buf, size_t cap, size_t target)
{
	struct iop_wcur c = iop_wcur_make(buf, cap);
	for (uint32_t row = 0; (size_t)(c.p - buf) < target; row++) {
		uint64_t ops = next_rand() % 4 ? 1 + next_rand() % 200 : 0;
		iop_put_varint(&c, row / 16);        /* rank */
		iop_put_varint(&c, row % 16 + 1);    /* file id */
		iop_put_u8(&c, (uint8_t)(row % 12)); /* layer << 2 | class */
		iop_put_varint(&c, ops);
		iop_put_varint(&c, ops * (next_rand() % 3 ? 1048576 : 4096));
		iop_put_varint(&c, ops * (20000 + next_rand() % 50000));
		unsigned buckets = ops ? 1 + (unsigned)(next_rand() % 6) : 0;
		iop_put_varint(&c, buckets);
		for (unsigned b = 0; b < buckets; b++) {
			iop_put_varint(&c, next_rand() % 8);
			iop_put_varint(&c, 1 + next_rand() % (ops + 1));
		}
	}
	return (size_t)(c.p - buf);
}

struct pool {
	uint8_t *delta[POOL], *key[POOL];
	size_t delta_len[POOL], key_len[POOL];
};

static double now_s(void)
{
	return (double)iop_mono_ns() / 1e9;
}

static void must(enum iop_err err, const char *what)
{
	if (err != IOP_OK) {
		fprintf(stderr, "rec_bench: %s: %s\n", what, iop_strerror(err));
		exit(1);
	}
}

/* Writes the hour to path; returns payload bytes (META's aside). Without
 * close, no END. */
static uint64_t write_hour(const char *path, const struct pool *p, bool close)
{
	struct rec_io *io;
	struct rec_writer *w;
	struct rec_writer_opts o = {.job_id = 1, .start_ns = T0};
	static const char meta[] =
	    "{\"v\":1,\"job\":{\"id\":\"bench\",\"ranks\":256},\"tick_ms\":1000}";
	must(rec_io_file_create(path, &io), path);
	must(rec_writer_open(io, &o, meta, sizeof meta - 1, &w), "writer");
	uint64_t bytes = 0;
	for (unsigned t = 0; t < TICKS; t++) {
		uint64_t at = T0 + t * SEC;
		if (t % KEY_EVERY == 0) {
			unsigned k = t / KEY_EVERY % POOL;
			must(rec_write(w, REC_KEYFRAME, at, p->key[k], p->key_len[k]), "keyframe");
			bytes += p->key_len[k];
		}
		unsigned d = t % POOL;
		memcpy(p->delta[d], &t, sizeof t); /* no two frames alike */
		must(rec_write(w, REC_DELTA, at, p->delta[d], p->delta_len[d]), "delta");
		must(rec_flush(w), "flush");
		bytes += p->delta_len[d];
	}
	if (close)
		must(rec_close(w), "close");
	else
		rec_writer_abandon(w);
	must(rec_io_close(io), "close file");
	return bytes;
}

static uint64_t read_hour(const char *path)
{
	struct rec_io *io;
	struct rec_reader *r;
	must(rec_io_file_open(path, &io), path);
	must(rec_open(io, &r, NULL, 0), "open");
	struct rec_frame f;
	uint64_t bytes = 0, frames = 0;
	enum iop_err err;
	while ((err = rec_next(r, &f, NULL, 0)) == IOP_OK) {
		bytes += f.type == REC_META ? 0 : f.len;
		frames++;
	}
	if (err != IOP_ERR_NOT_FOUND || frames != 1 + TICKS + TICKS / KEY_EVERY)
		must(IOP_ERR_INCONSISTENT, "read back");
	rec_reader_close(r);
	rec_io_close(io);
	return bytes;
}

static void seek_to(struct rec_reader *r, uint64_t t)
{
	struct rec_frame f;
	must(rec_seek_time(r, t), "seek");
	must(rec_next(r, &f, NULL, 0), "read after seek");
	if (f.type != REC_KEYFRAME || f.time_ns > t || t - f.time_ns >= KEY_EVERY * SEC)
		must(IOP_ERR_INCONSISTENT, "seek landed wrong");
}

static double seek_ms(const char *path)
{
	struct rec_io *io;
	struct rec_reader *r;
	must(rec_io_file_open(path, &io), path);
	must(rec_open(io, &r, NULL, 0), "open");
	enum { SEEKS = 200 };
	double t0 = now_s();
	for (int i = 0; i < SEEKS; i++)
		seek_to(r, T0 + next_rand() % (TICKS * SEC));
	double ms = (now_s() - t0) * 1e3 / SEEKS;
	rec_reader_close(r);
	rec_io_close(io);
	return ms;
}

static double seek_noindex_ms(const char *path)
{
	struct rec_io *io;
	struct rec_reader *r;
	double t0 = now_s();
	must(rec_io_file_open(path, &io), path);
	must(rec_open(io, &r, NULL, 0), "open");
	seek_to(r, T0 + TICKS / 2 * SEC + 7 * SEC);
	double ms = (now_s() - t0) * 1e3;
	rec_reader_close(r);
	rec_io_close(io);
	return ms;
}

int main(int argc, char **argv)
{
	static struct pool p;
	for (int i = 0; i < POOL; i++) {
		p.delta[i] = malloc(64 << 10);
		p.key[i] = malloc(256 << 10);
		if (!p.delta[i] || !p.key[i])
			return 1;
		p.delta_len[i] = aggregates(p.delta[i], 64 << 10, 50 << 10);
		p.key_len[i] = aggregates(p.key[i], 256 << 10, 200 << 10);
	}
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char dir[256], path[300], open_path[300];
	snprintf(dir, sizeof dir, "%s/rec_bench.XXXXXX", tmp);
	if (!mkdtemp(dir)) {
		perror(dir);
		return 1;
	}
	snprintf(path, sizeof path, "%s/hour.iop", dir);
	snprintf(open_path, sizeof open_path, "%s/hour-killed.iop", dir);

	double wr[RUNS], rd[RUNS], read_s[RUNS];
	uint64_t file_bytes = 0;
	for (int run = 0; run < RUNS; run++) {
		double t0 = now_s();
		uint64_t bytes = write_hour(path, &p, true);
		double t1 = now_s();
		if (read_hour(path) != bytes)
			must(IOP_ERR_INCONSISTENT, "bytes read back");
		double t2 = now_s();
		wr[run] = (double)bytes / (1 << 20) / (t1 - t0);
		rd[run] = (double)bytes / (1 << 20) / (t2 - t1);
		read_s[run] = t2 - t1;
		struct rec_io *io;
		must(rec_io_file_open(path, &io), path);
		must(rec_io_size(io, &file_bytes), "size");
		rec_io_close(io);
		if (run == 0)
			fprintf(stderr, "rec_bench: %.1f MiB of payload in a %.1f MiB file\n",
			        (double)bytes / (1 << 20), (double)file_bytes / (1 << 20));
	}
	if (bench_wanted(argc, argv, "rec_write_MiB_per_s"))
		printf("rec_write_MiB_per_s %.0f MiB/s\n", bench_median(wr, RUNS));
	if (bench_wanted(argc, argv, "rec_read_MiB_per_s"))
		printf("rec_read_MiB_per_s %.0f MiB/s\n", bench_median(rd, RUNS));
	if (bench_wanted(argc, argv, "rec_replay_x_realtime"))
		printf("rec_replay_x_realtime %.0f x\n", TICKS / bench_median(read_s, RUNS));
	if (bench_wanted(argc, argv, "rec_seek_ms"))
		printf("rec_seek_ms %.3f ms\n", seek_ms(path));
	if (bench_wanted(argc, argv, "rec_seek_noindex_ms")) {
		write_hour(open_path, &p, false);
		printf("rec_seek_noindex_ms %.1f ms\n", seek_noindex_ms(open_path));
	}
	unlink(path);
	unlink(open_path);
	rmdir(dir);
	for (int i = 0; i < POOL; i++) {
		free(p.delta[i]);
		free(p.key[i]);
	}
	return 0;
}

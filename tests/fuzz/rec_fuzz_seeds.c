/* Writes seed inputs for rec_fuzz into DIR: small real recordings made by
 * the recording writer (closed, abandoned, cut mid-frame, with a damaged
 * frame, with an index that had to stop growing, META only), each twice:
 * mode byte 0 (read as is) and 1 (checksums resealed before reading).
 * Usage: rec_fuzz_seeds DIR */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rec.h"

#define T0 1700000000000000000ull

static int save(const char *dir, const char *name, uint8_t mode, const uint8_t *buf, size_t len)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s-%u", dir, name, mode);
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(&mode, 1, 1, f) != 1 || fwrite(buf, 1, len, f) != len || fclose(f) != 0) {
		perror(path);
		return 1;
	}
	return 0;
}

/* A recording of frames of every type, payloads compressible or not. */
static struct rec_io *record(unsigned frames, bool close, uint32_t index_max)
{
	struct rec_io *io;
	struct rec_writer *w;
	struct rec_writer_opts o = {
	    .job_id = 7, .start_ns = T0, .index_max = index_max, .index_every = 2};
	static const char meta[] = "{\"v\":1,\"job\":{\"id\":\"7\",\"ranks\":4},\"tick_ms\":1000}";
	if (rec_io_mem_new(&io) != IOP_OK ||
	    rec_writer_open(io, &o, meta, sizeof meta - 1, &w) != IOP_OK)
		exit(1);
	uint8_t payload[1200];
	uint64_t x = 88172645463325252u;
	for (unsigned i = 0; i < frames; i++) {
		static const enum rec_type cycle[] = {REC_NAMES,  REC_KEYFRAME, REC_DELTA,
		                                      REC_EVENTS, REC_DELTA,    REC_ALERT};
		size_t len = (i * 397) % sizeof payload;
		for (size_t k = 0; k < len; k++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			payload[k] = i % 2 ? (uint8_t)("delta "[k % 6] + k / 200) : (uint8_t)x;
		}
		if (rec_write(w, cycle[i % 6], T0 + (uint64_t)i * 500000000u, payload, len) !=
		    IOP_OK)
			exit(1);
	}
	if (close) {
		if (rec_close(w) != IOP_OK)
			exit(1);
	} else {
		rec_writer_abandon(w);
	}
	return io;
}

static int save_both(const char *dir, const char *name, const uint8_t *p, size_t len)
{
	return save(dir, name, 0, p, len) | save(dir, name, 1, p, len);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: rec_fuzz_seeds DIR\n");
		return 1;
	}
	const char *dir = argv[1];
	int bad = 0;
	const uint8_t *p;
	size_t len;
	struct {
		const char *name;
		unsigned frames;
		bool close;
		uint32_t index_max;
	} kinds[] = {{"closed", 12, true, 0},     {"open", 12, false, 0},
	             {"meta-only", 0, true, 0},   {"many", 40, true, 0},
	             {"index-full", 24, true, 5}, {"one", 1, false, 0}};
	for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
		struct rec_io *io = record(kinds[k].frames, kinds[k].close, kinds[k].index_max);
		rec_io_mem_data(io, &p, &len);
		bad |= save_both(dir, kinds[k].name, p, len);
		if (k == 0) {
			uint8_t *c = malloc(len);
			if (!c)
				return 1;
			memcpy(c, p, len);
			bad |= save_both(dir, "cut", c, len * 2 / 3);
			c[len / 2] ^= 0x20;
			bad |= save_both(dir, "flipped", c, len);
			free(c);
		}
		rec_io_close(io);
	}
	return bad;
}

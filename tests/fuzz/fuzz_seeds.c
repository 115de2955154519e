/* Writes seed inputs into DIR. For frame_fuzz: real frames of every workload
 * kind, without their MAC (the fuzz target appends one), and a few small
 * hand-made ones. With --hist, for hist_fuzz: encoded latency histograms.
 * Usage: fuzz_seeds [--hist] DIR */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "fuzz_key.h"
#include "hist.h"
#include "workload.h"

static int save(const char *dir, const char *name, const uint8_t *buf, size_t len)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(buf, 1, len, f) != len || fclose(f) != 0) {
		perror(path);
		return 1;
	}
	return 0;
}

static int hist_seeds(const char *dir)
{
	static uint8_t buf[16384];
	int bad = 0;
	uint64_t x = 88172645463325252u;
	for (int s = 0; s < 4; s++) {
		struct iop_hist h;
		iop_hist_init(&h);
		for (int i = 0; i < (s == 0 ? 0 : 10 << (3 * s)); i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			iop_hist_record(&h, (x % 1000000u) >> (x % (8 * s)));
		}
		struct iop_wcur c = iop_wcur_make(buf, sizeof buf);
		iop_hist_encode(&h, &c);
		char name[32];
		snprintf(name, sizeof name, "hist-%d", s);
		bad |= c.err != IOP_OK || save(dir, name, buf, (size_t)(c.p - buf));
		iop_hist_free(&h);
	}
	return bad;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--hist") == 0)
		return hist_seeds(argv[2]);
	if (argc != 2) {
		fprintf(stderr, "usage: fuzz_seeds [--hist] DIR\n");
		return 1;
	}
	static uint8_t buf[IOP_FRAME_MAX_LEN];
	static struct iop_wl w;
	int bad = 0;
	static const unsigned sizes[] = {1, 4, 32, 200};
	for (int kind = IOP_WL_IOR_WRITE; kind <= IOP_WL_MIXED; kind++) {
		if (!iop_wl_init(&w, kind, 1, 7, 1700000000000000000u))
			return 1;
		for (unsigned s = 0; s < 4; s++) {
			size_t len;
			unsigned n;
			if (iop_wl_frame(&w, buf, sizeof buf, sizes[s], &fuzz_key, &len, &n) !=
			    IOP_OK)
				return 1;
			char name[64];
			snprintf(name, sizeof name, "%s-%u", iop_wl_kind_name(kind), sizes[s]);
			bad |= save(argv[1], name, buf, len - IOP_MAC_BYTES);
		}
		iop_wl_free(&w);
	}
	/* an empty frame, and one with an in-flight report */
	struct iop_frame_hdr h = {.job_id = 1, .base_ns = 1000000, .flags = IOP_FRAME_FINAL};
	struct iop_frame_enc e;
	size_t len;
	iop_enc_begin(&e, buf, sizeof buf, &h, NULL);
	iop_enc_finish(&e, &fuzz_key, &len);
	bad |= save(argv[1], "empty", buf, len - IOP_MAC_BYTES);
	iop_enc_begin(&e, buf, sizeof buf, &h, NULL);
	struct iop_inflight fl = {.start_ns = 500,
	                          .bytes = 4096,
	                          .thread = 1,
	                          .file = 2,
	                          .layer = IOP_LAYER_MPIIO,
	                          .op = IOP_OP_WRITE_COLL};
	iop_enc_inflight(&e, &fl);
	iop_enc_finish(&e, &fuzz_key, &len);
	bad |= save(argv[1], "inflight", buf, len - IOP_MAC_BYTES);
	/* collective calls of one rank, numbered (wire version 2) */
	iop_enc_begin(&e, buf, sizeof buf, &h, NULL);
	for (uint32_t i = 1; i <= 3; i++) {
		struct iop_event ev = {.end_ns = 2000000 + i * 1000,
		                       .dur_ns = 900,
		                       .bytes = 4096,
		                       .offset = i * 4096,
		                       .coll_seq = i,
		                       .coll_size = 4,
		                       .layer = IOP_LAYER_MPIIO,
		                       .op = i == 3 ? IOP_OP_CLOSE : IOP_OP_WRITE_COLL,
		                       .flags = i == 3 ? IOP_EV_COLL
		                                       : IOP_EV_COLL | IOP_EV_BYTES | IOP_EV_OFFSET};
		iop_enc_event(&e, &ev);
	}
	iop_enc_finish(&e, &fuzz_key, &len);
	bad |= save(argv[1], "collective", buf, len - IOP_MAC_BYTES);
	/* run records (wire version 3): a short run (durations each sent), a
	 * long one (a histogram), one without offsets, between plain events */
	iop_enc_begin(&e, buf, sizeof buf, &h, NULL);
	iop_enc_coalesce(&e, 1000000000u);
	for (uint32_t i = 0; i < 120; i++) {
		uint32_t len_of = i < 10 ? 10 : i < 100 ? 90 : 20;
		struct iop_event ev = {.end_ns = 2000000 + i * 1000,
		                       .dur_ns = 300 + (i * 37) % 500,
		                       .bytes = 1024u * (1 + i / len_of),
		                       .offset = i * 1024,
		                       .file = 1 + (i >= 100),
		                       .layer = IOP_LAYER_POSIX,
		                       .op = IOP_OP_WRITE,
		                       .flags = i >= 100 ? IOP_EV_BYTES : IOP_EV_BYTES | IOP_EV_OFFSET};
		if (i == 55)
			ev.flags |= IOP_EV_ERROR, ev.err = 5;
		iop_enc_event(&e, &ev);
	}
	iop_enc_finish(&e, &fuzz_key, &len);
	bad |= save(argv[1], "runs", buf, len - IOP_MAC_BYTES);
	return bad;
}

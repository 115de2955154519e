/* Wire format benchmarks, one core:
 *
 *   encode_events_per_s   events encoded into frames (begin, events, MAC)
 *   decode_events_per_s   events decoded from frames (MAC check, names,
 *                         counters, events, all validated)
 *   wire_bytes_per_event  whole frames (header, stats, names, counters,
 *                         events, MAC) over events, for the mixed stream
 *                         and each of its parts
 *
 * The stream is tests/support/workload's MIXED stream: IOR-like sequential
 * writes (some through MPI-IO with nested POSIX calls), random small reads,
 * metadata bursts and STDIO logging. Frames hold up to 1024 events, a 10 ms
 * batch of a rank doing 100 k calls/s. Each figure is the median of 5 runs.
 *
 *   run_encode_ns_per_call  an IOR-like stream (sequential 1 KiB writes of
 *                           one thread, ~850 ns apart, the offset wrapping
 *                           every 4096 calls, as bench/pwrite_loop makes)
 *                           encoded with runs (1 s windows, as under
 *                           `iopulse run`) into frames of 4096 calls (the
 *                           sender's stage): ns a call, the sender's
 *                           encoding share of pipeline_cpu_ns_per_call
 *   run_decode_ns_per_call  those frames read as the leaf reads them (long
 *                           runs whole): ns a call
 * Usage: wire_bench [NAME...] (default: all). Prints "NAME VALUE UNIT". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "frame.h"
#include "workload.h"

#define N_EVENTS  (2u << 20)
#define PER_FRAME 1024
#define FRAME_CAP (64 * 1024)
#define RUNS      5

static const struct iop_key key = {{7, 7, 7, 7, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}};

struct frames {
	uint8_t *buf; /* frames back to back */
	size_t *off, *len;
	unsigned n;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return v[n / 2];
}

/* run_encode_ns_per_call and run_decode_ns_per_call, into ev's room
 * (N_EVENTS events). */
static void run_stream(struct iop_event *ev)
{
	enum { STAGE = 4096 };
	uint64_t t = 1700000000000000000u;
	for (uint32_t i = 0; i < N_EVENTS; i++)
		ev[i] = (struct iop_event){.end_ns = t += 850, .dur_ns = 600 + (i * 7919u) % 400,
		                           .offset = (uint64_t)(i & 4095) * 1024, .bytes = 1024,
		                           .file = 3, .site = 1, .thread = 1, .layer = IOP_LAYER_POSIX,
		                           .op = IOP_OP_WRITE, .flags = IOP_EV_OFFSET | IOP_EV_BYTES};
	static uint8_t buf[N_EVENTS / STAGE][FRAME_CAP];
	static size_t len[N_EVENTS / STAGE];
	static struct iop_event out[STAGE];
	static struct iop_run_whole runs[STAGE / (IOP_RUN_EXACT_MAX + 1) + 1];
	static uint32_t bk[(STAGE / (IOP_RUN_EXACT_MAX + 1) + 1) * 256];
	double enc[RUNS], dec[RUNS];
	for (int r = 0; r < RUNS; r++) {
		uint64_t t0 = iop_mono_ns();
		for (uint32_t f = 0; f < N_EVENTS / STAGE; f++) {
			struct iop_frame_hdr h = {.job_id = 1, .seq = f, .base_ns = ev[f * STAGE].end_ns,
			                          .rank = 3, .pid = 99};
			static struct iop_frame_enc e;
			if (iop_enc_begin(&e, buf[f], FRAME_CAP, &h, NULL) != IOP_OK)
				abort();
			iop_enc_coalesce(&e, 1000000000u);
			for (uint32_t i = 0; i < STAGE; i++)
				if (iop_enc_event(&e, &ev[f * STAGE + i]) != IOP_OK)
					abort();
			if (iop_enc_finish(&e, &key, &len[f]) != IOP_OK)
				abort();
		}
		uint64_t t1 = iop_mono_ns(), calls = 0;
		for (uint32_t f = 0; f < N_EVENTS / STAGE; f++) {
			struct iop_frame fr;
			struct iop_runs_out ro = {.run = runs, .cap = sizeof runs / sizeof *runs, .bk = bk,
			                          .bk_cap = sizeof bk / sizeof *bk};
			uint32_t slots;
			if (iop_frame_open(&fr, buf[f], len[f], &key) != IOP_OK ||
			    iop_frame_events_whole(&fr, out, fr.n_events, &ro, &slots) != IOP_OK ||
			    iop_frame_close(&fr) != IOP_OK)
				abort();
			calls += fr.n_events;
		}
		uint64_t t2 = iop_mono_ns();
		if (calls != N_EVENTS)
			abort();
		enc[r] = (double)(t1 - t0) / N_EVENTS;
		dec[r] = (double)(t2 - t1) / N_EVENTS;
	}
	printf("run_encode_ns_per_call %.2f ns (IOR-like 1 KiB stream, runs, frames of %d calls)\n",
	       median(enc, RUNS), STAGE);
	printf("run_decode_ns_per_call %.2f ns (the same frames, long runs whole)\n",
	       median(dec, RUNS));
}

static void encode_all(const struct iop_event *ev, struct frames *fr)
{
	size_t pos = 0;
	unsigned i = 0;
	fr->n = 0;
	while (i < N_EVENTS) {
		struct iop_frame_hdr h = {
		    .job_id = 1, .seq = fr->n, .base_ns = ev[i].end_ns, .rank = 3, .pid = 99};
		struct iop_frame_enc e;
		if (iop_enc_begin(&e, fr->buf + pos, FRAME_CAP, &h, NULL) != IOP_OK)
			abort();
		unsigned stop = i + PER_FRAME < N_EVENTS ? i + PER_FRAME : N_EVENTS;
		while (i < stop && iop_enc_event(&e, &ev[i]) == IOP_OK)
			i++;
		size_t len;
		if (iop_enc_finish(&e, &key, &len) != IOP_OK)
			abort();
		fr->off[fr->n] = pos;
		fr->len[fr->n++] = len;
		pos += len;
	}
}

static uint64_t decode_all(const struct frames *fr, struct iop_frame_out *out)
{
	uint64_t events = 0;
	for (unsigned f = 0; f < fr->n; f++) {
		if (iop_frame_decode(fr->buf + fr->off[f], fr->len[f], &key, out) != IOP_OK)
			abort();
		events += out->frame.n_events;
	}
	return events;
}

static bool wanted(int argc, char **argv, const char *name)
{
	if (argc < 2)
		return true;
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], name) == 0)
			return true;
	return false;
}

static double bytes_per_event(enum iop_wl_kind kind)
{
	struct iop_wl *w = malloc(sizeof *w);
	uint8_t *buf = malloc(FRAME_CAP);
	if (!w || !buf || !iop_wl_init(w, kind, 5, 42, 1700000000000000000u))
		abort();
	uint64_t bytes = 0, events = 0;
	for (int f = 0; f < 1000; f++) {
		size_t len;
		unsigned n;
		if (iop_wl_frame(w, buf, FRAME_CAP, PER_FRAME, &key, &len, &n) != IOP_OK)
			abort();
		bytes += len;
		events += n;
	}
	iop_wl_free(w);
	free(w);
	free(buf);
	return (double)bytes / (double)events;
}

int main(int argc, char **argv)
{
	struct iop_event *ev = malloc(N_EVENTS * sizeof *ev);
	struct iop_wl *w = malloc(sizeof *w);
	struct frames fr;
	unsigned max_frames = N_EVENTS / 64 + 1;
	fr.buf = malloc((size_t)N_EVENTS * 64 + (size_t)max_frames * IOP_FRAME_OVERHEAD);
	fr.off = malloc(max_frames * sizeof *fr.off);
	fr.len = malloc(max_frames * sizeof *fr.len);
	struct iop_frame_out out = {.events = malloc(8192 * sizeof(struct iop_event)),
	                            .events_cap = 8192};
	if (!ev || !w || !fr.buf || !fr.off || !fr.len || !out.events)
		abort();
	if (!iop_wl_init(w, IOP_WL_MIXED, 5, 42, 1700000000000000000u))
		abort();
	iop_wl_generate(w, ev, N_EVENTS);
	iop_auth_init();

	double enc[RUNS], dec[RUNS];
	for (int r = 0; r < RUNS; r++) {
		uint64_t t0 = iop_mono_ns();
		encode_all(ev, &fr);
		uint64_t t1 = iop_mono_ns();
		uint64_t n = decode_all(&fr, &out);
		uint64_t t2 = iop_mono_ns();
		if (n != N_EVENTS)
			abort();
		enc[r] = N_EVENTS / ((double)(t1 - t0) / 1e9);
		dec[r] = N_EVENTS / ((double)(t2 - t1) / 1e9);
	}
	if (wanted(argc, argv, "run_encode_ns_per_call") || wanted(argc, argv, "run_decode_ns_per_call"))
		run_stream(ev);
	if (wanted(argc, argv, "encode_events_per_s"))
		printf("encode_events_per_s %.0f events/s\n", median(enc, RUNS));
	if (wanted(argc, argv, "decode_events_per_s"))
		printf("decode_events_per_s %.0f events/s\n", median(dec, RUNS));
	if (wanted(argc, argv, "wire_bytes_per_event")) {
		printf("wire_bytes_per_event %.2f bytes\n", bytes_per_event(IOP_WL_MIXED));
		for (int k = IOP_WL_IOR_WRITE; k <= IOP_WL_METADATA; k++)
			printf("wire_bytes_per_event_%s %.2f bytes\n", iop_wl_kind_name(k),
			       bytes_per_event(k));
	}
	iop_wl_free(w);
	free(w);
	free(ev);
	free(fr.buf);
	free(fr.off);
	free(fr.len);
	free(out.events);
	return 0;
}

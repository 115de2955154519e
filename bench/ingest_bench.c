/* Leaf ingest benchmark, one core:
 *
 *   leaf_ingest_events_per_s   frames checked (MAC), decoded and aggregated
 *                              into ticks (rank, file, layer and site rows,
 *                              latency histograms, busy time, counters),
 *                              ticks closed and handed on, per second
 *
 * The input is 64 ranks of tests/support/workload's MIXED stream in frames
 * of up to 1024 events (a 10 ms batch of a busy rank), fed in time order as
 * a leaf would receive them. Median of 5 runs over the same frames, a fresh
 * leaf each run. The rate is per second of the thread's CPU time (one
 * core, whatever else the machine runs); the wall-clock rate is printed
 * beside it. INGEST_LEAF_FILES=N makes the leaf keep N files a tick
 * (default COLL_LEAF_MAX_FILES, 512; 2048 before).
 *
 *   leaf_ingest_instructions_per_event
 *                              the same ingest counted in instructions,
 *                              which a shared, noisy host does not move
 *                              (the rate above moves by a third from run to
 *                              run on an idle host here): one pass over the
 *                              same frames, with the file systems' rows,
 *                              under valgrind's callgrind, instrumented from
 *                              the first frame to the last tick handed on
 *                              (the frames are made outside it). User space
 *                              only; cache misses, which the rate pays, are
 *                              not in it.
 *
 * Usage: ingest_bench [NAME...]. Prints "NAME VALUE UNIT". */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <valgrind/callgrind.h>

#include "bench_util.h"
#include "clock.h"
#include "leaf.h"
#include "workload.h"

#define RANKS      64
#define PER_RANK   (32u << 10)
#define PER_FRAME  1024
#define FRAME_CAP  (64 * 1024)
#define RUNS       5
#define T0         (1700000000ull * 1000000000ull)

static const struct iop_key key = {{7, 7, 7, 7, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}};

struct frame {
	uint8_t *buf;
	size_t len;
	uint64_t at; /* arrival: the newest event's end */
};

static int by_arrival(const void *a, const void *b)
{
	const struct frame *x = a, *y = b;
	return (x->at > y->at) - (x->at < y->at);
}

static struct frame *make_frames(unsigned *n_frames, uint64_t *n_events)
{
	size_t cap = 1024;
	struct frame *f = malloc(cap * sizeof(*f));
	struct iop_wl *w = malloc(sizeof(*w));
	uint8_t *buf = malloc(FRAME_CAP);
	if (!f || !w || !buf)
		return NULL;
	*n_frames = 0;
	*n_events = 0;
	for (unsigned r = 0; r < RANKS; r++) {
		if (!iop_wl_init(w, IOP_WL_MIXED, r, 1000 + r, T0))
			return NULL;
		w->job_id = 1;
		uint64_t made = 0;
		while (true) {
			if (made >= PER_RANK)
				w->draining = true;
			size_t len;
			unsigned n;
			if (iop_wl_frame(w, buf, FRAME_CAP, PER_FRAME, &key, &len, &n) != IOP_OK)
				break;
			if (*n_frames == cap) {
				cap *= 2;
				f = realloc(f, cap * sizeof(*f));
				if (!f)
					return NULL;
			}
			f[*n_frames] = (struct frame){.buf = malloc(len), .len = len, .at = w->now_ns};
			memcpy(f[*n_frames].buf, buf, len);
			(*n_frames)++;
			made += n;
			*n_events += n;
		}
		iop_wl_free(w);
	}
	free(w);
	free(buf);
	qsort(f, *n_frames, sizeof(*f), by_arrival);
	return f;
}

static void sink(void *arg, struct coll_delta *d)
{
	*(uint64_t *)arg += d->tick.n;
}

/* A fresh leaf; false when it cannot be made. */
static bool new_leaf(const struct frame *f, bool no_fs, struct coll_leaf **leaf)
{
	struct coll_leaf_cfg cfg;
	coll_leaf_cfg_default(&cfg);
	cfg.job_id = 1;
	cfg.key = key;
	cfg.no_fs = no_fs;
	if (getenv("INGEST_LEAF_FILES"))
		cfg.max_files = (uint32_t)atoi(getenv("INGEST_LEAF_FILES"));
	return coll_leaf_new(&cfg, f[0].at, leaf) == IOP_OK;
}

/* The frames into the leaf, in order, its ticks closed as a leaf's loop
 * would, and the last ones at the end; false when a frame is rejected. */
static bool ingest(struct coll_leaf *leaf, const struct frame *f, unsigned n_frames,
                   uint64_t *rows)
{
	for (unsigned i = 0; i < n_frames; i++) {
		if (coll_leaf_frame(leaf, f[i].buf, f[i].len, f[i].at) != IOP_OK) {
			fprintf(stderr, "ingest_bench: frame %u rejected\n", i);
			return false;
		}
		if (i % 64 == 0)
			coll_leaf_advance(leaf, f[i].at, false, sink, rows);
	}
	coll_leaf_advance(leaf, f[n_frames - 1].at, true, sink, rows);
	return true;
}

/* Inside callgrind (started with --instr-atstart=no): one pass,
 * instrumented from the first frame to the last tick; prints the events. */
static int counted_pass(const struct frame *f, unsigned n_frames, uint64_t n_events)
{
	struct coll_leaf *leaf;
	uint64_t rows = 0;
	if (!new_leaf(f, false, &leaf))
		return 2;
	CALLGRIND_START_INSTRUMENTATION;
	bool ok = ingest(leaf, f, n_frames, &rows);
	CALLGRIND_STOP_INSTRUMENTATION;
	coll_leaf_free(leaf);
	printf("events %llu\n", (unsigned long long)n_events);
	return ok ? 0 : 2;
}

/* leaf_ingest_instructions_per_event: this program again under callgrind,
 * its instrumented pass's instructions (the "totals:" line of callgrind's
 * output file) over the events. */
static int count_instructions(uint64_t n_events)
{
	char out[] = "/tmp/ingest_cg.XXXXXX";
	int fd = mkstemp(out);
	if (fd < 0) {
		perror("ingest_bench: mkstemp");
		return 2;
	}
	close(fd);
	char outopt[64], self[4096];
	snprintf(outopt, sizeof outopt, "--callgrind-out-file=%s", out);
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0) {
		perror("ingest_bench: /proc/self/exe");
		return 2;
	}
	self[n] = 0;
	pid_t pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		if (null >= 0) {
			dup2(null, STDOUT_FILENO);
			dup2(null, STDERR_FILENO);
		}
		execlp("valgrind", "valgrind", "--tool=callgrind", "--instr-atstart=no", outopt,
		       self, "--counted-pass", (char *)NULL);
		_exit(127);
	}
	int status = 0;
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0) {
		fprintf(stderr, "ingest_bench: valgrind --tool=callgrind did not run the pass "
		        "(status %d; scripts/install-deps installs valgrind)\n", status);
		unlink(out);
		return 2;
	}
	FILE *in = fopen(out, "r");
	char line[512];
	unsigned long long ir = 0;
	bool found = false;
	while (in && fgets(line, sizeof line, in))
		if (sscanf(line, "totals: %llu", &ir) == 1)
			found = true;
	if (in)
		fclose(in);
	unlink(out);
	if (!found) {
		fprintf(stderr, "ingest_bench: no totals in callgrind's output\n");
		return 2;
	}
	printf("leaf_ingest_instructions_per_event %.1f instructions (%llu in %llu events; "
	       "callgrind, user space; the same frames as leaf_ingest_events_per_s, with the "
	       "file systems' rows)\n",
	       (double)ir / (double)n_events, ir, (unsigned long long)n_events);
	return 0;
}
int main(int argc, char **argv)
{
	bool counted = argc == 2 && strcmp(argv[1], "--counted-pass") == 0;
	bool want_rate = !counted && bench_wanted(argc, argv, "leaf_ingest_events_per_s");
	bool want_ir = !counted && bench_wanted(argc, argv, "leaf_ingest_instructions_per_event");
	unsigned n_frames;
	uint64_t n_events;
	struct frame *f = make_frames(&n_frames, &n_events);
	if (!f) {
		fprintf(stderr, "ingest_bench: out of memory\n");
		return 2;
	}
	if (counted)
		return counted_pass(f, n_frames, n_events);
	/* runs alternate with and without the file systems' rows (fsmap.h),
	 * side by side: what they cost the leaf */
	double rate[RUNS], wall[RUNS], rate_nofs[RUNS];
	uint64_t rows = 0;
	for (int run = 0; want_rate && run < 2 * RUNS; run++) {
		struct coll_leaf *leaf;
		if (!new_leaf(f, run % 2, &leaf))
			return 2;
		uint64_t t0 = iop_mono_ns(), c0 = bench_cpu_ns();
		if (!ingest(leaf, f, n_frames, &rows))
			return 2;
		uint64_t t1 = iop_mono_ns(), c1 = bench_cpu_ns();
		if (run % 2) {
			rate_nofs[run / 2] = n_events / ((c1 - c0) / 1e9);
		} else {
			rate[run / 2] = n_events / ((c1 - c0) / 1e9);
			wall[run / 2] = n_events / ((t1 - t0) / 1e9);
		}
		coll_leaf_free(leaf);
	}
	if (want_rate) {
		double with = bench_median(rate, RUNS), without = bench_median(rate_nofs, RUNS);
		printf("leaf_ingest_events_per_s %.0f events/s (target >= 10000000; per CPU second; "
		       "wall %.0f; %u ranks, %llu events, %u frames; without file systems' rows "
		       "%.0f, ratio %.3f)\n",
		       with, bench_median(wall, RUNS), RANKS, (unsigned long long)n_events, n_frames,
		       without, with / without);
		fflush(stdout);
	}
	int rc = want_ir ? count_instructions(n_events) : 0;
	for (unsigned i = 0; i < n_frames; i++)
		free(f[i].buf);
	free(f);
	return rc;
}

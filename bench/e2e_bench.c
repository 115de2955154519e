/* End-to-end latency to a viewer, in one process on the real clock: four
 * simulated ranks send a frame every 10 ms (a few writes each, ending
 * just before it) to a leaf; the leaf's deltas go to a root; the root
 * publishes each closed tick through the viewer server (ipc:// in a
 * temporary directory); a viewer applies it. For every event, the time
 * from its end to the viewer having applied the tick that holds it.
 *
 *   e2e_latency_p99_ticks   p99 of that latency, in tick lengths
 *   e2e_latency_p50_ticks   its median
 *
 * With the default grace periods (leaf 250 ms, root 400 ms) an event
 * waits for its tick to end and then for the root's grace: between 0.4
 * and 1.4 ticks of 1 s, plus the transport. Usage: e2e_bench [NAME...];
 * SECONDS (default 12) and TICK_MS (default 1000) in the environment. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"
#include "clock.h"
#include "frame.h"
#include "leaf.h"
#include "root.h"
#include "viewer.h"
#include "viewsrv.h"

#define RANKS      4
#define PER_FRAME  5
#define MAX_EVENTS 200000
#define MAX_TICKS  4096

struct bench {
	struct coll_leaf *leaf;
	struct coll_root *root;
	struct coll_viewsrv *srv;
	uint64_t tick_ns;
};

static void must(enum iop_err e, const char *what)
{
	if (e) {
		fprintf(stderr, "e2e_bench: %s: %s\n", what, iop_strerror(e));
		exit(1);
	}
}

static void to_root(void *arg, struct coll_delta *d)
{
	struct bench *b = arg;
	(void)coll_root_delta(b->root, d);
}

static void publish(void *arg, const struct coll_delta *d, const struct coll_state *s)
{
	struct bench *b = arg;
	coll_viewsrv_tick(b->srv, d, s);
}

static void send_frame(struct bench *b, const struct iop_key *key, uint32_t rank, uint64_t seq,
                       uint64_t now, uint64_t *ends, size_t *n_ends)
{
	uint8_t buf[4096];
	struct iop_frame_hdr h = {.job_id = 1, .seq = seq, .base_ns = now - 10000000,
	                          .node_id = 7, .rank = rank, .pid = 100 + rank};
	struct iop_stats st = {.events = (seq + 1) * PER_FRAME};
	struct iop_frame_enc e;
	must(iop_enc_begin(&e, buf, sizeof buf, &h, &st), "frame");
	for (unsigned i = 0; i < PER_FRAME; i++) {
		uint64_t end = now - (PER_FRAME - i) * 1000000; /* the last 5 ms */
		struct iop_event ev = {.end_ns = end, .dur_ns = 50000, .bytes = 4096,
		                       .layer = IOP_LAYER_POSIX, .op = IOP_OP_WRITE,
		                       .flags = IOP_EV_BYTES};
		must(iop_enc_event(&e, &ev), "event");
		if (*n_ends < MAX_EVENTS)
			ends[(*n_ends)++] = end;
	}
	size_t len;
	must(iop_enc_finish(&e, key, &len), "finish");
	must(coll_leaf_frame(b->leaf, buf, len, now), "leaf");
}

int main(int argc, char **argv)
{
	unsigned seconds = getenv("SECONDS") ? (unsigned)atoi(getenv("SECONDS")) : 12;
	uint64_t tick_ns = (getenv("TICK_MS") ? (uint64_t)atoi(getenv("TICK_MS")) : 1000) * 1000000;
	struct iop_key key;
	memset(key.b, 5, sizeof key.b);
	char dir[] = "/tmp/iop-e2e-XXXXXX", addr[128];
	if (!mkdtemp(dir))
		return 1;
	snprintf(addr, sizeof addr, "ipc://%s/root.ipc", dir);

	struct bench b = {.tick_ns = tick_ns};
	uint64_t start = iop_real_ns();
	struct coll_leaf_cfg lc;
	coll_leaf_cfg_default(&lc);
	lc.tick_ns = tick_ns;
	lc.job_id = 1;
	lc.key = key;
	struct coll_root_cfg rc;
	coll_root_cfg_default(&rc, tick_ns);
	must(coll_leaf_new(&lc, start, &b.leaf), "leaf");
	must(coll_root_new(&rc, start, &b.root), "root");
	const char *urls[] = {addr, NULL};
	must(coll_viewsrv_new(urls, 1, &key, &b.srv), "server");
	struct coll_viewer *v;
	must(coll_viewer_new(addr, 1, &key, NULL, iop_mono_ns(), &v), "viewer");

	uint64_t *ends = malloc(MAX_EVENTS * sizeof(*ends));
	uint64_t *applied_at = calloc(MAX_TICKS, sizeof(*applied_at));
	int64_t first_tick = (int64_t)(start / tick_ns), last_seen = INT64_MIN;
	size_t n_ends = 0;
	uint64_t seq = 0, next_frame = start;
	uint64_t stop_events = start + seconds * 1000000000ull;
	uint64_t stop = stop_events + 3 * tick_ns;
	for (uint64_t now = start; now < stop; now = iop_real_ns()) {
		if (now >= next_frame && now < stop_events) {
			for (uint32_t r = 0; r < RANKS; r++)
				send_frame(&b, &key, r, seq, now, ends, &n_ends);
			seq++;
			next_frame += 10000000;
		}
		coll_leaf_advance(b.leaf, now, false, to_root, &b);
		coll_root_advance(b.root, now, false, publish, &b);
		coll_viewsrv_pump(b.srv, coll_root_state(b.root), NULL);
		coll_viewer_pump(v, iop_mono_ns());
		const struct coll_state *s = coll_viewer_state(v);
		uint64_t at = iop_real_ns();
		if (s && s->ticks_applied && s->last_t != last_seen) {
			for (int64_t t = last_seen == INT64_MIN ? s->first_t : last_seen + 1; t <= s->last_t;
			     t++)
				if (t - first_tick >= 0 && t - first_tick < MAX_TICKS &&
				    !applied_at[t - first_tick])
					applied_at[t - first_tick] = at;
			last_seen = s->last_t;
		}
		usleep(1000);
	}
	double *lat = malloc((n_ends ? n_ends : 1) * sizeof(*lat));
	size_t n = 0;
	for (size_t i = 0; i < n_ends; i++) {
		int64_t t = (int64_t)(ends[i] / tick_ns) - first_tick;
		if (t >= 0 && t < MAX_TICKS && applied_at[t])
			lat[n++] = (double)(applied_at[t] - ends[i]) / (double)tick_ns;
	}
	qsort(lat, n, sizeof(*lat), bench_cmp_double);
	if (!n) {
		fprintf(stderr, "e2e_bench: no event reached the viewer\n");
		return 1;
	}
	if (bench_wanted(argc, argv, "e2e_latency_p99_ticks"))
		printf("e2e_latency_p99_ticks %.2f ticks\n", lat[(size_t)(0.99 * (double)(n - 1))]);
	if (bench_wanted(argc, argv, "e2e_latency_p50_ticks"))
		printf("e2e_latency_p50_ticks %.2f ticks\n", lat[(n - 1) / 2]);
	fprintf(stderr, "e2e_bench: %zu of %zu events reached the viewer\n", n, n_ends);
	coll_viewer_free(v);
	coll_viewsrv_free(b.srv);
	coll_root_free(b.root);
	coll_leaf_free(b.leaf);
	free(ends);
	free(applied_at);
	free(lat);
	char p[192];
	snprintf(p, sizeof p, "%s/root.ipc", dir);
	unlink(p);
	snprintf(p, sizeof p, "%s/root.ipc.pub", dir);
	unlink(p);
	rmdir(dir);
	return 0;
}

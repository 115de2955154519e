/* iop-wire-demo: the wire path end to end, before the shim and collector
 * exist. Four simulated ranks (child processes, one workload each) stream
 * authenticated frames over a real nanomsg PUSH/PULL ipc:// socket to this
 * process, which decodes them and keeps per-layer totals and latency
 * histograms. Three hostile senders push a frame of another job, a forged
 * frame and random garbage; all are rejected and counted.
 *
 * At the end the totals summed from the events must equal the ranks'
 * cumulative counters exactly (the design's "totals are never wrong"), and
 * exactly the hostile frames must have been rejected; --check makes any
 * difference the exit status (the ctest test wire_demo). */
#include <errno.h>
#include <nanomsg/nn.h>
#include <nanomsg/pipeline.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "frame.h"
#include "hist.h"
#include "workload.h"

#define RANKS     4
#define FRAMES    40 /* per rank, then a drain */
#define PER_FRAME 1000
#define FRAME_CAP (64 * 1024)

static struct iop_key job_key, other_key;

struct totals {
	uint64_t ops[IOP_LAYER__COUNT][IOP_CLASS__COUNT];
	uint64_t bytes[IOP_LAYER__COUNT][IOP_CLASS__COUNT];
	struct iop_hist lat[IOP_LAYER__COUNT];
};

/* Latest cumulative counter per (rank, file, layer, class). */
#define CSLOTS (RANKS * IOP_WL_MAX_NAMES * IOP_LAYER__COUNT * IOP_CLASS__COUNT)

/* Senders wait on this pipe before closing their socket, so that nothing
 * they queued is lost at close: the receiver closes it when it has all. */
static int done_pipe[2];

static void wait_for_receiver(void)
{
	char c;
	close(done_pipe[1]);
	while (read(done_pipe[0], &c, 1) < 0 && errno == EINTR)
		;
}

static int sender(const char *url, int rank)
{
	int s = nn_socket(AF_SP, NN_PUSH);
	if (s < 0 || nn_connect(s, url) < 0)
		return 1;
	static struct iop_wl w;
	static uint8_t buf[FRAME_CAP];
	if (!iop_wl_init(&w, (enum iop_wl_kind)(rank % 4), (uint32_t)rank, 11, iop_real_ns()))
		return 1;
	for (int f = 0;; f++) {
		if (f == FRAMES)
			w.draining = true;
		size_t len;
		unsigned n;
		enum iop_err err = iop_wl_frame(&w, buf, sizeof buf, PER_FRAME, &job_key, &len, &n);
		if (err == IOP_ERR_STATE)
			break; /* drained */
		if (err != IOP_OK || nn_send(s, buf, len, 0) != (int)len)
			return 1;
	}
	wait_for_receiver();
	nn_close(s);
	return 0;
}

/* A frame of another job, a forged one (changed after its MAC) and garbage. */
static int hostile(const char *url)
{
	int s = nn_socket(AF_SP, NN_PUSH);
	if (s < 0 || nn_connect(s, url) < 0)
		return 1;
	static struct iop_wl w;
	static uint8_t buf[FRAME_CAP];
	size_t len;
	unsigned n;
	iop_wl_init(&w, IOP_WL_MIXED, 99, 5, iop_real_ns());
	w.job_id = 0xf0f0f0f0u;
	iop_wl_frame(&w, buf, sizeof buf, 100, &other_key, &len, &n);
	nn_send(s, buf, len, 0);
	w.job_id = 0x10b5eed5u; /* claims to be of this job, but was changed */
	iop_wl_frame(&w, buf, sizeof buf, 100, &job_key, &len, &n);
	buf[len / 2] ^= 0x10;
	nn_send(s, buf, len, 0);
	for (size_t i = 0; i < 500; i++)
		buf[i] = (uint8_t)(i * 7919);
	nn_send(s, buf, 500, 0);
	wait_for_receiver();
	nn_close(s);
	return 0;
}

static void take_frame(const uint8_t *msg, size_t len, struct iop_frame_out *out, struct totals *t,
                       struct iop_counter *latest, unsigned *finals)
{
	const struct iop_frame *f = &out->frame;
	for (unsigned i = 0; i < f->n_events; i++) {
		const struct iop_event *ev = &out->events[i];
		enum iop_class c = iop_op_class(ev->op);
		t->ops[ev->layer][c]++;
		t->bytes[ev->layer][c] += ev->bytes;
		iop_hist_record(&t->lat[ev->layer], ev->dur_ns);
	}
	for (unsigned i = 0; i < f->n_counters; i++) {
		const struct iop_counter *k = &out->counters[i];
		size_t slot =
		    (((size_t)f->hdr.rank * IOP_WL_MAX_NAMES + k->file) * IOP_LAYER__COUNT +
		     k->layer) *
		        IOP_CLASS__COUNT +
		    k->cls;
		if (f->hdr.rank < RANKS && k->file < IOP_WL_MAX_NAMES)
			latest[slot] = *k; /* cumulative: the newest replaces */
	}
	*finals += (f->hdr.flags & IOP_FRAME_FINAL) != 0;
}

static void fmt_bytes(char *out, size_t n, uint64_t b)
{
	const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	double v = (double)b;
	int i = 0;
	while (v >= 1024 && i < 4) {
		v /= 1024;
		i++;
	}
	snprintf(out, n, "%.1f %s", v, u[i]);
}

static void fmt_ns(char *out, size_t n, uint64_t ns)
{
	if (ns < 1000)
		snprintf(out, n, "%lu ns", (unsigned long)ns);
	else if (ns < 1000000)
		snprintf(out, n, "%.1f us", ns / 1e3);
	else
		snprintf(out, n, "%.2f ms", ns / 1e6);
}

static int report(struct totals *t, const struct iop_counter *latest, unsigned frames,
                  const unsigned *rejected, unsigned finals)
{
	printf("\n%-7s %10s %12s %10s %12s %10s %10s %10s\n", "LAYER", "READ OPS", "READ",
	       "WRITE OPS", "WRITTEN", "META OPS", "p50", "p99");
	for (int l = 0; l < IOP_LAYER__COUNT; l++) {
		char rd[32], wr[32], p50[32], p99[32];
		fmt_bytes(rd, sizeof rd, t->bytes[l][IOP_CLASS_READ]);
		fmt_bytes(wr, sizeof wr, t->bytes[l][IOP_CLASS_WRITE]);
		fmt_ns(p50, sizeof p50, iop_hist_quantile(&t->lat[l], 0.5));
		fmt_ns(p99, sizeof p99, iop_hist_quantile(&t->lat[l], 0.99));
		printf("%-7s %10lu %12s %10lu %12s %10lu %10s %10s\n", iop_layer_label(l),
		       (unsigned long)t->ops[l][IOP_CLASS_READ], rd,
		       (unsigned long)t->ops[l][IOP_CLASS_WRITE], wr,
		       (unsigned long)t->ops[l][IOP_CLASS_META], p50, p99);
	}
	uint64_t c_ops[IOP_LAYER__COUNT][IOP_CLASS__COUNT] = {{0}};
	uint64_t c_bytes[IOP_LAYER__COUNT][IOP_CLASS__COUNT] = {{0}};
	for (size_t i = 0; i < CSLOTS; i++) {
		c_ops[latest[i].layer][latest[i].cls] += latest[i].ops;
		c_bytes[latest[i].layer][latest[i].cls] += latest[i].bytes;
	}
	int bad = 0;
	for (int l = 0; l < IOP_LAYER__COUNT; l++)
		for (int c = 0; c < IOP_CLASS__COUNT; c++)
			bad |= c_ops[l][c] != t->ops[l][c] || c_bytes[l][c] != t->bytes[l][c];
	printf("\nframes accepted: %u (final frames: %u of %d ranks)\n", frames, finals, RANKS);
	printf("frames rejected: %u (BAD_MAC %u, BAD_MAGIC %u, other %u)\n",
	       rejected[IOP_ERR__COUNT], rejected[IOP_ERR_BAD_MAC], rejected[IOP_ERR_BAD_MAGIC],
	       rejected[IOP_ERR__COUNT] - rejected[IOP_ERR_BAD_MAC] - rejected[IOP_ERR_BAD_MAGIC]);
	printf("totals from events %s the ranks' cumulative counters\n",
	       bad ? "DIFFER FROM" : "equal");
	/* another job's frame and the forged one fail the MAC; garbage has no magic */
	bad |= rejected[IOP_ERR_BAD_MAC] != 2 || rejected[IOP_ERR_BAD_MAGIC] != 1 ||
	       rejected[IOP_ERR__COUNT] != 3 || finals != RANKS;
	return bad;
}

int main(int argc, char **argv)
{
	int check = argc > 1 && strcmp(argv[1], "--check") == 0;
	char url[128];
	snprintf(url, sizeof url, "ipc:///tmp/iopulse-wire-demo-%d.ipc", (int)getpid());
	if (iop_key_generate(&job_key) != IOP_OK || iop_key_generate(&other_key) != IOP_OK)
		return 2;
	/* Fork before any nanomsg call: its worker threads do not survive fork. */
	if (pipe(done_pipe) != 0)
		return 2;
	pid_t kids[RANKS + 1];
	for (int r = 0; r <= RANKS; r++) {
		kids[r] = fork();
		if (kids[r] == 0)
			_exit(r < RANKS ? sender(url, r) : hostile(url));
	}
	close(done_pipe[0]);

	int s = nn_socket(AF_SP, NN_PULL);
	int rcvtimeo = 10000;
	if (s < 0 || nn_bind(s, url) < 0 ||
	    nn_setsockopt(s, NN_SOL_SOCKET, NN_RCVTIMEO, &rcvtimeo, sizeof rcvtimeo) < 0) {
		fprintf(stderr, "iop-wire-demo: cannot bind %s: %s\n", url,
		        nn_strerror(nn_errno()));
		for (int r = 0; r <= RANKS; r++)
			kill(kids[r], SIGTERM);
		return 2;
	}
	printf("iop-wire-demo: %d ranks stream frames to %s\n", RANKS, url);

	struct totals t = {0};
	for (int l = 0; l < IOP_LAYER__COUNT; l++)
		iop_hist_init(&t.lat[l]);
	struct iop_counter *latest = calloc(CSLOTS, sizeof *latest);
	struct iop_frame_out out = {.events = calloc(8192, sizeof(struct iop_event)),
	                            .events_cap = 8192,
	                            .names = calloc(8192, sizeof(struct iop_name)),
	                            .names_cap = 8192,
	                            .counters = calloc(8192, sizeof(struct iop_counter)),
	                            .counters_cap = 8192,
	                            .inflight = calloc(16, sizeof(struct iop_inflight)),
	                            .inflight_cap = 16};
	unsigned rejected[IOP_ERR__COUNT + 1] = {0}, frames = 0, finals = 0;
	while (finals < RANKS || rejected[IOP_ERR__COUNT] < 3) {
		void *msg = NULL;
		int n = nn_recv(s, &msg, NN_MSG, 0);
		if (n < 0) {
			fprintf(stderr, "iop-wire-demo: receive: %s\n", nn_strerror(nn_errno()));
			break;
		}
		enum iop_err err = iop_frame_decode(msg, (size_t)n, &job_key, &out);
		if (err == IOP_OK) {
			take_frame(msg, (size_t)n, &out, &t, latest, &finals);
			frames++;
		} else {
			rejected[err]++;
			rejected[IOP_ERR__COUNT]++;
			struct iop_frame_hdr h;
			if (iop_frame_peek(msg, (size_t)n, &h) == IOP_OK)
				printf("rejected a frame from job %016lx rank %u: %s\n",
				       (unsigned long)h.job_id, h.rank, iop_strerror(err));
			else
				printf("rejected %d bytes: %s\n", n, iop_strerror(err));
		}
		nn_freemsg(msg);
	}
	close(done_pipe[1]); /* senders may close now */
	int status = 0;
	for (int r = 0; r <= RANKS; r++) {
		int ws;
		waitpid(kids[r], &ws, 0);
		status |= !WIFEXITED(ws) || WEXITSTATUS(ws) != 0;
	}
	int bad = report(&t, latest, frames, rejected, finals) || status;
	nn_close(s);
	for (int l = 0; l < IOP_LAYER__COUNT; l++)
		iop_hist_free(&t.lat[l]);
	free(latest);
	free(out.events);
	free(out.names);
	free(out.counters);
	free(out.inflight);
	if (bad)
		fprintf(stderr, "iop-wire-demo: FAILED\n");
	return check && bad ? 1 : 0;
}

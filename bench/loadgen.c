/* iop-loadgen: many simulated ranks speaking the real wire protocol, for
 * collector benchmarks and tests (docs/testing-tools.md).
 *
 *   iop-loadgen --url URL [--url URL...] --key HEX32 [--ranks N] [--rank-base B]
 *               [--events-per-s E] [--duration-s D] [--max-events N] [--batch-ms M]
 *               [--workload ior|random|meta|mixed] [--threads T] [--nodes K]
 *               [--slow-rank R --slow-factor F] [--send-timeout-ms MS] [--job HEX]
 *               [--linger-ms MS] [--seed S] [--coll-per-s C [--coll-group G]]
 *
 * Each generator thread owns every T-th rank and one nanomsg PUSH socket per
 * URL (rank i goes to URL i mod the number of URLs). Every --batch-ms, on
 * an absolute schedule, it moves each rank's due events (E per second, each
 * stamped with its due time on the real clock) into frames and sends them:
 * the pacing is the shim's, a frame per rank per interval when it has
 * something new. When a thread cannot keep up by more than a batch, it
 * skips the schedule forward: the report's achieved rate then shows what it
 * sustained. At the end each rank's last frame carries every name and
 * counter and the FINAL flag, and one JSON object on stdout says what went
 * out (loadgen_report.c). With --coll-per-s, each rank also makes C
 * collective calls a second (MPI-IO write_at_all, numbered, IOP_EV_COLL)
 * on the shared file of its communicator of G consecutive ranks (default:
 * all): every rank leaves each at the same moment, the last rank of each
 * communicator (or the slow rank) arriving last (loadgen_rank.c); they
 * count as events (--max-events, the rates) and the report counts them
 * apart too ("collectives", "collectives_skipped"). Exit
 * status: 0, 1 on a failure, 2 on bad usage. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <nanomsg/nn.h>
#include <nanomsg/pipeline.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "loadgen.h"

#define START_DELAY_NS 100000000u

struct gen_thread {
	const struct lg_opts *o;
	struct lg_rank *ranks; /* all of them; this thread takes index, index + T, ... */
	uint32_t index;
	uint64_t mono0, real0; /* the run's start on both clocks */
	int socks[LG_MAX_URLS];
	uint8_t buf[LG_FRAME_CAP];
	enum iop_err err;
	pthread_t tid;
};

static atomic_int stop_signal;

static void sleep_until_mono(uint64_t t_ns)
{
	struct timespec ts = {(time_t)(t_ns / 1000000000u), (long)(t_ns % 1000000000u)};
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* Time since the schedule's start (0 before it). */
static uint64_t run_ns(const struct gen_thread *t)
{
	uint64_t now = iop_mono_ns();
	return now > t->mono0 ? now - t->mono0 : 0;
}

static void sleep_ms(unsigned ms)
{
	sleep_until_mono(iop_mono_ns() + (uint64_t)ms * 1000000u);
}

static bool set_sndtimeo(int sock, int ms)
{
	return nn_setsockopt(sock, NN_SOL_SOCKET, NN_SNDTIMEO, &ms, sizeof ms) == 0;
}

static enum iop_err open_sockets(struct gen_thread *t)
{
	for (unsigned u = 0; u < t->o->n_urls; u++) {
		int s = nn_socket(AF_SP, NN_PUSH), sndbuf = 4 << 20; /* the shim's */
		t->socks[u] = s;
		if (s < 0 ||
		    nn_setsockopt(s, NN_SOL_SOCKET, NN_SNDBUF, &sndbuf, sizeof sndbuf) < 0 ||
		    (t->o->send_timeout_ms > 0 && !set_sndtimeo(s, t->o->send_timeout_ms)) ||
		    nn_connect(s, t->o->urls[u]) < 0) {
			fprintf(stderr, "iop-loadgen: cannot connect to %s: %s\n", t->o->urls[u],
			        nn_strerror(nn_errno()));
			return IOP_ERR_IO;
		}
	}
	return IOP_OK;
}

/* Sends what r has pending; stops at the first refused frame, as the shim
 * does (the next interval tries again with everything resent). */
static enum iop_err send_pending(struct gen_thread *t, struct lg_rank *r, bool final, int flags)
{
	uint64_t real_now = t->real0 + run_ns(t);
	while (final ? !r->final_sent : lg_rank_pending(r)) {
		struct lg_built b;
		enum iop_err err = lg_rank_build(r, t->o, t->buf, final, real_now, t->real0, &b);
		if (err != IOP_OK)
			return err;
		if (nn_send(t->socks[r->url], t->buf, b.len, flags) != (int)b.len) {
			lg_rank_refused(r, &b);
			return IOP_OK;
		}
		lg_rank_commit(r, &b);
	}
	return IOP_OK;
}

/* One batch: every owned rank's due events out. True when all are done. */
static bool batch(struct gen_thread *t, uint64_t now_ns)
{
	int flags = t->o->send_timeout_ms > 0 ? 0 : NN_DONTWAIT;
	bool all_done = true;
	for (uint32_t i = t->index; i < t->o->ranks && t->err == IOP_OK; i += t->o->threads) {
		struct lg_rank *r = &t->ranks[i];
		t->err = lg_rank_generate(r, t->o, now_ns, t->real0);
		if (t->err == IOP_OK)
			t->err = send_pending(t, r, false, flags);
		all_done &= r->done;
	}
	return all_done;
}

/* The last frames: blocking, at least LG_FINAL_SNDTIMEO, like the shim's. */
static void finish(struct gen_thread *t)
{
	int ms =
	    t->o->send_timeout_ms > LG_FINAL_SNDTIMEO ? t->o->send_timeout_ms : LG_FINAL_SNDTIMEO;
	for (unsigned u = 0; u < t->o->n_urls; u++)
		set_sndtimeo(t->socks[u], ms);
	for (uint32_t i = t->index; i < t->o->ranks && t->err == IOP_OK; i += t->o->threads) {
		struct lg_rank *r = &t->ranks[i];
		r->stopping = true;
		t->err = lg_rank_generate(r, t->o, run_ns(t), t->real0);
		lg_rank_resync(r);
		if (t->err == IOP_OK) /* one try: a refusal after a second means nobody listens */
			t->err = send_pending(t, r, true, 0);
		if (!r->final_sent) { /* what never went out is dropped too */
			r->dropped += r->n_stage;
			r->n_stage = 0;
		}
	}
}

static void *thread_main(void *arg)
{
	struct gen_thread *t = arg;
	uint64_t batch_ns = t->o->batch_ms * 1000000u;
	t->err = open_sockets(t);
	for (uint64_t k = 0; t->err == IOP_OK && !atomic_load(&stop_signal); k++) {
		sleep_until_mono(t->mono0 + k * batch_ns);
		if (batch(t, run_ns(t)))
			break;
	}
	if (t->err == IOP_OK)
		finish(t);
	/* nanomsg has no linger: give its worker time to write the last frames */
	sleep_ms(t->o->linger_ms);
	for (unsigned u = 0; u < t->o->n_urls; u++)
		if (t->socks[u] >= 0)
			nn_close(t->socks[u]);
	return NULL;
}

/* ---------------------------------------------------------------- options */

static void usage(FILE *to)
{
	fprintf(
	    to,
	    "usage: iop-loadgen --url URL [--url URL...] --key HEX32 [--ranks N] [--rank-base B]\n"
	    "         [--events-per-s E] [--duration-s D] [--max-events N] [--batch-ms M]\n"
	    "         [--workload ior|random|meta|mixed] [--threads T] [--nodes K]\n"
	    "         [--slow-rank R --slow-factor F] [--send-timeout-ms MS] [--job HEX]\n"
	    "         [--linger-ms MS] [--seed S] [--coll-per-s C [--coll-group G]]\n"
	    "  --url, --key and --job default to IOPULSE_ADDR, IOPULSE_KEY and IOPULSE_JOB.\n"
	    "  Prints one JSON object: what was sent, per rank and in total.\n");
}

static bool parse_num(const char *s, double min, double max, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= min && v <= max))
		return false;
	*out = v;
	return true;
}

static bool parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out)
{
	double v;
	if (!parse_num(s, min, max, &v) || v != floor(v))
		return false;
	*out = (uint32_t)v;
	return true;
}

static bool parse_hex64(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 16);
	if (errno || end == s || *end || strlen(s) > 16 || s[0] == '-')
		return false;
	*out = v;
	return true;
}

static bool parse_workload(const char *s, enum iop_wl_kind *k)
{
	static const char *const names[] = {"ior", "random", "meta", "mixed"};
	static const enum iop_wl_kind kinds[] = {IOP_WL_IOR_WRITE, IOP_WL_RANDOM_READ,
	                                         IOP_WL_METADATA, IOP_WL_MIXED};
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		if (strcmp(s, names[i]) == 0) {
			*k = kinds[i];
			return true;
		}
	return false;
}

static bool parse_opt(int c, const char *arg, struct lg_opts *o, bool *have_key)
{
	double d;
	uint32_t u;
	switch (c) {
	case 'u':
		if (o->n_urls == LG_MAX_URLS)
			return false;
		o->urls[o->n_urls++] = arg;
		return true;
	case 'k':
		return (*have_key = iop_key_from_hex(arg, &o->key) == IOP_OK);
	case 'j':
		return parse_hex64(arg, &o->job_id);
	case 'n':
		return parse_u32(arg, 1, 1u << 20, &o->ranks);
	case 'b':
		return parse_u32(arg, 0, UINT32_MAX - (1u << 20), &o->rank_base);
	case 'e':
		return parse_num(arg, 1e-3, 1e9, &o->events_per_s);
	case 'd':
		return parse_num(arg, 0, 86400 * 365, &o->duration_s);
	case 'x':
		if (!parse_num(arg, 0, 1e15, &d) || d != floor(d))
			return false;
		o->max_events = (uint64_t)d;
		return true;
	case 'm':
		return parse_u32(arg, 1, 10000, &u) && ((o->batch_ms = u), true);
	case 'w':
		return parse_workload(arg, &o->workload);
	case 't':
		return parse_u32(arg, 1, 256, &o->threads);
	case 'N':
		return parse_u32(arg, 1, 1u << 20, &o->nodes);
	case 'r':
		return parse_u32(arg, 0, UINT32_MAX, &u) && ((o->slow_rank = u), true);
	case 'f':
		return parse_num(arg, 1e-3, 1e6, &o->slow_factor);
	case 's':
		return parse_u32(arg, 0, 3600000, &u) && ((o->send_timeout_ms = (int)u), true);
	case 'l':
		return parse_u32(arg, 0, 60000, &u) && ((o->linger_ms = u), true);
	case 'S':
		return parse_num(arg, 0, 1e15, &d) && ((o->seed = (uint64_t)d), true);
	case 'C':
		return parse_num(arg, 0, 1e6, &o->coll_per_s);
	case 'G':
		return parse_u32(arg, 1, UINT32_MAX, &o->coll_group);
	}
	return false;
}

static bool parse_opts(int argc, char **argv, struct lg_opts *o)
{
	static const struct option longopts[] = {{"url", required_argument, NULL, 'u'},
	                                         {"key", required_argument, NULL, 'k'},
	                                         {"job", required_argument, NULL, 'j'},
	                                         {"ranks", required_argument, NULL, 'n'},
	                                         {"rank-base", required_argument, NULL, 'b'},
	                                         {"events-per-s", required_argument, NULL, 'e'},
	                                         {"duration-s", required_argument, NULL, 'd'},
	                                         {"max-events", required_argument, NULL, 'x'},
	                                         {"batch-ms", required_argument, NULL, 'm'},
	                                         {"workload", required_argument, NULL, 'w'},
	                                         {"threads", required_argument, NULL, 't'},
	                                         {"nodes", required_argument, NULL, 'N'},
	                                         {"slow-rank", required_argument, NULL, 'r'},
	                                         {"slow-factor", required_argument, NULL, 'f'},
	                                         {"send-timeout-ms", required_argument, NULL, 's'},
	                                         {"linger-ms", required_argument, NULL, 'l'},
	                                         {"seed", required_argument, NULL, 'S'},
	                                         {"coll-per-s", required_argument, NULL, 'C'},
	                                         {"coll-group", required_argument, NULL, 'G'},
	                                         {"help", no_argument, NULL, 'h'},
	                                         {NULL, 0, NULL, 0}};
	*o = (struct lg_opts){.ranks = 4,
	                      .nodes = 1,
	                      .threads = 1,
	                      .events_per_s = 1000,
	                      .duration_s = -1,
	                      .batch_ms = 10,
	                      .slow_rank = -1,
	                      .slow_factor = 4,
	                      .linger_ms = 200,
	                      .workload = IOP_WL_MIXED,
	                      .seed = 1};
	bool have_key = false;
	const char *v;
	if ((v = getenv("IOPULSE_KEY")) && *v)
		have_key = iop_key_from_hex(v, &o->key) == IOP_OK;
	if ((v = getenv("IOPULSE_JOB")) && *v && !parse_hex64(v, &o->job_id))
		fprintf(stderr, "iop-loadgen: IOPULSE_JOB='%s' is not hex: job 0\n", v);
	int c;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			exit(0);
		}
		if (c == '?' || !parse_opt(c, optarg, o, &have_key)) {
			if (c != '?')
				fprintf(stderr, "iop-loadgen: bad value '%s'\n", optarg);
			return false;
		}
	}
	if (!o->n_urls && (v = getenv("IOPULSE_ADDR")) && *v)
		o->urls[o->n_urls++] = v;
	if (o->duration_s < 0) /* default: 10 s, or no limit with --max-events */
		o->duration_s = o->max_events ? 0 : 10;
	if (o->threads > o->ranks)
		o->threads = o->ranks;
	if (o->nodes > o->ranks)
		o->nodes = o->ranks;
	if (!o->n_urls || !have_key || optind != argc) {
		fprintf(stderr, "iop-loadgen: %s\n",
		        !o->n_urls  ? "no --url (or IOPULSE_ADDR)"
		        : !have_key ? "no --key (or IOPULSE_KEY): 32 hex digits"
		                    : "unexpected arguments");
		return false;
	}
	return true;
}

/* ------------------------------------------------------------------- main */

static void on_signal(int sig)
{
	atomic_store(&stop_signal, sig);
}

static uint64_t run_threads(struct lg_run *run, struct gen_thread *th, const struct lg_opts *o)
{
	/* the schedule starts once every thread has had time to connect */
	uint64_t mono0 = iop_mono_ns() + START_DELAY_NS, real0 = iop_real_ns() + START_DELAY_NS;
	uint32_t started = 0;
	for (uint32_t i = 0; i < o->threads; i++) {
		th[i] = (struct gen_thread){
		    .o = o, .ranks = run->ranks, .index = i, .mono0 = mono0, .real0 = real0};
		for (unsigned u = 0; u < LG_MAX_URLS; u++)
			th[i].socks[u] = -1;
		if (pthread_create(&th[i].tid, NULL, thread_main, &th[i]) != 0) {
			th[i].err = IOP_ERR_NOMEM;
			break;
		}
		started++;
	}
	for (uint32_t i = 0; i < started; i++)
		pthread_join(th[i].tid, NULL);
	return mono0;
}

int main(int argc, char **argv)
{
	static struct lg_opts o;
	if (!parse_opts(argc, argv, &o)) {
		usage(stderr);
		return 2;
	}
	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	struct lg_run run = {.opt = &o, .ranks = calloc(o.ranks, sizeof *run.ranks)};
	struct gen_thread *th = calloc(o.threads, sizeof *th);
	bool ok = run.ranks && th;
	for (uint32_t i = 0; ok && i < o.ranks; i++)
		ok = lg_rank_init(&run.ranks[i], &o, i);
	if (!ok) {
		fprintf(stderr, "iop-loadgen: out of memory for %u ranks\n", o.ranks);
		return 1;
	}
	uint64_t mono0 = run_threads(&run, th, &o);
	run.wall_s = (double)(iop_mono_ns() - mono0) / 1e9; /* from the schedule's start */
	run.interrupted = atomic_load(&stop_signal) != 0;
	for (uint32_t i = 0; i < o.threads; i++)
		if (th[i].err != IOP_OK) {
			fprintf(stderr, "iop-loadgen: thread %u: %s\n", i, iop_strerror(th[i].err));
			ok = false;
		}
	ok = lg_report(&run) && ok;
	for (uint32_t i = 0; i < o.ranks; i++)
		lg_rank_free(&run.ranks[i]);
	free(run.ranks);
	free(th);
	return ok ? 0 : 1;
}

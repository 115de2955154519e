/* Root cost for a big job: 4096 simulated ranks behind 64 leaves, 1000
 * events/s and 10 collective calls a second each, sending tick deltas over
 * real nanomsg (tcp on loopback) to a real root process (`iopulse collector
 * --role root`).
 *
 *   root_cpu_frac_4096   the root's CPU time (user + system, /proc/PID/stat)
 *                        over the measured wall time: cores it used
 *   root_rss_mib_4096    its peak resident set (VmHWM) at the end; the
 *                        history's budget (128 MiB, docs/collector.md) is
 *                        reached in ~15 ticks, so the growth a tick over
 *                        the last 5 ticks is printed too (0 once it is)
 *
 * The root's work depends on the deltas it gets (rows, histograms, names,
 * counters, processes), not on how they were made, and generating 4 M
 * events/s in real time would take more than the machine. So the leaves'
 * deltas are made first, for real, in simulated time: per leaf, 64
 * iop-loadgen ranks (bench/loadgen_rank.c, the MIXED workload paced at
 * 1000 events/s) send frames to a real leaf (coll_leaf) for PREP_TICKS
 * ticks. Then, on the real clock, each leaf sends one delta per second
 * through a real uplink (coll_uplink): the first tick's delta (every name,
 * every process joining) once, then its later ticks in turn, restamped
 * with the tick that just ended and with their counters grown (absolute
 * counters must grow to count), as a leaf's steady state. The root runs
 * without --record (recording: recording_kib_per_rank_hour, seek_bench).
 *
 * The first WARMUP_S seconds (names, joins) are not measured; then
 * SECONDS (environment, default 20) are. ROOT_BENCH_TRACE=1 prints the
 * root's resident set each second; ROOT_BENCH_HISTORY_MIB=N starts the root
 * with --history-mib N; ROOT_BENCH_LEAF_FILES=N makes the leaves keep N
 * files a tick (default COLL_LEAF_MAX_FILES, 512; 2048 before).
 *
 * Collective calls: each rank also makes ROOT_BENCH_COLL_PER_S (default
 * 10; 0: none, the mix before them) MPI-IO write_at_all calls a second,
 * numbered (IOP_EV_COLL), on the shared file of its communicator of
 * ROOT_BENCH_COLL_GROUP consecutive ranks (default 0: all 4096), every
 * communicator's last rank arriving last (bench/loadgen_rank.c). Their
 * instances go up in the leaves' deltas, and the root matches them as
 * each tick closes. Usage: root_bench [NAME...]. */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "clock.h"
#include "leaf.h"
#include "leaf_rounds.h"
#include "link.h"
#include "loadgen.h"

#define LEAVES        64
#define RANKS_PER     64
#define PREP_TICKS    4 /* ticks made per leaf: the first, then 3 in turn */
#define TICK_NS       1000000000ull
#define WARMUP_S      4
#define CPU_TARGET    0.25
#define RSS_TARGET    256.0

static const struct iop_key key = {{9, 8, 7, 6, 5, 4, 3, 2, 1, 2, 3, 4, 5, 6, 7, 8}};
static const uint64_t job_id = 0x5eed4096;
static double coll_per_s = 10;
static uint32_t coll_group;


static void die(const char *what, enum iop_err e)
{
	fprintf(stderr, "root_bench: %s: %s\n", what, e ? iop_strerror(e) : strerror(errno));
	exit(1);
}

/* One leaf's deltas, made in simulated time from tick-aligned t0. */
static void make_leaf(unsigned leaf, uint64_t t0, struct lg_leaf_made *m, uint64_t *events)
{
	static struct lg_rank ranks[RANKS_PER];
	static uint8_t buf[LG_FRAME_CAP];
	struct lg_opts o = {.ranks = LEAVES * RANKS_PER, .nodes = LEAVES, .threads = 1,
	                    .events_per_s = 1000, .duration_s = -1, .batch_ms = 100,
	                    .slow_rank = -1, .slow_factor = 1, .workload = IOP_WL_MIXED,
	                    .seed = 1, .job_id = job_id, .key = key, .n_urls = 1,
	                    .coll_per_s = coll_per_s, .coll_group = coll_group};
	struct coll_leaf_cfg cfg;
	coll_leaf_cfg_default(&cfg);
	if (getenv("ROOT_BENCH_LEAF_FILES"))
		cfg.max_files = (uint32_t)atoi(getenv("ROOT_BENCH_LEAF_FILES"));
	/* ROOT_BENCH_NO_FS=1: leaves that place no file on a file system (no
	 * per-file file-system names, no FS rows), to measure what those cost */
	cfg.no_fs = getenv("ROOT_BENCH_NO_FS") != NULL;
	cfg.job_id = job_id;
	cfg.key = key;
	struct coll_leaf *l;
	enum iop_err e = coll_leaf_new(&cfg, t0, &l);
	if (e)
		die("leaf", e);
	for (unsigned i = 0; i < RANKS_PER; i++)
		if (!lg_rank_init(&ranks[i], &o, leaf * RANKS_PER + i))
			die("rank", IOP_ERR_NOMEM);
	memset(m, 0, sizeof(*m));
	m->want = PREP_TICKS;
	const struct lg_opts *opts[RANKS_PER];
	for (unsigned i = 0; i < RANKS_PER; i++)
		opts[i] = &o;
	if ((e = lg_leaf_make(l, ranks, opts, RANKS_PER, t0, o.batch_ms * 1000000ull, UINT64_MAX,
	                      buf, m, events)))
		die("the leaf's deltas", e);
	for (unsigned i = 0; i < RANKS_PER; i++)
		lg_rank_free(&ranks[i]);
	coll_leaf_free(l);
}

static pid_t start_root(const char *url)
{
	const char *mib = getenv("ROOT_BENCH_HISTORY_MIB"); /* default: the root's */
	char *argv[] = {"iopulse", "collector", "--role", "root", "--listen", (char *)url,
	                mib ? "--history-mib" : NULL, (char *)mib, NULL};
	pid_t pid = lg_spawn_collector(IOP_EXE_PATH, argv, &key, job_id, NULL);
	if (pid < 0)
		die("fork", IOP_OK);
	return pid;
}

/* user + system ticks of pid, in seconds */

static double rss_mib(pid_t pid)
{
	return bench_status_mib(pid, "VmRSS:");
}

static void pump_all(struct coll_uplink **up, uint64_t until_mono)
{
	struct pollfd pf[LEAVES];
	for (;;) {
		uint64_t now = iop_mono_ns();
		for (unsigned i = 0; i < LEAVES; i++)
			coll_uplink_pump(up[i], iop_real_ns());
		if (now >= until_mono)
			return;
		for (unsigned i = 0; i < LEAVES; i++)
			pf[i] = (struct pollfd){.fd = coll_uplink_fd(up[i]), .events = POLLIN};
		uint64_t left_ms = (until_mono - now) / 1000000u + 1;
		(void)poll(pf, LEAVES, left_ms < 50 ? (int)left_ms : 50);
	}
}

int main(int argc, char **argv)
{
	double seconds = getenv("SECONDS") ? atof(getenv("SECONDS")) : 20;
	if (seconds < 5)
		seconds = 5;
	if (getenv("ROOT_BENCH_COLL_PER_S"))
		coll_per_s = atof(getenv("ROOT_BENCH_COLL_PER_S"));
	if (getenv("ROOT_BENCH_COLL_GROUP"))
		coll_group = (uint32_t)atoi(getenv("ROOT_BENCH_COLL_GROUP"));
	static struct lg_leaf_made made[LEAVES];
	uint64_t t0 = iop_real_ns() / TICK_NS * TICK_NS, events = 0;
	uint64_t prep0 = iop_mono_ns();
	for (unsigned i = 0; i < LEAVES; i++) {
		make_leaf(i, t0, &made[i], &events);
		if (made[i].n < 2)
			die("a leaf made fewer than 2 ticks", IOP_ERR_STATE);
	}
	uint64_t rows = 0, insts = 0, arrivals = 0;
	for (unsigned i = 0; i < LEAVES; i++) {
		const struct coll_delta *d = &made[i].d[made[i].n - 1];
		rows += d->tick.n;
		insts += d->inst.n;
		arrivals += d->inst.na;
	}
	fprintf(stderr, "root_bench: made %u leaves' deltas (%" PRIu64 " events, ~%" PRIu64
	        " rows a tick; collective calls %.0f/s a rank: %" PRIu64 " instances from %"
	        PRIu64 " ranks' parts a tick over the leaves) in %.1f s\n", LEAVES, events, rows,
	        coll_per_s, insts, arrivals, (double)(iop_mono_ns() - prep0) / 1e9);

	char url[64];
	snprintf(url, sizeof url, "tcp://127.0.0.1:%d", 20000 + (int)(getpid() % 20000));
	pid_t root = start_root(url);
	usleep(200000);
	int status;
	if (waitpid(root, &status, WNOHANG) == root)
		die("the root process ended at once (" IOP_EXE_PATH ")", IOP_ERR_STATE);
	struct coll_uplink *up[LEAVES];
	for (unsigned i = 0; i < LEAVES; i++) {
		struct coll_uplink_cfg c = {.url = url, .job_id = job_id, .key = key, .sender = i + 1};
		enum iop_err e = coll_uplink_new(&c, &up[i]);
		if (e)
			die("uplink", e);
	}
	/* a leaf sends tick t once t has ended and its grace (250 ms) passed */
	uint64_t total = (uint64_t)(WARMUP_S + seconds);
	double cpu0 = 0, wall0 = 0, rss0 = 0, rss_late = 0;
	uint64_t sent = 0;
	bool trace = getenv("ROOT_BENCH_TRACE") != NULL;
	for (uint64_t k = 0; k <= total; k++) {
		uint64_t real = iop_real_ns();
		uint64_t next = (real / TICK_NS + 1) * TICK_NS + 250000000ull;
		pump_all(up, iop_mono_ns() + (next - real));
		int64_t t = (int64_t)(next / TICK_NS) - 1;
		if (trace)
			fprintf(stderr, "root_bench: tick %" PRIu64 ": resident %.1f MiB\n", k, rss_mib(root));
		if (k + 5 == total)
			rss_late = rss_mib(root);
		if (k == WARMUP_S) {
			rss0 = rss_mib(root);
			cpu0 = bench_proc_cpu_s(root);
			wall0 = (double)iop_mono_ns() / 1e9;
		}
		if (k == total)
			break;
		for (unsigned i = 0; i < LEAVES; i++) {
			struct coll_delta *d = lg_leaf_round(&made[i], k, t);
			if (coll_uplink_send(up[i], d) == IOP_OK)
				sent++;
		}
	}
	double cpu = bench_proc_cpu_s(root) - cpu0, wall = (double)iop_mono_ns() / 1e9 - wall0;
	double rss = bench_status_mib(root, "VmHWM:"), rss1 = rss_mib(root);
	/* the history grows until its budget (128 MiB) is reached, then
	 * thins: the growth over the last 5 ticks shows whether it did */
	double per_tick = (rss1 - rss0) / (double)(total - WARMUP_S);
	double late_tick = (rss1 - rss_late) / 5.0;
	uint64_t acked = 0;
	for (unsigned i = 0; i < LEAVES; i++) {
		struct coll_uplink_stats st;
		coll_uplink_stats(up[i], &st);
		acked += st.acked;
	}
	kill(root, SIGTERM);
	waitpid(root, &status, 0);
	for (unsigned i = 0; i < LEAVES; i++)
		coll_uplink_free(up[i]);
	if (acked + LEAVES * 2 < sent)
		fprintf(stderr, "root_bench: the root acknowledged only %" PRIu64 " of %" PRIu64
		        " deltas: it did not keep up\n", acked, sent);
	if (bench_wanted(argc, argv, "root_cpu_frac_4096"))
		printf("root_cpu_frac_4096 %.3f cores (target <= %.2f; %.0f s measured, %" PRIu64
		       "/%" PRIu64 " deltas acknowledged; %.0f collective calls/s a rank)\n",
		       cpu / wall, CPU_TARGET, wall, acked, sent, coll_per_s);
	if (bench_wanted(argc, argv, "root_rss_mib_4096"))
		printf("root_rss_mib_4096 %.1f MiB (target <= %.0f; peak resident over the run; "
		       "%.2f MiB a tick after the warm-up, %.2f over the last 5 ticks; %.0f "
		       "collective calls/s a rank)\n",
		       rss, RSS_TARGET, per_tick, late_tick, coll_per_s);
	for (unsigned i = 0; i < LEAVES; i++)
		for (unsigned j = 0; j < made[i].n; j++)
			coll_delta_free(&made[i].d[j]);
	return 0;
}

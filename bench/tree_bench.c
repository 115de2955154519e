/* A tree of 1024 leaves (issue 22, item 4): 65 536 simulated ranks (1024
 * nodes x 64 ranks, 1000 calls a second each) behind 1024 simulated
 * leaves, 32 real mid processes (`iopulse collector --role mid`, 32
 * leaves each) and a real root process (`iopulse collector --role root`),
 * all speaking the real delta protocol over tcp on loopback.
 *
 *   root_cpu_s_per_tick_65536   the root's CPU time (user + system,
 *                               /proc/PID/stat) from the first measured
 *                               tick's sends to the viewer having the tick
 *                               after the last (where the last one's late
 *                               events are), over the measured ticks
 *   mid_cpu_s_per_tick_65536    the same for each of the 32 mids: the max,
 *                               and the median
 *   root_rss_mib_65536          the root's peak resident set (VmHWM)
 *   e2e_latency_p99_ticks_65536 from an event's end to a viewer (a process
 *                               of its own, through the root's viewer
 *                               server) having applied the tick that holds
 *                               it, in ticks. Events are taken as spread
 *                               evenly over their tick (100 points a tick);
 *                               those the root took late (their mid's delta
 *                               came after it closed the tick; the viewer's
 *                               monitor counts say how many) are timed to
 *                               the next tick, where they are
 *
 * The load. Rank r runs the MIXED workload (bench/loadgen_rank.c, as
 * root_bench) when r % 10 == 0: its checkpoint phases write files of its
 * own (/scratch/ckpt/.../rankNNNNN.partNNN, up to 256 a rank). The other
 * 90 % keep to shared files: IOR_WRITE (MPI-IO and POSIX writes of one
 * shared file) when r % 10 is odd, RANDOM_READ (4 shared files) when even.
 * So 10 % of the ranks are on per-rank files, as issue 22 asks; with every
 * rank on MIXED the job would make ~10 M file names in 3 ticks, ten times
 * the name dictionary's cap (1 Mi names, docs/collector.md). No
 * collective calls (root_bench has them).
 *
 * How. As in root_bench, each leaf's deltas are made first, for real, in
 * simulated time: 64 ranks send frames to a real leaf (coll_leaf) for
 * PREP_TICKS ticks of 1 s (~105 s for the 1024 leaves here, 1.4 GiB).
 * Then, on the real clock, each leaf sends one delta a tick through a
 * real uplink (coll_uplink) to its mid (leaves 32m..32m+31 to mid m): the
 * first tick's delta (every name, every process joining) once, then its
 * later ticks in turn, restamped and with their counters grown
 * (root_bench's round_delta). Every one of the 1024 leaves is made, none
 * remapped: the root sees 65 536 distinct ranks on 1024 distinct hosts.
 * nanomsg holds at most 512 sockets a process, so the uplinks live in
 * SENDERS processes forked after the deltas are made.
 *
 * Slower than real time. This machine (2 cores, shared) cannot run the
 * tree in 1 s ticks (the root alone takes ~2 s of CPU a tick), so the
 * collectors run with --tick TREE_TICK_MS (default 10000): a tick holds
 * what a 1 s tick of the job holds (the deltas are relabelled to the
 * longer tick), so the CPU time a tick compares with a 1 s tick's budget.
 * The graces stay what they are in ms (leaf 250, mid 550, root 800), so
 * the e2e latency in ticks of a longer tick is not the 1 s tick's: it is
 * printed with the tick length. The senders encode the deltas (zstd, MAC)
 * themselves (~1 s of CPU a tick): each spreads its sends of tick t over
 * the last TREE_SEND_LEAD_MS (default 3000) of the tick and the leaves'
 * 250 ms grace after it, so they reach the mids before the mids close t,
 * as real leaves' do; the mids and the root close ticks on their own
 * clocks. The 32 mids close a tick at the same moment, on 2 cores, for
 * ~1 s of wall time: most of their deltas reach the root after its grace
 * (250 ms after theirs), and it counts their events late (on separate
 * nodes they would not queue for 2 cores); the stderr lines say how many.
 *
 * Environment: TICKS measured ticks (default 6) after WARMUP ticks (the
 * names and joins), TREE_TICK_MS, TREE_SEND_LEAD_MS, TREE_TRACE=1 (each
 * tick's arrival at the viewer, the root's CPU and resident sets, on
 * stderr). TREE_ACCOUNT=N: no tree; N ticks of the deltas into a root
 * engine in this process, and what its memory holds by part. To try the
 * mechanics quickly, never for the figures: TREE_MAKE_ONLY=N makes N
 * leaves (and stops, or with TREE_REPEAT=1 the others send copies of
 * theirs), TREE_NO_MIDS=1 sends the leaves to the root. Every loop is
 * bounded by count and time. Usage: tree_bench [NAME...]. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <malloc.h>
#include <math.h>
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
#include "root.h"
#include "viewer.h"

#define LEAVES      1024
#define RANKS_PER   64
#define MIDS        32
#define SENDERS     4 /* processes holding the leaves' uplinks */
#define PREP_TICKS  3 /* ticks made per leaf: the first, then 2 in turn */
#define SIM_TICK_NS 1000000000ull
#define WARMUP      PREP_TICKS /* every made delta sent once: its names and joins */
#define LEAF_GRACE  250000000ull
#define MAX_TICKS   64
#define ROOT_CPU_TARGET 0.5
#define MID_CPU_TARGET  0.25
#define RSS_TARGET      1024.0
#define E2E_TARGET      2.0

static const struct iop_key key = {{3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3}};
static const uint64_t job_id = 0x5eed10000;
static uint64_t tick_ns = 10000000000ull;

static struct lg_leaf_made made[LEAVES];

/* the collectors started, ended if the benchmark dies (a sender process
 * has none: it only exits) */
static pid_t spawned[MIDS + 1];
static unsigned n_spawned;
static pid_t main_pid;

static void die(const char *what, enum iop_err e)
{
	fprintf(stderr, "tree_bench: %s: %s\n", what, e ? iop_strerror(e) : strerror(errno));
	for (unsigned i = 0; getpid() == main_pid && i < n_spawned; i++)
		kill(spawned[i], SIGTERM);
	exit(1);
}

static enum iop_wl_kind kind_of(uint32_t rank)
{
	if (rank % 10 == 0)
		return IOP_WL_MIXED;
	return rank % 2 ? IOP_WL_IOR_WRITE : IOP_WL_RANDOM_READ;
}

/* One leaf's deltas, made in simulated time from tick-aligned t0. */
static void make_leaf(unsigned leaf, uint64_t t0, struct lg_leaf_made *m, uint64_t *events)
{
	static struct lg_rank ranks[RANKS_PER];
	static struct lg_opts opt[RANKS_PER];
	static uint8_t buf[LG_FRAME_CAP];
	struct coll_leaf_cfg cfg;
	coll_leaf_cfg_default(&cfg);
	cfg.job_id = job_id;
	cfg.key = key;
	struct coll_leaf *l;
	enum iop_err e = coll_leaf_new(&cfg, t0, &l);
	if (e)
		die("leaf", e);
	for (unsigned i = 0; i < RANKS_PER; i++) {
		uint32_t rank = leaf * RANKS_PER + i;
		opt[i] = (struct lg_opts){.ranks = LEAVES * RANKS_PER, .nodes = LEAVES, .threads = 1,
		                          .events_per_s = 1000, .duration_s = -1, .batch_ms = 100,
		                          .slow_rank = -1, .slow_factor = 1,
		                          .workload = kind_of(rank), .seed = 1, .job_id = job_id,
		                          .key = key, .n_urls = 1};
		if (!lg_rank_init(&ranks[i], &opt[i], rank))
			die("rank", IOP_ERR_NOMEM);
	}
	memset(m, 0, sizeof(*m));
	m->want = PREP_TICKS;
	m->tick_ns = tick_ns; /* relabelled: a 1 s tick's load a longer tick */
	const struct lg_opts *opts[RANKS_PER];
	for (unsigned i = 0; i < RANKS_PER; i++)
		opts[i] = &opt[i];
	if ((e = lg_leaf_make(l, ranks, opts, RANKS_PER, t0, 100000000ull, 20 * SIM_TICK_NS, buf, m,
	                      events)))
		die("the leaf's deltas", e);
	for (unsigned i = 0; i < RANKS_PER; i++)
		lg_rank_free(&ranks[i]);
	coll_leaf_free(l);
}

/* stderr to log (NULL: kept) */
static pid_t spawn(char *const argv[], const char *log)
{
	pid_t pid = lg_spawn_collector(IOP_EXE_PATH, argv, &key, job_id, log);
	if (pid < 0)
		die("fork", IOP_OK);
	spawned[n_spawned++] = pid;
	return pid;
}

/* user + system ticks of pid, in seconds */

/* The viewer, a process of its own (the bench's encoding would delay its
 * pumping): for each tick it applies, writes (t, real ns) to fd. Ends
 * on SIGTERM or after max_s. */
static volatile sig_atomic_t viewer_stop;
static void on_term(int sig)
{
	(void)sig;
	viewer_stop = 1;
}

static pid_t start_viewer(const char *addr, int fd, double max_s)
{
	pid_t pid = fork();
	if (pid < 0)
		die("fork", IOP_OK);
	if (pid)
		return pid;
	signal(SIGTERM, on_term);
	struct coll_viewer_opts vo = {.timeout_ns = 60000000000ull, .stale_ticks = 100};
	struct coll_viewer *v;
	if (coll_viewer_new(addr, job_id, &key, &vo, iop_mono_ns(), &v) != IOP_OK)
		_exit(1);
	int64_t last = INT64_MIN;
	uint64_t end = iop_mono_ns() + (uint64_t)(max_s * 1e9);
	while (!viewer_stop && iop_mono_ns() < end) {
		int fds[8];
		struct pollfd pf[8];
		size_t n = coll_viewer_fds(v, fds, 8);
		for (size_t i = 0; i < n; i++)
			pf[i] = (struct pollfd){.fd = fds[i], .events = POLLIN};
		(void)poll(pf, n, 50);
		coll_viewer_pump(v, iop_mono_ns());
		const struct coll_state *s = coll_viewer_state(v);
		if (s && s->ticks_applied && s->last_t != last) {
			last = s->last_t;
			int64_t rec[4] = {last, (int64_t)iop_real_ns(), (int64_t)s->mon.events,
			                  (int64_t)s->mon.late};
			if (write(fd, rec, sizeof rec) != (ssize_t)sizeof rec)
				break;
		}
	}
	coll_viewer_free(v);
	_exit(0);
}

static void pump_all(struct coll_uplink **up, unsigned n)
{
	uint64_t now = iop_real_ns();
	for (unsigned i = 0; i < n; i++)
		coll_uplink_pump(up[i], now);
}

struct send_stats {
	uint64_t sent, acked, waiting, late_sends;
	double cpu_s;
};

/* A sender process's loop: leaves [first, first + n) to their mids.
 * Round k carries tick t_first + k; its sends are spread over
 * [end - lead, end + LEAF_GRACE - 50 ms). Then it pumps until every
 * delta is acknowledged or wait_until. Bounded by rounds and time. */
static void send_leaves(unsigned first, unsigned n, char mid_url[][64], int64_t t_first,
                        uint64_t total, uint64_t lead, uint64_t wait_until,
                        struct send_stats *st)
{
	static struct coll_uplink *up[LEAVES];
	for (unsigned i = 0; i < n; i++) {
		unsigned leaf = first + i;
		struct coll_uplink_cfg c = {.url = mid_url[leaf / (LEAVES / MIDS)], .job_id = job_id,
		                            .key = key, .sender = leaf + 1};
		enum iop_err e = coll_uplink_new(&c, &up[i]);
		if (e)
			die("uplink", e);
	}
	for (uint64_t k = 0; k < total && iop_real_ns() < wait_until; k++) {
		int64_t t = t_first + (int64_t)k;
		uint64_t end = (uint64_t)(t + 1) * tick_ns;
		for (unsigned i = 0; i < n; i++) {
			uint64_t at = end - lead + (lead + LEAF_GRACE - 50000000ull) * i / n;
			while (iop_real_ns() < at)
				pump_all(up, n), usleep(1000);
			uint64_t c0 = bench_cpu_ns();
			if (coll_uplink_send(up[i], lg_leaf_round(&made[first + i], k, t)) == IOP_OK)
				st->sent++;
			coll_uplink_pump(up[i], iop_real_ns());
			if (k >= WARMUP)
				st->cpu_s += (double)(bench_cpu_ns() - c0) / 1e9;
		}
		if (iop_real_ns() > end + LEAF_GRACE)
			st->late_sends++;
	}
	for (bool idle = false; !idle && iop_real_ns() < wait_until;) {
		pump_all(up, n);
		idle = true;
		for (unsigned i = 0; i < n; i++)
			idle = idle && coll_uplink_idle(up[i]);
		usleep(5000);
	}
	for (unsigned i = 0; i < n; i++) {
		struct coll_uplink_stats us;
		coll_uplink_stats(up[i], &us);
		st->acked += us.acked;
		st->waiting += us.waiting;
		coll_uplink_free(up[i]);
	}
}

/* TREE_ACCOUNT=N: what the root's memory holds, by part, after N ticks
 * of the same deltas applied to a root engine in this process (the
 * root process's engine, without its outputs and sockets): the sizes of
 * its structures as allocated, and the process's heap in use (mallinfo2)
 * before and after. Tells what grows with ranks x files. */
static void account(unsigned n_ticks)
{
	/* how many distinct counters the deltas hold, without a cap */
	struct coll_ctrset every = {0};
	for (unsigned i = 0; i < LEAVES; i++)
		for (unsigned j = 0; j < made[i].n; j++)
			(void)coll_ctrset_add_all(&every, made[i].d[j].ctr.v, made[i].d[j].ctr.n,
			                          UINT32_MAX);
	fprintf(stderr, "tree_bench: the deltas hold %u distinct counters (process, file, rank, "
	        "layer, class)\n", every.n);
	coll_ctrset_free(&every);
	struct mallinfo2 m0 = mallinfo2();
	struct coll_root_cfg rc;
	coll_root_cfg_default(&rc, tick_ns);
	struct coll_root *r;
	if (coll_root_new(&rc, 0, &r) != IOP_OK)
		die("root", IOP_ERR_NOMEM);
	uint64_t peak_pending = 0;
	for (uint64_t k = 0; k < n_ticks; k++) {
		for (unsigned i = 0; i < LEAVES; i++)
			if (coll_root_delta(r, lg_leaf_round(&made[i], k, (int64_t)k)) != IOP_OK)
				die("root delta", IOP_ERR_NOMEM);
		struct mallinfo2 mp = mallinfo2();
		if (mp.uordblks > peak_pending)
			peak_pending = mp.uordblks;
		coll_root_advance(r, (k + 1) * tick_ns + rc.grace_ns, false, NULL, NULL);
	}
	struct mallinfo2 m1 = mallinfo2();
	const struct coll_state *s = coll_root_state(r);
	double mib = 1024.0 * 1024.0;
	double names = ((double)s->names.cap * sizeof(struct coll_name) +
	                (double)s->names.n_slots * 4 + (double)s->names.text_bytes) / mib;
	double ctrs = ((double)s->latest.cap * sizeof(struct coll_counter) +
	               (double)s->latest.n_slots * 4) / mib;
	uint64_t rows = 0;
	for (unsigned t = 0; t < 3; t++)
		for (uint32_t i = 0; i < s->tier[t].n; i++)
			rows += s->tier[t].v[(s->tier[t].head + i) % s->tier[t].cap].n;
	const struct coll_tick *last = coll_state_last(s);
	fprintf(stderr, "tree_bench: account after %u ticks: names %u (%.0f MiB: entries, index, "
	        "%.0f MiB of text; %" PRIu64 " refused at the cap of %u); latest counters %u of "
	        "room %u (%.0f MiB at %zu bytes, with the index); history %.1f MiB by its count "
	        "(budget %.0f), %" PRIu64 " rows in %u ticks, the last %u rows (%.1f MiB), %" PRIu64
	        " thinned; ranks %u (%.1f MiB), hosts %u; heap in use %.0f MiB (%.0f at the peak "
	        "before a close)\n", n_ticks, s->names.n, names,
	        (double)s->names.text_bytes / mib, s->names.refused, s->names.max_names,
	        s->latest.n, s->latest.cap, ctrs, sizeof(struct coll_counter),
	        (double)s->history_bytes / mib, (double)s->max_bytes / mib, rows, s->tier[0].n,
	        last ? last->n : 0, last ? (double)coll_tick_bytes(last) / mib : 0, s->thinned,
	        s->n_ranks, (double)s->n_ranks * sizeof(struct coll_rank) / mib, s->n_hosts,
	        (double)(m1.uordblks + m1.hblkhd - m0.uordblks - m0.hblkhd) / mib,
	        (double)(peak_pending - m0.uordblks) / mib);
	coll_root_free(r);
}

static int cmp_lat(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b; /* .v first */
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	unsigned ticks = getenv("TICKS") ? (unsigned)atoi(getenv("TICKS")) : 6;
	if (ticks < 2)
		ticks = 2;
	if (ticks + WARMUP + 2 > MAX_TICKS)
		ticks = MAX_TICKS - WARMUP - 2;
	if (getenv("TREE_TICK_MS"))
		tick_ns = (uint64_t)atoi(getenv("TREE_TICK_MS")) * 1000000ull;
	uint64_t lead = getenv("TREE_SEND_LEAD_MS")
	                    ? (uint64_t)atoi(getenv("TREE_SEND_LEAD_MS")) * 1000000ull
	                    : 3000000000ull;
	if (lead > tick_ns)
		lead = tick_ns;
	bool trace = getenv("TREE_TRACE") != NULL;
	main_pid = getpid();
	uint64_t t0 = iop_real_ns() / SIM_TICK_NS * SIM_TICK_NS, events = 0;
	uint64_t prep0 = iop_mono_ns(), cpu_prep0 = bench_cpu_ns();
	/* TREE_MAKE_ONLY=N: make N leaves, say what it took, and stop */
	unsigned make = getenv("TREE_MAKE_ONLY") ? (unsigned)atoi(getenv("TREE_MAKE_ONLY")) : LEAVES;
	if (make == 0 || make > LEAVES)
		make = LEAVES;
	for (unsigned i = 0; i < make; i++) {
		make_leaf(i, t0, &made[i], &events);
		if (made[i].n < 2)
			die("a leaf made fewer than 2 ticks", IOP_ERR_STATE);
	}
	/* TREE_REPEAT=1 with TREE_MAKE_ONLY=N: the other leaves send copies of
	 * the first N's deltas (the root sees N x 64 ranks), to try the
	 * bench's mechanics quickly; never for the figures */
	if (make < LEAVES && getenv("TREE_REPEAT")) {
		for (unsigned i = make; i < LEAVES; i++)
			made[i] = made[i % make]; /* shares the deltas: sent one at a time */
	} else if (make < LEAVES) {
		fprintf(stderr, "tree_bench: made %u leaves in %.1f s, resident %.0f MiB\n", make,
		        (double)(iop_mono_ns() - prep0) / 1e9, bench_status_mib(getpid(), "VmRSS:"));
		return 0;
	}
	uint64_t rows = 0, ctrs = 0, names = 0;
	for (unsigned i = 0; i < LEAVES; i++) {
		rows += made[i].d[made[i].n - 1].tick.n;
		ctrs += made[i].d[made[i].n - 1].ctr.n;
		for (unsigned j = 0; j < made[i].n; j++)
			names += made[i].d[j].n_names;
	}
	fprintf(stderr, "tree_bench: made %u leaves' deltas (%" PRIu64 " events; a tick ~%" PRIu64
	        " rows and %" PRIu64 " counters over the leaves; %" PRIu64 " name records) in %.1f s "
	        "(%.1f s CPU); bench resident %.0f MiB\n", LEAVES, events, rows, ctrs, names,
	        (double)(iop_mono_ns() - prep0) / 1e9, (double)(bench_cpu_ns() - cpu_prep0) / 1e9,
	        bench_status_mib(getpid(), "VmRSS:"));

	if (getenv("TREE_ACCOUNT")) {
		account((unsigned)atoi(getenv("TREE_ACCOUNT")));
		return 0;
	}
	char dir[] = "/tmp/tree_bench.XXXXXX";
	if (!mkdtemp(dir))
		die("mkdtemp", IOP_OK);
	int port = 20000 + (int)(getpid() % 15000);
	char root_url[64], view_url[128], summary[128], root_log[128], tick_ms[16];
	snprintf(root_url, sizeof root_url, "tcp://127.0.0.1:%d", port);
	snprintf(view_url, sizeof view_url, "ipc://%s/view.ipc", dir);
	snprintf(summary, sizeof summary, "%s/summary.json", dir);
	snprintf(root_log, sizeof root_log, "%s/root.log", dir);
	snprintf(tick_ms, sizeof tick_ms, "%" PRIu64, tick_ns / 1000000u);
	pid_t root = spawn((char *[]){"iopulse", "collector", "--role", "root", "--listen", root_url,
	                              "--view", view_url, "--tick", tick_ms, "--summary-json",
	                              summary, NULL}, root_log);
	pid_t mid[MIDS];
	char mid_url[MIDS][64];
	bool no_mids = getenv("TREE_NO_MIDS") != NULL; /* to try: the leaves to the root */
	for (unsigned m = 0; m < MIDS; m++) {
		snprintf(mid_url[m], sizeof mid_url[m], "tcp://127.0.0.1:%d", port + 1 + (int)m);
		if (no_mids) {
			snprintf(mid_url[m], sizeof mid_url[m], "%s", root_url);
			mid[m] = getpid();
			continue;
		}
		mid[m] = spawn((char *[]){"iopulse", "collector", "--role", "mid", "--listen",
		                          mid_url[m], "--parent", root_url, "--tick", tick_ms, NULL},
		             NULL);
	}
	fprintf(stderr, "tree_bench: root pid %d, mid 0 pid %d\n", (int)root, (int)mid[0]);
	usleep(300000);
	int status;
	if (waitpid(root, &status, WNOHANG) == root)
		die("the root process ended at once (" IOP_EXE_PATH ")", IOP_ERR_STATE);
	int lat_pipe[2];
	if (pipe(lat_pipe) < 0)
		die("pipe", IOP_OK);
	double run_s = (double)(tick_ns / 1000000u) / 1000.0 * (ticks + WARMUP + 4) + 120;
	pid_t viewer = start_viewer(view_url, lat_pipe[1], run_s);
	close(lat_pipe[1]);
	fcntl(lat_pipe[0], F_SETFL, O_NONBLOCK);

	/* Senders: nanomsg holds at most 512 sockets a process, so the 1024
	 * uplinks live in SENDERS processes of their own, forked here (the
	 * deltas shared copy-on-write), each running the same schedule on the
	 * real clock for its share of the leaves. */
	uint64_t total = WARMUP + ticks;
	int64_t t_first = (int64_t)(iop_real_ns() / tick_ns) + 1;
	int64_t t_last = t_first + (int64_t)total - 1;
	uint64_t wait_until = (uint64_t)(t_last + 2) * tick_ns + (tick_ns < 4000000000ull ?
	                                                          4000000000ull : tick_ns);
	int stat_pipe[2];
	if (pipe(stat_pipe) < 0)
		die("pipe", IOP_OK);
	pid_t sender[SENDERS];
	for (unsigned s = 0; s < SENDERS; s++) {
		if ((sender[s] = fork()) < 0)
			die("fork", IOP_OK);
		if (sender[s] == 0) {
			close(stat_pipe[0]);
			struct send_stats st = {0};
			send_leaves(s * (LEAVES / SENDERS), LEAVES / SENDERS, mid_url, t_first, total,
			            lead, wait_until, &st);
			if (write(stat_pipe[1], &st, sizeof st) != (ssize_t)sizeof st)
				_exit(1);
			_exit(0);
		}
	}
	close(stat_pipe[1]);

	/* measured from the start of the first measured tick's sends: the
	 * ticks that close meanwhile are the measured ones */
	double cpu0, mcpu0[MIDS], prev_root;
	uint64_t m_start = (uint64_t)(t_first + WARMUP + 1) * tick_ns - lead;
	while (iop_real_ns() < m_start)
		usleep(10000);
	cpu0 = prev_root = bench_proc_cpu_s(root);
	for (unsigned m = 0; m < MIDS; m++)
		mcpu0[m] = bench_proc_cpu_s(mid[m]);
	/* until the viewer has the last tick, bounded */
	static uint64_t applied_at[MAX_TICKS], ev_cum[MAX_TICKS], late_cum[MAX_TICKS];
	while (iop_real_ns() < wait_until) {
		int64_t rec[4];
		while (read(lat_pipe[0], rec, sizeof rec) == (ssize_t)sizeof rec) {
			if (rec[0] >= t_first && rec[0] < t_first + MAX_TICKS &&
			    !applied_at[rec[0] - t_first]) {
				applied_at[rec[0] - t_first] = (uint64_t)rec[1];
				ev_cum[rec[0] - t_first] = (uint64_t)rec[2];
				late_cum[rec[0] - t_first] = (uint64_t)rec[3];
			}
			if (trace && rec[0] >= t_first) {
				double c = bench_proc_cpu_s(root);
				fprintf(stderr, "tree_bench: tick %" PRId64 " at the viewer %.2f s after "
				        "its end (events %" PRId64 ", late %" PRId64 " so far); root %.2f s "
				        "CPU since the last, resident %.0f MiB; mid 0 %.2f s CPU in all, "
				        "resident %.0f MiB\n", rec[0],
				        ((double)rec[1] - (double)(rec[0] + 1) * (double)tick_ns) / 1e9,
				        rec[2], rec[3], c - prev_root, bench_status_mib(root, "VmRSS:"), bench_proc_cpu_s(mid[0]) - mcpu0[0],
				        bench_status_mib(mid[0], "VmRSS:"));
				prev_root = c;
			}
		}
		if (applied_at[t_last + 1 - t_first]) /* where t_last's late events are */
			break;
		usleep(20000);
	}
	/* CPU: what the processes spent from the first measured tick's sends
	 * to the last's close, over the measured ticks */
	double root_cpu = (bench_proc_cpu_s(root) - cpu0) / ticks;
	double mid_cpu[MIDS], mid_rss[MIDS];
	for (unsigned m = 0; m < MIDS; m++) {
		mid_cpu[m] = (bench_proc_cpu_s(mid[m]) - mcpu0[m]) / ticks;
		mid_rss[m] = bench_status_mib(mid[m], "VmHWM:");
	}
	double root_rss = bench_status_mib(root, "VmHWM:"), root_rss_now = bench_status_mib(root, "VmRSS:");
	struct send_stats all = {0};
	for (unsigned i = 0; i < SENDERS; i++) {
		struct send_stats st;
		if (read(stat_pipe[0], &st, sizeof st) == (ssize_t)sizeof st) {
			all.sent += st.sent;
			all.acked += st.acked;
			all.waiting += st.waiting;
			all.late_sends += st.late_sends;
			all.cpu_s += st.cpu_s;
		}
		waitpid(sender[i], &status, 0);
	}
	kill(viewer, SIGTERM);
	waitpid(viewer, &status, 0);
	for (unsigned m = 0; m < MIDS && !no_mids; m++) {
		kill(mid[m], SIGTERM);
		waitpid(mid[m], &status, 0);
	}
	kill(root, SIGTERM);
	waitpid(root, &status, 0);
	/* the root's own count of late events and rejected deltas: the
	 * "monitor:" line of its text summary (its alerts are in its log) */
	char line[1024];
	unsigned alerts = 0;
	FILE *lf = fopen(root_log, "r");
	while (lf && fgets(line, sizeof line, lf)) {
		if (strstr(line, " CRIT ") || strstr(line, " WARN "))
			alerts++;
		if (strstr(line, "monitor:"))
			fprintf(stderr, "tree_bench: the root's summary:%s", line);
	}
	if (lf)
		fclose(lf);
	fprintf(stderr, "tree_bench: the root printed %u alert lines (start or ongoing)\n", alerts);
	unlink(root_log);
	unlink(summary);
	char path[160];
	snprintf(path, sizeof path, "%s/view.ipc", dir);
	unlink(path);
	rmdir(dir);

	/* A tick's events the root took late (their mids' deltas came after
	 * it closed the tick) are in the next tick it closed: the viewer's
	 * cumulative counts say how many of each tick's were, and those are
	 * timed to that next tick. Samples weighted by events. */
	static struct lat {
		double v, w;
	} lat[MAX_TICKS * 200];
	size_t n_lat = 0, ticks_seen = 0;
	double w_all = 0, late_all = 0;
	for (int64_t u = t_first + WARMUP; u <= t_last + 1; u++) {
		uint64_t at = applied_at[u - t_first];
		if (!at || !applied_at[u - 1 - t_first])
			continue;
		double d_ev = (double)(ev_cum[u - t_first] - ev_cum[u - 1 - t_first]);
		double d_late = (double)(late_cum[u - t_first] - late_cum[u - 1 - t_first]);
		ticks_seen += u <= t_last;
		late_all += d_late;
		for (unsigned j = 0; j < 100; j++) {
			double ev_end = ((double)u + (j + 0.5) / 100.0) * (double)tick_ns;
			lat[n_lat++] = (struct lat){((double)at - ev_end) / (double)tick_ns,
			                            (d_ev - d_late) / 100};
			lat[n_lat++] = (struct lat){((double)at - ev_end) / (double)tick_ns + 1,
			                            d_late / 100};
			w_all += d_ev / 100;
		}
	}
	qsort(lat, n_lat, sizeof *lat, cmp_lat);
	double p99 = NAN, p50 = NAN, w = 0;
	for (size_t i = 0; i < n_lat; i++) {
		w += lat[i].w;
		if (isnan(p50) && w >= 0.5 * w_all)
			p50 = lat[i].v;
		if (isnan(p99) && w >= 0.99 * w_all)
			p99 = lat[i].v;
	}
	double sorted_cpu[MIDS];
	memcpy(sorted_cpu, mid_cpu, sizeof mid_cpu);
	double mid_med = bench_median(sorted_cpu, MIDS), mid_max = sorted_cpu[MIDS - 1];
	double mid_rss_med = bench_median(mid_rss, MIDS), mid_rss_max = mid_rss[MIDS - 1];
	fprintf(stderr, "tree_bench: %u measured ticks of %.1f s; %" PRIu64 "/%" PRIu64
	        " deltas acknowledged, %" PRIu64 " waiting, %" PRIu64 " sends after the leaves' "
	        "grace; the senders' CPU %.2f s a tick; root resident now %.0f MiB; mids' peak resident median %.0f MiB, max %.0f\n",
	        ticks, (double)tick_ns / 1e9, all.acked, all.sent, all.waiting, all.late_sends, all.cpu_s / ticks,
	        root_rss_now,
	        mid_rss_med, mid_rss_max);
	if (bench_wanted(argc, argv, "root_cpu_s_per_tick_65536"))
		printf("root_cpu_s_per_tick_65536 %.3f s (target <= %.2f; %u ticks of %.1f s measured, "
		       "slower than real time)\n", root_cpu, ROOT_CPU_TARGET, ticks,
		       (double)tick_ns / 1e9);
	if (bench_wanted(argc, argv, "mid_cpu_s_per_tick_65536"))
		printf("mid_cpu_s_per_tick_65536 %.3f s (target <= %.2f each; the max of %u mids, "
		       "median %.3f)\n", mid_max, MID_CPU_TARGET, MIDS, mid_med);
	if (bench_wanted(argc, argv, "root_rss_mib_65536"))
		printf("root_rss_mib_65536 %.1f MiB (target <= %.0f; peak resident over the run)\n",
		       root_rss, RSS_TARGET);
	if (bench_wanted(argc, argv, "e2e_latency_p99_ticks_65536")) {
		if (w_all > 0)
			printf("e2e_latency_p99_ticks_65536 %.2f ticks (target <= %.1f; ticks of %.1f s, "
			       "graces in ms as at 1 s; median %.2f; %zu of %u ticks reached the viewer; "
			       "%.1f %% of their events late at the root)\n", p99, E2E_TARGET,
			       (double)tick_ns / 1e9, p50, ticks_seen, ticks, 100 * late_all / w_all);
		else
			printf("e2e_latency_p99_ticks_65536 nan ticks (no measured tick reached the "
			       "viewer)\n");
	}
	for (unsigned i = 0; i < make; i++) {
		for (unsigned j = 0; j < made[i].n; j++)
			coll_delta_free(&made[i].d[j]);
	}
	return 0;
}
